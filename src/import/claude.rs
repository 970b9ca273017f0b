//! Claude Code's JSONL transcripts: lines of `type` `user` or `assistant`
//! linked by `uuid`/`parentUuid`, each with `cwd` and a `message` whose
//! content blocks are `text`, `thinking`, `tool_use {id, name, input}`
//! (assistant) or `tool_result {tool_use_id, content, is_error}` (user).
//! One response may be written as several lines with the same
//! `message.id`; its calls form one batch. Side chains (sub-agents) are
//! left out. The tools map onto ours as docs/replay.md lists.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Map;
use serde_json::Value;

use super::lines::Branch;
use super::lines::Line;
use super::lines::for_each_line;
use super::lines::too_long;
use super::lines::unreadable;
use super::paths::PathMap;
use super::session::Call;
use super::session::Recording;
use super::session::Sidecars;
use super::session::Skipped;
use super::session::content_text;
use super::session::short_json;

/// Entry types that carry no tool call.
const OTHER_ENTRIES: [&str; 5] = [
    "summary",
    "system",
    "file-history-snapshot",
    "queue-operation",
    "progress",
];

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    #[serde(rename = "type")]
    kind: Option<String>,
    uuid: Option<String>,
    cwd: Option<String>,
    #[serde(default)]
    is_sidechain: bool,
    message: Option<Message>,
}

#[derive(Deserialize)]
struct Message {
    id: Option<String>,
    #[serde(default)]
    content: Value,
}

/// What an import says of an edit with `replace_all: true`.
const REPLACE_ALL_NOTE: &str =
    "replace_all has no counterpart (edit replaces one unique match); replayed as one replacement";

/// A Claude Code call mapped onto one of ours: the tool, its arguments,
/// and what could not be kept.
fn map_call(
    name: &str,
    input: &Value,
    bash_timeout: f64,
) -> Result<(String, Value, Option<String>), String> {
    let get = |k: &str| input.get(k).cloned();
    let mut args = Map::new();
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v
            && !v.is_null()
        {
            args.insert(k.to_owned(), v);
        }
    };
    let mut note = None;
    let tool = match name {
        "Read" => {
            put("path", get("file_path"));
            put("offset", get("offset"));
            put("limit", get("limit"));
            "read"
        }
        "Write" => {
            put("path", get("file_path"));
            put("content", get("content"));
            "write"
        }
        "Edit" | "MultiEdit" => {
            put("path", get("file_path"));
            let edits: Vec<Value> = if name == "Edit" {
                vec![input.clone()]
            } else {
                input
                    .get("edits")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            };
            let mut mapped = Vec::new();
            for e in &edits {
                if e.get("replace_all").and_then(Value::as_bool) == Some(true) {
                    note = Some(REPLACE_ALL_NOTE.to_owned());
                }
                mapped.push(serde_json::json!({
                    "oldText": e.get("old_string").cloned().unwrap_or(Value::Null),
                    "newText": e.get("new_string").cloned().unwrap_or(Value::Null),
                }));
            }
            put("edits", Some(Value::Array(mapped)));
            "edit"
        }
        "Bash" => {
            put("command", get("command"));
            // Claude Code's timeout is in milliseconds.
            let secs = input
                .get("timeout")
                .and_then(Value::as_f64)
                .map_or(bash_timeout, |ms| ms / 1000.0);
            put("timeout", Some(Value::from(secs)));
            "bash"
        }
        "Grep" => {
            put("pattern", get("pattern"));
            put("path", get("path"));
            put("glob", get("glob"));
            put("ignoreCase", get("-i"));
            put("context", get("-C"));
            put("limit", get("head_limit"));
            let mode = input
                .get("output_mode")
                .and_then(Value::as_str)
                .unwrap_or("files_with_matches");
            if mode != "content" {
                note = Some(format!(
                    "output_mode {mode} has no counterpart (grep lists matching lines)"
                ));
            }
            "grep"
        }
        "Glob" => {
            put("pattern", get("pattern"));
            put("path", get("path"));
            "find"
        }
        "LS" => {
            put("path", get("path"));
            "ls"
        }
        other => {
            return Err(format!(
                "Claude Code's `{other}` has no counterpart among this harness's tools"
            ));
        }
    };
    Ok((tool.to_owned(), Value::Object(args), note))
}

/// Reads the transcript at `path` along `branch`.
pub fn read(
    path: &Path,
    branch: &Branch,
    bash_timeout: f64,
    sidecars: Sidecars,
) -> Result<Recording, String> {
    let mut rec = Recording::new("claude", Some(sidecars));
    let mut map = PathMap::default();
    let mut seen_ids: HashMap<String, usize> = HashMap::new();
    let mut last_batch_message: Option<String> = None;
    for_each_line(path, |number, line| {
        rec.lines = number;
        let entry = match line {
            Line::TooLong => {
                rec.note(number, too_long());
                return;
            }
            Line::Text {
                bytes,
                last_unterminated,
            } => match serde_json::from_slice::<Entry>(bytes) {
                Ok(entry) => entry,
                Err(err) => {
                    rec.note(number, unreadable(&err, last_unterminated));
                    return;
                }
            },
        };
        let kind = entry.kind.as_deref().unwrap_or("");
        if entry.is_sidechain || !branch.contains(entry.uuid.as_deref()) {
            return;
        }
        if kind != "user" && kind != "assistant" {
            if !OTHER_ENTRIES.contains(&kind) {
                rec.note(number, format!("unknown entry type `{kind}`; skipped"));
            }
            return;
        }
        if rec.cwd.is_none()
            && let Some(cwd) = &entry.cwd
        {
            rec.cwd = Some(cwd.clone());
            map = PathMap::new(Some(cwd));
        }
        let Some(message) = entry.message else {
            return;
        };
        let Value::Array(blocks) = &message.content else {
            return;
        };
        if kind == "assistant" {
            let mut batch = Vec::new();
            for block in blocks {
                if block.get("type").and_then(Value::as_str) != Some("tool_use") {
                    continue;
                }
                let id = block
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                let name = block
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                let input = block.get("input").cloned().unwrap_or(Value::Null);
                if let Some(first) = seen_ids.get(&id) {
                    rec.note(
                        number,
                        format!(
                            "call id `{id}` was already used on line {first}; this call is skipped"
                        ),
                    );
                    rec.skipped.push(Skipped {
                        line: number,
                        tool: name,
                        reason: format!("its id `{id}` was used before"),
                        args: short_json(&input),
                    });
                    continue;
                }
                seen_ids.insert(id.clone(), number);
                match map_call(&name, &input, bash_timeout) {
                    Ok((tool, args, note)) => {
                        let syncable = false;
                        batch.push(Call {
                            id,
                            tool,
                            args: map.args(&args),
                            line: number,
                            result: None,
                            syncable,
                            note,
                        });
                    }
                    Err(reason) => {
                        rec.note(number, format!("{reason}; its call is skipped"));
                        rec.skipped.push(Skipped {
                            line: number,
                            tool: name,
                            reason,
                            args: short_json(&input),
                        });
                    }
                }
            }
            if batch.is_empty() {
                return;
            }
            // Lines of one response (one `message.id`) form one batch.
            let extend = message.id.is_some() && message.id == last_batch_message;
            last_batch_message = message.id.clone();
            rec.push_batch(batch, extend);
            return;
        }
        for block in blocks {
            if block.get("type").and_then(Value::as_str) != Some("tool_result") {
                continue;
            }
            let id = block
                .get("tool_use_id")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let content = content_text(block.get("content").unwrap_or(&Value::Null));
            let is_error = block
                .get("is_error")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let skipped = seen_ids.contains_key(&id);
            rec.answer(number, &id, is_error, content, skipped);
        }
    })
    .map_err(|err| format!("cannot read {}: {err}", path.display()))?;
    rec.finish();
    Ok(rec)
}
