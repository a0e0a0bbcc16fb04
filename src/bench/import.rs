//! The import benchmark: an Inspect `.eval` log of N samples (about 1 GiB at the defaults:
//! 100k samples of ~10 KiB, members stored uncompressed so every byte is JSON to parse), a
//! parquet file of TRL completions rows written with our own parquet writer, and a Harbor job
//! folder of ATIF trials (`trial-N/agent/trajectory.json` of 20 steps with token ids and
//! log-probs, and `result.json` with the verifier's reward), each imported by a real
//! `rollscope import` process into a fresh session: MB/s of the files, records/s, and the
//! peak memory of the importing process and of the session server that stores the records.

use super::BenchProgress;
use crate::session::SessionPaths;
use crate::store::{ServerLauncher, Store};
use serde::Serialize;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What the import benchmark generates.
#[derive(Clone, Debug, Serialize)]
pub struct ImportBenchOptions {
    /// Samples in the `.eval` log.
    pub samples: usize,
    /// Bytes of JSON per sample, roughly.
    pub sample_bytes: usize,
    /// Rows of the parquet file.
    pub parquet_rows: usize,
    /// Trials in the Harbor job folder of ATIF trajectories.
    pub atif_trials: usize,
    /// The `rollscope` executable that imports (and serves the session).
    pub executable: PathBuf,
}

/// One file's import.
#[derive(Clone, Debug, Serialize)]
pub struct ImportFigure {
    /// What was imported.
    pub what: String,
    /// Records the import reported.
    pub records: usize,
    /// Size of the file, bytes.
    pub bytes: u64,
    /// Wall time of the import process, seconds.
    pub seconds: f64,
    /// The file's size over the wall time, MB/s (10^6 bytes).
    pub mb_per_s: f64,
    /// Peak resident memory of the importing process, bytes.
    pub importer_peak_bytes: u64,
    /// Peak resident memory of the session server while it stored them, bytes.
    pub server_peak_bytes: Option<u64>,
}

/// What it measured.
#[derive(Clone, Debug, Serialize)]
pub struct ImportBenchReport {
    /// The options.
    pub options: ImportBenchOptions,
    /// The `.eval` log, the parquet file, the ATIF job folder.
    pub figures: Vec<ImportFigure>,
}

/// Runs the benchmark.
pub fn bench_import(
    options: &ImportBenchOptions,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<ImportBenchReport> {
    let scratch = tempfile::tempdir()?;
    let eval = scratch.path().join("bench.eval");
    progress(BenchProgress::Begin {
        label: "writing the .eval log".into(),
        total: Some(options.samples as u64),
    });
    write_eval(&eval, options, progress)?;
    progress(BenchProgress::End);
    let parquet = scratch.path().join("completions_00001.parquet");
    write_completions(&parquet, options.parquet_rows)?;
    let job = scratch.path().join("harbor-job");
    progress(BenchProgress::Begin {
        label: "writing the ATIF job folder".into(),
        total: Some(options.atif_trials as u64),
    });
    write_atif_job(&job, options.atif_trials, progress)?;
    progress(BenchProgress::End);
    let mut figures = Vec::new();
    for (what, path) in [
        ("inspect .eval log", &eval),
        ("TRL completions parquet", &parquet),
        ("ATIF job folder", &job),
    ] {
        progress(BenchProgress::Begin {
            label: format!("importing the {what}"),
            total: None,
        });
        figures.push(import(options, scratch.path(), what, path)?);
        progress(BenchProgress::End);
    }
    Ok(ImportBenchReport {
        options: options.clone(),
        figures,
    })
}

/// Imports one file with a `rollscope import` process into a fresh session.
fn import(
    options: &ImportBenchOptions,
    scratch: &Path,
    what: &str,
    path: &Path,
) -> anyhow::Result<ImportFigure> {
    let root = scratch.join(format!("sessions-{}", what.len()));
    let paths = SessionPaths::new(&root, "bench-import")?;
    let store = Store::connect(
        &paths.store_dir(),
        ServerLauncher::rollscope(&options.executable),
    )?;
    let started = Instant::now();
    let child = std::process::Command::new(&options.executable)
        .arg("--sessions-dir")
        .arg(&root)
        .args(["--session", "bench-import", "--json", "import"])
        .arg(path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let (output, importer_peak_bytes) = wait_with_peak(child)?;
    let seconds = started.elapsed().as_secs_f64();
    anyhow::ensure!(output.status.success(), "the import of the {what} failed");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    let records = match report[0]["files"].as_array() {
        Some(files) => files
            .iter()
            .map(|file| file["trajectories"].as_u64().unwrap_or(0) as usize)
            .sum(),
        None => report[0]["trajectories"].as_u64().unwrap_or(0) as usize,
    };
    let server_peak_bytes = store
        .server_pid()
        .and_then(|pid| super::process_memory(pid).1);
    let bytes = size_of(path)?;
    Ok(ImportFigure {
        what: what.to_string(),
        records,
        bytes,
        seconds,
        mb_per_s: bytes as f64 / 1e6 / seconds,
        importer_peak_bytes,
        server_peak_bytes,
    })
}

/// Waits for a child, returning its output and its peak resident memory (its `VmHWM`,
/// read every 20 ms while it runs).
fn wait_with_peak(mut child: std::process::Child) -> anyhow::Result<(std::process::Output, u64)> {
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut bytes).map(|_| bytes)
    });
    let mut peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        peak = peak.max(super::process_memory(child.id()).1.unwrap_or(0));
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let stdout = reader
        .join()
        .map_err(|_| anyhow::anyhow!("reading the import's output failed"))??;
    let output = std::process::Output {
        status,
        stdout,
        stderr: Vec::new(),
    };
    Ok((output, peak))
}

/// Writes an Inspect `.eval` archive of `options.samples` samples of a tool-using episode.
fn write_eval(
    path: &Path,
    options: &ImportBenchOptions,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<()> {
    let file = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let mut zip = zip::ZipWriter::new(file);
    let stored = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(false);
    let eval = json!({"eval": {"task": "bench", "model": "synthetic", "created": "2026-01-01T00:00:00+00:00"}});
    zip.start_file("_journal/start.json", stored)?;
    zip.write_all(eval.to_string().as_bytes())?;
    let observation_words = options.sample_bytes.saturating_sub(1200) / 6;
    for sample in 0..options.samples {
        let observation: String = (0..observation_words)
            .map(|word| ["alpha ", "beta ", "gamma ", "delta "][(word * 7 + sample) % 4])
            .collect();
        let body = json!({
            "id": sample, "epoch": 1, "target": (sample % 97).to_string(),
            "input": format!("What is {} + {}?", sample % 89, sample % 8),
            "messages": [
                {"role": "system", "content": "You are a careful assistant with a calculator."},
                {"role": "user", "content": format!("What is {} + {}? Use the calculator.", sample % 89, sample % 8)},
                {"role": "assistant", "content": "I will compute it.",
                 "tool_calls": [{"id": format!("call_{sample}"), "function": "calculator",
                                 "arguments": {"expression": format!("{} + {}", sample % 89, sample % 8)}}]},
                {"role": "tool", "content": observation, "tool_call_id": format!("call_{sample}"), "function": "calculator"},
                {"role": "assistant", "content": format!("Final Answer: {}", sample % 89 + sample % 8)},
            ],
            "output": {"model": "synthetic", "choices": []},
            "scores": {"match": {"value": if sample % 3 == 0 { "I" } else { "C" }}},
            "total_time": 1.5,
        });
        zip.start_file(format!("samples/{sample}_epoch_1.json"), stored)?;
        zip.write_all(body.to_string().as_bytes())?;
        if sample % 1000 == 999 {
            progress(BenchProgress::Advance(1000));
        }
    }
    zip.start_file("header.json", stored)?;
    zip.write_all(eval.to_string().as_bytes())?;
    zip.finish()?.flush()?;
    Ok(())
}

/// Writes `rows` TRL completions rows (`step`, conversational `prompt` and `completion`, two
/// reward columns, `advantage`) as parquet, in groups of eight per prompt.
fn write_completions(path: &Path, rows: usize) -> anyhow::Result<()> {
    let mut jsonl = Vec::new();
    for row in 0..rows {
        let group = row / 8;
        let line = json!({
            "step": group / 4 + 1,
            "prompt": [{"role": "user", "content": format!("What is {} times {}?", group % 50, group % 13)}],
            "completion": [{"role": "assistant", "content": format!("Let me think. {} times {} is {}. Final Answer: {}", group % 50, group % 13, (group % 50) * (group % 13), (group % 50) * (group % 13) + row % 2)}],
            "correct": f64::from(u8::from(row % 2 == 0)),
            "brevity": -0.01 * (row % 10) as f64,
            "advantage": if row % 2 == 0 { 0.9 } else { -0.9 },
        });
        writeln!(jsonl, "{line}")?;
    }
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    crate::formats::write_parquet(&jsonl, file)
}

/// Bytes of a file, or of every file below a folder.
fn size_of(path: &Path) -> std::io::Result<u64> {
    let metadata = std::fs::metadata(path)?;
    if !metadata.is_dir() {
        return Ok(metadata.len());
    }
    let mut total = 0;
    for entry in std::fs::read_dir(path)? {
        total += size_of(&entry?.path())?;
    }
    Ok(total)
}

/// Writes a Harbor job folder of `trials` trials: each `trial-N/agent/trajectory.json` an
/// ATIF v1.6 trajectory of 20 steps (a user step, then agent steps with a bash call, its
/// result, 40 completion token ids with log-probs; the first agent step with its prompt's
/// ids) and `trial-N/result.json` with the verifier's reward.
fn write_atif_job(
    dir: &Path,
    trials: usize,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<()> {
    for trial in 0..trials {
        let folder = dir.join(format!("trial-{trial:05}"));
        std::fs::create_dir_all(folder.join("agent"))?;
        let mut steps = vec![json!({"step_id": 1, "source": "user",
            "message": format!("Create the file out-{trial}.txt holding the sum of {} and {}.", trial % 97, trial % 13)})];
        for step in 2..=20 {
            let completion: Vec<u32> = (0..40)
                .map(|token| ((trial * 31 + step * 7 + token) % 2000) as u32)
                .collect();
            let logprobs: Vec<f64> = (0..40)
                .map(|token| -0.01 * ((token + step) % 9) as f64)
                .collect();
            let mut metrics = json!({"prompt_tokens": 300 + step * 50, "completion_tokens": 40,
                                     "completion_token_ids": completion, "logprobs": logprobs});
            if step == 2 {
                let prompt: Vec<u32> = (0..300)
                    .map(|token| ((trial + token) % 2000) as u32)
                    .collect();
                metrics["prompt_token_ids"] = json!(prompt);
            }
            let call = format!("call_{step}");
            steps.push(json!({
                "step_id": step, "source": "agent", "model_name": "synthetic",
                "message": format!("Step {step}: I will inspect the directory and write the answer."),
                "reasoning_content": format!("The task asks for {} plus {}; checking the state first.", trial % 97, trial % 13),
                "tool_calls": [{"tool_call_id": call, "function_name": "bash",
                                "arguments": {"command": format!("ls -la /work/step-{step} && cat notes-{trial}.txt")}}],
                "observation": {"results": [{"source_call_id": call,
                    "content": format!("total {step}\ndrwxr-xr-x 2 root root 4096 notes-{trial}.txt\nline {step} of the notes")}]},
                "metrics": metrics,
            }));
        }
        let trajectory = json!({"schema_version": "ATIF-v1.6", "session_id": format!("trial-{trial}"),
            "agent": {"name": "bench-agent", "version": "1.0"}, "steps": steps});
        std::fs::write(folder.join("agent/trajectory.json"), trajectory.to_string())?;
        let result = json!({"task_name": format!("sum-{}", trial % 500), "trial_name": format!("trial-{trial:05}"),
            "verifier_result": {"rewards": {"reward": f64::from(u8::from(trial % 3 != 0))}},
            "exception_info": null, "started_at": "2026-12-06T10:00:00Z", "finished_at": "2026-12-06T10:01:30Z"});
        std::fs::write(folder.join("result.json"), result.to_string())?;
        if trial % 1000 == 999 {
            progress(BenchProgress::Advance(1000));
        }
    }
    Ok(())
}
