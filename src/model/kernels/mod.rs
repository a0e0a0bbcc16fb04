//! Hand-written CPU kernels for the model's hot spots, each a drop-in for a chain of plain
//! candle ops: RMSNorm, rotary causal attention, SwiGLU, log-softmax + gather and entropy
//! (candle custom ops with hand-written backward), a small-batch matmul and a host KV cache
//! for decoding.
//!
//! Every kernel runs only on the CPU for f32 (and f64, so the float64 gradient check covers
//! them); on other devices and dtypes the model takes the plain candle ops, which are also the
//! reference every kernel is tested against. `Kernels` says which fused kernels a model uses;
//! `Isa` which instruction set the hand-written loops and the matrix products run on (the
//! best this CPU and build have: AVX-512, else AVX2 with FMA, else portable code; or the one
//! `ROLLSCOPE_ISA` names, so one machine reproduces another's run).
//!
//! Every kernel is a fixed function of its inputs, whatever the thread count or timing: work
//! is split into tasks whose size follows from the shapes, and partial sums are combined in
//! task order (never by a rayon `reduce`, whose tree follows work stealing). That is what
//! makes training bitwise reproducible; `determinism` tests it on pools of 1 to 4 threads.

mod attention;
#[cfg(target_arch = "x86_64")]
mod avx2;
mod decode_attention;
#[cfg(test)]
mod determinism;
mod float;
mod gemm;
mod gemm_isa;
mod isa;
mod linear;
mod log_probs;
mod mlp;
mod norm;
mod simd;
mod small_matmul;
mod swiglu;
#[cfg(target_arch = "x86_64")]
mod tile;

pub use attention::{AttentionGeometry, RotaryTables, rotary_attention};
pub use decode_attention::{DecodeRows, HostKv, PackedSequence, attend_packed};
pub use isa::{ISA_ENV, Isa, IsaError};
pub use linear::linear_rows;
pub use log_probs::{fused_entropy, fused_token_log_probs};
pub use mlp::gated_projection;
pub use norm::rms_norm;
pub use small_matmul::{MAX_FEW_ROWS, few_rows_linear, few_rows_swiglu};
pub use swiglu::swiglu;

use candle_core::{CpuStorage, DType, Device, Layout, Result, Storage, Tensor};
use rayon::prelude::*;

/// Which fused kernels a model uses; each off means the plain candle ops for that block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kernels {
    /// The residual stream as rows `[B·T, hidden]` and linear layers as one op on them, so a
    /// weight's gradient is one product in its own layout (candle's batched, transposed form
    /// sums per-sequence products and adds the gradient through a transpose).
    pub flat_linears: bool,
    /// RMSNorm forward and backward, one pass each.
    pub norm: bool,
    /// Rotary embedding, causal softmax attention and its backward, per (sequence, KV head).
    pub attention: bool,
    /// `silu(gate)·up` and its backward (the MLP's path when `mlp` is off).
    pub swiglu: bool,
    /// The MLP's gate and up projections with SwiGLU as one op and one backward.
    pub mlp: bool,
    /// Log-softmax + gather and entropy, forward and backward.
    pub log_probs: bool,
    /// Decoding through the host KV cache and the small-batch matmul.
    pub decode: bool,
    /// Whether a decoding forward may take the small-batch matmul: on for steps of one token
    /// per sequence, off for forwards that extend sequences by more (a packed forward sets
    /// it), so each row is computed the same way whatever shares its batch.
    pub few_rows: bool,
    /// A batch whose sequences start alike computes each shared prefix once: every layer
    /// but attention runs on one row per distinct prefix (`SharedRows`).
    pub shared_prefix: bool,
    /// The instruction set of the hand-written loops.
    pub isa: Isa,
}

impl Default for Kernels {
    fn default() -> Self {
        Self::fused()
    }
}

impl Kernels {
    /// Every fused kernel, on the best instruction set of this CPU.
    pub fn fused() -> Self {
        Self {
            flat_linears: true,
            norm: true,
            attention: true,
            swiglu: true,
            mlp: true,
            log_probs: true,
            decode: true,
            few_rows: true,
            shared_prefix: true,
            isa: Isa::chosen(),
        }
    }

    /// Only plain candle ops: the reference the fused kernels are tested against.
    pub fn reference() -> Self {
        Self {
            flat_linears: false,
            norm: false,
            attention: false,
            swiglu: false,
            mlp: false,
            log_probs: false,
            decode: false,
            few_rows: false,
            shared_prefix: false,
            isa: Isa::chosen(),
        }
    }

    /// Names of the switches, as `without` accepts them.
    pub const NAMES: [&'static str; 8] = [
        "flat_linears",
        "norm",
        "attention",
        "swiglu",
        "mlp",
        "log_probs",
        "decode",
        "shared_prefix",
    ];

    /// The same set with the named kernel switched off; `None` for an unknown name.
    pub fn without(mut self, name: &str) -> Option<Self> {
        let switch = match name {
            "flat_linears" => &mut self.flat_linears,
            "norm" => &mut self.norm,
            "attention" => &mut self.attention,
            "swiglu" => &mut self.swiglu,
            "mlp" => &mut self.mlp,
            "log_probs" => &mut self.log_probs,
            "decode" => &mut self.decode,
            "shared_prefix" => &mut self.shared_prefix,
            _ => return None,
        };
        *switch = false;
        Some(self)
    }
}

/// `tensor` with the given dimensions; itself (no graph node, so no extra gradient
/// accumulation in the backward) when it already has them.
pub fn reshaped(tensor: &Tensor, dims: &[usize]) -> Result<Tensor> {
    if tensor.dims() == dims {
        Ok(tensor.clone())
    } else {
        tensor.reshape(dims)
    }
}

/// Whether the hand-written kernels can run on `tensor`: CPU, f32 or f64.
pub fn on_host(tensor: &Tensor) -> bool {
    matches!(tensor.device(), Device::Cpu) && matches!(tensor.dtype(), DType::F32 | DType::F64)
}

/// Whether the f32-only kernels (decoding) can run on `tensor`.
pub fn on_host_f32(tensor: &Tensor) -> bool {
    matches!(tensor.device(), Device::Cpu) && tensor.dtype() == DType::F32
}

/// The elements of a contiguous CPU tensor.
pub fn host_slice<T: candle_core::WithDType>(tensor: &Tensor) -> Result<Vec<T>> {
    let contiguous = tensor.contiguous()?;
    let (storage, layout) = contiguous.storage_and_layout();
    match &*storage {
        Storage::Cpu(cpu) => Ok(contiguous_part::<T>(cpu, layout)?.to_vec()),
        _ => candle_core::bail!("a host kernel was given a tensor that is not on the CPU"),
    }
}

/// Runs `work` on the elements of a CPU tensor without copying when it is contiguous.
pub fn with_host_slice<T: candle_core::WithDType, R>(
    tensor: &Tensor,
    work: impl FnOnce(&[T]) -> Result<R>,
) -> Result<R> {
    let contiguous = tensor.contiguous()?;
    let (storage, layout) = contiguous.storage_and_layout();
    match &*storage {
        Storage::Cpu(cpu) => work(contiguous_part::<T>(cpu, layout)?),
        _ => candle_core::bail!("a host kernel was given a tensor that is not on the CPU"),
    }
}

/// The elements of a contiguous CPU tensor's storage, borrowed from its read guard
/// (`tensor.storage_and_layout()`), without copying.
pub fn host_view<'a, T: candle_core::WithDType>(
    storage: &'a Storage,
    layout: &Layout,
) -> Result<&'a [T]> {
    match storage {
        Storage::Cpu(cpu) => contiguous_part::<T>(cpu, layout),
        _ => candle_core::bail!("a host kernel was given a tensor that is not on the CPU"),
    }
}

/// The elements a contiguous layout covers in a CPU storage.
fn contiguous_part<'a, T: candle_core::WithDType>(
    storage: &'a CpuStorage,
    layout: &Layout,
) -> Result<&'a [T]> {
    let Some((start, end)) = layout.contiguous_offsets() else {
        candle_core::bail!("a host kernel needs a contiguous tensor");
    };
    Ok(&T::cpu_storage_as_slice(storage)?[start..end])
}

/// `len` zeros, written by the thread pool a chunk per task: a large buffer zeroed on one
/// thread is a pass over memory that the other threads wait for.
fn parallel_zeros<F: float::KernelFloat>(len: usize) -> Vec<F> {
    let mut out = Vec::with_capacity(len);
    out.spare_capacity_mut()
        .par_chunks_mut(16_384)
        .for_each(|chunk| chunk.fill(std::mem::MaybeUninit::new(F::zero())));
    // SAFETY: the loop above wrote every element of the `len` reserved ones.
    unsafe { out.set_len(len) };
    out
}

/// Rows per parallel task for rows of `width` elements: about 16K elements each, so small
/// inputs (decoding) stay on the calling thread.
fn rows_per_task(width: usize) -> usize {
    (16_384 / width.max(1)).max(1)
}

/// Row-major rows of a layout whose last dimension is contiguous: the offset of each row.
fn row_offsets(layout: &Layout) -> Result<Vec<usize>> {
    let dims = layout.dims();
    let strides = layout.stride();
    let Some((&width, leading)) = dims.split_last() else {
        candle_core::bail!("a row kernel needs at least one dimension");
    };
    if width > 1 && strides[dims.len() - 1] != 1 {
        candle_core::bail!("a row kernel needs its last dimension contiguous");
    }
    let mut offsets = vec![layout.start_offset()];
    for (&size, &stride) in leading.iter().zip(strides) {
        offsets = offsets
            .iter()
            .flat_map(|offset| (0..size).map(move |index| offset + index * stride))
            .collect();
    }
    Ok(offsets)
}
