//! Shared helpers: the binary, a session with demo data, a handle through its server.

use rollscope::session::SessionPaths;
use rollscope::store::{ServerLauncher, Store};
use std::path::Path;
use std::process::{Command, Output};

/// The `rollscope` binary under test.
pub fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_rollscope")
}

/// How the binary starts a session server.
pub fn launcher() -> ServerLauncher {
    ServerLauncher::rollscope(binary())
}

/// The session `default` under `root`.
pub fn session(root: &Path) -> SessionPaths {
    SessionPaths::new(root, "default").unwrap()
}

/// A handle on the session's store through its server (started when none runs).
pub fn connect(paths: &SessionPaths) -> Store {
    Store::connect(&paths.store_dir(), launcher()).unwrap()
}

/// `rollscope --sessions-dir ROOT ARGS…` as `user`, servers idling out after 20 s.
pub fn cli(root: &Path, user: &str, args: &[&str]) -> Command {
    let mut command = Command::new(binary());
    command
        .arg("--sessions-dir")
        .arg(root)
        .args(args)
        .env_remove("ROLLSCOPE_SESSION")
        .env("USER", user)
        .env("ROLLSCOPE_SERVER_IDLE_SECS", "20");
    command
}

/// Runs a command and returns its stdout; fails the test with its stderr.
pub fn stdout(output: Output) -> String {
    assert!(
        output.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Fills the session with `count` synthetic rollouts through the CLI.
pub fn demo(root: &Path, count: usize) {
    let count = count.to_string();
    stdout(
        cli(root, "setup", &["demo-data", "--count", &count])
            .output()
            .unwrap(),
    );
}

/// The ids of up to `limit` failed rollouts, as `list --json` prints them.
pub fn failures(root: &Path, limit: usize) -> Vec<String> {
    let limit = limit.to_string();
    let listed = stdout(
        cli(
            root,
            "setup",
            &["list", "--fail", "--json", "--limit", &limit],
        )
        .output()
        .unwrap(),
    );
    let rows: Vec<serde_json::Value> = serde_json::from_str(&listed).unwrap();
    rows.iter()
        .map(|row| row["id"].as_str().unwrap().to_string())
        .collect()
}

/// The process id of the server holding the session's store, from its lock file.
pub fn server_pid(paths: &SessionPaths) -> Option<i32> {
    let lock = paths.dir.join("store.lock");
    let holder = std::fs::read_to_string(lock).ok()?;
    holder
        .strip_prefix("process ")?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
