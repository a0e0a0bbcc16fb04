//! Batching an epoch: length bucketing (batches of similar-length sequences, so little of
//! each padded batch is padding) or random batches (each a random mix of the data, as
//! Hugging Face's Trainer batches unless `group_by_length` is set), in a seeded random order.

use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;

/// How large a batch may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchLimits {
    /// At most this many sequences.
    pub max_sequences: usize,
    /// At most this many token slots, padding included (sequences × longest); a single
    /// sequence longer than this still gets a batch of its own.
    pub max_tokens: usize,
}

/// Batches of indices into `lengths` for one epoch: indices shuffled, stably sorted by
/// length, cut where a batch would exceed `limits`, and the batches shuffled. The same
/// `seed` and `epoch` give the same batches.
pub fn length_batches(
    lengths: &[usize],
    limits: BatchLimits,
    seed: u64,
    epoch: u64,
) -> Vec<Vec<usize>> {
    let (mut rng, mut order) = shuffled(lengths.len(), seed, epoch);
    order.sort_by_key(|&index| lengths[index]);
    let mut batches = cut(&order, lengths, limits);
    batches.shuffle(&mut rng);
    batches
}

/// Batches of indices into `lengths` for one epoch, in a random order: indices shuffled
/// and cut where a batch would exceed `limits`, so each batch mixes every kind of example.
/// The same `seed` and `epoch` give the same batches.
pub fn random_batches(
    lengths: &[usize],
    limits: BatchLimits,
    seed: u64,
    epoch: u64,
) -> Vec<Vec<usize>> {
    let (_, order) = shuffled(lengths.len(), seed, epoch);
    cut(&order, lengths, limits)
}

/// The indices `0..count` in the seeded order of `epoch`, and the generator that drew it.
fn shuffled(count: usize, seed: u64, epoch: u64) -> (StdRng, Vec<usize>) {
    let mut rng = StdRng::seed_from_u64(seed ^ epoch.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut order: Vec<usize> = (0..count).collect();
    order.shuffle(&mut rng);
    (rng, order)
}

/// Micro-batches of one update: indices sorted by length (ties by index) and cut where a
/// micro-batch would pass `max_tokens` token slots; 0 keeps every index in one. The
/// partition depends on the lengths alone, so the sums over it always run in one order.
pub fn micro_batches(lengths: &[usize], max_tokens: usize) -> Vec<Vec<usize>> {
    if max_tokens == 0 {
        return vec![(0..lengths.len()).collect()];
    }
    let mut order: Vec<usize> = (0..lengths.len()).collect();
    order.sort_by_key(|&index| (lengths[index], index));
    let limits = BatchLimits {
        max_sequences: usize::MAX,
        max_tokens,
    };
    cut(&order, lengths, limits)
}

/// `order` cut into consecutive batches within `limits`.
fn cut(order: &[usize], lengths: &[usize], limits: BatchLimits) -> Vec<Vec<usize>> {
    let mut batches: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    let mut longest = 0;
    for &index in order {
        let widest = longest.max(lengths[index]);
        let fits = current.len() < limits.max_sequences.max(1)
            && (current.len() + 1) * widest <= limits.max_tokens;
        if !fits && !current.is_empty() {
            batches.push(std::mem::take(&mut current));
            longest = 0;
        }
        longest = longest.max(lengths[index]);
        current.push(index);
    }
    if !current.is_empty() {
        batches.push(current);
    }
    batches
}

/// Token slots `batches` compute, padding included (each batch: samples × its longest).
pub fn token_slots(lengths: &[usize], batches: &[Vec<usize>]) -> usize {
    batches
        .iter()
        .map(|batch| batch.len() * batch.iter().map(|&i| lengths[i]).max().unwrap_or(0))
        .sum()
}

/// The share of token slots that are padding when `lengths` are batched as `batches`.
pub fn padding_share(lengths: &[usize], batches: &[Vec<usize>]) -> f64 {
    let slots = token_slots(lengths, batches);
    let real: usize = batches.iter().flatten().map(|&i| lengths[i]).sum();
    if slots == 0 {
        0.0
    } else {
        1.0 - real as f64 / slots as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_index_once_within_limits_and_little_padding() {
        let lengths: Vec<usize> = (0..200).map(|i| 20 + (i * 37) % 180).collect();
        let limits = BatchLimits {
            max_sequences: 8,
            max_tokens: 1024,
        };
        let batches = length_batches(&lengths, limits, 7, 0);
        let mut seen: Vec<usize> = batches.iter().flatten().copied().collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..200).collect::<Vec<_>>());
        for batch in &batches {
            let longest = batch.iter().map(|&i| lengths[i]).max().unwrap();
            assert!(
                batch.len() <= 8 && batch.len() * longest <= 1024,
                "{batch:?}"
            );
        }
        let naive: Vec<Vec<usize>> = (0..200)
            .collect::<Vec<_>>()
            .chunks(5)
            .map(<[usize]>::to_vec)
            .collect();
        let bucketed = padding_share(&lengths, &batches);
        assert!(bucketed < 0.05, "{bucketed}");
        assert!(padding_share(&lengths, &naive) > 0.3);
        assert_eq!(batches, length_batches(&lengths, limits, 7, 0));
        assert_ne!(batches, length_batches(&lengths, limits, 7, 1));
    }

    #[test]
    fn random_batches_take_every_index_once_and_mix_lengths() {
        let lengths: Vec<usize> = (0..200).map(|i| if i < 100 { 20 } else { 90 }).collect();
        let limits = BatchLimits {
            max_sequences: 10,
            max_tokens: 1000,
        };
        let batches = random_batches(&lengths, limits, 7, 0);
        let mut seen: Vec<usize> = batches.iter().flatten().copied().collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..200).collect::<Vec<_>>());
        let mixed = batches
            .iter()
            .filter(|batch| batch.iter().any(|&i| i < 100) && batch.iter().any(|&i| i >= 100))
            .count();
        assert!(mixed * 2 > batches.len(), "{mixed} of {}", batches.len());
        assert!(batches.iter().all(|batch| batch.len() <= 10));
        assert_eq!(batches, random_batches(&lengths, limits, 7, 0));
        assert_ne!(batches, random_batches(&lengths, limits, 7, 1));
    }

    #[test]
    fn micro_batches_follow_length_alone() {
        let lengths = [30, 10, 20, 10, 40];
        assert_eq!(micro_batches(&lengths, 0), vec![vec![0, 1, 2, 3, 4]]);
        assert_eq!(
            micro_batches(&lengths, 40),
            vec![vec![1, 3], vec![2], vec![0], vec![4]]
        );
        assert_eq!(
            micro_batches(&lengths, 60),
            vec![vec![1, 3, 2], vec![0], vec![4]]
        );
    }

    #[test]
    fn an_overlong_sequence_gets_its_own_batch() {
        let batches = length_batches(
            &[10, 5000, 12],
            BatchLimits {
                max_sequences: 4,
                max_tokens: 100,
            },
            0,
            0,
        );
        assert!(batches.contains(&vec![1]));
        assert_eq!(batches.iter().map(Vec::len).sum::<usize>(), 3);
    }
}
