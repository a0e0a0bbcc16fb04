//! Closing the loop: error analysis, suggested labels, the reward-hacking audit,
//! rejection-sampling selection, exports with a manifest, and labels that travel.
//!
//! The trainer's entry point is [`select`] (which stored samples to train on, best of N per
//! task) and [`export_selection`] (those samples written in a training format, with a
//! manifest beside the file so the dataset can be traced back); the file re-imports through
//! `formats::import_file`.

pub mod agreement;
pub mod analysis;
pub mod audit;
pub mod export;
pub mod labels;
pub mod manifest;
mod numbers;
mod records;
pub mod repair;
pub mod select;
pub mod suggest;
mod tasks;

pub use analysis::{Analysis, analyse};
pub use audit::{AuditOptions, Finding, Trait, audit};
pub use export::{ExportReport, ExportRequest, export_selection};
pub use manifest::Manifest;
pub use records::map_records;
pub use select::{Selection, SelectionPreview, SelectionRules, select};
pub use suggest::{SUGGESTER, suggest};
pub use tasks::TaskIndex;
