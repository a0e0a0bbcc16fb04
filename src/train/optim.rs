//! AdamW with state that can be saved and restored (checkpoints), and gradient clipping by
//! global norm, both as PyTorch computes them.

use candle_core::backprop::GradStore;
use candle_core::{DType, Result, Tensor, Var};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// AdamW hyper-parameters (the learning rate comes per step from the schedule).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AdamWConfig {
    /// First-moment decay.
    pub beta1: f64,
    /// Second-moment decay.
    pub beta2: f64,
    /// Added to the denominator.
    pub eps: f64,
    /// Decoupled weight decay.
    pub weight_decay: f64,
}

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

struct Slot {
    name: String,
    var: Var,
    first: Tensor,
    second: Tensor,
}

/// AdamW over named parameters.
pub struct AdamW {
    config: AdamWConfig,
    step: u64,
    slots: Vec<Slot>,
}

impl AdamW {
    /// An optimizer with zero moments for each named parameter.
    pub fn new(params: Vec<(String, Var)>, config: AdamWConfig) -> Result<Self> {
        let slots = params
            .into_iter()
            .map(|(name, var)| {
                let first = var.zeros_like()?;
                let second = var.zeros_like()?;
                Ok(Slot {
                    name,
                    var,
                    first,
                    second,
                })
            })
            .collect::<Result<_>>()?;
        Ok(Self {
            config,
            step: 0,
            slots,
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
        for slot in &mut self.slots {
            let Some(grad) = grads.get(slot.var.as_tensor()) else {
                continue;
            };
            let grad = grad.to_dtype(slot.first.dtype())?;
            slot.first = ((&slot.first * beta1)? + (&grad * (1.0 - beta1))?)?;
            slot.second = ((&slot.second * beta2)? + (grad.sqr()? * (1.0 - beta2))?)?;
            let denominator = ((&slot.second / correction2)?.sqrt()? + eps)?;
            let update = ((&slot.first / correction1)? / denominator)?;
            let theta = (slot.var.as_tensor() * (1.0 - lr * weight_decay))?;
            slot.var.set(&(theta - (update * lr)?)?)?;
        }
        Ok(())
    }

    /// The moments as named tensors (`exp_avg.<name>`, `exp_avg_sq.<name>`), for checkpoints.
    pub fn state(&self) -> HashMap<String, Tensor> {
        let mut state = HashMap::new();
        for slot in &self.slots {
            state.insert(format!("exp_avg.{}", slot.name), slot.first.clone());
            state.insert(format!("exp_avg_sq.{}", slot.name), slot.second.clone());
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
            slot.first = find(format!("exp_avg.{}", slot.name))?.to_dtype(slot.first.dtype())?;
            slot.second =
                find(format!("exp_avg_sq.{}", slot.name))?.to_dtype(slot.second.dtype())?;
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
