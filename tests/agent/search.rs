//! BM25 over the shipped collection finds the passages that answer the lookup tasks.

use rollscope::agent::tasks::lookup;
use rollscope::agent::tools::{Bm25Index, Passage, SearchTool};
use serde_json::Value;

fn gold(task: &rollscope::trajectory::Task) -> Vec<String> {
    task.extra["documents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect()
}

#[test]
fn bm25_ranks_the_answering_passage_first_for_every_one_passage_question() {
    let tool = SearchTool::shipped().unwrap();
    let index = tool.index();
    assert_eq!(index.passages().len(), 300);
    let tasks = lookup::shipped().unwrap();
    assert_eq!(tasks.len(), 785);
    let single: Vec<_> = tasks
        .iter()
        .filter(|task| task.difficulty == Some(1))
        .collect();
    assert_eq!(single.len(), 600);
    for task in &single {
        let hits = index.search(task.question(), 1);
        let top = index.passage(hits[0].index).unwrap();
        assert_eq!(vec![top.id.clone()], gold(task), "{}", task.question());
        assert!(
            top.text.contains(task.ground_truth.as_deref().unwrap())
                || top
                    .text
                    .contains(&with_separators(task.ground_truth.as_deref().unwrap())),
            "the passage holds the answer: {}",
            task.question()
        );
    }
}

/// `1234567` as the collection writes big numbers: `1,234,567`.
fn with_separators(number: &str) -> String {
    let digits: Vec<char> = number.chars().collect();
    let mut out = String::new();
    for (index, digit) in digits.iter().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(*digit);
    }
    out
}

#[test]
fn two_passage_questions_find_both_passages_in_the_top_five() {
    let tool = SearchTool::shipped().unwrap();
    let index = tool.index();
    let tasks = lookup::shipped().unwrap();
    let double: Vec<_> = tasks
        .iter()
        .filter(|task| task.difficulty == Some(2))
        .collect();
    let found = double
        .iter()
        .filter(|task| {
            let top: Vec<String> = index
                .search(task.question(), 5)
                .iter()
                .filter_map(|hit| index.passage(hit.index).map(|passage| passage.id.clone()))
                .collect();
            gold(task).iter().all(|id| top.contains(id))
        })
        .count();
    assert_eq!(found, double.len());
}

#[test]
fn chain_questions_find_their_first_passage_first() {
    let tool = SearchTool::shipped().unwrap();
    let index = tool.index();
    let tasks = lookup::shipped().unwrap();
    let chains: Vec<_> = tasks
        .iter()
        .filter(|task| task.difficulty == Some(3))
        .collect();
    assert_eq!(chains.len(), 80);
    for task in chains {
        let top = index
            .passage(index.search(task.question(), 1)[0].index)
            .unwrap();
        assert_eq!(top.id, gold(task)[0], "{}", task.question());
    }
}

#[test]
fn the_tool_answers_with_numbered_passages() {
    let tool = SearchTool::shipped().unwrap();
    let output = tool.answer("How high is Mount Vimviand?", 2);
    assert!(output.failure.is_none());
    assert!(
        output
            .text
            .starts_with("[1] Mount Vimviand\nMount Vimviand is a peak"),
        "{}",
        output.text
    );
    assert!(output.text.contains("\n\n[2] "));
    assert_eq!(
        tool.answer("zzzz qqqq", 3).text,
        "no passage matches `zzzz qqqq`"
    );
    assert!(tool.answer("  ", 3).failure.is_some());
}

#[test]
fn ranking_follows_term_rarity_and_breaks_ties_by_order() {
    let passage = |id: &str, text: &str| Passage {
        id: id.into(),
        title: String::new(),
        text: text.into(),
    };
    let index = Bm25Index::new(vec![
        passage("a", "the red fox runs"),
        passage("b", "the red hen sits"),
        passage("c", "the red fox and the red hen"),
    ]);
    let ids = |query: &str| -> Vec<usize> {
        index.search(query, 3).iter().map(|hit| hit.index).collect()
    };
    assert_eq!(ids("fox"), [0, 2]);
    assert_eq!(
        ids("red"),
        [2, 0, 1],
        "twice in c; a and b tie and keep their order"
    );
    assert_eq!(ids("hen fox"), [2, 0, 1]);
    let bad =
        Bm25Index::from_jsonl("{\"id\": \"x\", \"title\": \"t\"}\n", "docs.jsonl").unwrap_err();
    assert!(
        bad.to_string().starts_with("docs.jsonl:1: not a passage"),
        "{bad}"
    );
}
