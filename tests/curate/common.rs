//! Shared fixtures: arithmetic tasks, hand-built rollouts, stores in temporary folders.

use rollscope::agent::tools::builtin_spec;
use rollscope::store::Store;
use rollscope::trajectory::{
    Message, Reward, ScoreSource, StepScore, Task, ToolCall, Trajectory, TrajectoryId,
};

/// The question of the apples task.
pub const APPLES: &str = "Tom has 17 apples and buys 25 more. How many apples does he have?";

/// A task with a ground truth, a reference solution and the calculator.
pub fn task(id: &str, source: &str, question: &str, truth: &str, reference: &str) -> Task {
    let mut task = Task::new(id, source, question);
    task.ground_truth = Some(truth.to_string());
    task.reference_solution = Some(reference.to_string());
    task.tools = vec![builtin_spec("calculator").expect("the calculator spec")];
    task.difficulty = Some(1);
    task
}

/// The apples task (truth 42).
pub fn apples() -> Task {
    task(
        "apples",
        "arith",
        APPLES,
        "42",
        "17 + 25 = <<17+25=42>>42 apples.\n#### 42",
    )
}

/// An assistant turn that calls the calculator (call id `call_<turn>_0`).
pub fn call(turn: usize, text: &str, expression: &str) -> Message {
    let mut message = Message::assistant(text);
    let mut call = ToolCall::from_json_arguments(
        "calculator",
        &serde_json::json!({ "expression": expression }),
    );
    call.id = Some(format!("call_{turn}_0"));
    message.tool_calls.push(call);
    message
}

/// The calculator's result for turn `turn`.
pub fn result(turn: usize, value: &str) -> Message {
    let mut message = Message::tool(value);
    message.name = Some("calculator".into());
    message.tool_call_id = Some(format!("call_{turn}_0"));
    message
}

/// A rollout of `task`: its prompt, then `turns`; with a verdict when `passed` is given.
pub fn rollout(task: &Task, number: u64, turns: Vec<Message>, passed: Option<bool>) -> Trajectory {
    let mut messages = task.prompt.clone();
    messages.extend(turns);
    let mut trajectory = Trajectory::new(TrajectoryId(0x1000 + number), messages);
    trajectory.task_id = Some(task.id.clone());
    trajectory.reward = passed.map(|passed| Reward {
        total: if passed { 1.0 } else { 0.0 },
        passed: Some(passed),
        ..Reward::default()
    });
    trajectory
}

/// A process score.
pub fn score(step: u32, value: f64, source: ScoreSource) -> StepScore {
    StepScore {
        step,
        value,
        source,
        note: None,
    }
}

/// An empty store in a temporary folder.
pub fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let store = Store::open(&dir.path().join("store")).expect("a store");
    (dir, store)
}

/// A file of `tests/data`.
pub fn data(path: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(path)
}
