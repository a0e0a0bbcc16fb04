//! Scrolling the whole conversation: the turn at the top of the pane becomes the current one.

use super::TrajectoryState;
use crate::tui::action::Action;
use crate::tui::state::open_trajectory::Builder;
use crate::tui::state::transcript::{Place, Source, Transcript};

impl TrajectoryState {
    /// Scrolls the whole conversation; the turn at the top becomes the current one (`End`
    /// makes the last turn current).
    pub(super) fn scroll_transcript(&mut self, action: Action) {
        let page = self.page.max(1);
        self.with_source(|transcript, source| {
            let top = transcript.top;
            let place = match action {
                Action::Down => transcript.forward(source, top, 1),
                Action::Up => transcript.backward(source, top, 1),
                Action::PageDown => transcript.forward(source, top, page),
                Action::PageUp => transcript.backward(source, top, page),
                Action::Bottom => transcript.last_top(source, page),
                _ => Place::default(),
            };
            transcript.scroll_to(source, place, page);
        });
        let top = self.transcript.top.section;
        let sections = self.open.as_ref().map_or(0, |open| open.sections.len());
        self.section = match action {
            Action::Bottom => sections.saturating_sub(2).max(top),
            _ => top,
        };
    }

    /// Runs `work` on the transcript and the open trajectory's sections (built as laid out).
    pub(super) fn with_source(&mut self, work: impl FnOnce(&mut Transcript, &mut Source)) {
        let (Some(open), Some(highlighter)) = (self.open.as_deref_mut(), &self.highlighter) else {
            return;
        };
        let mut builder = Builder {
            open,
            highlighter,
            marks: self.marks.as_ref(),
        };
        let mut source = Source {
            sections: &mut builder,
            columns: self.columns,
            unfolded: self.unfolded,
        };
        work(&mut self.transcript, &mut source);
    }
}
