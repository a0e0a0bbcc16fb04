//! The element types the kernels run on: f32 through the vectorised primitives, f64 through
//! plain loops (used by the float64 gradient checks).

use super::gemm_isa::{self, Product};
use super::{Isa, simd};
use candle_core::WithDType;

/// A float the kernels can compute in.
pub trait KernelFloat: WithDType + num_traits::Float + Send + Sync {
    /// `values[i] = exp(values[i] − shift)` in place; returns the sum of the results.
    fn exp_sum(isa: Isa, values: &mut [Self], shift: Self) -> Self;
    /// The largest element (−∞ for an empty row).
    fn max_of(isa: Isa, src: &[Self]) -> Self;
    /// `Σ a[i]·b[i]`.
    fn dot(isa: Isa, a: &[Self], b: &[Self]) -> Self;
    /// `out[i] = silu(gate[i])·up[i]`.
    fn silu_mul(isa: Isa, gate: &[Self], up: &[Self], out: &mut [Self]);
    /// The gradient of `silu(gate)·up` (see `simd::swiglu_grad`).
    fn swiglu_grad(
        isa: Isa,
        gate: &[Self],
        up: &[Self],
        grad: &[Self],
        d_gate: &mut [Self],
        d_up: &mut [Self],
    );
    /// Runs a gemm `product` on `isa` (f64 keeps gemm's own choice).
    ///
    /// # Safety
    /// As `gemm_isa::run_f32`.
    unsafe fn product(isa: Isa, product: Product<Self>, parallelism: gemm::Parallelism);
}

impl KernelFloat for f32 {
    unsafe fn product(isa: Isa, product: Product<f32>, parallelism: gemm::Parallelism) {
        // SAFETY: the caller's contract is `run_f32`'s.
        unsafe { gemm_isa::run_f32(isa, product, parallelism) }
    }

    fn exp_sum(isa: Isa, values: &mut [f32], shift: f32) -> f32 {
        simd::exp_sum(isa, values, shift)
    }

    fn max_of(isa: Isa, src: &[f32]) -> f32 {
        simd::max(isa, src)
    }

    fn dot(isa: Isa, a: &[f32], b: &[f32]) -> f32 {
        simd::dot(isa, a, b)
    }

    fn silu_mul(isa: Isa, gate: &[f32], up: &[f32], out: &mut [f32]) {
        simd::silu_mul(isa, gate, up, out);
    }

    fn swiglu_grad(
        isa: Isa,
        gate: &[f32],
        up: &[f32],
        grad: &[f32],
        d_gate: &mut [f32],
        d_up: &mut [f32],
    ) {
        simd::swiglu_grad(isa, gate, up, grad, d_gate, d_up);
    }
}

impl KernelFloat for f64 {
    unsafe fn product(_: Isa, product: Product<f64>, parallelism: gemm::Parallelism) {
        // SAFETY: the caller's contract is `run_any`'s.
        unsafe { gemm_isa::run_any(product, 1.0, parallelism) }
    }

    fn exp_sum(_: Isa, values: &mut [f64], shift: f64) -> f64 {
        let mut sum = 0.0;
        for value in values.iter_mut() {
            *value = (*value - shift).exp();
            sum += *value;
        }
        sum
    }

    fn max_of(_: Isa, src: &[f64]) -> f64 {
        src.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    }

    fn dot(_: Isa, a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    fn silu_mul(_: Isa, gate: &[f64], up: &[f64], out: &mut [f64]) {
        for ((out, &g), &u) in out.iter_mut().zip(gate).zip(up) {
            *out = g / (1.0 + (-g).exp()) * u;
        }
    }

    fn swiglu_grad(
        _: Isa,
        gate: &[f64],
        up: &[f64],
        grad: &[f64],
        d_gate: &mut [f64],
        d_up: &mut [f64],
    ) {
        for i in 0..gate.len() {
            let g = gate[i];
            let sigmoid = 1.0 / (1.0 + (-g).exp());
            d_gate[i] = grad[i] * up[i] * sigmoid * (1.0 + g * (1.0 - sigmoid));
            d_up[i] = grad[i] * g * sigmoid;
        }
    }
}
