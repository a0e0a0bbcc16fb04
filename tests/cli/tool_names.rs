//! Unknown tool names and process-score kinds are refused, naming the known ones, before a
//! model loads or a rollout starts.

use super::rollscope;

fn stderr_of_failure(args: &[&str], sessions: &std::path::Path) -> String {
    let output = rollscope(sessions).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "succeeded: {stderr}");
    stderr
}

#[test]
fn rollout_and_eval_refuse_unknown_tools_and_prm_kinds() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let endpoint = ["rollout", "--endpoint", "http://127.0.0.1:9/v1", "-n", "1"];
    let stderr = stderr_of_failure(
        &[&endpoint[..], &["--tools", "calculater"]].concat(),
        &sessions,
    );
    assert!(
        stderr.contains("unknown tool `calculater`; did you mean `calculator`?")
            && stderr.contains("calculator, python, search"),
        "{stderr}"
    );
    let stderr = stderr_of_failure(&[&endpoint[..], &["--prm", "foo"]].concat(), &sessions);
    assert!(
        stderr.contains("foo") && stderr.contains("rule") && stderr.contains("mc"),
        "{stderr}"
    );
    let stderr = stderr_of_failure(
        &["eval", "--model", "no-such-model", "--tools", "foo"],
        &sessions,
    );
    assert!(
        stderr.contains("unknown tool `foo`") && stderr.contains("calculator, python, search"),
        "{stderr}"
    );
}

#[test]
fn a_run_config_with_an_unknown_tool_names_rollout_tools() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let config = dir.path().join("run.toml");
    std::fs::write(
        &config,
        "model = \"no-such-model\"\n[rollout]\ntools = [\"calculator\", \"serch\"]\n",
    )
    .unwrap();
    let stderr = stderr_of_failure(
        &["train", "grpo", "--config", &config.to_string_lossy()],
        &sessions,
    );
    assert!(
        stderr.contains("rollout.tools: unknown tool `serch`; did you mean `search`?"),
        "{stderr}"
    );
}
