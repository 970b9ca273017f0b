//! What an importer makes of a recorded session, whatever its format: the
//! calls to replay in their batches, each with its recorded result, the
//! calls left out, and the problems met, each at its line.

use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::Value;

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
    /// Whether the text is a whole file's (no continuation notice at its
    /// end), for `--sync-reads`.
    pub complete: bool,
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
    /// whether the id is of a call that was left out (its result is
    /// passed over quietly, the call was reported).
    pub fn answer(
        &mut self,
        line: usize,
        id: &str,
        is_error: bool,
        (text, images): (String, usize),
        skipped: bool,
    ) {
        match self.find(id).map(|c| c.result.is_some()) {
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
                let complete = looks_complete(&text);
                let text = self.store(line, text);
                if let Some(call) = self.find(id) {
                    call.result = Some(RecordedResult {
                        is_error,
                        text,
                        images,
                        complete,
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

    /// Moves calls that never got a result to `skipped`, and drops empty
    /// batches.
    pub fn finish(&mut self) {
        let mut skipped = Vec::new();
        for batch in &mut self.batches {
            batch.retain(|call| {
                if call.result.is_some() {
                    return true;
                }
                skipped.push(Skipped {
                    line: call.line,
                    tool: call.tool.clone(),
                    reason: "never answered (aborted or terminated)".to_owned(),
                    args: short_json(&call.args),
                });
                false
            });
        }
        self.batches.retain(|b| !b.is_empty());
        self.skipped.extend(skipped);
        self.skipped.sort_by_key(|s| s.line);
    }

    /// Every call, in order.
    pub fn calls(&self) -> impl Iterator<Item = &Call> {
        self.batches.iter().flatten()
    }
}

/// Whether a read's text is the whole file (no continuation notice).
fn looks_complete(text: &str) -> bool {
    let tail = text.lines().last().unwrap_or("");
    !(tail.starts_with('[') && (tail.contains("offset=") || tail.contains("Showing lines")))
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
