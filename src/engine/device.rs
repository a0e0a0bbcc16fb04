//! Where launched runs load and train their models, as a plain choice the UI can make
//! without knowing the tensor library.

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
    /// The device as the CLI's `--device` flag takes it.
    pub fn flag(self) -> String {
        match self {
            Self::Cpu => "cpu".into(),
            Self::Cuda(index) => format!("cuda:{index}"),
        }
    }
}
