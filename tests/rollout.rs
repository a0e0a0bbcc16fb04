//! The rollout loop: the local policy with exact token traces, the HTTP policy against a
//! real `rollscope serve` on loopback, and the loop's handling of hostile policy output.

#[path = "rollout/fork.rs"]
mod fork;
#[path = "rollout/repair.rs"]
mod repair;
#[path = "rollout/scripted.rs"]
mod scripted;
#[path = "rollout/serve.rs"]
mod serve_api;
#[path = "rollout/tool_limit.rs"]
mod tool_limit;

use rollscope::agent::reward::RewardConfig;
use rollscope::agent::rollout::{
    Environment, HttpPolicy, LocalPolicy, Policy, RolloutConfig, RolloutRequest, run_rollouts,
};
use rollscope::agent::serve::{ServedModel, serve};
use rollscope::agent::tasks::TaskSetSpec;
use rollscope::agent::tools::{SandboxLimits, ToolRegistry};
use rollscope::model::embedded::{EmbeddedSpec, init_folder};
use rollscope::model::{LanguageModel, LoadOptions, score_trajectory};
use rollscope::trajectory::{Role, StopReason, Trajectory};
use std::sync::Arc;
use std::time::Duration;

fn embedded() -> (tempfile::TempDir, LanguageModel) {
    let dir = tempfile::tempdir().unwrap();
    let model = init_folder(
        &dir.path().join("base"),
        &EmbeddedSpec::default(),
        &LoadOptions::default(),
    )
    .unwrap();
    (dir, model)
}

fn environment() -> Environment {
    Environment::new(
        ToolRegistry::standard(SandboxLimits::default()).unwrap(),
        RewardConfig::default(),
    )
}

fn requests(count: usize, group: u32) -> Vec<RolloutRequest> {
    let tasks = "arith:1:eval"
        .parse::<TaskSetSpec>()
        .unwrap()
        .load(Some(count), 3)
        .unwrap();
    tasks
        .into_iter()
        .enumerate()
        .flat_map(|(index, task)| {
            let task = Arc::new(task);
            (0..group).map(move |sample| RolloutRequest {
                task: task.clone(),
                run: "test".into(),
                policy_version: 0,
                group: index as u64,
                sample,
            })
        })
        .collect()
}

fn collect(
    policy: &Policy,
    config: &RolloutConfig,
    requests: Vec<RolloutRequest>,
) -> Vec<Trajectory> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut out = Vec::new();
    runtime.block_on(run_rollouts(
        policy,
        &environment(),
        config,
        requests,
        |t| out.push(t),
    ));
    out.sort_by_key(|t| (t.group, t.sample));
    out
}

fn local(model: &LanguageModel) -> Policy {
    let (policy, _thread) = LocalPolicy::spawn(model.decoder(), model.stop_token_ids()).unwrap();
    Policy::Local {
        policy,
        chat: Arc::new(model.chat.clone()),
    }
}

#[test]
fn local_rollouts_record_exact_traces_and_are_deterministic() {
    let (_dir, model) = embedded();
    let config = RolloutConfig {
        max_turns: 3,
        max_new_tokens: 48,
        max_tokens: 96,
        seed: 11,
        ..RolloutConfig::default()
    };
    let first = collect(&local(&model), &config, requests(3, 3));
    let again = collect(&local(&model), &config, requests(3, 3));
    assert_eq!(first.len(), 9);
    for (a, b) in first.iter().zip(&again) {
        assert_eq!(
            a.token_trace, b.token_trace,
            "the same seeds give the same rollouts"
        );
    }
    for trajectory in &first {
        let trace = trajectory.token_trace.as_ref().unwrap();
        trace.validate().unwrap();
        assert!(trace.policy_tokens() <= config.max_tokens);
        assert!(trace.policy_tokens() > 0);
        for (index, &bit) in trace.loss_mask.iter().enumerate() {
            if bit == 0 {
                assert_eq!(
                    trace.logprobs[index], 0.0,
                    "only sampled tokens carry log-probs"
                );
            }
        }
        let prompt = model
            .chat
            .prompt_ids(&trajectory.messages[..2], &trajectory_tools(trajectory))
            .unwrap();
        assert_eq!(
            &trace.token_ids[..prompt.len()],
            &prompt[..],
            "the trace starts with the rendered prompt"
        );
        assert!(trace.loss_mask[..prompt.len()].iter().all(|&bit| bit == 0));
        let score = score_trajectory(&model, trajectory, config.temperature).unwrap();
        let drift = score.mean_log_ratio.unwrap().abs();
        assert!(
            drift < 1e-4,
            "sampling log-probs equal the training forward's: {drift}"
        );
        assert!(trajectory.reward.is_some());
        let steps = trajectory.steps();
        let scored: Vec<u32> = trajectory.step_scores.iter().map(|s| s.step).collect();
        assert!(
            scored.windows(2).all(|pair| pair[0] < pair[1]) && scored.len() <= steps.len(),
            "at most one rule score per turn, in order: {scored:?}"
        );
        for (step, location) in steps.iter().enumerate() {
            let calls = &trajectory.messages[location.message].tool_calls;
            let step = u32::try_from(step).unwrap();
            assert!(
                calls.is_empty() || scored.contains(&step),
                "a turn that calls a tool has its calls checked and scored"
            );
        }
        let tool_messages = trajectory
            .messages
            .iter()
            .filter(|m| m.role == Role::Tool)
            .count();
        assert_eq!(tool_messages, trajectory.tool_call_count());
        assert!(matches!(
            trajectory.stop_reason,
            StopReason::Answered | StopReason::MaxTokens | StopReason::MaxTurns
        ));
    }
}

fn trajectory_tools(trajectory: &Trajectory) -> Vec<serde_json::Value> {
    let spec = "arith:1:eval".parse::<TaskSetSpec>().unwrap();
    let tasks = spec.load(Some(3), 3).unwrap();
    let task = tasks
        .iter()
        .find(|t| Some(&t.id) == trajectory.task_id.as_ref())
        .unwrap();
    task.tools.clone()
}

#[test]
fn the_http_policy_against_a_real_server_matches_the_local_first_turn() {
    let (_dir, model) = embedded();
    let (served, _thread) = LocalPolicy::spawn(model.decoder(), model.stop_token_ids()).unwrap();
    let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
    let address = server.server_addr().to_ip().unwrap();
    let served = ServedModel {
        policy: served,
        chat: Arc::new(model.chat.clone()),
        name: "embedded".into(),
        default_max_tokens: 64,
    };
    let worker = {
        let server = server.clone();
        std::thread::spawn(move || serve(server, served, 4))
    };
    let config = RolloutConfig {
        max_turns: 1,
        max_new_tokens: 40,
        temperature: 0.0,
        ..RolloutConfig::default()
    };
    let http = Policy::Http(HttpPolicy::new(
        &format!("http://{address}/v1"),
        "embedded",
        Duration::from_secs(60),
    ));
    let remote = collect(&http, &config, requests(2, 2));
    let near = collect(&local(&model), &config, requests(2, 2));
    server.unblock();
    worker.join().unwrap();
    assert_eq!(remote.len(), 4);
    for (remote, near) in remote.iter().zip(&near) {
        assert!(
            remote.token_trace.is_none(),
            "an endpoint gives the messages view"
        );
        let remote_turn = &remote.messages[2];
        let near_turn = &near.messages[2];
        assert_eq!(remote_turn.role, Role::Assistant);
        assert_eq!(
            remote_turn.content, near_turn.content,
            "greedy: the same first turn"
        );
        assert_eq!(remote_turn.tool_calls.len(), near_turn.tool_calls.len());
        assert!(remote.extra["policy_tokens"].as_u64().unwrap() > 0);
    }
}

#[test]
fn hostile_policy_output_ends_as_observations_and_stop_reasons() {
    let outcomes = scripted::run_scripts();
    let by_name = |name: &str| outcomes.iter().find(|(n, _)| n == name).unwrap().1.clone();
    let invalid = by_name("invalid-json");
    let observation = invalid
        .messages
        .iter()
        .find(|m| m.role == Role::Tool)
        .unwrap();
    assert!(observation.is_error);
    assert!(
        observation.content.contains("JSON"),
        "{}",
        observation.content
    );
    assert_eq!(invalid.extra["format_failures"], 1);
    let unknown = by_name("unknown-tool");
    let observation = unknown
        .messages
        .iter()
        .find(|m| m.role == Role::Tool)
        .unwrap();
    assert!(
        observation.content.contains("weather"),
        "{}",
        observation.content
    );
    let missing = by_name("missing-argument");
    let observation = missing
        .messages
        .iter()
        .find(|m| m.role == Role::Tool)
        .unwrap();
    assert!(
        observation.content.contains("expression"),
        "{}",
        observation.content
    );
    let endless = by_name("never-stops");
    assert_eq!(endless.stop_reason, StopReason::MaxTurns);
    assert_eq!(endless.turn_count(), 3);
    let good = by_name("answers");
    assert_eq!(good.stop_reason, StopReason::Answered);
    assert_eq!(good.passed(), Some(true));
    let observation = good.messages.iter().find(|m| m.role == Role::Tool).unwrap();
    assert!(!observation.is_error);
    assert!(observation.latency_ms.is_some());
    let truncated = by_name("truncated");
    assert_eq!(truncated.stop_reason, StopReason::MaxTokens);
}

#[test]
fn max_concurrent_tools_bounds_the_calls_running_at_once() {
    for limit in [1, 2] {
        let probe = Arc::new(tool_limit::Probe::new(limit + 1));
        let done = tool_limit::run_probe(probe.clone(), limit, 100);
        assert_eq!(done.len(), 6);
        for trajectory in &done {
            assert_eq!(trajectory.stop_reason, StopReason::MaxTurns);
            let observations: Vec<_> = trajectory
                .messages
                .iter()
                .filter(|m| m.role == Role::Tool)
                .collect();
            assert_eq!(observations.len(), 4, "two turns of two calls are answered");
            assert!(observations.iter().all(|m| !m.is_error));
        }
        assert_eq!(
            probe.most(),
            limit,
            "calls wait for a partner beyond the limit, which never comes"
        );
    }
    let probe = Arc::new(tool_limit::Probe::new(8));
    let done = tool_limit::run_probe(probe.clone(), 0, 10_000);
    assert_eq!(done.len(), 6);
    assert!(
        probe.most() >= 8,
        "without a limit the calls of many episodes run together: {}",
        probe.most()
    );
}

#[test]
fn the_server_streams_gives_n_choices_and_honours_stop_strings() {
    let (_dir, model) = embedded();
    serve_api::streams_n_choices_and_stop_strings(&model);
}

#[test]
fn every_tool_call_of_the_loop_has_a_stable_id_that_its_result_names() {
    let mut first = scripted::run_scripts();
    let mut again = scripted::run_scripts();
    first.sort_by(|a, b| a.0.cmp(&b.0));
    again.sort_by(|a, b| a.0.cmp(&b.0));
    let ids = |trajectory: &Trajectory| -> Vec<String> {
        trajectory
            .messages
            .iter()
            .flat_map(|m| &m.tool_calls)
            .map(|call| call.id.clone().expect("every call has an id"))
            .collect()
    };
    for ((name, trajectory), (_, rerun)) in first.iter().zip(&again) {
        let calls = ids(trajectory);
        let unique: std::collections::BTreeSet<_> = calls.iter().collect();
        assert_eq!(
            unique.len(),
            calls.len(),
            "{name}: ids are unique: {calls:?}"
        );
        assert!(
            calls.iter().all(|id| id.starts_with("call_")),
            "{name}: {calls:?}"
        );
        assert_eq!(calls, ids(rerun), "{name}: a rerun gives the same ids");
        for message in trajectory.messages.iter().filter(|m| m.role == Role::Tool) {
            let answered = message
                .tool_call_id
                .as_ref()
                .expect("a result names its call");
            assert!(
                calls.contains(answered),
                "{name}: {answered} answers no call"
            );
        }
    }
}
