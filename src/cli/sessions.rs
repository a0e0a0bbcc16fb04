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
    /// Let a group read the selected session (folders 2750, files 0640, all the group's);
    /// `--off` makes it private again. The store stays its owner's: teammates read the
    /// files, exports and label files, or copy the session.
    Share {
        /// The group (one you are a member of).
        #[arg(required_unless_present = "off")]
        group: Option<String>,
        /// Private again: folders 0700, files 0600.
        #[arg(long, conflicts_with = "group")]
        off: bool,
    },
}

/// `rollscope sessions`.
pub fn sessions(cli: &Cli, args: &SessionsArgs) -> anyhow::Result<()> {
    let root = session::sessions_root(cli.sessions_dir.as_deref());
    match &args.command {
        None => list(cli, &root),
        Some(SessionsCommand::Share { group, .. }) => {
            let paths = cli.existing_session()?;
            session::privacy::set_share(&paths, group.as_deref())?;
            let changed = session::privacy::protect(&paths, &paths.load_config()?)?;
            match group {
                Some(group) => println!(
                    "session `{}` is readable by group {group} ({changed} files and folders changed); the store stays yours",
                    paths.name
                ),
                None => println!(
                    "session `{}` is yours alone again ({changed} files and folders changed)",
                    paths.name
                ),
            }
            Ok(())
        }
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
