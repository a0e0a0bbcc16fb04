//! The `rollscope` binary: parses the command line and runs it.

use clap::Parser;
use rollscope::cli::{self, Cli};

fn main() -> std::process::ExitCode {
    // Large temporaries of training are reused instead of page-faulted in afresh each step;
    // `ROLLSCOPE_MALLOC_DEFAULTS=1` keeps glibc's defaults (to measure what this gives).
    if std::env::var_os("ROLLSCOPE_MALLOC_DEFAULTS").is_none() {
        rollscope::model::keep_freed_memory();
    }
    let parsed = Cli::parse();
    match cli::run(parsed) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
