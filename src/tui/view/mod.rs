//! Drawing: pure functions of `&App` onto a frame. One file per view.

mod curate;
mod group;
mod help;
mod launch;
mod outcome_pane;
mod preview;
mod rollouts;
mod run_charts;
mod run_curves;
mod run_table;
mod runs;
mod shell;
mod stats;
mod stats_compare;
mod tokens;
mod trajectory;
mod transcript;
pub mod widgets;

use super::app::{App, Screen, Tab};
use super::layout;
use ratatui::Frame;
use ratatui::widgets::Block;

/// Draws the whole screen.
pub fn draw(frame: &mut Frame, app: &App) {
    let area = frame.area();
    frame.render_widget(Block::new().style(app.theme.base_style()), area);
    let (top, body, bottom) = layout::shell(area);
    shell::draw_top(frame, top, app);
    match app.tab {
        Tab::Rollouts => match app.screen() {
            Screen::List => rollouts::draw(frame, body, app),
            Screen::Trajectory => trajectory::draw(frame, body, app),
            Screen::Group => group::draw(frame, body, app),
        },
        Tab::Runs => {
            runs::draw(frame, body, app);
            if let Some(form) = &app.tabs.runs.form {
                launch::draw(frame, body, &app.theme, form);
            }
        }
        Tab::Stats => stats::draw(frame, body, app),
        Tab::Curate => curate::draw(frame, body, app),
    }
    shell::draw_bottom(frame, bottom, app);
    if let Some(page) = &app.help {
        help::draw(frame, area, app, page);
    }
    if app.quit_prompt {
        help::draw_quit_prompt(frame, area, app);
    }
}
