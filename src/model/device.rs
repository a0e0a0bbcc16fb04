//! Choosing where tensors live: `cpu`, or `cuda` when the crate was built with the `cuda`
//! feature.

use super::error::{ModelError, Result};
use candle_core::{DType, Device};
use std::str::FromStr;

/// A device named on the command line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeviceChoice {
    /// The CPU.
    #[default]
    Cpu,
    /// CUDA GPU `n`.
    Cuda(usize),
}

impl FromStr for DeviceChoice {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<Self, Self::Err> {
        match text {
            "cpu" => Ok(Self::Cpu),
            "cuda" => Ok(Self::Cuda(0)),
            other => other
                .strip_prefix("cuda:")
                .and_then(|index| index.parse().ok())
                .map(Self::Cuda)
                .ok_or_else(|| format!("unknown device `{other}`; use cpu, cuda or cuda:N")),
        }
    }
}

impl DeviceChoice {
    /// Opens the device; CUDA without the `cuda` feature is a clear error.
    pub fn open(self) -> Result<Device> {
        match self {
            Self::Cpu => Ok(Device::Cpu),
            Self::Cuda(index) if cfg!(feature = "cuda") => Ok(Device::new_cuda(index)?),
            Self::Cuda(_) => Err(ModelError::Request(
                "this build has no CUDA support; rebuild with `cargo build --release --features cuda` \
                 (needs the CUDA toolkit) or use --device cpu"
                    .into(),
            )),
        }
    }
}

/// Parses a compute dtype name: `f32`, `f16`, `bf16`, `f64`.
pub fn parse_dtype(text: &str) -> std::result::Result<DType, String> {
    match text {
        "f32" | "float32" => Ok(DType::F32),
        "f16" | "float16" => Ok(DType::F16),
        "bf16" | "bfloat16" => Ok(DType::BF16),
        "f64" | "float64" => Ok(DType::F64),
        other => Err(format!(
            "unknown dtype `{other}`; use f32, f16, bf16 or f64"
        )),
    }
}

/// The compute dtype to use when none is asked for: f32 on the CPU (candle's CPU matmul has
/// no bf16 kernel), the stored dtype on a GPU.
pub fn default_dtype(device: &Device, stored: Option<DType>) -> DType {
    match (device, stored) {
        (Device::Cpu, _) | (_, None) => DType::F32,
        (_, Some(dtype)) => dtype,
    }
}

/// Refuses dtypes the device cannot multiply in.
pub fn check_dtype(device: &Device, dtype: DType) -> Result<()> {
    if device.is_cpu() && dtype == DType::BF16 {
        return Err(ModelError::Request(
            "bf16 has no matrix-multiply kernel on the CPU; use --dtype f32 (weights stored in bf16 are converted)".into(),
        ));
    }
    if !matches!(dtype, DType::F32 | DType::F16 | DType::BF16 | DType::F64) {
        return Err(ModelError::Request(format!(
            "{dtype:?} is not a floating-point compute dtype"
        )));
    }
    Ok(())
}
