//! Training the embedded model's byte-level BPE tokenizer in-process.

use crate::model::error::{ModelError, Result};
use std::path::PathBuf;
use tokenizers::models::bpe::{BPE, BpeTrainerBuilder};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::{
    AddedToken, DecoderWrapper, NormalizerWrapper, PostProcessorWrapper, PreTokenizerWrapper,
    Tokenizer, TokenizerBuilder,
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
    .with_pre_tokenizer(Some(PreTokenizerWrapper::ByteLevel(ByteLevel::new(
        false, true, true,
    ))))
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
