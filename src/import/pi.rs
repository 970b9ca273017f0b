//! pi's session format: one JSON object a line; a `session` header with
//! `cwd`; `message` entries whose `message.role` is `user`, `assistant`
//! (content blocks `text`, `thinking`, `toolCall {id, name, arguments}`) or
//! `toolResult {toolCallId, toolName, content, isError}`; and entries that
//! do not change which calls were made (`compaction`, `model_change`,
//! `thinking_level_change`, `branch_summary`, `custom`, `custom_message`,
//! `label`, `session_info`). Tool names are ours already.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::tools::ALL_TOOL_NAMES;

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
const OTHER_ENTRIES: [&str; 9] = [
    "compaction",
    "model_change",
    "thinking_level_change",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
    "session",
];

#[derive(Deserialize)]
struct Entry {
    #[serde(rename = "type")]
    kind: Option<String>,
    id: Option<String>,
    cwd: Option<String>,
    message: Option<Message>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Message {
    role: Option<String>,
    #[serde(default)]
    content: Value,
    tool_call_id: Option<String>,
    #[serde(default)]
    is_error: bool,
}

/// Reads the session at `path` along `branch`; `bash_timeout` is given to
/// bash calls recorded without a timeout.
pub fn read(
    path: &Path,
    branch: &Branch,
    bash_timeout: f64,
    sidecars: Sidecars,
) -> Result<Recording, String> {
    let mut rec = Recording::new("pi", Some(sidecars));
    let mut map = PathMap::default();
    let mut seen_ids: HashMap<String, usize> = HashMap::new();
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
        one_entry(
            &mut rec,
            &mut map,
            &mut seen_ids,
            branch,
            number,
            entry,
            bash_timeout,
        );
    })
    .map_err(|err| format!("cannot read {}: {err}", path.display()))?;
    rec.finish();
    Ok(rec)
}

#[allow(clippy::too_many_arguments, reason = "one line's context")]
fn one_entry(
    rec: &mut Recording,
    map: &mut PathMap,
    seen_ids: &mut HashMap<String, usize>,
    branch: &Branch,
    number: usize,
    entry: Entry,
    bash_timeout: f64,
) {
    let kind = entry.kind.as_deref().unwrap_or("");
    if kind == "session" {
        if rec.cwd.is_none() {
            rec.cwd = entry.cwd.clone();
            *map = PathMap::new(entry.cwd.as_deref());
        }
        return;
    }
    if !branch.contains(entry.id.as_deref()) {
        return;
    }
    if kind != "message" {
        if !OTHER_ENTRIES.contains(&kind) {
            rec.note(number, format!("unknown entry type `{kind}`; skipped"));
        }
        return;
    }
    let Some(message) = entry.message else {
        rec.note(number, "a `message` entry without a message; skipped");
        return;
    };
    match message.role.as_deref() {
        Some("assistant") => {
            let Value::Array(blocks) = &message.content else {
                return;
            };
            let mut batch = Vec::new();
            for block in blocks {
                if block.get("type").and_then(Value::as_str) != Some("toolCall") {
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
                let raw_args = block.get("arguments").cloned().unwrap_or(Value::Null);
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
                        args: short_json(&raw_args),
                    });
                    continue;
                }
                seen_ids.insert(id.clone(), number);
                if !ALL_TOOL_NAMES.contains(&name.as_str()) {
                    rec.note(
                        number,
                        format!(
                            "tool `{name}` is not one of this harness's tools; its call is skipped"
                        ),
                    );
                    rec.skipped.push(Skipped {
                        line: number,
                        tool: name,
                        reason: "not one of this harness's tools".to_owned(),
                        args: short_json(&raw_args),
                    });
                    continue;
                }
                let mut args = map.args(&raw_args);
                if name == "bash"
                    && let Value::Object(obj) = &mut args
                    && !obj.contains_key("timeout")
                {
                    obj.insert("timeout".to_owned(), Value::from(bash_timeout));
                }
                let syncable = name == "read"
                    && raw_args.get("offset").is_none()
                    && raw_args.get("limit").is_none();
                batch.push(Call {
                    id,
                    tool: name,
                    args,
                    line: number,
                    result: None,
                    syncable,
                    note: None,
                });
            }
            rec.push_batch(batch, false);
        }
        Some("toolResult") => {
            let id = message.tool_call_id.unwrap_or_default();
            let skipped = seen_ids.contains_key(&id);
            rec.answer(
                number,
                &id,
                message.is_error,
                content_text(&message.content),
                skipped,
            );
        }
        _ => {}
    }
}
