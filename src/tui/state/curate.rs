//! The Curate tab's state: the best-of-N form, its previews and its export.

use super::status::Status;
use crate::curate::{SelectionPreview, SelectionRules};
use crate::engine::{Activity, Command, ExportProgress};
use crate::store::Filter;
use crate::trajectory::TrajectoryId;
use crate::tui::action::Action;
use crate::tui::curate_form::{CurateForm, ExportStatus, FormOutcome};
use crate::tui::outcome::Outcome;
use crate::tui::prompt::{Prompt, PromptKind};

/// The Curate tab's state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CurateTab {
    /// The form.
    pub form: CurateForm,
}

impl CurateTab {
    /// Applies an action to the form: a preview or an export to ask for, or a prompt to open.
    pub fn on_action(&mut self, action: Action, status: &mut Status) -> Outcome {
        let form = &mut self.form;
        let result = match form.on_action(action) {
            FormOutcome::Nothing => return Outcome::Commands(Vec::new()),
            FormOutcome::Changed => form.preview_command(),
            FormOutcome::EditSource => {
                return Outcome::Prompt(Prompt::with_input(PromptKind::Source, &form.source));
            }
            FormOutcome::EditPath => {
                return Outcome::Prompt(Prompt::with_input(PromptKind::ExportPath, &form.path));
            }
            FormOutcome::Export => form.export_command(),
            FormOutcome::ShowChosen => {
                return match form.chosen_listing() {
                    Some(listing) => Outcome::List(listing),
                    None => Outcome::Notice(
                        "nothing chosen yet: the preview lists what the rules keep".into(),
                    ),
                };
            }
        };
        Outcome::Commands(commands_or_warning(result, status))
    }

    /// Takes a typed source filter and asks for its preview.
    pub fn set_source(&mut self, input: &str, status: &mut Status) -> Vec<Command> {
        self.form.source = input.to_string();
        commands_or_warning(self.form.preview_command(), status)
    }

    /// Takes a typed export path: the user's own, which a format change leaves alone.
    pub fn set_path(&mut self, input: &str) {
        self.form.path = input.to_string();
        self.form.path_typed = true;
    }

    /// Takes a selection preview from the engine.
    pub fn receive_preview(
        &mut self,
        filter: Filter,
        rules: SelectionRules,
        preview: SelectionPreview,
        kept: Vec<TrajectoryId>,
    ) {
        self.form.receive(filter, rules, preview, kept);
    }

    /// Takes an export's progress, or its report (which the status bar announces).
    pub fn export_progress(&mut self, progress: ExportProgress, status: &mut Status) {
        self.form.export = match progress {
            ExportProgress::Writing { written, total } => ExportStatus::Writing { written, total },
            ExportProgress::Done(report) => {
                let written = report.manifest.counts.written;
                status.notify(format!(
                    "exported {written} records to {}",
                    report.path.display()
                ));
                ExportStatus::Done {
                    path: report.path.clone(),
                    written,
                    sha256: report.manifest.sha256.clone(),
                    seconds: report.seconds,
                }
            }
            ExportProgress::Exists(path) => {
                status.warn(format!(
                    "{} exists: enter on Export again replaces it, or change the path",
                    path.display()
                ));
                ExportStatus::Exists {
                    path,
                    typed: self.form.path.trim().to_string(),
                }
            }
        };
    }

    /// Takes a failure of the engine: an export's ends it, a preview's stops the wait.
    pub fn failed(&mut self, during: Activity, message: &str) {
        match during {
            Activity::Exporting => self.form.export = ExportStatus::Failed(message.to_string()),
            Activity::PreviewingSelection => self.form.waiting = false,
            _ => {}
        }
    }
}

/// The command, or nothing with the reason shown as an error.
fn commands_or_warning(result: Result<Command, String>, status: &mut Status) -> Vec<Command> {
    match result {
        Ok(command) => vec![command],
        Err(message) => {
            status.warn(message);
            Vec::new()
        }
    }
}
