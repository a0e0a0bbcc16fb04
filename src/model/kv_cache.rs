//! The key/value cache of one sequence: per layer, keys and values `[kv_heads, len, head_dim]`
//! in a buffer that grows by doubling, written in place.

use candle_core::{Result, Tensor};

/// Keys and values of one layer.
#[derive(Clone, Debug, Default)]
struct LayerKv {
    keys: Option<Tensor>,
    values: Option<Tensor>,
    len: usize,
}

impl LayerKv {
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
        self.layers.first().map_or(0, |layer| layer.len)
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
        match self.layers.get_mut(layer) {
            Some(cache) => cache.append(keys, values, limit),
            None => candle_core::bail!("no cache for layer {layer}"),
        }
    }

    /// An independent copy (a fork of the sequence shares nothing with its parent).
    pub fn deep_copy(&self) -> Result<Self> {
        Ok(Self {
            layers: self
                .layers
                .iter()
                .map(LayerKv::deep_copy)
                .collect::<Result<_>>()?,
            limit: self.limit,
        })
    }
}
