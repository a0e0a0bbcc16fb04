//! The instruction set the CPU kernels run on, for the hand-written loops and for every
//! matrix product alike (`gemm` picks its micro-kernel by it, see `gemm.rs`). Each one rounds
//! differently, so a run reproduces bit for bit only on the same one; `ROLLSCOPE_ISA` (set
//! by the global `--isa` flag) makes any CPU that has it run another machine's.

use std::str::FromStr;
use strum::IntoEnumIterator;

/// The instruction set the CPU kernels use, best first.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, strum::EnumIter, strum::IntoStaticStr, strum::Display,
)]
#[strum(serialize_all = "lowercase")]
pub enum Isa {
    /// AVX-512F intrinsics (16 f32 lanes) and gemm's AVX-512 micro-kernel.
    Avx512,
    /// AVX2 and FMA intrinsics (8 f32 lanes) and gemm's FMA micro-kernel.
    Avx2,
    /// Plain Rust that the compiler vectorises for the baseline target, and gemm's scalar
    /// micro-kernel: what CPUs without AVX2 (ARM included) run.
    Portable,
}

/// The environment variable that chooses the instruction set for this process and every
/// process it starts (the session server, training jobs).
pub const ISA_ENV: &str = "ROLLSCOPE_ISA";

/// Why an instruction set cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum IsaError {
    /// The name is none of the three.
    #[error(
        "unknown instruction set `{0}`: use {choices}",
        choices = Isa::listed(&Isa::iter().collect::<Vec<_>>(), "or")
    )]
    Unknown(String),
    /// This CPU, or this build, cannot run it.
    #[error(
        "this machine cannot run {asked}: {reason}; it runs {}",
        Isa::listed(&Isa::available(), "and")
    )]
    Unavailable {
        /// The instruction set asked for.
        asked: Isa,
        /// What is missing.
        reason: &'static str,
    },
}

impl Isa {
    /// The name `--isa` and `ROLLSCOPE_ISA` take.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The best instruction set this CPU and this build support.
    pub fn best() -> Self {
        Self::iter()
            .find(|isa| isa.missing().is_none())
            .unwrap_or(Isa::Portable)
    }

    /// Every instruction set this CPU and build run, portable first (the best one last).
    pub fn available() -> Vec<Self> {
        Self::iter()
            .rev()
            .filter(|isa| isa.missing().is_none())
            .collect()
    }

    /// The instruction set this process uses: `ROLLSCOPE_ISA` when it names one this machine
    /// runs, else the best. The command line checks the variable before any work starts
    /// (`Isa::from_env`), so a bad value never gets this far in `rollscope`.
    pub fn chosen() -> Self {
        Self::from_env().ok().flatten().unwrap_or_else(Self::best)
    }

    /// The instruction set `ROLLSCOPE_ISA` asks for (`None` when it is unset or empty), or why
    /// it cannot be used.
    pub fn from_env() -> Result<Option<Self>, IsaError> {
        match std::env::var(ISA_ENV) {
            Ok(value) if !value.trim().is_empty() => value.parse::<Isa>()?.usable().map(Some),
            _ => Ok(None),
        }
    }

    /// Itself when this CPU and build run it.
    pub fn usable(self) -> Result<Self, IsaError> {
        match self.missing() {
            None => Ok(self),
            Some(reason) => Err(IsaError::Unavailable {
                asked: self,
                reason,
            }),
        }
    }

    /// What this machine lacks to run it, if anything.
    fn missing(self) -> Option<&'static str> {
        match self {
            Isa::Portable => None,
            Isa::Avx2 => (!cpu_has_avx2_fma()).then_some("the CPU lacks AVX2 with FMA"),
            Isa::Avx512 if !cpu_has_avx512() => Some("the CPU lacks AVX-512F"),
            Isa::Avx512 if !cfg!(feature = "avx512") => Some(
                "this build has no AVX-512 matrix products (it was built without the `avx512` \
                 feature)",
            ),
            Isa::Avx512 => None,
        }
    }

    /// `a, b and c` (or `a, b or c`) for a list of instruction sets.
    fn listed(isas: &[Isa], conjunction: &str) -> String {
        let names: Vec<&str> = isas.iter().map(|isa| isa.name()).collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => {
                format!("{} {conjunction} {last}", rest.join(", "))
            }
            _ => names.join(""),
        }
    }
}

impl FromStr for Isa {
    type Err = IsaError;

    fn from_str(text: &str) -> Result<Self, IsaError> {
        let wanted = text.trim().to_ascii_lowercase().replace(['-', '_'], "");
        Self::iter()
            .find(|isa| isa.name() == wanted)
            .ok_or_else(|| IsaError::Unknown(text.to_owned()))
    }
}

#[cfg(target_arch = "x86_64")]
fn cpu_has_avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_has_avx512() -> bool {
    false
}

#[cfg(target_arch = "x86_64")]
fn cpu_has_avx2_fma() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_has_avx2_fma() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_unknown_ones_are_named() {
        for isa in Isa::iter() {
            assert_eq!(isa.name().parse::<Isa>(), Ok(isa));
        }
        assert_eq!("AVX-512".parse::<Isa>(), Ok(Isa::Avx512));
        assert_eq!(
            "sse9".parse::<Isa>().unwrap_err().to_string(),
            "unknown instruction set `sse9`: use avx512, avx2 or portable"
        );
    }

    #[test]
    fn the_available_sets_are_exactly_the_usable_ones_and_best_is_last() {
        let available = Isa::available();
        assert_eq!(available.first(), Some(&Isa::Portable));
        assert_eq!(available.last(), Some(&Isa::best()));
        for isa in Isa::iter() {
            let usable = isa.usable();
            assert_eq!(
                usable.is_ok(),
                available.contains(&isa),
                "{isa}: {usable:?}"
            );
            if let Err(error) = usable {
                assert!(error.to_string().contains("cannot run"), "{error}");
            }
        }
    }
}
