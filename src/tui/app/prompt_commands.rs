//! What a submitted prompt does: `:` commands, `/` searches, notes.

use super::{App, Tab};
use crate::engine::{Command, Listing};
use crate::store::{SortKey, check_query};
use crate::tui::content::TaskLines;
use crate::tui::filter_expr;
use crate::tui::prompt::{Prompt, PromptKind};
use crate::tui::theme::{BUILT_IN, Theme};

/// The `:` commands, for the help overlay.
pub const COMMANDS: [(&str, &str); 11] = [
    (
        ":open ID",
        "open a trajectory by id (a unique prefix is enough)",
    ),
    (":goto ID", "select a trajectory in the list"),
    (
        ":filter TERMS",
        "pass fail unlabelled run:R step:N label:K reward:A..B text:…; all",
    ),
    (":sort KEY [asc|desc]", "stored reward turns prm task step"),
    (
        ":audit",
        "the reward-hacking audit queue of the list's filter; again to leave",
    ),
    (
        ":disagree",
        "the steps where annotators differ; ] [ walk them; again to leave",
    ),
    (
        ":theme NAME",
        "dark light high-contrast (or the session's theme)",
    ),
    (
        ":fold N",
        "show N lines of each prompt message (the task) before folding",
    ),
    (
        ":follow PATH…",
        "follow another stack's run (files, run folders) in the background",
    ),
    (":help", "this overlay"),
    (":q", "quit"),
];

impl App {
    /// Acts on a submitted prompt.
    pub(super) fn submit(&mut self, kind: PromptKind, input: &str) -> Vec<Command> {
        match kind {
            PromptKind::Search => {
                let mut listing = self.tabs.rollouts.list.listing.clone();
                listing.filter.full_text = (!input.is_empty()).then(|| input.to_string());
                self.relist_checked(listing, kind, input)
            }
            PromptKind::Note => self.submit_note(input),
            PromptKind::Command => self.run_command(input),
            PromptKind::Source => self.tabs.curate.set_source(input, &mut self.status),
            PromptKind::ExportPath => {
                self.tabs.curate.set_path(input);
                Vec::new()
            }
            PromptKind::Follow => self.follow(input),
            PromptKind::Fork => self.submit_fork(input),
        }
    }

    /// Relists unless the filter's full-text search does not parse: then the prompt it came
    /// from opens again with its text and the error, and the list stays as it was.
    fn relist_checked(&mut self, listing: Listing, kind: PromptKind, input: &str) -> Vec<Command> {
        if let Some(query) = &listing.filter.full_text
            && let Err(error) = check_query(query)
        {
            self.reopen(kind, input, error.to_string());
            return Vec::new();
        }
        self.relist_to(listing)
    }

    /// Opens the prompt again after its submission failed.
    fn reopen(&mut self, kind: PromptKind, input: &str, error: String) {
        self.prompt = Some(Prompt::failed(kind, input, error));
    }

    fn relist_to(&mut self, listing: Listing) -> Vec<Command> {
        self.tab = Tab::Rollouts;
        self.notify(format!("filter {}", listing.filter.describe()));
        vec![self.tabs.rollouts.show(listing)]
    }

    fn run_command(&mut self, input: &str) -> Vec<Command> {
        let (verb, rest) = input.split_once(' ').unwrap_or((input, ""));
        let rest = rest.trim();
        match verb {
            "" => Vec::new(),
            "q" | "quit" | "q!" => {
                self.quit = true;
                Vec::new()
            }
            "help" | "h" => {
                self.open_help();
                Vec::new()
            }
            "open" | "o" if !rest.is_empty() => vec![self.tabs.rollouts.open_by_prefix(rest)],
            "goto" | "g" if !rest.is_empty() => vec![self.tabs.rollouts.goto_by_prefix(rest)],
            "filter" | "f" => match filter_expr::parse(rest, &self.label_kinds) {
                Ok(filter) => {
                    let listing = Listing {
                        filter,
                        ..self.tabs.rollouts.list.listing.clone()
                    };
                    self.relist_checked(listing, PromptKind::Command, input)
                }
                Err(message) => {
                    self.reopen(PromptKind::Command, input, message);
                    Vec::new()
                }
            },
            "sort" | "s" => self.sort_command(rest),
            "follow" => self.follow(rest),
            "fold" => {
                match rest.parse::<usize>() {
                    Ok(lines) => {
                        let trajectory = &mut self.tabs.rollouts.trajectory;
                        trajectory.set_task_lines(TaskLines(lines));
                        self.notify(format!(
                            "prompt messages fold after {lines} lines (z unfolds)"
                        ));
                    }
                    Err(_) => self.warn(format!(
                        "`:fold N`: N is a number of lines (now {}), not `{rest}`",
                        self.tabs.rollouts.trajectory.task_lines.0
                    )),
                }
                Vec::new()
            }
            "audit" if self.tabs.rollouts.blind => {
                self.notify(super::BLIND_ONLY);
                Vec::new()
            }
            "audit" => {
                self.tab = Tab::Rollouts;
                vec![self.tabs.rollouts.toggle_audit(&mut self.status)]
            }
            "disagree" => {
                self.tab = Tab::Rollouts;
                self.toggle_disagree()
            }
            "theme" => {
                match self.find_theme(rest) {
                    Some(theme) => {
                        self.notify(format!("theme {}", theme.name));
                        self.theme = theme;
                    }
                    None => {
                        let mut names: Vec<String> =
                            BUILT_IN.iter().map(|(name, _)| name.to_string()).collect();
                        names.extend(self.extra_themes.iter().map(|theme| theme.name.clone()));
                        self.warn(format!("no theme `{rest}`: use {}", names.join(", ")));
                    }
                }
                Vec::new()
            }
            _ => {
                self.warn(format!(
                    "unknown command `:{input}`; `?` lists the commands"
                ));
                Vec::new()
            }
        }
    }

    fn sort_command(&mut self, rest: &str) -> Vec<Command> {
        let mut words = rest.split_whitespace();
        let key = match words.next().map(str::parse::<SortKey>) {
            Some(Ok(key)) => key,
            Some(Err(message)) => {
                self.warn(message);
                return Vec::new();
            }
            None => {
                self.warn("`:sort KEY`: stored, reward, turns, prm, task or step");
                return Vec::new();
            }
        };
        let descending = match words.next() {
            Some("desc") => true,
            Some("asc") | None => false,
            Some(other) => {
                self.warn(format!("`{other}`: write asc or desc"));
                return Vec::new();
            }
        };
        let listing = Listing {
            sort: key,
            descending,
            ..self.tabs.rollouts.list.listing.clone()
        };
        self.relist_to(listing)
    }

    /// Follows the paths typed (shell quoting, `~` for the home folder) in a background
    /// process, and shows the Runs tab where its run appears.
    fn follow(&mut self, input: &str) -> Vec<Command> {
        let Some(words) = shlex::split(input) else {
            self.warn(format!("`{input}` has an unclosed quote"));
            return Vec::new();
        };
        if words.is_empty() {
            self.warn(
                "type the files or run folders to follow: a TRL output folder, verl's \
                 rollout_data_dir, JSONL or parquet files",
            );
            return Vec::new();
        }
        let roots = words.iter().map(|word| home_expanded(word)).collect();
        self.tab = Tab::Runs;
        self.notify(format!("starting to follow {}", words.join(" ")));
        vec![Command::FollowRun(roots)]
    }

    fn find_theme(&self, name: &str) -> Option<Theme> {
        if let Some(theme) = self.extra_themes.iter().find(|theme| theme.name == name) {
            return Some(theme.clone());
        }
        BUILT_IN
            .iter()
            .any(|(built_in, _)| *built_in == name)
            .then(|| Theme::named(name).ok())
            .flatten()
    }
}

/// `~` and `~/…` from the home folder; other words as they are.
fn home_expanded(word: &str) -> std::path::PathBuf {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    match (word.strip_prefix('~'), home) {
        (Some(""), Some(home)) => home,
        (Some(rest), Some(home)) if rest.starts_with('/') => home.join(&rest[1..]),
        _ => word.into(),
    }
}
