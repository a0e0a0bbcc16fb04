//! `rollscope sessions`: list the sessions, or make one.

use super::Cli;
use crate::session::{self, SessionPaths};
use clap::{Args, Subcommand};

/// Arguments of `rollscope sessions`.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// What to do (nothing: list the sessions).
    #[command(subcommand)]
    pub command: Option<SessionsCommand>,
}

/// What `rollscope sessions` does besides listing.
#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// Make a session: its folder and a session.toml with every setting commented out.
    New {
        /// Its name (letters, digits, `-`, `_`, `.`).
        name: String,
    },
}

/// `rollscope sessions`.
pub fn sessions(cli: &Cli, args: &SessionsArgs) -> anyhow::Result<()> {
    let root = session::sessions_root(cli.sessions_dir.as_deref());
    match &args.command {
        None => list(cli, &root),
        Some(SessionsCommand::New { name }) => {
            let paths = SessionPaths::new(&root, name)?;
            let existed = paths.exists();
            paths.create()?;
            if cli.json {
                println!(
                    "{}",
                    crate::text_json::inert_json(
                        &serde_json::json!({"session": name, "dir": paths.dir, "new": !existed})
                    )?
                );
            } else if existed {
                println!("session `{name}` exists already ({})", paths.dir.display());
            } else {
                println!(
                    "session `{name}` made in {}; use it with --session {name}",
                    paths.dir.display()
                );
            }
            Ok(())
        }
    }
}

fn list(cli: &Cli, root: &std::path::Path) -> anyhow::Result<()> {
    let names = session::list_sessions(root)?;
    if cli.json {
        println!("{}", crate::text_json::inert_json(&names)?);
    } else if names.is_empty() {
        println!(
            "no sessions under {} yet; `rollscope import FILE`, `rollscope model init` or \
             `rollscope sessions new NAME` makes one",
            root.display()
        );
    } else {
        for name in names {
            println!("{name}");
        }
    }
    Ok(())
}
