//! The import benchmark: an Inspect `.eval` log of N samples (about 1 GiB at the defaults:
//! 100k samples of ~10 KiB, members stored uncompressed so every byte is JSON to parse) and
//! a parquet file of TRL completions rows written with our own parquet writer, each imported
//! by a real `rollscope import` process into a fresh session: MB/s of the file, and the
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
    /// The `.eval` log, then the parquet file.
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
    let mut figures = Vec::new();
    for (what, path) in [
        ("inspect .eval log", &eval),
        ("TRL completions parquet", &parquet),
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
    let records = report[0]["trajectories"].as_u64().unwrap_or(0) as usize;
    let server_peak_bytes = store
        .server_pid()
        .and_then(|pid| super::process_memory(pid).1);
    let bytes = std::fs::metadata(path)?.len();
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
