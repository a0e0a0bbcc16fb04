//! Log-softmax + gather and entropy over the vocabulary as candle ops, one pass per row in
//! each direction, at temperature `T` (`x = logits / T`):
//! `log p(target) = x[target] − lse(x)`, gradient `(onehot − p) / T`;
//! `H = lse(x) − Σ p·x`, gradient `−p·(x − Σ p·x) / T`.

use super::float::KernelFloat;
use super::{Isa, row_offsets, rows_per_task};
use candle_core::{
    CpuStorage, CustomOp1, CustomOp2, DType, Layout, Result, Shape, Storage, Tensor, WithDType,
};
use rayon::prelude::*;
use std::sync::Mutex;

/// `log softmax(logits / T)[target]` for every row: logits `[.., V]` (f32 or f64; the last
/// dimension contiguous), targets `[..]` u32. Differentiable in the logits.
pub fn fused_token_log_probs(
    logits: &Tensor,
    targets: &Tensor,
    temperature: f64,
    isa: Isa,
) -> Result<Tensor> {
    let targets = targets.to_dtype(DType::U32)?.contiguous()?;
    let rows = logits.elem_count() / logits.dim(candle_core::D::Minus1)?.max(1);
    if targets.elem_count() != rows {
        candle_core::bail!(
            "token log-probs: {rows} rows of logits but {} targets",
            targets.elem_count()
        );
    }
    let op = RowOp {
        kind: Kind::Gather,
        temperature,
        isa,
        saved: Mutex::new(Vec::new()),
    };
    logits.apply_op2(&targets, op)
}

/// The entropy of `softmax(logits / T)` for every row: `[.., V]` → `[..]`. Differentiable.
pub fn fused_entropy(logits: &Tensor, temperature: f64, isa: Isa) -> Result<Tensor> {
    let op = RowOp {
        kind: Kind::Entropy,
        temperature,
        isa,
        saved: Mutex::new(Vec::new()),
    };
    logits.apply_op1(op)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Gather,
    Entropy,
}

/// Per row, the forward keeps `lse(x)` and, for the entropy, `Σ p·x`.
struct RowOp {
    kind: Kind,
    temperature: f64,
    isa: Isa,
    saved: Mutex<Vec<[f64; 2]>>,
}

impl RowOp {
    fn poisoned() -> candle_core::Error {
        candle_core::Error::Msg("log-prob kernel: poisoned state".into())
    }

    /// `logit / T`, exact when `T = 1`.
    fn scaled<F: KernelFloat>(&self, logit: F) -> F {
        if self.temperature == 1.0 {
            logit
        } else {
            logit / F::from_f64(self.temperature)
        }
    }

    /// Statistics of one row: `(result, lse, Σ p·x)`; `scratch` ends up holding `p`.
    fn row<F: KernelFloat>(
        &self,
        row: &[F],
        target: Option<usize>,
        scratch: &mut [F],
    ) -> (F, F, F) {
        for (x, &logit) in scratch.iter_mut().zip(row) {
            *x = self.scaled(logit);
        }
        let max = F::max_of(self.isa, scratch);
        let sum = F::exp_sum(self.isa, scratch, max);
        let lse = max + sum.ln();
        match (self.kind, target) {
            (Kind::Gather, Some(target)) => (self.scaled(row[target]) - lse, lse, F::zero()),
            _ => {
                let inverse_sum = F::one() / sum;
                let expected = scratch
                    .iter()
                    .zip(row)
                    .fold(F::zero(), |acc, (&weight, &logit)| {
                        acc + weight * inverse_sum * self.scaled(logit)
                    });
                (lse - expected, lse, expected)
            }
        }
    }

    fn forward<F: KernelFloat>(
        &self,
        logits: &[F],
        layout: &Layout,
        targets: Option<&[u32]>,
    ) -> Result<Vec<F>> {
        let width = *layout.dims().last().unwrap_or(&0);
        let offsets = row_offsets(layout)?;
        if let Some(targets) = targets
            && let Some(&bad) = targets.iter().find(|&&target| target as usize >= width)
        {
            candle_core::bail!("token log-probs: target {bad} outside a vocabulary of {width}");
        }
        let per_task = rows_per_task(width);
        let mut out = vec![F::zero(); offsets.len()];
        let mut saved = vec![[0.0; 2]; offsets.len()];
        out.par_chunks_mut(per_task)
            .zip(saved.par_chunks_mut(per_task))
            .enumerate()
            .for_each(|(task, (out, saved))| {
                let mut scratch = vec![F::zero(); width];
                for (i, (out, saved)) in out.iter_mut().zip(saved).enumerate() {
                    let index = task * per_task + i;
                    let row = &logits[offsets[index]..offsets[index] + width];
                    let target = targets.map(|targets| targets[index] as usize);
                    let (value, lse, expected) = self.row(row, target, &mut scratch);
                    *out = value;
                    *saved = [WithDType::to_f64(lse), WithDType::to_f64(expected)];
                }
            });
        *self.saved.lock().map_err(|_| Self::poisoned())? = saved;
        Ok(out)
    }

    fn backward<F: KernelFloat>(
        &self,
        logits: &Tensor,
        targets: Option<&Tensor>,
        grad: &Tensor,
    ) -> Result<Tensor> {
        let saved = self.saved.lock().map_err(|_| Self::poisoned())?;
        let grad: Vec<F> = super::host_slice(grad)?;
        let targets: Option<Vec<u32>> = targets.map(super::host_slice).transpose()?;
        let width = logits.dim(candle_core::D::Minus1)?;
        let inverse_t = F::from_f64(1.0 / self.temperature);
        let (storage, layout) = logits.storage_and_layout();
        let Storage::Cpu(storage) = &*storage else {
            candle_core::bail!("log-prob kernel: logits are not on the CPU");
        };
        let values = F::cpu_storage_as_slice(storage)?;
        let offsets = row_offsets(layout)?;
        if saved.len() != offsets.len() || grad.len() != offsets.len() {
            candle_core::bail!("log-prob kernel: backward before forward");
        }
        let mut out = super::parallel_zeros::<F>(offsets.len() * width);
        let per_task = rows_per_task(width);
        out.par_chunks_mut(per_task * width)
            .enumerate()
            .for_each(|(task, out)| {
                for (i, out) in out.chunks_mut(width).enumerate() {
                    let index = task * per_task + i;
                    let row = &values[offsets[index]..offsets[index] + width];
                    let [lse, expected] = saved[index].map(F::from_f64);
                    for (x, &logit) in out.iter_mut().zip(row) {
                        *x = self.scaled(logit);
                    }
                    F::exp_sum(self.isa, out, lse);
                    let scale = grad[index] * inverse_t;
                    match &targets {
                        Some(targets) => {
                            out.iter_mut().for_each(|p| *p = -*p * scale);
                            out[targets[index] as usize] += scale;
                        }
                        None => {
                            for (p, &logit) in out.iter_mut().zip(row) {
                                *p = -*p * (self.scaled(logit) - expected) * scale;
                            }
                        }
                    }
                }
            });
        Tensor::from_vec(out, logits.shape(), logits.device())
    }

    fn result_shape(layout: &Layout) -> Shape {
        let dims = layout.dims();
        Shape::from(&dims[..dims.len().saturating_sub(1)])
    }
}

impl CustomOp2 for RowOp {
    fn name(&self) -> &'static str {
        "rollscope-token-log-probs"
    }

    fn cpu_fwd(
        &self,
        logits: &CpuStorage,
        layout: &Layout,
        targets: &CpuStorage,
        targets_layout: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let (CpuStorage::U32(targets), Some((start, end))) =
            (targets, targets_layout.contiguous_offsets())
        else {
            candle_core::bail!("token log-probs: targets must be contiguous u32");
        };
        let targets = Some(&targets[start..end]);
        let storage = match logits {
            CpuStorage::F32(logits) => CpuStorage::F32(self.forward(logits, layout, targets)?),
            CpuStorage::F64(logits) => CpuStorage::F64(self.forward(logits, layout, targets)?),
            _ => candle_core::bail!("token log-probs: f32 or f64 logits expected"),
        };
        Ok((storage, Self::result_shape(layout)))
    }

    fn bwd(
        &self,
        logits: &Tensor,
        targets: &Tensor,
        _: &Tensor,
        grad: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        let d_logits = match logits.dtype() {
            DType::F32 => self.backward::<f32>(logits, Some(targets), grad)?,
            DType::F64 => self.backward::<f64>(logits, Some(targets), grad)?,
            dtype => candle_core::bail!("token log-probs: no backward for {dtype:?}"),
        };
        Ok((Some(d_logits), None))
    }
}

impl CustomOp1 for RowOp {
    fn name(&self) -> &'static str {
        "rollscope-entropy"
    }

    fn cpu_fwd(&self, logits: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        let storage = match logits {
            CpuStorage::F32(logits) => CpuStorage::F32(self.forward(logits, layout, None)?),
            CpuStorage::F64(logits) => CpuStorage::F64(self.forward(logits, layout, None)?),
            _ => candle_core::bail!("entropy: f32 or f64 logits expected"),
        };
        Ok((storage, Self::result_shape(layout)))
    }

    fn bwd(&self, logits: &Tensor, _: &Tensor, grad: &Tensor) -> Result<Option<Tensor>> {
        let d_logits = match logits.dtype() {
            DType::F32 => self.backward::<f32>(logits, None, grad)?,
            DType::F64 => self.backward::<f64>(logits, None, grad)?,
            dtype => candle_core::bail!("entropy: no backward for {dtype:?}"),
        };
        Ok(Some(d_logits))
    }
}
