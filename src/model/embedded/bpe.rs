//! Training the embedded model's byte-level BPE tokenizer in-process.

use crate::model::error::{ModelError, Result};
use std::path::PathBuf;
use tokenizers::models::bpe::{BPE, BpeTrainerBuilder};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::{
    AddedToken, DecoderWrapper, NormalizerWrapper, PostProcessorWrapper, PreTokenizerWrapper,
    SplitDelimiterBehavior, Tokenizer, TokenizerBuilder,
};

/// The special tokens, with ids 0, 1, 2, … in this order: ChatML, tool calls and results,
/// and reasoning tags.
pub const SPECIAL_TOKENS: [&str; 9] = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
];

/// The pre-tokenizer split of GPT-4 and Llama 3: numbers in groups of up to three digits and
/// never joined to the space before them, so a number is the same token wherever it stands
/// (` 12`, `+12`, `"12"`, a tool result) and copying it is one lookup for a tiny model.
pub const SPLIT_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Trains a byte-level BPE of `vocab_size` tokens (special tokens included) on `corpus`.
/// Special-token texts in the corpus are split out first so no merge is spent on them.
pub fn train_tokenizer(corpus: &[String], vocab_size: usize) -> Result<Tokenizer> {
    let failed = |error: tokenizers::Error| ModelError::Tokenizer {
        file: PathBuf::from("(embedded tokenizer)"),
        message: format!("training failed: {error}"),
    };
    let specials: Vec<AddedToken> = SPECIAL_TOKENS
        .iter()
        .map(|token| AddedToken::from(token.to_string(), true))
        .collect();
    let mut trainer = BpeTrainerBuilder::new()
        .vocab_size(vocab_size)
        .min_frequency(2)
        .show_progress(false)
        .special_tokens(specials)
        .initial_alphabet(ByteLevel::alphabet().into_iter().collect())
        .build();
    let mut builder = TokenizerBuilder::<
        BPE,
        NormalizerWrapper,
        PreTokenizerWrapper,
        PostProcessorWrapper,
        DecoderWrapper,
    >::default()
    .with_model(BPE::default())
    .with_pre_tokenizer(Some(PreTokenizerWrapper::Sequence(Sequence::new(vec![
        PreTokenizerWrapper::Split(
            Split::new(
                SplitPattern::Regex(SPLIT_PATTERN.into()),
                SplitDelimiterBehavior::Isolated,
                false,
            )
            .map_err(failed)?,
        ),
        PreTokenizerWrapper::ByteLevel(ByteLevel::new(false, true, false)),
    ]))))
    .with_post_processor(Some(PostProcessorWrapper::ByteLevel(ByteLevel::new(
        true, false, true,
    ))))
    .with_decoder(Some(DecoderWrapper::ByteLevel(ByteLevel::new(
        true, true, true,
    ))))
    .build()
    .map_err(failed)?;
    let plain: Vec<String> = corpus
        .iter()
        .map(|text| {
            SPECIAL_TOKENS
                .iter()
                .fold(text.clone(), |text, token| text.replace(token, "\n"))
        })
        .collect();
    builder.train(&mut trainer, plain.iter()).map_err(failed)?;
    let json = serde_json::to_string(&builder).map_err(|error| ModelError::Tokenizer {
        file: PathBuf::from("(embedded tokenizer)"),
        message: format!("cannot serialise: {error}"),
    })?;
    json.parse::<Tokenizer>().map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_is_the_same_token_wherever_it_stands() {
        let corpus: Vec<String> = (0..200)
            .map(|i| {
                format!(
                    "Ken has {} pens. I compute {}+{}.\n{}\n",
                    i % 40,
                    i % 40,
                    i % 7,
                    i % 40
                )
            })
            .collect();
        let tokenizer = train_tokenizer(&corpus, 400).unwrap();
        let encoding = tokenizer
            .encode("has 18 pens. I compute 18+9. \"18\"\n18\n", false)
            .unwrap();
        let eighteen = tokenizer.token_to_id("18").expect("18 is one token");
        let count = encoding
            .get_ids()
            .iter()
            .filter(|&&id| id == eighteen)
            .count();
        assert_eq!(count, 4, "{:?}", encoding.get_tokens());
    }
}
