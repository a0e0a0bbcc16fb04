//! The formats by name: what each reads and writes, parsed from and printed as its CLI name.

use std::fmt;
use std::str::FromStr;

/// A format Rollscope reads, writes, or both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Rollscope's own JSONL: one `Trajectory` per line (or one `Task` per line).
    Rollscope,
    /// OpenAI chat messages JSONL with `tools`, `tool_calls` and the `tool` role (TRL, OpenRLHF).
    OpenaiMessages,
    /// ShareGPT JSON as LLaMA-Factory reads it, with `function_call` and `observation` turns.
    Sharegpt,
    /// SWE-agent `.traj` files (1.x with `history`, and the older 0.x shape).
    SweAgent,
    /// mini-swe-agent `.traj.json` files.
    MiniSweAgent,
    /// Inspect evaluation logs: `.json`.
    Inspect,
    /// Inspect evaluation logs: `.eval` zip archives.
    InspectEval,
    /// verl rollout dumps: `{input, output, gts, score, step}` JSONL.
    VerlRollouts,
    /// verl task rows: `{data_source, prompt, reward_model, extra_info}` (import as tasks).
    VerlTasks,
    /// OpenAI Responses API items as NeMo Gym writes rollouts.
    Responses,
    /// tau-bench result arrays.
    TauBench,
    /// OpenHands event streams and evaluation / resolver output rows.
    OpenHands,
    /// A bare JSON array of chat messages (mini-swe-agent replays, hand-made transcripts).
    Messages,
    /// GSM8K `{question, answer}` rows (import as tasks).
    Gsm8k,
    /// PRM800K rows: solutions with human step ratings.
    Prm800k,
    /// Math-Shepherd rows: solutions with automatic step labels.
    MathShepherd,
    /// OmegaPRM / MATH-APS rows: solution trees or prefixes with Monte-Carlo step values.
    OmegaPrm,
    /// TRL prompt–completion JSONL (`prompt`, `completion` as message lists).
    TrlPromptCompletion,
    /// TRL stepwise process-reward JSONL (`prompt`, `completions`, `labels`).
    TrlStepwise,
    /// RL task rows `{question, prompt, ground_truth, full_answer}`: what GRPO samples from and
    /// verifies against, with a worked solution (the seed recipe's RL data).
    Rl,
    /// ATIF, the Agent Trajectory Interchange Format (Harbor, terminal-bench, NeMo Gym, …):
    /// one `{schema_version, agent, steps, …}` document per trajectory.
    Atif,
    /// OpenTelemetry GenAI spans as OTLP JSON (a collector's file exporter, Phoenix,
    /// Logfire): one trace per trajectory.
    Otel,
    /// verifiers evaluation outputs: `results.jsonl` rows `{prompt, completion, reward, …}`.
    Verifiers,
}

impl Format {
    /// Every format, in the order `--help` lists them.
    pub const ALL: [Format; 23] = [
        Self::Rollscope,
        Self::OpenaiMessages,
        Self::Sharegpt,
        Self::SweAgent,
        Self::MiniSweAgent,
        Self::Inspect,
        Self::InspectEval,
        Self::VerlRollouts,
        Self::VerlTasks,
        Self::Responses,
        Self::TauBench,
        Self::OpenHands,
        Self::Messages,
        Self::Gsm8k,
        Self::Prm800k,
        Self::MathShepherd,
        Self::OmegaPrm,
        Self::TrlPromptCompletion,
        Self::TrlStepwise,
        Self::Rl,
        Self::Atif,
        Self::Otel,
        Self::Verifiers,
    ];

    /// The name used on the command line and in `source_format`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Rollscope => "rollscope",
            Self::OpenaiMessages => "openai",
            Self::Sharegpt => "sharegpt",
            Self::SweAgent => "swe-agent",
            Self::MiniSweAgent => "mini-swe-agent",
            Self::Inspect => "inspect",
            Self::InspectEval => "inspect-eval",
            Self::VerlRollouts => "verl",
            Self::VerlTasks => "verl-tasks",
            Self::Responses => "responses",
            Self::TauBench => "tau-bench",
            Self::OpenHands => "openhands",
            Self::Messages => "messages",
            Self::Gsm8k => "gsm8k",
            Self::Prm800k => "prm800k",
            Self::MathShepherd => "math-shepherd",
            Self::OmegaPrm => "omega-prm",
            Self::TrlPromptCompletion => "trl-prompt-completion",
            Self::TrlStepwise => "trl-stepwise",
            Self::Rl => "rl",
            Self::Atif => "atif",
            Self::Otel => "otel",
            Self::Verifiers => "verifiers",
        }
    }

    /// Whether writing it keeps what a token trace holds (our own format, and ATIF's
    /// per-step token ids and log-probs), so exports read the traces.
    pub fn keeps_token_traces(self) -> bool {
        matches!(self, Self::Rollscope | Self::Atif)
    }

    /// Whether `rollscope export --format` can write it.
    pub fn can_export(self) -> bool {
        matches!(
            self,
            Self::Rollscope
                | Self::OpenaiMessages
                | Self::Sharegpt
                | Self::TrlPromptCompletion
                | Self::TrlStepwise
                | Self::Rl
                | Self::Atif
        )
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|format| format.name() == text)
            .ok_or_else(|| {
                let names: Vec<_> = Self::ALL.iter().map(|format| format.name()).collect();
                format!("unknown format `{text}`; known: {}", names.join(", "))
            })
    }
}
