//! The embedded default: built in-process, saved as a Hugging Face folder, reloaded through
//! the ordinary loader, deterministic from its seed.

use rollscope::formats::gsm8k::{self, Gsm8kRow};
use rollscope::model::embedded::{
    self, EmbeddedSpec, SPECIAL_TOKENS, calculator_conversation, calculator_tool,
};
use rollscope::model::{LanguageModel, LoadOptions, LossOn, SamplingParams};
use std::path::Path;

/// The rows of a shipped split.
fn gsm8k_rows(text: &str) -> Vec<Gsm8kRow> {
    gsm8k::rows(text, "split")
        .unwrap()
        .into_iter()
        .map(|(_, row)| row)
        .collect()
}

const FILES: [&str; 6] = [
    "config.json",
    "model.safetensors",
    "tokenizer.json",
    "tokenizer_config.json",
    "chat_template.jinja",
    "generation_config.json",
];

fn read(dir: &Path, file: &str) -> Vec<u8> {
    std::fs::read(dir.join(file)).unwrap_or_else(|error| panic!("{file}: {error}"))
}

/// The embedded default built into a temporary folder (kept alive with the model).
fn default_model() -> (tempfile::TempDir, LanguageModel) {
    let dir = tempfile::tempdir().unwrap();
    let model = embedded::init_folder(
        dir.path(),
        &EmbeddedSpec::default(),
        &LoadOptions::default(),
    )
    .unwrap();
    (dir, model)
}

fn greedy(model: &LanguageModel, prompt: &[u32], count: usize) -> Vec<u32> {
    let mut decoder = model.decoder();
    let id = decoder
        .add_sequence(prompt, SamplingParams::greedy())
        .unwrap();
    (0..count)
        .map(|_| decoder.step(&[id]).unwrap()[0].token)
        .collect()
}

#[test]
fn builds_saves_reloads_and_generates_deterministically() {
    let spec = EmbeddedSpec::default();
    let (first, second, reseeded) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let model = embedded::init_folder(first.path(), &spec, &LoadOptions::default()).unwrap();
    embedded::init_folder(second.path(), &spec, &LoadOptions::default()).unwrap();
    embedded::init_folder(
        reseeded.path(),
        &EmbeddedSpec {
            seed: 1,
            ..spec.clone()
        },
        &LoadOptions::default(),
    )
    .unwrap();
    for file in FILES {
        assert_eq!(
            read(first.path(), file),
            read(second.path(), file),
            "{file} differs between two builds"
        );
    }
    assert_eq!(
        read(first.path(), "tokenizer.json"),
        read(reseeded.path(), "tokenizer.json")
    );
    assert_ne!(
        read(first.path(), "model.safetensors"),
        read(reseeded.path(), "model.safetensors")
    );

    let parameters = model.config.parameter_count();
    assert!(
        (2_000_000..8_000_000).contains(&parameters),
        "{parameters} parameters"
    );
    let counted: usize = model
        .parameters()
        .all_vars()
        .iter()
        .map(|var| var.elem_count())
        .sum();
    assert_eq!(counted, parameters);
    assert_eq!(model.chat.tokenizer.vocab_size(), spec.vocab_size);
    for (index, token) in SPECIAL_TOKENS.iter().enumerate() {
        assert_eq!(
            model.chat.tokenizer.encode(token).unwrap(),
            vec![index as u32],
            "{token}"
        );
    }

    let messages = &calculator_conversation(&gsm8k_rows(gsm8k::TRAIN)[0])[..2];
    let prompt = model
        .chat
        .prompt_ids(messages, &[calculator_tool()])
        .unwrap();
    let reloaded = LanguageModel::load(second.path(), &LoadOptions::default()).unwrap();
    let tokens = greedy(&model, &prompt, 12);
    assert_eq!(tokens, greedy(&reloaded, &prompt, 12));
    let reseeded = LanguageModel::load(reseeded.path(), &LoadOptions::default()).unwrap();
    assert_ne!(tokens, greedy(&reseeded, &prompt, 12));
}

/// The loss mask of the embedded template covers exactly each assistant turn's text and its
/// closing `<|im_end|>`.
#[test]
fn the_loss_mask_covers_exactly_the_policy_text() {
    let (_dir, model) = default_model();
    let conversation = calculator_conversation(&gsm8k_rows(gsm8k::TRAIN)[1]);
    let encoded = model
        .chat
        .encode(&conversation, &[calculator_tool()])
        .unwrap();
    let mut turns = Vec::new();
    let mut current = Vec::new();
    for (&id, &bit) in encoded.token_ids.iter().zip(&encoded.loss_mask) {
        if bit == 1 {
            current.push(id);
        } else if !current.is_empty() {
            turns.push(
                model
                    .chat
                    .tokenizer
                    .decode(&std::mem::take(&mut current), false)
                    .unwrap(),
            );
        }
    }
    let assistant: Vec<_> = conversation
        .iter()
        .filter(|message| message.role.as_str() == "assistant")
        .collect();
    assert_eq!(turns.len(), assistant.len());
    for (text, message) in turns.iter().zip(&assistant) {
        assert!(text.starts_with(&message.content), "{text:?}");
        assert!(text.ends_with("<|im_end|>"), "{text:?}");
        assert_eq!(
            text.contains("<tool_call>"),
            !message.tool_calls.is_empty(),
            "{text:?}"
        );
        assert!(
            !text.contains("<|im_start|>") && !text.contains("<tool_response>"),
            "{text:?}"
        );
    }
}

#[test]
fn a_caller_given_corpus_and_shape_build_a_working_model() {
    let spec = EmbeddedSpec {
        hidden_size: 32,
        num_hidden_layers: 1,
        intermediate_size: 48,
        vocab_size: 300,
        seed: 9,
        ..EmbeddedSpec::default()
    };
    let corpus: Vec<String> = (0..200)
        .map(|i| format!("<|im_start|>user\nadd {i} and {}<|im_end|>\n", i * 7))
        .collect();
    let model = embedded::build(&spec, &corpus, &LoadOptions::default()).unwrap();
    assert!(model.chat.tokenizer.vocab_size() <= 300);
    assert_eq!(model.chat.tokenizer.encode("<|im_end|>").unwrap(), vec![2]);
    let prompt = model.chat.tokenizer.encode("add 3 and 21").unwrap();
    assert_eq!(greedy(&model, &prompt, 5).len(), 5);
}

/// Every whole number up to `WHOLE_NUMBER_TOKENS` is one token of the embedded tokenizer, the
/// same token after a space, an operator, a quote or a line break.
#[test]
fn small_whole_numbers_are_single_tokens_wherever_they_stand() {
    let (_dir, model) = default_model();
    let tokenizer = &model.chat.tokenizer;
    for number in 0..=embedded::WHOLE_NUMBER_TOKENS {
        let text = number.to_string();
        let id = tokenizer.encode(&text).unwrap();
        assert_eq!(id.len(), 1, "{number} is {id:?}");
        let contexts = format!("has {text} pens, x+{text}=\"{text}\"\n{text}\n");
        let ids = tokenizer.encode(&contexts).unwrap();
        assert_eq!(
            ids.iter().filter(|&&t| t == id[0]).count(),
            4,
            "{contexts:?}"
        );
    }
}

/// The tokenizer is trained on GSM8K's train split only: no held-out test question is in
/// its corpus.
#[test]
fn the_tokenizer_corpus_holds_no_test_question() {
    let corpus = embedded::default_template_corpus().unwrap().join("\n");
    let test = gsm8k_rows(gsm8k::TEST);
    assert_eq!(test.len(), 1319);
    let seen: Vec<_> = test
        .iter()
        .filter(|row| corpus.contains(row.question.as_str()))
        .collect();
    assert!(
        seen.is_empty(),
        "{} test questions in the corpus",
        seen.len()
    );
    let train = gsm8k_rows(gsm8k::TRAIN);
    assert!(corpus.contains(train[0].question.as_str()));
}

/// `LossOn::PolicyAndUser` adds exactly the user message's text to the policy's tokens:
/// never the system prompt, the headers or the tool results.
#[test]
fn the_user_loss_adds_the_question_and_nothing_else() {
    let (_dir, model) = default_model();
    let conversation = calculator_conversation(&gsm8k_rows(gsm8k::TRAIN)[1]);
    let tools = [calculator_tool()];
    let policy = model.chat.encode(&conversation, &tools).unwrap();
    let both = model
        .chat
        .encode_for(&conversation, &tools, LossOn::PolicyAndUser)
        .unwrap();
    assert_eq!(policy.token_ids, both.token_ids);
    let added: Vec<u32> = both
        .token_ids
        .iter()
        .zip(policy.loss_mask.iter().zip(&both.loss_mask))
        .filter(|&(_, (&before, &after))| before == 0 && after == 1)
        .map(|(&id, _)| id)
        .collect();
    assert!(
        policy
            .loss_mask
            .iter()
            .zip(&both.loss_mask)
            .all(|(&before, &after)| after >= before),
        "the policy's tokens stay in the loss"
    );
    let text = model.chat.tokenizer.decode(&added, false).unwrap();
    let question = &conversation[1].content;
    assert_eq!(text.trim(), question.trim(), "{text:?}");
}
