//! Theme-independent styled text: pieces tagged with a semantic tone, so content is built once
//! and drawn in whatever theme is current.

use crate::text::inert;

/// The semantic role of a piece of text; themes map each to a style.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tone {
    /// Ordinary text.
    Text,
    /// Metadata: ids, counts, captions.
    Muted,
    /// Strong text in markdown (bold).
    Strong,
    /// Emphasised text in markdown (italic).
    Emphasis,
    /// Text the policy did not generate (observations, prompts, masked tokens).
    Dim,
    /// Headings and the focused pane.
    Accent,
    /// A pass, a correct answer.
    Pass,
    /// A fail, an error.
    Fail,
    /// A warning: zero-variance groups, truncated content.
    Warn,
    /// A suggested label (italic).
    Suggested,
    /// A confirmed label (bold).
    Confirmed,
    /// A low process score.
    PrmLow,
    /// A middling process score.
    PrmMid,
    /// A high process score.
    PrmHigh,
    /// A key in highlighted code (JSON keys, names).
    CodeKey,
    /// A string literal.
    CodeString,
    /// A number or constant.
    CodeNumber,
    /// A keyword or operator.
    CodeKeyword,
    /// A comment.
    CodeComment,
    /// A line only the right side of a diff has.
    DiffAdd,
    /// A line only the left side of a diff has.
    DiffRemove,
    /// A heat-map cell, level 0 (cool) to 4 (hot).
    Heat(u8),
    /// A word the current search matched.
    Hit,
}

impl Tone {
    /// The gauge tone of a process score in [0, 1].
    pub fn of_score(value: f64) -> Self {
        if value < 0.34 {
            Self::PrmLow
        } else if value < 0.67 {
            Self::PrmMid
        } else {
            Self::PrmHigh
        }
    }
}

/// A run of text with one tone.
#[derive(Clone, Debug, PartialEq)]
pub struct Piece {
    /// Its tone.
    pub tone: Tone,
    /// Its text: already made inert, one line, no control characters.
    pub text: String,
}

/// A line of pieces.
pub type RichLine = Vec<Piece>;

/// One piece of text, made inert (tool output and model text are untrusted).
pub fn piece(tone: Tone, text: &str) -> Piece {
    Piece {
        tone,
        text: inert(text).replace('\t', "    "),
    }
}

/// Most bytes of one text shown; the rest is summarised in a closing line.
pub const MAX_SHOWN_BYTES: usize = 64 * 1024;

/// A line of content and how it is laid out when wider than its view.
#[derive(Clone, Debug, PartialEq)]
pub struct TextLine {
    /// Its pieces.
    pub pieces: RichLine,
    /// Code or JSON: kept whole and scrolled sideways; prose wraps at spaces.
    pub code: bool,
    /// Whether it folds away until the user unfolds (`z`), and as what.
    pub fold: Fold,
}

/// Whether a line folds away until the user unfolds (`z`), and as what.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fold {
    /// Always shown.
    #[default]
    Never,
    /// The policy's reasoning (`<think>…</think>`, `reasoning_content`).
    Reasoning,
    /// The rest of a long prompt message, past its first lines.
    LongText,
}

/// Lines of prose, wrapped to the view.
pub fn prose(lines: Vec<RichLine>) -> Vec<TextLine> {
    lines
        .into_iter()
        .map(|pieces| TextLine {
            pieces,
            code: false,
            fold: Fold::Never,
        })
        .collect()
}

/// Lines of the policy's reasoning: prose, folded until unfolded.
pub fn reasoning(lines: Vec<RichLine>) -> Vec<TextLine> {
    lines
        .into_iter()
        .map(|pieces| TextLine {
            pieces,
            code: false,
            fold: Fold::Reasoning,
        })
        .collect()
}

/// Lines of code or JSON, kept whole.
pub fn code(lines: Vec<RichLine>) -> Vec<TextLine> {
    lines
        .into_iter()
        .map(|pieces| TextLine {
            pieces,
            code: true,
            fold: Fold::Never,
        })
        .collect()
}

/// A text as lines of one tone: made inert, cut after `MAX_SHOWN_BYTES`, one line per line
/// of the text (the view wraps or scrolls them).
pub fn paragraph(tone: Tone, text: &str) -> Vec<RichLine> {
    let (shown, cut) = shown_part(text);
    let mut lines: Vec<RichLine> = Vec::new();
    for line in shown.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        lines.push(vec![piece(tone, line)]);
    }
    if cut > 0 {
        lines.push(cut_note(cut));
    }
    lines
}

/// The first `MAX_SHOWN_BYTES` of a text (cut at a character boundary) and how many bytes
/// are left out.
pub fn shown_part(text: &str) -> (&str, usize) {
    match text
        .char_indices()
        .find(|(index, _)| *index >= MAX_SHOWN_BYTES)
    {
        Some((cut, _)) => (&text[..cut], text.len() - cut),
        None => (text, 0),
    }
}

/// The line that closes a cut text: how much is left out and how to see it.
pub fn cut_note(bytes: usize) -> RichLine {
    vec![piece(
        Tone::Warn,
        &format!("… {bytes} more bytes not shown (rollscope show ID --full prints everything)"),
    )]
}

/// The plain text of a line.
pub fn plain(line: &RichLine) -> String {
    line.iter().map(|piece| piece.text.as_str()).collect()
}
