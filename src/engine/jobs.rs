//! Curation work the worker hands off or does for the Curate tab and the audit queue: exports
//! on threads of their own (reporting progress), selection previews, audit listings.

use super::activity::Activity;
use super::update::{ExportProgress, Update};
use crate::curate::{AuditOptions, ExportRequest, Finding, audit, export_selection};
use crate::store::{Filter, Store, Summary};
use std::sync::Arc;
use std::sync::mpsc::Sender;

/// Starts an export on its own thread: a relative path is taken from the session's folder
/// (the store's parent). Progress and the report (or the failure) go to `updates`.
pub fn spawn_export(
    store: Arc<Store>,
    mut request: ExportRequest,
    replace: bool,
    updates: Sender<Update>,
) -> std::io::Result<()> {
    let session_dir = store.path().parent().map(std::path::Path::to_path_buf);
    if request.path.is_relative()
        && let Some(dir) = &session_dir
    {
        request.path = dir.join(&request.path);
    }
    if request.session.is_none() {
        request.session = session_dir
            .as_ref()
            .and_then(|dir| dir.file_name())
            .map(|name| name.to_string_lossy().into_owned());
    }
    if !replace && request.path.exists() {
        let _ = updates.send(Update::Export(ExportProgress::Exists(request.path)));
        return Ok(());
    }
    std::thread::Builder::new()
        .name("rollscope-export".into())
        .spawn(move || {
            let mut progress = |written, total| {
                let _ = updates.send(Update::Export(ExportProgress::Writing { written, total }));
            };
            let update = match export_selection(&store, &request, &mut progress) {
                Ok(report) => Update::Export(ExportProgress::Done(Box::new(report))),
                Err(error) => Update::Failed {
                    tag: None,
                    during: Activity::Exporting,
                    message: format!("{error:#}"),
                },
            };
            let _ = updates.send(update);
        })?;
    Ok(())
}

/// The audit queue of a filter: the suspicious trajectories' summaries in queue order, the
/// findings, and how many were audited.
pub fn audit_rows(
    store: &Store,
    filter: &Filter,
    options: &AuditOptions,
) -> anyhow::Result<(Vec<Summary>, Vec<Finding>, usize)> {
    let (findings, audited) = audit(store, filter, options)?;
    let mut rows = Vec::with_capacity(findings.len());
    for finding in &findings {
        if let Some(summary) = store.summary_of(finding.id)? {
            rows.push(summary);
        }
    }
    Ok((rows, findings, audited))
}
