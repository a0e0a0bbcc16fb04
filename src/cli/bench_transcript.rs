//! `rollscope bench transcript`: its flags and its report as text.

use crate::bench::{TranscriptBenchOptions, TranscriptBenchReport};
use clap::Args;

/// Arguments of `rollscope bench transcript`.
#[derive(Debug, Args)]
pub struct TranscriptBenchArgs {
    /// Messages in the generated agent trajectory.
    #[arg(long, default_value_t = 130_000)]
    pub messages: usize,
    /// Line scrolls and page scrolls timed (each way).
    #[arg(long, default_value_t = 200)]
    pub scrolls: usize,
    /// The terminal's width in cells.
    #[arg(long, default_value_t = 200)]
    pub width: u16,
    /// The terminal's height in cells.
    #[arg(long, default_value_t = 60)]
    pub height: u16,
}

impl TranscriptBenchArgs {
    /// The benchmark options these flags ask for.
    pub fn options(&self) -> TranscriptBenchOptions {
        TranscriptBenchOptions {
            messages: self.messages,
            scrolls: self.scrolls,
            size: (self.width, self.height),
        }
    }
}

/// `bench transcript` as text.
pub fn print(report: &TranscriptBenchReport) {
    println!(
        "rollscope bench transcript · {} messages, {} turns (generated in {:.0} ms)",
        report.messages, report.turns, report.generate_ms
    );
    println!(
        "open → first frame            {:>8.1} ms   goal ≤ 1000 ms",
        report.open_ms
    );
    println!(
        "end → last message drawn      {:>8.1} ms   goal ≤ 1000 ms",
        report.end_ms
    );
    println!("home → first message drawn    {:>8.1} ms", report.home_ms);
    let (line, page) = (&report.scroll_ms, &report.page_ms);
    println!(
        "line scroll (key → drawn)     {:>8.2} ms median · p95 {:.2} · max {:.2}   goal p95 ≤ 16 ms",
        line.median, line.p95, line.max
    );
    println!(
        "page scroll (key → drawn)     {:>8.2} ms median · p95 {:.2} · max {:.2}",
        page.median, page.p95, page.max
    );
    match report.peak_rss_mib {
        Some(mib) => println!("peak memory                   {mib:>8.0} MiB   goal ≤ 300 MiB"),
        None => println!("peak memory                   unknown (no /proc/self/status)"),
    }
}
