//! pi's session format: one JSON object a line; a `session` header with
//! `cwd`; `message` entries whose `message.role` is `user`, `assistant`
//! (content blocks `text`, `thinking`, `toolCall {id, name, arguments}`) or
//! `toolResult {toolCallId, toolName, content, isError}`; and entries that
//! do not change which calls were made (`compaction`, `model_change`,
//! `thinking_level_change`, `branch_summary`, `custom`, `custom_message`,
//! `label`, `session_info`). Tool names are ours already.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::tools::ALL_TOOL_NAMES;

use super::lines::Branch;
use super::paths::PathMap;
use super::paths::subdir_of;
use super::session::CLAUDE_ENTRY_TYPES;
use super::session::Call;
use super::session::Elsewhere;
use super::session::Foreign;
use super::session::MAX_BASH_SECS;
use super::session::Outcome;
use super::session::PI_ENTRY_TYPES;
use super::session::RawCall;
use super::session::Recording;
use super::session::Sidecars;
use super::session::content_text;
use super::session::read_entries;
use crate::scenario::replay::AnswerForm;
use crate::scenario::replay::FailureKind;

#[derive(Deserialize)]
struct Entry {
    #[serde(rename = "type")]
    kind: Option<String>,
    id: Option<String>,
    cwd: Option<String>,
    timestamp: Option<String>,
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
pub(crate) fn read(
    path: &Path,
    branch: &Branch,
    bash_timeout: f64,
    sidecars: Sidecars,
    top: Option<&str>,
) -> Result<Recording, String> {
    let mut rec = Recording::new("pi", Some(sidecars));
    let mut reader = Reader {
        map: PathMap::default(),
        top,
        start: None,
        branch,
        bash_timeout,
        header: None,
        dated: false,
        foreign: Foreign::default(),
    };
    read_entries(path, &mut rec, branch, |rec, number, entry| {
        reader.entry(rec, number, entry);
    })?;
    match reader.header {
        None if rec.lines > 0 => rec.note(
            1,
            "no `session` header line: the session's working directory is unknown, so no path \
             becomes `${workspace}/…` and absolute paths are replayed as recorded",
        ),
        Some((line, false)) => rec.note(
            line,
            "the `session` header has no `cwd`: the session's working directory is unknown, so \
             no path becomes `${workspace}/…` and absolute paths are replayed as recorded",
        ),
        _ => {}
    }
    reader.foreign.finish(
        &mut rec,
        path,
        "Claude Code transcript (lines of type `user` and `assistant`); import it with \
         `harness import claude`",
    )?;
    rec.finish();
    Ok(rec)
}

/// What reading one session keeps between lines.
struct Reader<'a> {
    map: PathMap,
    /// The repository's top when the session began in a subdirectory of
    /// it ([`crate::run::env::git::session_root`]).
    top: Option<&'a str>,
    /// That subdirectory, as recorded: where pi's tools started.
    start: Option<String>,
    branch: &'a Branch,
    bash_timeout: f64,
    /// The header's line, and whether it had a `cwd`.
    header: Option<(usize, bool)>,
    /// Whether an entry after the header gave the session's first time.
    dated: bool,
    foreign: Foreign,
}

/// An RFC 3339 time in UTC as JavaScript's `toISOString` writes it
/// (`2025-12-08T22:41:05.306Z`), so that two of them compare as text.
fn comparable(time: &str) -> bool {
    time.len() == 24 && time.ends_with('Z') && time.as_bytes()[10] == b'T'
}

impl Reader<'_> {
    fn entry(&mut self, rec: &mut Recording, number: usize, entry: Entry) {
        let kind = entry.kind.as_deref().unwrap_or("");
        if kind == "session" {
            if self.header.is_none() {
                self.header = Some((number, entry.cwd.is_some()));
                rec.cwd = entry.cwd.clone();
                rec.started = entry.timestamp.clone();
                self.start = entry
                    .cwd
                    .clone()
                    .filter(|cwd| self.top.is_some_and(|top| subdir_of(cwd, top).is_some()));
                self.map = PathMap::new(if self.start.is_some() {
                    self.top
                } else {
                    entry.cwd.as_deref()
                });
            }
            return;
        }
        if !self.branch.contains(entry.id.as_deref(), number) {
            // Calls on a branch the session left are counted there.
            if let Some(Value::Array(blocks)) = entry.message.as_ref().map(|m| &m.content) {
                let calls = blocks
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"));
                for block in calls {
                    let id = block.get("id").and_then(Value::as_str).unwrap_or("");
                    rec.elsewhere(number, id, Elsewhere::OtherBranch);
                }
            }
            return;
        }
        if !self.dated {
            // A session branched from another (`branchedFrom`) has a
            // header written when it branched, after the messages it
            // carries over: the session began at the earlier time.
            if let Some(time) = entry.timestamp {
                self.dated = true;
                let earlier = match rec.started.as_deref() {
                    Some(header) => {
                        comparable(header) && comparable(&time) && header < time.as_str()
                    }
                    None => false,
                };
                if !earlier {
                    rec.started = Some(time);
                }
            }
        }
        if kind != "message" {
            if CLAUDE_ENTRY_TYPES.contains(&kind) {
                self.foreign.see(number, kind);
            } else if !PI_ENTRY_TYPES.contains(&kind) {
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
                let batch: Vec<Call> = blocks
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
                    .filter_map(|block| {
                        let raw = rec.take_call(number, block, "arguments")?;
                        self.call(rec, &raw)
                    })
                    .collect();
                rec.push_batch(batch, None);
            }
            Some("toolResult") => {
                let id = message.tool_call_id.unwrap_or_default();
                let (text, images) = content_text(&message.content);
                let outcome = Outcome {
                    is_error: message.is_error,
                    text,
                    images,
                    ..Outcome::default()
                };
                let tool = rec.find(&id).map(|c| c.tool.clone());
                rec.answer(number, &id, answer(tool.as_deref(), outcome));
            }
            _ => {}
        }
    }

    /// The call to replay, or `None` when its tool is not one of ours.
    fn call(&self, rec: &mut Recording, raw: &RawCall) -> Option<Call> {
        let name = raw.name.as_str();
        if !ALL_TOOL_NAMES.contains(&name) {
            rec.skip(
                raw,
                format!("tool `{name}` is not one of this harness's tools; its call is skipped"),
                "not one of this harness's tools".to_owned(),
            );
            return None;
        }
        let mut args = match &self.start {
            Some(start) => self.map.args(&started_in(start, name, &raw.args)),
            None => self.map.args(&raw.args),
        };
        let mut note = None;
        if name == "bash"
            && let Value::Object(obj) = &mut args
        {
            let recorded = obj.get("timeout").filter(|t| !t.is_null());
            let usable = recorded
                .and_then(Value::as_f64)
                .filter(|t| t.is_finite() && *t > 0.0 && *t <= MAX_BASH_SECS);
            if let (Some(t), None) = (recorded, usable) {
                note = Some(format!(
                    "its recorded timeout {t} is not a positive number of seconds up to a day; \
                     given {} seconds",
                    self.bash_timeout
                ));
            }
            if usable.is_none() {
                obj.insert("timeout".to_owned(), Value::from(self.bash_timeout));
            }
        }
        let mut call = raw.replayed_as(name, args, note);
        call.syncable =
            name == "read" && raw.args.get("offset").is_none() && raw.args.get("limit").is_none();
        Some(call)
    }
}

/// The arguments of a call of pi's tool `name`, made when pi stood in
/// `start` (the session's directory, a subdirectory of the workspace),
/// as they read from the workspace's top: a command runs in `start`, a
/// relative path is below it, and a search without a path searches it.
fn started_in(start: &str, name: &str, args: &Value) -> Value {
    let mut args = args.clone();
    let Value::Object(obj) = &mut args else {
        return args;
    };
    if name == "bash" {
        if let Some(command) = obj.get("command").and_then(Value::as_str) {
            let command = format!("cd {} && {command}", super::shell::quote(start));
            obj.insert("command".to_owned(), Value::from(command));
        }
        return args;
    }
    match obj.get("path").and_then(Value::as_str) {
        Some(path) if !path.starts_with('/') && !path.starts_with('~') => {
            let joined = super::paths::join_relative(start, path);
            obj.insert("path".to_owned(), Value::from(joined));
        }
        None if matches!(name, "grep" | "find" | "ls") => {
            obj.insert("path".to_owned(), Value::from(start));
        }
        _ => {}
    }
    args
}

/// pi's tools are ours, but for the wording of a successful change: an
/// edit or write that succeeded answers `done`, and a read's answer is its
/// text without a truncation or continuation notice.
fn answer(tool: Option<&str>, mut outcome: Outcome) -> Outcome {
    if outcome.is_error {
        // pi's failures are worded as ours: their kind is told the same way.
        outcome.answer =
            failure_kind(&outcome.text).map(|k| (AnswerForm::Failure, k.as_str().to_owned()));
        return outcome;
    }
    match tool {
        Some("edit" | "write") => outcome.answer = Some((AnswerForm::Done, String::new())),
        Some("read") if outcome.images == 0 => {
            // The notice paragraph: `[…]`, or older pi's `... (…)`.
            let at = outcome
                .text
                .rfind("\n\n[")
                .into_iter()
                .chain(outcome.text.rfind("\n\n... ("))
                .max();
            let text = match at {
                Some(at) if super::session::read_notice(&outcome.text).is_some() => {
                    outcome.text[..at].to_owned()
                }
                _ => outcome.text.clone(),
            };
            outcome.answer = Some((AnswerForm::Text, text));
        }
        _ => {}
    }
    outcome
}

/// The kind of one of pi's failures, told from its words (a recorded
/// session has no facts, only text).
fn failure_kind(text: &str) -> Option<FailureKind> {
    let kinds = [
        ("Could not find the exact text", FailureKind::TextNotFound),
        ("No changes made to ", FailureKind::NoChange),
        ("File not found: ", FailureKind::NoSuchFile),
    ];
    if let Some((_, kind)) = kinds.iter().find(|(p, _)| text.starts_with(p)) {
        return Some(*kind);
    }
    if text.starts_with("Found ") && text.contains(" occurrences of the text in ") {
        return Some(FailureKind::TextNotUnique);
    }
    if text.starts_with("Cannot read ") && text.contains(": it is a directory") {
        return Some(FailureKind::IsADirectory);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_s_continuation_notice_is_presentation_in_either_wording() {
        let answer_of = |text: &str| {
            let outcome = Outcome {
                text: text.to_owned(),
                ..Outcome::default()
            };
            answer(Some("read"), outcome).answer
        };
        let lines = Some((AnswerForm::Text, "line 30\nline 31".to_owned()));
        assert_eq!(
            answer_of("line 30\nline 31\n\n[40 more lines in file. Use offset=32 to continue.]"),
            lines
        );
        assert_eq!(
            answer_of(
                "line 30\nline 31\n\n... (40 more lines not shown. Use offset=32 to continue \
                 reading)"
            ),
            lines
        );
        assert_eq!(
            answer_of("line 30\n\n... (see above)"),
            Some((AnswerForm::Text, "line 30\n\n... (see above)".to_owned()))
        );
    }
}
