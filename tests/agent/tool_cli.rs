//! `rollscope tool python` by hand: `--timeout-ms` is the sandbox's wall clock (up to a
//! stated maximum), and the help says what the sandbox lets a program see and how the
//! limits of a whole call are enforced.

use rollscope::agent::tools::{PythonTool, SandboxLimits, Tool};
use std::process::{Command, Output};

fn tool_python(code: &str, timeout_ms: u64) -> Output {
    let sessions = tempfile::tempdir().unwrap();
    let arguments = serde_json::json!({ "code": code }).to_string();
    Command::new(env!("CARGO_BIN_EXE_rollscope"))
        .arg("--sessions-dir")
        .arg(sessions.path())
        .args([
            "tool",
            "python",
            &arguments,
            "--timeout-ms",
            &timeout_ms.to_string(),
        ])
        .output()
        .expect("the rollscope binary")
}

#[test]
fn the_timeout_flag_governs_the_sandboxs_wall_clock() {
    let output = tool_python("import time\ntime.sleep(11)\nprint('woke')", 20_000);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert_eq!(stdout.trim(), "woke");
}

#[test]
fn a_timeout_above_the_maximum_is_refused_with_the_maximum() {
    let output = tool_python("print(42)", 3_600_000);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stdout}");
    assert!(!stdout.contains("42"), "{stdout}");
    assert!(stderr.contains("600000"), "{stderr}");
    assert!(stderr.contains("at most"), "{stderr}");
}

#[test]
fn the_help_states_the_default_timeout_and_the_limit_routes() {
    let output = Command::new(env!("CARGO_BIN_EXE_rollscope"))
        .args(["tool", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(help.contains("[default: 30000]"), "{help}");
    assert!(help.contains("cgroup v2"), "{help}");
    assert!(help.contains("rlimits"), "{help}");
    assert!(help.contains("2 GiB"), "{help}");
}

#[test]
fn the_python_tool_describes_what_the_program_can_see() {
    let description = PythonTool::new(SandboxLimits::default())
        .description()
        .to_string();
    assert!(!description.contains("no files outside"), "{description}");
    assert!(description.contains("read-only"), "{description}");
    assert!(description.contains("/sandbox"), "{description}");
}
