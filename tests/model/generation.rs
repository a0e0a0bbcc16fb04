//! Generation: ragged batches equal single sequences, paused sequences block nobody, sampled
//! log-probs follow the training convention, stops and forks behave, a repeated prompt is
//! prefilled once.

use crate::common::{fixture_dir, ids, load_fixture, reference, tiny_config, tiny_qwen};
use candle_core::{DType, IndexOp};
use rollscope::model::{
    ChatTokenizer, Decoder, FinishReason, GenerateParams, Generation, LanguageModel, ModelError,
    Network, Padding, SamplingParams, StopCondition, TokenBatch, generate, next_token_stats,
};

fn prompts() -> Vec<Vec<u32>> {
    let input = ids(&reference("tiny-qwen2")["input_ids"]);
    vec![
        input[..5].to_vec(),
        input[40..62].to_vec(),
        input[100..113].to_vec(),
    ]
}

fn params(sampling: SamplingParams, max_new_tokens: usize) -> GenerateParams {
    GenerateParams {
        sampling,
        max_new_tokens,
        stop: StopCondition::default(),
    }
}

fn run(model: &LanguageModel, prompts: &[Vec<u32>], params: &GenerateParams) -> Vec<Generation> {
    generate(
        &mut model.decoder(),
        &model.chat.tokenizer,
        prompts,
        params,
        &mut |_| {},
    )
    .unwrap()
}

fn assert_same(a: &Generation, b: &Generation, label: &str) {
    assert_eq!(a.tokens, b.tokens, "{label}: tokens");
    let worst = a
        .logprobs
        .iter()
        .zip(&b.logprobs)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0f32, f32::max);
    assert!(worst < 1e-5, "{label}: log-probs differ by {worst}");
}

#[test]
fn a_ragged_batch_generates_what_each_sequence_generates_alone() {
    let model = load_fixture("tiny-qwen2");
    for sampling in [
        SamplingParams::greedy(),
        SamplingParams {
            top_k: 50,
            top_p: 0.9,
            ..SamplingParams::sample(1.0, 40)
        },
    ] {
        let together = run(&model, &prompts(), &params(sampling.clone(), 20));
        for (index, prompt) in prompts().iter().enumerate() {
            let alone_params = params(sampling.with_seed(sampling.seed + index as u64), 20);
            let alone = run(&model, std::slice::from_ref(prompt), &alone_params);
            assert_same(
                &together[index],
                &alone[0],
                &format!("{sampling:?} prompt {index}"),
            );
            assert_eq!(together[index].tokens.len(), 20);
        }
    }
}

#[test]
fn a_paused_sequence_blocks_nobody_and_resumes_exactly() {
    let model = load_fixture("tiny-qwen2");
    let [a, b, observation] = [
        prompts()[0].clone(),
        prompts()[1].clone(),
        prompts()[2].clone(),
    ];
    let sampling = SamplingParams::sample(0.8, 3);
    let mut decoder = model.decoder();
    let first = decoder.add_sequence(&a, sampling.clone()).unwrap();
    let second = decoder.add_sequence(&b, sampling.with_seed(4)).unwrap();
    for _ in 0..3 {
        decoder.step(&[first, second]).unwrap();
    }
    for _ in 0..5 {
        decoder.step(&[second]).unwrap();
    }
    decoder.append(first, &observation).unwrap();
    for _ in 0..4 {
        decoder.step(&[second, first]).unwrap();
    }

    let mut alone = model.decoder();
    let only_first = alone.add_sequence(&a, sampling.clone()).unwrap();
    for _ in 0..3 {
        alone.step(&[only_first]).unwrap();
    }
    alone.append(only_first, &observation).unwrap();
    for _ in 0..4 {
        alone.step(&[only_first]).unwrap();
    }
    assert_eq!(
        decoder.tokens(first).unwrap(),
        alone.tokens(only_first).unwrap()
    );
    let only_second = alone.add_sequence(&b, sampling.with_seed(4)).unwrap();
    for _ in 0..12 {
        alone.step(&[only_second]).unwrap();
    }
    assert_eq!(
        decoder.tokens(second).unwrap(),
        alone.tokens(only_second).unwrap()
    );
    assert_eq!(
        decoder.tokens(first).unwrap().len(),
        a.len() + 3 + observation.len() + 4
    );
}

/// The log-prob recorded at sampling time is what the training forward gives the same token
/// at the same temperature.
#[test]
fn sampled_log_probs_and_entropies_follow_the_training_convention() {
    let model = load_fixture("tiny-qwen3");
    let prompt = prompts()[1].clone();
    let sampling = SamplingParams::sample(0.7, 12);
    let output = &run(
        &model,
        std::slice::from_ref(&prompt),
        &params(sampling.clone(), 16),
    )[0];
    let mut all = prompt.clone();
    all.extend(&output.tokens);
    let batch = TokenBatch::pad(&[all], Padding::Right, 0, model.device()).unwrap();
    let stats = next_token_stats(
        model.qwen().unwrap(),
        &batch,
        sampling.logprob_temperature(),
    )
    .unwrap();
    let start = prompt.len() - 1;
    let logprobs: Vec<f32> = stats
        .log_probs
        .i((0, start..start + 16))
        .unwrap()
        .to_vec1()
        .unwrap();
    let entropies: Vec<f32> = stats
        .entropy
        .i((0, start..start + 16))
        .unwrap()
        .to_vec1()
        .unwrap();
    for t in 0..16 {
        assert!(
            (logprobs[t] - output.logprobs[t]).abs() < 1e-5,
            "log-prob {t}: {} vs {}",
            logprobs[t],
            output.logprobs[t]
        );
        assert!(
            (entropies[t] - output.entropies[t]).abs() < 1e-5,
            "entropy {t}"
        );
    }
}

#[test]
fn stop_tokens_and_stop_strings_end_generation() {
    let model = load_fixture("tiny-qwen2");
    let reference = reference("tiny-qwen2");
    let prompt = ids(&reference["greedy_prompt_ids"]);
    let greedy = ids(&reference["greedy_continuation"]);
    let stop_token = greedy[3];
    let mut with_token = params(SamplingParams::greedy(), 24);
    with_token.stop.token_ids = vec![stop_token];
    let output = &run(&model, std::slice::from_ref(&prompt), &with_token)[0];
    let first = greedy.iter().position(|&id| id == stop_token).unwrap();
    assert_eq!(output.tokens, greedy[..=first].to_vec());
    assert_eq!(output.finish, FinishReason::StopToken(stop_token));

    let text = model.chat.tokenizer.decode(&greedy[..6], false).unwrap();
    let stop: String = text
        .chars()
        .rev()
        .take(3)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let mut with_string = params(SamplingParams::greedy(), 24);
    with_string.stop.strings = vec![stop.clone()];
    let output = &run(&model, std::slice::from_ref(&prompt), &with_string)[0];
    assert_eq!(output.finish, FinishReason::StopString(stop.clone()));
    assert!(
        model
            .chat
            .tokenizer
            .decode(&output.tokens, false)
            .unwrap()
            .contains(&stop)
    );
    assert!(output.tokens.len() <= 6);
}

#[test]
fn forks_share_the_prefill_and_sample_independently() {
    let model = load_fixture("tiny-qwen2");
    let prompt = prompts()[2].clone();
    let mut decoder = model.decoder();
    let parent = decoder
        .add_sequence(&prompt, SamplingParams::greedy())
        .unwrap();
    decoder.prefill(&[parent]).unwrap();
    let children: Vec<_> = (0..3)
        .map(|seed| {
            decoder
                .fork(parent, SamplingParams::sample(1.0, seed))
                .unwrap()
        })
        .collect();
    for _ in 0..10 {
        decoder.step(&children).unwrap();
    }
    for (seed, &child) in children.iter().enumerate() {
        let alone = run(
            &model,
            std::slice::from_ref(&prompt),
            &params(SamplingParams::sample(1.0, seed as u64), 10),
        );
        assert_eq!(
            &decoder.tokens(child).unwrap()[prompt.len()..],
            alone[0].tokens.as_slice()
        );
    }
    assert_eq!(decoder.tokens(parent).unwrap(), prompt.as_slice());
}

#[test]
fn a_repeated_prompt_is_prefilled_once_and_samples_what_it_samples_alone() {
    let model = load_fixture("tiny-qwen2");
    let prompts = prompts();
    let mut decoder = model.sharing_decoder();
    let mut plain = model.decoder();
    let mut pairs = Vec::new();
    for (index, prompt) in [&prompts[2], &prompts[1], &prompts[2], &prompts[2]]
        .into_iter()
        .enumerate()
    {
        let sampling = SamplingParams::sample(1.0, index as u64);
        let shared = decoder.add_sequence(prompt, sampling.clone()).unwrap();
        pairs.push((shared, plain.add_sequence(prompt, sampling).unwrap()));
    }
    assert_eq!(
        decoder.prefix_hits(),
        2,
        "the third and fourth copy the first"
    );
    assert_eq!(plain.prefix_hits(), 0);
    let (shared, separate): (Vec<_>, Vec<_>) = pairs.iter().copied().unzip();
    for _ in 0..10 {
        let a = decoder.step(&shared).unwrap();
        let b = plain.step(&separate).unwrap();
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(
                (x.token, x.logprob.to_bits()),
                (y.token, y.logprob.to_bits())
            );
        }
    }
    for (a, b) in pairs {
        assert_eq!(decoder.tokens(a).unwrap(), plain.tokens(b).unwrap());
    }
}

#[test]
fn a_full_context_stops_generation_and_refuses_longer_prompts() {
    let config = tiny_config("Qwen2ForCausalLM", 16);
    let (model, _) = tiny_qwen(&config, DType::F32, 2);
    let tokenizer =
        ChatTokenizer::from_file(&fixture_dir("tiny-qwen2").join("tokenizer.json")).unwrap();
    let mut decoder = Decoder::new(&Network::Qwen(model), 16);
    let prompt: Vec<u32> = (1..11).collect();
    let output = generate(
        &mut decoder,
        &tokenizer,
        &[prompt],
        &params(SamplingParams::greedy(), 50),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(output[0].finish, FinishReason::ContextFull);
    assert_eq!(output[0].tokens.len(), 6);
    let error = decoder
        .add_sequence(&(0..17).collect::<Vec<u32>>(), SamplingParams::greedy())
        .unwrap_err();
    assert!(
        matches!(
            error,
            ModelError::ContextFull {
                tokens: 17,
                limit: 16
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("max_position_embeddings"));
}

/// Greedy decoding by full recompute over a left-padded batch (the last column of every row)
/// gives the cached decoder's tokens and log-probs.
#[test]
fn a_left_padded_batch_recomputed_in_full_decodes_like_the_cache() {
    let model = load_fixture("tiny-qwen3");
    let qwen = model.qwen().unwrap();
    let cached = run(&model, &prompts(), &params(SamplingParams::greedy(), 8));
    let mut sequences = prompts();
    for step in 0..8 {
        let batch = TokenBatch::pad(&sequences, Padding::Left, 0, model.device()).unwrap();
        let last = batch.seq_len() - 1;
        let logits = qwen.forward(&batch).unwrap().i((.., last)).unwrap();
        let logprobs = rollscope::model::token_log_probs(
            &logits,
            &logits
                .argmax_keepdim(candle_core::D::Minus1)
                .unwrap()
                .squeeze(1)
                .unwrap(),
            1.0,
        )
        .unwrap();
        let tokens: Vec<u32> = logits
            .argmax(candle_core::D::Minus1)
            .unwrap()
            .to_vec1()
            .unwrap();
        let logprobs: Vec<f32> = logprobs.to_vec1().unwrap();
        for (row, sequence) in sequences.iter_mut().enumerate() {
            assert_eq!(
                tokens[row], cached[row].tokens[step],
                "row {row}, step {step}"
            );
            let gap = (logprobs[row] - cached[row].logprobs[step]).abs();
            assert!(
                gap < 1e-5,
                "row {row}, step {step}: log-probs differ by {gap}"
            );
            sequence.push(tokens[row]);
        }
    }
}
