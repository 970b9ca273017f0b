//! What an importer makes of a recorded session, whatever its format: the
//! calls to replay in their batches, each with its recorded result, the
//! calls left out, and the problems met, each at its line.

use serde_json::Value;

/// A recorded result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedResult {
    /// Whether it was an error.
    pub is_error: bool,
    /// Its text blocks joined by newlines.
    pub text: String,
    /// How many image blocks it held.
    pub images: usize,
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
}

impl Recording {
    /// Adds a problem at `line`.
    pub fn note(&mut self, line: usize, message: impl Into<String>) {
        self.notes.push(Note {
            line,
            message: message.into(),
        });
    }

    /// Where the call `id` is, if it was made.
    pub fn find(&mut self, id: &str) -> Option<&mut Call> {
        self.batches
            .iter_mut()
            .flat_map(|b| b.iter_mut())
            .find(|c| c.id == id)
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
