//! Where launched runs load and train their models, as a plain choice the UI can make
//! without knowing the tensor library.

/// The device launched runs compute on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ComputeDevice {
    /// The CPU.
    #[default]
    Cpu,
    /// CUDA GPU `n`.
    Cuda(usize),
}
