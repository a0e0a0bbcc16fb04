//! The SwiGLU MLP's gated projection `silu(x·Gᵀ)·(x·Uᵀ)` as one candle op. Its backward
//! turns the output gradient into the input and weight gradients directly, so the two
//! `[rows, inner]` intermediate gradients never enter candle's gradient store (where each
//! would cost a zeroed buffer and an addition).

use super::float::KernelFloat;
use super::gemm::{MatMut, MatRef, matmul_parallel, new_product};
use super::{Isa, host_view, parallel_zeros, reshaped};
use candle_core::{CpuStorage, CustomOp3, DType, Layout, Result, Shape, Tensor};
use rayon::prelude::*;
use std::sync::Mutex;

/// Elements per parallel task of the elementwise part.
const CHUNK: usize = 16_384;

/// `silu(x·gateᵀ)·(x·upᵀ)` for `x [.., hidden]` and weights `[inner, hidden]`: `[.., inner]`,
/// differentiable in all three.
pub fn gated_projection(x: &Tensor, gate: &Tensor, up: &Tensor, isa: Isa) -> Result<Tensor> {
    let (inner, hidden) = gate.dims2()?;
    if up.dims2()? != (inner, hidden) || x.dim(candle_core::D::Minus1)? != hidden {
        candle_core::bail!(
            "gated projection: x {:?}, gate {:?}, up {:?}",
            x.shape(),
            gate.shape(),
            up.shape()
        );
    }
    let mut dims = x.dims().to_vec();
    let rows = x.elem_count() / hidden.max(1);
    let flat = reshaped(&x.contiguous()?, &[rows, hidden])?;
    let (gate, up) = (gate.contiguous()?, up.contiguous()?);
    let out = match x.dtype() {
        DType::F32 => flat.apply_op3(&gate, &up, GatedProjection::<f32>::new(isa))?,
        DType::F64 => flat.apply_op3(&gate, &up, GatedProjection::<f64>::new(isa))?,
        dtype => candle_core::bail!("gated projection: no kernel for {dtype:?}"),
    };
    if let Some(last) = dims.last_mut() {
        *last = inner;
    }
    reshaped(&out, &dims)
}

/// The forward keeps both projections `[rows, inner]` for the backward.
struct GatedProjection<F> {
    isa: Isa,
    saved: Mutex<Option<(Vec<F>, Vec<F>)>>,
}

fn contiguous<'a, F: KernelFloat>(storage: &'a CpuStorage, layout: &Layout) -> Result<&'a [F]> {
    match layout.contiguous_offsets() {
        Some((start, end)) => Ok(&F::cpu_storage_as_slice(storage)?[start..end]),
        None => candle_core::bail!("gated projection: inputs must be contiguous"),
    }
}

impl<F: KernelFloat> GatedProjection<F> {
    fn new(isa: Isa) -> Self {
        Self {
            isa,
            saved: Mutex::new(None),
        }
    }

    fn poisoned() -> candle_core::Error {
        candle_core::Error::Msg("gated projection: poisoned state".into())
    }
}

impl<F: KernelFloat> CustomOp3 for GatedProjection<F> {
    fn name(&self) -> &'static str {
        "rollscope-gated-projection"
    }

    fn cpu_fwd(
        &self,
        x: &CpuStorage,
        x_layout: &Layout,
        gate: &CpuStorage,
        gate_layout: &Layout,
        up: &CpuStorage,
        up_layout: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let (rows, hidden) = x_layout.shape().dims2()?;
        let (inner, _) = gate_layout.shape().dims2()?;
        let (x, gate_w, up_w) = (
            contiguous::<F>(x, x_layout)?,
            contiguous::<F>(gate, gate_layout)?,
            contiguous::<F>(up, up_layout)?,
        );
        let input = MatRef::rows(x, rows, hidden);
        let gate = new_product(self.isa, input, MatRef::rows(gate_w, inner, hidden).t());
        let up = new_product(self.isa, input, MatRef::rows(up_w, inner, hidden).t());
        let mut out = parallel_zeros::<F>(rows * inner);
        out.par_chunks_mut(CHUNK)
            .zip(gate.par_chunks(CHUNK).zip(up.par_chunks(CHUNK)))
            .for_each(|(out, (gate, up))| F::silu_mul(self.isa, gate, up, out));
        *self.saved.lock().map_err(|_| Self::poisoned())? = Some((gate, up));
        Ok((F::to_cpu_storage_owned(out), Shape::from((rows, inner))))
    }

    fn bwd(
        &self,
        x: &Tensor,
        gate_w: &Tensor,
        up_w: &Tensor,
        _: &Tensor,
        grad: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        let saved = self.saved.lock().map_err(|_| Self::poisoned())?;
        let Some((gate, up)) = saved.as_ref() else {
            candle_core::bail!("gated projection: backward before forward");
        };
        let (rows, hidden) = x.dims2()?;
        let (inner, _) = gate_w.dims2()?;
        let grad = grad.contiguous()?;
        let (dy_storage, dy_layout) = grad.storage_and_layout();
        let dy = host_view::<F>(&dy_storage, dy_layout)?;
        let (x_storage, x_layout) = x.storage_and_layout();
        let (gate_storage, gate_layout) = gate_w.storage_and_layout();
        let (up_storage, up_layout) = up_w.storage_and_layout();
        let x_values = host_view::<F>(&x_storage, x_layout)?;
        let gate_values = host_view::<F>(&gate_storage, gate_layout)?;
        let up_values = host_view::<F>(&up_storage, up_layout)?;
        let mut d_gate = parallel_zeros::<F>(rows * inner);
        let mut d_up = parallel_zeros::<F>(rows * inner);
        d_gate
            .par_chunks_mut(CHUNK)
            .zip(d_up.par_chunks_mut(CHUNK))
            .zip(
                gate.par_chunks(CHUNK)
                    .zip(up.par_chunks(CHUNK))
                    .zip(dy.par_chunks(CHUNK)),
            )
            .for_each(|((d_gate, d_up), ((gate, up), dy))| {
                F::swiglu_grad(self.isa, gate, up, dy, d_gate, d_up)
            });
        let (d_gate, d_up) = (
            MatRef::rows(&d_gate, rows, inner),
            MatRef::rows(&d_up, rows, inner),
        );
        let input = MatRef::rows(x_values, rows, hidden);
        let mut dx = new_product(self.isa, d_gate, MatRef::rows(gate_values, inner, hidden));
        matmul_parallel(
            self.isa,
            MatMut::rows(&mut dx, rows, hidden),
            d_up,
            MatRef::rows(up_values, inner, hidden),
            true,
        );
        let weight_grad = |weight: &Tensor, d_out: MatRef<'_, F>| -> Result<Option<Tensor>> {
            if !weight.track_op() {
                return Ok(None);
            }
            let grad = new_product(self.isa, d_out.t(), input);
            Ok(Some(Tensor::from_vec(
                grad,
                (inner, hidden),
                weight.device(),
            )?))
        };
        Ok((
            Some(Tensor::from_vec(dx, (rows, hidden), x.device())?),
            weight_grad(gate_w, d_gate)?,
            weight_grad(up_w, d_up)?,
        ))
    }
}
