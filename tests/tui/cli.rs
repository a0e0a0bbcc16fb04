//! The real binary: `demo-data` fills a session, refuses to fill it twice, and `bench tui`
//! runs end to end on a small store.

use assert_cmd::Command;

fn rollscope(root: &std::path::Path) -> Command {
    let mut command = Command::cargo_bin("rollscope").unwrap();
    command
        .arg("--sessions-dir")
        .arg(root)
        .args(["--session", "e2e"]);
    command
}

#[test]
fn demo_data_fills_a_session_once() {
    let root = tempfile::tempdir().unwrap();
    rollscope(root.path())
        .args(["demo-data", "--count", "48"])
        .assert()
        .success();
    let listed = rollscope(root.path())
        .args(["--json", "list"])
        .output()
        .unwrap();
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(rows.len(), 48);
    let again = rollscope(root.path())
        .args(["demo-data", "--count", "48"])
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
}

#[test]
fn bench_tui_reports_every_figure() {
    let root = tempfile::tempdir().unwrap();
    let output = Command::cargo_bin("rollscope")
        .unwrap()
        .args([
            "--json", "bench", "tui", "--count", "300", "--frames", "5", "--pages", "5",
        ])
        .arg("--store-root")
        .arg(root.path())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let figures: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(figures["trajectories"], 300);
    for key in [
        "store_open_ms",
        "startup_first_frame_with_rows_ms",
        "frame_list_ms",
        "frame_turn_ms",
        "frame_tokens_ms",
        "page_ms",
    ] {
        assert!(!figures[key].is_null(), "{key} missing");
    }
    assert!(
        figures["peak_rss_mib"]
            .as_f64()
            .is_some_and(|mib| mib > 0.0)
    );
}
