//! `rollscope fork`: continue a stored trajectory from one of its turns N times (its prefix
//! kept, a tool result or user message optionally edited), or from every turn for
//! success-from-here, and print the success rates with their 95% intervals.

use super::Cli;
use super::filter_args::FilterArgs;
use super::model::{RuntimeArgs, load_model};
use crate::agent::rollout::Edit;
use crate::engine::ForkLaunch;
use crate::run::{
    ForkJob, ForkOutcome, ForkTurns, JobPolicy, ParentForks, fork_policy_dir, load_parents,
    run_fork_job,
};
use crate::trajectory::TrajectoryId;
use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;

/// Arguments of `rollscope fork`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  rollscope fork 3fa2 --turn 2 -n 16            success from turn 2, 16 continuations
  rollscope fork 3fa2 --observation 1=42        had turn 1's tool answered 42 (turn 2 on)
  rollscope fork 3fa2 --user 1=@question.txt    the question reworded, from turn 1
  rollscope fork 3fa2 --all-turns -n 8          success-from-here after every turn
  rollscope fork --fail --run grpo-0001 --all-turns -n 8 --limit 50")]
pub struct ForkArgs {
    /// The trajectory (an id or a unique prefix); without it, the filter flags select
    /// trajectories (at most --limit).
    pub id: Option<String>,
    /// The turn to continue from, 1-based (the turns before it are kept).
    #[arg(long, conflicts_with = "all_turns")]
    pub turn: Option<usize>,
    /// Continue from every turn: success-from-here, stored as Monte-Carlo step scores.
    #[arg(long)]
    pub all_turns: bool,
    /// Continuations per turn.
    #[arg(short = 'n', long, default_value_t = 8)]
    pub n: usize,
    /// Replace the result of turn K's tool call before continuing from turn K+1: K=TEXT,
    /// K.I=TEXT for its I-th result, TEXT as @FILE to read it from a file.
    #[arg(long, value_name = "K=TEXT", conflicts_with = "all_turns")]
    pub observation: Vec<String>,
    /// Replace the user message before turn K (1: the task's question) and continue from
    /// turn K: K=TEXT or K=@FILE.
    #[arg(long, value_name = "K=TEXT", conflicts_with = "all_turns")]
    pub user: Vec<String>,
    /// The policy: a model folder, or a step of the trajectory's run whose policy the
    /// session saved [default: the policy that wrote it, else the session's policy].
    #[arg(long, value_name = "DIR|STEP")]
    pub policy: Option<String>,
    /// An OpenAI-compatible endpoint to continue with instead (the prefix is sent as
    /// messages), e.g. http://127.0.0.1:8000/v1.
    #[arg(long, conflicts_with = "policy")]
    pub endpoint: Option<String>,
    /// The served model's name, with --endpoint.
    #[arg(long, requires = "endpoint", default_value = "default")]
    pub model: String,
    /// Sampling temperature [default: the trajectory's run's].
    #[arg(long)]
    pub temperature: Option<f64>,
    /// Seed of the continuations' samplers: the same fork with the same seed gives the same
    /// children.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Trajectories a filter selects, at most.
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
    /// Which trajectories, without an id.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Device and dtype of a local policy.
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

/// `rollscope fork`.
pub fn fork(cli: &Cli, args: &ForkArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.n > 0, "-n must be at least 1");
    let edits = edits(args)?;
    let turns = match (args.turn, args.all_turns, edits.first()) {
        (_, true, _) => ForkTurns::All,
        (Some(turn), false, _) => ForkTurns::One(turn),
        (None, false, Some(edit)) => ForkTurns::One(edit.fork_turn()),
        (None, false, None) => anyhow::bail!(
            "say where to fork from: --turn K (1-based), --all-turns, or an edit \
             (--observation K=TEXT continues from turn K+1)"
        ),
    };
    let request = ForkRequest {
        turns,
        edits,
        n: args.n,
        seed: args.seed,
        temperature: args.temperature,
        endpoint: args
            .endpoint
            .as_deref()
            .map(|url| (url, args.model.as_str())),
        policy: args.policy.as_deref(),
        runtime: &args.runtime,
    };
    run_forks(cli, &request, |store| parent_ids(cli, store, args))
}

/// A fork launched from a TUI (a job spec): one trajectory from one turn, its tool result
/// before that turn optionally replaced.
pub(super) fn fork_launch(
    cli: &Cli,
    launch: &ForkLaunch,
    runtime: &RuntimeArgs,
) -> anyhow::Result<()> {
    let edits = launch
        .observation
        .iter()
        .map(|text| Edit::Observation {
            turn: launch.turn.saturating_sub(1),
            call: 0,
            text: text.clone(),
        })
        .collect();
    let request = ForkRequest {
        turns: ForkTurns::One(launch.turn),
        edits,
        n: launch.n,
        seed: 0,
        temperature: None,
        endpoint: None,
        policy: launch.policy.as_deref(),
        runtime,
    };
    run_forks(cli, &request, |_| Ok(vec![launch.id]))
}

/// What to fork with, whoever asked.
struct ForkRequest<'a> {
    turns: ForkTurns,
    edits: Vec<Edit>,
    n: usize,
    seed: u64,
    temperature: Option<f64>,
    /// An OpenAI-compatible endpoint and its model's name, instead of a local policy.
    endpoint: Option<(&'a str, &'a str)>,
    /// A model folder or a step of the trajectory's run.
    policy: Option<&'a str>,
    runtime: &'a RuntimeArgs,
}

/// Forks the trajectories `parents` picks from the store, with a progress bar, and prints
/// the success rates.
fn run_forks(
    cli: &Cli,
    request: &ForkRequest<'_>,
    parents: impl FnOnce(&crate::store::Store) -> anyhow::Result<Vec<TrajectoryId>>,
) -> anyhow::Result<()> {
    let context = super::train::run_context(cli, request.runtime)?;
    let parents = load_parents(&context.store, &parents(&context.store)?)?;
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} forks [{bar:40}] {pos}/{len} ({elapsed}, eta {eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut on_progress = |done: usize, total: usize| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    };
    let mut job = ForkJob {
        parents,
        turns: request.turns.clone(),
        edits: request.edits.clone(),
        n: request.n,
        seed: request.seed,
        temperature: request.temperature,
        policy_version: None,
    };
    let outcome = match request.endpoint {
        Some((url, model)) => {
            let policy = JobPolicy::Endpoint { url, model };
            run_fork_job(&context, &job, policy, &mut on_progress)
        }
        None => {
            let (dir, version) = match request.policy {
                Some(step) if step.parse::<u64>().is_ok() => {
                    fork_policy_dir(&context, &job.parents, step.parse().ok())?
                }
                Some(dir) => (PathBuf::from(dir), None),
                None => fork_policy_dir(&context, &job.parents, None)?,
            };
            job.policy_version = version;
            let model = load_model(&dir, request.runtime)?;
            let policy = JobPolicy::Local {
                model: &model,
                dir: &dir,
            };
            run_fork_job(&context, &job, policy, &mut on_progress)
        }
    };
    bar.finish_and_clear();
    let outcome = outcome?;
    if cli.json {
        println!("{}", crate::text_json::inert_json(&outcome)?);
    } else {
        print_outcome(&outcome, job.n);
    }
    Ok(())
}

/// The trajectories to fork: the id given, else those the filter selects.
fn parent_ids(
    cli: &Cli,
    store: &crate::store::Store,
    args: &ForkArgs,
) -> anyhow::Result<Vec<TrajectoryId>> {
    if let Some(id) = &args.id {
        return Ok(vec![store.resolve(id)?]);
    }
    let filter = args.filter.to_filter(cli)?;
    anyhow::ensure!(
        filter != crate::store::Filter::default(),
        "name a trajectory (rollscope fork ID …) or select some with filter flags (--fail, --run RUN, …)"
    );
    let mut ids = store.ids(&filter)?;
    anyhow::ensure!(!ids.is_empty(), "no trajectory matches the filter");
    ids.truncate(args.limit);
    Ok(ids)
}

/// The edits of the command line, `K=TEXT`, `K.I=TEXT` or `K=@FILE`.
fn edits(args: &ForkArgs) -> anyhow::Result<Vec<Edit>> {
    let mut edits = Vec::new();
    for spec in &args.observation {
        let (place, text) = split_edit(spec, "--observation")?;
        let (turn, call) = match place.split_once('.') {
            Some((turn, call)) => (turn, call.parse::<usize>().ok().filter(|&call| call >= 1)),
            None => (place.as_str(), Some(1)),
        };
        let call = call.with_context(|| format!("--observation {spec}: K.I needs I = 1, 2, …"))?;
        edits.push(Edit::Observation {
            turn: parse_turn(turn, spec, "--observation")?,
            call: call - 1,
            text,
        });
    }
    for spec in &args.user {
        let (place, text) = split_edit(spec, "--user")?;
        edits.push(Edit::User {
            turn: parse_turn(&place, spec, "--user")?,
            text,
        });
    }
    Ok(edits)
}

fn split_edit(spec: &str, flag: &str) -> anyhow::Result<(String, String)> {
    let (place, text) = spec
        .split_once('=')
        .with_context(|| format!("{flag} {spec}: write K=TEXT or K=@FILE"))?;
    let text = match text.strip_prefix('@') {
        Some(path) => std::fs::read_to_string(path)
            .with_context(|| format!("{flag} {spec}: cannot read {path}"))?,
        None => text.to_string(),
    };
    Ok((place.to_string(), text))
}

fn parse_turn(text: &str, spec: &str, flag: &str) -> anyhow::Result<usize> {
    text.parse::<usize>()
        .ok()
        .filter(|&turn| turn >= 1)
        .with_context(|| format!("{flag} {spec}: K is a turn number, 1-based"))
}

fn print_outcome(outcome: &ForkOutcome, n: usize) {
    println!(
        "{}: forks by {} ({n} continuations a turn)",
        outcome.run, outcome.policy
    );
    for parent in &outcome.parents {
        print_parent(parent);
    }
    if outcome.parents.len() > 1 {
        let drops: Vec<usize> = outcome
            .parents
            .iter()
            .filter_map(|p| p.largest_drop())
            .map(|(turn, _)| turn)
            .collect();
        println!(
            "{} trajectories; a largest drop found on {}",
            outcome.parents.len(),
            drops.len()
        );
    }
    println!(
        "children: `rollscope list --run {}`, one with `rollscope show ID`",
        outcome.run
    );
}

fn print_parent(parent: &ParentForks) {
    let verdict = match parent.passed {
        Some(true) => "passed",
        Some(false) => "failed",
        None => "unscored",
    };
    let reward = parent
        .reward
        .map_or(String::new(), |reward| format!(", reward {reward:.2}"));
    let turns = match parent.turns {
        1 => "1 turn".to_string(),
        n => format!("{n} turns"),
    };
    println!(
        "{} (the original {verdict}{reward}, {turns})",
        parent.parent
    );
    for fork in &parent.forks {
        println!(
            "  from turn {:>2}: {}  · prefix: {}",
            fork.turn,
            fork.success.describe(),
            fork.prefix.describe()
        );
    }
    if let Some(values) = parent.values() {
        let line: Vec<String> = values
            .iter()
            .map(|value| format!("{:.0}%", 100.0 * value))
            .collect();
        println!(
            "  success from here, before each turn then after the last: {}",
            line.join(" → ")
        );
        match parent.largest_drop() {
            Some((turn, drop)) => {
                println!("  largest drop: turn {turn} (−{:.0} points)", 100.0 * drop)
            }
            None => println!("  no turn lowers it"),
        }
    }
}
