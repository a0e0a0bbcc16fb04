//! The counts the Stats and Curate tabs share: the engine's overview, and whether it is
//! loading or out of date.

use crate::engine::{Command, Overview};
use crate::store::Filter;

/// The overview both insight tabs show.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OverviewState {
    /// The counts, once computed.
    pub counts: Option<Box<Overview>>,
    /// Labels changed since they were computed.
    pub stale: bool,
    /// A computation is in flight.
    pub loading: bool,
}

impl OverviewState {
    /// Asks for the counts when none are held or they are stale, unless a request is in
    /// flight.
    pub fn request(&mut self) -> Vec<Command> {
        if self.loading || (self.counts.is_some() && !self.stale) {
            return Vec::new();
        }
        self.loading = true;
        vec![Command::LoadOverview {
            filter: Filter::default(),
        }]
    }

    /// Asks for fresh counts, even while a request is in flight.
    pub fn refresh(&mut self) -> Vec<Command> {
        self.stale = true;
        self.loading = false;
        self.request()
    }

    /// Takes the counts from the engine.
    pub fn receive(&mut self, counts: Box<Overview>) {
        self.counts = Some(counts);
        self.stale = false;
        self.loading = false;
    }
}
