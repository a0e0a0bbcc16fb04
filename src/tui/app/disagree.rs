//! The `:disagree` queue: the steps where annotators' confirmed labels differ, among the
//! list's filter, walked with `]` and `[` while it is open; each opens at its step with every
//! author's kinds in the status line. `:disagree` again leaves it.

use super::App;
use crate::curate::agreement::Disagreement;
use crate::engine::Command;

/// The steps where authors differ, and the one open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisagreeQueue {
    /// The steps, in trajectory order.
    pub steps: Vec<Disagreement>,
    /// The one open.
    pub at: usize,
}

impl App {
    /// `:disagree`: asks for the steps where authors differ, or leaves the queue.
    pub(super) fn toggle_disagree(&mut self) -> Vec<Command> {
        if self.tabs.rollouts.blind {
            self.notify(super::BLIND_ONLY);
            return Vec::new();
        }
        if self.disagree.take().is_some() {
            self.notify("left the disagreement queue: ] and [ walk unlabelled failures again");
            return Vec::new();
        }
        self.notify("finding the steps where annotators differ…");
        vec![Command::FindDisagreements(
            self.tabs.rollouts.list.listing.filter.clone(),
        )]
    }

    /// The steps found: opens the first.
    pub(super) fn receive_disagreements(&mut self, steps: Vec<Disagreement>) -> Vec<Command> {
        if steps.is_empty() {
            self.notify(
                "no step where annotators differ here: it takes two authors' labels on the \
                 same trajectories (`rollscope labels import` a teammate's file)",
            );
            return Vec::new();
        }
        self.disagree = Some(DisagreeQueue { steps, at: 0 });
        self.open_disagreement()
    }

    /// `]` / `[` while the queue is open; `None` when it is not.
    pub(super) fn walk_disagreements(&mut self, forward: bool) -> Option<Vec<Command>> {
        let queue = self.disagree.as_mut()?;
        let last = queue.steps.len() - 1;
        let moved = match (forward, queue.at) {
            (true, at) if at < last => Some(at + 1),
            (false, at) if at > 0 => Some(at - 1),
            _ => None,
        };
        Some(match moved {
            Some(at) => {
                queue.at = at;
                self.open_disagreement()
            }
            None => {
                self.notify(if forward {
                    "the last step where annotators differ; :disagree leaves the queue"
                } else {
                    "the first step where annotators differ"
                });
                Vec::new()
            }
        })
    }

    fn open_disagreement(&mut self) -> Vec<Command> {
        let Some(queue) = &self.disagree else {
            return Vec::new();
        };
        let step = &queue.steps[queue.at];
        let kinds: Vec<String> = step
            .kinds
            .iter()
            .map(|(author, kinds)| {
                let names: Vec<&str> = kinds
                    .iter()
                    .map(|&kind| self.label_kinds.name(kind))
                    .collect();
                match names.is_empty() {
                    true => format!("{author}: no error"),
                    false => format!("{author}: {}", names.join("+")),
                }
            })
            .collect();
        let message = format!(
            "disagreement {} of {} · t{} · {}",
            queue.at + 1,
            queue.steps.len(),
            step.step + 1,
            kinds.join(" · ")
        );
        let (id, at) = (step.trajectory, step.step as usize);
        let commands = self.open_trajectory_at(id, at);
        self.notify(message);
        commands
    }
}
