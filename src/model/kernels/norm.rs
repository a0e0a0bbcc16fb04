//! RMSNorm as one candle op: `y = x·r·w` with `r = (mean(x²) + ε)^−½` per row, and its
//! backward `dx = r·(g·w − x̂·mean(g·w·x̂))`, `dw = Σ_rows g·x̂` (`x̂ = x·r`). The rows are
//! split into fixed chunks; `dw`'s per-chunk sums are added in chunk order, so the result is
//! the same bits whatever the thread count or timing.

use super::float::KernelFloat;
use super::{Isa, host_slice, row_offsets, rows_per_task};
use candle_core::{CpuStorage, CustomOp2, Layout, Result, Shape, Tensor};
use rayon::prelude::*;

/// `x / sqrt(mean(x²) + eps) · weight` over the last dimension, differentiable in both.
pub fn rms_norm(x: &Tensor, weight: &Tensor, eps: f64, isa: Isa) -> Result<Tensor> {
    x.apply_op2(&weight.contiguous()?, RmsNorm { eps, isa })
}

struct RmsNorm {
    eps: f64,
    isa: Isa,
}

impl RmsNorm {
    fn forward<F: KernelFloat>(&self, x: &[F], layout: &Layout, weight: &[F]) -> Result<Vec<F>> {
        let width = weight.len();
        let offsets = row_offsets(layout)?;
        let mut out = vec![F::zero(); offsets.len() * width];
        let per_task = rows_per_task(width);
        let eps = F::from_f64(self.eps);
        let scale = F::from_f64(1.0 / width as f64);
        out.par_chunks_mut(per_task * width)
            .zip(offsets.par_chunks(per_task))
            .for_each(|(out, offsets)| {
                for (row_out, &offset) in out.chunks_mut(width).zip(offsets) {
                    let row = &x[offset..offset + width];
                    let inverse = (F::dot(self.isa, row, row) * scale + eps).sqrt().recip();
                    for ((y, &value), &w) in row_out.iter_mut().zip(row).zip(weight) {
                        *y = value * inverse * w;
                    }
                }
            });
        Ok(out)
    }

    fn backward<F: KernelFloat>(
        &self,
        x: &Tensor,
        weight: &Tensor,
        grad: &Tensor,
    ) -> Result<(Tensor, Tensor)> {
        let (x_values, w, g) = (
            host_slice::<F>(x)?,
            host_slice::<F>(weight)?,
            host_slice::<F>(grad)?,
        );
        let width = w.len();
        let per_task = rows_per_task(width);
        let eps = F::from_f64(self.eps);
        let scale = F::from_f64(1.0 / width as f64);
        let mut dx = vec![F::zero(); x_values.len()];
        let partials: Vec<Vec<F>> = dx
            .par_chunks_mut(per_task * width)
            .zip(x_values.par_chunks(per_task * width))
            .zip(g.par_chunks(per_task * width))
            .map(|((dx, x), g)| {
                let mut dw = vec![F::zero(); width];
                let mut scaled = vec![F::zero(); width];
                for ((dx, x), g) in dx
                    .chunks_mut(width)
                    .zip(x.chunks(width))
                    .zip(g.chunks(width))
                {
                    let inverse = (F::dot(self.isa, x, x) * scale + eps).sqrt().recip();
                    let mut projection = F::zero();
                    for i in 0..width {
                        let normed = x[i] * inverse;
                        dw[i] += g[i] * normed;
                        scaled[i] = g[i] * w[i];
                        projection += scaled[i] * normed;
                    }
                    let projection = projection * scale;
                    for i in 0..width {
                        dx[i] = inverse * (scaled[i] - x[i] * inverse * projection);
                    }
                }
                dw
            })
            .collect();
        let dw = sum_in_order(partials, width);
        Ok((
            Tensor::from_vec(dx, x.shape(), x.device())?,
            Tensor::from_vec(dw, weight.shape(), weight.device())?,
        ))
    }
}

/// The element-wise sum of `partials` (each `width` long), added in their order: the
/// chunks' partial sums, combined the same way whichever threads computed them.
fn sum_in_order<F: KernelFloat>(partials: Vec<Vec<F>>, width: usize) -> Vec<F> {
    let mut parts = partials.into_iter();
    let mut total = parts.next().unwrap_or_else(|| vec![F::zero(); width]);
    for part in parts {
        total.iter_mut().zip(part).for_each(|(t, p)| *t += p);
    }
    total
}

impl CustomOp2 for RmsNorm {
    fn name(&self) -> &'static str {
        "rollscope-rms-norm"
    }

    fn cpu_fwd(
        &self,
        x: &CpuStorage,
        x_layout: &Layout,
        weight: &CpuStorage,
        weight_layout: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let shape = x_layout.shape().clone();
        let Some((start, end)) = weight_layout.contiguous_offsets() else {
            candle_core::bail!("rms-norm: the weight must be contiguous");
        };
        if shape.dims().last() != Some(&(end - start)) {
            candle_core::bail!(
                "rms-norm: weight of {} for rows of {:?}",
                end - start,
                shape
            );
        }
        let storage = match (x, weight) {
            (CpuStorage::F32(x), CpuStorage::F32(w)) => {
                CpuStorage::F32(self.forward(x, x_layout, &w[start..end])?)
            }
            (CpuStorage::F64(x), CpuStorage::F64(w)) => {
                CpuStorage::F64(self.forward(x, x_layout, &w[start..end])?)
            }
            _ => candle_core::bail!("rms-norm: f32 or f64 inputs of one dtype expected"),
        };
        Ok((storage, shape))
    }

    fn bwd(
        &self,
        x: &Tensor,
        weight: &Tensor,
        _: &Tensor,
        grad: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        let (dx, dw) = match x.dtype() {
            candle_core::DType::F32 => self.backward::<f32>(x, weight, grad)?,
            candle_core::DType::F64 => self.backward::<f64>(x, weight, grad)?,
            dtype => candle_core::bail!("rms-norm: no backward for {dtype:?}"),
        };
        Ok((Some(dx), Some(dw)))
    }
}
