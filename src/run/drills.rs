//! Copy drills: a user message of random whole numbers among filler words, answered by the
//! numbers alone in the same order. A calculator demonstration copies two or three numbers,
//! so its loss rewards the attention that finds the question's numbers in order only
//! faintly; a drill copies up to a dozen numbers no rule can predict, past words as a
//! question has them (`docs/TRAINING.md`, "The recipe: what was measured", measures it). The cold
//! start mixes drills into its demonstrations (`[sft] copy_drills`).

use crate::agent::tasks::SplitMix64;
use crate::model::embedded::WHOLE_NUMBER_TOKENS;
use crate::trajectory::Message;

/// Fewest numbers in a drill.
const MIN_NUMBERS: u64 = 4;
/// Most numbers in a drill.
const MAX_NUMBERS: u64 = 12;
/// Most filler words before a number.
const MAX_FILLER: u64 = 3;
/// The random stream drills draw from, apart from the streams that order and style the demos.
const DRILL_STREAM: u64 = 0xd1;
/// The largest number of a focused draw (`sft.drill_focus`): level-1 problems' operands (2–20)
/// and results (up to 40).
const FOCUS_MAX: u64 = 40;
/// Words a drill puts between its numbers, as a word problem has them.
const FILLER: [&str; 16] = [
    "has", "gets", "more", "then", "gives", "and", "the", "of", "each", "left", "to", "a",
    "friend", "now", "buys", "after",
];

/// Drill `index` under `seed`: the system message (if any), a user message asking for the
/// whole numbers (each a single token of the embedded tokenizer) of a text of numbers and
/// filler words, and the assistant's reply that lists them in order. A share `focus` of the
/// numbers is drawn from 0–40 (none with `focus` 0, and then no random draw is spent on it,
/// so drills stay what they were).
pub fn copy_drill(system: Option<&Message>, seed: u64, index: u64, focus: f64) -> Vec<Message> {
    let mut rng = SplitMix64::for_item(seed, DRILL_STREAM, index);
    let count = rng.range(MIN_NUMBERS, MAX_NUMBERS);
    let mut text = Vec::new();
    let mut numbers = Vec::new();
    for _ in 0..count {
        for _ in 0..rng.range(0, MAX_FILLER) {
            text.push(rng.pick(&FILLER).to_string());
        }
        let focused = focus > 0.0 && (rng.next_u64() as f64 / u64::MAX as f64) < focus;
        let high = match focused {
            true => FOCUS_MAX,
            false => u64::from(WHOLE_NUMBER_TOKENS),
        };
        let number = rng.range(0, high).to_string();
        text.push(number.clone());
        numbers.push(number);
    }
    let mut messages: Vec<Message> = system.cloned().into_iter().collect();
    messages.push(Message::user(format!(
        "List the numbers in order: {}",
        text.join(" ")
    )));
    messages.push(Message::assistant(numbers.join(" ")));
    messages
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::Role;

    #[test]
    fn a_drill_lists_its_numbers_in_order() {
        let system = Message::system("be brief");
        let mut with_filler = 0;
        for index in 0..50 {
            let messages = copy_drill(Some(&system), 3, index, 0.0);
            assert_eq!(messages.len(), 3);
            assert_eq!(messages[0].role, Role::System);
            let text = messages[1]
                .content
                .strip_prefix("List the numbers in order: ")
                .expect("the drill's question");
            let in_text: Vec<&str> = text
                .split(' ')
                .filter(|word| word.parse::<u64>().is_ok())
                .collect();
            with_filler += usize::from(in_text.len() < text.split(' ').count());
            assert_eq!(messages[2].role, Role::Assistant);
            assert_eq!(messages[2].content, in_text.join(" "));
            let numbers: Vec<u64> = in_text.iter().map(|n| n.parse().unwrap()).collect();
            assert!((MIN_NUMBERS..=MAX_NUMBERS).contains(&(numbers.len() as u64)));
            assert!(numbers.iter().all(|&n| n <= u64::from(WHOLE_NUMBER_TOKENS)));
        }
        assert!(
            with_filler > 40,
            "{with_filler} of 50 drills have filler words"
        );
    }

    #[test]
    fn drills_differ_by_index_and_seed_and_repeat_for_the_same_ones() {
        let first = copy_drill(None, 1, 0, 0.0);
        assert_eq!(first, copy_drill(None, 1, 0, 0.0));
        assert_ne!(first[1].content, copy_drill(None, 1, 1, 0.0)[1].content);
        assert_ne!(first[1].content, copy_drill(None, 2, 0, 0.0)[1].content);
    }

    /// The numbers of drills 0..200 under seed 5 with `focus`.
    fn drill_numbers(focus: f64) -> Vec<u64> {
        (0..200)
            .flat_map(|index| {
                let reply = copy_drill(None, 5, index, focus)[1].content.clone();
                reply
                    .split(' ')
                    .filter_map(|word| word.parse::<u64>().ok())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn a_focused_share_of_numbers_comes_from_the_small_ones() {
        let small_share = |numbers: &[u64]| {
            numbers.iter().filter(|&&n| n <= FOCUS_MAX).count() as f64 / numbers.len() as f64
        };
        let uniform = small_share(&drill_numbers(0.0));
        let focused = small_share(&drill_numbers(0.5));
        let expected_uniform = (FOCUS_MAX + 1) as f64 / f64::from(WHOLE_NUMBER_TOKENS + 1);
        assert!((uniform - expected_uniform).abs() < 0.05, "{uniform}");
        let expected = 0.5 + 0.5 * expected_uniform;
        assert!(
            (focused - expected).abs() < 0.05,
            "{focused} against {expected}"
        );
    }
}
