//! SFT examples from a run's source: scripted demonstrations of its training tasks, or the
//! conversations of a file (an SFT export, OpenAI messages, ShareGPT, TRL, our JSONL),
//! encoded by the model's chat template with the loss on the assistant's tokens only.

use super::config::{ReplayConfig, RunConfig, SftSource};
use super::demos::{DemoStyle, demonstration};
use super::drills::copy_drill;
use crate::agent::rollout::offered_tools;
use crate::agent::tasks::SplitMix64;
use crate::agent::tools::builtin_spec;
use crate::formats::{ImportOptions, Item, import_file};
use crate::model::{Chat, LossOn};
use crate::train::SftExample;
use crate::trajectory::{Message, Role, Task};
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
    let conversations = conversations(config)?;
    let mut data = SftData {
        examples: Vec::new(),
        skipped: Vec::new(),
    };
    let loss_on = if config.sft.loss_on_user {
        LossOn::PolicyAndUser
    } else {
        LossOn::Policy
    };
    for (name, messages, tools) in conversations {
        let Some(messages) = messages else {
            data.skipped
                .push(format!("{name}: no annotated solution to script"));
            continue;
        };
        let encoded = chat
            .encode_for(&messages, &tools, loss_on)
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

/// The source's conversations, then the replayed demonstrations.
fn conversations(config: &RunConfig) -> anyhow::Result<Vec<Conversation>> {
    let mut conversations = match &config.sft.source {
        SftSource::Demos => demo_conversations(config)?,
        SftSource::File(path) => file_conversations(path, config)?,
    };
    for replay in &config.sft.replay {
        conversations.extend(replay_conversations(replay, config)?);
    }
    Ok(conversations)
}

fn demo_conversations(config: &RunConfig) -> anyhow::Result<Vec<Conversation>> {
    let tasks: Vec<Task> = config
        .tasks
        .train_spec()?
        .load(Some(config.tasks.train_size), config.tasks.seed)?;
    let mut rng = SplitMix64::new(config.seed);
    let mut conversations: Vec<Conversation> = tasks
        .iter()
        .map(|task| {
            let tools = offered_tools(task, &config.rollout);
            let direct = (rng.next_u64() as f64 / u64::MAX as f64) < config.sft.direct_answers;
            let style = if direct {
                DemoStyle::Direct
            } else {
                DemoStyle::Calculator
            };
            (task.id.clone(), demonstration(task, style), tools)
        })
        .collect();
    let system = tasks
        .first()
        .and_then(|task| task.prompt.first())
        .filter(|message| message.role == Role::System);
    let tools = tasks
        .first()
        .map(|task| offered_tools(task, &config.rollout))
        .unwrap_or_default();
    for index in 0..config.sft.copy_drills {
        let drill = copy_drill(system, config.seed, index as u64, config.sft.drill_focus);
        conversations.push((format!("copy drill {index}"), Some(drill), tools.clone()));
    }
    Ok(conversations)
}

/// Calculator demonstrations of the replayed task set (generated sets by the tasks' seed).
fn replay_conversations(
    replay: &ReplayConfig,
    config: &RunConfig,
) -> anyhow::Result<Vec<Conversation>> {
    let tasks = replay.spec()?.load(Some(replay.size), config.tasks.seed)?;
    Ok(tasks
        .iter()
        .map(|task| {
            let tools = offered_tools(task, &config.rollout);
            let name = format!("replayed {}", task.id);
            (name, demonstration(task, DemoStyle::Calculator), tools)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The ids of the direct demonstrations among 200, and how many there are in all.
    fn direct_tasks(direct_answers: f64, seed: u64) -> (Vec<String>, usize) {
        let mut config = RunConfig {
            seed,
            ..RunConfig::default()
        };
        config.tasks.train = "arith:1:train".into();
        config.tasks.train_size = 200;
        config.sft.direct_answers = direct_answers;
        let conversations = demo_conversations(&config).unwrap();
        let direct = conversations
            .iter()
            .filter(|(_, messages, _)| {
                let messages = messages.as_ref().expect("arithmetic tasks are annotated");
                messages.iter().all(|message| message.tool_calls.is_empty())
            })
            .map(|(id, _, _)| id.clone())
            .collect();
        (direct, conversations.len())
    }

    #[test]
    fn the_share_of_direct_demonstrations_follows_the_config() {
        assert!(direct_tasks(0.0, 0).0.is_empty());
        let (all, total) = direct_tasks(1.0, 0);
        assert_eq!(all.len(), total);
        let (some, total) = direct_tasks(0.6, 0);
        let share = some.len() as f64 / total as f64;
        assert!((0.5..=0.7).contains(&share), "{share}");
        assert_ne!(direct_tasks(0.6, 1).0, some, "the run seed picks the tasks");
    }

    #[test]
    fn replayed_demonstrations_follow_the_source_and_call_the_calculator() {
        let mut config = RunConfig::default();
        config.tasks.train = "arith:1+1:train".into();
        config.tasks.train_size = 12;
        config.sft.replay = vec![
            ReplayConfig {
                tasks: "arith:1:train".into(),
                size: 5,
            },
            ReplayConfig {
                tasks: "weather:train".into(),
                size: 3,
            },
        ];
        let all = conversations(&config).unwrap();
        assert_eq!(all.len(), 20);
        assert!(
            all[..12]
                .iter()
                .all(|(name, ..)| name.starts_with("arith-1+1-"))
        );
        let replayed: Vec<&str> = all[12..].iter().map(|(name, ..)| name.as_str()).collect();
        assert!(
            replayed[..5]
                .iter()
                .all(|name| name.starts_with("replayed arith-1-"))
        );
        assert!(
            replayed[5..]
                .iter()
                .all(|name| name.starts_with("replayed weather-"))
        );
        for (_, messages, _) in &all[12..] {
            let messages = messages.as_ref().unwrap();
            assert!(
                messages
                    .iter()
                    .any(|message| !message.tool_calls.is_empty())
            );
        }
        config.sft.replay[1].tasks = "arith:9".into();
        let error = config.validate().unwrap_err().to_string();
        assert!(error.contains("sft.replay.tasks"), "{error}");
    }

    #[test]
    fn the_configured_number_of_copy_drills_joins_the_demonstrations() {
        let mut config = RunConfig::default();
        config.tasks.train = "arith:1:train".into();
        config.tasks.train_size = 40;
        config.sft.copy_drills = 20;
        let conversations = demo_conversations(&config).unwrap();
        assert_eq!(conversations.len(), 60);
        let drills: Vec<&Conversation> = conversations
            .iter()
            .filter(|(name, _, _)| name.starts_with("copy drill"))
            .collect();
        assert_eq!(drills.len(), 20);
        let task_system = &conversations[0].1.as_ref().unwrap()[0];
        for (_, messages, tools) in drills {
            let messages = messages.as_ref().unwrap();
            assert_eq!(&messages[0], task_system, "the tasks' own system prompt");
            assert_eq!(tools, &conversations[0].2, "the tasks' own tools");
        }
    }
}
