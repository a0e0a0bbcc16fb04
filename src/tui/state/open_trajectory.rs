//! An open trajectory: what was loaded and its sections, an outline whose sections are
//! built (highlighted, a search's words marked) when first shown.

use crate::engine::LoadedTrajectory;
use crate::store::TextHits;
use crate::trajectory::{StepLocation, Trajectory};
use crate::tui::content::{SectionContent, TaskLines, section_lines};
use crate::tui::highlight::Highlighter;
use crate::tui::rich::TextLine;
use crate::tui::search_hits;
use crate::tui::state::transcript::SectionSource;

/// A loaded trajectory with its prepared content.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenTrajectory {
    /// The trajectory and its task.
    pub loaded: LoadedTrajectory,
    /// Prompt, steps, outcome: an outline whose sections are built when first shown.
    pub sections: Vec<SectionContent>,
    /// Where each step lies.
    pub steps: Vec<StepLocation>,
    /// Whether it is shown for blind labelling (no fork origins, branches or advantage).
    pub blind: bool,
    /// Lines of each prompt message shown before the rest folds.
    pub task_lines: TaskLines,
}

impl OpenTrajectory {
    /// The trajectory.
    pub fn trajectory(&self) -> &Trajectory {
        &self.loaded.trajectory
    }

    /// Folds the prompt's messages after `task_lines` lines from now on (the prompt is
    /// built again when next shown).
    pub fn set_task_lines(&mut self, task_lines: TaskLines) {
        self.task_lines = task_lines;
        for content in &mut self.sections {
            if content.section == crate::tui::content::Section::Prompt {
                content.built = false;
                content.lines.clear();
            }
        }
    }

    /// Builds a section's lines (highlighted, the search's words marked) if not yet built.
    pub fn build(&mut self, section: usize, highlighter: &Highlighter, marks: Option<&TextHits>) {
        let Some(content) = self.sections.get(section).filter(|content| !content.built) else {
            return;
        };
        let lines = section_lines(
            &self.loaded,
            highlighter,
            self.blind,
            self.task_lines,
            &self.steps,
            content.section,
        );
        let content = &mut self.sections[section];
        content.lines = lines;
        content.built = true;
        if let Some(marks) = marks {
            search_hits::mark(std::slice::from_mut(content), marks);
        }
    }
}

/// An open trajectory's sections for the transcript, built when first laid out.
pub struct Builder<'a> {
    /// The trajectory whose sections are built.
    pub open: &'a mut OpenTrajectory,
    /// Highlights code blocks.
    pub highlighter: &'a Highlighter,
    /// The search whose words are marked.
    pub marks: Option<&'a TextHits>,
}

impl SectionSource for Builder<'_> {
    fn count(&self) -> usize {
        self.open.sections.len()
    }

    fn lines(&mut self, section: usize) -> &[TextLine] {
        self.open.build(section, self.highlighter, self.marks);
        self.open
            .sections
            .get(section)
            .map_or(&[], |content| content.lines.as_slice())
    }
}
