//! Claude Code's JSONL transcripts: lines of `type` `user` or `assistant`
//! linked by `uuid`/`parentUuid`, each with `cwd` and a `message` whose
//! content blocks are `text`, `thinking`, `tool_use {id, name, input}`
//! (assistant) or `tool_result {tool_use_id, content, is_error}` (user).
//! One response may be written as several lines with the same
//! `message.id`; its calls form one batch. Side chains (sub-agents) are
//! left out. The tools map onto ours as docs/replay.md lists.

use std::path::Path;

use serde::Deserialize;
use serde_json::Map;
use serde_json::Value;

use super::lines::Branch;
use super::paths::PathMap;
use super::session::CLAUDE_ENTRY_TYPES;
use super::session::Call;
use super::session::Foreign;
use super::session::PI_ENTRY_TYPES;
use super::session::Recording;
use super::session::Sidecars;
use super::session::content_text;
use super::session::read_entries;

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

/// The texts Claude Code records as the result of a call the user
/// rejected or interrupted, and what the import says of such a call: it
/// was not answered, so it is not replayed.
const REFUSALS: [(&str, &str); 3] = [
    (
        "The user doesn't want to proceed with this tool use",
        "the user rejected it",
    ),
    (
        "The user doesn't want to take this action right now",
        "the user rejected it",
    ),
    (
        "[Request interrupted by user for tool use]",
        "the user interrupted it",
    ),
];

/// Why a recorded result does not answer its call, if it does not.
fn refusal(text: &str) -> Option<&'static str> {
    let text = text.trim_start();
    let text = text.strip_prefix("Error: ").unwrap_or(text);
    REFUSALS
        .iter()
        .find(|(prefix, _)| text.starts_with(prefix))
        .map(|(_, why)| *why)
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
    let mut last_batch_message: Option<String> = None;
    let mut foreign = Foreign::default();
    read_entries(path, &mut rec, branch, |rec, number, entry: Entry| {
        let kind = entry.kind.as_deref().unwrap_or("");
        if entry.is_sidechain || !branch.contains(entry.uuid.as_deref()) {
            return;
        }
        if kind != "user" && kind != "assistant" {
            if PI_ENTRY_TYPES.contains(&kind) {
                foreign.see(number, kind);
            } else if !CLAUDE_ENTRY_TYPES.contains(&kind) {
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
            let batch: Vec<Call> = blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
                .filter_map(|block| {
                    let raw = rec.take_call(number, block, "input")?;
                    match map_call(&raw.name, &raw.args, bash_timeout) {
                        Ok((tool, args, note)) => {
                            Some(raw.replayed_as(&tool, map.args(&args), note))
                        }
                        Err(reason) => {
                            rec.skip(&raw, format!("{reason}; its call is skipped"), reason);
                            None
                        }
                    }
                })
                .collect();
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
                .unwrap_or("");
            let content = content_text(block.get("content").unwrap_or(&Value::Null));
            if let Some(why) = refusal(&content.0) {
                rec.unanswered(number, id, why);
                continue;
            }
            let is_error = block
                .get("is_error")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            rec.answer(number, id, is_error, content);
        }
    })?;
    if rec.cwd.is_none() && rec.calls().next().is_some() {
        rec.note(
            1,
            "no line has a `cwd`: the session's working directory is unknown, so no path \
             becomes `${workspace}/…` and absolute paths are replayed as recorded",
        );
    }
    foreign.finish(
        &mut rec,
        "pi session (entries of type `session` and `message`); import it with `harness import pi`",
    );
    rec.finish();
    Ok(rec)
}
