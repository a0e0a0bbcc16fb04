//! AdamW's update as one in-place pass over a CPU f32 parameter, its gradient and its two
//! moments (kept in plain vectors), split across the thread pool: no temporaries.

use crate::model::Isa;
use candle_core::{CpuStorage, InplaceOp2, Layout, Result, Tensor};
use rayon::prelude::*;
use std::sync::Mutex;

/// Elements per parallel task.
const CHUNK: usize = 16_384;

/// The scalars of one AdamW step, rounded to f32 as candle rounds them in the tensor path.
#[derive(Clone, Copy, Debug)]
pub struct StepScalars {
    /// `β1`.
    pub beta1: f32,
    /// `1 − β1`.
    pub one_minus_beta1: f32,
    /// `β2`.
    pub beta2: f32,
    /// `1 − β2`.
    pub one_minus_beta2: f32,
    /// Added to the denominator.
    pub eps: f32,
    /// `1 − lr·weight_decay`.
    pub decay: f32,
    /// The learning rate.
    pub lr: f32,
    /// `1 / (1 − β1^t)`.
    pub inverse_correction1: f32,
    /// `1 / (1 − β2^t)`.
    pub inverse_correction2: f32,
}

/// Updates `param` (a CPU f32 tensor, contiguous) in place from `grad`, with the moments
/// `first` and `second` (as long as the parameter) updated in place too.
pub fn step_in_place(
    param: &Tensor,
    grad: &Tensor,
    first: &mut [f32],
    second: &mut [f32],
    scalars: StepScalars,
    isa: Isa,
) -> Result<()> {
    let grad = grad.to_dtype(candle_core::DType::F32)?.contiguous()?;
    if grad.elem_count() != first.len() || first.len() != second.len() {
        candle_core::bail!(
            "adamw: gradient of {} for moments of {}",
            grad.elem_count(),
            first.len()
        );
    }
    let op = Update {
        moments: Mutex::new((first, second)),
        scalars,
        isa,
    };
    param.inplace_op2(&grad, &op)
}

struct Update<'a> {
    moments: Mutex<(&'a mut [f32], &'a mut [f32])>,
    scalars: StepScalars,
    isa: Isa,
}

impl InplaceOp2 for Update<'_> {
    fn name(&self) -> &'static str {
        "rollscope-adamw"
    }

    fn cpu_fwd(
        &self,
        param: &mut CpuStorage,
        param_layout: &Layout,
        grad: &CpuStorage,
        grad_layout: &Layout,
    ) -> Result<()> {
        let (CpuStorage::F32(param), CpuStorage::F32(grad)) = (param, grad) else {
            candle_core::bail!("adamw: the in-place update needs f32 parameters and gradients");
        };
        let (Some((p_start, p_end)), Some((g_start, g_end))) = (
            param_layout.contiguous_offsets(),
            grad_layout.contiguous_offsets(),
        ) else {
            candle_core::bail!("adamw: the in-place update needs contiguous tensors");
        };
        let mut moments = self
            .moments
            .lock()
            .map_err(|_| candle_core::Error::Msg("adamw: poisoned moments".into()))?;
        let (first, second) = &mut *moments;
        let (param, grad) = (&mut param[p_start..p_end], &grad[g_start..g_end]);
        if param.len() != grad.len() || param.len() != first.len() {
            candle_core::bail!(
                "adamw: parameter of {} for a gradient of {}",
                param.len(),
                grad.len()
            );
        }
        let scalars = self.scalars;
        let isa = self.isa;
        param
            .par_chunks_mut(CHUNK)
            .zip(grad.par_chunks(CHUNK))
            .zip(
                first
                    .par_chunks_mut(CHUNK)
                    .zip(second.par_chunks_mut(CHUNK)),
            )
            .for_each(|((param, grad), (first, second))| match isa {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `Isa::Avx512` is only chosen when the CPU reports AVX-512F.
                Isa::Avx512 => unsafe { update_avx512(param, grad, first, second, &scalars) },
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `Isa::Avx2` is only chosen when the CPU reports AVX2 and FMA.
                Isa::Avx2 => unsafe { update_avx2(param, grad, first, second, &scalars) },
                _ => update(param, grad, first, second, &scalars),
            });
        Ok(())
    }
}

/// `m ← β1·m + (1−β1)·g`, `v ← β2·v + (1−β2)·g²`,
/// `θ ← θ·(1 − lr·λ) − lr·(m / c1) / (√(v / c2) + ε)`, with the tensor path's f32 operations
/// in its order (division by a scalar is a product by its inverse there).
#[inline(always)]
fn update(param: &mut [f32], grad: &[f32], first: &mut [f32], second: &mut [f32], s: &StepScalars) {
    for (((p, &g), m), v) in param
        .iter_mut()
        .zip(grad)
        .zip(first.iter_mut())
        .zip(second.iter_mut())
    {
        *m = *m * s.beta1 + g * s.one_minus_beta1;
        *v = *v * s.beta2 + g * g * s.one_minus_beta2;
        let denominator = (*v * s.inverse_correction2).sqrt() + s.eps;
        *p = *p * s.decay - (*m * s.inverse_correction1) / denominator * s.lr;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn update_avx512(
    param: &mut [f32],
    grad: &[f32],
    first: &mut [f32],
    second: &mut [f32],
    s: &StepScalars,
) {
    update(param, grad, first, second, s);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn update_avx2(
    param: &mut [f32],
    grad: &[f32],
    first: &mut [f32],
    second: &mut [f32],
    s: &StepScalars,
) {
    update(param, grad, first, second, s);
}
