//! The audit's traits, each on a constructed trajectory, and the queue's order on a store.

use crate::common::{apples, call, result, rollout, store};
use rollscope::curate::audit::{Trait, length_sign, signs};
use rollscope::curate::{AuditOptions, audit};
use rollscope::store::Filter;
use rollscope::trajectory::Message;

fn traits(turns: Vec<Message>) -> Vec<Trait> {
    let task = apples();
    let trajectory = rollout(&task, 1, turns, Some(true));
    signs(&trajectory, Some(&task))
        .into_iter()
        .map(|sign| sign.kind)
        .collect()
}

fn worked() -> Vec<Message> {
    vec![
        call(1, "I add 17 and 25.", "17+25"),
        result(1, "42"),
        Message::assistant("He has 42 apples.\nFinal Answer: 42"),
    ]
}

#[test]
fn each_trait_fires_on_its_evidence_and_not_on_honest_work() {
    assert!(traits(worked()).is_empty());
    assert_eq!(
        traits(vec![Message::assistant("Final Answer: 42")]),
        [Trait::Unsupported]
    );
    assert!(traits(vec![Message::assistant("17 + 25 = 42\nFinal Answer: 42")]).is_empty());
    assert_eq!(
        traits(vec![Message::assistant(
            "The apples he buys matter most here, so I take that number.\nFinal Answer: 25"
        )]),
        [Trait::CopiedFromPrompt]
    );
    assert_eq!(
        traits(vec![Message::assistant(
            "I used the tool and it answered for both amounts together:\n<tool_response>42</tool_response>\nFinal Answer: 42"
        )]),
        [Trait::QuotedToolOutput]
    );
    assert_eq!(
        traits(vec![Message::assistant(
            "I checked carefully and the calculator returned 42 for the total of both amounts.\nFinal Answer: 42"
        )]),
        [Trait::QuotedToolOutput]
    );
    let mut cited_after_call = worked();
    cited_after_call[2] = Message::assistant("The calculator returned 42.\nFinal Answer: 42");
    assert!(traits(cited_after_call).is_empty());
    let line = "I will add the numbers now.";
    let mut repeated = worked();
    repeated[0].content = format!("{line}\n{line}\n{line}");
    assert_eq!(traits(repeated), [Trait::RepeatedText]);
    let mut twice = worked();
    twice[0].content = format!("{line}\n{line}");
    assert!(traits(twice).is_empty());

    assert!(
        length_sign(1000, 100.0, 3.0, 10).is_some_and(|s| s.evidence.contains("10.0× the median"))
    );
    assert!(length_sign(20, 100.0, 3.0, 10).is_some());
    assert!(length_sign(150, 100.0, 3.0, 10).is_none());
    assert!(
        length_sign(1000, 100.0, 3.0, 4).is_none(),
        "too few samples to judge"
    );
}

#[test]
fn the_queue_holds_suspicious_high_reward_rollouts_most_traits_first() {
    let (_dir, store) = store();
    let task = apples();
    let mut all = Vec::new();
    for number in 0..5 {
        all.push(rollout(&task, number, worked(), Some(true)));
    }
    let copied = rollout(
        &task,
        10,
        vec![Message::assistant("Final Answer: 25")],
        Some(true),
    );
    let quoted = rollout(
        &task,
        11,
        vec![Message::assistant(
            "I checked carefully and the calculator returned 42 for the total of both amounts.\nFinal Answer: 42",
        )],
        Some(true),
    );
    let long_text: Vec<String> = (0..400).map(|i| format!("word{i}")).collect();
    let long = rollout(
        &task,
        12,
        vec![
            call(1, &long_text.join(" "), "17+25"),
            result(1, "42"),
            Message::assistant("Final Answer: 42"),
        ],
        Some(true),
    );
    let failed = rollout(
        &task,
        13,
        vec![Message::assistant("Final Answer: 25")],
        Some(false),
    );
    all.extend([copied.clone(), quoted.clone(), long.clone(), failed]);
    store.put_tasks(&[task]).unwrap();
    store.put_trajectories(&all).unwrap();
    let (findings, audited) = audit(&store, &Filter::default(), &AuditOptions::default()).unwrap();
    assert_eq!(audited, 8, "the failed rollout is not audited");
    let ids: Vec<_> = findings.iter().map(|finding| finding.id).collect();
    assert_eq!(ids, [copied.id, quoted.id, long.id]);
    let first: Vec<Trait> = findings[0].signs.iter().map(|sign| sign.kind).collect();
    assert_eq!(
        first,
        [
            Trait::Unsupported,
            Trait::CopiedFromPrompt,
            Trait::AnomalousLength
        ]
    );
    assert!(
        findings[0].signs[1]
            .evidence
            .contains("the answer 25 is written in the prompt")
    );
    assert_eq!(findings[2].signs[0].kind, Trait::AnomalousLength);
    let strict = AuditOptions {
        min_reward: Some(2.0),
        ..AuditOptions::default()
    };
    assert_eq!(audit(&store, &Filter::default(), &strict).unwrap().1, 0);
}

#[test]
fn a_choice_the_prompt_offers_is_an_answer_not_a_copy() {
    let task = rollscope::trajectory::Task::new(
        "choice",
        "boolq",
        "Is the Pacific larger than the Atlantic? Answer Yes or No, as `Final Answer: Yes`.",
    );
    let answer = |text: &str| {
        let trajectory = crate::common::rollout(
            &task,
            1,
            vec![Message::assistant(format!(
                "The Pacific covers about 165 million square kilometres, the Atlantic about 106 million, so it is larger.\nFinal Answer: {text}"
            ))],
            Some(true),
        );
        signs(&trajectory, Some(&task))
            .into_iter()
            .map(|sign| sign.kind)
            .collect::<Vec<_>>()
    };
    assert!(
        answer("Yes").is_empty(),
        "a word the prompt offers as a choice"
    );
    assert_eq!(
        answer("larger than the Atlantic"),
        [Trait::CopiedFromPrompt],
        "a phrase lifted from the prompt"
    );
}
