//! The rule-based process scorer on hand-made turns and on GSM8K's annotated solutions.

use rollscope::agent::claims::report::check_gsm8k;
use rollscope::agent::prm_rule::rule_scores;
use rollscope::agent::protocol::parse_turn;
use rollscope::agent::tools::builtin_spec;
use rollscope::trajectory::{Message, ScoreSource, Span, StepScore, Trajectory, TrajectoryId};
use serde_json::Value;

fn calculator() -> Vec<Value> {
    builtin_spec("calculator").into_iter().collect()
}

fn scores(messages: Vec<Message>) -> Vec<StepScore> {
    let mut all = vec![Message::user(
        "Natalia sold clips to 48 of her friends in April...",
    )];
    all.extend(messages);
    rule_scores(&Trajectory::new(TrajectoryId(1), all), &calculator())
}

fn tool_result(call: &str, text: &str) -> Message {
    let mut message = Message::tool(text);
    message.name = Some("calculator".into());
    message.tool_call_id = Some(call.into());
    message
}

#[test]
fn a_correct_turn_scores_one() {
    let scores = scores(vec![Message::assistant(
        "She sold 48/2 = 24 clips in May, so 48 + 24 = 72 in all.\nFinal Answer: 72",
    )]);
    assert_eq!(scores.len(), 1);
    assert_eq!(scores[0].value, 1.0);
    assert_eq!(scores[0].source, ScoreSource::Rule);
    assert_eq!(scores[0].note.as_deref(), Some("all 3 checks passed"));
}

#[test]
fn an_answer_with_no_basis_is_a_guess() {
    let guess = scores(vec![Message::assistant("Final Answer: 72")]);
    assert_eq!(guess[0].value, 0.5);
    assert_eq!(
        guess[0].note.as_deref(),
        Some(
            "the answer 72 has no basis: no tool result, calculation that holds or number of \
             the task states it"
        )
    );
    let given = scores(vec![Message::assistant("Final Answer: 48")]);
    assert_eq!(given[0].value, 1.0, "{:?}", given[0].note);
    let without_tools = rule_scores(
        &Trajectory::new(
            TrajectoryId(1),
            vec![
                Message::user("Natalia sold clips to 48 of her friends in April..."),
                Message::assistant("Final Answer: 72"),
            ],
        ),
        &[],
    );
    assert!(
        without_tools.is_empty(),
        "no tools and no calculation: nothing checked, so no score: {without_tools:?}"
    );
}

#[test]
fn each_false_claim_halves_the_score_and_is_named() {
    let scores = scores(vec![
        Message::assistant("4 boxes of 17 make 17 * 4 = 96 pens."),
        Message::assistant("Then 96 + 4 = 100, and 100 / 8 = 12.5 and 2^10 = 1000."),
    ]);
    assert_eq!(scores[0].value, 0.5);
    assert_eq!(
        scores[0].note.as_deref(),
        Some("`17 * 4 = 96` is false: it is 68, not 96")
    );
    assert_eq!(scores[1].value, 0.5);
    assert!(
        scores[1]
            .note
            .as_deref()
            .unwrap()
            .contains("`2^10 = 1000` is false: it is 1024")
    );
}

#[test]
fn a_turn_that_misstates_a_tool_result_fails() {
    let call = parse_turn(
        "<tool_call>{\"name\": \"calculator\", \"arguments\": {\"expression\": \"23*3\"}}</tool_call>",
        &calculator(),
        0,
    )
    .to_message();
    let faithful = scores(vec![
        call.clone(),
        tool_result("call_0_0", "69"),
        Message::assistant("So there are 69 stickers.\nFinal Answer: 69"),
    ]);
    assert_eq!(faithful[1].value, 1.0, "{:?}", faithful[1].note);
    let slipped = scores(vec![
        call,
        tool_result("call_0_0", "69"),
        Message::assistant("So there are 96 stickers.\nFinal Answer: 96"),
    ]);
    assert_eq!(slipped[0].value, 1.0);
    assert_eq!(slipped[1].value, 0.25);
    assert_eq!(
        slipped[1].note.as_deref(),
        Some(
            "`calculator` returned 69 but the turn states 96; the answer 96 has no basis: no \
             tool result, calculation that holds or number of the task states it"
        )
    );
}

#[test]
fn numbers_from_the_problem_are_not_slips() {
    let scores = scores(vec![
        Message::assistant("I add the 48 and the 24."),
        tool_result("call_0_0", "72"),
        Message::assistant("With the 48 from April that makes 72.\nFinal Answer: 72"),
    ]);
    let steps: Vec<u32> = scores.iter().map(|score| score.step).collect();
    assert_eq!(
        steps,
        [1],
        "the first turn states nothing to check, so it has no score"
    );
    assert_eq!(scores[0].value, 1.0, "{:?}", scores[0].note);
}

#[test]
fn malformed_calls_fail_their_turn() {
    let turn = parse_turn(
        "Let me use a tool. <tool_call>{\"name\": \"calculator\", \"arguments\": {}}</tool_call> <tool_call>{oops</tool_call>",
        &calculator(),
        0,
    );
    let scores = scores(vec![turn.to_message()]);
    assert_eq!(scores[0].value, 0.25);
    let note = scores[0].note.as_deref().unwrap();
    assert!(
        note.contains(
            "the call of `calculator` is malformed: `calculator` needs the argument `expression`"
        ),
        "{note}"
    );
    assert!(
        note.contains("the call of `?` is malformed: the tool call is not valid JSON"),
        "{note}"
    );
}

#[test]
fn single_message_solutions_are_scored_per_span() {
    let solution = "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\nNatalia sold 48+24 = <<48+24=73>>73 clips altogether.\n#### 73";
    let mut message = Message::assistant(solution);
    let mut start = 0u32;
    for line in solution.split('\n') {
        let end = start + line.len() as u32;
        message.spans.push(Span { start, end });
        start = end + 1;
    }
    let scores = scores(vec![message]);
    let values: Vec<f64> = scores.iter().map(|score| score.value).collect();
    assert_eq!(values, [1.0, 0.25, 0.5]);
    assert_eq!(
        scores[1].note.as_deref(),
        Some("`48+24=73` is false: it is 72, not 73; `48+24 = 73` is false: it is 72, not 73")
    );
    assert!(
        scores[2]
            .note
            .as_deref()
            .is_some_and(|note| note.starts_with("the answer 73 has no basis")),
        "{:?}",
        scores[2].note
    );
}

#[test]
fn every_gsm8k_train_annotation_is_verified() {
    let text = std::fs::read_to_string("examples/gsm8k/train.jsonl").unwrap();
    let report = check_gsm8k(&text, "examples/gsm8k/train.jsonl").unwrap();
    println!(
        "GSM8K train: {} solutions; annotations {:?}; prose {:?}",
        report.solutions, report.annotations, report.prose
    );
    assert_eq!(report.solutions, 7473);
    assert_eq!(report.annotations.claims, 23_716);
    assert_eq!(report.annotations.hold, 23_716);
    assert_eq!(report.annotations.share_verified(), 1.0);
    assert!(report.prose.claims > 20_000);
    assert!(report.prose.share_verified() > 0.997, "{:?}", report.prose);
    let found = |text: &str, line: usize| {
        report
            .not_verified
            .iter()
            .any(|located| located.claim.text == text && located.line == line)
    };
    assert!(
        found("14*20=140", 7445),
        "a real slip in GSM8K's prose is caught"
    );
    assert!(
        found("8*3 = 240", 3003),
        "a real slip in GSM8K's prose is caught"
    );
}
