//! How the token view spells a trajectory's tokens: each id of its trace decoded by the
//! tokenizer of the model that sampled it (the folder its run started from), else by the
//! session's policy (the one policy rule), with whitespace made visible.

use crate::model::ChatTokenizer;
use crate::run::policy::{PolicyRequest, resolve_policy};
use crate::session::SessionPaths;
use crate::store::Store;
use crate::trajectory::Trajectory;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The file a model folder keeps its tokenizer in.
const TOKENIZER_FILE: &str = "tokenizer.json";

/// The visible text of every token id of one trajectory's trace, and the tokenizer that
/// decoded them.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenSpellings {
    /// The text of each id of the trace, whitespace made visible.
    pub by_id: BTreeMap<u32, String>,
    /// The tokenizer file they were decoded with.
    pub tokenizer: PathBuf,
    /// Why that tokenizer: the trajectory's run, or the session's policy.
    pub source: SpellingSource,
}

/// Where the tokenizer of a trajectory's spellings comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpellingSource {
    /// The model folder the trajectory's run started from.
    Run,
    /// The session's policy (for imported trajectories and runs without a local folder).
    SessionPolicy,
}

impl SpellingSource {
    /// How the token view names it.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Run => "its run's model",
            Self::SessionPolicy => "the session's policy",
        }
    }
}

/// Tokenizers by folder, each read once (a folder without a readable tokenizer is
/// remembered as such).
#[derive(Default)]
pub(super) struct Spellers {
    loaded: HashMap<PathBuf, Option<Arc<ChatTokenizer>>>,
}

impl Spellers {
    /// The spellings of `trajectory`'s trace, when it has one and a tokenizer is found.
    pub fn spell(
        &mut self,
        store: &Store,
        session: Option<&SessionPaths>,
        trajectory: &Trajectory,
    ) -> Option<TokenSpellings> {
        let trace = trajectory.token_trace.as_ref()?;
        let (dir, source) = tokenizer_folder(store, session, trajectory)?;
        let tokenizer = self.tokenizer(&dir)?;
        let by_id = trace
            .token_ids
            .iter()
            .map(|&id| {
                let text = tokenizer
                    .decode(&[id], false)
                    .unwrap_or_else(|_| id.to_string());
                (id, visible(&text))
            })
            .collect();
        Some(TokenSpellings {
            by_id,
            tokenizer: tokenizer.file().to_path_buf(),
            source,
        })
    }

    fn tokenizer(&mut self, dir: &Path) -> Option<Arc<ChatTokenizer>> {
        self.loaded
            .entry(dir.to_path_buf())
            .or_insert_with(|| {
                ChatTokenizer::from_file(&dir.join(TOKENIZER_FILE))
                    .ok()
                    .map(Arc::new)
            })
            .clone()
    }
}

/// The folder whose tokenizer spells `trajectory`: its run's starting model (an evaluation
/// `RUN/eval` counts as `RUN`), else the session's policy.
fn tokenizer_folder(
    store: &Store,
    session: Option<&SessionPaths>,
    trajectory: &Trajectory,
) -> Option<(PathBuf, SpellingSource)> {
    let run = trajectory
        .run
        .as_deref()
        .map(|run| run.strip_suffix("/eval").unwrap_or(run));
    if let Some(info) = run.and_then(|run| store.get_run(run).ok().flatten()) {
        let dir = PathBuf::from(&info.model);
        if dir.join(TOKENIZER_FILE).is_file() {
            return Some((dir, SpellingSource::Run));
        }
    }
    let policy = resolve_policy(session?, &PolicyRequest::default(), || Ok(store.runs()?));
    let dir = policy.ok()?.dir;
    dir.join(TOKENIZER_FILE)
        .is_file()
        .then_some((dir, SpellingSource::SessionPolicy))
}

/// A token's text with its white space and control characters made visible: `·` a space,
/// `⏎` a newline, `→` a tab, `␍` a carriage return, `�` any other control character.
pub fn visible(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            ' ' => '·',
            '\n' => '⏎',
            '\t' => '→',
            '\r' => '␍',
            c if c.is_control() => '�',
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::visible;

    #[test]
    fn white_space_and_control_characters_show() {
        assert_eq!(visible(" the\n\tend\r\u{7}"), "·the⏎→end␍�");
    }
}
