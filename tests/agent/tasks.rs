//! Task sets: the generator's determinism, levels and splits; GSM8K; lookup tasks; task
//! files; the spec parser.

use rollscope::agent::answer::answers_match;
use rollscope::agent::claims::{ClaimOrigin, Verdict, extract_claims};
use rollscope::agent::tasks::{Split, TaskSetSpec, arith, generate_arith, gsm8k, load_file};
use rollscope::trajectory::Role;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

#[test]
fn the_generator_is_deterministic_and_seeded() {
    let a = arith::generate(0, 3, 17);
    assert_eq!(a, arith::generate(0, 3, 17));
    assert_eq!(a.id, "arith-3-00017");
    assert_ne!(a.question(), arith::generate(0, 3, 18).question());
    let seeded = arith::generate(7, 3, 17);
    assert_eq!(seeded.id, "arith-s7-3-00017");
    assert_ne!(seeded.question(), a.question());
    let first = generate_arith(Some(2), 0, Split::Train, 0, 5);
    assert_eq!(first, generate_arith(Some(2), 0, Split::Train, 0, 5));
}

#[test]
fn every_reference_solution_is_exact_and_reaches_the_ground_truth() {
    for level in 1..=arith::MAX_LEVEL {
        for index in 0..300 {
            let task = arith::generate(3, level, index);
            let solution = task.reference_solution.as_deref().unwrap();
            let claims = extract_claims(solution);
            assert!(!claims.is_empty(), "{}", task.id);
            for claim in &claims {
                assert_eq!(claim.verdict, Verdict::Holds, "{}: {}", task.id, claim.text);
            }
            let truth = task.ground_truth.as_deref().unwrap();
            assert!(solution.ends_with(&format!("#### {truth}")), "{}", task.id);
            assert!(answers_match(truth, truth));
        }
    }
}

/// Mean count of annotated calculations, numbers stated, and words per problem at a level.
fn level_profile(level: u32) -> (f64, f64, f64) {
    let tasks: Vec<_> = (0..200)
        .map(|index| arith::generate(0, level, index))
        .collect();
    let mean = |count: &dyn Fn(&rollscope::trajectory::Task) -> usize| {
        tasks.iter().map(count).sum::<usize>() as f64 / tasks.len() as f64
    };
    let annotations = mean(&|task| {
        extract_claims(task.reference_solution.as_deref().unwrap())
            .iter()
            .filter(|claim| claim.origin == ClaimOrigin::Annotation)
            .count()
    });
    let largest = mean(&|task| {
        task.question()
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|digits| digits.parse::<u64>().ok())
            .max()
            .unwrap_or(0)
            .to_string()
            .len()
    });
    let words = mean(&|task| task.question().split_whitespace().count());
    (annotations, largest, words)
}

#[test]
fn higher_levels_have_more_steps_bigger_numbers_and_distractors() {
    let profiles: Vec<_> = (1..=arith::MAX_LEVEL).map(level_profile).collect();
    for pair in profiles.windows(2) {
        let ((steps_a, digits_a, words_a), (steps_b, digits_b, words_b)) = (pair[0], pair[1]);
        assert!(steps_b > steps_a, "{profiles:?}");
        assert!(digits_b >= digits_a, "{profiles:?}");
        assert!(words_b > words_a, "{profiles:?}");
    }
    let level_one = arith::generate(0, 1, 0);
    assert_eq!(level_one.difficulty, Some(1));
    assert_eq!(
        level_one.question().matches('.').count(),
        2,
        "a start and one step"
    );
    let level_five = arith::generate(0, 5, 0);
    assert_eq!(
        level_five.question().matches('.').count(),
        8,
        "a start, 5 steps, 2 distractors"
    );
}

#[test]
fn extra_distractors_add_sentences_whose_numbers_the_answer_ignores() {
    let spec: TaskSetSpec = "arith:1+1:eval".parse().unwrap();
    assert_eq!(spec.to_string(), "arith:1+1:eval");
    let tasks = spec.load(Some(100), 0).unwrap();
    assert_eq!(tasks.len(), 100);
    let plain: HashSet<String> = generate_arith(Some(1), 0, Split::Eval, 0, 400)
        .into_iter()
        .map(|task| task.question().to_string())
        .collect();
    for task in &tasks {
        assert!(task.id.starts_with("arith-1+1-"), "{}", task.id);
        assert_eq!(task.difficulty, Some(1));
        assert_eq!(Split::of(task.question()), Split::Eval);
        assert!(!plain.contains(task.question()), "a problem of its own");
        assert_eq!(
            task.question().matches('.').count(),
            3,
            "a start, one step, one distractor: {}",
            task.question()
        );
        let numbers = task
            .question()
            .split(|c: char| !c.is_ascii_digit())
            .filter(|digits| !digits.is_empty())
            .count();
        assert_eq!(numbers, 3, "{}", task.question());
        let solution = task.reference_solution.as_deref().unwrap();
        let claims = extract_claims(solution);
        let annotated = claims
            .iter()
            .filter(|claim| claim.origin == ClaimOrigin::Annotation)
            .count();
        assert_eq!(annotated, 1, "one step: {}", task.id);
        assert!(claims.iter().all(|claim| claim.verdict == Verdict::Holds));
    }
    for bad in ["arith:1+0", "arith:1+4", "arith:1+x", "lookup:1+1"] {
        assert!(bad.parse::<TaskSetSpec>().is_err(), "{bad}");
    }
    let error = "arith:2+9".parse::<TaskSetSpec>().unwrap_err();
    assert!(error.contains("distractor"), "{error}");
}

#[test]
fn train_and_eval_never_share_a_problem() {
    let train = generate_arith(None, 0, Split::Train, 0, 2000);
    let eval = generate_arith(None, 0, Split::Eval, 0, 500);
    let train_questions: HashSet<&str> = train.iter().map(|task| task.question()).collect();
    assert!(
        eval.iter()
            .all(|task| !train_questions.contains(task.question()))
    );
    assert!(
        eval.iter()
            .all(|task| Split::of(task.question()) == Split::Eval)
    );
    let levels: HashSet<u32> = train.iter().filter_map(|task| task.difficulty).collect();
    assert_eq!(levels.len(), 5, "arith without a level mixes all five");
    let other_seed = generate_arith(None, 0, Split::Eval, 9, 500);
    assert!(
        other_seed
            .iter()
            .all(|task| !train_questions.contains(task.question()))
    );
}

#[test]
fn temperature_problems_split_apart_and_offer_the_calculator() {
    let load = |spec: &str, count| {
        spec.parse::<TaskSetSpec>()
            .unwrap()
            .load(Some(count), 0)
            .unwrap()
    };
    let train = load("weather:train", 400);
    let eval = load("weather:eval", 100);
    assert_eq!((train.len(), eval.len()), (400, 100));
    let train_questions: HashSet<&str> = train.iter().map(|task| task.question()).collect();
    assert!(
        eval.iter()
            .all(|task| !train_questions.contains(task.question()))
    );
    let below_zero = train
        .iter()
        .filter(|task| {
            task.ground_truth
                .as_deref()
                .is_some_and(|truth| truth.starts_with('-'))
        })
        .count();
    assert!(
        (120..280).contains(&below_zero),
        "{below_zero} of 400 below zero"
    );
    assert_eq!(train[0].prompt[0].role, Role::System);
    assert_eq!(train[0].tools[0]["function"]["name"], "calculator");
}

#[test]
fn the_shipped_gsm8k_splits_share_no_question() {
    let train = gsm8k::shipped(Split::Train).unwrap();
    let test = gsm8k::shipped(Split::Eval).unwrap();
    assert_eq!((train.len(), test.len()), (7473, 1319));
    assert_eq!(train[0].id, "gsm8k-train-0000");
    let train_questions: std::collections::HashSet<&str> =
        train.iter().map(|task| task.question()).collect();
    assert!(
        test.iter()
            .all(|task| !train_questions.contains(task.question()))
    );
}

#[test]
fn the_shipped_gsm8k_test_split_loads_with_canonical_answers() {
    let tasks = gsm8k::shipped(Split::Eval).unwrap();
    assert_eq!(tasks.len(), 1319);
    assert_eq!(tasks[0].id, "gsm8k-test-0000");
    assert_eq!(tasks[0].ground_truth.as_deref(), Some("18"));
    assert!(
        tasks[0]
            .question()
            .starts_with("Janet’s ducks lay 16 eggs per day.")
    );
    assert!(
        tasks[0]
            .reference_solution
            .as_deref()
            .unwrap()
            .ends_with("#### 18")
    );
    let with_separator = tasks
        .iter()
        .find(|task| {
            task.reference_solution
                .as_deref()
                .unwrap()
                .ends_with("#### 1,875")
        })
        .map(|task| task.ground_truth.clone());
    assert_eq!(with_separator, Some(Some("1875".into())));
    let shipped = std::fs::read("examples/gsm8k/test.jsonl").unwrap();
    assert_eq!(
        shipped.len(),
        749_738,
        "the shipped copy is byte for byte the original"
    );
}

#[test]
fn gsm8k_files_and_bad_rows_name_their_line() {
    let folder = tempfile::tempdir().unwrap();
    let good = folder.path().join("train.jsonl");
    std::fs::copy("examples/gsm8k/train.jsonl", &good).unwrap();
    let tasks = gsm8k::load(&good).unwrap();
    assert_eq!(tasks.len(), 7473);
    assert_eq!(tasks[1].id, "gsm8k-train-0001");
    let bad = folder.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"question\": \"q\", \"answer\": \"4\\n#### 4\"}\n{\"question\": \"q\", \"answer\": \"no marker\"}\n").unwrap();
    let error = gsm8k::load(&bad).unwrap_err().to_string();
    assert!(
        error.ends_with("bad.jsonl:2: `answer` has no `#### N` line"),
        "{error}"
    );
}

#[test]
fn our_task_format_loads_from_the_example_file() {
    let tasks = load_file(Path::new("examples/tasks.example.jsonl")).unwrap();
    assert_eq!(tasks.len(), 3);
    assert_eq!(tasks[0].id, "shop-001");
    assert_eq!(tasks[0].prompt[0].role, Role::System);
    assert_eq!(tasks[0].tools.len(), 1);
    assert!(
        extract_claims(tasks[0].reference_solution.as_deref().unwrap())
            .iter()
            .all(|claim| claim.verdict == Verdict::Holds)
    );
    assert_eq!(tasks[1].ground_truth.as_deref(), Some("4.5"));
    assert!(
        tasks[2].extra.contains_key("notes"),
        "unknown fields are kept"
    );
    let folder = tempfile::tempdir().unwrap();
    let bad = folder.path().join("tasks.jsonl");
    std::fs::write(&bad, "{\"id\": \"a\", \"source\": \"s\"}\n").unwrap();
    let error = load_file(&bad).unwrap_err().to_string();
    assert!(error.contains("tasks.jsonl:1: not a task"), "{error}");
    assert!(error.contains("prompt"), "{error}");
}

#[test]
fn specs_name_every_task_set() {
    let parse = |text: &str| text.parse::<TaskSetSpec>();
    assert_eq!(
        parse("gsm8k:train"),
        Ok(TaskSetSpec::Gsm8k {
            split: Split::Train
        })
    );
    assert_eq!(
        parse("gsm8k:test"),
        Ok(TaskSetSpec::Gsm8k { split: Split::Eval })
    );
    let bare = parse("gsm8k").unwrap_err();
    assert!(
        bare.contains("gsm8k:train") && bare.contains("gsm8k:test"),
        "{bare}"
    );
    assert!(parse("gsm8k:test:3").is_err());
    assert_eq!(
        parse("arith"),
        Ok(TaskSetSpec::Arith {
            level: None,
            distractors: 0,
            split: Split::Train
        })
    );
    assert_eq!(
        parse("arith:3"),
        Ok(TaskSetSpec::Arith {
            level: Some(3),
            distractors: 0,
            split: Split::Train
        })
    );
    assert_eq!(
        parse("arith:3:eval"),
        Ok(TaskSetSpec::Arith {
            level: Some(3),
            distractors: 0,
            split: Split::Eval
        })
    );
    assert_eq!(
        parse("lookup:eval"),
        Ok(TaskSetSpec::Lookup {
            level: None,
            split: Split::Eval
        })
    );
    assert_eq!(
        parse("examples/tasks.example.jsonl"),
        Ok(TaskSetSpec::File(PathBuf::from(
            "examples/tasks.example.jsonl"
        )))
    );
    assert!(
        parse("arith:9")
            .unwrap_err()
            .contains("not a level (1 to 5)")
    );
    assert!(parse("lookup:4").unwrap_err().contains("(1 to 3)"));
    assert_eq!(
        parse("weather:eval"),
        Ok(TaskSetSpec::Weather { split: Split::Eval })
    );
    assert_eq!(parse("weather").unwrap().to_string(), "weather");
    assert_eq!(parse("weather:eval").unwrap().to_string(), "weather:eval");
    assert!(parse("weather:2").unwrap_err().contains("a split only"));
    assert!(
        parse("nothing.jsonl")
            .unwrap_err()
            .contains("neither a task set nor a file")
    );
    assert_eq!(parse("arith:3:eval").unwrap().to_string(), "arith:3:eval");
}

#[test]
fn loaded_sets_carry_instructions_tools_and_limits() {
    let arith = "arith:2"
        .parse::<TaskSetSpec>()
        .unwrap()
        .load(Some(4), 0)
        .unwrap();
    assert_eq!(arith.len(), 4);
    assert_eq!(arith[0].prompt[0].role, Role::System);
    let tool_names: Vec<&str> = arith[0]
        .tools
        .iter()
        .filter_map(|spec| spec["function"]["name"].as_str())
        .collect();
    assert_eq!(tool_names, ["calculator", "python"]);
    let lookup = "lookup:1"
        .parse::<TaskSetSpec>()
        .unwrap()
        .load(None, 0)
        .unwrap();
    assert!(lookup.len() > 400);
    assert!(lookup.iter().all(|task| task.difficulty == Some(1)));
    assert_eq!(lookup[0].tools[0]["function"]["name"], "search");
    for (spec, count) in [("gsm8k:train", 7473), ("gsm8k:test", 1319)] {
        let all = spec.parse::<TaskSetSpec>().unwrap().load(None, 0).unwrap();
        assert_eq!(all.len(), count, "{spec}");
        assert_eq!(spec.parse::<TaskSetSpec>().unwrap().to_string(), spec);
    }
    let file = "examples/tasks.example.jsonl"
        .parse::<TaskSetSpec>()
        .unwrap()
        .load(None, 0)
        .unwrap();
    assert_eq!(file[1].prompt.len(), 1, "task files keep their own prompt");
}
