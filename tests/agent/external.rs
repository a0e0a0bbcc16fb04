//! External tools and verifiers: real commands reading JSON on stdin, answering on stdout.

use super::common::{in_seconds, runtime};
use rollscope::agent::protocol::parse_turn;
use rollscope::agent::reward::RewardConfig;
use rollscope::agent::tools::{ExternalToolConfig, ToolFailure, ToolObservation, ToolRegistry};
use rollscope::agent::verifier::{ExternalVerifierConfig, Verifier};
use rollscope::session::SessionConfig;
use rollscope::trajectory::{Message, Task, Trajectory, TrajectoryId};
use std::path::Path;

const WEATHER: &str = r#"import json, sys
request = json.load(sys.stdin)
city = request["arguments"]["city"]
if city == "Atlantis":
    print(json.dumps({"output": "unknown city: " + city, "is_error": True}))
else:
    print(json.dumps({"output": "Sunny in " + city + " (" + request["name"] + ")"}))
"#;

const CONFIG: &str = r#"
[[tools]]
name = "weather"
description = "Today's weather in a city."
parameters = { type = "object", properties = { city = { type = "string" } }, required = ["city"] }
command = ["python3", "weather.py"]

[[tools]]
name = "slow"
command = "sleep 30"
timeout_ms = 300

[[tools]]
name = "chatty"
command = "echo this is not json"

[[tools]]
name = "failing"
command = "echo broken >&2; exit 3"

[[tools]]
name = "background"
command = "sleep 30 & echo '{\"output\": \"done\"}'"

[[verifiers]]
name = "exact_72"
command = ["python3", "verify.py"]
weight = 0.5
"#;

const VERIFY: &str = r#"import json, sys
request = json.load(sys.stdin)
good = request["answer"] == "72" and request["task"]["id"] == "t1"
print(json.dumps({"score": 1.0 if good else 0.25, "passed": good}))
"#;

fn session(dir: &Path) -> SessionConfig {
    std::fs::write(dir.join("weather.py"), WEATHER).unwrap();
    std::fs::write(dir.join("verify.py"), VERIFY).unwrap();
    toml::from_str(CONFIG).unwrap()
}

fn call(registry: &ToolRegistry, block: &str) -> ToolObservation {
    let turn = parse_turn(
        &format!("<tool_call>{block}</tool_call>"),
        &registry.specs(),
        0,
    );
    runtime().block_on(registry.execute(&turn.calls[0], in_seconds(20)))
}

#[test]
fn session_tools_answer_through_the_registry() {
    let dir = tempfile::tempdir().unwrap();
    let config = session(dir.path());
    let mut registry = ToolRegistry::new();
    registry.add_external(&config.tools, dir.path()).unwrap();
    assert_eq!(
        registry.names(),
        ["weather", "slow", "chatty", "failing", "background"]
    );
    let sunny = call(
        &registry,
        r#"{"name": "weather", "arguments": {"city": "Oslo"}}"#,
    );
    assert_eq!(sunny.text, "Sunny in Oslo (weather)");
    assert_eq!(sunny.failure, None);
    let unknown = call(
        &registry,
        r#"{"name": "weather", "arguments": {"city": "Atlantis"}}"#,
    );
    assert_eq!(
        (unknown.text.as_str(), unknown.failure),
        ("unknown city: Atlantis", Some(ToolFailure::Error))
    );
    let missing = call(&registry, r#"{"name": "weather", "arguments": {}}"#);
    assert_eq!(missing.failure, Some(ToolFailure::Format));
    assert_eq!(missing.text, "error: `weather` needs the argument `city`.");
    let slow = call(&registry, r#"{"name": "slow", "arguments": {}}"#);
    assert_eq!(slow.failure, Some(ToolFailure::Timeout));
    assert!(slow.text.contains("did not answer in time"));
    let chatty = call(&registry, r#"{"name": "chatty", "arguments": {}}"#);
    assert_eq!(chatty.failure, Some(ToolFailure::Error));
    assert!(
        chatty.text.contains("did not answer with JSON"),
        "{}",
        chatty.text
    );
    let failing = call(&registry, r#"{"name": "failing", "arguments": {}}"#);
    assert_eq!(
        failing.text,
        "error: tool `failing` failed with exit status 3: broken"
    );
    let background = call(&registry, r#"{"name": "background", "arguments": {}}"#);
    assert_eq!(
        background.text, "done",
        "a child holding the pipe does not hold the call"
    );
    let stats = registry.stats();
    assert_eq!(stats["weather"].calls, 3);
    assert_eq!(stats["slow"].failures[&ToolFailure::Timeout], 1);
}

#[test]
fn a_tool_with_a_bad_schema_or_a_duplicate_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut registry = ToolRegistry::standard(Default::default()).unwrap();
    let duplicate: ExternalToolConfig =
        toml::from_str("name = \"calculator\"\ncommand = \"cat\"").unwrap();
    let error = registry.add_external(&[duplicate], dir.path()).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("two tools are named `calculator`")
    );
    let no_schema: ExternalToolConfig =
        toml::from_str("name = \"x\"\ncommand = \"cat\"\nparameters = { type = \"string\" }")
            .unwrap();
    let error = registry.add_external(&[no_schema], dir.path()).unwrap_err();
    assert!(error.to_string().contains("type = \"object\""));
}

#[test]
fn external_verifiers_add_a_named_component_and_a_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let config = session(dir.path());
    let mut task = Task::new("t1", "test", "What is 48 + 24?");
    task.ground_truth = Some("72".into());
    let answered = |text: &str| {
        Trajectory::new(
            TrajectoryId(1),
            vec![Message::user("What is 48 + 24?"), Message::assistant(text)],
        )
    };
    let verifier = Verifier::new(
        RewardConfig::default(),
        config.verifiers.clone(),
        dir.path(),
    );
    let good =
        runtime().block_on(verifier.score(&task, &answered("48 + 24 = 72\nFinal Answer: 72")));
    assert!(good.problems.is_empty(), "{:?}", good.problems);
    assert_eq!(good.reward.components["exact_72"], 0.5);
    assert_eq!(good.reward.passed, Some(true));
    let bad = runtime().block_on(verifier.score(&task, &answered("Final Answer: 73")));
    assert_eq!(bad.reward.components["exact_72"], 0.125);
    assert_eq!(bad.reward.passed, Some(false));
    let broken: ExternalVerifierConfig =
        toml::from_str("name = \"broken\"\ncommand = \"exit 1\"").unwrap();
    let verifier = Verifier::new(RewardConfig::default(), vec![broken], dir.path());
    let failed = runtime().block_on(verifier.score(&task, &answered("Final Answer: 72")));
    assert_eq!(failed.reward.passed, Some(false));
    assert_eq!(failed.reward.components["broken"], 0.0);
    assert!(failed.problems[0].starts_with("verifier `broken`: ended with Exited(1)"));
}
