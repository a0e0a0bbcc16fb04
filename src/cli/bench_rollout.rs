//! `rollscope bench rollout`: the overlap benchmark of the multi-turn loop. Every rollout
//! takes `turns` turns that each end in a call to a tool that sleeps `tool_ms`, then one
//! more turn that the turn limit cuts; the wall time of the run is compared with (a) the
//! same run with a tool that answers at once (generation alone) and (b) the same run with
//! `max_concurrent_tools = 1` (tools one at a time).
//!
//! Method: the embedded default model (random weights) would not write tool calls, so it
//! is first taught to, by SFT through the trainer on conversations of the benchmark's
//! prompts in which every assistant turn is `I wait for the clock.` and a `wait` call. The
//! runs then go through the code users run: `run_rollouts` over `LocalPolicy` (one decode
//! thread batching every ready episode, greedy) and a `ToolRegistry` holding the `wait`
//! tool; the model generates every token, the call included, and the loop parses, executes
//! and observes it. A run whose rollouts did not all make their `turns` calls is an error.

use super::Cli;
use super::bench_steps::{Timing, median, timed};
use super::model::RuntimeArgs;
use crate::agent::reward::RewardConfig;
use crate::agent::rollout::{
    DecodeStats, Environment, LocalPolicy, Policy, RolloutConfig, RolloutRequest, run_rollouts,
};
use crate::agent::tasks::TaskSetSpec;
use crate::agent::tools::{Tool, ToolFuture, ToolOutput, ToolRegistry, tool_spec};
use crate::model::embedded::{self, CHAT_TEMPLATE, EmbeddedSpec, default_corpus};
use crate::model::{ChatTemplate, LanguageModel};
use crate::train::{SftExample, Trainer, TrainerConfig};
use crate::trajectory::{Message, Role, Task, ToolCall, Trajectory};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What every taught assistant turn says before its call.
const TURN_TEXT: &str = "I wait for the clock.";
/// Conversations per SFT step while teaching.
const TEACH_BATCH: usize = 8;

/// Arguments of `rollscope bench rollout`.
#[derive(Debug, Args)]
pub struct BenchRolloutArgs {
    /// Rollouts per run.
    #[arg(long, default_value_t = 64)]
    pub rollouts: usize,
    /// Turns per rollout that end in a tool call.
    #[arg(long, default_value_t = 4)]
    pub turns: usize,
    /// How long the tool takes, in milliseconds.
    #[arg(long, default_value_t = 50)]
    pub tool_ms: u64,
    /// SFT steps at most to teach the model the turn (it stops once it has learned it).
    #[arg(long, default_value_t = 300)]
    pub teach_steps: usize,
    /// Timed repetitions of each run (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// Device and dtype.
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

/// A tool that sleeps on the runtime and answers `done`.
struct WaitTool {
    pause: Duration,
    parameters: Value,
}

impl WaitTool {
    fn new(pause: Duration) -> Self {
        Self {
            pause,
            parameters: json!({"type": "object", "properties": {}}),
        }
    }
}

impl Tool for WaitTool {
    fn name(&self) -> &str {
        "wait"
    }

    fn description(&self) -> &str {
        "Waits a moment."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn call(&self, _arguments: Map<String, Value>, _deadline: Instant) -> ToolFuture<'_> {
        Box::pin(async move {
            if !self.pause.is_zero() {
                tokio::time::sleep(self.pause).await;
            }
            ToolOutput::ok("done")
        })
    }
}

/// Figures of one run.
#[derive(Clone, Copy, Debug)]
struct RunFigures {
    timing: Timing,
    decode: DecodeStats,
    tool_calls: usize,
}

/// The three runs compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    Overlapped,
    GenerationOnly,
    SerialTools,
}

impl Variant {
    const ALL: [Variant; 3] = [
        Variant::Overlapped,
        Variant::GenerationOnly,
        Variant::SerialTools,
    ];

    fn key(self) -> &'static str {
        match self {
            Variant::Overlapped => "overlapped",
            Variant::GenerationOnly => "generation_only",
            Variant::SerialTools => "serial_tools",
        }
    }
}

/// The benchmark's tasks: arithmetic prompts offering only the `wait` tool.
fn bench_tasks(count: usize) -> anyhow::Result<Vec<Arc<Task>>> {
    let spec = tool_spec(&WaitTool::new(Duration::ZERO));
    let tasks = "arith:1:eval"
        .parse::<TaskSetSpec>()
        .map_err(anyhow::Error::msg)?
        .load(Some(count), 0)?;
    anyhow::ensure!(tasks.len() == count, "only {} tasks", tasks.len());
    Ok(tasks
        .into_iter()
        .map(|mut task| {
            task.tools = vec![spec.clone()];
            Arc::new(task)
        })
        .collect())
}

/// The conversation the model is taught on a task: `turns` answered calls and one more.
fn script(task: &Task, turns: usize) -> Vec<Message> {
    let mut messages = task.prompt.clone();
    for turn in 0..=turns {
        let mut call = Message::assistant(TURN_TEXT);
        call.tool_calls
            .push(ToolCall::from_json_arguments("wait", &json!({})));
        messages.push(call);
        if turn < turns {
            messages.push(Message::tool("done"));
        }
    }
    messages
}

/// Builds the embedded default model and teaches it the benchmark's turn.
fn taught_model(
    args: &BenchRolloutArgs,
    tasks: &[Arc<Task>],
    bar: &ProgressBar,
) -> anyhow::Result<(LanguageModel, usize)> {
    let template = ChatTemplate::new(
        CHAT_TEMPLATE.to_string(),
        "chat_template.jinja",
        "",
        "<|im_end|>",
    )?;
    let corpus = default_corpus(&template)?;
    let model = embedded::build(
        &EmbeddedSpec::default(),
        &corpus,
        &args.runtime.load_options()?,
    )?;
    let examples: Vec<SftExample> = tasks
        .iter()
        .map(|task| {
            SftExample::from_chat(&model.chat.encode(&script(task, args.turns), &task.tools)?)
        })
        .collect::<Result<_, _>>()?;
    let batches: Vec<Vec<&SftExample>> = examples
        .chunks(TEACH_BATCH)
        .map(|chunk| chunk.iter().collect())
        .collect();
    let config = TrainerConfig {
        learning_rate: 3e-3,
        ..TrainerConfig::default()
    };
    let mut trainer = Trainer::new(model, config)?;
    let mut perfect_in_a_row = 0;
    for step in 1..=args.teach_steps {
        let figures = trainer.sft_step(&batches[step % batches.len()])?;
        bar.inc(1);
        bar.set_message(format!(
            "teaching the turn (token accuracy {:.3})",
            figures.token_accuracy
        ));
        perfect_in_a_row = if figures.token_accuracy >= 1.0 {
            perfect_in_a_row + 1
        } else {
            0
        };
        if perfect_in_a_row >= batches.len().max(3) {
            return Ok((trainer.into_model(), step));
        }
    }
    anyhow::bail!(
        "the model did not learn the benchmark's turn in {} SFT steps; raise --teach-steps",
        args.teach_steps
    )
}

/// One run of every rollout; checks each made its `turns` tool calls.
fn run_once(
    model: &LanguageModel,
    tasks: &[Arc<Task>],
    args: &BenchRolloutArgs,
    variant: Variant,
    bar: &ProgressBar,
) -> anyhow::Result<RunFigures> {
    let pause = match variant {
        Variant::GenerationOnly => Duration::ZERO,
        _ => Duration::from_millis(args.tool_ms),
    };
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(WaitTool::new(pause)))?;
    let environment = Environment::new(tools, RewardConfig::default());
    let config = RolloutConfig {
        max_turns: args.turns + 1,
        max_new_tokens: 64,
        max_tokens: 64 * (args.turns + 1),
        temperature: 0.0,
        max_concurrent_tools: usize::from(variant == Variant::SerialTools),
        ..RolloutConfig::default()
    };
    let requests: Vec<RolloutRequest> = tasks
        .iter()
        .enumerate()
        .map(|(index, task)| RolloutRequest {
            task: task.clone(),
            run: "bench".into(),
            policy_version: 0,
            group: index as u64,
            sample: 0,
        })
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let (local, thread) = LocalPolicy::spawn(model.decoder(), model.stop_token_ids())?;
    let policy = Policy::Local {
        policy: local,
        chat: Arc::new(model.chat.clone()),
    };
    let mut finished: Vec<Trajectory> = Vec::new();
    let timing = timed(|| {
        runtime.block_on(run_rollouts(
            &policy,
            &environment,
            &config,
            requests,
            |trajectory| {
                bar.inc(1);
                finished.push(trajectory);
            },
        ));
        Ok(())
    })?;
    drop(policy);
    let decode = thread
        .join()
        .map_err(|_| anyhow::anyhow!("the decode thread panicked"))?;
    let answered = |trajectory: &Trajectory| {
        trajectory
            .messages
            .iter()
            .filter(|m| m.role == Role::Tool && !m.is_error)
            .count()
    };
    let strays: Vec<&Trajectory> = finished
        .iter()
        .filter(|t| answered(t) != args.turns)
        .collect();
    if let Some(stray) = strays.first() {
        let said = stray
            .messages
            .iter()
            .rfind(|m| m.role == Role::Assistant)
            .map_or("", |m| m.content.as_str());
        anyhow::bail!(
            "{} of {} rollouts did not make {} good tool calls: the taught model strayed from \
             its turn (rollout {} stopped by {} after {} calls, last saying {said:?}); raise \
             --teach-steps",
            strays.len(),
            finished.len(),
            args.turns,
            stray.group.unwrap_or(0),
            stray.stop_reason,
            answered(stray)
        );
    }
    let tool_calls = finished.iter().map(answered).sum();
    Ok(RunFigures {
        timing,
        decode,
        tool_calls,
    })
}

/// Runs the benchmark.
pub fn bench_rollout(cli: &Cli, args: &BenchRolloutArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.rollouts > 0 && args.turns > 0 && args.repeats > 0 && args.teach_steps > 0,
        "counts must be positive"
    );
    let tasks = bench_tasks(args.rollouts)?;
    let style = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({elapsed})")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    let bar = ProgressBar::new(args.teach_steps as u64)
        .with_style(style.clone())
        .with_message("teaching the turn");
    let teaching = Instant::now();
    let (model, taught_in) = taught_model(args, &tasks, &bar)?;
    let taught_s = teaching.elapsed().as_secs_f64();
    bar.finish_and_clear();
    let bar = ProgressBar::new((3 * (args.repeats + 1) * args.rollouts) as u64)
        .with_style(style)
        .with_message("rollouts");
    let mut runs: Vec<(Variant, RunFigures)> = Vec::new();
    for repeat in 0..=args.repeats {
        for variant in Variant::ALL {
            let figures = run_once(&model, &tasks, args, variant, &bar)?;
            if repeat > 0 {
                runs.push((variant, figures));
            }
        }
    }
    bar.finish_and_clear();
    let summary = summarize(args, &runs, (taught_in, taught_s));
    if cli.json {
        println!("{summary}");
    } else {
        print_summary(args, &summary);
    }
    Ok(())
}

/// The medians of each variant and the comparison.
fn summarize(
    args: &BenchRolloutArgs,
    runs: &[(Variant, RunFigures)],
    (taught_in, taught_s): (usize, f64),
) -> Value {
    let mut variants = Map::new();
    for variant in Variant::ALL {
        let of: Vec<RunFigures> = runs
            .iter()
            .filter(|(v, _)| *v == variant)
            .map(|(_, figures)| *figures)
            .collect();
        let timings: Vec<Timing> = of.iter().map(|f| f.timing).collect();
        let pick = |figure: fn(&RunFigures) -> f64| middle(of.iter().map(figure).collect());
        variants.insert(
            variant.key().into(),
            json!({
                "wall_s": median(&timings, |t| t.wall),
                "cpu_s": median(&timings, |t| t.cpu),
                "decode_busy_s": pick(|f| f.decode.busy_seconds),
                "decode_idle_s": pick(|f| f.timing.wall - f.decode.busy_seconds),
                "decode_steps": pick(|f| f.decode.steps as f64),
                "tokens": pick(|f| f.decode.tokens as f64),
                "tool_calls": pick(|f| f.tool_calls as f64),
            }),
        );
    }
    let wall = |variant: Variant| {
        variants[variant.key()]["wall_s"]
            .as_f64()
            .unwrap_or(f64::NAN)
    };
    let tool_s = args.tool_ms as f64 / 1e3;
    let tool_chain_s = args.turns as f64 * tool_s;
    let tool_serial_s = (args.rollouts * args.turns) as f64 * tool_s;
    let (overlapped, generation, serial) = (
        wall(Variant::Overlapped),
        wall(Variant::GenerationOnly),
        wall(Variant::SerialTools),
    );
    let bound = generation.max(tool_chain_s);
    json!({
        "rollouts": args.rollouts, "turns": args.turns, "tool_ms": args.tool_ms,
        "repeats": args.repeats, "taught_in_steps": taught_in, "taught_in_s": taught_s,
        "threads": candle_core::utils::get_num_threads(),
        "runs": Value::Object(variants),
        "tool_chain_s": tool_chain_s, "tool_serial_s": tool_serial_s,
        "bound_s": bound,
        "overlap_ratio": overlapped / bound,
        "serial_ratio": serial / bound,
    })
}

/// The median of some values.
fn middle(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn print_summary(args: &BenchRolloutArgs, summary: &Value) {
    let figure = |path: &[&str]| {
        path.iter()
            .fold(summary, |value, key| &value[*key])
            .as_f64()
            .unwrap_or(f64::NAN)
    };
    println!(
        "{} rollouts × {} turns ending in a {} ms tool call (+1 cut turn), embedded model taught \
         in {} SFT steps ({:.0} s), greedy; medians of {} runs, wall clock [process CPU]",
        args.rollouts,
        args.turns,
        args.tool_ms,
        summary["taught_in_steps"],
        figure(&["taught_in_s"]),
        args.repeats
    );
    for (variant, label) in [
        (Variant::Overlapped, "tools overlapped with generation"),
        (Variant::GenerationOnly, "(a) generation only (0 ms tool)"),
        (Variant::SerialTools, "(b) tools one at a time"),
    ] {
        let key = variant.key();
        println!(
            "{label}: {:.2} s [{:.2} s CPU] · {} tokens in {} decode steps ({:.2} s busy, {:.2} s not stepping) · {} tool calls",
            figure(&["runs", key, "wall_s"]),
            figure(&["runs", key, "cpu_s"]),
            figure(&["runs", key, "tokens"]),
            figure(&["runs", key, "decode_steps"]),
            figure(&["runs", key, "decode_busy_s"]),
            figure(&["runs", key, "decode_idle_s"]),
            figure(&["runs", key, "tool_calls"]),
        );
    }
    println!(
        "tool time: {:.2} s per rollout's chain of calls (all in parallel), {:.2} s one at a time",
        figure(&["tool_chain_s"]),
        figure(&["tool_serial_s"])
    );
    println!(
        "overlapped / max(generation, tool chain) = {:.2} (goal ≤ 1.2); tools one at a time: {:.2}",
        figure(&["overlap_ratio"]),
        figure(&["serial_ratio"])
    );
}
