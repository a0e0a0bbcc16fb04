//! Screen geometry shared by drawing and by `update` (which needs page sizes): pure
//! functions of the terminal area.

use ratatui::layout::{Constraint, Layout, Rect};

/// The three bands of the screen: top bar, body, bottom bar (bars vanish below 3 rows).
pub fn shell(area: Rect) -> (Rect, Rect, Rect) {
    if area.height < 3 {
        let empty = Rect::new(area.x, area.y, area.width, 0);
        return (empty, area, empty);
    }
    let [top, body, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    (top, body, bottom)
}

/// The Rollouts body: the list above, the preview of the selected trajectory below (only
/// when there is room for both).
pub fn rollouts(body: Rect) -> (Rect, Option<Rect>) {
    if body.height < 14 {
        return (body, None);
    }
    let list_height = (body.height * 11 / 20).max(6);
    let [list, preview] =
        Layout::vertical([Constraint::Length(list_height), Constraint::Fill(1)]).areas(body);
    (list, Some(preview))
}

/// How many rows of the list fit: the list pane less its borders and header.
pub fn list_rows(viewport: Rect) -> usize {
    let (_, body, _) = shell(viewport);
    let (list, _) = rollouts(body);
    usize::from(list.height.saturating_sub(3)).max(1)
}

/// The trajectory screen: header (task line), the turn list on the left, the pane on the right.
pub struct TrajectoryAreas {
    /// Title and task lines.
    pub header: Rect,
    /// Sections (prompt, turns, outcome).
    pub turns: Rect,
    /// The current section, or the token view.
    pub pane: Rect,
}

/// Splits the trajectory screen's body.
pub fn trajectory(body: Rect) -> TrajectoryAreas {
    let header_height = if body.height >= 10 { 3 } else { 0 };
    let [header, rest] =
        Layout::vertical([Constraint::Length(header_height), Constraint::Fill(1)]).areas(body);
    let turns_width = match rest.width {
        160.. => 36,
        60.. => 22,
        _ => 0,
    };
    let [turns, pane] =
        Layout::horizontal([Constraint::Length(turns_width), Constraint::Fill(1)]).areas(rest);
    TrajectoryAreas {
        header,
        turns,
        pane,
    }
}

/// How many lines of the trajectory pane's content fit (a rough figure for paging).
pub fn pane_rows(viewport: Rect) -> usize {
    let (_, body, _) = shell(viewport);
    usize::from(trajectory(body).pane.height.saturating_sub(4)).max(1)
}

/// How many rows of the whole conversation the trajectory pane shows (the pane less its
/// borders).
pub fn transcript_rows(viewport: Rect) -> usize {
    let (_, body, _) = shell(viewport);
    usize::from(trajectory(body).pane.height.saturating_sub(2)).max(1)
}

/// How many cells wide the trajectory pane's text is (the pane less its borders).
pub fn pane_columns(viewport: Rect) -> usize {
    let (_, body, _) = shell(viewport);
    usize::from(trajectory(body).pane.width.saturating_sub(2))
}

/// The group screen: the sample table on the left, the diff on the right (stacked when narrow).
pub fn group(body: Rect) -> (Rect, Rect) {
    let [table, diff] = if body.width >= 100 {
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(body)
    } else {
        Layout::vertical([Constraint::Percentage(40), Constraint::Percentage(60)]).areas(body)
    };
    (table, diff)
}

/// A centred box of at most `width` × `height` inside `area`.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let width = width.min(area.width);
    let height = height.min(area.height);
    Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height - height) / 2,
        width,
        height,
    )
}
