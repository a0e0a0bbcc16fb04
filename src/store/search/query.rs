//! Reading a search: tantivy's query syntax (words AND-ed, `"phrases"`, `field:value`, `OR`,
//! `-word`) over stemmed text (`segfault` finds `segfaults`), plus prefix words
//! (`segfault*`, `tool:str_rep*`, `-debug*`), which the parser leaves out and a term range
//! of the index answers; and which words of a text a search marks.

use super::SearchError;
use super::documents::Fields;
use std::ops::Bound;
use tantivy::query::{
    BooleanQuery, Occur, Query, QueryParser, QueryParserError, RangeQuery, TermQuery,
};
use tantivy::schema::Field;
use tantivy::schema::IndexRecordOption;
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{Index, Term};

/// A word written with a trailing `*`: every indexed word it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct PrefixWord {
    /// The field it names (`text` when none).
    pub field: String,
    /// The start of the words, lowercased.
    pub prefix: String,
    /// Written with a leading `-`: messages with such a word are left out.
    pub excluded: bool,
}

/// A query read: the parsed part and the prefix words, AND-ed.
pub(super) struct ParsedQuery {
    /// Everything to match.
    pub query: Box<dyn Query>,
    /// The prefix words on the text field, for marking.
    pub text_prefixes: Vec<String>,
}

/// Parses a search against the index's fields.
pub(super) fn parse(index: &Index, fields: Fields, text: &str) -> Result<ParsedQuery, SearchError> {
    let bad = |reason: String| SearchError::BadQuery {
        query: text.to_string(),
        reason,
    };
    let (rest, prefixes) = split_prefixes(text);
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    if rest.trim().is_empty() && !prefixes.is_empty() {
        if prefixes.iter().all(|word| word.excluded) {
            return Err(bad(
                "a search needs at least one word that is not excluded".into()
            ));
        }
    } else {
        let mut parser = QueryParser::for_index(index, vec![fields.text]);
        parser.set_conjunction_by_default();
        let parsed = parser
            .parse_query(&rest)
            .map_err(|error| bad(describe_parse_error(&error)))?;
        clauses.push((Occur::Must, parsed));
    }
    let mut text_prefixes = Vec::new();
    for word in &prefixes {
        let field = fields.named(&word.field).ok_or_else(|| {
            bad(format!(
                "there is no field `{}` (use {})",
                word.field,
                Fields::QUERYABLE.join(", ")
            ))
        })?;
        if field == fields.text && !word.excluded {
            text_prefixes.push(word.prefix.clone());
        }
        let occur = if word.excluded {
            Occur::MustNot
        } else {
            Occur::Must
        };
        clauses.push((occur, prefix_query(field, &word.prefix)));
    }
    let query: Box<dyn Query> = if clauses.len() == 1 && clauses[0].0 == Occur::Must {
        clauses.remove(0).1
    } else {
        Box::new(BooleanQuery::new(clauses))
    };
    Ok(ParsedQuery {
        query,
        text_prefixes,
    })
}

/// Fewest characters of a stem that a longer prefix word also matches.
const SHORTEST_STEM: usize = 4;

/// Every document with a word of `field` that starts with `prefix`, or (the text being
/// indexed by stem) whose stem of at least `SHORTEST_STEM` characters the prefix starts
/// with: `reservat*` finds `reservation`, indexed as `reserv`.
fn prefix_query(field: Field, prefix: &str) -> Box<dyn Query> {
    let upper = format!("{prefix}\u{10FFFF}");
    let mut either: Vec<(Occur, Box<dyn Query>)> = vec![(
        Occur::Should,
        Box::new(RangeQuery::new(
            Bound::Included(Term::from_field_text(field, prefix)),
            Bound::Excluded(Term::from_field_text(field, &upper)),
        )),
    )];
    for (end, _) in prefix.char_indices().skip(SHORTEST_STEM) {
        either.push((
            Occur::Should,
            Box::new(TermQuery::new(
                Term::from_field_text(field, &prefix[..end]),
                IndexRecordOption::Basic,
            )),
        ));
    }
    Box::new(BooleanQuery::new(either))
}

/// The query without its prefix words (bare words ending in `*`, outside quotes), and those
/// words.
pub(super) fn split_prefixes(query: &str) -> (String, Vec<PrefixWord>) {
    let mut rest = Vec::new();
    let mut prefixes = Vec::new();
    for word in words_outside_quotes(query) {
        match prefix_word(word) {
            Some(prefix) => prefixes.push(prefix),
            None => rest.push(word),
        }
    }
    (rest.join(" "), prefixes)
}

/// The query cut at white space, a quoted phrase kept whole.
fn words_outside_quotes(query: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let mut start = None;
    let mut quoted = false;
    for (at, c) in query.char_indices() {
        if c == '"' {
            quoted = !quoted;
        }
        match (c.is_whitespace() && !quoted, start) {
            (true, Some(from)) => {
                words.push(&query[from..at]);
                start = None;
            }
            (false, None) => start = Some(at),
            _ => {}
        }
    }
    if let Some(from) = start {
        words.push(&query[from..]);
    }
    words
}

/// `segfault*`, `-debug*`, `tool:str_rep*` as a prefix word; anything else `None`.
fn prefix_word(word: &str) -> Option<PrefixWord> {
    let (excluded, word) = match word.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, word),
    };
    let stem = word.strip_suffix('*')?;
    let (field, prefix) = stem.split_once(':').unwrap_or(("text", stem));
    let plain = |text: &str| {
        !text.is_empty()
            && text
                .chars()
                .all(|c| !c.is_whitespace() && !matches!(c, '"' | '*' | '(' | ')' | ':'))
    };
    (plain(prefix) && plain(field)).then(|| PrefixWord {
        field: field.to_string(),
        prefix: prefix.to_lowercase(),
        excluded,
    })
}

/// A parse error in words a person acts on.
fn describe_parse_error(error: &QueryParserError) -> String {
    use QueryParserError as E;
    match error {
        E::FieldDoesNotExist(field) => format!(
            "there is no field `{field}` (use {})",
            Fields::QUERYABLE.join(", ")
        ),
        E::SyntaxError(_) => "unbalanced quotes or brackets".to_string(),
        E::AllButQueryForbidden => "a search needs at least one word that is not excluded".into(),
        other => other.to_string(),
    }
}

/// Which words of a text a search marks, as the index reads them: a word whose stem is one
/// of the search's words, or that starts with one of its prefixes (case ignored).
pub struct WordMatcher {
    words: Vec<String>,
    prefixes: Vec<String>,
    analyzer: TextAnalyzer,
}

impl WordMatcher {
    /// The matcher of a search's words (stems, as `TextHits::words`) and prefixes.
    pub fn new(words: &[String], prefixes: &[String]) -> Self {
        Self {
            words: words.to_vec(),
            prefixes: prefixes.to_vec(),
            analyzer: super::documents::stemmed_analyzer(),
        }
    }

    /// Whether nothing would be marked.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty() && self.prefixes.is_empty()
    }

    /// Whether `word` (one run of letters and digits) is marked.
    pub fn matches(&mut self, word: &str) -> bool {
        let lower = word.to_lowercase();
        if self
            .prefixes
            .iter()
            .any(|prefix| lower.starts_with(prefix.as_str()))
        {
            return true;
        }
        if self.words.is_empty() {
            return false;
        }
        let mut stem = None;
        self.analyzer
            .token_stream(word)
            .process(&mut |token| stem = Some(token.text.clone()));
        stem.is_some_and(|stem| self.words.contains(&stem))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_words_are_split_from_the_rest_outside_quotes() {
        let (rest, prefixes) =
            split_prefixes(r#"segfault* "core dump*" -debug* tool:str_rep* role:tool 42*x"#);
        assert_eq!(rest, r#""core dump*" role:tool 42*x"#);
        let words: Vec<(&str, &str, bool)> = prefixes
            .iter()
            .map(|word| (word.field.as_str(), word.prefix.as_str(), word.excluded))
            .collect();
        assert_eq!(
            words,
            [
                ("text", "segfault", false),
                ("text", "debug", true),
                ("tool", "str_rep", false)
            ]
        );
        assert_eq!(
            split_prefixes("*").1,
            Vec::new(),
            "a bare star is no prefix"
        );
    }

    #[test]
    fn the_matcher_marks_stems_and_prefixes() {
        let mut matcher = WordMatcher::new(&["segfault".into()], &["pani".into()]);
        assert!(matcher.matches("Segfaults"));
        assert!(matcher.matches("segfault"));
        assert!(matcher.matches("PANICKED"));
        assert!(!matcher.matches("fault"));
        assert!(!WordMatcher::new(&[], &["x".into()]).is_empty());
    }
}
