//! Fresh request tags, so the answer to each request can be recognised.

use crate::engine::Tag;

/// Hands out increasing tags (0 is never handed out: it marks "no request").
#[derive(Clone, Debug, Default)]
pub struct Tags {
    last: u64,
}

impl Tags {
    /// A tag not handed out before.
    pub fn fresh(&mut self) -> Tag {
        self.last += 1;
        Tag(self.last)
    }
}
