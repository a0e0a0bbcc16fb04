//! What a submitted prompt does: `:` commands, `/` searches, notes.

use super::App;
use crate::engine::{Command, Listing};
use crate::store::SortKey;
use crate::tui::annotate;
use crate::tui::filter_expr;
use crate::tui::prompt::PromptKind;
use crate::tui::theme::{BUILT_IN, Theme};

/// The `:` commands, for the help overlay.
pub const COMMANDS: [(&str, &str); 8] = [
    (
        ":open ID",
        "open a trajectory by id (a unique prefix is enough)",
    ),
    (":goto ID", "select a trajectory in the list"),
    (
        ":filter TERMS",
        "pass fail unlabelled run:R step:N label:K reward:A..B; all",
    ),
    (":sort KEY [asc|desc]", "stored reward turns prm task step"),
    (
        ":audit",
        "the reward-hacking audit queue of the list's filter; again to leave",
    ),
    (
        ":theme NAME",
        "dark light high-contrast (or the session's theme)",
    ),
    (":help", "this overlay"),
    (":q", "quit"),
];

impl App {
    /// Acts on a submitted prompt.
    pub(super) fn submit(&mut self, kind: PromptKind, input: &str) -> Vec<Command> {
        match kind {
            PromptKind::Search => {
                let mut listing = self.rollouts.listing.clone();
                listing.filter.text = (!input.is_empty()).then(|| input.to_string());
                self.relist_to(listing)
            }
            PromptKind::Note => self
                .with_target(|target| annotate::note(target, input).map(|command| vec![command])),
            PromptKind::Command => self.run_command(input),
            PromptKind::Source => {
                self.insights.form.source = input.to_string();
                match self.insights.form.preview_command() {
                    Ok(command) => vec![command],
                    Err(message) => {
                        self.warn(message);
                        Vec::new()
                    }
                }
            }
            PromptKind::ExportPath => {
                self.insights.form.path = input.to_string();
                Vec::new()
            }
        }
    }

    fn relist_to(&mut self, listing: Listing) -> Vec<Command> {
        self.tab = super::Tab::Rollouts;
        self.screens.truncate(1);
        self.notify(format!("filter {}", listing.filter.describe()));
        vec![self.rollouts.relist(listing, &mut self.tags)]
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
                self.help = true;
                Vec::new()
            }
            "open" | "o" if !rest.is_empty() => {
                let tag = self.tags.fresh();
                self.pending_open = Some(tag);
                vec![Command::Locate {
                    tag,
                    listing: self.rollouts.tag,
                    prefix: rest.to_string(),
                }]
            }
            "goto" | "g" if !rest.is_empty() => {
                let tag = self.tags.fresh();
                self.pending_goto = Some(tag);
                vec![Command::Locate {
                    tag,
                    listing: self.rollouts.tag,
                    prefix: rest.to_string(),
                }]
            }
            "filter" | "f" => match filter_expr::parse(rest) {
                Ok(filter) => {
                    let listing = Listing {
                        filter,
                        ..self.rollouts.listing.clone()
                    };
                    self.relist_to(listing)
                }
                Err(message) => {
                    self.warn(message);
                    Vec::new()
                }
            },
            "sort" | "s" => self.sort_command(rest),
            "audit" => {
                let entering = self.rollouts.audit.is_none();
                self.rollouts.audit = entering.then(Default::default);
                let listing = self.rollouts.listing.clone();
                self.notify(if entering {
                    "auditing high-reward rollouts …"
                } else {
                    "audit queue closed"
                });
                self.tab = super::Tab::Rollouts;
                self.screens.truncate(1);
                vec![self.rollouts.relist(listing, &mut self.tags)]
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
            ..self.rollouts.listing.clone()
        };
        self.relist_to(listing)
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
