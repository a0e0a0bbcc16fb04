//! Temperature problems whose answers may be below zero: a reading above zero, then a fall,
//! with a GSM8K-style annotated solution (`<<4-9=-5>>`). The arithmetic set never goes below
//! zero; the badcase loop replays these demonstrations beside its level-1 ones
//! (`docs/TRAINING.md` measures what they change). Deterministic: the same
//! seed and index always give the same problem.

use super::generated_id;
use super::rng::SplitMix64;
use crate::trajectory::Task;

/// The random stream temperature problems draw from, apart from the arithmetic levels'.
const WEATHER_STREAM: u64 = 0x5745;
/// The largest reading or change, in degrees.
const MOST_DEGREES: u64 = 20;

const CITIES: [&str; 12] = [
    "Oslo", "Quito", "Perth", "Lagos", "Hanoi", "Lima", "Riga", "Tunis", "Omsk", "Cusco", "Split",
    "Fargo",
];
/// When a problem's two readings are taken: the first, then the second as the story and
/// the question name it.
const TIMES: [(&str, &str, &str); 4] = [
    ("At noon", "By midnight", "at midnight"),
    ("At dawn", "By noon", "at noon"),
    ("At 6 am", "By 6 pm", "at 6 pm"),
    ("On Monday", "By Tuesday", "on Tuesday"),
];

/// Problem `index` under `seed`: a reading above zero, then a fall; the answer is below zero
/// a little under half the time.
pub fn generate(seed: u64, index: u64) -> Task {
    let mut rng = SplitMix64::for_item(seed, WEATHER_STREAM, index);
    let city = *rng.pick(&CITIES);
    let (first, second, asked) = *rng.pick(&TIMES);
    let start = rng.range(2, MOST_DEGREES) as i64;
    let fall = rng.range(2, MOST_DEGREES) as i64;
    let result = start - fall;
    let question = format!(
        "{first} it is {start} degrees in {city}. {second} it is {fall} degrees colder. What is the temperature in {city} {asked}, in degrees?"
    );
    let mut task = Task::new(
        generated_id("weather", seed, &format!("{index:05}")),
        "weather",
        question,
    );
    task.ground_truth = Some(result.to_string());
    task.reference_solution = Some(format!(
        "The temperature is {start}-{fall} = <<{start}-{fall}={result}>>{result} degrees.\n#### {result}"
    ));
    task.difficulty = Some(1);
    task
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::gsm8k::calculations;

    #[test]
    fn answers_follow_the_annotated_calculation_and_some_are_below_zero() {
        let tasks: Vec<Task> = (0..200).map(|index| generate(3, index)).collect();
        let mut below_zero = 0;
        for task in &tasks {
            let solution = task.reference_solution.as_deref().unwrap();
            let steps = calculations(solution);
            assert_eq!(steps.len(), 1, "{solution}");
            let (expression, result) = &steps[0];
            let value = crate::agent::tools::Calculator::evaluate(expression);
            assert_eq!(&value.text, result, "{}", task.id);
            assert_eq!(task.ground_truth.as_deref(), Some(result.as_str()));
            below_zero += usize::from(result.starts_with('-'));
        }
        assert!(
            (50..150).contains(&below_zero),
            "{below_zero} of 200 below zero"
        );
    }

    #[test]
    fn the_same_seed_and_index_give_the_same_problem() {
        assert_eq!(generate(5, 17), generate(5, 17));
        assert_ne!(generate(5, 17).prompt, generate(6, 17).prompt);
    }
}
