//! What an importer makes of a recorded session, whatever its format: the
//! calls to replay in their batches, each with its recorded result, the
//! calls left out, and the problems met, each at its line.

use std::collections::HashMap;
use std::path::Path;
use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::lines::Branch;
use super::lines::Line;
use super::lines::for_each_line;
use super::lines::too_long;
use super::lines::unreadable;

/// Recorded texts longer than this (bytes) go to a sidecar file as soon
/// as they are read, so a session's large results are not held in memory.
pub const MAX_INLINE_TEXT: usize = 4096;

/// Where a recorded text is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Text {
    /// In memory (short).
    Inline(String),
    /// In a sidecar file, by its path relative to the output directory.
    Sidecar(String),
}

/// A recorded result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedResult {
    /// Whether it was an error.
    pub is_error: bool,
    /// Its text blocks joined by newlines.
    pub text: Text,
    /// How many image blocks it held.
    pub images: usize,
    /// Why the text, read as a read's result, is not a whole file's (a
    /// truncation or continuation notice, an image's text), for
    /// `--sync-reads`; `None` when it may be.
    pub notice: Option<&'static str>,
}

/// Where large recorded texts are written while a session is read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sidecars {
    /// The output directory.
    pub out: PathBuf,
    /// The sidecar directory's name inside it (`<stem>.recorded`).
    pub dir: String,
    /// Files written so far.
    pub written: usize,
}

/// One call to replay.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The call id as recorded.
    pub id: String,
    /// Our tool's name.
    pub tool: String,
    /// The arguments, paths already mapped to `${workspace}`.
    pub args: Value,
    /// The line of the session that made the call (1-based).
    pub line: usize,
    /// Its result, once seen.
    pub result: Option<RecordedResult>,
    /// A whole-file read whose result can be written back (`--sync-reads`).
    pub syncable: bool,
    /// What the mapping could not keep (Claude's `replace_all` …).
    pub note: Option<String>,
    /// Why the recorded result does not count as an answer (the user
    /// rejected or interrupted the call), when it does not.
    pub unanswered: Option<String>,
    /// The tool as recorded (Claude's `Bash`, pi's `bash`), for comments.
    pub recorded_tool: String,
    /// The arguments as recorded, shortened, for comments (without what
    /// the import added, such as a bash `timeout`).
    pub recorded_args: String,
}

/// A tool-call block as recorded: its id, tool name and arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct RawCall {
    /// The call id.
    pub id: String,
    /// The tool's name as recorded.
    pub name: String,
    /// The arguments as recorded.
    pub args: Value,
    /// The line that made the call.
    pub line: usize,
}

impl RawCall {
    /// The call to replay: our `tool` with `args` (already mapped), and
    /// what the mapping could not keep.
    pub fn replayed_as(&self, tool: &str, args: Value, note: Option<String>) -> Call {
        Call {
            id: self.id.clone(),
            tool: tool.to_owned(),
            args,
            line: self.line,
            result: None,
            syncable: false,
            note,
            unanswered: None,
            recorded_tool: self.name.clone(),
            recorded_args: short_json(&self.args),
        }
    }
}

/// A call left out of the replay, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Skipped {
    /// The line of the call.
    pub line: usize,
    /// Its tool, as recorded.
    pub tool: String,
    /// Why it is not replayed.
    pub reason: String,
    /// The arguments as recorded, shortened, for the comment.
    pub args: String,
}

/// A problem in a session file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// The line (1-based).
    pub line: usize,
    /// What is wrong, and what was skipped.
    pub message: String,
}

/// A session read into calls.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Recording {
    /// `pi` or `claude`.
    pub format: &'static str,
    /// The working directory of the session.
    pub cwd: Option<String>,
    /// Batches of calls, in the order they were sent.
    pub batches: Vec<Vec<Call>>,
    /// Calls not replayed.
    pub skipped: Vec<Skipped>,
    /// Problems met, by line: what, and what was skipped.
    pub notes: Vec<Note>,
    /// Lines read.
    pub lines: usize,
    /// Where large texts go (none: every text stays in memory).
    pub sidecars: Option<Sidecars>,
    /// Where each call is, by id: (batch, position).
    index: HashMap<String, (usize, usize)>,
    /// Every call id met, replayed or not, with its line.
    made: HashMap<String, usize>,
}

impl Recording {
    /// An empty recording of `format`, large texts going to `sidecars`.
    pub fn new(format: &'static str, sidecars: Option<Sidecars>) -> Self {
        Self {
            format,
            sidecars,
            ..Self::default()
        }
    }

    /// Adds a problem at `line`.
    pub fn note(&mut self, line: usize, message: impl Into<String>) {
        self.notes.push(Note {
            line,
            message: message.into(),
        });
    }

    /// The call of a tool-call block (`args_key`: where its arguments
    /// are, `arguments` in pi, `input` in Claude Code) read on `line`;
    /// `None` when its id was used before (noted, and listed as skipped).
    pub fn take_call(&mut self, line: usize, block: &Value, args_key: &str) -> Option<RawCall> {
        let text = |key: &str| {
            block
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let call = RawCall {
            id: text("id"),
            name: text("name"),
            args: block.get(args_key).cloned().unwrap_or(Value::Null),
            line,
        };
        if let Some(&first) = self.made.get(&call.id) {
            self.skip(
                &call,
                format!(
                    "call id `{}` was already used on line {first}; this call is skipped",
                    call.id
                ),
                format!("its id `{}` was used before", call.id),
            );
            return None;
        }
        self.made.insert(call.id.clone(), line);
        Some(call)
    }

    /// Leaves `call` out of the replay: `problem` is noted at its line,
    /// `reason` listed with it.
    pub fn skip(&mut self, call: &RawCall, problem: String, reason: String) {
        self.note(call.line, problem);
        self.skipped.push(Skipped {
            line: call.line,
            tool: call.name.clone(),
            reason,
            args: short_json(&call.args),
        });
    }

    /// Whether a call with this id was met (replayed or left out).
    pub fn was_made(&self, id: &str) -> bool {
        self.made.contains_key(id)
    }

    /// A result of call `id` that does not answer it (`reason`: the user
    /// rejected or interrupted it): the call is not replayed.
    pub fn unanswered(&mut self, line: usize, id: &str, reason: &str) {
        match self.find(id) {
            Some(call) if call.result.is_none() && call.unanswered.is_none() => {
                call.unanswered = Some(reason.to_owned());
            }
            Some(_) => self.note(
                line,
                format!("a second result for call `{id}`; the first is kept"),
            ),
            None => {}
        }
    }

    /// Where the call `id` is, if it was made.
    pub fn find(&mut self, id: &str) -> Option<&mut Call> {
        let &(batch, at) = self.index.get(id)?;
        self.batches.get_mut(batch)?.get_mut(at)
    }

    /// Adds a batch of calls (they extend the last batch when `extend`).
    pub fn push_batch(&mut self, calls: Vec<Call>, extend: bool) {
        if calls.is_empty() {
            return;
        }
        if !extend || self.batches.is_empty() {
            self.batches.push(Vec::new());
        }
        let b = self.batches.len() - 1;
        if let Some(batch) = self.batches.last_mut() {
            for call in calls {
                self.index.insert(call.id.clone(), (b, batch.len()));
                batch.push(call);
            }
        }
    }

    /// The result of call `id`, read on `line`: kept with its call (a large
    /// text written to a sidecar at once), or a problem noted. `skipped`:
    /// A result for a call that was left out is passed over quietly (the
    /// call was reported).
    pub fn answer(
        &mut self,
        line: usize,
        id: &str,
        is_error: bool,
        (text, images): (String, usize),
    ) {
        let skipped = self.was_made(id);
        match self
            .find(id)
            .map(|c| c.result.is_some() || c.unanswered.is_some())
        {
            None if skipped => {}
            None => self.note(
                line,
                format!("a result for call `{id}`, which no call on this branch made; skipped"),
            ),
            Some(true) => self.note(
                line,
                format!("a second result for call `{id}`; the first is kept"),
            ),
            Some(false) => {
                let notice = read_notice(&text);
                let text = self.store(line, text);
                if let Some(call) = self.find(id) {
                    call.result = Some(RecordedResult {
                        is_error,
                        text,
                        images,
                        notice,
                    });
                }
            }
        }
    }

    /// A text kept in memory, or written to the next sidecar file.
    fn store(&mut self, line: usize, text: String) -> Text {
        let Some(sidecars) = &mut self.sidecars else {
            return Text::Inline(text);
        };
        if text.len() <= MAX_INLINE_TEXT {
            return Text::Inline(text);
        }
        let rel = format!("{}/{}.txt", sidecars.dir, sidecars.written + 1);
        let path = sidecars.out.join(&rel);
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, &text));
        match written {
            Ok(()) => {
                sidecars.written += 1;
                Text::Sidecar(rel)
            }
            Err(err) => {
                self.note(
                    line,
                    format!(
                        "cannot write the recorded text to {}: {err}; it is kept inline",
                        path.display()
                    ),
                );
                Text::Inline(text)
            }
        }
    }

    /// Moves calls that never got a result to `skipped`, drops empty
    /// batches, and puts the problems in line order.
    pub fn finish(&mut self) {
        let mut skipped = Vec::new();
        for batch in &mut self.batches {
            batch.retain(|call| {
                if call.result.is_some() {
                    return true;
                }
                skipped.push(Skipped {
                    line: call.line,
                    tool: call.recorded_tool.clone(),
                    reason: call
                        .unanswered
                        .clone()
                        .unwrap_or_else(|| "never answered (aborted or terminated)".to_owned()),
                    args: call.recorded_args.clone(),
                });
                false
            });
        }
        self.batches.retain(|b| !b.is_empty());
        self.skipped.extend(skipped);
        self.skipped.sort_by_key(|s| s.line);
        self.notes.sort_by_key(|n| n.line);
    }

    /// Every call, in order.
    pub fn calls(&self) -> impl Iterator<Item = &Call> {
        self.batches.iter().flatten()
    }
}

/// Reads the session at `path` into `rec`, streaming: every line that
/// reads as an entry `T` is handed to `each` with its line number, every
/// other line is a problem at its line; then what finding `branch` had to
/// assume is added to the problems.
pub fn read_entries<T: DeserializeOwned>(
    path: &Path,
    rec: &mut Recording,
    branch: &Branch,
    mut each: impl FnMut(&mut Recording, usize, T),
) -> Result<(), String> {
    for_each_line(path, |number, line| {
        rec.lines = number;
        match line {
            Line::TooLong => rec.note(number, too_long()),
            Line::Text {
                bytes,
                last_unterminated,
            } => match serde_json::from_slice::<T>(bytes) {
                Ok(entry) => each(rec, number, entry),
                Err(err) => rec.note(number, unreadable(&err, last_unterminated)),
            },
        }
    })
    .map_err(|err| format!("cannot read {}: {err}", path.display()))?;
    for (line, message) in branch.notes() {
        rec.note(*line, message.clone());
    }
    Ok(())
}

/// Words of a notice that a read's text is not the whole file (pi's and
/// this harness's: `[Showing lines 1-2000 of 5000. Use offset=2001 to
/// continue.]`, `[120 more lines in file. Use offset=81 to continue.]`,
/// `[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: …]`, an image's
/// `[Image omitted: …]`).
const NOTICE_WORDS: [&str; 9] = [
    "offset=",
    "Showing lines",
    "more lines",
    "exceeds",
    "limit",
    "Use bash",
    "truncated",
    "omitted",
    "continue",
];

/// Why a read's recorded text is not the file's whole text, if it is not:
/// its last line is a bracketed notice of the kinds above, or it is an
/// image's (`Read image file [image/png]`). Meant to err on the side of
/// "not whole": a file wrongly left unsynced only drifts, a notice
/// written into a file would be wrong.
pub fn read_notice(text: &str) -> Option<&'static str> {
    if text.starts_with("Read image file [") {
        return Some("its recorded result is an image");
    }
    let tail = text.lines().last().unwrap_or("").trim();
    // A notice is a sentence in brackets (a `[limits]` section is not).
    let bracketed = tail.starts_with('[') && tail.ends_with(']') && tail.contains(' ');
    (bracketed && NOTICE_WORDS.iter().any(|w| tail.contains(w)))
        .then_some("its recorded text ends with a truncation or continuation notice")
}

/// Characters of recorded arguments kept in a comment.
pub const MAX_COMMENT_CHARS: usize = 200;

/// `value` as one line of JSON, cut to [`MAX_COMMENT_CHARS`].
pub fn short_json(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(MAX_COMMENT_CHARS) {
        None => text,
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

/// A result's content blocks (`[{type: text, text}, {type: image}]`, or a
/// plain string) as text and an image count.
pub fn content_text(content: &Value) -> (String, usize) {
    match content {
        Value::String(s) => (s.clone(), 0),
        Value::Array(blocks) => {
            let mut texts = Vec::new();
            let mut images = 0;
            for block in blocks {
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        if let Some(t) = block.get("text").and_then(Value::as_str) {
                            texts.push(t);
                        }
                    }
                    Some("image") => images += 1,
                    _ => {}
                }
            }
            (texts.join("\n"), images)
        }
        _ => (String::new(), 0),
    }
}

/// The entry types of pi's sessions.
pub const PI_ENTRY_TYPES: [&str; 10] = [
    "session",
    "message",
    "compaction",
    "model_change",
    "thinking_level_change",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
];

/// The entry types of Claude Code's transcripts.
pub const CLAUDE_ENTRY_TYPES: [&str; 7] = [
    "user",
    "assistant",
    "summary",
    "system",
    "file-history-snapshot",
    "queue-operation",
    "progress",
];

/// Entries of the other format met while reading a session (a Claude Code
/// transcript given as `pi`, or the other way round).
#[derive(Debug, Default)]
pub struct Foreign {
    /// Their lines and entry types.
    lines: Vec<(usize, String)>,
}

impl Foreign {
    /// An entry of type `kind`, on `line`, that belongs to the other format.
    pub fn see(&mut self, line: usize, kind: &str) {
        self.lines.push((line, kind.to_owned()));
    }

    /// When the session gave no call at all, one problem saying that the
    /// file looks like `what` (the other format, and how to import it);
    /// otherwise each entry is an unknown entry type, as any other.
    pub fn finish(self, rec: &mut Recording, what: &str) {
        let Some(&(first, _)) = self.lines.first() else {
            return;
        };
        if rec.batches.is_empty() && rec.skipped.is_empty() {
            let n = self.lines.len();
            rec.note(
                first,
                format!(
                    "no call was found, and {n} {} like a {what}",
                    if n == 1 { "line looks" } else { "lines look" }
                ),
            );
            return;
        }
        for (line, kind) in self.lines {
            rec.note(line, format!("unknown entry type `{kind}`; skipped"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_notices_are_told_from_file_text() {
        let cases = [
            ("a\nb\n", None),
            ("[package]\nname = \"x\"\n\n[limits]\n", None),
            ("", None),
            (
                "[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '1p' a | head -c 51200]",
                Some("its recorded text ends with a truncation or continuation notice"),
            ),
            (
                "a\n\n[3 more lines in file. Use offset=2 to continue.]",
                Some("its recorded text ends with a truncation or continuation notice"),
            ),
            (
                "a\n\n[Showing lines 1-1 of 3 (50.0KB limit). Use offset=2 to continue.]",
                Some("its recorded text ends with a truncation or continuation notice"),
            ),
            (
                "Read image file [image/png]",
                Some("its recorded result is an image"),
            ),
        ];
        let got: Vec<_> = cases.iter().map(|(text, _)| read_notice(text)).collect();
        let want: Vec<_> = cases.iter().map(|(_, why)| *why).collect();
        assert_eq!(got, want);
    }
}
