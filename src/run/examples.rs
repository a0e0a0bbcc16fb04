//! SFT examples from a run's source: scripted demonstrations of its training tasks, or the
//! conversations of a file (an SFT export, OpenAI messages, ShareGPT, TRL, our JSONL),
//! encoded by the model's chat template with the loss on the assistant's tokens only.

use super::config::{RunConfig, SftSource};
use super::demos::demonstration;
use crate::agent::rollout::offered_tools;
use crate::agent::tools::builtin_spec;
use crate::formats::{ImportOptions, Item, import_file};
use crate::model::Chat;
use crate::train::SftExample;
use crate::trajectory::{Message, Task};
use anyhow::Context;
use serde_json::Value;

/// Encoded examples and what was skipped.
pub struct SftData {
    /// The examples to train on.
    pub examples: Vec<SftExample>,
    /// Conversations that could not be used (no demonstration, too long, no assistant
    /// tokens), with why.
    pub skipped: Vec<String>,
}

/// The examples of the config's SFT source; `max_tokens` bounds each encoded conversation.
pub fn sft_examples(chat: &Chat, config: &RunConfig, max_tokens: usize) -> anyhow::Result<SftData> {
    let conversations = match &config.sft.source {
        SftSource::Demos => demo_conversations(config)?,
        SftSource::File(path) => file_conversations(path, config)?,
    };
    let mut data = SftData {
        examples: Vec::new(),
        skipped: Vec::new(),
    };
    for (name, messages, tools) in conversations {
        let Some(messages) = messages else {
            data.skipped
                .push(format!("{name}: no annotated solution to script"));
            continue;
        };
        let encoded = chat
            .encode(&messages, &tools)
            .with_context(|| format!("cannot encode {name}"))?;
        if encoded.token_ids.len() > max_tokens {
            data.skipped.push(format!(
                "{name}: {} tokens, over the limit of {max_tokens}",
                encoded.token_ids.len()
            ));
            continue;
        }
        match SftExample::from_chat(&encoded) {
            Ok(example) if example.trained_tokens() > 0 => data.examples.push(example),
            Ok(_) => data.skipped.push(format!("{name}: no assistant tokens")),
            Err(error) => data.skipped.push(format!("{name}: {error}")),
        }
    }
    anyhow::ensure!(
        !data.examples.is_empty(),
        "the SFT source gave no usable example ({} skipped{})",
        data.skipped.len(),
        data.skipped
            .first()
            .map(|why| format!(", e.g. {why}"))
            .unwrap_or_default()
    );
    Ok(data)
}

type Conversation = (String, Option<Vec<Message>>, Vec<Value>);

fn demo_conversations(config: &RunConfig) -> anyhow::Result<Vec<Conversation>> {
    let tasks: Vec<Task> = config
        .tasks
        .train_spec()?
        .load(Some(config.tasks.train_size), config.tasks.seed)?;
    Ok(tasks
        .iter()
        .map(|task| {
            let tools = offered_tools(task, &config.rollout);
            (task.id.clone(), demonstration(task), tools)
        })
        .collect())
}

fn file_conversations(
    path: &std::path::Path,
    config: &RunConfig,
) -> anyhow::Result<Vec<Conversation>> {
    let tools: Vec<Value> = config
        .rollout
        .tools
        .iter()
        .filter_map(|name| builtin_spec(name))
        .collect();
    let mut conversations = Vec::new();
    let mut sink = |item: Item| {
        if let Item::Trajectory(trajectory) = item {
            let name = format!("{} {}", path.display(), trajectory.id);
            conversations.push((name, Some(trajectory.messages), tools.clone()));
        }
        Ok(())
    };
    let report = import_file(path, ImportOptions::default(), &mut sink)
        .with_context(|| format!("sft.source: cannot read {}", path.display()))?;
    if let Some(problem) = report.problems.first() {
        eprintln!(
            "warning: {} bad records skipped in {}, first: {problem}",
            report.problems.len(),
            path.display()
        );
    }
    Ok(conversations)
}
