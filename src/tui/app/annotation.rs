//! Labelling from the Rollouts tab: label keys, notes, undo, accept, and walking the badcase
//! queue; the label goes on the tab's current target, undo and the queue are shared.

use super::App;
use crate::engine::Command;
use crate::tui::action::Action;
use crate::tui::annotate::{self, PendingNote, Target, UndoEntry};
use crate::tui::prompt::{Prompt, PromptKind};

impl App {
    /// Label keys, notes, undo, accept, and the badcase queue; `None` when not one of them.
    pub(super) fn on_annotation_action(&mut self, action: Action) -> Option<Vec<Command>> {
        match action {
            Action::Undo => Some(match self.undo.undo() {
                Some(command) => {
                    self.notify("undone");
                    vec![command]
                }
                None => {
                    self.notify("nothing to undo");
                    Vec::new()
                }
            }),
            Action::NextBadcase | Action::PrevBadcase => {
                let forward = action == Action::NextBadcase;
                Some(
                    self.walk_disagreements(forward)
                        .unwrap_or_else(|| self.walk_queue(forward)),
                )
            }
            Action::Note => {
                if self.tabs.rollouts.annotation_target().is_some() {
                    self.prompt = Some(Prompt::new(PromptKind::Note));
                } else {
                    self.notify("open a trajectory to write a note");
                }
                Some(Vec::new())
            }
            Action::Accept => Some(self.with_target(annotate::accept)),
            _ => {
                let kind = action.label_kind()?;
                if !self.label_kinds.defines(kind) {
                    self.notify(format!(
                        "key {} names no error kind here: add [[labels]] key = {} and a name \
                         to session.toml",
                        kind.digit(),
                        kind.digit()
                    ));
                    return Some(Vec::new());
                }
                let pending = self.pending_note.clone();
                let mut noted = false;
                let commands = self.with_target(|target| {
                    let mut command = annotate::toggle(target, kind);
                    if let (Command::SaveLabel { draft, .. }, Some(note)) = (&mut command, pending)
                        && note.is_for(target)
                    {
                        draft.note = Some(note.text);
                        noted = true;
                    }
                    Ok(vec![command])
                });
                if noted {
                    self.pending_note = None;
                }
                Some(commands)
            }
        }
    }

    /// A note typed at the prompt: on the turn's label, or kept for the label the turn
    /// gets next when it has none yet.
    pub(super) fn submit_note(&mut self, text: &str) -> Vec<Command> {
        let Some((trajectory, step)) = self.tabs.rollouts.annotation_target() else {
            self.notify("nothing to note here: open a trajectory");
            return Vec::new();
        };
        let target = Target::new(trajectory, step, self.annotator.as_deref());
        if annotate::has_label(&target) {
            return self
                .with_target(|target| annotate::note(target, text).map(|command| vec![command]));
        }
        if text.is_empty() {
            self.pending_note = None;
            self.notify("note dropped");
            return Vec::new();
        }
        self.pending_note = Some(PendingNote {
            id: target.id,
            step: target.step,
            text: text.to_string(),
        });
        self.notify(format!(
            "note kept for t{}: 1–4 labels the turn with it",
            step + 1
        ));
        Vec::new()
    }

    /// Runs a label change on the current target, remembering the labels for undo.
    pub(super) fn with_target(
        &mut self,
        change: impl FnOnce(&Target<'_>) -> Result<Vec<Command>, String>,
    ) -> Vec<Command> {
        let Some((trajectory, step)) = self.tabs.rollouts.annotation_target() else {
            self.notify("nothing to label here: select or open a trajectory");
            return Vec::new();
        };
        let target = Target::new(trajectory, step, self.annotator.as_deref());
        let before = UndoEntry::of(&target);
        match change(&target) {
            Ok(commands) => {
                self.undo.push(before);
                self.notify(format!("saving t{} …", step + 1));
                commands
            }
            Err(message) => {
                self.notify(message);
                Vec::new()
            }
        }
    }

    fn walk_queue(&mut self, forward: bool) -> Vec<Command> {
        if self.queue.tag != self.tabs.rollouts.list.tag {
            self.notify("the badcase queue is still being counted");
            return Vec::new();
        }
        let cursor = self.tabs.rollouts.list.cursor;
        let found = if forward {
            self.queue.next(cursor)
        } else {
            self.queue.previous(cursor)
        };
        let Some((row, id)) = found else {
            self.notify(if forward {
                "no unlabelled failure after this one"
            } else {
                "no unlabelled failure before this one"
            });
            return Vec::new();
        };
        let mut commands = self.tabs.rollouts.select(row);
        commands.extend(self.open_trajectory(id, true));
        if let Some(progress) = self.queue.progress() {
            self.notify(progress);
        }
        commands
    }
}
