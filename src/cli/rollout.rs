//! `rollscope rollout`: multi-turn rollouts of a policy on a task set, stored with their
//! token traces, rewards and process scores, then a summary.

use super::Cli;
use super::model::{RuntimeArgs, load_model};
use crate::agent::rollout::{
    HttpPolicy, LocalPolicy, Policy, RolloutConfig, RolloutRequest, run_rollouts,
};
use crate::agent::tasks::TaskSetSpec;
use crate::run::session_environment;
use crate::session::{SessionConfig, SessionPaths};
use crate::trajectory::{RunInfo, RunKind, RunStatus, Trajectory, now_millis};
use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Arguments of `rollscope rollout`.
#[derive(Debug, Args)]
pub struct RolloutArgs {
    /// Task set: gsm8k, arith, arith:3, arith:2:eval, lookup, or a task JSONL file.
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
    /// Process scores to compute: rule, mc (Monte-Carlo), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "rule")]
    pub prm: Vec<String>,
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

/// The model folder to use: the flag, the session's `model`, or its newest policy version.
pub fn model_dir(
    paths: &SessionPaths,
    config: &SessionConfig,
    flag: Option<&str>,
) -> anyhow::Result<PathBuf> {
    if let Some(dir) = flag {
        return Ok(PathBuf::from(dir));
    }
    if let Some(dir) = &config.model {
        return Ok(dir.clone());
    }
    paths.current_model().with_context(|| {
        format!(
            "session `{}` has no model yet: run `rollscope model init` (the embedded default) or pass --model DIR",
            paths.name
        )
    })
}

/// `rollscope rollout`.
pub fn rollout(cli: &Cli, args: &RolloutArgs) -> anyhow::Result<()> {
    let paths = cli.session_paths()?;
    let session = paths.load_config()?;
    let store = cli.open_store()?;
    let tasks = args.tasks.load(Some(args.n), args.seed)?;
    anyhow::ensure!(!tasks.is_empty(), "the task set {} is empty", args.tasks);
    store.put_tasks(&tasks)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let (policy, model_name, decode_thread) = match &args.endpoint {
        Some(endpoint) => {
            let name = args.model.clone().unwrap_or_else(|| "default".into());
            let http = HttpPolicy::new(endpoint, &name, Duration::from_secs(600));
            (Policy::Http(http), format!("{endpoint} ({name})"), None)
        }
        None => {
            let dir = model_dir(&paths, &session, args.model.as_deref())?;
            let model = load_model(&dir, &args.runtime)?;
            let (local, thread) = LocalPolicy::spawn(model.decoder(), model.stop_token_ids())?;
            let chat = Arc::new(model.chat.clone());
            (
                Policy::Local {
                    policy: local,
                    chat,
                },
                dir.display().to_string(),
                Some(thread),
            )
        }
    };
    let environment = runtime.block_on(async { session_environment(&paths, &session) })?;
    let config = RolloutConfig {
        max_turns: args.max_turns,
        max_new_tokens: args.max_new_tokens,
        temperature: args.temperature,
        seed: args.seed,
        tools: args.tools.clone(),
        prm_rule: args.prm.iter().any(|p| p == "rule"),
        prm_monte_carlo: if args.prm.iter().any(|p| p == "mc") {
            args.mc_samples
        } else {
            0
        },
        ..RolloutConfig::default()
    };
    let run_id = store.next_run_id(RunKind::Rollout)?;
    let mut run = RunInfo {
        id: run_id.clone(),
        kind: RunKind::Rollout,
        status: RunStatus::Running,
        config: serde_json::to_value(&config)?,
        seed: args.seed,
        model: model_name,
        code_version: env!("CARGO_PKG_VERSION").to_string(),
        parent: None,
        created_at: now_millis(),
        step: 0,
        total_steps: 1,
        note: Some(format!(
            "{} tasks of {} × {} samples",
            tasks.len(),
            args.tasks,
            args.group
        )),
    };
    store.put_run(&run)?;
    let requests: Vec<RolloutRequest> = tasks
        .into_iter()
        .enumerate()
        .flat_map(|(index, task)| {
            let task = Arc::new(task);
            let run_id = run_id.clone();
            (0..args.group).map(move |sample| RolloutRequest {
                task: task.clone(),
                run: run_id.clone(),
                policy_version: 0,
                group: index as u64,
                sample,
            })
        })
        .collect();
    let bar = ProgressBar::new(requests.len() as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} rollouts [{bar:40}] {pos}/{len} {msg} ({elapsed}, eta {eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let started = Instant::now();
    let mut finished = Vec::new();
    let mut pending = Vec::new();
    let mut write_error = None;
    runtime.block_on(run_rollouts(
        &policy,
        &environment,
        &config,
        requests,
        |trajectory| {
            bar.inc(1);
            pending.push(trajectory);
            if pending.len() >= 16 {
                if let Err(error) = store.put_trajectories(&pending) {
                    write_error.get_or_insert(error);
                }
                finished.append(&mut pending);
                let passed = finished.iter().filter(|t| t.passed() == Some(true)).count();
                bar.set_message(format!(
                    "{:.0}% pass",
                    100.0 * passed as f64 / finished.len() as f64
                ));
            }
        },
    ));
    store.put_trajectories(&pending)?;
    finished.append(&mut pending);
    bar.finish_and_clear();
    if let Some(error) = write_error {
        return Err(error).context("storing trajectories failed");
    }
    let seconds = started.elapsed().as_secs_f64();
    drop(policy);
    let decode = decode_thread.and_then(|thread| thread.join().ok());
    run.status = RunStatus::Done;
    run.step = 1;
    store.put_run(&run)?;
    let summary = Summary::of(&finished, seconds, decode.map(|stats| stats.tokens));
    if cli.json {
        println!(
            "{}",
            serde_json::json!({"run": run_id, "summary": summary.to_json()})
        );
    } else {
        summary.print(&run_id);
    }
    Ok(())
}

/// What a rollout run produced.
struct Summary {
    trajectories: usize,
    passed: usize,
    mean_turns: f64,
    tool_calls: usize,
    tool_errors: usize,
    policy_tokens: usize,
    seconds: f64,
    stops: BTreeMap<String, usize>,
}

impl Summary {
    fn of(trajectories: &[Trajectory], seconds: f64, decoded: Option<u64>) -> Self {
        let mut stops = BTreeMap::new();
        for trajectory in trajectories {
            *stops.entry(trajectory.stop_reason.to_string()).or_insert(0) += 1;
        }
        let traced: usize = trajectories
            .iter()
            .map(|t| match &t.token_trace {
                Some(trace) => trace.policy_tokens(),
                None => t
                    .extra
                    .get("policy_tokens")
                    .and_then(serde_json::Value::as_u64)
                    .unwrap_or(0) as usize,
            })
            .sum();
        Self {
            trajectories: trajectories.len(),
            passed: trajectories
                .iter()
                .filter(|t| t.passed() == Some(true))
                .count(),
            mean_turns: trajectories
                .iter()
                .map(Trajectory::turn_count)
                .sum::<usize>() as f64
                / trajectories.len().max(1) as f64,
            tool_calls: trajectories.iter().map(Trajectory::tool_call_count).sum(),
            tool_errors: trajectories.iter().map(Trajectory::tool_error_count).sum(),
            policy_tokens: decoded.map_or(traced, |tokens| tokens as usize),
            seconds,
            stops,
        }
    }

    fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "trajectories": self.trajectories,
            "success_rate": self.passed as f64 / self.trajectories.max(1) as f64,
            "mean_turns": self.mean_turns,
            "tool_calls": self.tool_calls,
            "tool_errors": self.tool_errors,
            "tokens_per_second": self.policy_tokens as f64 / self.seconds.max(1e-9),
            "seconds": self.seconds,
            "stop_reasons": self.stops,
        })
    }

    fn print(&self, run: &str) {
        println!(
            "{run}: {} trajectories in {:.1} s · success {:.1}% · {:.2} turns on average · {} tool calls ({} failed) · {:.0} tokens/s",
            self.trajectories,
            self.seconds,
            100.0 * self.passed as f64 / self.trajectories.max(1) as f64,
            self.mean_turns,
            self.tool_calls,
            self.tool_errors,
            self.policy_tokens as f64 / self.seconds.max(1e-9)
        );
        let stops: Vec<String> = self
            .stops
            .iter()
            .map(|(reason, n)| format!("{reason} {n}"))
            .collect();
        println!("stop reasons: {}", stops.join(" · "));
        println!("browse them: rollscope list --run {run}   ·   rollscope tui");
    }
}
