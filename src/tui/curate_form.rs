//! The Curate tab's form: the source filter, the selection rules, the format and the path of
//! an export; every rule change asks the engine for a fresh preview, and Export runs it
//! through the engine.

use super::action::Action;
use super::cycle::cycled;
use super::filter_expr;
use crate::curate::labels::LabelKinds;
use crate::curate::{ExportRequest, SelectionPreview, SelectionRules};
use crate::engine::{Command, Listing};
use crate::formats::{ExportOptions, Format, ToolArguments};
use crate::store::{Filter, SortKey};
use crate::trajectory::TrajectoryId;
use std::path::PathBuf;

/// The most samples per task the form offers.
const MAX_PER_TASK: usize = 64;

/// The form's fields, top to bottom.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Field {
    /// The source filter (the `:filter` language).
    #[default]
    Source,
    /// Samples per task.
    PerTask,
    /// Verifier pass required.
    RequirePass,
    /// Confirmed error labels excluded.
    ExcludeLabelled,
    /// The least process score a kept sample's steps may have.
    MinPrm,
    /// Samples corrected by a person included.
    IncludeCorrected,
    /// Duplicate completions dropped.
    Dedup,
    /// Difficulty levels balanced.
    Balance,
    /// The export format.
    Format,
    /// How tool-call arguments are written.
    Arguments,
    /// Where the export goes.
    Path,
    /// The chosen samples: enter lists them in the Rollouts tab.
    Chosen,
    /// The Export button.
    Export,
}

impl Field {
    /// Every field, in order.
    pub const ALL: [Field; 13] = [
        Self::Source,
        Self::PerTask,
        Self::RequirePass,
        Self::ExcludeLabelled,
        Self::MinPrm,
        Self::IncludeCorrected,
        Self::Dedup,
        Self::Balance,
        Self::Format,
        Self::Arguments,
        Self::Path,
        Self::Chosen,
        Self::Export,
    ];

    /// The field's label.
    pub fn label(self) -> &'static str {
        match self {
            Self::Source => "source",
            Self::PerTask => "per task",
            Self::RequirePass => "verifier pass",
            Self::ExcludeLabelled => "no error label",
            Self::MinPrm => "min PRM",
            Self::IncludeCorrected => "corrected",
            Self::Dedup => "dedup",
            Self::Balance => "balance",
            Self::Format => "format",
            Self::Arguments => "arguments",
            Self::Path => "path",
            Self::Chosen => "chosen",
            Self::Export => "",
        }
    }

    fn index(self) -> usize {
        Self::ALL
            .iter()
            .position(|field| *field == self)
            .unwrap_or(0)
    }
}

/// Where the last export stands.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ExportStatus {
    /// None started.
    #[default]
    Idle,
    /// Writing.
    Writing {
        /// Records written.
        written: usize,
        /// Records selected.
        total: usize,
    },
    /// Written.
    Done {
        /// The file.
        path: PathBuf,
        /// Records written.
        written: usize,
        /// Its SHA-256.
        sha256: String,
        /// Seconds it took.
        seconds: f64,
    },
    /// The file exists: the next Export to the same path (as typed) replaces it.
    Exists {
        /// The file found.
        path: PathBuf,
        /// The form's path when it was found.
        typed: String,
    },
    /// It failed.
    Failed(String),
}

/// What an action on the form asks of the app.
#[derive(Clone, Debug, PartialEq)]
pub enum FormOutcome {
    /// Nothing more.
    Nothing,
    /// The rules or source changed: ask for a preview.
    Changed,
    /// Open the prompt to edit the source filter.
    EditSource,
    /// Open the prompt to edit the path.
    EditPath,
    /// Start the export.
    Export,
    /// List the chosen samples in the Rollouts tab.
    ShowChosen,
}

/// The form's state.
#[derive(Clone, Debug, PartialEq)]
pub struct CurateForm {
    /// The focused field.
    pub field: Field,
    /// The source filter as typed.
    pub source: String,
    /// The selection rules.
    pub rules: SelectionRules,
    /// The format.
    pub format: Format,
    /// How tool-call arguments are written.
    pub arguments: ToolArguments,
    /// The export path (relative to the session's folder unless absolute).
    pub path: String,
    /// Whether the user typed the path; else it follows the format
    /// (`exports/best-of-n.<format>.jsonl`).
    pub path_typed: bool,
    /// The last preview received, with the filter and rules it was computed for.
    pub preview: Option<(Filter, SelectionRules, SelectionPreview)>,
    /// The samples that preview chose, best first within each task.
    pub kept: Vec<TrajectoryId>,
    /// A preview request is in flight.
    pub waiting: bool,
    /// The last export.
    pub export: ExportStatus,
    /// The session's error kinds, for `label:NAME` in the source filter.
    pub label_kinds: LabelKinds,
}

impl Default for CurateForm {
    fn default() -> Self {
        Self {
            field: Field::Source,
            source: String::new(),
            rules: SelectionRules::default(),
            format: Format::OpenaiMessages,
            arguments: ToolArguments::Object,
            path: format_path(Format::OpenaiMessages),
            path_typed: false,
            preview: None,
            kept: Vec::new(),
            waiting: false,
            export: ExportStatus::Idle,
            label_kinds: LabelKinds::default(),
        }
    }
}

/// The formats the form cycles through.
const FORMATS: [Format; 5] = [
    Format::OpenaiMessages,
    Format::TrlPromptCompletion,
    Format::Sharegpt,
    Format::Rl,
    Format::Rollscope,
];

/// The path the form proposes for a format: `exports/best-of-n.<format>.jsonl`.
fn format_path(format: Format) -> String {
    format!("exports/best-of-n.{}.jsonl", format.name())
}

/// The least-PRM values the form steps through (`None`: no threshold).
fn step_min_prm(value: Option<f64>, forward: bool) -> Option<f64> {
    let tenths = value.map_or(0, |value| (value * 10.0).round() as i64);
    let next = if forward { tenths + 1 } else { tenths - 1 };
    (next > 0).then(|| next.min(10) as f64 / 10.0)
}

impl CurateForm {
    /// The source filter, or why it does not parse.
    pub fn filter(&self) -> Result<Filter, String> {
        filter_expr::parse(&self.source, &self.label_kinds)
    }

    /// The preview of the current filter and rules, when it has arrived.
    pub fn current_preview(&self) -> Option<&SelectionPreview> {
        let filter = self.filter().ok()?;
        self.preview
            .as_ref()
            .filter(|(for_filter, for_rules, _)| *for_filter == filter && *for_rules == self.rules)
            .map(|(_, _, preview)| preview)
    }

    /// Asks for a preview of the current filter and rules.
    pub fn preview_command(&mut self) -> Result<Command, String> {
        let filter = self.filter()?;
        self.waiting = true;
        Ok(Command::PreviewSelection {
            filter,
            rules: self.rules.clone(),
        })
    }

    /// Takes a preview from the engine, with the samples it chose.
    pub fn receive(
        &mut self,
        filter: Filter,
        rules: SelectionRules,
        preview: SelectionPreview,
        kept: Vec<TrajectoryId>,
    ) {
        if self.filter().ok().as_ref() == Some(&filter) && rules == self.rules {
            self.waiting = false;
        }
        self.preview = Some((filter, rules, preview));
        self.kept = kept;
    }

    /// The chosen samples of the current preview as a listing, by task; `None` until a
    /// preview of the current rules has arrived.
    pub fn chosen_listing(&self) -> Option<Listing> {
        self.current_preview()?;
        let mut ids = self.kept.clone();
        ids.sort_unstable();
        Some(Listing {
            filter: Filter {
                ids: Some(ids),
                ..Filter::default()
            },
            sort: SortKey::Task,
            descending: false,
        })
    }

    /// The export the form describes; a file that exists is replaced only when the last
    /// Export found it and the user pressed Export again.
    pub fn export_command(&mut self) -> Result<Command, String> {
        let filter = self.filter()?;
        let path = self.path.trim();
        if path.is_empty() {
            return Err("give the export a path first (enter on `path`)".into());
        }
        let replace = matches!(&self.export, ExportStatus::Exists { typed, .. } if typed == path);
        self.export = ExportStatus::Writing {
            written: 0,
            total: 0,
        };
        Ok(Command::Export {
            request: Box::new(ExportRequest {
                filter,
                selection: Some(self.rules.clone()),
                format: self.format,
                options: ExportOptions {
                    tool_arguments: self.arguments,
                },
                path: PathBuf::from(path),
                session: None,
                repairs: Vec::new(),
            }),
            replace,
        })
    }

    /// Applies an action to the focused field.
    pub fn on_action(&mut self, action: Action) -> FormOutcome {
        let last = Field::ALL.len() - 1;
        match action {
            Action::Down => self.field = Field::ALL[(self.field.index() + 1).min(last)],
            Action::Up => self.field = Field::ALL[self.field.index().saturating_sub(1)],
            Action::Top => self.field = Field::Source,
            Action::Bottom => self.field = Field::Export,
            Action::Open => {
                return match self.field {
                    Field::Source => FormOutcome::EditSource,
                    Field::Path => FormOutcome::EditPath,
                    Field::Chosen => FormOutcome::ShowChosen,
                    Field::Export => FormOutcome::Export,
                    _ => self.change(true),
                };
            }
            Action::Right | Action::Pin => return self.change(true),
            Action::Left => return self.change(false),
            _ => {}
        }
        FormOutcome::Nothing
    }

    /// Changes the focused field's value (forward: more, on, next).
    fn change(&mut self, forward: bool) -> FormOutcome {
        let rules = &mut self.rules;
        match self.field {
            Field::PerTask if forward => rules.per_task = (rules.per_task + 1).min(MAX_PER_TASK),
            Field::PerTask => rules.per_task = rules.per_task.saturating_sub(1).max(1),
            Field::RequirePass => rules.require_pass = !rules.require_pass,
            Field::ExcludeLabelled => {
                rules.exclude_confirmed_errors = !rules.exclude_confirmed_errors;
            }
            Field::MinPrm => rules.min_prm = step_min_prm(rules.min_prm, forward),
            Field::IncludeCorrected => rules.include_corrected = !rules.include_corrected,
            Field::Dedup => rules.dedup = !rules.dedup,
            Field::Balance => rules.balance_difficulty = !rules.balance_difficulty,
            Field::Format => {
                self.format = cycled(&FORMATS, self.format, forward);
                if !self.path_typed {
                    self.path = format_path(self.format);
                }
                return FormOutcome::Nothing;
            }
            Field::Arguments => {
                self.arguments = cycled(
                    &<ToolArguments as strum::IntoEnumIterator>::iter().collect::<Vec<_>>(),
                    self.arguments,
                    forward,
                );
                return FormOutcome::Nothing;
            }
            Field::Source | Field::Path | Field::Chosen | Field::Export => {
                return FormOutcome::Nothing;
            }
        }
        FormOutcome::Changed
    }
}
