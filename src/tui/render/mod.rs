//! How untrusted text is drawn, by what it is: markdown in the policy's text, tool calls by
//! tool and argument, tool output by content (JSON, diffs, tracebacks), the fields an import
//! kept. Every renderer makes its text inert and cuts what is too long, saying so.

pub mod details;
pub mod diff;
pub mod markdown;
pub mod output;
pub mod tool_call;
