//! A linear layer's product `x·Wᵀ` on rows as one candle op. Written with candle's matmul it
//! goes through a transposed view of the weight, whose gradient candle first accumulates
//! transposed and then adds, element by element through the transpose, into the weight's;
//! here the backward produces `dW = dyᵀ·x` in the weight's own layout.

use super::float::KernelFloat;
use super::gemm::{MatRef, new_product};
use super::{Isa, host_view};
use candle_core::{CpuStorage, CustomOp2, DType, Layout, Result, Shape, Tensor};

/// `x·weightᵀ` for `x [rows, in]` and `weight [out, in]`: `[rows, out]`, differentiable in
/// both, on `isa`.
pub fn linear_rows(x: &Tensor, weight: &Tensor, isa: Isa) -> Result<Tensor> {
    let (_, in_dim) = x.dims2()?;
    let (_, weight_in) = weight.dims2()?;
    if in_dim != weight_in {
        candle_core::bail!(
            "linear: x {:?} against a weight {:?}",
            x.shape(),
            weight.shape()
        );
    }
    match x.dtype() {
        DType::F32 | DType::F64 => x
            .contiguous()?
            .apply_op2(&weight.contiguous()?, Linear { isa }),
        dtype => candle_core::bail!("linear: no kernel for {dtype:?}"),
    }
}

struct Linear {
    isa: Isa,
}

fn contiguous<'a, F: KernelFloat>(storage: &'a CpuStorage, layout: &Layout) -> Result<&'a [F]> {
    match layout.contiguous_offsets() {
        Some((start, end)) => Ok(&F::cpu_storage_as_slice(storage)?[start..end]),
        None => candle_core::bail!("linear: inputs must be contiguous"),
    }
}

fn forward<F: KernelFloat>(
    isa: Isa,
    x: &[F],
    weight: &[F],
    rows: usize,
    in_dim: usize,
    out_dim: usize,
) -> Vec<F> {
    let weight_t = MatRef::rows(weight, out_dim, in_dim).t();
    new_product(isa, MatRef::rows(x, rows, in_dim), weight_t)
}

/// The gradients of `x` and, when it is trained, of the weight (a frozen weight, as under
/// LoRA, costs no product).
fn backward<F: KernelFloat>(
    isa: Isa,
    x: &Tensor,
    weight: &Tensor,
    grad: &Tensor,
) -> Result<(Tensor, Option<Tensor>)> {
    let (rows, in_dim) = x.dims2()?;
    let (out_dim, _) = weight.dims2()?;
    let grad = grad.contiguous()?;
    let (dy_storage, dy_layout) = grad.storage_and_layout();
    let (x_storage, x_layout) = x.storage_and_layout();
    let (w_storage, w_layout) = weight.storage_and_layout();
    let (x_values, w_values) = (
        host_view::<F>(&x_storage, x_layout)?,
        host_view::<F>(&w_storage, w_layout)?,
    );
    let dy = MatRef::rows(host_view::<F>(&dy_storage, dy_layout)?, rows, out_dim);
    let dx = new_product(isa, dy, MatRef::rows(w_values, out_dim, in_dim));
    let dw = if weight.track_op() {
        let dw = new_product(isa, dy.t(), MatRef::rows(x_values, rows, in_dim));
        Some(Tensor::from_vec(dw, (out_dim, in_dim), weight.device())?)
    } else {
        None
    };
    Ok((Tensor::from_vec(dx, (rows, in_dim), x.device())?, dw))
}

impl CustomOp2 for Linear {
    fn name(&self) -> &'static str {
        "rollscope-linear"
    }

    fn cpu_fwd(
        &self,
        x: &CpuStorage,
        x_layout: &Layout,
        w: &CpuStorage,
        w_layout: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let (rows, in_dim) = x_layout.shape().dims2()?;
        let (out_dim, _) = w_layout.shape().dims2()?;
        let storage = match (x, w) {
            (CpuStorage::F32(_), CpuStorage::F32(_)) => CpuStorage::F32(forward::<f32>(
                self.isa,
                contiguous(x, x_layout)?,
                contiguous(w, w_layout)?,
                rows,
                in_dim,
                out_dim,
            )),
            (CpuStorage::F64(_), CpuStorage::F64(_)) => CpuStorage::F64(forward::<f64>(
                self.isa,
                contiguous(x, x_layout)?,
                contiguous(w, w_layout)?,
                rows,
                in_dim,
                out_dim,
            )),
            _ => candle_core::bail!("linear: f32 or f64 inputs of one dtype expected"),
        };
        Ok((storage, Shape::from((rows, out_dim))))
    }

    fn bwd(
        &self,
        x: &Tensor,
        weight: &Tensor,
        _: &Tensor,
        grad: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        let (dx, dw) = match x.dtype() {
            DType::F32 => backward::<f32>(self.isa, x, weight, grad)?,
            DType::F64 => backward::<f64>(self.isa, x, weight, grad)?,
            dtype => candle_core::bail!("linear: no backward for {dtype:?}"),
        };
        Ok((Some(dx), dw))
    }
}
