//! The traffic `harness record` relayed, written as a scenario: the server
//! under `servers:` with the command it was started with, each
//! `tools/call` as a step (calls that were in flight together as one
//! `parallel` step) with its arguments as sent, and each answer as
//! `recorded:`, so `harness run` replays the traffic against the server
//! (or a new version of it) and reports the drift as for imported
//! sessions (docs/replay.md).
//!
//! An answer is recorded as the harness itself would show it to a model
//! (`mcp::client::tool_result`: the text of its content blocks, images
//! counted, a JSON-RPC error in the same words), so a server that answers
//! the same today replays as `same`. A call of a tool the server's
//! `tools/list` did not name is not replayed
//! (the harness answers a call of an unknown tool itself); when the client
//! never listed the tools, an error answer expects the error (`expect: {
//! error: true }`), as a scenario must to call an unknown tool. Calls the client cancelled, or that
//! were never answered, are not replayed: the top comment lists them and
//! `replay.skipped` counts them.

use std::path::Path;

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::write::comment;
use super::yaml::to_yaml;
use crate::mcp::client::jsonrpc_error;
use crate::mcp::client::tool_result;
use crate::mcp::record::Answer;
use crate::mcp::record::Traffic;
use crate::tools::Content;

/// Seconds the replayed server gets to start.
const STARTUP_TIMEOUT: u64 = 30;

/// The scenario of `traffic`, relayed to the server `server` started by
/// `command` in `cwd`, and how many calls it replays; `None` when no call
/// can be replayed (a scenario needs a step).
pub(crate) fn scenario(
    server: &str,
    command: &[String],
    cwd: &Path,
    traffic: &Traffic,
) -> Option<(String, usize)> {
    let mut steps: Vec<Vec<Value>> = Vec::new();
    let mut last_step = None;
    let mut left_out = Vec::new();
    for (n, call) in traffic.calls.iter().enumerate() {
        let unlisted = !traffic.listed.is_empty() && !traffic.listed.contains(&call.name);
        let answered = matches!(call.answer, Answer::Result(_) | Answer::Error { .. });
        if unlisted && answered {
            left_out.push(format!(
                "call {}: {} {} — the server does not list this tool, and the harness answers a \
                 call of an unknown tool itself, so a replay would compare its words, not the \
                 server's",
                n + 1,
                comment(&call.name),
                comment(&call.arguments.to_string())
            ));
            continue;
        }
        let result = match &call.answer {
            Answer::Result(result) => tool_result(result),
            Answer::Error {
                code,
                message,
                data,
            } => jsonrpc_error(
                i32::try_from(*code).unwrap_or(i32::MIN),
                message,
                data.as_ref(),
            ),
            Answer::Cancelled | Answer::Unanswered => {
                let why = if call.answer == Answer::Cancelled {
                    "the client cancelled it"
                } else {
                    "it was never answered"
                };
                left_out.push(format!(
                    "call {}: {} {} — {why}",
                    n + 1,
                    comment(&call.name),
                    comment(&call.arguments.to_string())
                ));
                continue;
            }
        };
        let images = result
            .content
            .iter()
            .filter(|c| matches!(c, Content::Image { .. }))
            .count();
        let mut recorded = Map::new();
        recorded.insert("is_error".to_owned(), Value::Bool(result.is_error));
        recorded.insert(
            "text".to_owned(),
            Value::from(crate::tools::contract::text_of(&result.content)),
        );
        if images > 0 {
            recorded.insert("images".to_owned(), Value::from(images));
        }
        let mut step = Map::new();
        step.insert("call".to_owned(), Value::from(call.name.as_str()));
        if call.arguments.as_object().is_none_or(|a| !a.is_empty()) {
            step.insert("args".to_owned(), escaped(&call.arguments));
        }
        if result.is_error && traffic.listed.is_empty() {
            // The tools are not known (the client never listed them): an
            // error may be an unknown tool's, which a scenario calls on
            // purpose only with this (else it would not load).
            step.insert("expect".to_owned(), json!({ "error": true }));
        }
        step.insert("recorded".to_owned(), Value::Object(recorded));
        if last_step == Some(call.step) {
            if let Some(current) = steps.last_mut() {
                current.push(Value::Object(step));
            }
        } else {
            steps.push(vec![Value::Object(step)]);
            last_step = Some(call.step);
        }
    }
    if steps.is_empty() {
        return None;
    }
    let calls: usize = steps.iter().map(Vec::len).sum();
    let model: Vec<Value> = steps
        .into_iter()
        .map(|mut step| {
            if step.len() == 1 {
                step.remove(0)
            } else {
                json!({ "parallel": step })
            }
        })
        .collect();
    let timeout = 60 + 2 * calls as u64;
    let command: Vec<Value> = command.iter().map(|a| Value::from(a.as_str())).collect();
    let cwd = cwd.to_string_lossy();
    let mut replay = Map::new();
    replay.insert("cwd".to_owned(), Value::from(cwd.as_ref()));
    replay.insert("timeout".to_owned(), Value::from(timeout));
    if !left_out.is_empty() {
        replay.insert("skipped".to_owned(), Value::from(left_out.len()));
    }
    replay.insert("source".to_owned(), Value::from("harness record"));
    // A server author records to catch a changed answer, not only a
    // changed error status.
    replay.insert("require".to_owned(), Value::from("text"));
    let body = json!({
        "tags": ["recorded", server],
        "servers": {
            server: { "command": command, "startup_timeout": STARTUP_TIMEOUT }
        },
        "tools": [server],
        "replay": Value::Object(replay),
        "model": model,
    });
    let mut header = vec![format!(
        "# Recorded by `harness record` in {}: {} calls relayed to the server, {calls} replayed \
         here, each with the answer the client got.",
        comment(&cwd),
        traffic.calls.len()
    )];
    header.push(
        "# `harness run` replays them against the server and reports the drift (docs/replay.md); \
         a call whose text differs from the recorded one fails (`require: text`: `error` fails \
         only on a changed error status, `none` never)."
            .to_owned(),
    );
    if !left_out.is_empty() {
        let n = left_out.len();
        header.push(format!(
            "# Not replayed ({n} {}):",
            if n == 1 { "call" } else { "calls" }
        ));
        header.extend(left_out.iter().map(|line| format!("#   {line}")));
    }
    Some((format!("{}\n{}", header.join("\n"), to_yaml(&body)), calls))
}

/// The server's command as a scenario in `out` writes it: as typed (a
/// program without a `/` is looked up on `PATH` when replayed, an absolute
/// path stays one), except that the program or an argument that names a
/// file relative to `cwd` (`./server.py`, `python3 server.py`) is written
/// `${dir}/…` relative to `out`, since the replay starts the server in its
/// own workspace; and `${` is written `$${`, so nothing is expanded that
/// was not a variable. `cwd` and `out` are absolute.
pub(crate) fn suite_command(command: &[String], cwd: &Path, out: &Path) -> Vec<String> {
    command
        .iter()
        .enumerate()
        .map(|(n, word)| {
            let relative_file = !word.starts_with('-')
                && !Path::new(word).is_absolute()
                && (n > 0 || word.contains('/'))
                && cwd.join(word).is_file();
            if relative_file {
                let path = path_from(&lexical(out), &lexical(&cwd.join(word)));
                format!("${{dir}}/{}", path.replace("${", "$${"))
            } else {
                word.replace("${", "$${")
            }
        })
        .collect()
}

/// `path` with `.` and `..` taken out by its words alone.
fn lexical(path: &Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The relative path from the directory `from` to `to`, both absolute
/// and lexical, with `/` between its parts.
fn path_from(from: &Path, to: &Path) -> String {
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = to.components().collect();
    let shared = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let ups = std::iter::repeat_n("..".to_owned(), from.len() - shared);
    let downs = to[shared..]
        .iter()
        .map(|c| c.as_os_str().to_string_lossy().into_owned());
    ups.chain(downs).collect::<Vec<_>>().join("/")
}

/// `value` with every `${` in its strings written `$${`, so the call
/// sends the text as recorded (scenario variables are `${name}`).
fn escaped(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::from(crate::base::vars::escape(s)),
        Value::Array(items) => Value::Array(items.iter().map(escaped).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), escaped(v))).collect())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
#[path = "traffic_tests.rs"]
mod tests;
