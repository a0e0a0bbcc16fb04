//! Copy drills: a user message of random whole numbers answered by the same numbers in the
//! same order. A calculator demonstration copies two or three numbers, so its loss rewards the
//! attention that copies a token from earlier in the context only faintly; a drill copies up
//! to a dozen numbers no rule can predict, so that attention forms early and on every seed
//! (README, "Learning on the embedded default", measures it). The cold start mixes drills
//! into its demonstrations (`[sft] copy_drills`).

use crate::agent::tasks::SplitMix64;
use crate::model::embedded::WHOLE_NUMBER_TOKENS;
use crate::trajectory::Message;

/// Fewest numbers in a drill.
const MIN_NUMBERS: u64 = 4;
/// Most numbers in a drill.
const MAX_NUMBERS: u64 = 12;
/// The random stream drills draw from, apart from the streams that order and style the demos.
const DRILL_STREAM: u64 = 0xd1;

/// Drill `index` under `seed`: the system message (if any), a user message asking for a list
/// of whole numbers (each a single token of the embedded tokenizer) to be repeated, and the
/// assistant's reply that repeats them.
pub fn copy_drill(system: Option<&Message>, seed: u64, index: u64) -> Vec<Message> {
    let mut rng = SplitMix64::for_item(seed, DRILL_STREAM, index);
    let count = rng.range(MIN_NUMBERS, MAX_NUMBERS);
    let numbers: Vec<String> = (0..count)
        .map(|_| rng.range(0, u64::from(WHOLE_NUMBER_TOKENS)).to_string())
        .collect();
    let list = numbers.join(" ");
    let mut messages: Vec<Message> = system.cloned().into_iter().collect();
    messages.push(Message::user(format!("Repeat these numbers: {list}")));
    messages.push(Message::assistant(list));
    messages
}

/// How many drills go with `demonstrations` demonstrations at `per_demonstration` drills each
/// (rounded to the nearest whole drill).
pub fn drill_count(demonstrations: usize, per_demonstration: f64) -> usize {
    (demonstrations as f64 * per_demonstration).round() as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::Role;

    #[test]
    fn a_drill_repeats_its_numbers_in_order() {
        let system = Message::system("be brief");
        for index in 0..50 {
            let messages = copy_drill(Some(&system), 3, index);
            assert_eq!(messages.len(), 3);
            assert_eq!(messages[0].role, Role::System);
            let asked = messages[1]
                .content
                .strip_prefix("Repeat these numbers: ")
                .expect("the drill's question");
            assert_eq!(messages[2].role, Role::Assistant);
            assert_eq!(messages[2].content, asked);
            let numbers: Vec<u64> = asked.split(' ').map(|n| n.parse().unwrap()).collect();
            assert!((MIN_NUMBERS..=MAX_NUMBERS).contains(&(numbers.len() as u64)));
            assert!(numbers.iter().all(|&n| n <= u64::from(WHOLE_NUMBER_TOKENS)));
        }
    }

    #[test]
    fn drills_differ_by_index_and_seed_and_repeat_for_the_same_ones() {
        let first = copy_drill(None, 1, 0);
        assert_eq!(first, copy_drill(None, 1, 0));
        assert_ne!(first[1].content, copy_drill(None, 1, 1)[1].content);
        assert_ne!(first[1].content, copy_drill(None, 2, 0)[1].content);
    }

    #[test]
    fn the_count_follows_the_rate() {
        assert_eq!(drill_count(3200, 0.0), 0);
        assert_eq!(drill_count(3200, 0.25), 800);
        assert_eq!(drill_count(3, 0.5), 2);
    }
}
