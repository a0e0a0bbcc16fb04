//! Themes: semantic roles mapped to colours, read from flat TOML files over a built-in base.
//!
//! A theme file sets any of the roles below (colour names, `#rrggbb`, or 0–255); the roles
//! it leaves out keep the built-in dark theme's colours, which use only the 16 named ANSI
//! colours and so read well in any terminal.

use super::rich::Tone;
use crate::config_file::from_toml;
use anyhow::Context;
use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;
use std::path::Path;
use std::str::FromStr;

/// The themes shipped in `themes/`, by name.
pub const BUILT_IN: [(&str, &str); 3] = [
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.toml"),
    ),
];

/// A theme file: every role optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    name: Option<String>,
    foreground: Option<String>,
    background: Option<String>,
    text: Option<String>,
    muted: Option<String>,
    dim: Option<String>,
    accent: Option<String>,
    border: Option<String>,
    selection_fg: Option<String>,
    selection_bg: Option<String>,
    pass: Option<String>,
    fail: Option<String>,
    warn: Option<String>,
    suggested: Option<String>,
    confirmed: Option<String>,
    prm_low: Option<String>,
    prm_mid: Option<String>,
    prm_high: Option<String>,
    code_key: Option<String>,
    code_string: Option<String>,
    code_number: Option<String>,
    code_keyword: Option<String>,
    code_comment: Option<String>,
    diff_add: Option<String>,
    diff_remove: Option<String>,
    chart_main: Option<String>,
    chart_band: Option<String>,
    chart_alt: Option<String>,
    chart_overlay: Option<String>,
    chart_pins: Option<Vec<String>>,
    heat: Option<Vec<String>>,
}

/// Colours for every semantic role.
#[derive(Clone, Debug, PartialEq)]
pub struct Theme {
    /// The theme's name.
    pub name: String,
    /// Default text colour of the whole screen.
    pub foreground: Color,
    /// Background of the whole screen.
    pub background: Color,
    /// Ordinary text.
    pub text: Color,
    /// Metadata.
    pub muted: Color,
    /// Text the policy did not generate.
    pub dim: Color,
    /// Headings and the focused pane.
    pub accent: Color,
    /// Borders of panes without focus.
    pub border: Color,
    /// Text of the selected row.
    pub selection_fg: Color,
    /// Background of the selected row.
    pub selection_bg: Color,
    /// Passes.
    pub pass: Color,
    /// Fails and errors.
    pub fail: Color,
    /// Warnings.
    pub warn: Color,
    /// Suggested labels.
    pub suggested: Color,
    /// Confirmed labels.
    pub confirmed: Color,
    /// Low process scores.
    pub prm_low: Color,
    /// Middling process scores.
    pub prm_mid: Color,
    /// High process scores.
    pub prm_high: Color,
    /// Keys and names in code.
    pub code_key: Color,
    /// String literals.
    pub code_string: Color,
    /// Numbers and constants.
    pub code_number: Color,
    /// Keywords and operators.
    pub code_keyword: Color,
    /// Comments.
    pub code_comment: Color,
    /// Added diff lines.
    pub diff_add: Color,
    /// Removed diff lines.
    pub diff_remove: Color,
    /// The main chart series.
    pub chart_main: Color,
    /// A chart's ± band.
    pub chart_band: Color,
    /// A second chart series.
    pub chart_alt: Color,
    /// The first pinned run's series, overlaid on the selected run's.
    pub chart_overlay: Color,
    /// The second, third and fourth pinned runs' series.
    pub chart_pins: [Color; 3],
    /// Heat-map backgrounds, cool to hot (five levels).
    pub heat: [Color; 5],
}

fn color(field: &str, value: &str) -> anyhow::Result<Color> {
    Color::from_str(value).map_err(|_| {
        anyhow::anyhow!("`{field} = \"{value}\"` is not a colour: use a name (red, darkgray, …), #rrggbb, or 0–255")
    })
}

impl Default for Theme {
    /// The built-in dark theme (named ANSI colours only).
    fn default() -> Self {
        Self::read_over(&Self::base(), BUILT_IN[0].1, "the built-in theme dark")
            .unwrap_or_else(|_| Self::base())
    }
}

impl Theme {
    /// The last-resort palette the dark theme file is read over.
    fn base() -> Self {
        Self {
            name: "dark".into(),
            foreground: Color::Reset,
            background: Color::Reset,
            text: Color::Reset,
            muted: Color::Gray,
            dim: Color::DarkGray,
            accent: Color::Cyan,
            border: Color::DarkGray,
            selection_fg: Color::Black,
            selection_bg: Color::Cyan,
            pass: Color::Green,
            fail: Color::Red,
            warn: Color::Yellow,
            suggested: Color::Yellow,
            confirmed: Color::Magenta,
            prm_low: Color::Red,
            prm_mid: Color::Yellow,
            prm_high: Color::Green,
            code_key: Color::Cyan,
            code_string: Color::Green,
            code_number: Color::Magenta,
            code_keyword: Color::Blue,
            code_comment: Color::DarkGray,
            diff_add: Color::Green,
            diff_remove: Color::Red,
            chart_main: Color::Cyan,
            chart_band: Color::DarkGray,
            chart_alt: Color::Yellow,
            chart_overlay: Color::Magenta,
            chart_pins: [Color::Green, Color::LightBlue, Color::LightRed],
            heat: [
                Color::Blue,
                Color::Cyan,
                Color::Green,
                Color::Yellow,
                Color::Red,
            ],
        }
    }

    /// A theme by built-in name, or from a file path.
    pub fn named(name: &str) -> anyhow::Result<Self> {
        if let Some((_, text)) = BUILT_IN.iter().find(|(built_in, _)| *built_in == name) {
            return Self::read(text, &format!("the built-in theme {name}"));
        }
        let path = Path::new(name);
        if path.extension().is_some() || path.components().count() > 1 {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the theme file {}", path.display()))?;
            return Self::read(&text, &path.display().to_string());
        }
        let names: Vec<&str> = BUILT_IN.iter().map(|(name, _)| *name).collect();
        anyhow::bail!(
            "no theme `{name}`: use {} or a path to a theme file",
            names.join(", ")
        )
    }

    /// A theme file's text read over the built-in dark theme.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        Self::read(text, "the theme")
    }

    /// A theme file's text, read from `origin`, over the built-in dark theme; errors name
    /// `origin`, the line and the role meant.
    fn read(text: &str, origin: &str) -> anyhow::Result<Self> {
        Self::read_over(&Self::default(), text, origin)
    }

    fn read_over(base: &Self, text: &str, origin: &str) -> anyhow::Result<Self> {
        let file: ThemeFile = from_toml(text, origin)?;
        let mut theme = base.clone();
        if let Some(name) = file.name {
            theme.name = name;
        }
        let slots: [(&str, Option<String>, &mut Color); 28] = [
            ("foreground", file.foreground, &mut theme.foreground),
            ("background", file.background, &mut theme.background),
            ("text", file.text, &mut theme.text),
            ("muted", file.muted, &mut theme.muted),
            ("dim", file.dim, &mut theme.dim),
            ("accent", file.accent, &mut theme.accent),
            ("border", file.border, &mut theme.border),
            ("selection_fg", file.selection_fg, &mut theme.selection_fg),
            ("selection_bg", file.selection_bg, &mut theme.selection_bg),
            ("pass", file.pass, &mut theme.pass),
            ("fail", file.fail, &mut theme.fail),
            ("warn", file.warn, &mut theme.warn),
            ("suggested", file.suggested, &mut theme.suggested),
            ("confirmed", file.confirmed, &mut theme.confirmed),
            ("prm_low", file.prm_low, &mut theme.prm_low),
            ("prm_mid", file.prm_mid, &mut theme.prm_mid),
            ("prm_high", file.prm_high, &mut theme.prm_high),
            ("code_key", file.code_key, &mut theme.code_key),
            ("code_string", file.code_string, &mut theme.code_string),
            ("code_number", file.code_number, &mut theme.code_number),
            ("code_keyword", file.code_keyword, &mut theme.code_keyword),
            ("code_comment", file.code_comment, &mut theme.code_comment),
            ("diff_add", file.diff_add, &mut theme.diff_add),
            ("diff_remove", file.diff_remove, &mut theme.diff_remove),
            ("chart_main", file.chart_main, &mut theme.chart_main),
            ("chart_band", file.chart_band, &mut theme.chart_band),
            ("chart_alt", file.chart_alt, &mut theme.chart_alt),
            (
                "chart_overlay",
                file.chart_overlay,
                &mut theme.chart_overlay,
            ),
        ];
        for (field, value, slot) in slots {
            if let Some(value) = value {
                *slot = color(field, &value).with_context(|| origin.to_string())?;
            }
        }
        if let Some(pins) = file.chart_pins {
            anyhow::ensure!(
                pins.len() == 3,
                "{origin}: `chart_pins` needs three colours (the second to fourth pinned runs); \
                 it has {}",
                pins.len()
            );
            for (slot, value) in theme.chart_pins.iter_mut().zip(&pins) {
                *slot = color("chart_pins", value).with_context(|| origin.to_string())?;
            }
        }
        if let Some(heat) = file.heat {
            anyhow::ensure!(
                heat.len() == 5,
                "{origin}: `heat` needs five colours, cool to hot; it has {}",
                heat.len()
            );
            for (slot, value) in theme.heat.iter_mut().zip(&heat) {
                *slot = color("heat", value).with_context(|| origin.to_string())?;
            }
        }
        Ok(theme)
    }

    /// The colour of the pinned run at `place` among the pins.
    pub fn pin_color(&self, place: usize) -> Color {
        match place {
            0 => self.chart_overlay,
            _ => self.chart_pins[(place - 1) % self.chart_pins.len()],
        }
    }

    /// The style of the whole screen.
    pub fn base_style(&self) -> Style {
        Style::new().fg(self.foreground).bg(self.background)
    }

    /// The style of the selected row.
    pub fn selected(&self) -> Style {
        Style::new().fg(self.selection_fg).bg(self.selection_bg)
    }

    /// The border style of a pane, accented when it has focus.
    pub fn border(&self, focused: bool) -> Style {
        Style::new().fg(if focused { self.accent } else { self.border })
    }

    /// The style of a tone.
    pub fn style(&self, tone: Tone) -> Style {
        let fg = |color: Color| Style::new().fg(color);
        match tone {
            Tone::Text => fg(self.text),
            Tone::Muted => fg(self.muted),
            Tone::Dim => fg(self.dim),
            Tone::Accent => fg(self.accent).add_modifier(Modifier::BOLD),
            Tone::Strong => fg(self.text).add_modifier(Modifier::BOLD),
            Tone::Emphasis => fg(self.text).add_modifier(Modifier::ITALIC),
            Tone::Pass => fg(self.pass),
            Tone::Fail => fg(self.fail),
            Tone::Warn => fg(self.warn),
            Tone::Suggested => fg(self.suggested).add_modifier(Modifier::ITALIC),
            Tone::Confirmed => fg(self.confirmed).add_modifier(Modifier::BOLD),
            Tone::PrmLow => fg(self.prm_low),
            Tone::PrmMid => fg(self.prm_mid),
            Tone::PrmHigh => fg(self.prm_high),
            Tone::CodeKey => fg(self.code_key),
            Tone::CodeString => fg(self.code_string),
            Tone::CodeNumber => fg(self.code_number),
            Tone::CodeKeyword => fg(self.code_keyword),
            Tone::CodeComment => fg(self.code_comment).add_modifier(Modifier::ITALIC),
            Tone::DiffAdd => fg(self.diff_add),
            Tone::DiffRemove => fg(self.diff_remove),
            Tone::Hit => fg(self.warn).add_modifier(Modifier::REVERSED | Modifier::BOLD),
            Tone::Heat(level) => Style::new()
                .fg(Color::Black)
                .bg(self.heat[usize::from(level.min(4))]),
        }
    }
}
