//! The key/value cache of one sequence: per layer, either tensors `[kv_heads, len, head_dim]`
//! in a buffer that grows by doubling, written in place (any device), or host vectors for the
//! decoding kernel (CPU, f32). A cache takes the kind of its first append.

use super::kernels::HostKv;
use candle_core::{Result, Tensor};

/// Tokens of room a host cache reserves at its first append.
const HOST_RESERVE: usize = 256;

/// Keys and values of one layer, of the kind the first append chose.
#[derive(Clone, Debug, Default)]
enum LayerKv {
    /// Nothing appended yet.
    #[default]
    Empty,
    /// Tensors on the model's device.
    Tensors(TensorKv),
    /// Host vectors for the decoding kernel.
    Host(HostKv),
}

impl LayerKv {
    fn len(&self) -> usize {
        match self {
            Self::Empty => 0,
            Self::Tensors(cache) => cache.len,
            Self::Host(cache) => cache.len(),
        }
    }
}

/// Keys and values of one layer as tensors.
#[derive(Clone, Debug, Default)]
struct TensorKv {
    keys: Option<Tensor>,
    values: Option<Tensor>,
    len: usize,
}

impl TensorKv {
    fn capacity(&self) -> usize {
        self.keys
            .as_ref()
            .map_or(0, |keys| keys.dim(1).unwrap_or(0))
    }

    /// Appends `[kv_heads, n, head_dim]` keys and values; returns views of everything cached.
    fn append(&mut self, keys: &Tensor, values: &Tensor, limit: usize) -> Result<(Tensor, Tensor)> {
        let added = keys.dim(1)?;
        let needed = self.len + added;
        if needed > self.capacity() {
            let capacity = needed.next_power_of_two().max(64).min(limit.max(needed));
            self.keys = Some(grow(self.keys.as_ref(), keys, self.len, capacity)?);
            self.values = Some(grow(self.values.as_ref(), values, self.len, capacity)?);
        }
        let (Some(all_keys), Some(all_values)) = (&self.keys, &self.values) else {
            candle_core::bail!("key/value cache buffer missing after growth");
        };
        all_keys.slice_set(&keys.contiguous()?, 1, self.len)?;
        all_values.slice_set(&values.contiguous()?, 1, self.len)?;
        self.len = needed;
        Ok((
            all_keys.narrow(1, 0, needed)?,
            all_values.narrow(1, 0, needed)?,
        ))
    }

    fn deep_copy(&self) -> Result<Self> {
        let copy = |tensor: &Option<Tensor>| tensor.as_ref().map(Tensor::copy).transpose();
        Ok(Self {
            keys: copy(&self.keys)?,
            values: copy(&self.values)?,
            len: self.len,
        })
    }
}

/// A new zeroed buffer of `capacity` rows holding the first `len` rows of `old`.
fn grow(old: Option<&Tensor>, like: &Tensor, len: usize, capacity: usize) -> Result<Tensor> {
    let (heads, _, width) = like.dims3()?;
    let buffer = Tensor::zeros((heads, capacity, width), like.dtype(), like.device())?;
    if let Some(old) = old
        && len > 0
    {
        buffer.slice_set(&old.narrow(1, 0, len)?.contiguous()?, 1, 0)?;
    }
    Ok(buffer)
}

/// The cache of one sequence across all layers.
#[derive(Clone, Debug)]
pub struct SequenceKv {
    layers: Vec<LayerKv>,
    limit: usize,
}

impl SequenceKv {
    /// An empty cache for `layers` layers and a context of `limit` tokens.
    pub fn new(layers: usize, limit: usize) -> Self {
        Self {
            layers: vec![LayerKv::default(); layers],
            limit,
        }
    }

    /// Tokens cached so far.
    pub fn len(&self) -> usize {
        self.layers.first().map_or(0, LayerKv::len)
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends to layer `layer`; returns that layer's full keys and values.
    pub fn append(
        &mut self,
        layer: usize,
        keys: &Tensor,
        values: &Tensor,
    ) -> Result<(Tensor, Tensor)> {
        let limit = self.limit;
        let Some(cache) = self.layers.get_mut(layer) else {
            candle_core::bail!("no cache for layer {layer}");
        };
        if let LayerKv::Empty = cache {
            *cache = LayerKv::Tensors(TensorKv::default());
        }
        match cache {
            LayerKv::Tensors(cache) => cache.append(keys, values, limit),
            _ => candle_core::bail!("layer {layer}'s cache holds host vectors, not tensors"),
        }
    }

    /// Layer `layer`'s host cache for rows of `width` values (created at the first call).
    pub(crate) fn host_layer(&mut self, layer: usize, width: usize) -> Result<&mut HostKv> {
        let reserve = HOST_RESERVE.min(self.limit);
        let Some(cache) = self.layers.get_mut(layer) else {
            candle_core::bail!("no cache for layer {layer}");
        };
        if let LayerKv::Empty = cache {
            *cache = LayerKv::Host(HostKv::with_capacity(reserve, width));
        }
        match cache {
            LayerKv::Host(cache) => Ok(cache),
            _ => candle_core::bail!("layer {layer}'s cache holds tensors, not host vectors"),
        }
    }

    /// An independent copy (a fork of the sequence shares nothing with its parent).
    pub fn deep_copy(&self) -> Result<Self> {
        let layers = self
            .layers
            .iter()
            .map(|layer| {
                Ok(match layer {
                    LayerKv::Tensors(cache) => LayerKv::Tensors(cache.deep_copy()?),
                    other => other.clone(),
                })
            })
            .collect::<Result<_>>()?;
        Ok(Self {
            layers,
            limit: self.limit,
        })
    }
}
