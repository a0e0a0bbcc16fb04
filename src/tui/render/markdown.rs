//! Markdown in the policy's text, drawn the way terminal markdown viewers draw it (headings
//! in the accent with their `#`s muted, bullets and numbers, quotes under a bar, fenced code
//! highlighted by its language, emphasis as bold and italic), parsed by pulldown-cmark. A
//! line break in the source stays a line break, as chat interfaces show model text.

use crate::tui::highlight::Highlighter;
use crate::tui::rich::{
    Piece, RichLine, TextLine, Tone, code, cut_note, paragraph, piece, prose, shown_part,
};
use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// Containers deeper than this add no more indentation (a hostile text may nest thousands).
const MAX_SHOWN_DEPTH: usize = 8;

/// Whether a text uses markdown worth rendering: a heading, a fence, a list, a quote, strong
/// text or inline code. Plain text (`2*3*4 = 24`) is left as written.
pub fn looks_like_markdown(text: &str) -> bool {
    text.contains("**")
        || text.contains('`')
        || text.lines().any(|line| {
            let line = line.trim_start();
            let heading = line.trim_start_matches('#');
            let hashes = line.len() - heading.len();
            (1..=6).contains(&hashes) && heading.starts_with(' ')
                || line.starts_with("- ")
                || line.starts_with("* ")
                || line.starts_with("> ")
                || numbered_item(line)
        })
}

fn numbered_item(line: &str) -> bool {
    let rest = line.trim_start_matches(|c: char| c.is_ascii_digit());
    rest.len() < line.len() && line.len() - rest.len() <= 3 && rest.starts_with(". ")
}

/// A markdown text as lines: prose wraps, fenced and indented code keeps its lines.
pub fn markdown(text: &str, highlighter: &Highlighter) -> Vec<TextLine> {
    let (shown, cut) = shown_part(text);
    let mut writer = Writer::new(highlighter);
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for event in Parser::new_ext(shown, options) {
        writer.event(event);
    }
    writer.flush();
    let mut lines = writer.lines;
    while lines.last().is_some_and(|line| line.pieces.is_empty()) {
        lines.pop();
    }
    if cut > 0 {
        lines.extend(prose(vec![cut_note(cut)]));
    }
    lines
}

/// A container the text is inside: a quote draws a bar, a list item its marker once and then
/// an indent of the marker's width.
#[derive(Debug)]
enum Container {
    Quote,
    Item { marker: String, drawn: bool },
}

/// An open list: its next number, or none for bullets.
#[derive(Debug)]
struct List {
    next: Option<u64>,
}

/// The state of one rendering: the lines so far, the line being written, what it is inside.
struct Writer<'a> {
    highlighter: &'a Highlighter,
    lines: Vec<TextLine>,
    line: RichLine,
    containers: Vec<Container>,
    lists: Vec<List>,
    strong: usize,
    emphasis: usize,
    strike: usize,
    heading: bool,
    link: Vec<String>,
    fence: Option<(String, String)>,
}

impl<'a> Writer<'a> {
    fn new(highlighter: &'a Highlighter) -> Self {
        Self {
            highlighter,
            lines: Vec::new(),
            line: Vec::new(),
            containers: Vec::new(),
            lists: Vec::new(),
            strong: 0,
            emphasis: 0,
            strike: 0,
            heading: false,
            link: Vec::new(),
            fence: None,
        }
    }

    fn event(&mut self, event: Event<'_>) {
        if let Some((_, body)) = &mut self.fence {
            match event {
                Event::Text(text) => body.push_str(&text),
                Event::End(TagEnd::CodeBlock) => self.end_fence(),
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => self.text(&text),
            Event::Code(text) => self.push(Tone::CodeString, &text),
            Event::InlineMath(text) | Event::DisplayMath(text) => {
                self.push(Tone::CodeNumber, &text)
            }
            Event::Html(text) | Event::InlineHtml(text) => {
                for (index, part) in text.split('\n').enumerate() {
                    if index > 0 {
                        self.flush();
                    }
                    self.push(Tone::Muted, part);
                }
            }
            Event::SoftBreak | Event::HardBreak => self.flush(),
            Event::Rule => {
                self.block_gap();
                self.push(Tone::Muted, &"─".repeat(24));
                self.flush();
            }
            Event::TaskListMarker(done) => {
                self.push(Tone::Accent, if done { "[x] " } else { "[ ] " })
            }
            Event::FootnoteReference(name) => self.push(Tone::Muted, &format!("[^{name}]")),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.block_gap(),
            Tag::Heading { level, .. } => {
                self.block_gap();
                self.heading = true;
                let hashes = heading_depth(level);
                self.push(Tone::Muted, &format!("{} ", "#".repeat(hashes)));
            }
            Tag::BlockQuote(_) => {
                self.block_gap();
                self.containers.push(Container::Quote);
            }
            Tag::CodeBlock(kind) => {
                self.block_gap();
                let language = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split_whitespace().next().unwrap_or("").to_string()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                self.fence = Some((language, String::new()));
            }
            Tag::List(first) => {
                if self.lists.is_empty() {
                    self.block_gap();
                } else {
                    self.flush();
                }
                self.lists.push(List { next: first });
            }
            Tag::Item => {
                self.flush();
                let marker = match self.lists.last_mut() {
                    Some(List { next: Some(number) }) => {
                        *number += 1;
                        format!("{}. ", *number - 1)
                    }
                    _ => "• ".to_string(),
                };
                self.containers.push(Container::Item {
                    marker,
                    drawn: false,
                });
            }
            Tag::Emphasis => self.emphasis += 1,
            Tag::Strong => self.strong += 1,
            Tag::Strikethrough => self.strike += 1,
            Tag::Link { dest_url, .. } => self.link.push(dest_url.to_string()),
            Tag::Image { dest_url, .. } => {
                self.push(Tone::Muted, "[image: ");
                self.link.push(dest_url.to_string());
            }
            Tag::TableCell if !self.line.is_empty() => self.push(Tone::Muted, " │ "),
            Tag::TableHead => {
                self.block_gap();
                self.heading = true;
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => self.flush(),
            TagEnd::Heading(_) => {
                self.flush();
                self.heading = false;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.containers.pop();
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
            }
            TagEnd::Item => {
                self.flush();
                self.containers.pop();
            }
            TagEnd::Emphasis => self.emphasis = self.emphasis.saturating_sub(1),
            TagEnd::Strong => self.strong = self.strong.saturating_sub(1),
            TagEnd::Strikethrough => self.strike = self.strike.saturating_sub(1),
            TagEnd::Link => {
                if let Some(url) = self.link.pop().filter(|url| !url.is_empty()) {
                    self.push(Tone::Muted, &format!(" ({url})"));
                }
            }
            TagEnd::Image => {
                self.link.pop();
                self.push(Tone::Muted, "]");
            }
            TagEnd::TableHead => {
                self.flush();
                self.heading = false;
            }
            TagEnd::TableRow => self.flush(),
            TagEnd::Table => self.flush(),
            _ => {}
        }
    }

    /// Text in the tone of what it is inside.
    fn text(&mut self, text: &str) {
        let tone = if self.heading {
            Tone::Accent
        } else if !self.link.is_empty() {
            Tone::CodeKey
        } else if self.strike > 0 {
            Tone::Muted
        } else if self.strong > 0 {
            Tone::Strong
        } else if self.emphasis > 0 {
            Tone::Emphasis
        } else {
            Tone::Text
        };
        for (index, part) in text.split('\n').enumerate() {
            if index > 0 {
                self.flush();
            }
            self.push(tone, part);
        }
    }

    fn push(&mut self, tone: Tone, text: &str) {
        if text.is_empty() {
            return;
        }
        let piece = piece(tone, text);
        match self.line.last_mut() {
            Some(Piece { tone: last, text }) if *last == tone => text.push_str(&piece.text),
            _ => self.line.push(piece),
        }
    }

    /// A blank line before a block that follows another, outside lists (they stay tight).
    fn block_gap(&mut self) {
        self.flush();
        if !self.lines.is_empty() && self.lists.is_empty() {
            let last_blank = self.lines.last().is_some_and(|line| {
                line.pieces
                    .iter()
                    .all(|piece| piece.text.trim_matches(['│', ' ']).is_empty())
            });
            if !last_blank {
                let prefix = self.prefix();
                self.lines.extend(prose(vec![prefix]));
            }
        }
    }

    /// The pieces that open a line inside the current containers: a bar per quote, a marker
    /// for an item's first line and its width in spaces after.
    fn prefix(&mut self) -> RichLine {
        let mut pieces: RichLine = Vec::new();
        for container in self.containers.iter_mut().take(MAX_SHOWN_DEPTH) {
            match container {
                Container::Quote => pieces.push(piece(Tone::Muted, "│ ")),
                Container::Item { marker, drawn } if !*drawn => {
                    *drawn = true;
                    pieces.push(piece(Tone::Accent, marker));
                }
                Container::Item { marker, .. } => {
                    pieces.push(piece(Tone::Text, &" ".repeat(marker.chars().count())))
                }
            }
        }
        pieces
    }

    /// Ends the line being written (nothing when it is empty).
    fn flush(&mut self) {
        if self.line.is_empty() {
            return;
        }
        let mut pieces = self.prefix();
        pieces.append(&mut self.line);
        self.lines.extend(prose(vec![pieces]));
    }

    /// Ends a fenced block: its code highlighted by the fence's language, line by line
    /// under the containers' prefix.
    fn end_fence(&mut self) {
        let Some((language, body)) = self.fence.take() else {
            return;
        };
        let body = body.strip_suffix('\n').unwrap_or(&body);
        // A fence in no language syntect knows is still set apart from the prose around it.
        let rows = if self.highlighter.knows(&language) {
            self.highlighter.highlight_named(&language, body)
        } else {
            paragraph(Tone::CodeString, body)
        };
        for mut row in rows {
            let mut pieces = self.prefix();
            pieces.append(&mut row);
            self.lines.extend(code(vec![pieces]));
        }
    }
}

fn heading_depth(level: HeadingLevel) -> usize {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

#[cfg(test)]
mod tests;
