//! gemm's products on the instruction set the caller names. `gemm::gemm` picks its
//! micro-kernel from the CPU once per process (AVX-512, FMA or scalar) and offers no way to
//! ask for another; the crates it is made of expose the generic driver and each
//! micro-kernel, so this module calls the driver with the chosen micro-kernel, exactly as
//! gemm's own entry point for that instruction set does. f64 (gradient checks only) keeps
//! gemm's own choice.
//!
//! The result depends on the micro-kernel and on gemm's depth blocking: products deeper than
//! 512 are summed in blocks whose size gemm derives from the L1 cache, at least 512 (every
//! L1 of 32 or 48 KiB with 8 or 12 ways gives the same blocks).

use super::Isa;
use gemm_common::microkernel::{HMicroKernelFn, MicroKernelFn};
use gemm_common::simd::MixedSimd;

/// One product as gemm takes it: `dst (m×n) = lhs (m×k)·rhs (k×n)`, plus `dst` when
/// `read_dst`; strides in elements, `cs` along a row (between columns), `rs` down a column.
#[derive(Clone, Copy, Debug)]
pub struct Product<F> {
    /// Rows of `dst` and `lhs`.
    pub m: usize,
    /// Columns of `dst` and `rhs`.
    pub n: usize,
    /// The depth: columns of `lhs`, rows of `rhs`.
    pub k: usize,
    /// The destination's first element.
    pub dst: *mut F,
    /// The destination's column and row strides.
    pub dst_strides: (isize, isize),
    /// Whether the product is added to what `dst` holds.
    pub read_dst: bool,
    /// The left operand's first element.
    pub lhs: *const F,
    /// The left operand's column and row strides.
    pub lhs_strides: (isize, isize),
    /// The right operand's first element.
    pub rhs: *const F,
    /// The right operand's column and row strides.
    pub rhs_strides: (isize, isize),
}

/// Runs `product` through gemm's own dispatch (any element type gemm takes).
///
/// # Safety
/// As `gemm::gemm`: every element the strides reach is inside its allocation, `dst` aliases
/// neither operand, and `dst`'s elements are initialised when `read_dst`.
pub unsafe fn run_any<F: Copy + 'static>(
    product: Product<F>,
    one: F,
    parallelism: gemm::Parallelism,
) {
    // SAFETY: the caller's contract is gemm's.
    unsafe {
        gemm::gemm(
            product.m,
            product.n,
            product.k,
            product.dst,
            product.dst_strides.0,
            product.dst_strides.1,
            product.read_dst,
            product.lhs,
            product.lhs_strides.0,
            product.lhs_strides.1,
            product.rhs,
            product.rhs_strides.0,
            product.rhs_strides.1,
            one,
            one,
            false,
            false,
            false,
            parallelism,
        );
    }
}

/// Runs an f32 `product` on `isa`'s micro-kernel.
///
/// # Safety
/// As `run_any`, and `isa` is one this CPU runs (`Isa::usable`).
pub unsafe fn run_f32(isa: Isa, product: Product<f32>, parallelism: gemm::Parallelism) {
    // SAFETY (every arm): the caller's contract, and the instruction set is the CPU's.
    unsafe {
        match isa {
            #[cfg(all(feature = "avx512", target_arch = "x86_64"))]
            Isa::Avx512 => avx512(product, parallelism),
            // Never usable without the feature (`Isa::usable`); the nearest kernel otherwise.
            #[cfg(all(not(feature = "avx512"), target_arch = "x86_64"))]
            Isa::Avx512 => fma(product, parallelism),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => fma(product, parallelism),
            #[cfg(target_arch = "x86_64")]
            Isa::Portable => scalar(product, parallelism),
            #[cfg(not(target_arch = "x86_64"))]
            _ => scalar(product, parallelism),
        }
    }
}

/// gemm's AVX-512 micro-kernel (16 lanes).
#[cfg(all(feature = "avx512", target_arch = "x86_64"))]
unsafe fn avx512(product: Product<f32>, parallelism: gemm::Parallelism) {
    use gemm_f32::microkernel::avx512f::f32 as k;
    let simd = simd::<gemm_common::simd::V4>(Isa::Avx512);
    // SAFETY: `run_f32`'s contract.
    unsafe {
        drive::<_, 16, { k::MR_DIV_N * 16 }, { k::NR }, { k::MR_DIV_N }, { k::H_M }, { k::H_N }>(
            simd,
            product,
            &k::UKR,
            &k::H_UKR,
            parallelism,
        );
    }
}

/// gemm's AVX2 + FMA micro-kernel (8 lanes).
#[cfg(target_arch = "x86_64")]
unsafe fn fma(product: Product<f32>, parallelism: gemm::Parallelism) {
    use gemm_f32::microkernel::fma::f32 as k;
    let simd = simd::<gemm_common::simd::V3>(Isa::Avx2);
    // SAFETY: `run_f32`'s contract.
    unsafe {
        drive::<_, 8, { k::MR_DIV_N * 8 }, { k::NR }, { k::MR_DIV_N }, { k::H_M }, { k::H_N }>(
            simd,
            product,
            &k::UKR,
            &k::H_UKR,
            parallelism,
        );
    }
}

/// gemm's scalar micro-kernel: plain code any CPU runs.
unsafe fn scalar(product: Product<f32>, parallelism: gemm::Parallelism) {
    use gemm_f32::microkernel::scalar::f32 as k;
    // SAFETY: `run_f32`'s contract.
    unsafe {
        drive::<_, 1, { k::MR_DIV_N }, { k::NR }, { k::MR_DIV_N }, { k::H_M }, { k::H_N }>(
            gemm_common::simd::Scalar,
            product,
            &k::UKR,
            &k::H_UKR,
            parallelism,
        );
    }
}

/// The SIMD token of an instruction set the CPU has.
fn simd<S: MixedSimd<f32, f32, f32, f32>>(isa: Isa) -> S {
    S::try_new().unwrap_or_else(|| panic!("{isa} is only chosen on a CPU that runs it"))
}

/// gemm's generic driver with one micro-kernel family, as gemm's `gemm_basic` calls it.
///
/// # Safety
/// As `run_f32`.
unsafe fn drive<
    S: MixedSimd<f32, f32, f32, f32>,
    const N: usize,
    const MR: usize,
    const NR: usize,
    const MR_DIV_N: usize,
    const H_M: usize,
    const H_N: usize,
>(
    simd: S,
    product: Product<f32>,
    kernels: &[[MicroKernelFn<f32>; NR]; MR_DIV_N],
    horizontal: &[[HMicroKernelFn<f32>; H_N]; H_M],
    parallelism: gemm::Parallelism,
) {
    // SAFETY: the caller's contract is the driver's.
    unsafe {
        gemm_common::gemm::gemm_basic_generic::<S, f32, N, MR, NR, MR_DIV_N, H_M, H_N>(
            simd,
            product.m,
            product.n,
            product.k,
            product.dst,
            product.dst_strides.0,
            product.dst_strides.1,
            product.read_dst,
            product.lhs,
            product.lhs_strides.0,
            product.lhs_strides.1,
            product.rhs,
            product.rhs_strides.0,
            product.rhs_strides.1,
            1.0,
            1.0,
            false,
            false,
            false,
            |a, b, c| a * b + c,
            kernels,
            horizontal,
            false,
            parallelism,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn product(
        isa: Option<Isa>,
        a: &[f32],
        b: &[f32],
        (m, k, n): (usize, usize, usize),
    ) -> Vec<f32> {
        let mut out = vec![0.0f32; m * n];
        let product = Product {
            m,
            n,
            k,
            dst: out.as_mut_ptr(),
            dst_strides: (1, n as isize),
            read_dst: false,
            lhs: a.as_ptr(),
            lhs_strides: (1, k as isize),
            rhs: b.as_ptr(),
            rhs_strides: (1, n as isize),
        };
        // SAFETY: row-major buffers of exactly these shapes; `out` is fresh; the ISA is one
        // `Isa::available` lists.
        unsafe {
            match isa {
                Some(isa) => run_f32(isa, product, gemm::Parallelism::None),
                None => run_any(product, 1.0f32, gemm::Parallelism::None),
            }
        }
        out
    }

    #[test]
    fn each_instruction_set_computes_the_product_and_the_best_is_gemms_own_choice() {
        // Deeper than one 512 block, so the depth blocking is exercised too.
        let (m, k, n) = (37, 700, 29);
        let a: Vec<f32> = (0..m * k)
            .map(|i| ((i * 7919) % 1000) as f32 / 333.0 - 1.5)
            .collect();
        let b: Vec<f32> = (0..k * n)
            .map(|i| ((i * 104_729) % 997) as f32 / 250.0 - 2.0)
            .collect();
        let gemms_own = product(None, &a, &b, (m, k, n));
        let mut results = Vec::new();
        for isa in Isa::available() {
            let out = product(Some(isa), &a, &b, (m, k, n));
            for i in 0..m {
                for j in 0..n {
                    let want: f64 = (0..k)
                        .map(|l| f64::from(a[i * k + l]) * f64::from(b[l * n + j]))
                        .sum();
                    let got = f64::from(out[i * n + j]);
                    assert!(
                        (got - want).abs() < 1e-3 * want.abs().max(1.0),
                        "{isa} ({i}, {j}): {got} against {want}"
                    );
                }
            }
            results.push((isa, out));
        }
        let (best, best_out) = results.last().expect("portable is always available");
        assert_eq!(
            best_out, &gemms_own,
            "{best} is what gemm picks by itself on this CPU and build"
        );
        if results.len() > 1 {
            assert_ne!(
                results[0].1, *best_out,
                "portable and {best} round alike: the choice did nothing"
            );
        }
    }
}
