//! The static content of an open trajectory's sections, each built when first shown: the
//! prompt, each step (what the policy wrote, its tool calls, the observations that came
//! back), the outcome. Labels and scores change and are drawn live instead.

use super::fork_lines;
use super::highlight::Highlighter;
pub use super::outline::{Section, SectionContent};
use super::render::details::details_lines;
use super::render::diff::{diff_lines, is_diff};
use super::render::markdown::{looks_like_markdown, markdown};
use super::render::output::output_lines;
use super::render::tool_call::{shown_file_language, tool_call_lines};
use super::rich::{Fold, TextLine, Tone, code, paragraph, piece, prose, reasoning};
use crate::engine::LoadedTrajectory;
use crate::text::reasoning_parts;
use crate::trajectory::{Message, Role, StepLocation, Trajectory};

/// Lines of each prompt message (the task) shown before the rest folds away (`z` unfolds
/// it); a session chooses (`task_lines` in session.toml, `:fold N` in the TUI).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskLines(pub usize);

impl Default for TaskLines {
    fn default() -> Self {
        Self(12)
    }
}

/// A prompt message folds only when it hides at least this many lines more.
const PROMPT_FOLD_LEAST: usize = 4;

/// The sections of a trajectory, in order: prompt, steps, outcome, each built whole;
/// `blind` leaves out what a fork tells (its origin, branches, success-from-here).
pub fn sections(
    loaded: &LoadedTrajectory,
    highlighter: &Highlighter,
    blind: bool,
) -> Vec<SectionContent> {
    let steps = loaded.trajectory.steps();
    let mut sections = super::outline::outline(&loaded.trajectory, &steps);
    for content in &mut sections {
        let section = content.section;
        let task_lines = TaskLines::default();
        content.lines = section_lines(loaded, highlighter, blind, task_lines, &steps, section);
        content.built = true;
    }
    sections
}

/// One section's lines; `steps` are the trajectory's, `blind` leaves out what a fork tells.
pub fn section_lines(
    loaded: &LoadedTrajectory,
    highlighter: &Highlighter,
    blind: bool,
    task_lines: TaskLines,
    steps: &[StepLocation],
    section: Section,
) -> Vec<TextLine> {
    let trajectory = &loaded.trajectory;
    match section {
        Section::Prompt => {
            let mut prompt = if blind {
                Vec::new()
            } else {
                prose(fork_lines::origin_lines(trajectory))
            };
            prompt.extend(prompt_lines(loaded, task_lines));
            prompt
        }
        Section::Step(index) => step_lines(trajectory, highlighter, blind, steps, index),
        Section::Outcome => {
            let mut outcome = outcome_lines(loaded, blind);
            let mut forks = Vec::new();
            if !blind {
                forks.extend(fork_lines::branch_lines(trajectory));
                forks.extend(fork_lines::tree_lines(&loaded.tree, trajectory.id));
                if let Some(parent) = &loaded.parent {
                    forks.extend(fork_lines::parent_diff_lines(trajectory, parent));
                }
            }
            outcome.extend(prose(forks));
            outcome.extend(details_lines(trajectory, steps, highlighter));
            outcome
        }
    }
}

/// A step's lines: what the policy wrote (reasoning folded apart), its tool calls and the
/// observations that came back.
fn step_lines(
    trajectory: &Trajectory,
    highlighter: &Highlighter,
    blind: bool,
    steps: &[StepLocation],
    index: usize,
) -> Vec<TextLine> {
    let Some(location) = steps.get(index) else {
        return Vec::new();
    };
    let message = &trajectory.messages[location.message];
    let last_of_message = steps
        .get(index + 1)
        .is_none_or(|next| next.message != location.message);
    let first_of_message = index == 0 || steps[index - 1].message != location.message;
    let mut lines = Vec::new();
    if !blind && first_of_message && fork_lines::sampled_from(trajectory, location.message) {
        lines.push(vec![piece(Tone::Warn, "── sampled again from here ──")]);
    }
    let mut lines = prose(lines);
    if first_of_message && let Some(kept) = &message.reasoning {
        lines.extend(reasoning(paragraph(Tone::Muted, kept)));
    }
    for (index, part) in reasoning_parts(message.span_text(location.span))
        .into_iter()
        .enumerate()
    {
        let text = if index == 0 {
            part.text
        } else {
            part.text.trim_start()
        };
        match part.reasoning {
            true => lines.extend(reasoning(paragraph(Tone::Muted, part.text.trim()))),
            false if looks_like_markdown(text) => lines.extend(markdown(text, highlighter)),
            false => lines.extend(prose(paragraph(Tone::Text, text))),
        }
    }
    if last_of_message {
        for call in &message.tool_calls {
            lines.extend(prose(vec![Vec::new()]));
            lines.extend(tool_call_lines(call, highlighter));
        }
        for (index, reply) in following_messages(trajectory, location.message) {
            lines.extend(prose(vec![Vec::new()]));
            let edited = fork_lines::edited_original(trajectory, index).filter(|_| !blind);
            let call = message
                .tool_calls
                .iter()
                .find(|call| call.id.is_some() && call.id == reply.tool_call_id)
                .or(match message.tool_calls.as_slice() {
                    [only] => Some(only),
                    _ => None,
                });
            let language = call.and_then(shown_file_language);
            lines.extend(reply_lines(reply, edited, highlighter, language));
        }
    }
    lines
}

/// A section's lines with each foldable block folded to one marker line (reasoning: `▸
/// reasoning · 23 words folded`; the rest of a long prompt message: `▸ 212 more lines
/// folded`), unless `unfolded` or the block holds a search hit; unfolded reasoning gets a
/// heading.
pub fn fold_blocks(lines: &[TextLine], unfolded: bool) -> Vec<TextLine> {
    let mut shown = Vec::with_capacity(lines.len());
    let mut index = 0;
    while index < lines.len() {
        let fold = lines[index].fold;
        if fold == Fold::Never {
            shown.push(lines[index].clone());
            index += 1;
            continue;
        }
        let end = lines[index..]
            .iter()
            .position(|line| line.fold != fold)
            .map_or(lines.len(), |offset| index + offset);
        let block = &lines[index..end];
        let hit = block
            .iter()
            .any(|line| line.pieces.iter().any(|piece| piece.tone == Tone::Hit));
        let open = unfolded || hit;
        match fold {
            Fold::Reasoning => {
                let words: usize = block
                    .iter()
                    .flat_map(|line| &line.pieces)
                    .map(|piece| piece.text.split_whitespace().count())
                    .sum();
                let (mark, what) = match open {
                    true => ("▾ reasoning", format!(" · {words} words")),
                    false => ("▸ reasoning", format!(" · {words} words folded")),
                };
                shown.extend(prose(vec![vec![
                    piece(Tone::Accent, mark),
                    piece(Tone::Muted, &what),
                ]]));
                if open {
                    shown.extend(block.iter().cloned());
                    shown.extend(prose(vec![Vec::new()]));
                }
            }
            _ if open => shown.extend(block.iter().cloned()),
            _ => shown.extend(prose(vec![vec![
                piece(Tone::Accent, "▸ "),
                piece(
                    Tone::Muted,
                    &format!("{} more lines folded (z unfolds)", block.len()),
                ),
            ]])),
        }
        index = end;
    }
    shown
}

/// The prompt: each message under its role, a long one folded after its first `task_lines`;
/// then the task's ground truth, reference solution and where it comes from.
fn prompt_lines(loaded: &LoadedTrajectory, task_lines: TaskLines) -> Vec<TextLine> {
    let TaskLines(shown_lines) = task_lines;
    let mut shown = Vec::new();
    for message in loaded.trajectory.prompt_messages() {
        shown.extend(prose(vec![vec![piece(
            Tone::Accent,
            message.role.as_str(),
        )]]));
        let mut body = prose(paragraph(Tone::Dim, &message.content));
        if body.len() > shown_lines + PROMPT_FOLD_LEAST {
            for line in &mut body[shown_lines..] {
                line.fold = Fold::LongText;
            }
        }
        shown.extend(body);
        shown.extend(prose(vec![Vec::new()]));
    }
    let mut lines = Vec::new();
    if let Some(task) = &loaded.task {
        if let Some(truth) = &task.ground_truth {
            lines.push(vec![
                piece(Tone::Accent, "ground truth  "),
                piece(Tone::Pass, truth),
            ]);
        }
        if let Some(solution) = &task.reference_solution {
            lines.push(vec![piece(Tone::Accent, "reference solution")]);
            lines.extend(paragraph(Tone::Text, solution));
        }
        lines.push(vec![piece(
            Tone::Muted,
            &format!(
                "task {} · source {}{}",
                task.id,
                task.source,
                task.difficulty
                    .map_or(String::new(), |level| format!(" · difficulty {level}"))
            ),
        )]);
    }
    shown.extend(prose(lines));
    shown
}

/// The messages after an assistant message up to the next one (observations, follow-ups),
/// with their indices.
fn following_messages(
    trajectory: &Trajectory,
    index: usize,
) -> impl Iterator<Item = (usize, &Message)> {
    trajectory.messages[index + 1..]
        .iter()
        .enumerate()
        .map(move |(offset, message)| (index + 1 + offset, message))
        .take_while(|(_, message)| message.role != Role::Assistant)
}

/// A reply: its header, then its text drawn by what it is (JSON, a diff, a traceback, the
/// file a call showed in `language`, plain text); `edited` gives the text a fork replaced.
fn reply_lines(
    message: &Message,
    edited: Option<&str>,
    highlighter: &Highlighter,
    language: Option<&str>,
) -> Vec<TextLine> {
    let mut header = format!("─ {}", message.role);
    if message.role == Role::Tool {
        header = format!(
            "─ observation · {} · not trained",
            message.name.as_deref().unwrap_or("tool")
        );
    }
    if let Some(latency) = message.latency_ms {
        header.push_str(&format!(" · {latency:.1} ms"));
    }
    let mut head = vec![piece(Tone::Muted, &header)];
    if message.is_error {
        head.push(piece(Tone::Fail, " · error"));
    }
    if let Some(original) = edited {
        let was = original.lines().next().unwrap_or("");
        head.push(piece(Tone::Warn, &format!(" · edited (was: {was})")));
    }
    let mut lines = prose(vec![head]);
    lines.extend(output_lines(
        &message.content,
        message.is_error,
        highlighter,
        language,
    ));
    lines
}

/// The outcome: reward and its parts, advantage, answer (a multi-line answer such as a
/// submitted patch as a block under it), ground truth, how it stopped.
fn outcome_lines(loaded: &LoadedTrajectory, blind: bool) -> Vec<TextLine> {
    let trajectory = &loaded.trajectory;
    let mut lines = Vec::new();
    match &trajectory.reward {
        Some(reward) => {
            let (verdict, tone) = if reward.is_pass() {
                ("pass", Tone::Pass)
            } else {
                ("fail", Tone::Fail)
            };
            lines.push(vec![
                piece(Tone::Accent, "reward  "),
                piece(tone, &format!("{:.2} {verdict}", reward.total)),
            ]);
            for (name, value) in &reward.components {
                let weight = reward
                    .weights
                    .get(name)
                    .map_or(String::new(), |weight| format!("  (weight {weight})"));
                lines.push(vec![piece(
                    Tone::Muted,
                    &format!("  {name:<12} {value:>6.2}{weight}"),
                )]);
            }
        }
        None => lines.push(vec![piece(Tone::Muted, "no reward recorded")]),
    }
    if let Some(advantage) = trajectory.advantage.filter(|_| !blind) {
        lines.push(vec![piece(
            Tone::Text,
            &format!("advantage  {advantage:+.3}"),
        )]);
    }
    let answer = trajectory.final_answer.as_deref().unwrap_or("–");
    let mut answer_block = Vec::new();
    if answer.contains('\n') {
        let count = answer.lines().count();
        let patch = is_diff(answer);
        let what = if patch {
            format!("a patch of {count} lines, below")
        } else {
            format!("{count} lines, below")
        };
        lines.push(vec![
            piece(Tone::Accent, "answer  "),
            piece(Tone::Muted, &what),
        ]);
        answer_block = if patch {
            diff_lines(answer)
        } else {
            code(paragraph(Tone::Text, answer))
        };
    } else {
        lines.push(vec![
            piece(Tone::Accent, "answer  "),
            piece(Tone::Text, answer),
        ]);
    }
    if let Some(truth) = loaded
        .task
        .as_ref()
        .and_then(|task| task.ground_truth.as_deref())
    {
        lines.push(vec![
            piece(Tone::Accent, "ground truth  "),
            piece(Tone::Pass, truth),
        ]);
    }
    lines.push(vec![piece(
        Tone::Muted,
        &format!(
            "stop {} · {} turns · {} tool calls ({} failed)",
            trajectory.stop_reason,
            trajectory.turn_count(),
            trajectory.tool_call_count(),
            trajectory.tool_error_count()
        ),
    )]);
    if let Some(total) = trajectory.timings.total_ms {
        lines.push(vec![piece(Tone::Muted, &format!("time {total:.0} ms"))]);
    }
    let mut lines = prose(lines);
    lines.extend(answer_block);
    lines
}
