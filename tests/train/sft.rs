//! SFT on scripted calculator conversations: the loss falls and greedy decoding reproduces
//! a trained conversation, turn by turn.

use crate::common::{calculator_examples, embedded_model};
use rollscope::model::{LanguageModel, SamplingParams};
use rollscope::train::schedule::LrSchedule;
use rollscope::train::{BatchLimits, SftExample, Trainer, TrainerConfig, length_batches};

/// Greedy tokens after each prefix that precedes a span of policy tokens, compared with the
/// span: the number of spans reproduced exactly, out of all.
fn reproduced_turns(model: &LanguageModel, example: &SftExample) -> (usize, usize) {
    let mut spans = Vec::new();
    let mut start = None;
    for (index, &bit) in example.loss_mask.iter().enumerate() {
        match (bit != 0, start) {
            (true, None) => start = Some(index),
            (false, Some(begin)) => {
                spans.push(begin..index);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(begin) = start {
        spans.push(begin..example.len());
    }
    let mut exact = 0;
    for span in &spans {
        let mut decoder = model.decoder();
        let id = decoder
            .add_sequence(&example.token_ids[..span.start], SamplingParams::greedy())
            .unwrap();
        let generated: Vec<u32> = span
            .clone()
            .map(|_| decoder.step(&[id]).unwrap()[0].token)
            .collect();
        if generated == example.token_ids[span.clone()] {
            exact += 1;
        }
    }
    (exact, spans.len())
}

#[test]
fn sft_learns_scripted_calculator_conversations() {
    let dir = tempfile::tempdir().unwrap();
    let model = embedded_model(dir.path());
    let examples = calculator_examples(&model, 4);
    let (steps, learning_rate) = (80, 1e-2);
    let mut trainer = Trainer::new(
        model,
        TrainerConfig {
            learning_rate,
            schedule: LrSchedule::warmup_then_decay(steps),
            max_grad_norm: 1.0,
            seed: 3,
            ..TrainerConfig::default()
        },
    )
    .unwrap();
    let all: Vec<&SftExample> = examples.iter().collect();
    let before = trainer.sft_loss(&all).unwrap();
    let (exact_before, spans) = reproduced_turns(trainer.model(), &examples[0]);
    assert_eq!(exact_before, 0, "an untrained model reproduces nothing");
    let lengths: Vec<usize> = examples.iter().map(SftExample::len).collect();
    let limits = BatchLimits {
        max_sequences: 4,
        max_tokens: 4096,
    };
    let mut epoch = 0;
    let mut rates = Vec::new();
    while trainer.steps() < steps {
        for batch in length_batches(&lengths, limits, trainer.config().seed, epoch) {
            if trainer.steps() == steps {
                break;
            }
            let rows: Vec<&SftExample> = batch.iter().map(|&i| &examples[i]).collect();
            let figures = trainer.sft_step(&rows, 0).unwrap();
            assert!(figures.loss.is_finite() && figures.grad_norm > 0.0);
            rates.push(figures.learning_rate);
        }
        epoch += 1;
    }
    let after = trainer.sft_loss(&all).unwrap();
    eprintln!(
        "SFT: loss {:.3} → {:.3}, token accuracy {:.3} → {:.3}",
        before.loss, after.loss, before.token_accuracy, after.token_accuracy
    );
    assert!(after.loss < 0.1 * before.loss, "{before:?} → {after:?}");
    let peak = rates.iter().copied().fold(0.0, f64::max);
    assert_eq!(peak, learning_rate);
    assert!(
        rates[0] < peak && *rates.last().unwrap() < 0.1 * peak,
        "{rates:?}"
    );
    let (exact, spans_after) = reproduced_turns(trainer.model(), &examples[0]);
    assert_eq!(spans_after, spans);
    assert_eq!(exact, spans, "every assistant turn is reproduced greedily");
}
