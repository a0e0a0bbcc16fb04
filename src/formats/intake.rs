//! Where every record an importer reads goes: its text is accounted for against its source
//! (`accounting`: a record that would lose text is refused, naming the field), its
//! trajectories get the id of their content (the same record read again has the same id, so
//! the store keeps it once), and its items are counted and handed to the sink. Every reader
//! hands its records through here; none calls the sink itself.

use super::accounting::SourceText;
use super::{Format, ImportError, ImportReport, Item, Sink};
use serde_json::Value;

/// The sink of one file's import, with the format the file is read as.
pub struct Intake<'s, 'a> {
    sink: &'s mut Sink<'a>,
    format: Format,
}

impl<'s, 'a> Intake<'s, 'a> {
    /// Records read as `format` go to `sink`.
    pub fn new(sink: &'s mut Sink<'a>, format: Format) -> Self {
        Self { sink, format }
    }

    /// Parses one source record with `parse`, checks that its text reached the items, gives
    /// its trajectories their content ids and hands the items on. A record that `parse`
    /// refuses or that would lose text is `Ok(Err(why))`, and nothing of it is handed on; a
    /// sink that fails is `Err`.
    pub fn record(
        &mut self,
        value: Value,
        parse: impl FnOnce(Value) -> Result<Vec<Item>, String>,
        report: &mut ImportReport,
    ) -> Result<Result<(), String>, ImportError> {
        let source = SourceText::of(&value, self.format);
        let mut items = match parse(value) {
            Ok(items) => items,
            Err(message) => return Ok(Err(message)),
        };
        if let Err(message) = source.check(&items) {
            return Ok(Err(message));
        }
        for item in &mut items {
            if let Item::Trajectory(trajectory) = item {
                trajectory.set_content_id();
            }
        }
        self.deliver(items, report)?;
        Ok(Ok(()))
    }

    /// Hands on items read from Rollscope's own format, ids as written.
    pub fn own(&mut self, items: Vec<Item>, report: &mut ImportReport) -> Result<(), ImportError> {
        self.deliver(items, report)
    }

    fn deliver(&mut self, items: Vec<Item>, report: &mut ImportReport) -> Result<(), ImportError> {
        for item in items {
            match &item {
                Item::Trajectory(_) => report.trajectories += 1,
                Item::Task(_) => report.tasks += 1,
            }
            (self.sink)(item).map_err(ImportError::Sink)?;
        }
        Ok(())
    }
}
