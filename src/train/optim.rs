//! AdamW with state that can be saved and restored (checkpoints), and gradient clipping by
//! global norm, both as PyTorch computes them. On the CPU in f32 the update is one fused
//! in-place pass per parameter (`fused_adamw`); elsewhere it is written with tensor ops.

use super::fused_adamw::{StepScalars, step_in_place};
use crate::model::Isa;
pub use crate::trajectory::AdamWConfig;
use candle_core::backprop::GradStore;
use candle_core::{DType, Device, Result, Tensor, Var};
use std::collections::HashMap;

impl Default for AdamWConfig {
    fn default() -> Self {
        Self {
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay: 0.0,
        }
    }
}

/// The moments of one parameter: host vectors for the fused update, or tensors.
enum Moments {
    /// CPU f32 parameters: updated in place by the fused pass.
    Host { first: Vec<f32>, second: Vec<f32> },
    /// Any other device or dtype: updated with tensor ops.
    Tensors { first: Tensor, second: Tensor },
}

struct Slot {
    name: String,
    var: Var,
    moments: Moments,
}

impl Slot {
    fn new(name: String, var: Var, fused: bool) -> Result<Self> {
        let host = fused && matches!(var.device(), Device::Cpu) && var.dtype() == DType::F32;
        let moments = if host {
            Moments::Host {
                first: vec![0.0; var.elem_count()],
                second: vec![0.0; var.elem_count()],
            }
        } else {
            Moments::Tensors {
                first: var.zeros_like()?,
                second: var.zeros_like()?,
            }
        };
        Ok(Self { name, var, moments })
    }
}

/// AdamW over named parameters.
pub struct AdamW {
    config: AdamWConfig,
    step: u64,
    slots: Vec<Slot>,
    isa: Isa,
}

impl AdamW {
    /// An optimizer with zero moments for each named parameter.
    pub fn new(params: Vec<(String, Var)>, config: AdamWConfig) -> Result<Self> {
        Self::build(params, config, true)
    }

    /// The same optimizer updating with tensor ops everywhere (the fused pass's reference).
    pub fn unfused(params: Vec<(String, Var)>, config: AdamWConfig) -> Result<Self> {
        Self::build(params, config, false)
    }

    fn build(params: Vec<(String, Var)>, config: AdamWConfig, fused: bool) -> Result<Self> {
        let slots = params
            .into_iter()
            .map(|(name, var)| Slot::new(name, var, fused))
            .collect::<Result<_>>()?;
        Ok(Self {
            config,
            step: 0,
            slots,
            isa: Isa::chosen(),
        })
    }

    /// Steps taken so far.
    pub fn steps(&self) -> u64 {
        self.step
    }

    /// The parameters, by name.
    pub fn params(&self) -> impl Iterator<Item = (&str, &Var)> {
        self.slots
            .iter()
            .map(|slot| (slot.name.as_str(), &slot.var))
    }

    /// One update with learning rate `lr`; parameters without a gradient are left alone.
    pub fn step(&mut self, grads: &GradStore, lr: f64) -> Result<()> {
        self.step += 1;
        let AdamWConfig {
            beta1,
            beta2,
            eps,
            weight_decay,
        } = self.config;
        let correction1 = 1.0 - beta1.powi(self.step as i32);
        let correction2 = 1.0 - beta2.powi(self.step as i32);
        let scalars = StepScalars {
            beta1: beta1 as f32,
            one_minus_beta1: (1.0 - beta1) as f32,
            beta2: beta2 as f32,
            one_minus_beta2: (1.0 - beta2) as f32,
            eps: eps as f32,
            decay: (1.0 - lr * weight_decay) as f32,
            lr: lr as f32,
            inverse_correction1: (1.0 / correction1) as f32,
            inverse_correction2: (1.0 / correction2) as f32,
        };
        for slot in &mut self.slots {
            let Some(grad) = grads.get(slot.var.as_tensor()) else {
                continue;
            };
            match &mut slot.moments {
                Moments::Host { first, second } => {
                    step_in_place(slot.var.as_tensor(), grad, first, second, scalars, self.isa)?;
                }
                Moments::Tensors { first, second } => {
                    let grad = grad.to_dtype(first.dtype())?;
                    *first = ((&*first * beta1)? + (&grad * (1.0 - beta1))?)?;
                    *second = ((&*second * beta2)? + (grad.sqr()? * (1.0 - beta2))?)?;
                    let denominator = ((&*second / correction2)?.sqrt()? + eps)?;
                    let update = ((&*first / correction1)? / denominator)?;
                    let theta = (slot.var.as_tensor() * (1.0 - lr * weight_decay))?;
                    slot.var.set(&(theta - (update * lr)?)?)?;
                }
            }
        }
        Ok(())
    }

    /// The moments as named tensors (`exp_avg.<name>`, `exp_avg_sq.<name>`), for checkpoints.
    pub fn state(&self) -> HashMap<String, Tensor> {
        let mut state = HashMap::new();
        for slot in &self.slots {
            let (first, second) = match &slot.moments {
                Moments::Host { first, second } => {
                    let shape = slot.var.shape();
                    let first = Tensor::from_slice(first, shape, &Device::Cpu);
                    let second = Tensor::from_slice(second, shape, &Device::Cpu);
                    // Host moments always have their parameter's size, so this never skips;
                    // if it did, `load_state` would name the missing key.
                    let (Ok(first), Ok(second)) = (first, second) else {
                        continue;
                    };
                    (first, second)
                }
                Moments::Tensors { first, second } => (first.clone(), second.clone()),
            };
            state.insert(format!("exp_avg.{}", slot.name), first);
            state.insert(format!("exp_avg_sq.{}", slot.name), second);
        }
        state
    }

    /// Restores moments saved by [`AdamW::state`] and the step count.
    pub fn load_state(&mut self, state: &HashMap<String, Tensor>, step: u64) -> Result<()> {
        for slot in &mut self.slots {
            let find = |key: String| {
                state.get(&key).cloned().ok_or_else(|| {
                    candle_core::Error::Msg(format!("optimizer state has no `{key}`"))
                })
            };
            let first = find(format!("exp_avg.{}", slot.name))?;
            let second = find(format!("exp_avg_sq.{}", slot.name))?;
            for (key, moment) in [("exp_avg", &first), ("exp_avg_sq", &second)] {
                if moment.shape() != slot.var.shape() {
                    candle_core::bail!(
                        "optimizer state `{key}.{}` is {:?}, the parameter {:?}",
                        slot.name,
                        moment.shape(),
                        slot.var.shape()
                    );
                }
            }
            match &mut slot.moments {
                Moments::Host {
                    first: host_first,
                    second: host_second,
                } => {
                    *host_first = first.to_dtype(DType::F32)?.flatten_all()?.to_vec1()?;
                    *host_second = second.to_dtype(DType::F32)?.flatten_all()?.to_vec1()?;
                }
                Moments::Tensors {
                    first: tensor_first,
                    second: tensor_second,
                } => {
                    *tensor_first = first.to_dtype(tensor_first.dtype())?;
                    *tensor_second = second.to_dtype(tensor_second.dtype())?;
                }
            }
        }
        self.step = step;
        Ok(())
    }
}

/// Scales gradients so their global L2 norm is at most `max_norm` (PyTorch's
/// `clip_grad_norm_`); returns the norm before clipping.
pub fn clip_grad_norm(grads: &mut GradStore, vars: &[&Var], max_norm: f64) -> Result<f64> {
    let mut total = 0.0f64;
    for var in vars {
        if let Some(grad) = grads.get(var.as_tensor()) {
            total += grad
                .to_dtype(DType::F64)?
                .sqr()?
                .sum_all()?
                .to_scalar::<f64>()?;
        }
    }
    let norm = total.sqrt();
    let coefficient = max_norm / (norm + 1e-6);
    if coefficient < 1.0 {
        for var in vars {
            if let Some(grad) = grads.remove(var.as_tensor()) {
                grads.insert(var.as_tensor(), (grad * coefficient)?);
            }
        }
    }
    Ok(norm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    #[test]
    fn two_steps_match_pytorch_adamw_written_out() {
        let device = Device::Cpu;
        let var = Var::new(&[1.0f32, -2.0, 0.5], &device).unwrap();
        let config = AdamWConfig {
            weight_decay: 0.01,
            ..AdamWConfig::default()
        };
        let mut optimizer = AdamW::new(vec![("w".into(), var.clone())], config).unwrap();
        let (mut theta, mut m, mut v) = ([1.0f64, -2.0, 0.5], [0.0f64; 3], [0.0f64; 3]);
        for step in 1..=2 {
            let loss = (var.as_tensor().sqr().unwrap() * 3.0)
                .unwrap()
                .sum_all()
                .unwrap();
            let grads = loss.backward().unwrap();
            optimizer.step(&grads, 0.1).unwrap();
            for i in 0..3 {
                let g = 6.0 * theta[i];
                m[i] = 0.9 * m[i] + 0.1 * g;
                v[i] = 0.999 * v[i] + 0.001 * g * g;
                let step_size = 0.1 / (1.0 - 0.9f64.powi(step));
                let denominator = (v[i] / (1.0 - 0.999f64.powi(step))).sqrt() + 1e-8;
                theta[i] = theta[i] * (1.0 - 0.1 * 0.01) - step_size * m[i] / denominator;
            }
        }
        let got = var.as_tensor().to_vec1::<f32>().unwrap();
        for i in 0..3 {
            assert!(
                (got[i] as f64 - theta[i]).abs() < 1e-5,
                "{got:?} vs {theta:?}"
            );
        }
        let state = optimizer.state();
        let mut restored = AdamW::new(vec![("w".into(), var.clone())], config).unwrap();
        restored.load_state(&state, optimizer.steps()).unwrap();
        assert_eq!(restored.steps(), 2);
        let restored_state = restored.state();
        for key in ["exp_avg.w", "exp_avg_sq.w"] {
            assert_eq!(
                restored_state[key].to_vec1::<f32>().unwrap(),
                state[key].to_vec1::<f32>().unwrap()
            );
        }
    }

    #[test]
    fn the_fused_update_equals_the_tensor_update_step_for_step() {
        let device = Device::Cpu;
        let shape = (37, 513);
        let start = Tensor::randn(0f32, 1.0, shape, &device).unwrap();
        let fused_var = Var::from_tensor(&start).unwrap();
        let plain_var = Var::from_tensor(&start.copy().unwrap()).unwrap();
        let config = AdamWConfig {
            weight_decay: 0.1,
            ..AdamWConfig::default()
        };
        let mut fused = AdamW::new(vec![("w".into(), fused_var.clone())], config).unwrap();
        let mut plain = AdamW::unfused(vec![("w".into(), plain_var.clone())], config).unwrap();
        for step in 0..5 {
            let target = Tensor::randn(0f32, 1.0, shape, &device).unwrap();
            let loss = |var: &Var| {
                (var.as_tensor() - &target)
                    .unwrap()
                    .sqr()
                    .unwrap()
                    .sum_all()
                    .unwrap()
            };
            fused
                .step(&loss(&fused_var).backward().unwrap(), 1e-2)
                .unwrap();
            plain
                .step(&loss(&plain_var).backward().unwrap(), 1e-2)
                .unwrap();
            let difference = (fused_var.as_tensor() - plain_var.as_tensor())
                .unwrap()
                .abs()
                .unwrap()
                .max_all()
                .unwrap()
                .to_scalar::<f32>()
                .unwrap();
            assert!(
                difference <= 1e-6,
                "step {step}: parameters differ by {difference}"
            );
        }
        let (fused_state, plain_state) = (fused.state(), plain.state());
        for key in ["exp_avg.w", "exp_avg_sq.w"] {
            let difference = (&fused_state[key] - &plain_state[key])
                .unwrap()
                .abs()
                .unwrap()
                .max_all()
                .unwrap()
                .to_scalar::<f32>()
                .unwrap();
            assert!(difference <= 1e-6, "{key} differs by {difference}");
        }
    }

    #[test]
    fn clipping_scales_to_the_max_norm_and_reports_the_norm_before() {
        let device = Device::Cpu;
        let a = Var::new(&[3.0f32], &device).unwrap();
        let b = Var::new(&[4.0f32], &device).unwrap();
        let loss = ((a.as_tensor() * 3.0).unwrap() + (b.as_tensor() * 4.0).unwrap())
            .unwrap()
            .sum_all()
            .unwrap();
        let mut grads = loss.backward().unwrap();
        let norm = clip_grad_norm(&mut grads, &[&a, &b], 1.0).unwrap();
        assert!((norm - 5.0).abs() < 1e-6);
        let ga = grads.get(a.as_tensor()).unwrap().to_vec1::<f32>().unwrap()[0];
        assert!((ga - 0.6).abs() < 1e-5, "{ga}");
    }
}
