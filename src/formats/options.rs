//! Choices an export makes beyond its format: how tool-call arguments are written.

use crate::trajectory::ToolCall;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::str::FromStr;

/// How exporters that write OpenAI-shaped tool calls write their arguments.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::EnumIter,
    strum::IntoStaticStr,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum ToolArguments {
    /// A JSON object, as TRL documents for conversational tool-calling datasets (its chat
    /// templates render `arguments | tojson`); arguments that are not a JSON object stay text.
    #[default]
    Object,
    /// A JSON text in a string, as OpenAI's API and fine-tuning files write it.
    String,
    /// As the source wrote each call (object, string, or a string holding a string).
    AsRead,
}

impl ToolArguments {
    /// The name used on the command line and in manifests.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// A call's arguments in this form.
    pub fn write(self, call: &ToolCall) -> Value {
        match self {
            Self::Object => call
                .parsed_arguments()
                .filter(Value::is_object)
                .unwrap_or_else(|| Value::String(call.arguments.clone())),
            Self::String => Value::String(call.arguments.clone()),
            Self::AsRead => call.arguments_as_written(),
        }
    }
}

impl FromStr for ToolArguments {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        use strum::IntoEnumIterator;
        Self::iter()
            .find(|choice| choice.name() == text)
            .ok_or_else(|| {
                format!("unknown argument encoding `{text}`; use object (TRL), string (OpenAI) or as-read")
            })
    }
}

/// Choices an export makes beyond its format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportOptions {
    /// How tool-call arguments are written (OpenAI messages, TRL prompt–completion).
    pub tool_arguments: ToolArguments,
}
