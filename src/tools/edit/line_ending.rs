//! Line endings of the `edit` tool (§edit.3, §edit.7): matching works on
//! `\n` text, and the file is written back with the ending it had.

use std::borrow::Cow;

use serde::Deserialize;
use serde::Serialize;

/// The line ending a file is written back with (§edit.3); in `details` as
/// `"crlf"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LineEnding {
    /// `\n`
    Lf,
    /// `\r\n`
    CrLf,
}

/// CRLF when the first `\n` is preceded by `\r`; otherwise (no `\n` at all,
/// CR-only, LF) LF.
pub(crate) fn detect_line_ending(text: &str) -> LineEnding {
    match memchr::memchr(b'\n', text.as_bytes()) {
        Some(i) if i > 0 && text.as_bytes()[i - 1] == b'\r' => LineEnding::CrLf,
        _ => LineEnding::Lf,
    }
}

/// `\r\n` to `\n`, then every lone `\r` to `\n`.
pub(super) fn to_lf(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let Some(first) = memchr::memchr(b'\r', bytes) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..first]);
    let mut rest = &text[first..];
    while let Some(i) = memchr::memchr(b'\r', rest.as_bytes()) {
        out.push_str(&rest[..i]);
        out.push('\n');
        let after = &rest[i + 1..];
        rest = after.strip_prefix('\n').unwrap_or(after);
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Writes `text` (LF) with the given line ending.
pub(crate) fn restore_line_endings(text: &str, ending: LineEnding) -> Cow<'_, str> {
    match ending {
        LineEnding::Lf => Cow::Borrowed(text),
        LineEnding::CrLf => Cow::Owned(text.replace('\n', "\r\n")),
    }
}
