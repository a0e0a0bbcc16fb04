//! The status bar's state: what the engine is doing, the store's size, the last message.

use crate::engine::EngineState;

/// A message for the user in the status bar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    /// The text.
    pub text: String,
    /// Whether it reports an error.
    pub error: bool,
}

/// The status bar's state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// What the engine is doing.
    pub engine: EngineState,
    /// Trajectories in the store, when known.
    pub stored: Option<usize>,
    /// The last message.
    pub notice: Option<Notice>,
}

impl Status {
    /// Shows a message.
    pub fn notify(&mut self, text: impl Into<String>) {
        self.notice = Some(Notice {
            text: text.into(),
            error: false,
        });
    }

    /// Shows an error.
    pub fn warn(&mut self, text: impl Into<String>) {
        self.notice = Some(Notice {
            text: text.into(),
            error: true,
        });
    }
}
