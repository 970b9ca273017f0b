//! Gemini CLI's session files (`~/.gemini/tmp/<project hash>/chats/
//! session-*.json`): one pretty-printed JSON document, `{sessionId,
//! projectHash, startTime, lastUpdated, messages: [...]}`, whose messages
//! of `type: "gemini"` hold `toolCalls: [{id, name, args, result, status,
//! resultDisplay, …}]`. The calls of one message are one batch.
//!
//! The document is read as a stream, one message at a time, in two
//! passes: the first finds the working directory, which the file records
//! only as `projectHash` (the SHA-256 of the project's path), by hashing
//! the directories the calls' absolute paths lie in; the second maps the
//! calls (docs/replay.md, "Gemini CLI's tools").

use std::collections::BTreeSet;
use std::fmt;
use std::fs::File;
use std::io;
use std::io::BufReader;
use std::io::Read;
use std::path::Path;

use serde::Deserialize;
use serde::de::DeserializeSeed;
use serde::de::IgnoredAny;
use serde::de::MapAccess;
use serde::de::SeqAccess;
use serde::de::Visitor;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;
use sha2::Digest;
use sha2::Sha256;

use super::edits;
use super::paths::PathMap;
use super::paths::join_relative;
use super::paths::mapped_relative;
use super::session::Call;
use super::session::MAX_BASH_SECS;
use super::session::Outcome;
use super::session::Recording;
use super::session::Sidecars;
use super::shell;
use crate::scenario::replay::AnswerForm;
use crate::scenario::replay::FailureKind;

/// One message of the file.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Message {
    #[serde(default)]
    id: Option<String>,
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ToolCall>,
}

/// One line of the JSON-lines layout of newer Gemini CLI versions: the
/// session's metadata first, then one message a line, `{"$set": {…}}`
/// updates of the metadata and `{"$rewindTo": ID}` when the user rewound
/// the conversation to a message.
#[derive(Deserialize)]
struct LineEntry {
    #[serde(default, rename = "projectHash")]
    project_hash: Option<String>,
    #[serde(default, rename = "$rewindTo")]
    rewind_to: Option<String>,
    #[serde(default, rename = "$set")]
    set: Option<Value>,
    #[serde(flatten)]
    message: Message,
}

/// What reading a session hands on, in order.
enum Item {
    /// A message, on the line it begins on.
    Message(usize, Message),
    /// The conversation was rewound to the message with this id.
    Rewind(usize, String),
    /// A line that is not an entry, and why.
    Bad(usize, String),
}

/// One tool call with its result.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolCall {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    args: Value,
    #[serde(default)]
    result: Value,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    result_display: Value,
}

/// A reader that counts the newlines read, so that a message's line can
/// be told.
struct Counting<R> {
    inner: R,
    lines: std::rc::Rc<std::cell::Cell<usize>>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let newlines = memchr::memchr_iter(b'\n', &buf[..n]).count();
        self.lines.set(self.lines.get() + newlines);
        Ok(n)
    }
}

/// A message as read, or why it could not be read.
type ReadMessage = Result<Message, String>;

/// What the top of the document holds, and each message as it is read.
struct Top<'a, F: FnMut(usize, ReadMessage)> {
    each: &'a mut F,
    lines: std::rc::Rc<std::cell::Cell<usize>>,
    project_hash: &'a mut Option<String>,
    messages: &'a mut bool,
}

impl<'de, F: FnMut(usize, ReadMessage)> Visitor<'de> for Top<'_, F> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Gemini CLI session (a JSON object with `messages`)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "projectHash" => *self.project_hash = map.next_value::<Option<String>>()?,
                "messages" => {
                    *self.messages = true;
                    map.next_value_seed(Messages {
                        each: &mut *self.each,
                        lines: std::rc::Rc::clone(&self.lines),
                    })?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// The `messages` array, handed on one message at a time: each is first
/// read as raw text (which takes any depth) and then as a message, so that
/// one that cannot be read (nested deeper than the JSON reader goes) is a
/// problem of its own, not the end of the session.
struct Messages<'a, F: FnMut(usize, ReadMessage)> {
    each: &'a mut F,
    lines: std::rc::Rc<std::cell::Cell<usize>>,
}

impl<'de, F: FnMut(usize, ReadMessage)> DeserializeSeed<'de> for Messages<'_, F> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(usize, ReadMessage)> Visitor<'de> for Messages<'_, F> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of messages")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        loop {
            let before = self.lines.get();
            let Some(raw) = seq.next_element::<Box<serde_json::value::RawValue>>()? else {
                return Ok(());
            };
            // A pretty-printed message begins on the line after the one
            // the last ended on.
            let line = (before + 2).min(self.lines.get() + 1);
            let message =
                serde_json::from_str::<Message>(raw.get()).map_err(|err| unreadable(&err));
            drop(raw);
            (self.each)(line, message);
        }
    }
}

/// The problem of a message that cannot be read: what is wrong, without
/// the position inside the message (the message's line is given).
fn unreadable(err: &serde_json::Error) -> String {
    let text = err.to_string();
    let what = text
        .strip_suffix(&format!(" at line {} column {}", err.line(), err.column()))
        .unwrap_or(&text);
    format!("this message cannot be read ({what}); its calls are skipped")
}

/// Whether the session at `path` is in the JSON-lines layout: its first
/// line is a whole JSON object without `messages`.
fn is_lines(path: &Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    let mut first = String::new();
    let mut reader = BufReader::new(Read::take(file, 1 << 20));
    while first.trim().is_empty() {
        first.clear();
        match std::io::BufRead::read_line(&mut reader, &mut first) {
            Ok(0) | Err(_) => return false,
            Ok(_) => {}
        }
    }
    matches!(
        serde_json::from_str::<Value>(first.trim()),
        Ok(Value::Object(map)) if !map.contains_key("messages")
    )
}

/// Reads the session at `path` in either layout, handing on each message,
/// rewind and unreadable line; the `projectHash`, whether there were
/// messages at all, and the lines read.
fn items(path: &Path, mut each: impl FnMut(Item)) -> Result<(Option<String>, bool, usize), String> {
    if !is_lines(path) {
        return stream(path, |line, message| match message {
            Ok(message) => each(Item::Message(line, message)),
            Err(why) => each(Item::Bad(line, why)),
        });
    }
    let mut hash = None;
    let mut lines = 0;
    let mut header = true;
    super::lines::for_each_line(path, |number, line| {
        lines = number;
        let super::lines::Line::Text {
            bytes,
            last_unterminated,
        } = line
        else {
            each(Item::Bad(number, super::lines::too_long()));
            return;
        };
        match serde_json::from_slice::<LineEntry>(bytes) {
            Ok(entry) => {
                if let Some(h) = entry.project_hash.or_else(|| {
                    entry
                        .set
                        .as_ref()
                        .and_then(|s| s.get("projectHash"))
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                }) {
                    hash = Some(h);
                }
                if let Some(to) = entry.rewind_to {
                    each(Item::Rewind(number, to));
                } else if !header || entry.message.kind.is_some() {
                    each(Item::Message(number, entry.message));
                }
                header = false;
            }
            // A line of JSON nested deeper than the reader goes.
            Err(err) if !last_unterminated && err.to_string().starts_with("recursion limit") => {
                each(Item::Bad(number, unreadable(&err)));
            }
            Err(err) => each(Item::Bad(
                number,
                super::lines::unreadable(&err, last_unterminated),
            )),
        }
    })
    .map_err(|err| format!("cannot read {}: {err}", path.display()))?;
    Ok((hash, true, lines))
}

/// Reads the document at `path`, handing each message (with the line it
/// begins on) to `each`; the `projectHash`, and whether there was a
/// `messages` list.
fn stream(
    path: &Path,
    mut each: impl FnMut(usize, ReadMessage),
) -> Result<(Option<String>, bool, usize), String> {
    let file = File::open(path).map_err(|err| format!("cannot read {}: {err}", path.display()))?;
    let lines = std::rc::Rc::new(std::cell::Cell::new(0));
    let reader = Counting {
        inner: BufReader::with_capacity(1 << 16, file),
        lines: std::rc::Rc::clone(&lines),
    };
    let mut project_hash = None;
    let mut messages = false;
    let mut de = serde_json::Deserializer::from_reader(reader);
    serde::Deserializer::deserialize_map(
        &mut de,
        Top {
            each: &mut each,
            lines: std::rc::Rc::clone(&lines),
            project_hash: &mut project_hash,
            messages: &mut messages,
        },
    )
    .and_then(|()| de.end())
    .map_err(|err| {
        format!(
            "{}: not a Gemini CLI session ({err}); a Gemini CLI session is one JSON object with \
             `messages`",
            path.display()
        )
    })?;
    Ok((project_hash, messages, lines.get() + 1))
}

/// Argument keys of Gemini CLI's tools that hold a path.
const PATH_KEYS: [&str; 4] = ["file_path", "absolute_path", "path", "directory"];

/// The working directory: the directory, among those the calls' absolute
/// paths lie in, whose SHA-256 is `hash`.
fn find_cwd(hash: &str, dirs: &BTreeSet<String>) -> Option<String> {
    dirs.iter()
        .find(|dir| {
            let digest = Sha256::digest(dir.as_bytes());
            let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
            hex == hash
        })
        .cloned()
}

/// Every directory an absolute path of `args` lies in (and the path
/// itself, which may be a directory).
fn collect_dirs(args: &Value, dirs: &mut BTreeSet<String>) {
    let Value::Object(map) = args else {
        return;
    };
    for key in PATH_KEYS {
        if let Some(path) = map.get(key).and_then(Value::as_str)
            && path.starts_with('/')
        {
            let mut at = path.trim_end_matches('/');
            while !at.is_empty() && dirs.len() < 100_000 {
                dirs.insert(at.to_owned());
                at = match at.rfind('/') {
                    Some(i) => &at[..i],
                    None => "",
                };
            }
        }
    }
}

/// Reads the session at `path`.
pub(crate) fn read(
    path: &Path,
    bash_timeout: f64,
    sidecars: Sidecars,
) -> Result<Recording, String> {
    let mut dirs = BTreeSet::new();
    let (hash, messages, _) = items(path, |item| {
        if let Item::Message(_, message) = item {
            for call in &message.tool_calls {
                collect_dirs(&call.args, &mut dirs);
            }
        }
    })?;
    let mut rec = Recording::new("gemini", Some(sidecars));
    if !messages {
        rec.note(1, "the session has no `messages`: nothing to import");
    }
    let cwd = hash.as_deref().and_then(|h| find_cwd(h, &dirs));
    if cwd.is_none() && messages {
        rec.note(
            1,
            "the session records its project only as a hash (`projectHash`), and no directory \
             of the calls' paths has that hash: the working directory is unknown, so no path \
             becomes `${workspace}/…` and absolute paths are replayed as recorded",
        );
    }
    rec.cwd.clone_from(&cwd);
    let map = PathMap::new(cwd.as_deref());
    // Each message's id, with the batches made up to and with it.
    let mut order: Vec<(Option<String>, usize)> = Vec::new();
    let (_, _, lines) = items(path, |item| {
        let (line, message) = match item {
            Item::Message(line, message) => (line, message),
            Item::Bad(line, why) => return rec.note(line, why),
            Item::Rewind(line, to) => {
                match order.iter().rposition(|(id, _)| id.as_deref() == Some(to.as_str())) {
                    Some(at) => {
                        let keep = order[at].1;
                        order.truncate(at + 1);
                        let dropped = rec.rewind(keep);
                        rec.note(
                            line,
                            format!(
                                "the session was rewound to message `{to}`: the {dropped} call{} \
                                 made after it {} left out",
                                if dropped == 1 { "" } else { "s" },
                                if dropped == 1 { "is" } else { "are" }
                            ),
                        );
                    }
                    None => rec.note(
                        line,
                        format!("the session was rewound to message `{to}`, which no line holds; nothing is left out"),
                    ),
                }
                return;
            }
        };
        if rec.started.is_none() {
            rec.started.clone_from(&message.timestamp);
        }
        // Every call of the file is counted, whatever the reader makes of
        // it (the import's accounting line).
        for call in &message.tool_calls {
            rec.in_file.add(
                line,
                call.id.as_deref().unwrap_or(""),
                call.name.as_deref().unwrap_or(""),
            );
        }
        if message.kind.as_deref() != Some("gemini") {
            order.push((message.id, rec.batches.len()));
            return;
        }
        let id = message.id.clone();
        let mut batch = Vec::new();
        let mut answers = Vec::new();
        for call in message.tool_calls {
            if let Some((c, answer)) = one_call(&mut rec, &map, line, call, bash_timeout) {
                answers.push((c.id.clone(), answer));
                batch.push(c);
            }
        }
        rec.push_batch(batch, None);
        for (id, answer) in answers {
            match answer {
                Answered::Yes(outcome) => rec.answer(line, &id, outcome),
                Answered::Not(why) => rec.unanswered(line, &id, why),
                Answered::Never => {}
            }
        }
        order.push((id, rec.batches.len()));
    })?;
    rec.lines = lines;
    rec.finish();
    Ok(rec)
}

/// What a recorded call's result was.
enum Answered {
    /// A tool's answer.
    Yes(Outcome),
    /// No tool's answer, and why.
    Not(&'static str),
    /// None: the session ended first.
    Never,
}

/// One recorded call mapped, with its result; `None` when it is left out
/// (with its reason).
fn one_call(
    rec: &mut Recording,
    map: &PathMap,
    line: usize,
    call: ToolCall,
    bash_timeout: f64,
) -> Option<(Call, Answered)> {
    let block = json!({
        "id": call.id.clone().unwrap_or_default(),
        "name": call.name.clone().unwrap_or_default(),
        "args": call.args,
    });
    let raw = rec.take_call(line, &block, "args")?;
    let mapped = match map_call(&raw.name, &raw.args, bash_timeout, map) {
        Ok(m) => m,
        Err(reason) => {
            rec.skip(&raw, format!("{reason}; its call is skipped"), reason);
            return None;
        }
    };
    let mut replayed = raw.replayed_as(mapped.0, map.args(&mapped.1), mapped.2);
    replayed.syncable = mapped.0 == "read";
    let status = call.status.as_deref().unwrap_or("");
    if status == "cancelled" {
        return Some((replayed, Answered::Not("the user cancelled it")));
    }
    if call.result.is_null() && status.is_empty() {
        return Some((replayed, Answered::Never));
    }
    let (text, mut is_error) = response_text(&call.result);
    let is_error_status = status == "error";
    let mut outcome = Outcome {
        is_error: is_error || is_error_status,
        ..Outcome::default()
    };
    let original = call
        .result_display
        .get("originalContent")
        .and_then(Value::as_str)
        .map(str::to_owned);
    match raw.name.as_str() {
        "read_file" if !outcome.is_error => {
            let partial = raw.args.get("offset").is_some_and(|v| !v.is_null())
                || raw.args.get("limit").is_some_and(|v| !v.is_null());
            if text.starts_with("\nIMPORTANT: The file content has been truncated.")
                || text.contains("--- FILE CONTENT (truncated) ---")
            {
                outcome.whole = Some(Err("its recorded text is cut (Gemini CLI's truncation)"));
                if let Some((_, part)) = text.split_once("--- FILE CONTENT (truncated) ---\n") {
                    outcome.answer = Some((AnswerForm::Text, part.to_owned()));
                }
            } else {
                outcome.answer = Some((AnswerForm::Text, text.clone()));
                outcome.whole = Some(if partial {
                    Err("it reads part of the file (offset or limit)")
                } else {
                    Ok(())
                });
            }
        }
        "write_file" | "replace" if !outcome.is_error => {
            outcome.answer = Some((AnswerForm::Done, String::new()));
        }
        "run_shell_command" => {
            if let Some((output, code)) = shell_output(&text) {
                // bash here calls a command that exits non-zero an error.
                is_error = code.is_some_and(|c| c != 0);
                outcome.is_error = is_error || is_error_status;
                outcome.answer = Some((AnswerForm::Text, output));
            }
        }
        "search_file_content" | "grep_search" if !outcome.is_error => {
            let searched = replayed
                .args
                .get("path")
                .and_then(Value::as_str)
                .map_or_else(|| ".".to_owned(), mapped_relative);
            outcome.answer = search_matches(&text, &searched).map(|m| (AnswerForm::Matches, m));
        }
        "glob" if !outcome.is_error => {
            outcome.answer = glob_files(&text, map).map(|f| (AnswerForm::Files, f));
        }
        "list_directory" if !outcome.is_error => {
            outcome.answer = listing(&text).map(|e| (AnswerForm::Entries, e));
        }
        _ => {}
    }
    if raw.name == "replace" {
        outcome.original.clone_from(&original);
        let expected = raw
            .args
            .get("expected_replacements")
            .and_then(Value::as_f64)
            .unwrap_or(1.0);
        if expected > 1.0
            && let Some(original) = &original
        {
            let old = raw
                .args
                .get("old_string")
                .and_then(Value::as_str)
                .unwrap_or("");
            let new = raw
                .args
                .get("new_string")
                .and_then(Value::as_str)
                .unwrap_or("");
            if let Some((reps, n)) = edits::replace_all(original, old, new) {
                let list: Vec<Value> = reps
                    .iter()
                    .map(|r| json!({"oldText": r.old, "newText": r.new}))
                    .collect();
                replayed.args["edits"] = map.args(&Value::Array(list));
                replayed.note = Some(format!(
                    "expected_replacements {expected}: {n} occurrences in the recorded file, \
                     replayed as {} replacement{} of the lines that hold them",
                    reps.len(),
                    if reps.len() == 1 { "" } else { "s" }
                ));
            }
        }
    }
    if outcome.is_error && outcome.answer.is_none() {
        outcome.answer = failure(&text).map(|k| (AnswerForm::Failure, k.as_str().to_owned()));
    }
    outcome.text = text;
    Some((replayed, Answered::Yes(outcome)))
}

/// The text of a tool call's `result` (`[{functionResponse: {response:
/// {output | error}}}]`), and whether it was an error.
fn response_text(result: &Value) -> (String, bool) {
    let mut texts = Vec::new();
    let mut error = false;
    let parts = match result {
        Value::Array(parts) => parts.clone(),
        other => vec![other.clone()],
    };
    for part in &parts {
        let response = part
            .get("functionResponse")
            .and_then(|f| f.get("response"))
            .unwrap_or(part);
        if let Some(out) = response.get("output").and_then(Value::as_str) {
            texts.push(out.to_owned());
        } else if let Some(err) = response.get("error") {
            error = true;
            texts.push(err.as_str().map_or_else(|| err.to_string(), str::to_owned));
        } else if let Some(text) = part.get("text").and_then(Value::as_str) {
            texts.push(text.to_owned());
        }
    }
    (texts.join("\n"), error)
}

/// The kind of a failure Gemini CLI's file tools report.
fn failure(text: &str) -> Option<FailureKind> {
    if text.contains("could not find the string to replace") {
        return Some(FailureKind::TextNotFound);
    }
    if text.contains("expected 1 occurrence but found") {
        return Some(FailureKind::TextNotUnique);
    }
    if text.starts_with("File not found") || text.contains("File not found:") {
        return Some(FailureKind::NoSuchFile);
    }
    if text.contains("Path is a directory") || text.contains("is a directory") {
        return Some(FailureKind::IsADirectory);
    }
    text.contains("No changes to apply")
        .then_some(FailureKind::NoChange)
}

/// Gemini CLI's tools mapped onto ours.
fn map_call(
    name: &str,
    args: &Value,
    bash_timeout: f64,
    map: &PathMap,
) -> Result<(&'static str, Value, Option<String>), String> {
    let get = |k: &str| args.get(k).cloned().filter(|v| !v.is_null());
    let mut out = Map::new();
    let mut note = None;
    let tool = match name {
        "read_file" => {
            let path = get("file_path").or_else(|| get("absolute_path"));
            if let Some(p) = path {
                out.insert("path".into(), p);
            }
            // Gemini CLI counts lines from 0; read from 1.
            match args.get("offset") {
                Some(Value::Number(n)) if n.as_u64().is_some() => {
                    let next = n.as_u64().unwrap_or(0).saturating_add(1);
                    out.insert("offset".into(), Value::from(next));
                }
                Some(Value::Number(n)) => {
                    let next = n.as_f64().unwrap_or(0.0) + 1.0;
                    out.insert("offset".into(), Value::from(next));
                }
                Some(other) if !other.is_null() => {
                    // Not a number: sent as recorded, for read to refuse.
                    out.insert("offset".into(), other.clone());
                }
                _ => {}
            }
            if let Some(limit) = get("limit") {
                out.insert("limit".into(), limit);
            }
            "read"
        }
        "write_file" => {
            if let Some(p) = get("file_path") {
                out.insert("path".into(), p);
            }
            if let Some(c) = get("content") {
                out.insert("content".into(), c);
            }
            "write"
        }
        "replace" => {
            if let Some(p) = get("file_path") {
                out.insert("path".into(), p);
            }
            out.insert(
                "edits".into(),
                json!([{
                    "oldText": args.get("old_string").cloned().unwrap_or(Value::Null),
                    "newText": args.get("new_string").cloned().unwrap_or(Value::Null),
                }]),
            );
            if args
                .get("expected_replacements")
                .and_then(Value::as_f64)
                .is_some_and(|n| n > 1.0)
            {
                note = Some(
                    "expected_replacements: the file's text before the call is not recorded; \
                     replayed as one replacement, which fails when the text occurs more than once"
                        .to_owned(),
                );
            }
            "edit"
        }
        "run_shell_command" => {
            let command = args.get("command").and_then(Value::as_str).unwrap_or("");
            let directory = args.get("directory").or_else(|| args.get("dir_path"));
            let command = match directory.and_then(Value::as_str) {
                Some(dir) if !dir.is_empty() && dir != "." => {
                    let dir = match map.cwd() {
                        Some(cwd) if !dir.starts_with('/') => format!("{cwd}/{dir}"),
                        _ => dir.to_owned(),
                    };
                    format!("cd {} && {command}", shell::quote(&dir))
                }
                _ => command.to_owned(),
            };
            out.insert("command".into(), Value::from(command));
            out.insert(
                "timeout".into(),
                Value::from(bash_timeout.min(MAX_BASH_SECS)),
            );
            "bash"
        }
        "search_file_content" | "grep_search" => {
            if let Some(p) = get("pattern") {
                out.insert("pattern".into(), p);
            }
            if let Some(p) = get("path").or_else(|| get("dir_path")) {
                out.insert("path".into(), p);
            }
            if let Some(g) = get("include").or_else(|| get("include_pattern")) {
                out.insert("glob".into(), g);
            }
            "grep"
        }
        "glob" => {
            if let Some(p) = get("pattern") {
                out.insert("pattern".into(), p);
            }
            if let Some(p) = get("path").or_else(|| get("dir_path")) {
                out.insert("path".into(), p);
            }
            if args.get("case_sensitive").and_then(Value::as_bool) == Some(true) {
                note = Some("case_sensitive has no counterpart; dropped".to_owned());
            }
            "find"
        }
        "list_directory" => {
            if let Some(p) = get("path").or_else(|| get("dir_path")) {
                out.insert("path".into(), p);
            }
            if get("ignore").is_some() {
                note =
                    Some("`ignore` has no counterpart (ls lists every entry); dropped".to_owned());
            }
            "ls"
        }
        "read_many_files" => {
            return Err(
                "Gemini CLI's `read_many_files` reads many files in one call, which no tool here \
                 does"
                    .to_owned(),
            );
        }
        "web_fetch" | "google_web_search" => {
            return Err(format!("Gemini CLI's `{name}` reaches the web"));
        }
        "save_memory" => {
            return Err("Gemini CLI's `save_memory` keeps the client's memory".to_owned());
        }
        other => {
            return Err(format!(
                "Gemini CLI's `{other}` has no counterpart among this harness's tools"
            ));
        }
    };
    Ok((tool, Value::Object(out), note))
}

/// `run_shell_command`'s labelled text (`Command: …\nDirectory: …\nStdout:
/// …\nStderr: …\nError: …\nExit Code: …`; newer versions: `Output: …`
/// then the other labels, inside `<untrusted_context>`): the output
/// (stdout, then stderr, `(empty)` left out) and the exit code.
fn shell_output(text: &str) -> Option<(String, Option<i64>)> {
    let text = text
        .trim()
        .strip_prefix("<untrusted_context>")
        .and_then(|t| t.strip_suffix("</untrusted_context>"))
        .map_or(text, |t| t.trim_matches('\n'));
    let code = text
        .find("Exit Code: ")
        .filter(|at| *at == 0 || text[..*at].ends_with('\n'))
        .map(|at| &text[at + "Exit Code: ".len()..])
        .and_then(|t| t.lines().next())
        .and_then(|t| t.trim().parse::<i64>().ok());
    if !text.contains("Stdout: ")
        && let Some(rest) = text.strip_prefix("Output: ").or_else(|| {
            text.find("\nOutput: ")
                .map(|at| &text[at + "\nOutput: ".len()..])
        })
    {
        // The output runs to the next label of the text.
        let end = [
            "Error: ",
            "Exit Code: ",
            "Signal: ",
            "Background PIDs: ",
            "Process Group PGID: ",
        ]
        .iter()
        .filter_map(|label| rest.find(&format!("\n{label}")))
        .min()
        .unwrap_or(rest.len());
        let output = rest[..end].trim_end();
        let output = if output == "(empty)" { "" } else { output };
        return Some((output.to_owned(), code));
    }
    let stdout_at = text.find("Stdout: ")?;
    let stderr_at = text[stdout_at..].find("\nStderr: ")? + stdout_at;
    let stdout = &text[stdout_at + "Stdout: ".len()..stderr_at];
    let rest = &text[stderr_at + "\nStderr: ".len()..];
    let stderr_end = rest.find("\nError: ").unwrap_or(rest.len());
    let stderr = &rest[..stderr_end];
    let parts: Vec<&str> = [stdout, stderr]
        .iter()
        .map(|s| s.trim_end())
        .filter(|s| !s.is_empty() && *s != "(empty)")
        .collect();
    Some((parts.join("\n"), code))
}

/// `search_file_content`'s text (`File: a.ts` then `L12: text` lines,
/// `---` between files) as sorted `path:text`, paths below the searched
/// directory `searched`.
fn search_matches(text: &str, searched: &str) -> Option<String> {
    if text.starts_with("No matches found") {
        return Some(String::new());
    }
    let mut out = Vec::new();
    let mut file: Option<&str> = None;
    for line in text.lines().skip(1) {
        if let Some(name) = line.strip_prefix("File: ") {
            file = Some(name.trim());
        } else if let Some(rest) = line.strip_prefix('L') {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            let after = rest.get(digits..)?;
            if digits > 0 && after.starts_with('-') {
                continue; // a context line (`L2- text`)
            }
            let text = after.strip_prefix(": ")?;
            out.push(format!("{}:{text}", join_relative(searched, file?)));
        }
    }
    out.sort();
    Some(out.join("\n"))
}

/// `glob`'s text (`Found 2 file(s) matching … :` then absolute paths) as
/// sorted workspace-relative paths.
fn glob_files(text: &str, map: &PathMap) -> Option<String> {
    if text.starts_with("No files found") {
        return Some(String::new());
    }
    let mut lines = text.lines();
    lines.next()?.starts_with("Found ").then_some(())?;
    let mut out: Vec<String> = lines
        .filter(|l| !l.is_empty())
        .map(|l| map.relative(l))
        .collect();
    out.sort();
    Some(out.join("\n"))
}

/// `list_directory`'s text (`Directory listing for /p:` then `[DIR] src`
/// and file names) as sorted entries, directories with `/`.
fn listing(text: &str) -> Option<String> {
    let mut lines = text.lines();
    lines
        .next()?
        .starts_with("Directory listing for ")
        .then_some(())?;
    let mut out: Vec<String> = lines
        .take_while(|l| !l.is_empty())
        .map(|l| match l.strip_prefix("[DIR] ") {
            Some(dir) => format!("{dir}/"),
            None => l.to_owned(),
        })
        .collect();
    out.sort();
    Some(out.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_read_as_answers() {
        assert_eq!(
            shell_output(
                "Command: ls\nDirectory: (root)\nStdout: a\nb\nStderr: (empty)\nError: (none)\nExit \
                 Code: 2\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 41"
            ),
            Some(("a\nb".to_owned(), Some(2)))
        );
        // Gemini CLI 0.61: `Output:`, inside `<untrusted_context>`.
        assert_eq!(
            shell_output(
                "<untrusted_context>\nOutput: hello harness\nProcess Group PGID: 26\n</untrusted_context>"
            ),
            Some(("hello harness".to_owned(), None))
        );
        assert_eq!(
            shell_output("Output: (empty)\nExit Code: 1\nProcess Group PGID: 7"),
            Some((String::new(), Some(1)))
        );
        // grep_search's context lines (`L2- `) are not matches.
        assert_eq!(
            search_matches(
                "Found 1 match for pattern \"harness\" in the workspace directory:\n---\nFile: \
                 hello.txt\nL1: hello harness\nL2- \n---",
                "."
            )
            .as_deref(),
            Some("hello.txt:hello harness")
        );
        assert_eq!(
            search_matches(
                "Found 2 matches for pattern \"x\" in path \".\":\n---\nFile: src/a.ts\nL2: let x\n---\nFile: b.ts\nL9: x()\n---",
                "."
            )
            .as_deref(),
            Some("b.ts:x()\nsrc/a.ts:let x")
        );
        let map = PathMap::new(Some("/p"));
        assert_eq!(
            glob_files("Found 2 file(s) matching \"*.ts\" within /p, sorted by modification time (newest first):\n/p/z.ts\n/p/a/b.ts", &map).as_deref(),
            Some("a/b.ts\nz.ts")
        );
        assert_eq!(
            listing("Directory listing for /p:\n[DIR] src\nREADME.md\n\n(1 git-ignored)")
                .as_deref(),
            Some("README.md\nsrc/")
        );
    }

    /// Issue 42 item 6: a session's bulk in its calls' arguments was held
    /// in memory until the scenario was written (a 99 MB session took
    /// 335 MB). Each large argument text leaves memory when its call is
    /// read: what the recording holds of the calls is small, whatever the
    /// session, and the texts come back whole from the spool.
    #[test]
    fn large_arguments_are_not_held_in_memory() {
        let root = tempfile::tempdir().unwrap();
        let cwd = "/home/dev/big";
        let hash: String = Sha256::digest(cwd.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let content = |n: usize| format!("{n}\n{}", "y".repeat(79).repeat(600));
        let messages: Vec<Value> = (0..20)
            .map(|n| {
                json!({"id": format!("m{n}"), "type": "gemini", "toolCalls": [{
                    "id": format!("w{n}"), "name": "write_file",
                    "args": {"file_path": format!("{cwd}/f{n}.txt"), "content": content(n)},
                    "status": "success",
                    "result": [{"functionResponse": {"response": {"output": "Wrote it."}}}]
                }]})
            })
            .collect();
        let session = root.path().join("s.json");
        std::fs::write(
            &session,
            json!({"sessionId": "s", "projectHash": hash, "messages": messages}).to_string(),
        )
        .unwrap();
        let out =
            std::sync::Arc::new(super::super::out::OutDir::open(&root.path().join("out")).unwrap());
        let rec = read(&session, 30.0, Sidecars::new(out, "s.recorded".to_owned())).unwrap();
        let held: Vec<usize> = rec.calls().map(|c| c.args.to_string().len()).collect();
        assert_eq!(held.len(), 20);
        assert!(held.iter().all(|&n| n < 200), "{held:?}");
        let restored: Vec<Value> = rec.calls().map(|c| rec.restored(&c.args)).collect();
        let want: Vec<Value> = (0..20)
            .map(|n| json!({"path": format!("${{workspace}}/f{n}.txt"), "content": content(n)}))
            .collect();
        assert_eq!(restored, want);
    }
}
