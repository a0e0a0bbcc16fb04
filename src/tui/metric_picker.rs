//! The Runs tab's metric picker: every metric the shown runs record, narrowed by the words
//! typed (each must appear in the name, any case); `enter` adds the highlighted metric to the
//! charts or takes it off. It takes every key while open, so nothing typed reaches the tab.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// The open picker.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MetricPicker {
    /// Every metric name the shown runs record, sorted.
    pub names: Vec<String>,
    /// What was typed.
    pub query: String,
    /// The highlighted match, counted in `matches()`.
    pub highlighted: usize,
}

/// What a key did to the picker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PickerEvent {
    /// The query or the highlight changed.
    Editing,
    /// Chart this metric, or stop charting it.
    Toggle(String),
    /// The picker closed.
    Closed,
}

impl MetricPicker {
    /// A picker over `names`, nothing typed.
    pub fn new(names: Vec<String>) -> Self {
        Self {
            names,
            ..Self::default()
        }
    }

    /// The names holding every word of the query, in order.
    pub fn matches(&self) -> Vec<&str> {
        let words: Vec<String> = self
            .query
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        self.names
            .iter()
            .filter(|name| {
                let name = name.to_lowercase();
                words.iter().all(|word| name.contains(word.as_str()))
            })
            .map(String::as_str)
            .collect()
    }

    /// Handles a key: typing narrows, `↑`/`↓` move, `enter` toggles, `esc` closes.
    pub fn key(&mut self, key: &KeyEvent) -> PickerEvent {
        let count = self.matches().len();
        match key.code {
            KeyCode::Esc => return PickerEvent::Closed,
            KeyCode::Enter => {
                return match self.matches().get(self.highlighted) {
                    Some(name) => PickerEvent::Toggle(name.to_string()),
                    None => PickerEvent::Editing,
                };
            }
            KeyCode::Down | KeyCode::Tab => {
                self.highlighted = (self.highlighted + 1).min(count.saturating_sub(1));
            }
            KeyCode::Up | KeyCode::BackTab => self.highlighted = self.highlighted.saturating_sub(1),
            KeyCode::PageDown => {
                self.highlighted = (self.highlighted + 10).min(count.saturating_sub(1));
            }
            KeyCode::PageUp => self.highlighted = self.highlighted.saturating_sub(10),
            KeyCode::Backspace => {
                self.query.pop();
                self.highlighted = 0;
            }
            KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.query.clear();
                self.highlighted = 0;
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.query.push(c);
                self.highlighted = 0;
            }
            _ => {}
        }
        PickerEvent::Editing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(picker: &mut MetricPicker, code: KeyCode) -> PickerEvent {
        picker.key(&KeyEvent::new(code, KeyModifiers::NONE))
    }

    #[test]
    fn words_narrow_the_names_and_enter_toggles_the_highlighted_one() {
        let mut picker = MetricPicker::new(vec![
            "learning_rate".into(),
            "rewards/correct/mean".into(),
            "rewards/format/mean".into(),
        ]);
        for c in "Rew mean".chars() {
            press(&mut picker, KeyCode::Char(c));
        }
        assert_eq!(
            picker.matches(),
            ["rewards/correct/mean", "rewards/format/mean"]
        );
        press(&mut picker, KeyCode::Down);
        press(&mut picker, KeyCode::Down);
        assert_eq!(
            press(&mut picker, KeyCode::Enter),
            PickerEvent::Toggle("rewards/format/mean".into()),
            "the highlight stops at the last match"
        );
        press(&mut picker, KeyCode::Char('z'));
        assert_eq!(press(&mut picker, KeyCode::Enter), PickerEvent::Editing);
        assert_eq!(press(&mut picker, KeyCode::Esc), PickerEvent::Closed);
    }
}
