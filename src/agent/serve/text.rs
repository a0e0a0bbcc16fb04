//! A reply's text as its tokens arrive: decoded incrementally, cut at the first stop string,
//! and handed on in pieces that can no longer turn out to be part of a stop string.

use crate::model::ChatTokenizer;

/// The text of one reply so far.
pub struct ReplyText<'a> {
    tokenizer: &'a ChatTokenizer,
    stops: &'a [String],
    tokens: Vec<u32>,
    text: String,
    sent: usize,
    stopped: bool,
}

impl<'a> ReplyText<'a> {
    /// An empty reply decoded by `tokenizer` that ends at the first of `stops`.
    pub fn new(tokenizer: &'a ChatTokenizer, stops: &'a [String]) -> Self {
        Self {
            tokenizer,
            stops,
            tokens: Vec::new(),
            text: String::new(),
            sent: 0,
            stopped: false,
        }
    }

    /// Adds a token; hands `emit` the text that became final. False once the reply is over
    /// (a stop string was written, or `emit` said the listener is gone).
    pub fn push(&mut self, token: u32, emit: &mut dyn FnMut(&str) -> bool) -> bool {
        self.tokens.push(token);
        let Ok(text) = self.tokenizer.decode(&self.tokens, false) else {
            return true;
        };
        self.text = text;
        if self.text.ends_with('\u{fffd}') {
            return true;
        }
        self.scan(false, emit)
    }

    /// Hands on what is left once generation has ended (unless a stop string ended it).
    pub fn finish(&mut self, emit: &mut dyn FnMut(&str) -> bool) {
        if !self.stopped {
            self.scan(true, emit);
        }
    }

    /// Cuts the text at a stop string and sends what became final (everything, at the end).
    /// A character still being decoded (the text ends in U+FFFD) waits for the next token.
    fn scan(&mut self, last: bool, emit: &mut dyn FnMut(&str) -> bool) -> bool {
        if let Some(cut) = first_stop(&self.text, self.stops) {
            self.text.truncate(cut);
            self.stopped = true;
            self.send(cut, emit);
            return false;
        }
        let safe = if last {
            self.text.len()
        } else {
            self.text.len() - held_back(&self.text, self.stops)
        };
        self.send(safe, emit)
    }

    fn send(&mut self, end: usize, emit: &mut dyn FnMut(&str) -> bool) -> bool {
        if end <= self.sent || !self.text.is_char_boundary(self.sent) {
            return true;
        }
        let heard = emit(&self.text[self.sent..end]);
        self.sent = end;
        heard
    }

    /// The reply's text (without the stop string).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether a stop string ended it.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// The tokens it took (up to the one that completed the stop string).
    pub fn tokens(&self) -> usize {
        self.tokens.len()
    }
}

/// Where the earliest stop string starts.
fn first_stop(text: &str, stops: &[String]) -> Option<usize> {
    stops
        .iter()
        .filter_map(|stop| text.find(stop.as_str()))
        .min()
}

/// How many bytes at the end of `text` begin a stop string (and so may not be sent yet).
fn held_back(text: &str, stops: &[String]) -> usize {
    stops
        .iter()
        .filter_map(|stop| {
            (1..stop.len())
                .rev()
                .find(|&k| stop.is_char_boundary(k) && text.ends_with(&stop[..k]))
        })
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_strings_are_found_and_their_beginnings_held_back() {
        let stops = vec!["\n\nUser:".to_string(), "END".to_string()];
        assert_eq!(first_stop("a\n\nUser: b", &stops), Some(1));
        assert_eq!(first_stop("abEND\n\nUser:", &stops), Some(2));
        assert_eq!(first_stop("abc", &stops), None);
        assert_eq!(held_back("abc\n\nUs", &stops), 4);
        assert_eq!(held_back("abcEN", &stops), 2);
        assert_eq!(held_back("abc", &stops), 0);
        assert_eq!(held_back("é", &["éa".to_string()]), 2);
    }
}
