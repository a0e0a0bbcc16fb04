//! `rollscope session-server STORE_DIR`: the session server process, started by any command
//! that opens a session (never by hand); `cli::Cli::open_store` builds its launcher.

use crate::store::server::{ServerOptions, serve};
use crate::store::{ServerLauncher, Store};
use clap::Args;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// `rollscope session-server`.
#[derive(Debug, Args)]
pub struct SessionServerArgs {
    /// The store folder to serve (`<session>/store`).
    pub store: PathBuf,
    /// Seconds to stay up with no client connected.
    #[arg(long, env = "ROLLSCOPE_SERVER_IDLE_SECS", default_value_t = 60)]
    pub idle_secs: u64,
    /// Seconds a connection may send nothing before the server closes it.
    #[arg(
        long,
        env = "ROLLSCOPE_SERVER_IDLE_CONNECTION_SECS",
        default_value_t = 300
    )]
    pub idle_connection_secs: u64,
}

/// Runs the server until it has been idle; exits with the server's status when the store is
/// held by another process.
pub fn session_server(args: &SessionServerArgs) -> anyhow::Result<()> {
    ignore_hangups();
    if let Some(folder) = args.store.parent() {
        let paths = crate::session::SessionPaths {
            name: String::new(),
            dir: folder.to_path_buf(),
        };
        crate::session::privacy::protect(&paths, &paths.load_config()?)?;
    }
    let options = ServerOptions {
        idle: Duration::from_secs(args.idle_secs),
        idle_connection: Duration::from_secs(args.idle_connection_secs.max(1)),
    };
    if let Err(error) = serve(&args.store, options) {
        eprintln!("rollscope session-server: {error}");
        std::process::exit(error.exit_code());
    }
    Ok(())
}

/// Opens the store in `dir` through its session server, started from this program.
pub fn connect(dir: &Path) -> anyhow::Result<Store> {
    let program = std::env::current_exe().map_err(|error| {
        anyhow::anyhow!("cannot find this program to start the server: {error}")
    })?;
    let launcher = ServerLauncher::rollscope(program)
        .with_notices(Arc::new(|notice: &str| eprintln!("rollscope: {notice}")));
    Ok(Store::connect(dir, launcher)?)
}

/// A terminal that closes must not stop the server its commands share.
fn ignore_hangups() {
    // SAFETY: installing SIG_IGN for SIGHUP has no preconditions; no handler code runs.
    unsafe {
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
    }
}
