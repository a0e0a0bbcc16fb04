//! `rollscope rollout`: multi-turn rollouts of a policy on a task set, stored with their
//! token traces, rewards and process scores, then a summary.

use super::Cli;
use super::model::{RuntimeArgs, load_model};
use crate::agent::rollout::RolloutConfig;
use crate::agent::tasks::TaskSetSpec;
use crate::run::{JobPolicy, RolloutJob, RolloutProgress, RolloutSummary, run_rollout_job};
use anyhow::Context;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::Path;

/// Arguments of `rollscope rollout`.
#[derive(Debug, Args)]
pub struct RolloutArgs {
    /// Task set: gsm8k:train, gsm8k:test, arith, arith:3, arith:2:eval, arith:1+1 (a distractor
    /// sentence more), lookup, or a task JSONL file.
    #[arg(long, default_value = "arith:1:eval")]
    pub tasks: TaskSetSpec,
    /// How many tasks.
    #[arg(long, short = 'n', default_value_t = 64)]
    pub n: usize,
    /// Samples per task (a GRPO group).
    #[arg(long, default_value_t = 4)]
    pub group: u32,
    /// A model folder [default: the session's current policy]; with --endpoint, the served
    /// model's name.
    #[arg(long)]
    pub model: Option<String>,
    /// An OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (vLLM, SGLang,
    /// llama.cpp server, `rollscope serve`).
    #[arg(long)]
    pub endpoint: Option<String>,
    /// Tools to offer, comma-separated (default: the tools each task offers).
    #[arg(long, value_delimiter = ',')]
    pub tools: Vec<String>,
    /// Process scores to compute, comma-separated: rule, mc (Monte-Carlo), or none.
    #[arg(long, value_delimiter = ',', default_value = "rule")]
    pub prm: Vec<PrmKind>,
    /// Continuations per step for Monte-Carlo process scores.
    #[arg(long, default_value_t = 4)]
    pub mc_samples: usize,
    /// Sampling temperature (0 = greedy).
    #[arg(long, default_value_t = 1.0)]
    pub temperature: f64,
    /// Assistant turns at most.
    #[arg(long, default_value_t = 4)]
    pub max_turns: usize,
    /// New tokens per turn at most.
    #[arg(long, default_value_t = 192)]
    pub max_new_tokens: usize,
    /// Seed of task sampling and of the samplers.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Device and dtype of a local model.
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

/// A kind of process score `--prm` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PrmKind {
    /// The rule checker on every step.
    Rule,
    /// Monte-Carlo continuations from every step (`--mc-samples` of them).
    Mc,
    /// No process scores.
    None,
}

/// `rollscope rollout`.
pub fn rollout(cli: &Cli, args: &RolloutArgs) -> anyhow::Result<()> {
    let context = super::train::run_context(cli, &args.runtime)?;
    context
        .environment
        .tools
        .check_names(&args.tools)
        .context("--tools")?;
    let job = RolloutJob {
        task_seed: args.seed,
        tasks: args.tasks.clone(),
        n: args.n,
        group: args.group,
        config: RolloutConfig {
            max_turns: args.max_turns,
            max_new_tokens: args.max_new_tokens,
            temperature: args.temperature,
            seed: args.seed,
            tools: args.tools.clone(),
            prm_rule: args.prm.contains(&PrmKind::Rule),
            prm_monte_carlo: if args.prm.contains(&PrmKind::Mc) {
                args.mc_samples
            } else {
                0
            },
            ..RolloutConfig::default()
        },
    };
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} rollouts [{bar:40}] {pos}/{len} {msg} ({elapsed}, eta {eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut on_progress = |progress: RolloutProgress| {
        bar.set_length(progress.total as u64);
        bar.set_position(progress.done as u64);
        if let Some(rate) = progress.pass_rate {
            bar.set_message(format!("{:.0}% pass", 100.0 * rate));
        }
    };
    let outcome = match &args.endpoint {
        Some(url) => {
            let name = args.model.as_deref().unwrap_or("default");
            let policy = JobPolicy::Endpoint { url, model: name };
            run_rollout_job(&context, &job, policy, &mut on_progress)
        }
        None => {
            let flag = args.model.as_deref().map(Path::new);
            let dir = super::model::policy_dir(cli, flag, Some(&context.store))?;
            let model = load_model(&dir, &args.runtime)?;
            let policy = JobPolicy::Local {
                model: &model,
                dir: &dir,
            };
            run_rollout_job(&context, &job, policy, &mut on_progress)
        }
    };
    bar.finish_and_clear();
    let (run, summary) = outcome?;
    if cli.json {
        let report = serde_json::json!({"run": run, "summary": summary});
        println!("{}", crate::text_json::inert_json(&report)?);
    } else {
        print_summary(&summary, &run);
    }
    Ok(())
}

fn print_summary(summary: &RolloutSummary, run: &str) {
    println!(
        "{run}: {} trajectories in {:.1} s · success {:.1}% · {:.2} turns on average · {} tool calls ({} failed) · {:.0} tokens/s",
        summary.trajectories,
        summary.seconds,
        100.0 * summary.success_rate,
        summary.mean_turns,
        summary.tool_calls,
        summary.tool_errors,
        summary.tokens_per_second
    );
    let stops: Vec<String> = summary
        .stop_reasons
        .iter()
        .map(|(reason, n)| format!("{reason} {n}"))
        .collect();
    println!("stop reasons: {}", stops.join(" · "));
    println!("browse them: rollscope list --run {run}   ·   rollscope tui");
}
