//! SwiGLU's elementwise part as one candle op: `silu(gate)·up`, with a backward that computes
//! both input gradients in one pass.

use super::float::KernelFloat;
use super::{Isa, host_slice};
use candle_core::{CpuStorage, CustomOp2, DType, Layout, Result, Shape, Tensor};
use rayon::prelude::*;

/// Elements per parallel task.
const CHUNK: usize = 16_384;

/// `silu(gate)·up` elementwise (same shapes), differentiable in both.
pub fn swiglu(gate: &Tensor, up: &Tensor, isa: Isa) -> Result<Tensor> {
    if gate.shape() != up.shape() {
        candle_core::bail!(
            "swiglu: gate {:?} and up {:?} differ",
            gate.shape(),
            up.shape()
        );
    }
    gate.contiguous()?
        .apply_op2(&up.contiguous()?, Swiglu { isa })
}

struct Swiglu {
    isa: Isa,
}

impl Swiglu {
    fn forward<F: KernelFloat>(&self, gate: &[F], up: &[F]) -> Vec<F> {
        let mut out = vec![F::zero(); gate.len()];
        out.par_chunks_mut(CHUNK)
            .zip(gate.par_chunks(CHUNK).zip(up.par_chunks(CHUNK)))
            .for_each(|(out, (gate, up))| F::silu_mul(self.isa, gate, up, out));
        out
    }

    fn backward<F: KernelFloat>(
        &self,
        gate: &Tensor,
        up: &Tensor,
        grad: &Tensor,
    ) -> Result<(Tensor, Tensor)> {
        let (g, u, dy) = (
            host_slice::<F>(gate)?,
            host_slice::<F>(up)?,
            host_slice::<F>(grad)?,
        );
        let mut d_gate = vec![F::zero(); g.len()];
        let mut d_up = vec![F::zero(); g.len()];
        d_gate
            .par_chunks_mut(CHUNK)
            .zip(d_up.par_chunks_mut(CHUNK))
            .zip(
                g.par_chunks(CHUNK)
                    .zip(u.par_chunks(CHUNK))
                    .zip(dy.par_chunks(CHUNK)),
            )
            .for_each(|((d_gate, d_up), ((g, u), dy))| {
                F::swiglu_grad(self.isa, g, u, dy, d_gate, d_up)
            });
        Ok((
            Tensor::from_vec(d_gate, gate.shape(), gate.device())?,
            Tensor::from_vec(d_up, up.shape(), up.device())?,
        ))
    }
}

fn contiguous<'a, F>(values: &'a [F], layout: &Layout) -> Result<&'a [F]> {
    match layout.contiguous_offsets() {
        Some((start, end)) => Ok(&values[start..end]),
        None => candle_core::bail!("swiglu: inputs must be contiguous"),
    }
}

impl CustomOp2 for Swiglu {
    fn name(&self) -> &'static str {
        "rollscope-swiglu"
    }

    fn cpu_fwd(
        &self,
        gate: &CpuStorage,
        gate_layout: &Layout,
        up: &CpuStorage,
        up_layout: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let storage = match (gate, up) {
            (CpuStorage::F32(g), CpuStorage::F32(u)) => CpuStorage::F32(
                self.forward(contiguous(g, gate_layout)?, contiguous(u, up_layout)?),
            ),
            (CpuStorage::F64(g), CpuStorage::F64(u)) => CpuStorage::F64(
                self.forward(contiguous(g, gate_layout)?, contiguous(u, up_layout)?),
            ),
            _ => candle_core::bail!("swiglu: f32 or f64 inputs of one dtype expected"),
        };
        Ok((storage, gate_layout.shape().clone()))
    }

    fn bwd(
        &self,
        gate: &Tensor,
        up: &Tensor,
        _: &Tensor,
        grad: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        let (d_gate, d_up) = match gate.dtype() {
            DType::F32 => self.backward::<f32>(gate, up, grad)?,
            DType::F64 => self.backward::<f64>(gate, up, grad)?,
            dtype => candle_core::bail!("swiglu: no backward for {dtype:?}"),
        };
        Ok((Some(d_gate), Some(d_up)))
    }
}
