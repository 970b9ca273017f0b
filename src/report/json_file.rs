//! Problems of the JSON files the harness reads (run.json for `--baseline`,
//! `--last-failed` and `report merge`, baselines): what serde_json found
//! and where, shown as scenario files' problems are, `file:line:col`.

/// What serde_json found wrong with a JSON file, and where: its line and
/// column (from 1), when the problem has a place in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JsonError {
    /// Line and column, from 1.
    pub place: Option<(usize, usize)>,
    /// What is wrong, without serde_json's own "at line L column C".
    pub message: String,
}

impl JsonError {
    /// The problem `err` describes. serde_json numbers a line's very
    /// start as column 0 (at the end of the text); that is column 1 here.
    pub(crate) fn of(err: &serde_json::Error) -> Self {
        let full = err.to_string();
        if err.line() == 0 {
            return Self {
                place: None,
                message: full,
            };
        }
        let suffix = format!(" at line {} column {}", err.line(), err.column());
        Self {
            place: Some((err.line(), err.column().max(1))),
            message: full.strip_suffix(&suffix).unwrap_or(&full).to_owned(),
        }
    }
}

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// `message` about the file at `path`, at `place` when it has one:
/// `path:line:column: message` (as scenario files' problems are shown),
/// otherwise `path: message`.
pub(crate) fn in_file(
    path: &std::path::Path,
    place: Option<(usize, usize)>,
    message: &str,
) -> String {
    match place {
        Some((line, column)) => format!("{}:{line}:{column}: {message}", path.display()),
        None => format!("{}: {message}", path.display()),
    }
}
