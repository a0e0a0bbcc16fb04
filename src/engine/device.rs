//! Where launched runs load and train their models, as a plain choice the UI can make
//! without knowing the tensor library.

use crate::model::{DeviceChoice, LoadOptions};

/// The device launched runs compute on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ComputeDevice {
    /// The CPU.
    #[default]
    Cpu,
    /// CUDA GPU `n`.
    Cuda(usize),
}

impl ComputeDevice {
    /// The model load options for this device, in its default dtype; opening a CUDA device
    /// the build lacks is an error.
    pub(super) fn load_options(self) -> anyhow::Result<LoadOptions> {
        let choice = match self {
            Self::Cpu => DeviceChoice::Cpu,
            Self::Cuda(index) => DeviceChoice::Cuda(index),
        };
        Ok(LoadOptions {
            device: choice.open()?,
            dtype: None,
        })
    }
}
