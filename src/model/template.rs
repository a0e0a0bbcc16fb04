//! The model's Jinja chat template, rendered with minijinja the way transformers renders it:
//! `trim_blocks` and `lstrip_blocks`, a Python-compatible `tojson`, Python string and dict
//! methods, `raise_exception` and `strftime_now`.

use super::error::{ModelError, Result};
use super::pyjson::{DumpOptions, dumps};
use minijinja::value::{Kwargs, Value as JinjaValue};
use minijinja::{Environment, Error as JinjaError, ErrorKind};
use serde_json::{Map, Value};

const TEMPLATE_NAME: &str = "chat";

/// What to render besides the messages.
#[derive(Clone, Debug, Default)]
pub struct RenderOptions {
    /// Append the header that opens the assistant's turn.
    pub add_generation_prompt: bool,
    /// Further variables the template reads (e.g. `enable_thinking`).
    pub extra: Map<String, Value>,
}

impl RenderOptions {
    /// Options with the generation prompt on or off and nothing else.
    pub fn generation_prompt(on: bool) -> Self {
        Self {
            add_generation_prompt: on,
            extra: Map::new(),
        }
    }
}

/// A compiled chat template.
#[derive(Clone)]
pub struct ChatTemplate {
    env: Environment<'static>,
    source: String,
    source_name: String,
    bos_token: String,
    eos_token: String,
}

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTemplate")
            .field("source_name", &self.source_name)
            .field("eos_token", &self.eos_token)
            .finish_non_exhaustive()
    }
}

impl ChatTemplate {
    /// Compiles `source` (named `source_name` in errors); `bos_token` and `eos_token` are
    /// the variables of the same names templates use.
    pub fn new(
        source: String,
        source_name: &str,
        bos_token: &str,
        eos_token: &str,
    ) -> Result<Self> {
        let mut env = Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_filter("tojson", tojson);
        env.add_function("raise_exception", raise_exception);
        env.add_function("strftime_now", strftime_now);
        env.add_template_owned(TEMPLATE_NAME, source.clone())
            .map_err(|error| template_error(source_name, &error))?;
        Ok(Self {
            env,
            source,
            source_name: source_name.to_string(),
            bos_token: bos_token.to_string(),
            eos_token: eos_token.to_string(),
        })
    }

    /// The template text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Where the template came from.
    pub fn source_name(&self) -> &str {
        &self.source_name
    }

    /// The end-of-turn text the policy writes to finish a turn (`eos_token`).
    pub fn eos_token(&self) -> &str {
        &self.eos_token
    }

    /// Renders OpenAI-style message objects and tool specifications.
    pub fn render(
        &self,
        messages: &[Value],
        tools: &[Value],
        options: &RenderOptions,
    ) -> Result<String> {
        let mut context = options.extra.clone();
        context.insert("messages".into(), Value::Array(messages.to_vec()));
        let tools = if tools.is_empty() {
            Value::Null
        } else {
            Value::Array(tools.to_vec())
        };
        context.insert("tools".into(), tools);
        context.insert(
            "add_generation_prompt".into(),
            Value::Bool(options.add_generation_prompt),
        );
        context.insert("bos_token".into(), Value::String(self.bos_token.clone()));
        context.insert("eos_token".into(), Value::String(self.eos_token.clone()));
        let template = self
            .env
            .get_template(TEMPLATE_NAME)
            .map_err(|error| template_error(&self.source_name, &error))?;
        template
            .render(JinjaValue::from_serialize(&context))
            .map_err(|error| template_error(&self.source_name, &error))
    }

    /// The `<|...|>` special tokens the template text writes literally.
    pub fn literal_special_tokens(&self) -> Vec<String> {
        let mut found = Vec::new();
        let mut rest = self.source.as_str();
        while let Some(start) = rest.find("<|") {
            let after = &rest[start + 2..];
            match after.find("|>") {
                Some(end) if !after[..end].contains(['<', '>', '\'', '"', ' ', '\n']) => {
                    let token = format!("<|{}|>", &after[..end]);
                    if !found.contains(&token) {
                        found.push(token);
                    }
                    rest = &after[end + 2..];
                }
                _ => rest = after,
            }
        }
        found
    }
}

fn template_error(source_name: &str, error: &JinjaError) -> ModelError {
    let mut message = error.to_string();
    if let Some(line) = error.line() {
        message = format!("line {line}: {message}");
    }
    let mut cause = std::error::Error::source(error);
    while let Some(inner) = cause {
        message.push_str(&format!(": {inner}"));
        cause = inner.source();
    }
    ModelError::Template {
        source_name: source_name.to_string(),
        message,
    }
}

/// `tojson` as transformers defines it: `json.dumps(x, ensure_ascii=False, indent=None,
/// separators=None, sort_keys=False)`.
fn tojson(value: JinjaValue, kwargs: Kwargs) -> std::result::Result<String, JinjaError> {
    let indent: Option<usize> = kwargs.get("indent")?;
    let sort_keys: Option<bool> = kwargs.get("sort_keys")?;
    let ensure_ascii: Option<bool> = kwargs.get("ensure_ascii")?;
    kwargs.assert_all_used()?;
    let json = serde_json::to_value(&value).map_err(|error| {
        JinjaError::new(ErrorKind::InvalidOperation, format!("tojson: {error}"))
    })?;
    Ok(dumps(
        &json,
        DumpOptions {
            indent,
            sort_keys: sort_keys.unwrap_or(false),
            ensure_ascii: ensure_ascii.unwrap_or(false),
        },
    ))
}

fn raise_exception(message: String) -> std::result::Result<JinjaValue, JinjaError> {
    Err(JinjaError::new(ErrorKind::InvalidOperation, message))
}

fn strftime_now(format: String) -> String {
    chrono::Local::now().format(&format).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tojson_is_python_json_and_blocks_are_trimmed() {
        let source =
            "{% for m in messages %}\n  {% if m %}{{ m.args | tojson }}{% endif %}|{% endfor %}";
        let template = ChatTemplate::new(source.into(), "test", "", "</s>").unwrap();
        let messages = [json!({"args": {"z": "<a&b>", "a": [1, 2.5]}})];
        let text = template
            .render(&messages, &[], &RenderOptions::default())
            .unwrap();
        assert_eq!(text, r#"{"z": "<a&b>", "a": [1, 2.5]}|"#);
    }

    #[test]
    fn raise_exception_and_python_methods_work() {
        let source = "{% if messages[0].role.startswith('sys') %}{{ raise_exception('no system') }}{% endif %}ok";
        let template = ChatTemplate::new(source.into(), "test", "", "").unwrap();
        let error = template
            .render(&[json!({"role": "system"})], &[], &RenderOptions::default())
            .unwrap_err();
        assert!(error.to_string().contains("no system"), "{error}");
        assert_eq!(
            template
                .render(&[json!({"role": "user"})], &[], &RenderOptions::default())
                .unwrap(),
            "ok"
        );
    }
}
