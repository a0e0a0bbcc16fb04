//! The formats by name: what each reads and writes, parsed from and printed as its CLI name.

use std::str::FromStr;
use strum::IntoEnumIterator;

/// A format Rollscope reads, writes, or both; `--help` lists them in this order, by the
/// names they print as (kebab case unless named).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, strum::EnumIter, strum::IntoStaticStr, strum::Display,
)]
#[strum(serialize_all = "kebab-case")]
pub enum Format {
    /// Rollscope's own JSONL: one `Trajectory` per line (or one `Task` per line).
    Rollscope,
    /// OpenAI chat messages JSONL with `tools`, `tool_calls` and the `tool` role (TRL, OpenRLHF).
    #[strum(serialize = "openai")]
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
    #[strum(serialize = "verl")]
    VerlRollouts,
    /// verl task rows: `{data_source, prompt, reward_model, extra_info}` (import as tasks).
    VerlTasks,
    /// OpenAI Responses API items as NeMo Gym writes rollouts.
    Responses,
    /// tau-bench result arrays.
    TauBench,
    /// OpenHands event streams and evaluation / resolver output rows.
    #[strum(serialize = "openhands")]
    OpenHands,
    /// A bare JSON array of chat messages (mini-swe-agent replays, hand-made transcripts).
    Messages,
    /// GSM8K `{question, answer}` rows (import as tasks).
    #[strum(serialize = "gsm8k")]
    Gsm8k,
    /// PRM800K rows: solutions with human step ratings.
    #[strum(serialize = "prm800k")]
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
    /// The name used on the command line and in `source_format`.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// Whether writing it keeps what a token trace holds (our own format, and ATIF's
    /// per-step token ids and log-probs), so exports read the traces.
    pub fn keeps_token_traces(self) -> bool {
        matches!(self, Self::Rollscope | Self::Atif)
    }

    /// The names of the formats `rollscope export` writes, comma-separated.
    pub fn export_names() -> String {
        Self::iter()
            .filter(|format| format.can_export())
            .map(Format::name)
            .collect::<Vec<_>>()
            .join(", ")
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

impl FromStr for Format {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        crate::text::parse_choice(text, "format", Self::iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_users_type_stay_and_parse_back() {
        let names: Vec<&str> = Format::iter().map(Format::name).collect();
        let expected = [
            "rollscope",
            "openai",
            "sharegpt",
            "swe-agent",
            "mini-swe-agent",
            "inspect",
            "inspect-eval",
            "verl",
            "verl-tasks",
            "responses",
            "tau-bench",
            "openhands",
            "messages",
            "gsm8k",
            "prm800k",
            "math-shepherd",
            "omega-prm",
            "trl-prompt-completion",
            "trl-stepwise",
            "rl",
            "atif",
            "otel",
            "verifiers",
        ];
        assert_eq!(names, expected);
        for format in Format::iter() {
            assert_eq!(format.name().parse(), Ok(format));
            assert_eq!(format.to_string(), format.name());
        }
        assert_eq!(
            "openhand".parse::<Format>(),
            Err("unknown format `openhand`; did you mean `openhands`?".to_string())
        );
    }
}
