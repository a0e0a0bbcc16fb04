//! Curation: error statistics against hand-computed values, each suggestion rule, precision
//! on a hand-labelled set of real failures, the audit's traits, the selection rules, exports
//! that re-import and carry TRL's shape, manifests, label merges, and the CLI verbs.

#[path = "curate/agreement.rs"]
mod agreement;
#[path = "curate/analysis.rs"]
mod analysis;
#[path = "curate/audit.rs"]
mod audit;
#[path = "curate/cli.rs"]
mod cli;
#[path = "curate/common.rs"]
mod common;
#[path = "curate/export.rs"]
mod export;
#[path = "curate/labels.rs"]
mod labels;
#[path = "curate/precision.rs"]
mod precision;
#[path = "curate/select.rs"]
mod select;
#[path = "curate/suggest.rs"]
mod suggest;
