//! Themes and keymaps: every shipped theme parses, bad files name what is wrong, keymap
//! files rebind actions and keys but never the label digits.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Color;
use rollscope::tui::Action;
use rollscope::tui::keymap::{KeyChord, Keymap};
use rollscope::tui::rich::Tone;
use rollscope::tui::theme::{BUILT_IN, Theme};

#[test]
fn every_theme_file_parses_and_matches_its_built_in() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("themes");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let theme = Theme::named(&path.to_string_lossy())
            .unwrap_or_else(|error| panic!("{}: {error:#}", path.display()));
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        assert_eq!(theme.name, name);
        assert_eq!(
            theme,
            Theme::named(&name).unwrap(),
            "the built-in copy of {name} is the file"
        );
        names.push(name);
    }
    names.sort();
    assert_eq!(names, ["dark", "high-contrast", "light"]);
    assert_eq!(BUILT_IN.len(), 3);
}

#[test]
fn the_dark_theme_uses_only_the_sixteen_named_colours() {
    let theme = Theme::named("dark").unwrap();
    let named = |color: Color| !matches!(color, Color::Rgb(..) | Color::Indexed(_));
    for tone in [
        Tone::Text,
        Tone::Pass,
        Tone::Fail,
        Tone::Dim,
        Tone::Suggested,
        Tone::Confirmed,
        Tone::PrmLow,
        Tone::PrmHigh,
        Tone::Heat(4),
    ] {
        let style = theme.style(tone);
        assert!(
            style.fg.is_none_or(named) && style.bg.is_none_or(named),
            "{tone:?}"
        );
    }
    assert_eq!(Theme::default(), theme, "the fallback is the dark theme");
    assert_ne!(theme.style(Tone::Pass), theme.style(Tone::Fail));
}

#[test]
fn partial_themes_patch_the_dark_one_and_errors_name_the_field() {
    let theme = Theme::parse("name = \"mine\"\npass = \"#00ff00\"\n").unwrap();
    assert_eq!(
        (theme.name.as_str(), theme.pass),
        ("mine", Color::Rgb(0, 255, 0))
    );
    assert_eq!(theme.fail, Theme::default().fail);
    let error = format!("{:#}", Theme::parse("fail = \"blood\"").unwrap_err());
    assert!(error.contains("fail = \"blood\""), "{error}");
    let error = format!("{:#}", Theme::parse("heat = [\"red\"]").unwrap_err());
    assert!(error.contains("five colours"), "{error}");
    let error = format!("{:#}", Theme::parse("passs = \"red\"").unwrap_err());
    assert!(error.contains("passs"), "{error}");
    assert!(
        format!("{:#}", Theme::named("neon").unwrap_err()).contains("dark, light, high-contrast")
    );
}

fn press(keymap: &Keymap, code: KeyCode, modifiers: KeyModifiers) -> Option<Action> {
    keymap.action(&KeyEvent::new(code, modifiers))
}

#[test]
fn default_keys_cover_vim_and_arrows() {
    let keymap = Keymap::default();
    assert_eq!(
        press(&keymap, KeyCode::Char('j'), KeyModifiers::NONE),
        Some(Action::Down)
    );
    assert_eq!(
        press(&keymap, KeyCode::Down, KeyModifiers::NONE),
        Some(Action::Down)
    );
    assert_eq!(
        press(&keymap, KeyCode::Char('G'), KeyModifiers::SHIFT),
        Some(Action::Bottom)
    );
    assert_eq!(
        press(&keymap, KeyCode::Char('d'), KeyModifiers::CONTROL),
        Some(Action::PageDown)
    );
    assert_eq!(
        press(&keymap, KeyCode::BackTab, KeyModifiers::SHIFT),
        Some(Action::PrevTab)
    );
    assert_eq!(
        press(&keymap, KeyCode::F(3), KeyModifiers::NONE),
        Some(Action::TabStats)
    );
    assert_eq!(
        press(&keymap, KeyCode::Char('4'), KeyModifiers::NONE),
        Some(Action::LabelFormat)
    );
    assert_eq!(keymap.first_key(Action::Down), "j");
    assert_eq!(keymap.keys_for(Action::PageDown).len(), 3);
}

#[test]
fn keymap_files_rebind_actions_and_keys() {
    let keymap = Keymap::from_toml(
        "down = [\"n\", \"ctrl-j\"]\n[keys]\n\"x\" = \"quit\"\n\"shift-tab\" = \"help\"\n",
    )
    .unwrap();
    assert_eq!(
        press(&keymap, KeyCode::Char('n'), KeyModifiers::NONE),
        Some(Action::Down)
    );
    assert_eq!(
        press(&keymap, KeyCode::Char('j'), KeyModifiers::CONTROL),
        Some(Action::Down)
    );
    assert_eq!(
        press(&keymap, KeyCode::Char('j'), KeyModifiers::NONE),
        None,
        "down's old keys are gone"
    );
    assert_eq!(
        press(&keymap, KeyCode::Char('x'), KeyModifiers::NONE),
        Some(Action::Quit)
    );
    assert_eq!(
        press(&keymap, KeyCode::BackTab, KeyModifiers::SHIFT),
        Some(Action::Help)
    );
    assert_eq!(
        press(&keymap, KeyCode::Char('1'), KeyModifiers::NONE),
        Some(Action::LabelCalculation)
    );
}

#[test]
fn keymap_errors_name_the_entry_and_digits_stay_labels() {
    let error = format!(
        "{:#}",
        Keymap::from_toml("[keys]\n\"1\" = \"quit\"\n").unwrap_err()
    );
    assert!(error.contains("always sets a label"), "{error}");
    let error = format!("{:#}", Keymap::from_toml("jump = [\"j\"]\n").unwrap_err());
    assert!(error.contains("jump"), "{error}");
    let error = format!(
        "{:#}",
        Keymap::from_toml("down = [\"hyper-j\"]\n").unwrap_err()
    );
    assert!(error.contains("hyper-j"), "{error}");
    assert_eq!(KeyChord::parse("ctrl-d").unwrap().to_string(), "ctrl-d");
    assert_eq!(KeyChord::parse("shift-j"), KeyChord::parse("J"));
    assert_eq!(KeyChord::parse("f12").unwrap().to_string(), "F12");
}

#[test]
fn a_session_config_picks_theme_and_keymap() {
    let root = tempfile::tempdir().unwrap();
    let paths = rollscope::session::SessionPaths::new(root.path(), "s").unwrap();
    std::fs::create_dir_all(&paths.dir).unwrap();
    std::fs::write(
        paths.dir.join("mine.toml"),
        "name = \"mine\"\naccent = \"magenta\"\n",
    )
    .unwrap();
    std::fs::write(paths.dir.join("keys.toml"), "[keys]\n\"x\" = \"quit\"\n").unwrap();
    std::fs::write(
        paths.config_path(),
        "theme = \"mine.toml\"\nkeymap = \"keys.toml\"\n",
    )
    .unwrap();
    let config =
        rollscope::tui::session_app_config(&paths, ratatui::layout::Rect::new(0, 0, 80, 24))
            .unwrap();
    assert_eq!(
        (config.theme.name.as_str(), config.theme.accent),
        ("mine", Color::Magenta)
    );
    assert_eq!(
        config.extra_themes.len(),
        1,
        ":theme mine can switch back to it"
    );
    assert_eq!(
        press(&config.keymap, KeyCode::Char('x'), KeyModifiers::NONE),
        Some(Action::Quit)
    );
    std::fs::write(paths.config_path(), "theme = \"high-contrast\"\n").unwrap();
    let config =
        rollscope::tui::session_app_config(&paths, ratatui::layout::Rect::new(0, 0, 80, 24))
            .unwrap();
    assert_eq!(config.theme.name, "high-contrast");
}

#[test]
fn misspelt_keymap_and_theme_keys_name_the_file_line_and_the_key_meant() {
    let dir = tempfile::tempdir().unwrap();
    let keymap = dir.path().join("keys.toml");
    std::fs::write(&keymap, "down = [\"n\"]\npage_dwn = [\"ctrl-f\"]\n").unwrap();
    let error = format!("{:#}", Keymap::load(&keymap).unwrap_err());
    assert!(
        error.contains(&format!(
            "{}:2: unknown action `page_dwn`; did you mean `page_down`?",
            keymap.display()
        )),
        "{error}"
    );
    std::fs::write(&keymap, "[keys]\n\"x\" = \"quitt\"\n").unwrap();
    let error = format!("{:#}", Keymap::load(&keymap).unwrap_err());
    assert!(
        error.contains(&format!(
            "{}:2: unknown action `quitt`; did you mean `quit`?",
            keymap.display()
        )),
        "{error}"
    );
    let theme = dir.path().join("mine.toml");
    std::fs::write(&theme, "name = \"mine\"\nacent = \"red\"\n").unwrap();
    let error = format!("{:#}", Theme::named(&theme.to_string_lossy()).unwrap_err());
    assert!(
        error.contains(&format!(
            "{}:2: unknown key `acent` at the top level; did you mean `accent`?",
            theme.display()
        )),
        "{error}"
    );
}
