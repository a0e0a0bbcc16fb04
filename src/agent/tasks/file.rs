//! Task files: Rollscope's own task JSONL, and GSM8K-shaped files.
//!
//! Our format is one `Task` per line, exactly as `crate::trajectory::Task` serialises:
//!
//! ```json
//! {"id": "shop-001", "source": "my-tasks",
//!  "prompt": [{"role": "system", "content": "…"}, {"role": "user", "content": "A pen costs $3. …"}],
//!  "ground_truth": "12", "reference_solution": "4*3 = <<4*3=12>>12\n#### 12", "difficulty": 2,
//!  "tools": [{"type": "function", "function": {"name": "calculator", "description": "…",
//!             "parameters": {"type": "object", "properties": {"expression": {"type": "string"}},
//!                            "required": ["expression"]}}}]}
//! ```
//!
//! `id`, `source` and `prompt` are required; the rest is optional, and unknown fields are
//! kept. `examples/tasks.example.jsonl` is a complete example. A line with `question` and
//! `answer` instead is read as a GSM8K row.

use super::gsm8k;
use crate::formats::json_lines;
use crate::trajectory::Task;
use std::path::Path;

/// Reads a task file: our `Task` lines and GSM8K rows, in any mix.
pub fn load(path: &Path) -> anyhow::Result<Vec<Task>> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| anyhow::anyhow!("cannot read {}: {error}", path.display()))?;
    let origin = path.display().to_string();
    let stem = path
        .file_stem()
        .map_or("file".into(), |stem| stem.to_string_lossy().into_owned());
    let mut tasks = Vec::new();
    for (line, row) in json_lines(&text, &origin).map_err(anyhow::Error::msg)? {
        let is_gsm8k = row.get("question").is_some() && row.get("answer").is_some();
        let task = if is_gsm8k {
            gsm8k::task_from_row(format!("gsm8k-{stem}-{:04}", tasks.len()), &row)
        } else {
            serde_json::from_value::<Task>(row).map_err(|error| {
                format!("not a task (needs `id`, `source`, `prompt`) or a GSM8K row (`question`, `answer`): {error}")
            })
        };
        tasks.push(task.map_err(|problem| anyhow::anyhow!("{origin}:{line}: {problem}"))?);
    }
    anyhow::ensure!(!tasks.is_empty(), "{origin}: no tasks in the file");
    Ok(tasks)
}
