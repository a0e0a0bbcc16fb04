//! Outcome rewards: components by name, weighted, summing to the total.

use rollscope::agent::protocol::parse_turn;
use rollscope::agent::reward::{RewardConfig, outcome_reward, policy_length};
use rollscope::agent::tools::builtin_spec;
use rollscope::trajectory::{Message, Task, TokenTrace, Trajectory, TrajectoryId};

fn task() -> Task {
    let mut task = Task::new("t1", "test", "What is 48 + 24?");
    task.ground_truth = Some("72".into());
    task.tools = builtin_spec("calculator").into_iter().collect();
    task
}

fn trajectory(turns: &[&str]) -> Trajectory {
    let mut messages = vec![Message::user("What is 48 + 24?")];
    for (index, turn) in turns.iter().enumerate() {
        messages.push(parse_turn(turn, &task().tools, index).to_message());
        messages.push(Message::tool("72"));
    }
    messages.pop();
    Trajectory::new(TrajectoryId(1), messages)
}

const CALL: &str =
    "<tool_call>{\"name\": \"calculator\", \"arguments\": {\"expression\": \"48+24\"}}</tool_call>";

#[test]
fn a_correct_well_formed_answer_earns_every_component() {
    let reward = outcome_reward(
        &task(),
        &trajectory(&[CALL, "Final Answer: 72"]),
        &RewardConfig::default(),
    );
    assert_eq!(reward.passed, Some(true));
    assert_eq!(reward.components["correct"], 1.0);
    assert_eq!(reward.components["format"], 0.1);
    assert_eq!(reward.components["length"], 0.0);
    assert!((reward.total - 1.1).abs() < 1e-12);
    assert_eq!(reward.total, reward.components.values().sum::<f64>());
}

#[test]
fn wrong_answers_missing_markers_and_bad_calls_lose_their_parts() {
    let config = RewardConfig::default();
    let wrong = outcome_reward(&task(), &trajectory(&[CALL, "Final Answer: 27"]), &config);
    assert_eq!(
        (wrong.passed, wrong.components["correct"]),
        (Some(false), 0.0)
    );
    let unmarked = outcome_reward(&task(), &trajectory(&["It is 72."]), &config);
    assert_eq!(unmarked.components["format"], 0.05);
    assert_eq!(unmarked.passed, Some(false), "no marked answer, no match");
    let bad_call =
        "<tool_call>{\"name\": \"calculator\", \"arguments\": {\"expr\": \"48+24\"}}</tool_call>";
    let malformed = outcome_reward(
        &task(),
        &trajectory(&[bad_call, "Final Answer: 72"]),
        &config,
    );
    assert_eq!(malformed.components["format"], 0.05);
    assert_eq!(malformed.passed, Some(true));
    let mut open = task();
    open.ground_truth = None;
    let ungraded = outcome_reward(&open, &trajectory(&["Final Answer: 72"]), &config);
    assert_eq!(ungraded.passed, None);
    assert!(!ungraded.components.contains_key("correct"));
}

#[test]
fn the_length_penalty_counts_sampled_tokens_over_the_budget() {
    let config = RewardConfig {
        length_budget: 1000,
        ..RewardConfig::default()
    };
    let mut long = trajectory(&["Final Answer: 72"]);
    long.token_trace = Some(TokenTrace {
        token_ids: vec![1; 2000],
        loss_mask: [vec![0; 500], vec![1; 1500]].concat(),
        ..TokenTrace::default()
    });
    assert_eq!(policy_length(&long, 4.0), 1500);
    let reward = outcome_reward(&task(), &long, &config);
    assert!((reward.components["length"] + 0.05).abs() < 1e-12);
    let trace = long.token_trace.as_mut().unwrap();
    trace.token_ids = vec![1; 4000];
    trace.loss_mask = vec![1; 4000];
    let capped = outcome_reward(&task(), &long, &config);
    assert!(
        (capped.components["length"] + 0.1).abs() < 1e-12,
        "the penalty stops at -1 × weight"
    );
    let estimated = trajectory(&[&"x".repeat(400)]);
    assert_eq!(
        policy_length(&estimated, 4.0),
        100,
        "without a trace: characters / 4"
    );
}
