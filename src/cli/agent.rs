//! `tool` (call a tool by hand), `claims` (check arithmetic claims of solutions), and the
//! task sets behind `tasks --set`.

use super::Cli;
use crate::agent::claims::report::check_gsm8k;
use crate::agent::tasks::TaskSetSpec;
use crate::agent::tools::{LimitRoute, SandboxLimits, ToolRegistry};
use crate::trajectory::Task;
use clap::Args;
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Arguments of `rollscope tool`.
#[derive(Debug, Args)]
pub struct ToolArgs {
    /// The tool to call (omit to list the tools: built-in and the session's `[[tools]]`).
    pub name: Option<String>,
    /// The arguments as a JSON object, e.g. '{"expression": "0.1+0.2"}'.
    #[arg(default_value = "{}")]
    pub arguments: String,
    /// How long the call may take, in milliseconds; for `python` it is the sandbox's wall
    /// clock (at most 600000, ten minutes).
    #[arg(long, default_value_t = 30_000)]
    pub timeout_ms: u64,
}

/// What `rollscope tool --help` says of the `python` sandbox, from its default limits.
pub fn tool_help() -> String {
    let limits = SandboxLimits::default();
    let mib = |bytes: u64| bytes >> 20;
    format!(
        "The `python` tool runs each program in a fresh Linux sandbox. The program sees only \
         read-only system files (/usr, /bin, /lib, the loader's cache) and the Python install; \
         its one writable place is its scratch folder /sandbox, a tmpfs of {scratch} MiB holding \
         at most {inodes} files and folders (their kernel memory, outside the memory bound, at \
         most a quarter of its size). No network, no \
         descriptor of the caller's but stdin, stdout and stderr, a system-call filter, \
         {cpu} CPU seconds per process, and --timeout-ms of wall clock.\n\n\
         The whole call may hold at most {memory} GiB and {processes} processes: with a \
         cgroup v2 of its own (memory.max, pids.max) where this machine lets rollscope make \
         one (as root with the host's cgroup v2, or in a delegated cgroup), else with rlimits \
         ({per_process} MiB of address space per process × {processes} processes).",
        scratch = mib(limits.scratch_bytes),
        inodes = crate::agent::tools::scratch_inodes(limits.scratch_bytes),
        cpu = limits.cpu_seconds,
        memory = limits.memory_bytes >> 30,
        processes = limits.processes,
        per_process = mib(limits.process_memory(LimitRoute::Rlimits)),
    )
}

/// Arguments of `rollscope claims`.
#[derive(Debug, Args)]
pub struct ClaimsArgs {
    /// A GSM8K-shaped JSONL file (default: the shipped GSM8K test split).
    pub file: Option<PathBuf>,
    /// How many claims that do not hold to print.
    #[arg(long, default_value_t = 20)]
    pub show: usize,
}

/// `rollscope tool`.
pub fn tool(cli: &Cli, args: &ToolArgs) -> anyhow::Result<()> {
    let paths = cli.session_paths()?;
    let config = paths.load_config()?;
    let limits = SandboxLimits::default()
        .with_wall(Duration::from_millis(args.timeout_ms))
        .map_err(|error| anyhow::anyhow!("--timeout-ms {}: {error}", args.timeout_ms))?;
    let mut registry = ToolRegistry::standard(limits)?;
    registry.add_external(&config.tools, &paths.dir)?;
    let Some(name) = &args.name else {
        return list_tools(cli, &registry);
    };
    let arguments: Map<String, Value> = match serde_json::from_str(&args.arguments) {
        Ok(Value::Object(arguments)) => arguments,
        Ok(_) => {
            anyhow::bail!("the arguments must be a JSON object, e.g. '{{\"expression\": \"1+2\"}}'")
        }
        Err(error) => anyhow::bail!("the arguments are not valid JSON: {error}"),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let deadline = Instant::now() + Duration::from_millis(args.timeout_ms);
    let observation = runtime.block_on(registry.call(name, arguments, deadline));
    if cli.json {
        let report = serde_json::json!({
            "tool": observation.tool,
            "output": observation.text,
            "failure": observation.failure.map(|failure| failure.as_str()),
            "latency_ms": observation.latency_ms,
        });
        println!("{}", crate::text_json::inert_json(&report)?);
    } else {
        println!("{}", crate::text::inert(&observation.text));
        eprintln!("({:.1} ms)", observation.latency_ms);
    }
    match observation.failure {
        Some(failure) => anyhow::bail!("the call failed ({})", failure.as_str()),
        None => Ok(()),
    }
}

fn list_tools(cli: &Cli, registry: &ToolRegistry) -> anyhow::Result<()> {
    let specs = registry.specs();
    if cli.json {
        println!("{}", crate::text_json::inert_json(&specs)?);
        return Ok(());
    }
    for spec in &specs {
        let function = &spec["function"];
        println!(
            "{:<12} {}\n{:<12} arguments: {}",
            function["name"].as_str().unwrap_or(""),
            function["description"].as_str().unwrap_or(""),
            "",
            function["parameters"]
        );
    }
    Ok(())
}

/// `rollscope claims`.
pub fn claims(cli: &Cli, args: &ClaimsArgs) -> anyhow::Result<()> {
    let (text, origin) = match &args.file {
        Some(path) => (
            std::fs::read_to_string(path)
                .map_err(|error| anyhow::anyhow!("cannot read {}: {error}", path.display()))?,
            path.display().to_string(),
        ),
        None => (
            crate::formats::gsm8k::TEST.to_string(),
            "examples/gsm8k/test.jsonl".to_string(),
        ),
    };
    let report = check_gsm8k(&text, &origin)?;
    if cli.json {
        let summary = serde_json::json!({
            "file": origin,
            "solutions": report.solutions,
            "annotations": tally_json(&report.annotations),
            "prose": tally_json(&report.prose),
        });
        println!("{}", crate::text_json::inert_json(&summary)?);
        return Ok(());
    }
    println!("{origin}: {} solutions", report.solutions);
    for (name, tally) in [
        ("<<…>> annotations", &report.annotations),
        ("prose equations", &report.prose),
    ] {
        println!(
            "{name:<18} {:>6} claims, {:>6} verified ({:.2}%), {} false, {} not evaluable",
            tally.claims,
            tally.hold,
            100.0 * tally.share_verified(),
            tally.fail,
            tally.unparsed
        );
    }
    for located in report.not_verified.iter().take(args.show) {
        println!(
            "  line {:>5}: {:?} {}",
            located.line, located.claim.origin, located.claim.text
        );
    }
    Ok(())
}

fn tally_json(tally: &crate::agent::claims::report::Tally) -> Value {
    serde_json::json!({
        "claims": tally.claims,
        "verified": tally.hold,
        "false": tally.fail,
        "not_evaluable": tally.unparsed,
        "share_verified": tally.share_verified(),
    })
}

/// The tasks of a task-set spec (`gsm8k:test`, `arith:3`, `lookup:eval`, a file), for `tasks --set`.
pub fn task_set(spec: &str, limit: Option<usize>, seed: u64) -> anyhow::Result<Vec<Task>> {
    let spec: TaskSetSpec = spec
        .parse()
        .map_err(|error: String| anyhow::anyhow!(error))?;
    spec.load(limit, seed)
}
