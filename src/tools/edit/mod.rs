//! The `edit` tool (§edit).
//!
//! Replaces exact text in one file: every `oldText` must match a unique,
//! non-overlapping region of the file as it was before the call, and either
//! every edit is applied or none. This module reads and writes the file:
//!
//! ```text
//! matching.rs      the engine: exact, then fuzzy matching; the new text
//! messages.rs      what a failed match tells the model, and its details
//! line_ending.rs   LF for matching, the file's own ending for writing
//! diff.rs          the display diff and the unified patch
//! ```
//!
//! The file is decoded as UTF-8, one leading BOM is set aside, and its line
//! ending is taken from its first line (§edit.3). Matching works on LF
//! text; the result is written back with the BOM and that line ending
//! (§edit.7). Runs inside the mutation queue of the file's real path, so it
//! is ordered with `write`s and other `edit`s of the same file.
//!
//! Differences from pi: paths are confined to the workspace (D1); a missing
//! file gets a workspace-relative message with "did you mean" (D6); a file
//! that is not valid UTF-8 is refused instead of being written back with
//! U+FFFD in place of its bytes; error texts say where the closest match or
//! the duplicates are and what to do next.

mod diff;
mod line_ending;
pub mod matching;
mod messages;

use std::borrow::Cow;

use serde::Deserialize;
use serde::Serialize;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::contract::ExecutionMode;
use super::contract::Limits;
use super::contract::Tool;
use super::contract::ToolContext;
use super::contract::ToolOutput;
use super::contract::ToolSpec;
use super::contract::object_schema;
use super::error::ToolError;
use super::facts::ErrorClass;
use super::facts::ErrorKind;
use super::facts::ToolDetails;
use super::facts::same_details;
use super::file_kind::BinaryKind;
use super::file_kind::shell_quote;
use super::file_kind::sniff_binary;
use super::fs_error::io_failure;
use super::ops::FileKind;
use super::read::SNIFF_BYTES;
use super::task::run_blocking;
use super::truncate::format_size;
use super::workspace::Lookup;
use diff::diffs;
pub use line_ending::LineEnding;
use line_ending::detect_line_ending;
use line_ending::restore_line_endings;
use line_ending::to_lf;
use matching::EditRequest;
use matching::apply_edits;

const BOM: &str = "\u{FEFF}";

/// The `edit` tool.
#[derive(Clone, Copy, Debug, Default)]
pub struct EditTool;

/// One replacement.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditItem {
    /// The exact text to replace.
    #[serde(rename = "oldText")]
    pub old_text: String,
    /// The replacement.
    #[serde(rename = "newText")]
    pub new_text: String,
}

/// Arguments of `edit`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditArgs {
    /// The file to edit.
    pub path: String,
    /// The replacements, matched against the original file.
    pub edits: Vec<EditItem>,
}

impl Tool for EditTool {
    type Args = EditArgs;

    fn spec(&self, _limits: &Limits) -> ToolSpec {
        ToolSpec {
            name: "edit".into(),
            label: "Edit".into(),
            description: "Edit one file by replacing exact text. Each entry of edits replaces its \
                          oldText with its newText. Every oldText must match a unique region of \
                          the file, and no two may overlap or nest. All edits are matched against \
                          the file as it is before this call, not against the result of the other \
                          edits, and either all of them are applied or none. If two changes touch \
                          the same or nearby lines, make them one edit. Keep each oldText as short \
                          as it can be while still unique; do not pad it with long unchanged \
                          stretches."
                .to_owned(),
            prompt_snippet: "Make precise changes to files by replacing exact text".to_owned(),
            prompt_guidelines: vec![
                "Use edit for precise changes to existing files; oldText must match the file \
                 exactly, including whitespace and indentation."
                    .to_owned(),
                "To change several places in one file, make one edit call with several entries \
                 in edits rather than several calls."
                    .to_owned(),
                "All edits in one call are matched against the original file, not against the \
                 result of earlier edits; keep each oldText minimal but unique."
                    .to_owned(),
            ],
            parameters: object_schema(
                json!({
                    "path": {
                        "type": "string",
                        "description": "Path of the file to edit, relative to the workspace root (or absolute)"
                    },
                    "edits": {
                        "type": "array",
                        "description": "The replacements. Each is matched against the original file, not against the result of the others; they must not overlap or nest. Merge changes to nearby lines into one edit.",
                        "items": {
                            "type": "object",
                            "description": "One targeted replacement: oldText must occur exactly once in the original file and must not overlap another edit.",
                            "properties": {
                                "oldText": {
                                    "type": "string",
                                    "description": "The exact text to replace, including whitespace and indentation; unique in the file"
                                },
                                "newText": {
                                    "type": "string",
                                    "description": "The text to put in its place"
                                }
                            },
                            "required": ["oldText", "newText"],
                            "additionalProperties": false
                        }
                    }
                }),
                &["path", "edits"],
            ),
            execution_mode: ExecutionMode::Parallel,
        }
    }

    /// §edit.2: `edits` sent as JSON text is parsed; legacy top-level
    /// `oldText`/`newText` (both strings) become the last edit.
    fn prepare_arguments(&self, args: Value) -> Value {
        let Value::Object(mut object) = args else {
            return args;
        };
        if let Some(Value::String(text)) = object.get("edits")
            && let Ok(parsed @ Value::Array(_)) = serde_json::from_str::<Value>(text)
        {
            object.insert("edits".to_owned(), parsed);
        }
        let legacy = matches!(
            (object.get("oldText"), object.get("newText")),
            (Some(Value::String(_)), Some(Value::String(_)))
        );
        // pi replaces a non-list `edits` with an empty list here; we keep a
        // single edit object, and leave anything else for validation to
        // report rather than dropping it.
        let mergeable = match object.get("edits") {
            None | Some(Value::Null | Value::Array(_) | Value::Object(_)) => true,
            Some(_) => false,
        };
        if !legacy || !mergeable {
            return Value::Object(object);
        }
        let mut pair = Map::new();
        for key in ["oldText", "newText"] {
            if let Some(value) = object.remove(key) {
                pair.insert(key.to_owned(), value);
            }
        }
        let mut edits = match object.remove("edits") {
            Some(Value::Array(items)) => items,
            Some(single @ Value::Object(_)) => vec![single],
            _ => Vec::new(),
        };
        edits.push(Value::Object(pair));
        object.insert("edits".to_owned(), Value::Array(edits));
        Value::Object(object)
    }

    fn mutation_target<'a>(&self, args: &'a EditArgs) -> Option<&'a str> {
        Some(&args.path)
    }

    async fn execute(&self, args: EditArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        // The texts move into the job: a 100 MB newText is not copied.
        let job = EditJob {
            path: args.path,
            requests: args
                .edits
                .into_iter()
                .map(|e| EditRequest {
                    old_text: e.old_text,
                    new_text: e.new_text,
                })
                .collect(),
        };
        run_blocking("edit", job, ctx, edit_blocking).await
    }
}

/// How `edit` looks up its file: a missing one is for `write`.
const LOOKUP: Lookup = Lookup {
    next_step: Some("To create a new file, use write."),
    ..Lookup::new("File", "read")
};

/// What the blocking part of an edit works on.
struct EditJob {
    path: String,
    requests: Vec<EditRequest>,
}

/// What a call of `edit` can show, as `harness run --coverage` counts it
/// (docs/reports.md, "Coverage").
pub const BEHAVIOURS: &[&str] = &[
    "exact match",
    "fuzzy match",
    "several edits",
    "legacy oldText/newText",
    "CRLF file",
    "arguments normalised",
    "error: old text not found",
    "error: old text found more than once",
    "error: edits overlap",
    "error: no change",
    "error: empty old text",
    "error: whitespace-only old text",
    "error: no edits",
    "error: path not found",
    "error: not UTF-8",
    "error: a directory",
    "error: outside the workspace",
    "error: permission denied",
    "error: disk full",
    "error: read-only file system",
    "error: I/O error",
    "error: hard-linked file in place",
    "error: invalid arguments",
];

/// `details` of an applied edit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditDetails {
    /// The display diff (numbered lines with context).
    pub diff: String,
    /// The unified patch.
    pub patch: String,
    /// `diff` is only the first `MAX_DIFF_BYTES` of the display diff.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub diff_truncated: bool,
    /// `patch` is only the first `MAX_DIFF_BYTES` of the patch.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub patch_truncated: bool,
    /// The first line that changed, in the new file.
    pub first_changed_line: Option<usize>,
    /// Some edit matched only after normalisation.
    pub fuzzy: bool,
    /// The edits that needed normalisation, when any did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuzzy_edits: Option<Vec<usize>>,
    /// Only for CRLF files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_ending: Option<LineEnding>,
}

impl ToolDetails for EditDetails {
    fn same(&self, other: &dyn ToolDetails) -> bool {
        same_details(self, other)
    }
}

/// `details` of a file that is not UTF-8.
#[derive(Debug, Serialize)]
struct UndecodableDetails {
    bytes: usize,
    invalid_utf8_at: usize,
}

fn edit_blocking(args: &EditJob, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    if args.requests.is_empty() {
        return Err(ToolError::failure(
            ErrorKind::NoEdits,
            "Edit tool input is invalid. edits must contain at least one replacement. Send \
             edits as a list with one {\"oldText\", \"newText\"} object per change.",
        ));
    }
    let (resolved, meta) = ctx.workspace.resolve_existing(&args.path, LOOKUP)?;
    let fs = ctx.workspace.fs().as_ref();
    let display = resolved.display.as_str();
    match meta.kind {
        FileKind::Dir => {
            return Err(ToolError::failure(
                ErrorKind::Io(ErrorClass::IsADirectory),
                format!(
                    "Cannot edit {display}: it is a directory. Give the path of a file inside it."
                ),
            ));
        }
        FileKind::File => {}
        FileKind::Symlink | FileKind::Other => {
            return Err(ToolError::failure(
                ErrorKind::Io(ErrorClass::NotRegular),
                format!(
                    "Cannot edit {display}: it is not a regular file (a device, socket or pipe). \
                 Only regular text files can be edited."
                ),
            ));
        }
    }
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::cancelled());
    }
    let bytes = fs
        .read(&resolved.real)
        .map_err(|err| io_failure("read", display, &err))?;
    let text = decode(bytes, display)?;
    let (bom, body) = match text.strip_prefix(BOM) {
        Some(rest) => (BOM, rest),
        None => ("", text.as_str()),
    };
    let ending = detect_line_ending(body);
    let original = to_lf(body);

    let requests = &args.requests;
    let applied = apply_edits(&original, requests).map_err(|err| match err.rule() {
        None => ToolError::fatal(err.message(display, requests.len())),
        Some(rule) => ToolError::failure_with(
            ErrorKind::Edit(rule),
            err.message(display, requests.len()),
            &err.facts(),
        ),
    })?;

    // Without a BOM or CRLF, the new content is written as it is, not
    // copied first.
    let restored = restore_line_endings(&applied.content, ending);
    let output: Cow<'_, str> = if bom.is_empty() {
        restored
    } else {
        Cow::Owned(format!("{bom}{restored}"))
    };
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::cancelled());
    }
    fs.write(&resolved.real, output.as_bytes())
        .map_err(|err| io_failure("write", display, &err))?;
    // Written: from here on the call succeeds, whatever the token says.
    drop(output);

    let diffs = diffs(
        &args.path,
        &original,
        &applied.content,
        Some(&applied.changes),
    );
    let count = requests.len();
    let details = EditDetails {
        diff: diffs.diff,
        patch: diffs.patch,
        diff_truncated: diffs.diff_truncated,
        patch_truncated: diffs.patch_truncated,
        first_changed_line: diffs.first_changed_line,
        fuzzy: applied.fuzzy,
        fuzzy_edits: applied.fuzzy.then_some(applied.fuzzy_edits),
        line_ending: (ending == LineEnding::CrLf).then_some(ending),
    };
    ToolOutput::text(format!(
        "Successfully replaced {count} block(s) in {display}."
    ))
    .with_facts(details)
}

/// The file's text, or an error for bytes that are not UTF-8 (writing them
/// back as U+FFFD would corrupt the file).
fn decode(bytes: Vec<u8>, display: &str) -> Result<String, ToolError> {
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(err) => {
            let bytes = err.as_bytes();
            let size = format_size(bytes.len());
            let head = &bytes[..bytes.len().min(SNIFF_BYTES)];
            let at = err.utf8_error().valid_up_to();
            let has_nul = memchr::memchr(0, head).is_some();
            let (kind, message) = match sniff_binary(head) {
                Some(BinaryKind::Utf16) => (
                    ErrorKind::NotText,
                    format!(
                        "Cannot edit {display}: it is UTF-16 text ({size}), and edit only changes \
                     UTF-8 text. Convert it first (e.g. with bash: iconv -f UTF-16 -t UTF-8) or \
                     change it with bash."
                    ),
                ),
                Some(kind) if kind != BinaryKind::Data || has_nul => (
                    ErrorKind::NotText,
                    format!(
                        "Cannot edit {display}: it is a binary file ({}, {size}), and edit only \
                     changes UTF-8 text. To inspect it, use bash, e.g. `{}`.",
                        kind.name(),
                        kind.suggestion(&shell_quote(display))
                    ),
                ),
                _ => {
                    let line = memchr::memchr_iter(b'\n', &bytes[..at]).count() + 1;
                    let message = format!(
                        "Cannot edit {display}: it is not valid UTF-8 (the first invalid byte is \
                         on line {line}, at byte offset {at}); it may use another encoding such \
                         as Latin-1. Editing it as text would replace those bytes, so nothing \
                         was changed. Convert it first (e.g. with bash: iconv -f latin1 -t \
                         utf-8) or change it with bash."
                    );
                    (ErrorKind::NotUtf8, message)
                }
            };
            Err(ToolError::failure_with(
                kind,
                message,
                &UndecodableDetails {
                    bytes: bytes.len(),
                    invalid_utf8_at: at,
                },
            ))
        }
    }
}

#[cfg(test)]
mod tests;
