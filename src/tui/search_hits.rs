//! Search hits in an open trajectory: the words of the query marked where they appear (as
//! the index splits text: runs of letters and digits, case ignored, by stem; prefix words
//! mark every word they start), and the sections that
//! hold a matching message, for the keys that jump between hits.

use super::content::{Section, SectionContent};
use super::rich::{Piece, Tone};
use crate::store::{TextHits, WordMatcher};
use crate::trajectory::Trajectory;

/// Marks the query's words (by stem) and prefixes in every line of the sections; returns
/// the sections (by position) that hold a marked word.
pub fn mark(sections: &mut [SectionContent], hits: &TextHits) -> Vec<usize> {
    let mut marked = Vec::new();
    let mut words = WordMatcher::new(&hits.words, &hits.prefixes);
    if words.is_empty() {
        return marked;
    }
    for (index, section) in sections.iter_mut().enumerate() {
        let mut any = false;
        for line in &mut section.lines {
            let pieces = std::mem::take(&mut line.pieces);
            for piece in pieces {
                any |= split_piece(piece, &mut words, &mut line.pieces);
            }
        }
        if any {
            marked.push(index);
        }
    }
    marked
}

/// Splits a piece at the words it holds, pushing the parts; whether any word was found.
fn split_piece(piece: Piece, words: &mut WordMatcher, out: &mut Vec<Piece>) -> bool {
    let text = &piece.text;
    let mut found = false;
    let mut copied = 0;
    for (start, end) in word_spans(text) {
        if !words.matches(&text[start..end]) {
            continue;
        }
        found = true;
        if start > copied {
            out.push(part(piece.tone, &text[copied..start]));
        }
        out.push(part(Tone::Hit, &text[start..end]));
        copied = end;
    }
    if copied < text.len() {
        out.push(part(piece.tone, &text[copied..]));
    }
    found
}

fn part(tone: Tone, text: &str) -> Piece {
    Piece {
        tone,
        text: text.to_string(),
    }
}

/// Byte ranges of the runs of alphanumeric characters, as tantivy's default tokenizer cuts.
fn word_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (at, c) in text.char_indices() {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(at),
            (false, Some(from)) => {
                spans.push((from, at));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(from) = start {
        spans.push((from, text.len()));
    }
    spans
}

/// The sections (by position) that show the messages the index matched: prompt messages in
/// the prompt, an assistant message in its step, a reply in the step it answers.
pub fn sections_of_messages(
    trajectory: &Trajectory,
    sections: &[SectionContent],
    messages: &[usize],
) -> Vec<usize> {
    let steps = trajectory.steps();
    let mut found: Vec<usize> = messages
        .iter()
        .map(|&message| {
            let step = steps
                .iter()
                .rposition(|location| location.message <= message)
                .map(|last| {
                    let first_of_message = steps
                        .iter()
                        .position(|location| location.message == steps[last].message);
                    first_of_message.unwrap_or(last)
                });
            match step {
                Some(step) => Section::Step(step),
                None => Section::Prompt,
            }
        })
        .filter_map(|wanted| sections.iter().position(|s| s.section == wanted))
        .collect();
    found.sort_unstable();
    found.dedup();
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::rich::TextLine;

    #[test]
    fn words_are_marked_whole_by_stem_and_case_blind() {
        let mut sections = vec![SectionContent {
            brief: None,
            built: true,
            section: Section::Prompt,
            lines: vec![TextLine {
                pieces: vec![part(Tone::Text, "Final Answer: 241, answers 2410")],
                code: false,
                fold: Default::default(),
            }],
        }];
        let hits = TextHits {
            messages: Vec::new(),
            words: vec!["answer".into(), "241".into()],
            prefixes: vec!["fin".into()],
        };
        let marked = mark(&mut sections, &hits);
        assert_eq!(marked, [0]);
        let pieces = &sections[0].lines[0].pieces;
        let hits: Vec<&str> = pieces
            .iter()
            .filter(|piece| piece.tone == Tone::Hit)
            .map(|piece| piece.text.as_str())
            .collect();
        assert_eq!(
            hits,
            ["Final", "Answer", "241", "answers"],
            "stems and prefixes"
        );
        let whole: String = pieces.iter().map(|piece| piece.text.as_str()).collect();
        assert_eq!(whole, "Final Answer: 241, answers 2410");
    }
}
