//! Okapi BM25 over a small in-memory collection of passages.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// BM25 term-frequency saturation.
const K1: f64 = 1.2;
/// BM25 length normalisation.
const B: f64 = 0.75;
/// Words too common to help ranking.
const STOPWORDS: [&str; 33] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "for", "from", "has",
    "how", "in", "is", "it", "its", "many", "of", "on", "or", "that", "the", "this", "to", "was",
    "what", "when", "which", "who", "with",
];

/// One document of a collection.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Passage {
    /// A stable id, e.g. `doc-0042`.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its text.
    pub text: String,
}

/// A ranked result.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchHit {
    /// The passage's position in the collection.
    pub index: usize,
    /// Its BM25 score.
    pub score: f64,
}

/// An inverted index with BM25 scoring.
#[derive(Clone, Debug)]
pub struct Bm25Index {
    passages: Vec<Passage>,
    postings: HashMap<String, Vec<(usize, u32)>>,
    lengths: Vec<usize>,
    average_length: f64,
}

/// Lower-case words of a text, without stopwords, with a plural `s` dropped.
pub fn terms(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .filter(|word| !STOPWORDS.contains(&word.as_str()))
        .map(|word| {
            if word.len() > 3 && word.ends_with('s') && !word.ends_with("ss") {
                word[..word.len() - 1].to_string()
            } else {
                word
            }
        })
        .collect()
}

impl Bm25Index {
    /// Indexes passages (title and text).
    pub fn new(passages: Vec<Passage>) -> Self {
        let mut postings: HashMap<String, Vec<(usize, u32)>> = HashMap::new();
        let mut lengths = Vec::with_capacity(passages.len());
        for (index, passage) in passages.iter().enumerate() {
            let words = terms(&format!("{} {}", passage.title, passage.text));
            lengths.push(words.len());
            let mut counts: HashMap<String, u32> = HashMap::new();
            for word in words {
                *counts.entry(word).or_default() += 1;
            }
            for (word, count) in counts {
                postings.entry(word).or_default().push((index, count));
            }
        }
        let average_length = if lengths.is_empty() {
            1.0
        } else {
            lengths.iter().sum::<usize>() as f64 / lengths.len() as f64
        };
        Self {
            passages,
            postings,
            lengths,
            average_length,
        }
    }

    /// Reads a collection of `Passage` JSON lines; errors name the line.
    pub fn from_jsonl(text: &str, origin: &str) -> anyhow::Result<Self> {
        let mut passages = Vec::new();
        for (number, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let passage: Passage = serde_json::from_str(line).map_err(|error| {
                anyhow::anyhow!(
                    "{origin}:{}: not a passage {{id, title, text}}: {error}",
                    number + 1
                )
            })?;
            passages.push(passage);
        }
        anyhow::ensure!(!passages.is_empty(), "{origin}: the collection is empty");
        Ok(Self::new(passages))
    }

    /// The `k` best passages for a query, best first (ties by collection order); passages
    /// that share no term with the query are left out.
    pub fn search(&self, query: &str, k: usize) -> Vec<SearchHit> {
        let count = self.passages.len() as f64;
        let mut scores: HashMap<usize, f64> = HashMap::new();
        let mut query_terms = terms(query);
        query_terms.sort();
        query_terms.dedup();
        for term in &query_terms {
            let Some(postings) = self.postings.get(term) else {
                continue;
            };
            let frequency = postings.len() as f64;
            let idf = ((count - frequency + 0.5) / (frequency + 0.5) + 1.0).ln();
            for &(index, term_count) in postings {
                let tf = f64::from(term_count);
                let norm = 1.0 - B + B * self.lengths[index] as f64 / self.average_length;
                *scores.entry(index).or_default() += idf * tf * (K1 + 1.0) / (tf + K1 * norm);
            }
        }
        let mut hits: Vec<SearchHit> = scores
            .into_iter()
            .map(|(index, score)| SearchHit { index, score })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.index.cmp(&b.index)));
        hits.truncate(k);
        hits
    }

    /// The passage at a position.
    pub fn passage(&self, index: usize) -> Option<&Passage> {
        self.passages.get(index)
    }

    /// All passages, in collection order.
    pub fn passages(&self) -> &[Passage] {
        &self.passages
    }
}
