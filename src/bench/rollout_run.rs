//! The runs of the rollout benchmark: the `wait` tool, the benchmark's tasks, teaching the
//! embedded model its turn, and one timed run of every rollout.

use super::steps::{Timing, timed};
use super::{BenchProgress, Runtime};
use crate::agent::reward::RewardConfig;
use crate::agent::rollout::{
    DecodeStats, Environment, LocalPolicy, Policy, RolloutConfig, RolloutRequest, run_rollouts,
};
use crate::agent::tasks::TaskSetSpec;
use crate::agent::tools::{Tool, ToolFuture, ToolOutput, ToolRegistry, tool_spec};
use crate::model::LanguageModel;
use crate::model::embedded::{self, EmbeddedSpec};
use crate::train::{SftExample, Trainer, TrainerConfig};
use crate::trajectory::{Message, Role, Task, ToolCall, Trajectory};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The shape of the rollout benchmark's runs.
#[derive(Clone, Debug)]
pub struct RolloutBenchOptions {
    /// Rollouts per run.
    pub rollouts: usize,
    /// Turns per rollout that end in a tool call.
    pub turns: usize,
    /// How long the tool takes, in milliseconds.
    pub tool_ms: u64,
    /// SFT steps at most to teach the model the turn (it stops once it has learned it).
    pub teach_steps: usize,
    /// Timed repetitions of each run (the median is reported).
    pub repeats: usize,
    /// Device and dtype.
    pub runtime: Runtime,
}

/// What every taught assistant turn says before its call.
const TURN_TEXT: &str = "I wait for the clock.";
/// Conversations per SFT step while teaching.
const TEACH_BATCH: usize = 8;

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
pub(super) struct RunFigures {
    /// Wall and CPU time of the run.
    pub timing: Timing,
    /// What the decode thread did.
    pub decode: DecodeStats,
    /// Tool calls answered without error.
    pub tool_calls: usize,
}

/// The three runs compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Variant {
    /// Tools overlapped with generation.
    Overlapped,
    /// A tool that answers at once.
    GenerationOnly,
    /// Tools one at a time.
    SerialTools,
}

impl Variant {
    /// Every variant, in the order they run.
    pub const ALL: [Variant; 3] = [
        Variant::Overlapped,
        Variant::GenerationOnly,
        Variant::SerialTools,
    ];
}

/// The benchmark's tasks: arithmetic prompts offering only the `wait` tool.
pub(super) fn bench_tasks(count: usize) -> anyhow::Result<Vec<Arc<Task>>> {
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
pub(super) fn taught_model(
    options: &RolloutBenchOptions,
    tasks: &[Arc<Task>],
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<(LanguageModel, usize)> {
    let corpus = embedded::default_template_corpus()?;
    let model = embedded::build(
        &EmbeddedSpec::default(),
        &corpus,
        &options.runtime.load_options()?,
    )?;
    let examples: Vec<SftExample> = tasks
        .iter()
        .map(|task| {
            SftExample::from_chat(
                &model
                    .chat
                    .encode(&script(task, options.turns), &task.tools)?,
            )
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
    for step in 1..=options.teach_steps {
        let figures = trainer.sft_step(&batches[step % batches.len()], 0)?;
        progress(BenchProgress::Advance(1));
        progress(BenchProgress::Relabel(format!(
            "teaching the turn (token accuracy {:.3})",
            figures.token_accuracy
        )));
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
        options.teach_steps
    )
}

/// One run of every rollout; checks each made its `turns` tool calls.
pub(super) fn run_once(
    model: &LanguageModel,
    tasks: &[Arc<Task>],
    options: &RolloutBenchOptions,
    variant: Variant,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<RunFigures> {
    let pause = match variant {
        Variant::GenerationOnly => Duration::ZERO,
        _ => Duration::from_millis(options.tool_ms),
    };
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(WaitTool::new(pause)))?;
    let environment = Environment::new(tools, RewardConfig::default());
    let config = RolloutConfig {
        max_turns: options.turns + 1,
        max_new_tokens: 64,
        max_tokens: 64 * (options.turns + 1),
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
    let (local, thread) = LocalPolicy::spawn(model.sharing_decoder(), model.stop_token_ids())?;
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
                progress(BenchProgress::Advance(1));
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
        .filter(|t| answered(t) != options.turns)
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
            options.turns,
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
