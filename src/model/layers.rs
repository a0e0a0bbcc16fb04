//! The building blocks shared by the training and inference paths: linear layers with
//! Hugging Face initialisation, RMSNorm, the SwiGLU MLP and rotary-embedding tables.
//!
//! Every block has a differentiable forward (`forward`), which takes the hand-written kernel
//! where `Kernels` enables it and the plain candle ops otherwise, and an inference forward
//! (`forward_fast`) on packed rows.

use super::config::ModelConfig;
use super::kernels::{self, Kernels, MAX_FEW_ROWS, on_host, on_host_f32, reshaped};
use super::linear::Linear;
use candle_core::{D, DType, Device, Module, Result, Tensor};
use candle_nn::{Init, VarBuilder};

/// The standard deviation of freshly initialised weights (transformers' `initializer_range`).
pub const INIT_STD: f64 = 0.02;

/// A linear layer whose weight is `[out, in]` under `weight` (and `bias` when asked).
pub fn linear(in_dim: usize, out_dim: usize, bias: bool, vb: VarBuilder<'_>) -> Result<Linear> {
    let init = Init::Randn {
        mean: 0.0,
        stdev: INIT_STD,
    };
    let weight = vb.get_with_hints((out_dim, in_dim), "weight", init)?;
    let bias = if bias {
        Some(vb.get_with_hints(out_dim, "bias", Init::Const(0.0))?)
    } else {
        None
    };
    Ok(Linear::new(weight, bias))
}

/// Differentiable forward of a linear layer on `x [.., in]`. With `flat_linears` the product
/// runs on rows `[N, in]` (the leading dimensions flattened when there are any), through the
/// linear kernel on the CPU (an adapter's two products too).
pub fn project(layer: &Linear, x: &Tensor, kernels: &Kernels) -> Result<Tensor> {
    if !kernels.flat_linears || (layer.adapter().is_some() && !on_host(x)) {
        return layer.forward(x);
    }
    let mut dims = x.dims().to_vec();
    let width = dims.pop().unwrap_or(1);
    let rows: usize = dims.iter().product();
    let flat = reshaped(x, &[rows, width])?;
    let out = if on_host(&flat) {
        host_linear(layer, &flat, kernels)?
    } else {
        let product = flat.matmul(&layer.weight().t()?)?;
        match layer.bias() {
            Some(bias) => product.broadcast_add(bias)?,
            None => product,
        }
    };
    dims.push(out.dim(1)?);
    reshaped(&out, &dims)
}

/// A linear layer on host rows `x [N, in]` through the linear kernel on the kernels'
/// instruction set: `x·Wᵀ + b`, plus `scale·(x·Aᵀ)·Bᵀ` under an adapter.
fn host_linear(layer: &Linear, x: &Tensor, kernels: &Kernels) -> Result<Tensor> {
    let product = kernels::linear_rows(x, layer.weight(), kernels.isa)?;
    let product = match layer.bias() {
        Some(bias) => product.broadcast_add(bias)?,
        None => product,
    };
    match layer.adapter() {
        Some(adapter) => {
            let down = (kernels::linear_rows(x, adapter.a(), kernels.isa)? * adapter.scale())?;
            product + kernels::linear_rows(&down, adapter.b(), kernels.isa)?
        }
        None => Ok(product),
    }
}

/// Inference forward of a linear layer on `x [rows, in]`. With the `decode` kernels (a
/// decoding step: one row per sequence) and f32 rows on the CPU it runs the few-rows kernel,
/// which streams each weight row once and computes every row the same way whatever the other
/// rows are, so a sequence samples the same tokens in any batch; other rows on the CPU take
/// the linear kernel (`flat_linears`). On other devices, for 2 to 16 rows it computes
/// `(W·xᵀ)ᵀ`, which gemm runs about 1.8× faster than `x·Wᵀ` because the weight is streamed
/// instead of packed.
pub fn forward_rows(layer: &Linear, x: &Tensor, kernels: &Kernels) -> Result<Tensor> {
    let rows = x.dim(0)?;
    let plain = layer.adapter().is_none();
    if plain && kernels.decode && kernels.few_rows && x.rank() == 2 && on_host_f32(x) {
        return kernels::few_rows_linear(x, layer.weight(), layer.bias(), kernels.isa);
    }
    if kernels.flat_linears && x.rank() == 2 && on_host(x) {
        return host_linear(layer, x, kernels);
    }
    if !plain || x.rank() != 2 || !(2..=MAX_FEW_ROWS).contains(&rows) || on_host(x) {
        return layer.forward(x);
    }
    let product = layer.weight().matmul(&x.t()?)?.t()?.contiguous()?;
    match layer.bias() {
        Some(bias) => product.broadcast_add(bias),
        None => Ok(product),
    }
}

/// The same layer with its tensors detached from the autograd graph (sharing storage).
pub fn detach_linear(layer: &Linear) -> Linear {
    layer.detached()
}

/// The dtype softmax and normalisation statistics are computed in: at least f32.
pub fn accumulation_dtype(dtype: DType) -> DType {
    match dtype {
        DType::F16 | DType::BF16 => DType::F32,
        other => other,
    }
}

/// Root-mean-square normalisation with a learned scale, as Qwen and Llama use it.
#[derive(Clone, Debug)]
pub struct RmsNorm {
    weight: Tensor,
    eps: f64,
}

impl RmsNorm {
    /// A norm over the last dimension of width `size`, weight under `weight`.
    pub fn new(size: usize, eps: f64, vb: VarBuilder<'_>) -> Result<Self> {
        let weight = vb.get_with_hints(size, "weight", Init::Const(1.0))?;
        Ok(Self { weight, eps })
    }

    /// Differentiable: `x / sqrt(mean(x²) + eps) * weight`, statistics in at least f32.
    pub fn forward(&self, x: &Tensor, kernels: &Kernels) -> Result<Tensor> {
        if kernels.norm && on_host(x) {
            return kernels::rms_norm(x, &self.weight, self.eps, kernels.isa);
        }
        let dtype = x.dtype();
        let wide = x.to_dtype(accumulation_dtype(dtype))?;
        let mean_square = wide.sqr()?.mean_keepdim(D::Minus1)?;
        let normed = wide.broadcast_div(&(mean_square + self.eps)?.sqrt()?)?;
        normed.to_dtype(dtype)?.broadcast_mul(&self.weight)
    }

    /// The same through candle's fused kernel (no gradient).
    pub fn forward_fast(&self, x: &Tensor) -> Result<Tensor> {
        candle_nn::ops::rms_norm(&x.contiguous()?, &self.weight, self.eps as f32)
    }

    /// A copy detached from the autograd graph.
    pub fn detached(&self) -> Self {
        Self {
            weight: self.weight.detach(),
            eps: self.eps,
        }
    }
}

/// The SwiGLU MLP: `down(silu(gate(x)) * up(x))`.
#[derive(Clone, Debug)]
pub struct Mlp {
    gate_proj: Linear,
    up_proj: Linear,
    down_proj: Linear,
}

impl Mlp {
    /// The MLP of one decoder layer.
    pub fn new(config: &ModelConfig, vb: VarBuilder<'_>) -> Result<Self> {
        let (hidden, inner) = (config.hidden_size, config.intermediate_size);
        Ok(Self {
            gate_proj: linear(hidden, inner, false, vb.pp("gate_proj"))?,
            up_proj: linear(hidden, inner, false, vb.pp("up_proj"))?,
            down_proj: linear(inner, hidden, false, vb.pp("down_proj"))?,
        })
    }

    /// Differentiable forward.
    pub fn forward(&self, x: &Tensor, kernels: &Kernels) -> Result<Tensor> {
        if kernels.mlp && self.plain_gate_and_up() && on_host(x) {
            let (gate, up) = (self.gate_proj.weight(), self.up_proj.weight());
            let gated = kernels::gated_projection(x, gate, up, kernels.isa)?;
            return project(&self.down_proj, &gated, kernels);
        }
        let gate = project(&self.gate_proj, x, kernels)?;
        let up = project(&self.up_proj, x, kernels)?;
        let gated = if kernels.swiglu && on_host(&gate) {
            kernels::swiglu(&gate, &up, kernels.isa)?
        } else {
            (gate.silu()? * up)?
        };
        project(&self.down_proj, &gated, kernels)
    }

    /// Whether the gate and up projections are bare weights (no bias, no adapter), which the
    /// fused gated-projection kernels take.
    fn plain_gate_and_up(&self) -> bool {
        [&self.gate_proj, &self.up_proj]
            .iter()
            .all(|layer| layer.bias().is_none() && layer.adapter().is_none())
    }

    /// Inference forward on packed rows `[rows, hidden]` (see `forward_rows`).
    pub fn forward_fast(&self, x: &Tensor, kernels: &Kernels) -> Result<Tensor> {
        let host_rows = x.rank() == 2 && on_host_f32(x);
        let gated = if kernels.decode && kernels.few_rows && host_rows && self.plain_gate_and_up() {
            let (gate, up) = (self.gate_proj.weight(), self.up_proj.weight());
            kernels::few_rows_swiglu(x, gate, up, kernels.isa)?
        } else {
            let gate = forward_rows(&self.gate_proj, x, kernels)?;
            (gate.silu()? * forward_rows(&self.up_proj, x, kernels)?)?
        };
        forward_rows(&self.down_proj, &gated, kernels)
    }

    /// A copy detached from the autograd graph.
    pub fn detached(&self) -> Self {
        Self {
            gate_proj: detach_linear(&self.gate_proj),
            up_proj: detach_linear(&self.up_proj),
            down_proj: detach_linear(&self.down_proj),
        }
    }

    /// A copy whose projections are `map(name, layer)`, named `{prefix}.gate_proj` etc.
    pub fn map_projections(
        &self,
        prefix: &str,
        map: &mut dyn FnMut(&str, &Linear) -> Result<Linear>,
    ) -> Result<Self> {
        Ok(Self {
            gate_proj: map(&format!("{prefix}.gate_proj"), &self.gate_proj)?,
            up_proj: map(&format!("{prefix}.up_proj"), &self.up_proj)?,
            down_proj: map(&format!("{prefix}.down_proj"), &self.down_proj)?,
        })
    }
}

/// Rotary-embedding tables for every position of the context, computed the way
/// transformers does (inverse frequencies and angles in f32, f64 for f64 models).
#[derive(Clone, Debug)]
pub struct Rotary {
    /// `cos` of each angle, `[positions, head_dim / 2]`.
    cos_half: Tensor,
    /// `sin` of each angle, `[positions, head_dim / 2]`.
    sin_half: Tensor,
    /// `cos` duplicated to the full head width, `[positions, head_dim]`.
    cos: Tensor,
    /// `sin` duplicated to the full head width, `[positions, head_dim]`.
    sin: Tensor,
}

impl Rotary {
    /// Tables for `config`'s head width, context and RoPE base.
    pub fn new(config: &ModelConfig, dtype: DType, device: &Device) -> Result<Self> {
        let half = config.head_dim / 2;
        let positions = config.max_position_embeddings;
        let (cos_half, sin_half) = if dtype == DType::F64 {
            let (cos, sin) = angles_f64(config.rope_theta, config.head_dim, positions);
            (
                Tensor::from_vec(cos, (positions, half), device)?,
                Tensor::from_vec(sin, (positions, half), device)?,
            )
        } else {
            let (cos, sin) = angles_f32(config.rope_theta, config.head_dim, positions);
            (
                Tensor::from_vec(cos, (positions, half), device)?.to_dtype(dtype)?,
                Tensor::from_vec(sin, (positions, half), device)?.to_dtype(dtype)?,
            )
        };
        let cos = Tensor::cat(&[&cos_half, &cos_half], 1)?;
        let sin = Tensor::cat(&[&sin_half, &sin_half], 1)?;
        Ok(Self {
            cos_half,
            sin_half,
            cos,
            sin,
        })
    }

    /// Full-width `(cos, sin)` rows for the given positions (any shape of u32 ids), shaped
    /// `positions.dims() ++ [head_dim]`.
    pub fn full_width(&self, positions: &Tensor) -> Result<(Tensor, Tensor)> {
        let flat = positions.flatten_all()?;
        let mut dims = positions.dims().to_vec();
        dims.push(self.cos.dim(1)?);
        Ok((
            self.cos.index_select(&flat, 0)?.reshape(dims.as_slice())?,
            self.sin.index_select(&flat, 0)?.reshape(dims.as_slice())?,
        ))
    }

    /// Half-width `(cos, sin)` rows `[n, head_dim / 2]` for the fused kernel.
    pub fn half_width(&self, positions: &Tensor) -> Result<(Tensor, Tensor)> {
        Ok((
            self.cos_half.index_select(positions, 0)?,
            self.sin_half.index_select(positions, 0)?,
        ))
    }
}

fn angles_f32(theta: f64, head_dim: usize, positions: usize) -> (Vec<f32>, Vec<f32>) {
    let base = theta as f32;
    let inverse: Vec<f32> = (0..head_dim / 2)
        .map(|i| 1.0 / base.powf((2 * i) as f32 / head_dim as f32))
        .collect();
    let angles = (0..positions).flat_map(|p| inverse.iter().map(move |f| p as f32 * f));
    angles.map(|a| (a.cos(), a.sin())).unzip()
}

fn angles_f64(theta: f64, head_dim: usize, positions: usize) -> (Vec<f64>, Vec<f64>) {
    let inverse: Vec<f64> = (0..head_dim / 2)
        .map(|i| 1.0 / theta.powf((2 * i) as f64 / head_dim as f64))
        .collect();
    let angles = (0..positions).flat_map(|p| inverse.iter().map(move |f| p as f64 * f));
    angles.map(|a| (a.cos(), a.sin())).unzip()
}

/// Differentiable rotary embedding on `x [.., T, d]` with full-width `cos`/`sin` that
/// broadcast against it: `x·cos + rotate_half(x)·sin`.
pub fn apply_rotary(x: &Tensor, cos: &Tensor, sin: &Tensor) -> Result<Tensor> {
    let half = x.dim(D::Minus1)? / 2;
    let first = x.narrow(D::Minus1, 0, half)?;
    let second = x.narrow(D::Minus1, half, half)?;
    let rotated = Tensor::cat(&[&second.neg()?, &first], D::Minus1)?;
    x.broadcast_mul(cos)? + rotated.broadcast_mul(sin)?
}
