//! `rollscope list --text` on a session imported from a real ShareGPT tool-calling file:
//! words only a tool result holds, phrases, field queries, a malformed search, and a delete;
//! and `bench search` rebuilding a generated store's index in a session server.

use super::{rollscope, stdout};

const FIXTURE: &str = "tests/data/formats/sharegpt_glaive_toolcall.json";

/// The task ids (`list --json`) a search finds.
fn found(sessions: &std::path::Path, search: &str) -> Vec<String> {
    let listed: Vec<serde_json::Value> = serde_json::from_str(&stdout(
        rollscope(sessions).args(["--json", "list", "--text", search]),
    ))
    .unwrap();
    listed
        .iter()
        .map(|row| row["id"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn list_text_searches_messages_tool_calls_and_results() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let report = stdout(rollscope(&sessions).args(["import", FIXTURE]));
    assert!(report.contains("20 trajectories"), "{report}");

    let director = found(&sessions, "director");
    assert_eq!(director.len(), 1, "only a tool result says `director`");
    assert_eq!(found(&sessions, "role:tool director"), director);
    assert!(found(&sessions, "role:user director").is_empty());
    assert_eq!(found(&sessions, "tool:get_movie_details"), director);
    assert_eq!(found(&sessions, "\"Bell Pepper Stir Fry\"").len(), 1);
    assert!(found(&sessions, "\"Stir Bell Pepper\"").is_empty());
    assert_eq!(found(&sessions, "tool:calculate_area").len(), 1);
    let tools = found(&sessions, "role:tool");
    assert_eq!(tools.len(), 8, "eight conversations have tool results");

    let table = stdout(rollscope(&sessions).args(["list", "--text", "monthly_payment"]));
    assert!(
        table.contains("1 of 1 matching (text:monthly_payment)"),
        "{table}"
    );

    let output = rollscope(&sessions)
        .args(["list", "--text", "colour:red"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("no field `colour`") && stderr.contains("tool:NAME"),
        "{stderr}"
    );

    let deleted = stdout(rollscope(&sessions).args(["delete", "--text", "director"]));
    assert!(deleted.contains('1'), "{deleted}");
    assert!(
        found(&sessions, "director").is_empty(),
        "a deleted trajectory leaves no hit"
    );
    assert_eq!(found(&sessions, "role:tool").len(), 7);
}

#[test]
fn bench_search_rebuilds_the_index_in_a_session_server() {
    let dir = tempfile::tempdir().unwrap();
    let report: serde_json::Value = serde_json::from_str(&stdout(rollscope(dir.path()).args([
        "--json",
        "bench",
        "search",
        "--count",
        "40",
        "--trace-tokens",
        "20",
        "--repeats",
        "2",
        "--pairs",
        "1",
    ])))
    .unwrap();
    let rebuild = &report["server_rebuild"];
    assert_eq!(rebuild["every_trajectory_hits"], report["trajectories"]);
    assert_eq!(report["trajectories"], 40);
    assert!(rebuild["seconds"].as_f64().unwrap() > 0.0, "{rebuild}");
    let peak = rebuild["peak_bytes"].as_u64().unwrap();
    assert!(
        peak >= rebuild["rss_bytes"].as_u64().unwrap() && peak > 0,
        "{rebuild}"
    );
}
