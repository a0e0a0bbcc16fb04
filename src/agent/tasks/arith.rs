//! Procedural arithmetic word problems with exact answers and GSM8K-style annotated
//! solutions (`<<a*b=c>>`), at five difficulty levels. Deterministic: the same seed, level
//! and index always give the same problem.
//!
//! | level | numbers | steps | distractor sentences | operations |
//! |---|---|---|---|---|
//! | 1 | 2–20 | 1 | 0 | + − |
//! | 2 | 2–99 | 2 | 0 | + − ×, packs of k |
//! | 3 | 10–999 | 3 | 1 | and equal shares ÷ |
//! | 4 | 100–9,999 | 4 | 1 | and percentages |
//! | 5 | 1,000–99,999 | 5 | 2 | all |
//!
//! A level may take extra distractor sentences (`arith:1+1`: level 1 with one more), which
//! make problems whose numbers must be told apart, not just copied in order.

use super::generated_id;
use super::rng::SplitMix64;
use crate::trajectory::Task;

/// The highest difficulty level.
pub const MAX_LEVEL: u32 = 5;

const NAMES: [&str; 16] = [
    "Maya", "Omar", "Lena", "Tariq", "Sofia", "Ken", "Amara", "Luis", "Ines", "Bram", "Noor",
    "Felix", "Hana", "Diego", "Zoe", "Ravi",
];
const ITEMS: [&str; 12] = [
    "marbles",
    "stickers",
    "apples",
    "stamps",
    "seashells",
    "pencils",
    "coins",
    "cookies",
    "beads",
    "cards",
    "books",
    "plants",
];
const FRIENDS: [&str; 6] = [
    "a friend",
    "a cousin",
    "a neighbour",
    "a classmate",
    "a sister",
    "a brother",
];

/// What a level asks for.
struct Level {
    low: u64,
    high: u64,
    steps: usize,
    distractors: usize,
}

fn level(level: u32) -> Level {
    let (low, high, steps, distractors) = match level.clamp(1, MAX_LEVEL) {
        1 => (2, 20, 1, 0),
        2 => (2, 99, 2, 0),
        3 => (10, 999, 3, 1),
        4 => (100, 9_999, 4, 1),
        _ => (1_000, 99_999, 5, 2),
    };
    Level {
        low,
        high,
        steps,
        distractors,
    }
}

/// A problem being written: the story, the solution and the running total.
struct Story {
    rng: SplitMix64,
    name: &'static str,
    items: &'static str,
    total: u64,
    sentences: Vec<String>,
    solution: Vec<String>,
}

impl Story {
    fn add(&mut self, amount: u64) {
        let (t, r) = (self.total, self.total + amount);
        self.sentences.push(format!(
            "Then {} gets {amount} more {}.",
            self.name, self.items
        ));
        self.solution.push(format!(
            "{} then has {t}+{amount} = <<{t}+{amount}={r}>>{r} {}.",
            self.name, self.items
        ));
        self.total = r;
    }

    fn give_away(&mut self, amount: u64) {
        let (t, r) = (self.total, self.total - amount);
        let friend = *self.rng.pick(&FRIENDS);
        self.sentences.push(format!(
            "{} gives {amount} {} to {friend}.",
            self.name, self.items
        ));
        self.solution.push(format!(
            "After giving {amount} away, {} has {t}-{amount} = <<{t}-{amount}={r}>>{r} {}.",
            self.name, self.items
        ));
        self.total = r;
    }

    fn multiply(&mut self, factor: u64) {
        let (t, r) = (self.total, self.total * factor);
        self.sentences.push(format!(
            "A trade leaves {} with {factor} times as many {} as before.",
            self.name, self.items
        ));
        self.solution.push(format!(
            "{factor} times as many is {t}*{factor} = <<{t}*{factor}={r}>>{r} {}.",
            self.items
        ));
        self.total = r;
    }

    fn packs(&mut self, count: u64, size: u64) {
        let (t, g) = (self.total, count * size);
        let r = t + g;
        self.sentences.push(format!(
            "{} buys {count} packs with {size} {} in each.",
            self.name, self.items
        ));
        self.solution.push(format!(
            "The packs hold {count}*{size} = <<{count}*{size}={g}>>{g} {}, so {} has {t}+{g} = <<{t}+{g}={r}>>{r}.",
            self.items, self.name
        ));
        self.total = r;
    }

    fn share(&mut self, parts: u64) {
        let (t, r) = (self.total, self.total / parts);
        self.sentences.push(format!(
            "{} splits them into {parts} equal groups and keeps one group.",
            self.name
        ));
        self.solution.push(format!(
            "One group of {parts} is {t}/{parts} = <<{t}/{parts}={r}>>{r} {}.",
            self.items
        ));
        self.total = r;
    }

    fn sell_percent(&mut self, percent: u64) {
        let t = self.total;
        let sold = t * percent / 100;
        let r = t - sold;
        self.sentences
            .push(format!("{} sells {percent}% of them.", self.name));
        self.solution.push(format!(
            "{percent}% of {t} is {t}*{percent}/100 = <<{t}*{percent}/100={sold}>>{sold}, so {t}-{sold} = <<{t}-{sold}={r}>>{r} are left."
        ));
        self.total = r;
    }

    fn distractor(&mut self, spec: &Level) {
        let number = self.rng.range(spec.low, spec.high);
        let other = *self.rng.pick(&ITEMS);
        let sentence = match self.rng.range(0, 2) {
            0 => format!(
                "{} also owns {number} {other}.",
                capitalise(self.rng.pick::<&str>(&FRIENDS))
            ),
            1 => format!("The shop is {number} metres from {}'s home.", self.name),
            _ => format!("Last year {} had {number} {other}.", self.name),
        };
        let at = self.rng.range(1, self.sentences.len() as u64) as usize;
        self.sentences.insert(at, sentence);
    }

    /// One step, chosen among the operations the level allows and the total permits.
    fn step(&mut self, level_number: u32, spec: &Level) {
        let operations = match level_number {
            1 => 2,
            2 => 4,
            3 => 5,
            _ => 6,
        };
        let small = spec.high.min(99);
        match self.rng.range(0, operations - 1) {
            1 if self.total > 1 => {
                let amount = self.rng.range(1, self.total - 1);
                self.give_away(amount);
            }
            2 if self.total < 1_000_000 => {
                let factor = self.rng.range(2, 5);
                self.multiply(factor);
            }
            3 => {
                let count = self.rng.range(2, 9);
                let size = self.rng.range(2, small);
                self.packs(count, size);
            }
            4 if (2..=9).any(|parts| self.total.is_multiple_of(parts) && self.total > parts) => {
                let choices: Vec<u64> = (2..=9)
                    .filter(|parts| self.total.is_multiple_of(*parts) && self.total > *parts)
                    .collect();
                let parts = *self.rng.pick(&choices);
                self.share(parts);
            }
            5 if [10, 20, 25, 50]
                .iter()
                .any(|p| (self.total * p).is_multiple_of(100)) =>
            {
                let choices: Vec<u64> = [10, 20, 25, 50]
                    .into_iter()
                    .filter(|p| (self.total * p).is_multiple_of(100))
                    .collect();
                let percent = *self.rng.pick(&choices);
                self.sell_percent(percent);
            }
            _ => {
                let amount = self.rng.range(spec.low, spec.high);
                self.add(amount);
            }
        }
    }
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// The most extra distractor sentences a level takes.
pub const MAX_EXTRA_DISTRACTORS: u32 = 3;

/// Problem `index` of difficulty `level_number` (1–5) under `seed`.
pub fn generate(seed: u64, level_number: u32, index: u64) -> Task {
    generate_with_distractors(seed, level_number, 0, index)
}

/// Problem `index` of difficulty `level_number` (1–5) with `extra` more distractor sentences
/// than the level has (at most `MAX_EXTRA_DISTRACTORS`) under `seed`; with `extra` 0 the
/// problem of `generate`, otherwise a problem of its own.
pub fn generate_with_distractors(seed: u64, level_number: u32, extra: u32, index: u64) -> Task {
    let level_number = level_number.clamp(1, MAX_LEVEL);
    let extra = extra.min(MAX_EXTRA_DISTRACTORS);
    let spec = level(level_number);
    let stream = u64::from(level_number) | u64::from(extra) << 8;
    let mut rng = SplitMix64::for_item(seed, stream, index);
    let name = *rng.pick(&NAMES);
    let items = *rng.pick(&ITEMS);
    let start = rng.range(spec.low, spec.high);
    let mut story = Story {
        rng,
        name,
        items,
        total: start,
        sentences: vec![format!("{name} has {start} {items}.")],
        solution: Vec::new(),
    };
    for _ in 0..spec.steps {
        story.step(level_number, &spec);
    }
    for _ in 0..spec.distractors + extra as usize {
        story.distractor(&spec);
    }
    let answer = story.total;
    let question = format!(
        "{} How many {items} does {name} have now?",
        story.sentences.join(" ")
    );
    let extra_part = if extra == 0 {
        String::new()
    } else {
        format!("+{extra}")
    };
    let mut task = Task::new(
        generated_id(
            "arith",
            seed,
            &format!("{level_number}{extra_part}-{index:05}"),
        ),
        "arith",
        question,
    );
    task.ground_truth = Some(answer.to_string());
    task.reference_solution = Some(format!("{}\n#### {answer}", story.solution.join("\n")));
    task.difficulty = Some(level_number);
    task
}
