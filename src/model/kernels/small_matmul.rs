//! Linear layers on a few rows (batched decoding, M ≤ 16): `y = x·Wᵀ (+ b)` with each weight
//! row streamed from memory once. The output rows are split across the thread pool; each task
//! runs register tiles of up to 4 input rows × 4 weight rows (on AVX2, with half the registers:
//! 1 × 6, 2 × 4, 3 × 3 or 4 × 2) over the shared dimension.

use super::{Isa, host_slice, simd, with_host_slice};
use candle_core::{Result, Tensor};
use rayon::prelude::*;

/// The largest number of rows this kernel is meant for.
pub const MAX_FEW_ROWS: usize = 16;

/// `x·Wᵀ + b` for f32 `x [rows, in]` on the CPU, `weight [out, in]`, `bias [out]`.
pub fn few_rows_linear(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    isa: Isa,
) -> Result<Tensor> {
    let (rows, in_dim) = x.dims2()?;
    let (out_dim, weight_in) = weight.dims2()?;
    if weight_in != in_dim {
        candle_core::bail!("few-rows linear: x has {in_dim} columns, the weight {weight_in}");
    }
    let inputs: Vec<f32> = host_slice(x)?;
    let bias: Option<Vec<f32>> = bias.map(host_slice).transpose()?;
    let transposed = with_host_slice(weight, |weight: &[f32]| {
        Ok(products(isa, &inputs, rows, in_dim, weight, None, out_dim))
    })?;
    let mut out = transpose(&transposed, out_dim, rows);
    if let Some(bias) = bias {
        for row in out.chunks_mut(out_dim) {
            row.iter_mut().zip(&bias).for_each(|(y, b)| *y += b);
        }
    }
    Tensor::from_vec(out, (rows, out_dim), x.device())
}

/// `silu(x·Gᵀ)·(x·Uᵀ)` for f32 `x [rows, in]`, gate and up weights `[inner, in]`.
pub fn few_rows_swiglu(x: &Tensor, gate: &Tensor, up: &Tensor, isa: Isa) -> Result<Tensor> {
    let (rows, in_dim) = x.dims2()?;
    let (inner, gate_in) = gate.dims2()?;
    if gate_in != in_dim || up.dims2()? != (inner, in_dim) {
        candle_core::bail!(
            "few-rows swiglu: x {:?}, gate {:?}, up {:?}",
            x.shape(),
            gate.shape(),
            up.shape()
        );
    }
    let inputs: Vec<f32> = host_slice(x)?;
    let transposed = with_host_slice(gate, |gate: &[f32]| {
        with_host_slice(up, |up: &[f32]| {
            Ok(products(isa, &inputs, rows, in_dim, gate, Some(up), inner))
        })
    })?;
    Tensor::from_vec(
        transpose(&transposed, inner, rows),
        (rows, inner),
        x.device(),
    )
}

/// `[a, b]` row-major → `[b, a]`.
fn transpose(values: &[f32], a: usize, b: usize) -> Vec<f32> {
    let mut out = vec![0.0; a * b];
    for i in 0..a {
        for j in 0..b {
            out[j * a + i] = values[i * b + j];
        }
    }
    out
}

/// `(x·Wᵀ)ᵀ`, `[out, rows]`, for `weight [out, in]`; with `up` also given, the SwiGLU
/// `silu(x·Wᵀ)·(x·Uᵀ)` instead.
fn products(
    isa: Isa,
    x: &[f32],
    rows: usize,
    in_dim: usize,
    weight: &[f32],
    up: Option<&[f32]>,
    out_dim: usize,
) -> Vec<f32> {
    let threads = rayon::current_num_threads().max(1);
    let chunk = out_dim.div_ceil(threads * 4).next_multiple_of(4).max(16);
    let mut out = vec![0.0f32; out_dim * rows];
    out.par_chunks_mut(chunk * rows)
        .enumerate()
        .for_each(|(task, out)| {
            let start = task * chunk;
            let range = start * in_dim..(start + out.len() / rows) * in_dim;
            block(isa, x, rows, in_dim, &weight[range.clone()], out);
            if let Some(up) = up {
                let mut other = vec![0.0f32; out.len()];
                block(isa, x, rows, in_dim, &up[range], &mut other);
                let gate = out.to_vec();
                simd::silu_mul(isa, &gate, &other, out);
            }
        });
    out
}

/// `out[n·rows + m] = x[m]·w[n]` for the weight rows of `w`.
fn block(isa: Isa, x: &[f32], rows: usize, in_dim: usize, w: &[f32], out: &mut [f32]) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx512` is only chosen when the CPU reports AVX-512F.
        Isa::Avx512 => tiled(x, rows, in_dim, w, out, 4, |xs, ws, mr, nr| unsafe {
            avx512::tile(xs, ws, in_dim, mr, nr)
        }),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx2` is only chosen when the CPU reports AVX2 and FMA.
        Isa::Avx2 => tiled(
            x,
            rows,
            in_dim,
            w,
            out,
            super::avx2::tile_width(rows),
            |xs, ws, mr, nr| unsafe { super::avx2::tile(xs, ws, in_dim, mr, nr) },
        ),
        _ => {
            for n in 0..w.len() / in_dim {
                let weight = &w[n * in_dim..(n + 1) * in_dim];
                for m in 0..rows {
                    out[n * rows + m] =
                        simd::dot(Isa::Portable, &x[m * in_dim..(m + 1) * in_dim], weight);
                }
            }
        }
    }
}

/// `block` by register tiles of up to 4 input rows × `width` weight rows (or 1 at the end);
/// `tile(xs, ws, mr, nr)` sums the products of `mr` rows and `nr` weight rows.
#[cfg(target_arch = "x86_64")]
fn tiled(
    x: &[f32],
    rows: usize,
    in_dim: usize,
    w: &[f32],
    out: &mut [f32],
    width: usize,
    tile: impl Fn(&[f32], &[f32], usize, usize) -> super::tile::TileSums,
) {
    let count = w.len() / in_dim;
    let mut n = 0;
    while n < count {
        let nr = if n + width <= count { width } else { 1 };
        let mut m = 0;
        while m < rows {
            let mr = (rows - m).min(4);
            let sums = tile(
                &x[m * in_dim..(m + mr) * in_dim],
                &w[n * in_dim..(n + nr) * in_dim],
                mr,
                nr,
            );
            for i in 0..mr {
                for j in 0..nr {
                    out[(n + j) * rows + m + i] = sums[i][j];
                }
            }
            m += mr;
        }
        n += nr;
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::super::tile::{TileSums, widen};
    use std::arch::x86_64::*;

    /// Sums `x[i]·w[j]` for `mr` (≤ 4) rows of `x` and `nr` (4 or 1) rows of `w`, all of
    /// width `k`.
    #[target_feature(enable = "avx512f")]
    pub fn tile(x: &[f32], w: &[f32], k: usize, mr: usize, nr: usize) -> TileSums {
        match (mr, nr) {
            (4, 4) => widen(tile_of::<4, 4>(x, w, k)),
            (3, 4) => widen(tile_of::<3, 4>(x, w, k)),
            (2, 4) => widen(tile_of::<2, 4>(x, w, k)),
            (1, 4) => widen(tile_of::<1, 4>(x, w, k)),
            (4, _) => widen(tile_of::<4, 1>(x, w, k)),
            (3, _) => widen(tile_of::<3, 1>(x, w, k)),
            (2, _) => widen(tile_of::<2, 1>(x, w, k)),
            _ => widen(tile_of::<1, 1>(x, w, k)),
        }
    }

    #[target_feature(enable = "avx512f")]
    fn tile_of<const MR: usize, const NR: usize>(
        x: &[f32],
        w: &[f32],
        k: usize,
    ) -> [[f32; NR]; MR] {
        assert!(
            x.len() >= MR * k && w.len() >= NR * k,
            "tile past its inputs"
        );
        let mut acc = [[_mm512_setzero_ps(); NR]; MR];
        let mut l = 0;
        while l < k {
            let count = (k - l).min(16);
            let mask: __mmask16 = if count == 16 {
                0xffff
            } else {
                ((1u32 << count) - 1) as __mmask16
            };
            let mut weights = [_mm512_setzero_ps(); NR];
            for (j, weight) in weights.iter_mut().enumerate() {
                // SAFETY: row j of w has k elements (asserted above) and l + count ≤ k;
                // masked-off lanes are not read.
                *weight = unsafe { _mm512_maskz_loadu_ps(mask, w.as_ptr().add(j * k + l)) };
            }
            for (i, acc) in acc.iter_mut().enumerate() {
                // SAFETY: as above, for row i of x.
                let input = unsafe { _mm512_maskz_loadu_ps(mask, x.as_ptr().add(i * k + l)) };
                for (acc, weight) in acc.iter_mut().zip(&weights) {
                    *acc = _mm512_fmadd_ps(input, *weight, *acc);
                }
            }
            l += count;
        }
        let mut sums = [[0.0; NR]; MR];
        for (sums, acc) in sums.iter_mut().zip(&acc) {
            for (sum, acc) in sums.iter_mut().zip(acc) {
                *sum = _mm512_reduce_add_ps(*acc);
            }
        }
        sums
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    #[test]
    fn few_rows_products_match_candle_on_each_instruction_set() {
        let device = Device::Cpu;
        let isas = Isa::available();
        let shapes = [
            (1, 256, 512),
            (2, 40, 23),
            (3, 37, 21),
            (5, 19, 13),
            (6, 64, 9),
            (7, 33, 11),
            (8, 2816, 256),
            (16, 256, 2816),
        ];
        for (rows, in_dim, out_dim) in shapes {
            let x = Tensor::randn(0f32, 1.0, (rows, in_dim), &device).unwrap();
            let w = Tensor::randn(0f32, 1.0, (out_dim, in_dim), &device).unwrap();
            let u = Tensor::randn(0f32, 1.0, (out_dim, in_dim), &device).unwrap();
            let b = Tensor::randn(0f32, 1.0, out_dim, &device).unwrap();
            let want = x
                .matmul(&w.t().unwrap())
                .unwrap()
                .broadcast_add(&b)
                .unwrap();
            let gated = (x.matmul(&w.t().unwrap()).unwrap().silu().unwrap()
                * x.matmul(&u.t().unwrap()).unwrap())
            .unwrap();
            for &isa in &isas {
                let got = few_rows_linear(&x, &w, Some(&b), isa).unwrap();
                let worst = (got - &want)
                    .unwrap()
                    .abs()
                    .unwrap()
                    .max_all()
                    .unwrap()
                    .to_scalar::<f32>()
                    .unwrap();
                assert!(
                    worst < 1e-3,
                    "{isa:?} {rows}×{in_dim}·{out_dim}: off by {worst}"
                );
                let got = few_rows_swiglu(&x, &w, &u, isa).unwrap();
                let scale = gated
                    .abs()
                    .unwrap()
                    .max_all()
                    .unwrap()
                    .to_scalar::<f32>()
                    .unwrap();
                let worst = (got - &gated)
                    .unwrap()
                    .abs()
                    .unwrap()
                    .max_all()
                    .unwrap()
                    .to_scalar::<f32>()
                    .unwrap();
                assert!(
                    worst < 1e-5 * scale,
                    "{isa:?} swiglu {rows}×{in_dim}·{out_dim}: off by {worst}"
                );
            }
        }
    }
}
