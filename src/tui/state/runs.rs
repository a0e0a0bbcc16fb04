//! The Runs tab's state: the run list, the selected run's metrics rows (kept current as new
//! rows arrive), the chart choices (`run_charts`: pinned runs overlaid, metrics charted, the
//! table of runs), the smoothing toggle, the runs this TUI launched, and the launch form. Every run shows live whichever process trains
//! it: its record carries its status and its step's activity.

use super::run_charts::{RunCharts, merge_rows};
use super::run_words::announce;
pub use super::run_words::describe;
use super::status::Status;
use super::step_cursor::StepCursor;
use crate::engine::Command;
use crate::run::{GRPO_PRESET, RunConfig};
use crate::trajectory::{MainJobStage, MetricsRow, RunInfo, RunKind, RunStatus};
use crate::tui::action::Action;
use crate::tui::launch_form::{LaunchEvent, LaunchForm};
use crate::tui::outcome::Outcome;
use crate::tui::prompt::{Prompt, PromptKind};
use crossterm::event::KeyEvent;

/// The Runs tab's state.
#[derive(Clone, Debug, Default)]
pub struct RunsTab {
    /// Every run, oldest first.
    pub runs: Vec<RunInfo>,
    /// Whether the run list has arrived.
    pub loaded: bool,
    /// The selected run.
    pub selected: usize,
    /// The run whose rows are held.
    pub metrics_run: Option<String>,
    /// Its metrics rows, by step.
    pub rows: Vec<MetricsRow>,
    /// The step the charts mark and the footer prints.
    pub cursor: StepCursor,
    /// The runs pinned, the metrics charted, the table of runs.
    pub charts: RunCharts,
    /// Smooth the charts.
    pub smoothing: bool,
    /// The process of a run just launched here, until the run list holds its run.
    pub launching: Option<u32>,
    /// The runs launched from this TUI (the quit prompt asks about those still training).
    pub launched_here: Vec<String>,
    /// The open launch form.
    pub form: Option<LaunchForm>,
    /// The config of the last run launched, which the next form starts from.
    pub last_launch: Option<RunConfig>,
    /// A run to select once the run list holds it (a run just launched).
    pub follow: Option<String>,
}

impl RunsTab {
    /// The selected run.
    pub fn selected_run(&self) -> Option<&RunInfo> {
        self.runs.get(self.selected)
    }

    /// Takes the run list: keeps the selection on its run (or moves it to a run just
    /// launched here), tells the user when a run starts, pauses or ends, and asks for the
    /// selected run's metrics.
    pub fn receive_runs(&mut self, runs: Vec<RunInfo>, status: &mut Status) -> Vec<Command> {
        if let Some(pid) = self.launching
            && let Some(run) = runs.iter().find(|run| {
                run.process
                    .as_ref()
                    .is_some_and(|process| process.pid == pid)
            })
        {
            self.launching = None;
            self.follow = Some(run.id.clone());
            if !self.launched_here.contains(&run.id) {
                self.launched_here.push(run.id.clone());
            }
        }
        if self.loaded {
            for run in &runs {
                let before = self.runs.iter().find(|old| old.id == run.id);
                if before.map(|old| old.status) != Some(run.status) {
                    announce(run, before.map(|old| old.status), status);
                }
            }
        }
        let previous = self
            .follow
            .take()
            .or_else(|| self.selected_run().map(|run| run.id.clone()));
        self.runs = runs;
        self.loaded = true;
        self.selected = previous
            .and_then(|id| self.runs.iter().position(|run| run.id == id))
            .unwrap_or(self.runs.len().saturating_sub(1));
        self.request_metrics()
    }

    fn request_metrics(&mut self) -> Vec<Command> {
        let Some(run) = self.selected_run().map(|run| run.id.clone()) else {
            return Vec::new();
        };
        if self.metrics_run.as_ref() == Some(&run) {
            return Vec::new();
        }
        self.metrics_run = Some(run.clone());
        self.rows.clear();
        self.cursor = StepCursor::Latest;
        vec![Command::LoadMetrics { run }]
    }

    /// Takes all rows of a run: the selected one's, a pinned one's, or both.
    pub fn receive_metrics(&mut self, run: &str, rows: Vec<MetricsRow>) {
        self.charts.receive(run, &rows);
        if self.metrics_run.as_deref() == Some(run) {
            self.rows = rows;
        }
    }

    /// Pins the selected run to overlay the charts, or unpins it when it is already.
    fn toggle_pin(&mut self, status: &mut Status) -> Vec<Command> {
        let Some(run) = self.selected_run().map(|run| run.id.clone()) else {
            return Vec::new();
        };
        self.charts.toggle_pin(&run).unwrap_or_else(|message| {
            status.warn(message);
            Vec::new()
        })
    }

    /// Takes new rows of a live run: a row for a step already held replaces it. The run's
    /// record advances to the newest step.
    pub fn append_metrics(&mut self, run: &str, rows: Vec<MetricsRow>) {
        if let Some(info) = self.runs.iter_mut().find(|info| info.id == run)
            && let Some(newest) = rows.iter().map(|row| row.step).max()
        {
            info.step = info.step.max(newest);
        }
        self.charts.append(run, &rows);
        if self.metrics_run.as_deref() == Some(run) {
            merge_rows(&mut self.rows, rows);
        }
    }

    /// A background run was launched from here: its run is the one its process trains.
    pub fn launched(
        &mut self,
        pid: u32,
        log: &std::path::Path,
        status: &mut Status,
    ) -> Vec<Command> {
        self.launching = Some(pid);
        status.notify(format!(
            "started in the background (process {pid}, output in {}); it goes on when the \
             TUI quits",
            log.display()
        ));
        vec![Command::LoadRuns]
    }

    /// The runs that train now (running or paused), whichever process trains them.
    pub fn training(&self) -> impl Iterator<Item = &RunInfo> {
        self.runs
            .iter()
            .filter(|run| matches!(run.status, RunStatus::Running | RunStatus::Paused))
    }

    /// The training run the screen shows: the selected run while it trains, else the newest
    /// that trains.
    pub fn live(&self) -> Option<&RunInfo> {
        self.selected_run()
            .filter(|run| matches!(run.status, RunStatus::Running | RunStatus::Paused))
            .or_else(|| self.training().last())
    }

    /// What the main job does now, while one of its runs trains: the stage, its progress,
    /// and what comes after it.
    pub fn main_job_line(&self) -> Option<String> {
        let run = self.training().find(|run| run.stage.is_some())?;
        let stage = run.stage?;
        let next = match stage {
            MainJobStage::Grpo => "",
            _ => {
                " · the GRPO preset starts when the cold start is done (`n` launches a run \
                  of your own now)"
            }
        };
        Some(format!(
            "main job: {} · {}{next}",
            stage.name(),
            describe(run)
        ))
    }

    /// The runs launched from this TUI that still train.
    pub fn training_here(&self) -> Vec<&RunInfo> {
        self.training()
            .filter(|run| self.launched_here.contains(&run.id))
            .collect()
    }

    /// Opens the launch form, prefilled from the last run launched or the GRPO preset.
    pub fn open_form(&mut self) -> Result<(), String> {
        let base = match &self.last_launch {
            Some(config) => config.clone(),
            None => RunConfig::parse(GRPO_PRESET)
                .map_err(|error| format!("the built-in GRPO preset does not parse: {error:#}"))?,
        };
        self.form = Some(LaunchForm::new(base));
        Ok(())
    }

    /// The command that pauses, resumes or stops the selected run (whichever process trains
    /// it), with what to tell the user; or why it cannot.
    pub fn steer(&self, action: Action) -> Result<(Command, String), String> {
        let run = self.selected_run().ok_or("no run selected")?;
        let id = run.id.clone();
        match (action, run.status) {
            (Action::PauseRun, RunStatus::Running) => Ok((
                Command::PauseRun(id.clone()),
                format!("{id} pauses after its current step"),
            )),
            (Action::PauseRun, RunStatus::Paused) => Err(format!("{id} is already paused")),
            (Action::ResumeRun, RunStatus::Paused) => {
                Ok((Command::ResumeRun(id.clone()), format!("{id} goes on")))
            }
            (Action::ResumeRun, RunStatus::Running) => Err(format!("{id} is running")),
            (Action::StopRun, RunStatus::Running | RunStatus::Paused) => Ok((
                Command::StopRun(id.clone()),
                format!("{id} {}", run.kind.stop_words()),
            )),
            (Action::ResumeRun, _) => self.resumable(run).map(|()| {
                let how = match run.kind {
                    RunKind::Import => "reading its paths again",
                    _ => "from its latest checkpoint",
                };
                (
                    Command::ResumeRun(id.clone()),
                    format!("resuming {id} {how} in the background"),
                )
            }),
            _ => Err(format!("{id} is {}, not training", run.status.as_str())),
        }
    }

    /// Whether a run that does not train can resume here.
    fn resumable(&self, run: &RunInfo) -> Result<(), String> {
        match run.kind {
            RunKind::Grpo | RunKind::Import => {}
            RunKind::Sft => {
                return Err(format!(
                    "{0} is an SFT run; `rollscope train sft --resume {0}` continues it",
                    run.id
                ));
            }
            kind => return Err(format!("{} is a {kind} run, not a training run", run.id)),
        }
        match run.status {
            RunStatus::Stopped | RunStatus::Failed | RunStatus::Interrupted => Ok(()),
            RunStatus::Done => Err(format!("{} is done", run.id)),
            RunStatus::Running | RunStatus::Paused => Err(format!("{} is training", run.id)),
        }
    }

    /// What to ask for again after another writer changed run records or metrics rows: the
    /// run list (the selection stays on its run) and the shown runs' rows.
    pub fn store_changed(&self, runs: bool, metrics: bool) -> Vec<Command> {
        let mut commands = Vec::new();
        if runs {
            commands.push(Command::LoadRuns);
        }
        if metrics {
            let pinned = self.charts.pinned.iter().map(|pinned| &pinned.id);
            let shown = self.metrics_run.iter().chain(pinned);
            commands.extend(shown.map(|run| Command::LoadMetrics { run: run.clone() }));
        }
        commands
    }

    /// Asks for the run list again, and the selected run's metrics after it.
    pub fn refresh(&mut self) -> Vec<Command> {
        self.metrics_run = None;
        vec![Command::LoadRuns]
    }

    /// Handles a key while the launch form is open; `None` when it is closed.
    pub fn on_form_key(&mut self, key: &KeyEvent, status: &mut Status) -> Option<Vec<Command>> {
        let form = self.form.as_mut()?;
        Some(match form.key(key) {
            LaunchEvent::Editing => Vec::new(),
            LaunchEvent::Cancelled => {
                self.form = None;
                Vec::new()
            }
            LaunchEvent::Launch(config) => self.launch(config, status),
        })
    }

    /// Closes the launch form and asks the engine to start its run.
    fn launch(&mut self, config: Box<RunConfig>, status: &mut Status) -> Vec<Command> {
        self.form = None;
        self.last_launch = Some((*config).clone());
        status.notify(format!(
            "launching a GRPO run on {} ({} steps, G = {})",
            config.tasks.train, config.grpo.steps, config.grpo.group
        ));
        vec![Command::LaunchRun(config)]
    }

    /// Handles an action: the launch form's while it is open, else steering, the run's
    /// rollouts, the charts (pins, picker, table), moving and smoothing.
    pub fn on_action(&mut self, action: Action, status: &mut Status) -> Outcome {
        if let Some(form) = &mut self.form {
            match action {
                Action::Down => form.move_focus(1),
                Action::Up => form.move_focus(-1),
                Action::Back => self.form = None,
                _ => {}
            }
            return Outcome::Commands(Vec::new());
        }
        match action {
            Action::NewRun => {
                if let Err(message) = self.open_form() {
                    status.warn(message);
                }
                Outcome::Commands(Vec::new())
            }
            Action::FollowRun => Outcome::Prompt(Prompt::new(PromptKind::Follow)),
            Action::PauseRun | Action::ResumeRun | Action::StopRun => {
                Outcome::Commands(match self.steer(action) {
                    Ok((command, notice)) => {
                        status.notify(notice);
                        vec![command]
                    }
                    Err(message) => {
                        status.warn(message);
                        Vec::new()
                    }
                })
            }
            Action::Open => match self.selected_run() {
                Some(run) => Outcome::List(self.cursor.listing(run, &self.rows)),
                None => Outcome::Commands(Vec::new()),
            },
            Action::ChooseCharts => {
                self.charts.open_picker(&self.rows);
                Outcome::Commands(Vec::new())
            }
            Action::RunTable => {
                self.charts.table = !self.charts.table;
                Outcome::Commands(Vec::new())
            }
            Action::Pin => Outcome::Commands(self.toggle_pin(status)),
            _ => self.on_move(action),
        }
    }

    /// Moves the selection and the step cursor, toggles smoothing.
    fn on_move(&mut self, action: Action) -> Outcome {
        match action {
            Action::Down if self.selected + 1 < self.runs.len() => {
                self.selected += 1;
                Outcome::Commands(self.request_metrics())
            }
            Action::Up if self.selected > 0 => {
                self.selected -= 1;
                Outcome::Commands(self.request_metrics())
            }
            Action::Left | Action::Right => {
                let by = if action == Action::Left { -1 } else { 1 };
                self.cursor = self.cursor.moved(&self.rows, by);
                Outcome::Commands(Vec::new())
            }
            Action::Smoothing => {
                self.smoothing = !self.smoothing;
                Outcome::Commands(Vec::new())
            }
            Action::Up | Action::Down => Outcome::Commands(Vec::new()),
            _ => Outcome::Ignored,
        }
    }
}
