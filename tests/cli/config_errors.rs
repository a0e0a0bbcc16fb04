//! Config mistakes end the command before any work, naming the file and line (or the flag),
//! the table, and the key that was probably meant.

use super::rollscope;
use std::path::Path;

/// Runs `rollscope` with `args` in a fresh session; returns its stderr, asserting failure.
fn failure(sessions: &Path, args: &[&str]) -> String {
    let output = rollscope(sessions).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "succeeded: {stderr}");
    stderr
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn misspelt_keys_in_a_run_config_name_the_file_line_table_and_the_key_meant() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let cases = [
        (
            "# a run\nmodel = \"no-such-model\"\n[trainer]\nlearnig_rate = 1e-5\n",
            ":4: unknown key `learnig_rate` in [trainer]; did you mean `learning_rate`?",
        ),
        (
            "[grpo]\nsteps = 2\n\n[grpo.update.objective]\nbetta = 0.1\n",
            ":5: unknown key `betta` in [grpo.update.objective]; did you mean `beta`?",
        ),
        (
            "[trainer.adamw]\nbeta1 = 0.9\nweight_decai = 0.1\n",
            ":3: unknown key `weight_decai` in [trainer.adamw]; did you mean `weight_decay`?",
        ),
        (
            "[trainer.lora]\nrank = 8\nalpha = 16.0\ntarget_modules = [\"q_proj\"]\nrslora = true\n",
            ":5: unknown key `rslora` in [trainer.lora]; did you mean `use_rslora`?",
        ),
        (
            "sed = 3\n",
            ":1: unknown key `sed` at the top level; did you mean `seed`?",
        ),
    ];
    for (index, (text, expected)) in cases.iter().enumerate() {
        let config = write(dir.path(), &format!("run{index}.toml"), text);
        let stderr = failure(&sessions, &["train", "grpo", "--config", &config]);
        assert!(
            stderr.contains(&format!("{config}{expected}")),
            "{text}\n→ {stderr}"
        );
    }
}

#[test]
fn set_and_sweep_keys_are_checked_and_errors_name_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let config = write(dir.path(), "run.toml", "model = \"no-such-model\"\n");
    let stderr = failure(
        &sessions,
        &[
            "train",
            "grpo",
            "--config",
            &config,
            "--sweep",
            "trainer.learnig_rate=1e-5,3e-5",
        ],
    );
    assert!(
        stderr.contains(
            "--sweep trainer.learnig_rate=1e-5,3e-5: unknown key `learnig_rate` in [trainer]; \
             did you mean `learning_rate`?"
        ),
        "{stderr}"
    );
    let stderr = failure(
        &sessions,
        &[
            "train",
            "grpo",
            "--config",
            &config,
            "--set",
            "grpo.stepz=3",
        ],
    );
    assert!(
        stderr.contains("--set grpo.stepz=3: unknown key `stepz` in [grpo]; did you mean `steps`?"),
        "{stderr}"
    );
    let stderr = failure(
        &sessions,
        &["train", "grpo", "--config", &config, "--set", "seed=many"],
    );
    assert!(stderr.contains("--set seed=many: `seed`"), "{stderr}");
}

#[test]
fn misspelt_session_config_keys_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let session = sessions.join("default");
    std::fs::create_dir_all(&session).unwrap();
    let path = write(
        &session,
        "session.toml",
        "theme = \"dark\"\n[reward]\ncorect = 2.0\n",
    );
    let stderr = failure(
        &sessions,
        &["rollout", "--endpoint", "http://127.0.0.1:9/v1"],
    );
    assert!(
        stderr.contains(&format!(
            "{path}:3: unknown key `corect` in [reward]; did you mean `correct`?"
        )),
        "{stderr}"
    );
    write(&session, "session.toml", "them = \"dark\"\n");
    let stderr = failure(
        &sessions,
        &["rollout", "--endpoint", "http://127.0.0.1:9/v1"],
    );
    assert!(
        stderr.contains(&format!(
            "{path}:1: unknown key `them` at the top level; did you mean `theme`?"
        )),
        "{stderr}"
    );
}

#[test]
fn an_instruction_set_this_machine_cannot_run_is_refused_before_any_work() {
    use rollscope::model::{ISA_ENV, Isa};
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let stderr = failure(&sessions, &["--isa", "sse9", "sessions", "new", "a"]);
    assert!(
        stderr.contains("unknown instruction set `sse9`: use avx512, avx2 or portable"),
        "{stderr}"
    );
    let output = rollscope(&sessions)
        .env(ISA_ENV, "neon")
        .args(["sessions", "new", "b"])
        .output()
        .unwrap();
    assert!(!output.status.success(), "a bad {ISA_ENV} is refused too");
    assert!(!sessions.exists(), "nothing was made before the refusal");
    for isa in <Isa as strum::IntoEnumIterator>::iter() {
        let name = format!("s-{isa}");
        let output = rollscope(&sessions)
            .args(["--isa", isa.name(), "sessions", "new", &name])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        if Isa::available().contains(&isa) {
            assert!(output.status.success(), "{isa}: {stderr}");
        } else {
            assert!(
                stderr.contains(&format!("this machine cannot run {isa}")),
                "{isa}: {stderr}"
            );
        }
    }
}
