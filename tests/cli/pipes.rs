//! Every command ends quietly when the reader of its output goes away (`rollscope list |
//! head -1`): no panic, no message, status 0 or 141.

use super::{rollscope, stdout, write_native};
use std::process::Stdio;

#[test]
fn a_closed_stdout_ends_commands_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let input = dir.path().join("in.jsonl");
    write_native(&input, 300);
    stdout(rollscope(&sessions).arg("import").arg(&input));
    let commands: [&[&str]; 5] = [
        &["list", "--limit", "300"],
        &["--json", "list"],
        &["export", "--format", "openai"],
        &["tasks"],
        &["sessions"],
    ];
    for args in commands {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("rollscope"))
            .arg("--sessions-dir")
            .arg(&sessions)
            .env_remove("ROLLSCOPE_SESSION")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.is_empty(), "{args:?} wrote to stderr: {stderr}");
        assert!(
            output.status.success() || output.status.code() == Some(141),
            "{args:?}: {:?}",
            output.status
        );
    }
}
