//! The `rollscope` binary: parses the command line and runs it.

use clap::Parser;
use rollscope::cli::{self, Cli};

fn main() -> std::process::ExitCode {
    let parsed = Cli::parse();
    match cli::run(parsed) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
