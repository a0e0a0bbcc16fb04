//! The group screen: the samples of a GRPO group side by side, and a diff of two of them.

use super::widgets::{decimal, label_letters, line, pane, span, verdict_style};
use crate::engine::GroupKey;
use crate::figures::significant;
use crate::text::{clip, inert};
use crate::tui::app::App;
use crate::tui::layout;
use crate::tui::rich::Tone;
use crate::tui::wrap::marked_window;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Paragraph, Row, Table};

const WIDTHS: [Constraint; 7] = [
    Constraint::Length(3),
    Constraint::Length(6),
    Constraint::Length(6),
    Constraint::Length(5),
    Constraint::Length(10),
    Constraint::Length(7),
    Constraint::Fill(1),
];

/// Draws the group screen.
pub fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let theme = &app.theme;
    let state = &app.tabs.rollouts.group;
    let Some(group) = &state.group else {
        let text = if state.loading.is_some() {
            " loading group… "
        } else {
            " no group open "
        };
        frame.render_widget(
            pane(theme, Line::from(span(theme, Tone::Muted, text)), true),
            area,
        );
        return;
    };
    let [title_area, area] =
        Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(area);
    let (table_area, diff_area) = layout::group(area);
    let rewards: Vec<String> = state
        .rewards()
        .iter()
        .map(|&reward| significant(reward, 3))
        .collect();
    let (mean, std) = state.reward_stats();
    // The task as the list names it: by the record's own title where an import's task id is
    // a digest of its content.
    let task = group.members.first().map_or_else(
        || {
            group
                .task
                .as_ref()
                .map_or("no task".to_string(), |task| task.id.clone())
        },
        |member| member.task_name(),
    );
    let heading = match &group.key {
        GroupKey::Grpo { run, step, group } => {
            format!(
                " group {group} · {} · {} step {step} ",
                inert(&task),
                inert(run)
            )
        }
        GroupKey::Task { .. } => format!(" {} attempts at {} ", group.members.len(), inert(&task)),
    };
    let mut title = vec![span(theme, Tone::Accent, heading)];
    title.push(span(
        theme,
        Tone::Muted,
        format!(
            "· rewards {} · mean {} · std {} ",
            rewards.join(" "),
            significant(mean, 3),
            significant(std, 3)
        ),
    ));
    let grpo = matches!(group.key, GroupKey::Grpo { .. });
    if !grpo {
        let passed = group
            .members
            .iter()
            .filter(|member| member.passed() == Some(true))
            .count();
        title.push(span(
            theme,
            Tone::Muted,
            format!("· {passed} of {} pass ", group.members.len()),
        ));
    } else if state.zero_variance() {
        title.push(span(
            theme,
            Tone::Warn,
            "· zero variance: no learning signal ",
        ));
    }
    // A GRPO sample by its index in the group; an attempt at a task (from any run or file)
    // by its place in the view.
    let number = |index: usize| match group.members.get(index).and_then(|m| m.sample) {
        Some(sample) if grpo => sample as usize + 1,
        _ => index + 1,
    };
    let header = Row::new(["s", "reward", "adv", "turns", "answer", "PRM min", "labels"])
        .style(theme.style(Tone::Muted));
    let rows: Vec<Row> = group
        .members
        .iter()
        .enumerate()
        .map(|(index, member)| {
            let marker = if index == state.pinned && !state.reference {
                "◆"
            } else {
                " "
            };
            let labels: Vec<_> = member.labels.iter().collect();
            let reward = member.reward.as_ref().map(|reward| reward.total);
            let row = Row::new(vec![
                Cell::from(format!("{marker}{}", number(index))),
                Cell::from(decimal(reward)).style(verdict_style(theme, member.passed())),
                Cell::from(member.advantage.map_or("–".into(), |a| format!("{a:+.2}"))),
                Cell::from(member.turn_count().to_string()),
                Cell::from(
                    inert(&clip(member.final_answer.as_deref().unwrap_or("–"), 10)).into_owned(),
                ),
                Cell::from(decimal(member.prm_min())),
                Cell::from(Line::from(label_letters(theme, &labels))),
            ]);
            if index == state.selected {
                row.style(theme.selected())
            } else {
                row
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(Line::from(title)), title_area);
    let samples = Line::from(span(
        theme,
        Tone::Accent,
        format!(
            " {} {} ",
            group.members.len(),
            if grpo { "samples" } else { "attempts" }
        ),
    ));
    frame.render_widget(
        Table::new(rows, WIDTHS)
            .header(header)
            .block(pane(theme, samples, true)),
        table_area,
    );
    let sample = number;
    let diff_title = if state.reference {
        format!(" diff  reference ⇄ s{} ", sample(state.selected))
    } else {
        format!(
            " diff  s{} ⇄ s{} ",
            sample(state.pinned),
            sample(state.selected)
        )
    };
    let rows = usize::from(diff_area.height.saturating_sub(2));
    let columns = usize::from(diff_area.width.saturating_sub(2));
    let shown: Vec<_> = state
        .diff
        .iter()
        .skip(state.scroll)
        .take(rows)
        .map(|rich| marked_window(rich, state.across, columns))
        .collect();
    let lines: Vec<Line> = shown.iter().map(|rich| line(theme, rich)).collect();
    let diff_title = if state.across > 0 {
        format!("{diff_title}← col {} ", state.across + 1)
    } else {
        diff_title
    };
    frame.render_widget(
        Paragraph::new(lines).block(pane(
            theme,
            Line::from(span(theme, Tone::Accent, diff_title)),
            false,
        )),
        diff_area,
    );
}
