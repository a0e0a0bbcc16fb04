//! The Runs tab's launch form: the few settings a GRPO run is usually varied by (task set,
//! model, G, learning rate, β, steps, seed) over a full run config (the GRPO preset, or the
//! last run launched). It takes every key while open; Enter checks the values through
//! `RunConfig::validate` and launches, naming the field of the first problem.

use crate::run::RunConfig;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::path::PathBuf;

/// The form's fields, top to bottom.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LaunchField {
    /// The training task set (`tasks.train`).
    #[default]
    Tasks,
    /// The starting model folder (`model`; empty: the session's newest policy).
    Model,
    /// Rollouts per task (`grpo.group`).
    Group,
    /// The learning rate (`trainer.learning_rate`).
    LearningRate,
    /// The KL weight (`grpo.update.objective.beta`).
    Beta,
    /// Training steps (`grpo.steps`).
    Steps,
    /// The run seed (`seed`).
    Seed,
}

impl LaunchField {
    /// Every field, in order.
    pub const ALL: [LaunchField; 7] = [
        Self::Tasks,
        Self::Model,
        Self::Group,
        Self::LearningRate,
        Self::Beta,
        Self::Steps,
        Self::Seed,
    ];

    /// The field's label.
    pub fn label(self) -> &'static str {
        match self {
            Self::Tasks => "task set",
            Self::Model => "model folder",
            Self::Group => "G",
            Self::LearningRate => "learning rate",
            Self::Beta => "β",
            Self::Steps => "steps",
            Self::Seed => "seed",
        }
    }

    /// The config keys whose problems belong to this field.
    fn keys(self) -> &'static [&'static str] {
        match self {
            Self::Tasks => &["tasks.train", "tasks.eval"],
            Self::Model => &["model"],
            Self::Group => &["grpo.group"],
            Self::LearningRate => &["learning_rate"],
            Self::Beta => &["beta"],
            Self::Steps => &["grpo.steps"],
            Self::Seed => &["seed"],
        }
    }

    fn index(self) -> usize {
        Self::ALL
            .iter()
            .position(|field| *field == self)
            .unwrap_or(0)
    }
}

/// What a key did to the form.
#[derive(Clone, Debug, PartialEq)]
pub enum LaunchEvent {
    /// Still editing (or a problem is shown).
    Editing,
    /// Closed without launching.
    Cancelled,
    /// Launch this config.
    Launch(Box<RunConfig>),
}

/// The open form.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchForm {
    /// The config the fields edit; every other key keeps its value.
    pub base: RunConfig,
    /// The focused field.
    pub field: LaunchField,
    /// What each field holds, in `LaunchField::ALL` order.
    pub inputs: Vec<String>,
    /// The last problem: the field it names (if any) and the message.
    pub problem: Option<(Option<LaunchField>, String)>,
}

impl LaunchForm {
    /// A form prefilled from `base`.
    pub fn new(base: RunConfig) -> Self {
        let inputs = LaunchField::ALL
            .iter()
            .map(|field| match field {
                LaunchField::Tasks => base.tasks.train.clone(),
                LaunchField::Model => base
                    .model
                    .as_ref()
                    .map(|dir| dir.display().to_string())
                    .unwrap_or_default(),
                LaunchField::Group => base.grpo.group.to_string(),
                LaunchField::LearningRate => number(base.trainer.learning_rate),
                LaunchField::Beta => number(base.grpo.update.objective.beta),
                LaunchField::Steps => base.grpo.steps.to_string(),
                LaunchField::Seed => base.seed.to_string(),
            })
            .collect();
        Self {
            base,
            field: LaunchField::Tasks,
            inputs,
            problem: None,
        }
    }

    /// What a field holds.
    pub fn input(&self, field: LaunchField) -> &str {
        &self.inputs[field.index()]
    }

    /// The held-out task set the run will evaluate on: `X:eval` for a training set `X:train`,
    /// else the base config's.
    pub fn eval_tasks(&self) -> String {
        let train = self.input(LaunchField::Tasks).trim();
        match train.strip_suffix(":train") {
            Some(stem) => format!("{stem}:eval"),
            None => self.base.tasks.eval.clone(),
        }
    }

    /// Moves the focus by `delta` fields, wrapping around.
    pub fn move_focus(&mut self, delta: isize) {
        let count = LaunchField::ALL.len() as isize;
        let index = (self.field.index() as isize + delta).rem_euclid(count);
        self.field = LaunchField::ALL[index as usize];
    }

    /// Applies a key: Tab/↓ and Shift-Tab/↑ move between fields, characters type, backspace
    /// deletes, ctrl-u clears, Enter launches (or shows the first problem), Esc cancels.
    pub fn key(&mut self, key: &KeyEvent) -> LaunchEvent {
        let control = key.modifiers.contains(KeyModifiers::CONTROL);
        let index = self.field.index();
        match key.code {
            KeyCode::Esc => return LaunchEvent::Cancelled,
            KeyCode::Enter => return self.submit(),
            KeyCode::Tab | KeyCode::Down => self.move_focus(1),
            KeyCode::BackTab | KeyCode::Up => self.move_focus(-1),
            KeyCode::Backspace => {
                self.inputs[index].pop();
                self.problem = None;
            }
            KeyCode::Char('u') if control => {
                self.inputs[index].clear();
                self.problem = None;
            }
            KeyCode::Char(c) if !control && !c.is_control() => {
                self.inputs[index].push(c);
                self.problem = None;
            }
            _ => {}
        }
        LaunchEvent::Editing
    }

    fn submit(&mut self) -> LaunchEvent {
        match self.config() {
            Ok(config) => LaunchEvent::Launch(Box::new(config)),
            Err((field, message)) => {
                if let Some(field) = field {
                    self.field = field;
                }
                self.problem = Some((field, message));
                LaunchEvent::Editing
            }
        }
    }

    /// The config the form describes, or the field at fault and what is wrong.
    pub fn config(&self) -> Result<RunConfig, (Option<LaunchField>, String)> {
        let mut config = self.base.clone();
        let text = |field: LaunchField| self.input(field).trim();
        config.tasks.train = text(LaunchField::Tasks).to_string();
        config.tasks.eval = self.eval_tasks();
        let model = text(LaunchField::Model);
        config.model = (!model.is_empty()).then(|| PathBuf::from(model));
        config.grpo.group = parse(
            text(LaunchField::Group),
            LaunchField::Group,
            "a whole number",
        )?;
        config.trainer.learning_rate = parse(
            text(LaunchField::LearningRate),
            LaunchField::LearningRate,
            "a number",
        )?;
        let beta: f64 = parse(text(LaunchField::Beta), LaunchField::Beta, "a number")?;
        if !(beta.is_finite() && beta >= 0.0) {
            return Err(fault(
                LaunchField::Beta,
                format!("{beta} must be 0 or more (0 drops the KL penalty)"),
            ));
        }
        config.grpo.update.objective.beta = beta;
        config.grpo.steps = parse(
            text(LaunchField::Steps),
            LaunchField::Steps,
            "a whole number",
        )?;
        if config.grpo.steps == 0 {
            return Err(fault(LaunchField::Steps, "must be at least 1".into()));
        }
        config.seed = parse(text(LaunchField::Seed), LaunchField::Seed, "a whole number")?;
        config.validate().map_err(|error| {
            let message = format!("{error:#}");
            let field = LaunchField::ALL
                .into_iter()
                .find(|field| field.keys().iter().any(|key| message.contains(key)));
            match field {
                Some(field) => (Some(field), format!("{}: {message}", field.label())),
                None => (None, message),
            }
        })?;
        Ok(config)
    }
}

fn fault(field: LaunchField, message: String) -> (Option<LaunchField>, String) {
    (Some(field), format!("{}: {message}", field.label()))
}

fn parse<T: std::str::FromStr>(
    text: &str,
    field: LaunchField,
    what: &str,
) -> Result<T, (Option<LaunchField>, String)> {
    text.parse()
        .map_err(|_| fault(field, format!("`{text}` is not {what}")))
}

/// A number as typed: small rates in exponent form (`2e-4`), others plainly (`0.04`).
fn number(value: f64) -> String {
    if value != 0.0 && value.abs() < 1e-3 {
        format!("{value:e}")
    } else {
        value.to_string()
    }
}
