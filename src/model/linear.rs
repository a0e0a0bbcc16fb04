//! Linear layers with an optional low-rank adapter (LoRA):
//! `y = x·Wᵀ + b + scale·(x·Aᵀ)·Bᵀ`, `A [rank, in]`, `B [out, rank]`.
//!
//! Without an adapter a layer computes exactly what `candle_nn::Linear` computes. Code that
//! runs a projection must go through `forward` (or check `adapter()`), never multiply by
//! `weight()` alone, or an attached adapter is silently ignored.

use candle_core::{Module, Result, Tensor};

/// A low-rank update `scale·B·A` to a linear layer's weight.
#[derive(Clone, Debug)]
pub struct LowRankAdapter {
    down: candle_nn::Linear,
    up: candle_nn::Linear,
    scale: f64,
}

impl LowRankAdapter {
    /// An adapter from `a [rank, in]` and `b [out, rank]`, scaled by `scale` (LoRA's
    /// `alpha / rank`).
    pub fn new(a: Tensor, b: Tensor, scale: f64) -> Result<Self> {
        let (rank, _) = a.dims2()?;
        let (_, b_rank) = b.dims2()?;
        if rank != b_rank {
            return Err(candle_core::Error::Msg(format!(
                "LoRA A has rank {rank} but B has {b_rank} columns"
            )));
        }
        Ok(Self {
            down: candle_nn::Linear::new(a, None),
            up: candle_nn::Linear::new(b, None),
            scale,
        })
    }

    /// `A`, `[rank, in]`.
    pub fn a(&self) -> &Tensor {
        self.down.weight()
    }

    /// `B`, `[out, rank]`.
    pub fn b(&self) -> &Tensor {
        self.up.weight()
    }

    /// The factor applied to `B·A`.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The weight update `scale·B·A`, `[out, in]`.
    pub fn delta(&self) -> Result<Tensor> {
        self.b().matmul(self.a())? * self.scale
    }

    /// `scale·(x·Aᵀ)·Bᵀ`.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        self.up.forward(&(self.down.forward(x)? * self.scale)?)
    }

    /// A copy detached from the autograd graph (sharing storage).
    pub fn detached(&self) -> Self {
        Self {
            down: candle_nn::Linear::new(self.a().detach(), None),
            up: candle_nn::Linear::new(self.b().detach(), None),
            scale: self.scale,
        }
    }
}

/// A linear layer `x·Wᵀ + b`, weight `[out, in]`, with an optional low-rank adapter.
#[derive(Clone, Debug)]
pub struct Linear {
    base: candle_nn::Linear,
    adapter: Option<LowRankAdapter>,
}

impl Linear {
    /// A layer without adapter.
    pub fn new(weight: Tensor, bias: Option<Tensor>) -> Self {
        Self {
            base: candle_nn::Linear::new(weight, bias),
            adapter: None,
        }
    }

    /// The base weight `[out, in]` (without the adapter's update).
    pub fn weight(&self) -> &Tensor {
        self.base.weight()
    }

    /// The bias, when the layer has one.
    pub fn bias(&self) -> Option<&Tensor> {
        self.base.bias()
    }

    /// The attached adapter.
    pub fn adapter(&self) -> Option<&LowRankAdapter> {
        self.adapter.as_ref()
    }

    /// The same base layer with `adapter` attached (or none).
    pub fn with_adapter(&self, adapter: Option<LowRankAdapter>) -> Self {
        Self {
            base: self.base.clone(),
            adapter,
        }
    }

    /// A copy detached from the autograd graph (sharing storage), adapter included.
    pub fn detached(&self) -> Self {
        Self {
            base: candle_nn::Linear::new(self.weight().detach(), self.bias().map(Tensor::detach)),
            adapter: self.adapter.as_ref().map(LowRankAdapter::detached),
        }
    }
}

impl Module for Linear {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let base = self.base.forward(x)?;
        match &self.adapter {
            Some(adapter) => base + adapter.forward(x)?,
            None => Ok(base),
        }
    }
}
