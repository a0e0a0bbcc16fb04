//! What the trajectory screen says about forks: where a fork came from and what it edited,
//! the branches made from a trajectory, and its success-from-here along the turns.

use super::rich::{RichLine, Tone, piece};
use crate::trajectory::{ForkNode, ScoreSource, Trajectory, TrajectoryId};

/// Eighths of a cell, for the success-from-here bars (a dot for none).
const BARS: [&str; 9] = ["·", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];

/// For a fork: its parent, turn, seed, policy and how its prefix was given; what was edited.
pub fn origin_lines(trajectory: &Trajectory) -> Vec<RichLine> {
    let Some(origin) = &trajectory.fork else {
        return Vec::new();
    };
    let mut lines = vec![
        vec![
            piece(Tone::Accent, "fork of  "),
            piece(Tone::Text, &origin.parent.to_string()),
            piece(
                Tone::Muted,
                &format!(
                    " from t{} · continuation {} · seed {} · B opens the parent",
                    origin.turn,
                    origin.index + 1,
                    origin.seed
                ),
            ),
        ],
        vec![piece(
            Tone::Muted,
            &format!(
                "policy {} · prefix: {}",
                origin.policy,
                origin.prefix.describe()
            ),
        )],
    ];
    for edit in &origin.edits {
        lines.push(vec![
            piece(Tone::Warn, "edited  "),
            piece(
                Tone::Muted,
                &format!(
                    "message {} (was: {})",
                    edit.message + 1,
                    first_line(&edit.original)
                ),
            ),
        ]);
    }
    lines.push(Vec::new());
    lines
}

/// The original text of an edited message, when `message` is one.
pub fn edited_original(trajectory: &Trajectory, message: usize) -> Option<&str> {
    let origin = trajectory.fork.as_ref()?;
    origin
        .edits
        .iter()
        .find(|edit| edit.message == message)
        .map(|edit| edit.original.as_str())
}

/// The first step a fork sampled anew, where it opens.
pub fn fork_step(trajectory: &Trajectory) -> Option<usize> {
    trajectory
        .steps()
        .iter()
        .position(|step| sampled_from(trajectory, step.message))
}

/// Whether message `message` is the first one a fork sampled anew.
pub fn sampled_from(trajectory: &Trajectory, message: usize) -> bool {
    trajectory.fork.as_ref().is_some_and(|origin| {
        let turn = (origin.turn as usize).checked_sub(1);
        turn.and_then(|turn| trajectory.turn_messages().get(turn).copied()) == Some(message)
    })
}

/// The branches made from the trajectory, and its success-from-here along the turns when
/// every turn was forked.
pub fn branch_lines(trajectory: &Trajectory) -> Vec<RichLine> {
    let mut lines = Vec::new();
    if !trajectory.branches.is_empty() {
        lines.push(Vec::new());
        lines.push(vec![
            piece(Tone::Accent, "branches  "),
            piece(Tone::Muted, "b walks their children"),
        ]);
    }
    for branch in &trajectory.branches {
        let share = f64::from(branch.passed) / branch.children.len().max(1) as f64;
        let tone = if branch.passed > 0 {
            Tone::Pass
        } else {
            Tone::Fail
        };
        lines.push(vec![
            piece(
                Tone::Text,
                &format!("  from t{} × {}  ", branch.turn, branch.children.len()),
            ),
            piece(
                tone,
                &format!("{} pass ({:.0}%)", branch.passed, 100.0 * share),
            ),
            piece(
                Tone::Muted,
                &format!(
                    "  {}{}",
                    branch.run,
                    if branch.edited { " · edited" } else { "" }
                ),
            ),
        ]);
    }
    let values: Vec<(u32, f64)> = trajectory
        .step_scores
        .iter()
        .filter(|score| score.source == ScoreSource::MonteCarlo)
        .map(|score| (score.step, score.value))
        .collect();
    if !values.is_empty() {
        let start = trajectory
            .branches
            .iter()
            .rev()
            .find(|branch| branch.turn == 1 && !branch.edited)
            .map(|branch| f64::from(branch.passed) / branch.children.len().max(1) as f64);
        let mut points: Vec<(String, f64)> = start
            .map(|value| ("start".to_string(), value))
            .into_iter()
            .collect();
        points.extend(
            values
                .iter()
                .map(|(step, value)| (format!("after t{}", step + 1), *value)),
        );
        lines.push(Vec::new());
        lines.push(vec![piece(Tone::Accent, "success from here")]);
        let bars: Vec<&str> = points
            .iter()
            .map(|(_, value)| BARS[(value.clamp(0.0, 1.0) * 8.0).ceil() as usize])
            .collect();
        lines.push(vec![piece(Tone::Pass, &format!("  {}", bars.join(" ")))]);
        let figures: Vec<String> = points
            .iter()
            .map(|(name, value)| format!("{name} {:.0}%", 100.0 * value))
            .collect();
        lines.push(vec![piece(
            Tone::Muted,
            &format!("  {}", figures.join(" → ")),
        )]);
    }
    lines
}

/// For a fork whose parent was loaded: what it did from the turn it sampled again, diffed
/// against what the parent did from there (`-` the parent, `+` the fork).
pub fn parent_diff_lines(trajectory: &Trajectory, parent: &Trajectory) -> Vec<RichLine> {
    let Some(origin) = &trajectory.fork else {
        return Vec::new();
    };
    let from = |t: &Trajectory| {
        let turns = t.turn_messages();
        (origin.turn as usize)
            .checked_sub(1)
            .and_then(|turn| turns.get(turn).copied())
            .unwrap_or(t.messages.len())
    };
    let mut lines = vec![
        Vec::new(),
        vec![
            piece(
                Tone::Accent,
                &format!("from t{} against the parent  ", origin.turn),
            ),
            piece(Tone::Muted, "- the parent · + this fork"),
        ],
    ];
    lines.extend(super::state::group::diff_lines(
        &super::state::group::transcript_from(parent, from(parent)),
        &super::state::group::transcript_from(trajectory, from(trajectory)),
    ));
    lines
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    crate::text::clip(line, 80).into_owned()
}

/// The whole fork tree the trajectory belongs to, drawn with `├─`/`└─` from its root: each
/// trajectory's id, the turn and index it was sampled from, its verdict and reward, the open
/// one marked; `:open ID` opens any of them.
pub fn tree_lines(tree: &[ForkNode], open: TrajectoryId) -> Vec<RichLine> {
    if tree.len() < 2 {
        return Vec::new();
    }
    let passes = tree.iter().filter(|node| node.passed == Some(true)).count();
    let mut lines = vec![
        Vec::new(),
        vec![
            piece(Tone::Accent, "fork tree  "),
            piece(
                Tone::Muted,
                &format!(
                    "{} trajectories, {passes} pass · `:open ID` opens one",
                    tree.len()
                ),
            ),
        ],
    ];
    let mut open_levels: Vec<bool> = Vec::new();
    for node in tree {
        let depth = node.depth as usize;
        open_levels.truncate(depth);
        let mut prefix = String::from("  ");
        for &more in open_levels.iter().skip(1) {
            prefix.push_str(if more { "│  " } else { "   " });
        }
        if depth > 0 {
            prefix.push_str(if node.last { "└─ " } else { "├─ " });
        }
        open_levels.push(!node.last);
        let origin = match node.origin {
            Some((turn, index)) => format!("t{turn} #{index} "),
            None => "root ".to_string(),
        };
        let (verdict, tone) = match node.passed {
            Some(true) => ("pass", Tone::Pass),
            Some(false) => ("fail", Tone::Fail),
            None => ("–", Tone::Muted),
        };
        let reward = node
            .reward
            .map_or(String::new(), |reward| format!(" {reward:.2}"));
        let mut line = vec![
            piece(Tone::Muted, &prefix),
            piece(Tone::Text, &node.id.short(8)),
            piece(Tone::Muted, &format!(" {origin}")),
            piece(tone, &format!("{verdict}{reward}")),
        ];
        if node.id == open {
            line.push(piece(Tone::Accent, "  ◀ open"));
        }
        lines.push(line);
    }
    lines
}
