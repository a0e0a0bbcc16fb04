//! Forks: continuations from the middle of a trajectory keep its prefix (token for token
//! for the local policy), see an edited observation, count the prefix against the token
//! budget and repeat by seed; the Monte-Carlo process scores budget from the episode's start.

use super::scripted::{Scripted, environment, run_script, runtime, script_task};
use rollscope::agent::rollout::{Edit, ForkSpec, Policy, RolloutConfig, fork};
use rollscope::trajectory::{
    Message, MessageEdit, PrefixKind, Role, ScoreSource, Task, TokenTrace, ToolCall, Trajectory,
    TrajectoryId,
};
use serde_json::json;

fn spec(turn: usize, n: usize, seed: u64, edits: Vec<Edit>) -> ForkSpec {
    ForkSpec {
        turn,
        edits,
        n,
        seed,
        run: "fork-test".into(),
        policy_name: "test policy".into(),
        policy_version: None,
    }
}

fn forked(
    policy: &Policy,
    config: &RolloutConfig,
    parent: &Trajectory,
    task: &Task,
    spec: &ForkSpec,
) -> Vec<Trajectory> {
    runtime()
        .block_on(fork(policy, &environment(), config, parent, task, spec))
        .unwrap()
}

/// Two turns of the calculator task, tokenized by `chat` as the loop would have: a call,
/// its result, the final answer.
fn two_turn_parent(chat: &rollscope::model::Chat, task: &Task) -> Trajectory {
    let mut call = Message::assistant("Let me compute.");
    let mut tool_call = ToolCall::new("calculator", json!({"expression": "17+25"}).to_string());
    tool_call.id = Some("call_0_0".into());
    call.tool_calls.push(tool_call);
    let mut result = Message::tool("42");
    result.tool_call_id = Some("call_0_0".into());
    result.name = Some("calculator".into());
    let mut messages = task.prompt.clone();
    messages.extend([call, result, Message::assistant("Final Answer: 42")]);
    let encoded = chat.encode(&messages, &task.tools).unwrap();
    let n = encoded.token_ids.len();
    let mut parent = Trajectory::new(TrajectoryId(7), messages);
    parent.task_id = Some(task.id.clone());
    parent.token_trace = Some(TokenTrace {
        token_ids: encoded.token_ids,
        loss_mask: encoded.loss_mask,
        logprobs: vec![0.0; n],
        entropies: vec![0.0; n],
    });
    parent
}

#[test]
fn a_local_fork_keeps_the_parents_tokens_budgets_from_the_start_and_repeats_by_seed() {
    let (_dir, model) = super::embedded();
    let policy = super::local(&model);
    let task = script_task(0, "what is 17+25?");
    let parent = two_turn_parent(&model.chat, &task);
    let trace = parent.token_trace.as_ref().unwrap();
    let runs = trace.policy_runs();
    assert_eq!(runs.len(), 2, "one sampled run per assistant turn");
    let first_turn = runs[0].len();
    let config = RolloutConfig {
        max_turns: 4,
        max_new_tokens: 24,
        max_tokens: first_turn + 6,
        ..RolloutConfig::default()
    };
    let children = forked(&policy, &config, &parent, &task, &spec(2, 3, 5, Vec::new()));
    assert_eq!(children.len(), 3);
    let cut = runs[1].start;
    for (index, child) in children.iter().enumerate() {
        let origin = child.fork.as_ref().unwrap();
        assert_eq!(
            (origin.parent, origin.turn, origin.index),
            (parent.id, 2, index as u32)
        );
        assert_eq!(origin.prefix, PrefixKind::Tokens);
        let child_trace = child.token_trace.as_ref().unwrap();
        child_trace.validate().unwrap();
        assert_eq!(
            child_trace.token_ids[..cut],
            trace.token_ids[..cut],
            "the prefix, token for token"
        );
        assert_eq!(child_trace.loss_mask[..cut], trace.loss_mask[..cut]);
        assert!(child_trace.len() > cut, "the continuation adds tokens");
        assert_eq!(
            child.messages[..3],
            parent.messages[..3],
            "the messages before turn 2"
        );
        assert!(
            child_trace.policy_tokens() <= config.max_tokens,
            "the prefix's {first_turn} policy tokens count against the budget of {}: {}",
            config.max_tokens,
            child_trace.policy_tokens()
        );
        assert!(child.reward.is_some(), "each child is scored");
    }
    let again = forked(&policy, &config, &parent, &task, &spec(2, 3, 5, Vec::new()));
    assert_eq!(
        children, again,
        "the same fork with the same seed gives the same children"
    );
    let other = forked(&policy, &config, &parent, &task, &spec(2, 3, 6, Vec::new()));
    assert!(
        other.iter().zip(&children).all(|(a, b)| a.id != b.id),
        "another seed, other children"
    );

    let edit = Edit::Observation {
        turn: 1,
        call: 0,
        text: "41".into(),
    };
    let edited = forked(&policy, &config, &parent, &task, &spec(2, 2, 5, vec![edit]));
    let tool_index = parent
        .messages
        .iter()
        .position(|m| m.role == Role::Tool)
        .unwrap();
    let observation = model
        .chat
        .observation_ids(
            &edited[0].messages[..tool_index],
            &edited[0].messages[tool_index..tool_index + 1],
            &task.tools,
        )
        .unwrap();
    for child in &edited {
        assert_eq!(child.messages[tool_index].content, "41");
        let origin = child.fork.as_ref().unwrap();
        assert_eq!(
            origin.edits,
            vec![MessageEdit {
                message: tool_index,
                original: "42".into()
            }]
        );
        let child_trace = child.token_trace.as_ref().unwrap();
        let end = runs[0].end;
        assert_eq!(
            child_trace.token_ids[..end],
            trace.token_ids[..end],
            "kept up to the edit"
        );
        assert_eq!(
            child_trace.token_ids[end..end + observation.len()],
            observation[..],
            "then the edited result, rendered"
        );
        assert!(
            child_trace.loss_mask[end..end + observation.len()]
                .iter()
                .all(|&bit| bit == 0)
        );
    }
    assert!(
        edited.iter().zip(&children).all(|(a, b)| a.id != b.id),
        "an edit makes other children"
    );
}

#[test]
fn an_edited_observation_is_what_the_continuation_sees() {
    let scripted = Scripted::start();
    let config = RolloutConfig {
        max_turns: 3,
        ..RolloutConfig::default()
    };
    let parent = run_script(&scripted, "echo", &config);
    assert_eq!(parent.passed(), Some(true), "the calculator answered 42");
    let task = script_task(0, "echo");
    let kept = forked(
        &scripted.policy,
        &config,
        &parent,
        &task,
        &spec(2, 2, 0, Vec::new()),
    );
    assert!(kept.iter().all(|child| child.passed() == Some(true)));
    assert!(
        kept.iter()
            .all(|child| child.fork.as_ref().unwrap().prefix == PrefixKind::Messages)
    );
    let edit = Edit::Observation {
        turn: 1,
        call: 0,
        text: "41".into(),
    };
    let edited = forked(
        &scripted.policy,
        &config,
        &parent,
        &task,
        &spec(2, 2, 0, vec![edit]),
    );
    for child in &edited {
        assert_eq!(
            child.final_answer.as_deref(),
            Some("41"),
            "it answered what it was told"
        );
        assert_eq!(child.passed(), Some(false));
    }
    let misplaced = Edit::Observation {
        turn: 1,
        call: 0,
        text: "41".into(),
    };
    let refused = |spec: ForkSpec| {
        runtime()
            .block_on(fork(
                &scripted.policy,
                &environment(),
                &config,
                &parent,
                &task,
                &spec,
            ))
            .unwrap_err()
    };
    let error = refused(spec(1, 1, 0, vec![misplaced]));
    assert!(error.to_string().contains("--turn 2"), "{error}");
    let error = refused(spec(3, 1, 0, Vec::new()));
    assert!(error.to_string().contains("2 turn(s)"), "{error}");
}

#[test]
fn monte_carlo_continuations_budget_their_tokens_from_the_episodes_start() {
    // The script calls the calculator three times (5 tokens a turn), then answers right.
    let scripted = Scripted::start();
    for (max_tokens, passes) in [(15, false), (20, true)] {
        let config = RolloutConfig {
            max_turns: 6,
            max_tokens,
            prm_monte_carlo: 2,
            ..RolloutConfig::default()
        };
        let trajectory = run_script(&scripted, "slow", &config);
        assert_eq!(trajectory.passed(), Some(passes), "{max_tokens} tokens");
        let monte_carlo: Vec<_> = trajectory
            .step_scores
            .iter()
            .filter(|score| score.source == ScoreSource::MonteCarlo)
            .collect();
        let answered = trajectory
            .messages
            .iter()
            .filter(|m| m.role == Role::Tool)
            .count();
        assert_eq!(
            monte_carlo.len(),
            answered + 1,
            "a score after each answered turn, then the verdict"
        );
        for score in &monte_carlo {
            assert_eq!(
                score.value,
                f64::from(u8::from(passes)),
                "{max_tokens} tokens, step {}: a continuation has the budget the episode had left ({:?})",
                score.step,
                score.note
            );
        }
    }
}
