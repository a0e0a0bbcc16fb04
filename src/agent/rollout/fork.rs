//! Forks: continuations of a stored trajectory from the start of one of its turns, the
//! messages just before that turn optionally edited ("had the calculator answered right?"),
//! each run to its end by the policy and the tools, scored, and marked with its origin.

use super::episode::{self, ToolSlots};
use super::{Environment, EpisodeState, Policy, RolloutConfig, ended, mix};
use crate::agent::prm_rule::rule_scores;
use crate::model::Chat;
use crate::trajectory::{
    ForkOrigin, Message, MessageEdit, PrefixKind, Role, Task, Trajectory, TrajectoryId,
};
use serde_json::Value;
use std::sync::Arc;

/// A replacement for one message just before the turn a fork starts from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edit {
    /// The result of call `call` (0-based) of turn `turn` (1-based): the fork starts from
    /// turn `turn + 1`.
    Observation {
        /// The turn whose call it answers.
        turn: usize,
        /// Which of that turn's results.
        call: usize,
        /// The new result.
        text: String,
    },
    /// The user message just before turn `turn` (1-based; 1 is the task's question): the
    /// fork starts from turn `turn`.
    User {
        /// The turn it precedes.
        turn: usize,
        /// The new message.
        text: String,
    },
}

impl Edit {
    /// The turn a fork with this edit starts from: edits change only what comes just
    /// before it.
    pub fn fork_turn(&self) -> usize {
        match self {
            Self::Observation { turn, .. } => turn + 1,
            Self::User { turn, .. } => *turn,
        }
    }

    fn digest(&self) -> String {
        match self {
            Self::Observation { turn, call, text } => format!("o{turn}.{call}={text}\0"),
            Self::User { turn, text } => format!("u{turn}={text}\0"),
        }
    }
}

/// Why a fork cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ForkError {
    /// The turn is not one of the trajectory's.
    #[error("turn {turn} does not exist: the trajectory has {turns} turn(s), 1 to {turns}")]
    NoSuchTurn {
        /// The turn asked for.
        turn: usize,
        /// The turns it has.
        turns: usize,
    },
    /// An edit names something the prefix does not have, or lies elsewhere than just
    /// before the fork's turn.
    #[error("{0}")]
    Edit(String),
    /// The policy's chat template cannot render the prefix.
    #[error("the prefix cannot be rendered through the chat template: {0}")]
    Render(String),
}

/// What to fork and how to mark the children.
#[derive(Clone, Debug)]
pub struct ForkSpec {
    /// The turn to continue from, 1-based.
    pub turn: usize,
    /// Messages replaced before continuing.
    pub edits: Vec<Edit>,
    /// Continuations.
    pub n: usize,
    /// Seed of their samplers.
    pub seed: u64,
    /// The run the children belong to.
    pub run: String,
    /// The model folder or endpoint sampling them, as the children record it.
    pub policy_name: String,
    /// The policy version sampling them, when it is the parent's own.
    pub policy_version: Option<u64>,
}

/// The episode at the start of a fork's turn, and how its prefix was made.
#[derive(Clone, Debug)]
pub struct ForkState {
    /// Where the continuations start.
    pub state: EpisodeState,
    /// How the prefix reaches the policy.
    pub prefix: PrefixKind,
    /// The messages edited.
    pub edits: Vec<MessageEdit>,
}

/// The state at the start of turn `turn` (1-based) of `parent` with `edits` applied. A
/// local policy keeps the parent's tokens where its trace is one the policy's tokenizer
/// and template produce (the prompt renders to the same tokens); otherwise the prefix is
/// rendered again. The token budget counts the prefix's policy tokens.
pub fn fork_state(
    parent: &Trajectory,
    turn: usize,
    edits: &[Edit],
    policy: &Policy,
    tools: &[Value],
) -> Result<ForkState, ForkError> {
    let assistants = parent.turn_messages();
    let turns = assistants.len();
    if turn == 0 || turn > turns {
        return Err(ForkError::NoSuchTurn { turn, turns });
    }
    let mut messages = parent.messages[..assistants[turn - 1]].to_vec();
    let gap_start = match turn {
        1 => 0,
        _ => assistants[turn - 2] + 1,
    };
    let mut edited = Vec::new();
    for edit in edits {
        if edit.fork_turn() != turn {
            return Err(ForkError::Edit(format!(
                "an edit changes what comes just before the turn the fork starts from: \
                 this one needs --turn {}, not {turn}",
                edit.fork_turn()
            )));
        }
        let index = edit_target(&messages, gap_start, edit)?;
        let text = match edit {
            Edit::Observation { text, .. } | Edit::User { text, .. } => text,
        };
        let message = &mut messages[index];
        edited.push(MessageEdit {
            message: index,
            original: std::mem::replace(&mut message.content, text.clone()),
        });
        message.is_error = false;
    }
    let (state, prefix) = match policy {
        Policy::Http(_) => {
            let mut state = EpisodeState::new(messages, Vec::new());
            state.policy_tokens = estimated_policy_tokens(&state.messages);
            (state, PrefixKind::Messages)
        }
        Policy::Local { chat, .. } => {
            match kept_tokens(parent, &assistants, chat, tools, turn, !edits.is_empty()) {
                Some(trace) => {
                    let mut state = EpisodeState::new(messages, Vec::new());
                    state.policy_tokens = trace.policy_tokens();
                    state.trace = trace;
                    if !edits.is_empty() {
                        let split = assistants[turn - 2] + 1;
                        let ids = chat
                            .observation_ids(
                                &state.messages[..split],
                                &state.messages[split..],
                                tools,
                            )
                            .map_err(render_error)?;
                        state.push_tokens(&ids, false, &[], &[]);
                    }
                    (state, PrefixKind::Tokens)
                }
                None => (rendered(chat, messages, tools)?, PrefixKind::Rendered),
            }
        }
    };
    Ok(ForkState {
        state: EpisodeState {
            turns: turn - 1,
            ..state
        },
        prefix,
        edits: edited,
    })
}

fn render_error(error: crate::model::ModelError) -> ForkError {
    ForkError::Render(error.to_string())
}

/// The message an edit replaces, in `messages[gap_start..]`.
fn edit_target(messages: &[Message], gap_start: usize, edit: &Edit) -> Result<usize, ForkError> {
    let gap = gap_start..messages.len();
    match edit {
        Edit::Observation { turn, call, .. } => {
            let results: Vec<usize> = gap
                .filter(|&index| messages[index].role == Role::Tool)
                .collect();
            results.get(*call).copied().ok_or_else(|| {
                ForkError::Edit(format!(
                    "turn {turn} has {} tool result(s): there is no result {} to replace",
                    results.len(),
                    call + 1
                ))
            })
        }
        Edit::User { turn, .. } => gap
            .rev()
            .find(|&index| messages[index].role == Role::User)
            .ok_or_else(|| {
                ForkError::Edit(format!("no user message comes just before turn {turn}"))
            }),
    }
}

/// The parent's tokens up to the fork's turn (up to the end of the turn before it when the
/// messages in between are edited), when its trace has one
/// sampled run per turn and its prompt renders to the same tokens with `chat`.
fn kept_tokens(
    parent: &Trajectory,
    assistants: &[usize],
    chat: &Chat,
    tools: &[Value],
    turn: usize,
    edited: bool,
) -> Option<crate::trajectory::TokenTrace> {
    let trace = parent.token_trace.as_ref()?;
    trace.validate().ok()?;
    let runs = trace.policy_runs();
    if runs.len() != assistants.len() || (edited && turn == 1) {
        return None;
    }
    let prompt = chat
        .prompt_ids(&parent.messages[..assistants[0]], tools)
        .ok()?;
    if trace.token_ids.get(..prompt.len()) != Some(&prompt[..]) {
        return None;
    }
    let cut = if edited {
        runs[turn - 2].end
    } else {
        runs[turn - 1].start
    };
    Some(trace.prefix(cut))
}

/// The prefix rendered again: its tokens are the prompt's (none trained), its policy tokens
/// those its assistant messages take.
fn rendered(
    chat: &Chat,
    messages: Vec<Message>,
    tools: &[Value],
) -> Result<EpisodeState, ForkError> {
    let ids = chat.prompt_ids(&messages, tools).map_err(render_error)?;
    let policy_tokens = chat
        .encode(&messages, tools)
        .map_err(render_error)?
        .loss_mask
        .iter()
        .filter(|&&bit| bit != 0)
        .count();
    let mut state = EpisodeState::new(messages, ids);
    state.policy_tokens = policy_tokens;
    Ok(state)
}

/// Policy tokens of the assistant messages when no tokenizer is at hand, counted as an
/// endpoint's turn without a usage count is.
fn estimated_policy_tokens(messages: &[Message]) -> usize {
    messages
        .iter()
        .filter(|message| message.role == Role::Assistant)
        .map(|message| episode::estimated_tokens(&message.content))
        .sum()
}

/// Samples `spec.n` continuations of `parent` from `spec.turn`, all in flight at once (a
/// local policy decodes them in one batch), each with its own seed; returns them scored
/// (outcome reward, rule process scores when the config asks) in index order.
pub async fn fork(
    policy: &Policy,
    environment: &Environment,
    config: &RolloutConfig,
    parent: &Trajectory,
    task: &Task,
    spec: &ForkSpec,
) -> Result<Vec<Trajectory>, ForkError> {
    let tools = super::offered_tools(task, config);
    let start = fork_state(parent, spec.turn, &spec.edits, policy, &tools)?;
    let digest: String = spec.edits.iter().map(Edit::digest).collect();
    let slots = ToolSlots::new(config.max_concurrent_tools);
    let tools = Arc::new(tools);
    let mut running = tokio::task::JoinSet::new();
    for index in 0..spec.n as u32 {
        let seed = mix(spec.seed, ((spec.turn as u64) << 32) | u64::from(index));
        let (policy, environment, config, slots, tools, state) = (
            policy.clone(),
            environment.clone(),
            config.clone(),
            slots.clone(),
            tools.clone(),
            start.state.clone(),
        );
        running.spawn(async move {
            let sampling = crate::model::SamplingParams {
                seed,
                ..config.sampling(0)
            };
            let finished = episode::run(
                &policy,
                &environment,
                &config,
                &slots,
                &tools,
                sampling,
                state,
            )
            .await;
            (index, seed, finished)
        });
    }
    let mut children = Vec::with_capacity(spec.n);
    while let Some(done) = running.join_next().await {
        let (index, seed, finished) = match done {
            Ok(done) => done,
            Err(error) => std::panic::resume_unwind(error.into_panic()),
        };
        let id = TrajectoryId::forked(
            parent.id,
            spec.turn as u32,
            digest.as_bytes(),
            spec.seed,
            index,
        );
        let mut child = ended(id, &finished, policy);
        child.task_id = parent.task_id.clone();
        child.run = Some(spec.run.clone());
        child.policy_version = spec.policy_version;
        child.reward = Some(environment.verifier.score(task, &child).await.reward);
        if config.prm_rule {
            child.step_scores = rule_scores(&child, &tools);
        }
        child.fork = Some(ForkOrigin {
            parent: parent.id,
            turn: spec.turn as u32,
            index,
            seed,
            edits: start.edits.clone(),
            policy: spec.policy_name.clone(),
            prefix: start.prefix,
        });
        children.push(child);
    }
    children.sort_by_key(|child| child.fork.as_ref().map(|origin| origin.index));
    Ok(children)
}
