//! The text reports of `rollscope bench …`.

use super::bench_args::{BenchGrpoArgs, BenchModelArgs, BenchRolloutArgs, BenchTrainArgs};
use super::output;
use crate::bench::tui::{FRAME_HEIGHT, FRAME_WIDTH};
use crate::bench::{
    ExportBenchReport, FollowBenchReport, GrpoBenchReport, ImportBenchReport, ModelBenchReport,
    RolloutBenchReport, SearchBenchReport, SessionBenchReport, StoreBenchReport, TrainBenchReport,
    TuiBenchReport,
};
use serde_json::Value;

/// `bench store` as text.
pub fn store(report: &StoreBenchReport) {
    println!(
        "store benchmark · {} trajectories ({} JSONL, {} on disk)",
        report.trajectories,
        output::bytes(report.input_bytes),
        output::bytes(report.store_bytes)
    );
    let (throughput, import_seconds) = (report.import_per_second, report.import_seconds);
    let (reopen_ms, query_ms) = (report.reopen_first_page_ms, report.label_outcome_query_ms);
    println!(
        "  import                    {throughput:>10.0} trajectories/s  ({import_seconds:.2} s; goal ≥ 10,000/s)"
    );
    println!(
        "  close (sled checkpoint)   {:>10.1} ms              (a session server's exit)",
        report.close_ms
    );
    println!("  reopen + first page of 50 {reopen_ms:>10.1} ms              (goal ≤ 100 ms)");
    println!(
        "  label & outcome listing   {:>10.1} ms              ({} hits' ids, as the TUI lists them; goal ≤ 50 ms)",
        report.label_outcome_listing_ms, report.label_outcome_hits
    );
    println!(
        "  label & outcome query     {query_ms:>10.1} ms              (every hit's summary, as `list --json` prints them)"
    );
    if let Some(peak) = report.peak_memory_bytes {
        println!(
            "  peak memory               {:>10}                 (goal ≤ 300 MB)",
            output::bytes(peak)
        );
    }
}

/// `bench import` as text.
pub fn import(report: &ImportBenchReport) {
    println!("import benchmark · a real `rollscope import` process into a fresh session");
    for figure in &report.figures {
        let server = figure
            .server_peak_bytes
            .map_or("?".to_string(), output::bytes);
        println!(
            "  {:<24} {:>8} records  {:>9}  {:>6.1} s  {:>6.1} MB/s  {:>8.0} records/s  importer peak {}, server peak {}",
            figure.what,
            figure.records,
            output::bytes(figure.bytes),
            figure.seconds,
            figure.mb_per_s,
            figure.records as f64 / figure.seconds,
            output::bytes(figure.importer_peak_bytes),
            server
        );
    }
}

/// `bench follow` as text.
pub fn follow(report: &FollowBenchReport) {
    println!(
        "follow benchmark · import --follow every {} s · {} writes, each a {}",
        report.options.every, report.options.samples, report.written
    );
    println!(
        "  write to visible in another engine   p50 {:>6.0} ms · p95 {:>6.0} ms  ({} records stored)",
        report.p50_ms, report.p95_ms, report.stored
    );
}

/// `bench session` as text.
pub fn session(report: &SessionBenchReport) {
    println!(
        "session server benchmark · {} trajectories · through the server vs in this process",
        report.trajectories
    );
    for call in &report.calls {
        println!(
            "  {:<36} {:>7.3} ms vs {:>7.3} ms  ({:.2}× the in-process time, median of pairs)",
            call.what, call.served_ms, call.local_ms, call.ratio
        );
    }
    println!(
        "  write to visible in another engine   p50 {:>6.0} ms · p95 {:>6.0} ms  (goal ≤ 1,000 ms)",
        report.visible_p50_ms, report.visible_p95_ms
    );
    if let (Some(rss), Some(peak)) = (report.server_rss_bytes, report.server_peak_bytes) {
        println!(
            "  server memory                        {} resident, {} peak",
            output::bytes(rss),
            output::bytes(peak)
        );
    }
    if let Some(soak) = &report.soak {
        println!(
            "  soak: 3 clients for {:.1} min beside a training run: {} requests (p50 {:.1} ms, \
             p95 {:.1} ms), {} label writes, {} lost; the run made {} steps, rows {}, {} \
             rollouts; server memory ≤ {} (end {})",
            soak.minutes,
            soak.requests,
            soak.p50_ms,
            soak.p95_ms,
            soak.labels,
            soak.lost,
            soak.steps,
            if soak.rows_complete {
                "complete"
            } else {
                "INCOMPLETE"
            },
            soak.rollouts,
            output::bytes(soak.server_rss_max),
            output::bytes(soak.server_rss_end)
        );
    }
}

/// `bench search` as text.
pub fn search(report: &SearchBenchReport) {
    println!(
        "search benchmark · {} trajectories ({} store)",
        report.trajectories,
        output::bytes(report.store_bytes)
    );
    println!(
        "  index build               {:>10.2} s               ({} on disk)",
        report.build_seconds,
        output::bytes(report.index_bytes)
    );
    println!(
        "  first search after import {:>10.2} s               (the index takes in the whole import first)",
        report.catch_up_seconds
    );
    for query in &report.queries {
        println!(
            "  {:<25} p50 {:>7.2} ms · p95 {:>7.2} ms  ({} hits; `{}`; goal p95 ≤ 50 ms)",
            query.what, query.p50_ms, query.p95_ms, query.hits, query.query
        );
    }
    let seconds = |values: &[f64]| {
        values
            .iter()
            .map(|value| format!("{value:.2}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    println!(
        "  import with the index     {:>+9.1} %               (median of on/off ratios; on {} s, off {} s; goal ≤ +20 %; indexed once writes pause)",
        (report.import_cost_ratio - 1.0) * 100.0,
        seconds(&report.import_on_seconds),
        seconds(&report.import_off_seconds)
    );
    if let Some(rebuild) = &report.server_rebuild {
        println!(
            "  rebuild in a server       {:>10.2} s               (the server's peak {}, {} after; goal ≤ 300 MiB)",
            rebuild.seconds,
            rebuild.peak_bytes.map_or("unknown".into(), output::bytes),
            rebuild.rss_bytes.map_or("unknown".into(), output::bytes),
        );
    }
}

/// `bench export` as text.
pub fn export(report: &ExportBenchReport) {
    println!(
        "export benchmark · {} stored trajectories · {} threads decoding{}",
        report.trajectories,
        crate::curate::export::decode_threads(),
        if report.peak_is_per_case {
            ""
        } else {
            " · peak memory includes making the store"
        }
    );
    println!(
        "  {:<30} {:>9} {:>10} {:>9} {:>12}",
        "case", "records", "size", "time", "peak memory"
    );
    for case in &report.cases {
        println!(
            "  {:<30} {:>9} {:>10} {:>7.2} s {:>12}",
            case.case,
            case.records,
            output::bytes(case.bytes),
            case.seconds,
            case.peak_memory_bytes
                .map_or_else(|| "–".into(), output::bytes)
        );
    }
    println!("  goal: 100k trajectories with filters in ≤ 2 s");
}

/// transformers' `generate` at batch 64 on this CPU (`examples/bench_pytorch.py`), tokens/s.
const REFERENCE_BATCH64: f64 = 4140.0;

/// transformers' `generate` on the rollout shape, static batches of 64, new tokens counted.
const REFERENCE_RAGGED: f64 = 754.0;

/// `bench model` as text.
pub fn model(args: &BenchModelArgs, report: &ModelBenchReport) {
    let setup = &report.setup;
    println!(
        "model: {} parameters, {}, {} threads; kernels {}; prompts of {} tokens, {} new tokens \
         (prefill included); medians of {} runs, wall clock (per CPU-second of the process in brackets)",
        setup.parameters,
        Value::from(setup.dtype.as_str()),
        setup.threads,
        Value::from(setup.kernels.as_str()),
        args.prompt_tokens,
        args.new_tokens,
        args.repeats
    );
    let figures = &report.figures;
    let pair = |wall: Option<f64>, cpu: Option<f64>| {
        let finite = |value: Option<f64>| value.filter(|value| value.is_finite());
        finite(wall).zip(finite(cpu))
    };
    let decode = [
        (
            "batch 8".to_string(),
            1596.0,
            figures.decode_batch8_tps,
            figures.decode_batch8_cpu_tps,
        ),
        (
            "batch 1".to_string(),
            332.0,
            figures.decode_batch1_tps,
            figures.decode_batch1_cpu_tps,
        ),
        (
            "batch 64".to_string(),
            REFERENCE_BATCH64,
            figures.decode_batch64_tps,
            figures.decode_batch64_cpu_tps,
        ),
        (
            report.ragged.map_or_else(String::new, |shape| {
                format!(
                    "rollout shape ({} sequences, {} in flight, prompts of 32–352 tokens, \
                     16–127 new, new tokens counted)",
                    shape.sequences, shape.in_flight
                )
            }),
            REFERENCE_RAGGED,
            figures.decode_ragged64_tps,
            figures.decode_ragged64_cpu_tps,
        ),
    ];
    for (what, reference, wall, cpu) in decode {
        if let Some((wall, cpu)) = pair(wall, cpu) {
            println!(
                "greedy decode, {what}: {wall:.0} tokens/s [{cpu:.0}] (transformers here: ≈ {reference:.0})"
            );
        }
    }
    let shape = format!("{}×{}", args.train_batch, args.train_tokens);
    if let Some((wall, cpu)) = pair(figures.train_step_ms, figures.train_step_cpu_ms) {
        println!(
            "training step, {shape} tokens (forward + backward + AdamW): {wall:.0} ms [{cpu:.0} ms CPU] (PyTorch here: ≈ 323 ms)"
        );
    }
    if let Some((wall, cpu)) = pair(figures.grpo_step_ms, figures.grpo_step_cpu_ms) {
        println!(
            "GRPO step, {shape} tokens (reference + policy + loss + backward + AdamW): {wall:.0} ms [{cpu:.0} ms CPU] (PyTorch here: ≈ 425 ms)"
        );
    }
}

/// `bench train` as text.
pub fn train(args: &BenchTrainArgs, report: &TrainBenchReport) {
    println!(
        "model: {} parameters, {} threads; {}×{} tokens, β = {}{}; medians of {} runs, \
         wall clock [process CPU]",
        report.parameters,
        report.threads,
        args.batch,
        args.tokens,
        args.beta,
        args.lora_rank
            .map_or(String::new(), |rank| format!(", LoRA rank {rank}")),
        args.repeats
    );
    let (reference_ms, iteration_ms) = (report.reference_forward_ms, report.grpo_iteration_ms);
    let (update, update_cpu) = (report.grpo_update_ms, report.grpo_update_cpu_ms);
    let (sft_ms, sft_cpu) = (report.sft_step_ms, report.sft_step_cpu_ms);
    println!(
        "GRPO update (reference forward {reference_ms:.0} ms + policy forward, loss, backward, \
         AdamW {iteration_ms:.0} ms): {update:.0} ms [{update_cpu:.0} ms]"
    );
    println!("SFT step (forward, loss, backward, AdamW): {sft_ms:.0} ms [{sft_cpu:.0} ms]");
}

/// `bench grpo` as text.
pub fn grpo(args: &BenchGrpoArgs, report: &GrpoBenchReport) {
    println!(
        "GRPO step, 1 prompt ({} tokens) × G = {} completions of {} tokens, β = {}: median of {} \
         steps",
        args.prompt, args.group, args.completion, args.beta, args.steps
    );
    let (wall, cpu) = (report.grpo_step_ms, report.grpo_step_cpu_ms);
    let (generate, update) = (report.generate_ms, report.update_ms);
    println!(
        "  rollscope: {wall:.0} ms [{cpu:.0} ms CPU] (generation {generate:.0} ms, reward + \
         reference + update {update:.0} ms)"
    );
    let trl = |key: &str| report.trl.as_ref().and_then(|v| v[key].as_f64());
    if let Some(trl_ms) = trl("trl_grpo_step_ms") {
        let trl_cpu = trl("trl_grpo_step_cpu_ms").unwrap_or(f64::NAN);
        println!("  TRL GRPOTrainer: {trl_ms:.0} ms [{trl_cpu:.0} ms CPU]");
        println!("  ratio: {:.2}× TRL's step time", wall / trl_ms);
    }
}

/// `bench rollout` as text.
pub fn rollout(args: &BenchRolloutArgs, report: &RolloutBenchReport) {
    println!(
        "{} rollouts × {} turns ending in a {} ms tool call (+1 cut turn), embedded model taught \
         in {} SFT steps ({:.0} s), greedy; medians of {} runs, wall clock [process CPU]",
        args.rollouts,
        args.turns,
        args.tool_ms,
        report.taught_in_steps,
        report.taught_in_s,
        args.repeats
    );
    let runs = &report.runs;
    for (run, label) in [
        (&runs.overlapped, "tools overlapped with generation"),
        (&runs.generation_only, "(a) generation only (0 ms tool)"),
        (&runs.serial_tools, "(b) tools one at a time"),
    ] {
        println!(
            "{label}: {:.2} s [{:.2} s CPU] · {} tokens in {} decode steps ({:.2} s busy, {:.2} s not stepping) · {} tool calls",
            run.wall_s,
            run.cpu_s,
            run.tokens,
            run.decode_steps,
            run.decode_busy_s,
            run.decode_idle_s,
            run.tool_calls,
        );
    }
    println!(
        "tool time: {:.2} s per rollout's chain of calls (all in parallel), {:.2} s one at a time",
        report.tool_chain_s, report.tool_serial_s
    );
    println!(
        "overlapped / max(generation, tool chain) = {:.2} (goal ≤ 1.2); tools one at a time: {:.2}",
        report.overlap_ratio, report.serial_ratio
    );
}

/// `bench tui` as text.
pub fn tui(report: &TuiBenchReport) {
    let trajectories = report.trajectories;
    println!("rollscope bench tui · {trajectories} trajectories · {FRAME_WIDTH}×{FRAME_HEIGHT}");
    println!(
        "start-up → first frame        {:>8.1} ms  (store opened in {:.1} ms, empty frame drawn in {:.2} ms)",
        report.startup_first_frame_ms, report.store_open_ms, report.empty_frame_ms
    );
    println!(
        "start-up → first rows drawn   {:>8.1} ms   goal ≤ 300 ms",
        report.startup_first_frame_with_rows_ms
    );
    println!(
        "start-up → list counted       {:>8.1} ms",
        report.startup_counted_ms
    );
    let (list, turn, tokens) = (
        &report.frame_list_ms,
        &report.frame_turn_ms,
        &report.frame_tokens_ms,
    );
    println!(
        "frame, list + preview         {:>8.2} ms median · p95 {:.2} · max {:.2}   goal ≤ 5 ms",
        list.median, list.p95, list.max
    );
    println!(
        "frame, trajectory turn        {:>8.2} ms median · p95 {:.2} · max {:.2}",
        turn.median, turn.p95, turn.max
    );
    println!(
        "frame, token view             {:>8.2} ms median · p95 {:.2} · max {:.2}",
        tokens.median, tokens.p95, tokens.max
    );
    let page = &report.page_ms;
    println!(
        "page down (key → drawn)       {:>8.2} ms median · p95 {:.2} · max {:.2}   goal ≤ 16 ms ({} of {} pages fetched from the engine)",
        page.median, page.p95, page.max, page.fetched, page.pages
    );
    match report.peak_rss_mib {
        Some(peak) => println!("peak memory (VmHWM)           {peak:>8.1} MiB   goal ≤ 200 MB"),
        None => println!("peak memory                   unavailable (no /proc/self/status)"),
    }
}
