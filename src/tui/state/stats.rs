//! The Stats tab's state: the selected policy version and the pinned one it is compared with.

use super::status::Status;
use crate::tui::action::Action;

/// Versions a page key moves by.
const PAGE: usize = 10;

/// The Stats tab's state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatsTab {
    /// The selected policy version (the "after" side of the comparison).
    pub scroll: usize,
    /// The pinned policy version (the "before" side), chosen with the pin key.
    pub pinned: Option<usize>,
}

impl StatsTab {
    /// Moves the selection over `versions` policy versions, or pins the selected one.
    pub fn on_action(&mut self, action: Action, versions: usize, status: &mut Status) {
        let last = versions.saturating_sub(1);
        match action {
            Action::Down => self.scroll = (self.scroll + 1).min(last),
            Action::Up => self.scroll = self.scroll.saturating_sub(1),
            Action::PageDown => self.scroll = (self.scroll + PAGE).min(last),
            Action::PageUp => self.scroll = self.scroll.saturating_sub(PAGE),
            Action::Top => self.scroll = 0,
            Action::Bottom => self.scroll = last,
            Action::Pin if versions > 0 => {
                self.pinned = (self.pinned != Some(self.scroll)).then_some(self.scroll);
                status.notify(match self.pinned {
                    Some(_) => "pinned as \"before\"; move to the \"after\" version",
                    None => "unpinned",
                });
            }
            _ => {}
        }
    }
}
