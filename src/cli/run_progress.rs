//! The terminal view of a running training run: a step bar whose message follows the phase
//! (rollouts 37/128, update, eval 120/200), and one summary line per step above it.

use crate::run::{Phase, RunEvent};
use crate::trajectory::MetricsRow;
use crate::trajectory::metric;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Shows the events of one run on standard error (`--json`: JSON lines on standard output).
pub struct CliProgress {
    bar: ProgressBar,
    json: bool,
    total: u64,
    started_at: u64,
}

impl CliProgress {
    /// A hidden bar until the run starts.
    pub fn new(json: bool) -> Self {
        Self {
            bar: ProgressBar::hidden(),
            json,
            total: 0,
            started_at: 0,
        }
    }

    /// Shows one event.
    pub fn on_event(&mut self, event: RunEvent) {
        match event {
            RunEvent::Started {
                run,
                step,
                total_steps,
            } => {
                self.total = total_steps;
                self.started_at = step;
                self.bar = count_bar(total_steps as usize, &run, self.json);
                self.bar.set_position(step);
                if step > 0 {
                    self.line(format!("{run}: resuming after step {step}"));
                }
            }
            RunEvent::Progress {
                step,
                phase,
                done,
                total,
            } => {
                let detail = match phase {
                    Phase::Rollouts | Phase::Eval => format!("{} {done}/{total}", phase.name()),
                    _ => phase.name().to_string(),
                };
                self.bar.set_message(format!("step {step}: {detail}"));
            }
            RunEvent::Step(row) => {
                self.bar.set_position(row.step);
                if self.json {
                    if let Ok(line) = crate::text_json::inert_json(&row) {
                        println!("{line}");
                    }
                } else if self.worth_a_line(&row) {
                    self.line(step_line(&row, self.total));
                }
            }
            RunEvent::Eval { step, figures } => {
                if !self.json {
                    self.line(format!("  eval @ {step}: {}", figures.line()));
                }
            }
            RunEvent::Paused => self.bar.set_message("paused"),
            RunEvent::Finished { .. } => self.bar.finish_and_clear(),
        }
    }

    /// Prints a line above the bar, or plainly when standard error is not a terminal.
    fn line(&self, text: String) {
        if self.bar.is_hidden() {
            eprintln!("{text}");
        } else {
            self.bar.println(text);
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    /// GRPO steps all get a line; long SFT runs one in ten, the first and the last.
    fn worth_a_line(&self, row: &MetricsRow) -> bool {
        self.total <= 60 || row.step.is_multiple_of(10) || row.step == self.total || row.step == 1
    }
}

/// `step 3/40 · reward 0.42 ± 0.31 · success 41% · kl 0.0021 · …`: the figures a step has.
pub fn step_line(row: &MetricsRow, total: u64) -> String {
    let value = |name: &str| row.values.get(name).copied();
    let mut parts = vec![format!("step {}/{total}", row.step)];
    let mut add = |name: &str, text: Option<String>| {
        if let Some(text) = text {
            parts.push(format!("{name} {text}"));
        }
    };
    add(
        "reward",
        value(metric::REWARD)
            .map(|r| format!("{r:.3} ± {:.3}", value(metric::REWARD_STD).unwrap_or(0.0))),
    );
    add(
        "success",
        value(metric::SUCCESS_RATE).map(|s| format!("{:.0}%", 100.0 * s)),
    );
    add("loss", value(metric::LOSS).map(|l| format!("{l:.4}")));
    add(
        "token acc",
        value(metric::MEAN_TOKEN_ACCURACY).map(|a| format!("{:.1}%", 100.0 * a)),
    );
    add("kl", value(metric::KL).map(|k| format!("{k:.4}")));
    add("grad", value(metric::GRAD_NORM).map(|g| format!("{g:.2}")));
    add(
        "lr",
        value(metric::LEARNING_RATE).map(|l| format!("{l:.1e}")),
    );
    add(
        "len",
        value(metric::MEAN_LENGTH).map(|l| format!("{l:.0} tok")),
    );
    add(
        "zero-std",
        value(metric::FRAC_REWARD_ZERO_STD).map(|f| format!("{:.0}%", 100.0 * f)),
    );
    add(
        "eval",
        value(metric::EVAL_ACCURACY).map(|a| format!("{:.1}%", 100.0 * a)),
    );
    add(
        "time",
        value(metric::STEP_TIME).map(|t| format!("{t:.1} s")),
    );
    parts.join(" · ")
}

/// A bar over `total` units on standard error (hidden for `--json` or off a terminal).
pub fn count_bar(total: usize, name: &str, json: bool) -> ProgressBar {
    let bar = ProgressBar::new(total as u64);
    if json {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{name} [{{bar:30}}] {{pos}}/{{len}} {{msg}} ({{elapsed}}, eta {{eta}})"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}
