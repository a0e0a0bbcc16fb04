//! `show` and `label`: one trajectory in the terminal, and labelling it.

use super::{Cli, output};
use crate::curate::labels::LabelKinds;
use crate::store::Store;
use crate::text::{clip, inert};
use crate::trajectory::{Label, LabelStatus, Role, Trajectory, now_millis};
use clap::Args;
use std::fmt::Write as _;

/// Arguments of `rollscope show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The trajectory id (a unique prefix is enough).
    pub id: String,
    /// Print the system prompt and observations in full instead of their first lines.
    #[arg(long)]
    pub full: bool,
    /// Print the token trace: each token with its loss-mask bit and log-prob.
    #[arg(long)]
    pub tokens: bool,
}

/// Arguments of `rollscope label`.
#[derive(Debug, Args)]
pub struct LabelArgs {
    /// The trajectory id (a unique prefix is enough).
    pub id: String,
    /// The step (turn) to label, 1-based as `show` prints it.
    #[arg(long)]
    pub turn: u32,
    /// The error kind: calculation, reasoning, understanding, format, or a kind the session
    /// names under [[labels]] in session.toml.
    #[arg(long)]
    pub kind: String,
    /// A note explaining the label.
    #[arg(long)]
    pub note: Option<String>,
    /// Record it as a suggestion rather than a confirmed label.
    #[arg(long)]
    pub suggested: bool,
    /// Remove the label of that kind from that step instead of adding it.
    #[arg(long)]
    pub remove: bool,
}

/// `rollscope show`.
pub fn show(cli: &Cli, args: &ShowArgs) -> anyhow::Result<()> {
    let store = cli.open_store()?;
    let id = store.resolve(&args.id)?;
    let trajectory = store
        .get(id)?
        .ok_or_else(|| anyhow::anyhow!("no trajectory with id {id}"))?;
    if cli.json {
        println!("{}", crate::text_json::inert_json_pretty(&trajectory)?);
        return Ok(());
    }
    print!(
        "{}",
        render(&store, &trajectory, &cli.label_kinds()?, args.full)?
    );
    if args.tokens {
        print!("{}", render_tokens(&trajectory));
    }
    Ok(())
}

/// A trajectory as plain text, turn by turn, labels named as the session names them.
pub fn render(
    store: &Store,
    trajectory: &Trajectory,
    kinds: &LabelKinds,
    full: bool,
) -> anyhow::Result<String> {
    let mut out = String::new();
    let task = match &trajectory.task_id {
        Some(task_id) => store.get_task(task_id)?,
        None => None,
    };
    let reward = trajectory
        .reward
        .as_ref()
        .map_or("no reward".to_string(), |reward| {
            let parts: Vec<String> = reward
                .components
                .iter()
                .map(|(name, value)| format!("{name} {value:.2}"))
                .collect();
            let verdict = if reward.is_pass() { "pass" } else { "fail" };
            if parts.is_empty() {
                format!("reward {:.2} {verdict}", reward.total)
            } else {
                format!(
                    "reward {:.2} {verdict} ({})",
                    reward.total,
                    parts.join(" · ")
                )
            }
        });
    writeln!(
        out,
        "{} · task {} · {} · {} · {} · {}",
        trajectory.id,
        trajectory.task_id.as_deref().unwrap_or("–"),
        output::coordinates(
            trajectory.run.clone(),
            trajectory.policy_version.map(|v| format!("step {v}"))
        ),
        output::coordinates(
            trajectory.group.map(|g| format!("group {g}")),
            trajectory.sample.map(|s| format!("sample {}", s + 1))
        ),
        reward,
        trajectory.stop_reason
    )?;
    if let Some(truth) = task.as_ref().and_then(|task| task.ground_truth.as_deref()) {
        writeln!(out, "ground truth  {}", inert(truth))?;
    }
    if let Some(advantage) = trajectory.advantage {
        writeln!(out, "advantage     {advantage:+.3}")?;
    }
    if let Some(origin) = &trajectory.fork {
        writeln!(
            out,
            "fork of      {} from t{} · continuation {} · seed {} · {} · prefix: {}",
            origin.parent,
            origin.turn,
            origin.index + 1,
            origin.seed,
            origin.policy,
            origin.prefix.describe()
        )?;
    }
    for branch in &trajectory.branches {
        let edited = if branch.edited { ", edited" } else { "" };
        let first = branch
            .children
            .first()
            .map_or(String::new(), |id| format!(" · first {id}"));
        writeln!(
            out,
            "branch       from t{} × {} ({} pass{edited}) · {}{first}",
            branch.turn,
            branch.children.len(),
            branch.passed,
            branch.run
        )?;
    }
    let steps = trajectory.steps();
    let mut turn = 0;
    let mut observation = 0;
    for (index, message) in trajectory.messages.iter().enumerate() {
        match message.role {
            Role::Assistant => {
                turn += 1;
                if trajectory
                    .fork
                    .as_ref()
                    .is_some_and(|origin| origin.turn as usize == turn)
                {
                    writeln!(out, "\n── sampled again from here ──")?;
                }
                writeln!(out, "\nt{turn} assistant")?;
                if let Some(reasoning) = &message.reasoning {
                    writeln!(out, "  (reasoning) {}", indent(&inert(reasoning)))?;
                }
                for (step, location) in steps.iter().enumerate().filter(|(_, l)| l.message == index)
                {
                    if location.span.is_some() {
                        writeln!(
                            out,
                            "  s{} {}",
                            step + 1,
                            indent(&inert(message.span_text(location.span)))
                        )?;
                    }
                    write_step_marks(&mut out, trajectory, kinds, step as u32)?;
                }
                if message.spans.is_empty() && !message.content.is_empty() {
                    writeln!(out, "  {}", indent(&inert(&message.content)))?;
                }
                for call in &message.tool_calls {
                    writeln!(out, "  → {} {}", inert(&call.name), inert(&call.arguments))?;
                }
            }
            Role::Tool => {
                observation += 1;
                let error = if message.is_error { " · error" } else { "" };
                let latency = message
                    .latency_ms
                    .map_or(String::new(), |ms| format!(" · {ms:.0} ms"));
                let name = message.name.as_deref().unwrap_or("tool");
                writeln!(
                    out,
                    "o{observation} {name}{error}{latency} · not trained{}",
                    edited_mark(trajectory, index)
                )?;
                let text = inert(&message.content);
                let shown = if full {
                    text
                } else {
                    clip(&text, 600).into_owned().into()
                };
                writeln!(out, "  {}", indent(&shown))?;
            }
            _ => {
                let text = inert(&message.content);
                let shown = if full || message.role == Role::User {
                    text
                } else {
                    clip(text.lines().next().unwrap_or(""), 100)
                        .into_owned()
                        .into()
                };
                writeln!(
                    out,
                    "{:<9} {}{}",
                    message.role.as_str(),
                    indent(&shown),
                    edited_mark(trajectory, index)
                )?;
            }
        }
    }
    Ok(out)
}

/// ` · edited (was: …)` for a message a fork replaced.
fn edited_mark(trajectory: &Trajectory, message: usize) -> String {
    let edit = trajectory
        .fork
        .iter()
        .flat_map(|origin| &origin.edits)
        .find(|edit| edit.message == message);
    edit.map_or(String::new(), |edit| {
        format!(" · edited (was: {})", clip(&inert(&edit.original), 80))
    })
}

fn write_step_marks(
    out: &mut String,
    trajectory: &Trajectory,
    kinds: &LabelKinds,
    step: u32,
) -> std::fmt::Result {
    for score in trajectory.scores_of_step(step) {
        let note = score
            .note
            .as_deref()
            .map_or(String::new(), |note| format!(" ({note})"));
        writeln!(out, "  PRM {:.2} {}{note}", score.value, score.source)?;
    }
    for label in trajectory.labels_of_step(step) {
        let mark = if label.status == LabelStatus::Suggested {
            "?"
        } else {
            ""
        };
        let note = label
            .note
            .as_deref()
            .map_or(String::new(), |note| format!(" — {note}"));
        let author = label
            .author
            .as_deref()
            .map_or(String::new(), |author| format!(" by {author}"));
        writeln!(
            out,
            "  label {}{mark}{author}{note}",
            kinds.name(label.kind)
        )?;
    }
    Ok(())
}

fn indent(text: &str) -> String {
    text.replace('\n', "\n  ")
}

fn render_tokens(trajectory: &Trajectory) -> String {
    let Some(trace) = &trajectory.token_trace else {
        return "\n(no token trace recorded)\n".into();
    };
    let mut out = format!(
        "\ntokens: {} · trained on {} (mask 1)\n",
        trace.len(),
        trace.policy_tokens()
    );
    for (index, id) in trace.token_ids.iter().enumerate() {
        let mask = trace.loss_mask.get(index).copied().unwrap_or(0);
        let logprob = trace
            .logprobs
            .get(index)
            .filter(|_| mask == 1)
            .map_or(String::new(), |lp| format!(" {lp:.3}"));
        let _ = writeln!(out, "{index:>6} {id:>7} {mask}{logprob}");
    }
    out
}

/// `rollscope label`.
pub fn label(cli: &Cli, args: &LabelArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.turn >= 1, "--turn is 1-based: the first turn is 1");
    let config = cli.session_paths()?.load_config()?;
    let kinds = &config.labels;
    let kind = kinds
        .parse(&args.kind)
        .map_err(|error| anyhow::anyhow!("--kind: {error}"))?;
    anyhow::ensure!(
        kinds.defines(kind),
        "--kind: key {} names no kind in this session; add [[labels]] key = {} and a name to \
         session.toml",
        kind.digit(),
        kind.digit()
    );
    let store = cli.open_store()?;
    let id = store.resolve(&args.id)?;
    let step = args.turn - 1;
    let author = config.author();
    let saved = if args.remove {
        store.remove_labels(id, step, Some(kind), author.as_deref())?
    } else {
        store.add_label(
            id,
            Label {
                step,
                kind,
                status: if args.suggested {
                    LabelStatus::Suggested
                } else {
                    LabelStatus::Confirmed
                },
                note: args.note.clone(),
                author,
                time: now_millis(),
            },
        )?
    };
    if cli.json {
        println!("{}", crate::text_json::inert_json(&saved.labels)?);
    } else {
        let labels: Vec<String> = saved
            .labels_of_step(step)
            .map(|label| match &label.author {
                Some(author) => format!("{} ({author})", kinds.name(label.kind)),
                None => kinds.name(label.kind).to_string(),
            })
            .collect();
        println!(
            "{id} turn {}: {} (saved)",
            args.turn,
            if labels.is_empty() {
                "no labels".into()
            } else {
                labels.join(", ")
            }
        );
    }
    Ok(())
}
