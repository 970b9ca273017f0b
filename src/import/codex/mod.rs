//! Codex CLI's rollout files (`~/.codex/sessions/YYYY/MM/DD/
//! rollout-*.jsonl`, or below `$CODEX_HOME`): one JSON object a line,
//! `{timestamp, type, payload}`. `session_meta` holds the working
//! directory (`cwd`) and `git`; `turn_context` the directory of each turn;
//! `response_item`s the conversation: `function_call {name, arguments (a
//! JSON text), call_id}`, `custom_tool_call {name, input, call_id}` (the
//! freeform `apply_patch`), `local_shell_call`, and their outputs
//! `function_call_output` / `custom_tool_call_output` by `call_id`, with
//! no error flag ([`results`] reads their words). `event_msg`,
//! `world_state`, `token_usage_record` and `compacted` lines repeat what
//! the items say, or say nothing of the calls, and are passed over. The
//! oldest rollouts wrote the items themselves as lines, after a first
//! line `{id, timestamp, instructions}`; those are read too.
//!
//! A rollout has no branches. The calls of one model response (calls with
//! no result between them) are one batch; each patch is a batch of its own
//! (docs/replay.md, "Codex's tools", for the mapping).

mod patch;
mod results;
#[cfg(test)]
mod tests;
mod tools;

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;
use serde_json::json;

use super::lines::Branch;
use super::paths::PathMap;
use super::session::MAX_BASH_SECS;
use super::session::Outcome;
use super::session::RawCall;
use super::session::Recording;
use super::session::Sidecars;
use super::session::read_entries;
use crate::scenario::replay::AnswerForm;
use tools::Place;

/// What reading a rollout gives.
#[derive(Debug)]
pub(crate) struct Rollout {
    /// The calls to replay and those listed.
    pub recording: Recording,
    /// Every call of the file, in file order, whatever became of it: its
    /// line, its call id and its tool as recorded (each `function_call`,
    /// `custom_tool_call`, `local_shell_call` and other `…_call` item).
    pub calls: Vec<(usize, String, String)>,
}

/// The entry types of a rollout that say nothing of the calls.
const PASSED_OVER: [&str; 5] = [
    "event_msg",
    "world_state",
    "token_usage_record",
    "compacted",
    "turn_aborted",
];

/// The item types the oldest rollouts wrote as lines of their own.
const ITEM_TYPES: [&str; 8] = [
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
];

/// The reason of the calls a refused patch did not reach, taken out of
/// the list once the session is read (the patch's own call stands for
/// them).
const LEFT_WITH_PATCH: &str = "a part of a patch Codex did not apply";

/// The most output of a command Codex kept running that is kept to
/// compare (its polls' outputs joined); past it the text alone is
/// compared.
const MAX_JOINED_OUTPUT: usize = 256 * 1024;

/// The most commands Codex kept running that are followed at once
/// (Codex itself keeps at most 64).
const MAX_RUNNING: usize = 64;

/// Reads the rollout at `path`; `bash_timeout` is given to commands
/// recorded without a timeout.
pub(crate) fn read(path: &Path, bash_timeout: f64, sidecars: Sidecars) -> Result<Rollout, String> {
    let mut rec = Recording::new("codex", Some(sidecars));
    let mut reader = Reader {
        bash_timeout,
        ..Reader::default()
    };
    read_entries(
        path,
        &mut rec,
        &Branch::default(),
        |rec, line, entry: Value| {
            reader.entry(rec, line, &entry);
        },
    )?;
    reader.finish(&mut rec);
    Ok(Rollout {
        recording: rec,
        calls: reader.calls,
    })
}

/// A command Codex kept running (`Process running with session ID N`),
/// until a poll sees it end.
#[derive(Debug)]
struct Running {
    /// Its call.
    id: String,
    /// The call's own result text.
    text: String,
    /// The images of that result.
    images: usize,
    /// Its output so far, the polls' joined (`None` once too long).
    output: Option<String>,
    /// Seconds it ran, so far.
    wall: f64,
    /// Codex cut an output.
    truncated: bool,
}

/// A patch waiting for its result: its calls (the first with the
/// recorded id), each with the file operation it carries out.
#[derive(Debug)]
struct Pending {
    /// The calls' ids and tools, and their operation's index and file.
    steps: Vec<(String, &'static str, usize, String)>,
    /// The number of file operations.
    ops: usize,
}

/// What reading one rollout keeps between lines.
#[derive(Debug, Default)]
struct Reader {
    bash_timeout: f64,
    map: PathMap,
    /// The session's working directory (the workspace).
    home: Option<String>,
    /// The line that gave it.
    home_line: Option<usize>,
    /// The turn's working directory.
    cwd: Option<String>,
    /// The current model response, counted: calls with no result between
    /// them share one.
    response: usize,
    /// The commands replayed, by call id.
    commands: HashSet<String>,
    /// The patches waiting for their result, by call id.
    patches: HashMap<String, Pending>,
    /// The `write_stdin` calls, by id, with their session.
    polls: HashMap<String, Option<u64>>,
    /// The commands Codex kept running, by session.
    running: HashMap<u64, Running>,
    /// Every call of the file.
    calls: Vec<(usize, String, String)>,
    /// Entry types not known, with their first line and how many.
    unknown: BTreeMap<String, (usize, usize)>,
}

impl Reader {
    fn entry(&mut self, rec: &mut Recording, line: usize, entry: &Value) {
        let kind = entry.get("type").and_then(Value::as_str).unwrap_or("");
        let payload = entry.get("payload");
        if rec.started.is_none() {
            let time = payload
                .filter(|_| kind == "session_meta")
                .and_then(|p| p.get("timestamp"))
                .or_else(|| entry.get("timestamp"))
                .and_then(Value::as_str);
            rec.started = time.map(str::to_owned);
        }
        match (kind, payload) {
            ("session_meta", Some(meta)) => self.meta(rec, line, meta),
            ("turn_context", Some(turn)) => {
                if let Some(cwd) = turn
                    .get("cwd")
                    .and_then(Value::as_str)
                    .map(|c| c.trim_end_matches('/'))
                    .filter(|c| !c.is_empty())
                {
                    self.cwd = Some(cwd.to_owned());
                }
                self.response += 1;
            }
            ("response_item", Some(item)) => self.item(rec, line, item),
            (k, _) if PASSED_OVER.contains(&k) => {}
            // The oldest layout: the items as lines, after a first line
            // `{id, timestamp, instructions}`.
            (k, None) if ITEM_TYPES.contains(&k) => self.item(rec, line, entry),
            ("", None) if entry.get("record_type").is_some() || line == 1 => {}
            (k, _) => {
                let seen = self.unknown.entry(k.to_owned()).or_insert((line, 0));
                seen.1 += 1;
            }
        }
    }

    /// `session_meta`: the working directory and the git branch.
    fn meta(&mut self, rec: &mut Recording, line: usize, meta: &Value) {
        if self.home_line.is_some() {
            return;
        }
        if let Some(cwd) = meta
            .get("cwd")
            .and_then(Value::as_str)
            .filter(|c| !c.trim_end_matches('/').is_empty())
        {
            self.set_home(rec, line, cwd);
        }
        if let Some(branch) = meta
            .get("git")
            .and_then(|g| g.get("branch"))
            .and_then(Value::as_str)
        {
            rec.git_branch = Some(branch.to_owned());
        }
    }

    fn set_home(&mut self, rec: &mut Recording, line: usize, cwd: &str) {
        let cwd = cwd.trim_end_matches('/');
        self.home = Some(cwd.to_owned());
        self.home_line = Some(line);
        if self.cwd.is_none() {
            self.cwd = Some(cwd.to_owned());
        }
        rec.cwd = Some(cwd.to_owned());
        self.map = PathMap::new(Some(cwd));
    }

    fn item(&mut self, rec: &mut Recording, line: usize, item: &Value) {
        let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
        let text = |k: &str| item.get(k).and_then(Value::as_str).unwrap_or("");
        let id = match text("call_id") {
            "" => text("id"),
            id => id,
        }
        .to_owned();
        match kind {
            "message" if text("role") == "user" => {
                self.response += 1;
                if self.home_line.is_none()
                    && let Some(cwd) = environment_cwd(item.get("content"))
                {
                    self.set_home(rec, line, &cwd);
                }
            }
            "function_call" => {
                // An MCP server's tool: its namespace and its name.
                let name = format!("{}{}", text("namespace"), text("name"));
                let args = match item.get("arguments") {
                    Some(Value::String(s)) => {
                        serde_json::from_str::<Value>(s).map_err(|err| (s.clone(), err.to_string()))
                    }
                    Some(other) => Ok(other.clone()),
                    None => Ok(Value::Null),
                };
                self.call(rec, line, &id, &name, args);
            }
            "custom_tool_call" => {
                let input = item.get("input").cloned().unwrap_or(Value::Null);
                self.call(rec, line, &id, text("name"), Ok(input));
            }
            "local_shell_call" => {
                let action = item.get("action").cloned().unwrap_or(Value::Null);
                self.call(rec, line, &id, "local_shell", Ok(action));
            }
            k if k.ends_with("_call_output") => {
                self.response += 1;
                let output = item.get("output").unwrap_or(&Value::Null);
                self.output(rec, line, &id, output);
            }
            k if k.ends_with("_call") => {
                let args = item.get("action").cloned().unwrap_or(Value::Null);
                self.call(rec, line, &id, k, Ok(args));
            }
            _ => {}
        }
    }

    /// A call: replayed, or listed with its reason.
    fn call(
        &mut self,
        rec: &mut Recording,
        line: usize,
        id: &str,
        name: &str,
        args: Result<Value, (String, String)>,
    ) {
        self.calls.push((line, id.to_owned(), name.to_owned()));
        let (args, unreadable) = match args {
            Ok(args) => (args, None),
            Err((text, err)) => (Value::String(text), Some(err)),
        };
        let block = json!({ "id": id, "name": name, "args": args });
        let Some(raw) = rec.take_call(line, &block, "args") else {
            return;
        };
        if let Some(err) = unreadable {
            let why = format!("its arguments are not JSON ({err})");
            rec.skip(&raw, format!("{why}; its call is skipped"), why);
            return;
        }
        if name == "write_stdin" {
            return self.poll(rec, &raw);
        }
        let place = Place {
            home: self.home.as_deref(),
            cwd: self.cwd.as_deref(),
            bash_timeout: self.bash_timeout,
        };
        let mapped = match tools::map_call(name, &raw.args, &place) {
            Ok(mapped) => mapped,
            Err(why) => {
                rec.skip(&raw, format!("{why}; its call is skipped"), why);
                return;
            }
        };
        if mapped.ops == 0 {
            let Some(step) = mapped.steps.into_iter().next() else {
                return;
            };
            let call = raw.replayed_as(step.tool, self.map.args(&step.args), mapped.note);
            self.commands.insert(call.id.clone());
            let group = format!("response {}", self.response);
            rec.push_batch(vec![call], Some(&group));
            return;
        }
        // A patch: its calls one after the other, apart from the calls
        // around it.
        let mut pending = Pending {
            steps: Vec::new(),
            ops: mapped.ops,
        };
        let count = mapped.steps.len();
        for (n, step) in mapped.steps.into_iter().enumerate() {
            let (op, file) = step.op.unwrap_or_default();
            let mut part = raw.clone();
            let note = if n == 0 {
                mapped.note.clone()
            } else {
                part.id = format!("{}#{}", raw.id, n + 1);
                Some(format!(
                    "call {} of {count} of the patch of call `{}`",
                    n + 1,
                    raw.id
                ))
            };
            let call = part.replayed_as(step.tool, self.map.args(&step.args), note);
            pending.steps.push((call.id.clone(), step.tool, op, file));
            rec.push_batch(vec![call], None);
        }
        self.patches.insert(raw.id.clone(), pending);
        self.response += 1;
    }

    /// `write_stdin`: listed; it writes to or polls a command Codex kept
    /// running, whose output it carries on.
    fn poll(&mut self, rec: &mut Recording, raw: &RawCall) {
        let session = match raw.args.get("session_id") {
            Some(Value::Number(n)) => n.as_u64(),
            Some(Value::String(s)) => s.trim().parse().ok(),
            _ => None,
        };
        let typed = raw
            .args
            .get("chars")
            .and_then(Value::as_str)
            .is_some_and(|c| !c.is_empty());
        let started = session.is_some_and(|s| self.running.contains_key(&s));
        if typed && let Some(running) = session.and_then(|s| self.running.remove(&s)) {
            rec.unanswered(
                raw.line,
                &running.id,
                "Codex kept it running and wrote to its input later (`write_stdin`), which a \
                 replay cannot give it",
            );
        }
        let why = tools::poll_reason(session, started && !typed);
        rec.skip(raw, format!("{why}; its call is skipped"), why);
        self.polls.insert(raw.id.clone(), session);
    }

    /// A call's output.
    fn output(&mut self, rec: &mut Recording, line: usize, id: &str, output: &Value) {
        let (text, images, failed) = results::output_text(output);
        if let Some(why) = results::not_an_answer(&text) {
            if let Some(pending) = self.patches.remove(id) {
                for (part, ..) in pending.steps.iter().skip(1) {
                    rec.unanswered(line, part, LEFT_WITH_PATCH);
                }
            }
            rec.unanswered(line, id, why);
            return;
        }
        if let Some(session) = self.polls.get(id).copied() {
            return self.polled(rec, line, session, &text);
        }
        if self.commands.contains(id) {
            return self.command_output(rec, line, id, text, images);
        }
        if let Some(pending) = self.patches.remove(id) {
            return patch_output(rec, &self.map, line, id, pending, text, images);
        }
        rec.answer(
            line,
            id,
            Outcome {
                is_error: failed,
                text,
                images,
                ..Outcome::default()
            },
        );
    }

    /// A command's output: answered, or kept while Codex kept it running.
    fn command_output(
        &mut self,
        rec: &mut Recording,
        line: usize,
        id: &str,
        text: String,
        images: usize,
    ) {
        let Some(exec) = results::exec(&text) else {
            // Codex's own error: the command did not run.
            let outcome = Outcome {
                is_error: true,
                text,
                images,
                ..Outcome::default()
            };
            return rec.answer(line, id, outcome);
        };
        // Codex keeps a few commands running at once; past the most
        // followed here (or with a first result too long to hold), a
        // command is compared by its first result as recorded.
        let follow = self.running.len() < MAX_RUNNING && text.len() <= MAX_JOINED_OUTPUT;
        if let Some(session) = exec.running.filter(|_| follow) {
            let running = Running {
                id: id.to_owned(),
                text,
                images,
                output: Some(exec.output),
                wall: exec.wall.unwrap_or(0.0),
                truncated: exec.truncated,
            };
            if rec.find(id).is_some_and(|c| c.result.is_none()) {
                self.running.insert(session, running);
            }
            return;
        }
        self.lengthen(rec, id, exec.wall.unwrap_or(0.0));
        // A command still running has no answer yet: its text is compared.
        let whole = !exec.truncated && exec.running.is_none();
        let outcome = Outcome {
            is_error: exec.code.is_some_and(|c| c != 0),
            answer: whole.then_some((AnswerForm::Text, exec.output)),
            text,
            images,
            ..Outcome::default()
        };
        rec.answer(line, id, outcome);
    }

    /// The output of a `write_stdin` that polled `session`: the command it
    /// carries on is answered when it ended.
    fn polled(&mut self, rec: &mut Recording, line: usize, session: Option<u64>, text: &str) {
        let Some(session) = session else {
            return;
        };
        let Some(mut running) = self.running.remove(&session) else {
            return;
        };
        let Some(exec) = results::exec(text) else {
            rec.unanswered(
                line,
                &running.id,
                "Codex kept it running and then lost it (its `write_stdin` failed)",
            );
            return;
        };
        running.wall = (running.wall + exec.wall.unwrap_or(0.0)).min(MAX_BASH_SECS);
        running.truncated |= exec.truncated;
        running.output = running
            .output
            .map(|mut joined| {
                joined.push_str(&exec.output);
                joined
            })
            .filter(|joined| joined.len() <= MAX_JOINED_OUTPUT);
        let Some(code) = exec.code else {
            self.running.insert(session, running);
            return;
        };
        self.lengthen(rec, &running.id, running.wall);
        let answer = running.output.filter(|_| !running.truncated);
        let outcome = Outcome {
            is_error: code != 0,
            text: running.text,
            images: running.images,
            answer: answer.map(|a| (AnswerForm::Text, a)),
            ..Outcome::default()
        };
        rec.answer(line, &running.id, outcome);
    }

    /// A command that ran `wall` seconds in the recording gets at least
    /// twice that, so that a long build is not cut at `--bash-timeout`.
    fn lengthen(&self, rec: &mut Recording, id: &str, wall: f64) {
        let want = (wall * 2.0).ceil().min(MAX_BASH_SECS);
        if want <= self.bash_timeout {
            return;
        }
        if let Some(call) = rec.find(id)
            && let Value::Object(args) = &mut call.args
        {
            args.insert("timeout".to_owned(), Value::from(want));
        }
    }

    fn finish(&mut self, rec: &mut Recording) {
        for (_, running) in std::mem::take(&mut self.running) {
            let id = running.id;
            rec.unanswered(
                rec.lines,
                &id,
                "Codex kept it running, and no later poll (`write_stdin`) saw it end",
            );
        }
        for (_, pending) in std::mem::take(&mut self.patches) {
            for (part, ..) in pending.steps.iter().skip(1) {
                rec.unanswered(rec.lines, part, LEFT_WITH_PATCH);
            }
        }
        if self.home_line.is_none() && rec.lines > 0 {
            rec.note(
                1,
                "no `session_meta` line with a `cwd`: the session's working directory is \
                 unknown, so no path becomes `${workspace}/…` and absolute paths are replayed \
                 as recorded",
            );
        }
        for (kind, (line, n)) in std::mem::take(&mut self.unknown) {
            rec.note(
                line,
                if n == 1 {
                    format!("unknown entry type `{kind}`; skipped")
                } else {
                    format!("unknown entry type `{kind}` ({n} lines, the first here); skipped")
                },
            );
        }
        rec.finish();
        rec.skipped.retain(|s| s.reason != LEFT_WITH_PATCH);
    }
}

/// The result of a patch, given to its calls. Applied: each call succeeded
/// (the first carries the recorded text). Refused (`apply_patch
/// verification failed`): Codex wrote nothing, so only the operation it
/// names is replayed — as the patch's own call — and the others are left
/// out; when it names none, the patch is listed.
fn patch_output(
    rec: &mut Recording,
    map: &PathMap,
    line: usize,
    id: &str,
    pending: Pending,
    text: String,
    images: usize,
) {
    let answer_of = |tool: &str, ok: bool| match (tool, ok) {
        ("edit" | "write", true) => Some((AnswerForm::Done, String::new())),
        ("bash", true) => Some((AnswerForm::Text, String::new())),
        _ => None,
    };
    let outcome = |is_error: bool, text: String, answer| Outcome {
        is_error,
        text,
        images,
        answer,
        ..Outcome::default()
    };
    match results::patch(&text) {
        patched @ (results::Patched::Applied | results::Patched::Failed) => {
            let ok = patched == results::Patched::Applied;
            for (n, (part, tool, ..)) in pending.steps.iter().enumerate() {
                let text = if n == 0 { text.clone() } else { String::new() };
                rec.answer(line, part, outcome(!ok, text, answer_of(tool, ok)));
            }
        }
        results::Patched::Refused(why) => {
            let named = pending
                .steps
                .iter()
                .filter(|(.., file)| why.contains(file.as_str()) || names_relative(&why, file))
                .max_by_key(|(.., file)| file.len())
                .map(|(_, _, op, _)| *op);
            let Some(op) = named else {
                for (part, ..) in pending.steps.iter().skip(1) {
                    rec.unanswered(line, part, LEFT_WITH_PATCH);
                }
                rec.unanswered(
                    line,
                    id,
                    "Codex refused its patch without naming one of its files, and wrote \
                     nothing",
                );
                return;
            };
            // The named operation's first call takes the patch's place.
            let Some(at) = pending.steps.iter().position(|(.., o, _)| *o == op) else {
                return;
            };
            let (first_id, tool, _, file) = &pending.steps[at];
            if at > 0 {
                let moved = rec
                    .find(first_id)
                    .map(|c| (c.tool.clone(), std::mem::take(&mut c.args)));
                if let (Some((tool, args)), Some(call)) = (moved, rec.find(id)) {
                    call.tool = tool;
                    call.args = args;
                }
            }
            let others = match pending.ops - 1 {
                0 => String::new(),
                1 => "; its other file operation is left out".to_owned(),
                n => format!("; its {n} other file operations are left out"),
            };
            let note = (pending.steps.len() > 1).then(|| {
                format!(
                    "Codex refused the patch and changed no file: only its operation on `{}`, \
                     which Codex refused, is replayed{others}",
                    map.relative(file)
                )
            });
            if let Some(call) = rec.find(id) {
                call.note = note;
            }
            for (part, ..) in pending.steps.iter().skip(1) {
                rec.unanswered(line, part, LEFT_WITH_PATCH);
            }
            let kind = results::refusal_kind(&why)
                .filter(|_| matches!(*tool, "edit" | "write"))
                .map(|k| (AnswerForm::Failure, k.as_str().to_owned()));
            rec.answer(line, id, outcome(true, text, kind));
        }
    }
}

/// Whether Codex's message names `file` (a relative path, the working
/// directory unknown) by an absolute path that ends in it.
fn names_relative(why: &str, file: &str) -> bool {
    !file.starts_with('/') && why.contains(&format!("/{file}"))
}

/// The working directory an `<environment_context>` message names
/// (`<cwd>/p</cwd>`), for rollouts without `session_meta`.
fn environment_cwd(content: Option<&Value>) -> Option<String> {
    let blocks = content?.as_array()?;
    blocks.iter().find_map(|b| {
        let text = b.get("text")?.as_str()?;
        let start = text.find("<environment_context>")?;
        let rest = &text[start..];
        let from = rest.find("<cwd>")? + "<cwd>".len();
        let to = rest[from..].find("</cwd>")? + from;
        let cwd = rest[from..to].trim();
        cwd.starts_with('/').then(|| cwd.to_owned())
    })
}
