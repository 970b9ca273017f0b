//! The YAML the importer writes: block style for people, and every string
//! written so that the scenario loader (YAML 1.2) reads back exactly the
//! string recorded, byte for byte. A string is plain only when nothing in
//! it could be read otherwise (another type, an indicator, a comment, a
//! line break); text of several lines is a literal block when all its
//! characters may stand in one; anything else is double-quoted with
//! escapes: every control character, and the characters YAML 1.1 readers
//! and writers take for line breaks (U+0085, U+2028, U+2029), the byte
//! order mark and the non-characters U+FFFE and U+FFFF, so that no writer
//! or reader on the way folds or drops them.
//!
//! A document is built in memory ([`to_yaml`]) or written as it is made
//! ([`write_yaml`]); in the second, a string that stands for a text kept
//! elsewhere (a [`Spooled`] text, such as a large argument an importer put
//! on disk as it read it) is written from there, a piece at a time, in the
//! style [`Style::of`] chose for it when it was put there.

use std::fmt::Write as _;
use std::io;

use serde_json::Value;

/// How many bytes [`write_yaml`] gathers before it writes them.
const CHUNK: usize = 64 * 1024;

/// Texts kept outside the document, each stood for by a string in it.
pub(crate) trait Spooled {
    /// When `s` stands for a kept text: the style chosen for it, and a
    /// reader of its bytes (which are UTF-8).
    fn spooled(&self, s: &str) -> Option<(Style, Box<dyn io::Read + '_>)>;
}

/// How a string value is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Style {
    /// As it is.
    Plain,
    /// A literal block: its header (`|`, `|2-`, `|+` …), then its lines.
    Block(String),
    /// Double-quoted, with escapes.
    Quoted,
}

impl Style {
    /// The style of the value `s` (a key is never a block).
    pub(crate) fn of(s: &str) -> Self {
        if plain_ok(s) {
            Self::Plain
        } else if block_ok(s) {
            let body = s.trim_end_matches('\n');
            let mut header = "|".to_owned();
            if body.starts_with(' ') || body.starts_with('\n') {
                // Relative to the parent, whose content this is indented 2
                // past.
                header.push('2');
            }
            header.push_str(match s.len() - body.len() {
                0 => "-",
                1 => "",
                _ => "+",
            });
            Self::Block(header)
        } else {
            Self::Quoted
        }
    }
}

/// Where the document goes: gathered in `text`, and written to `sink` (if
/// any) a chunk at a time; the first error of the sink is kept.
struct Out<'a> {
    text: String,
    sink: Option<&'a mut dyn io::Write>,
    spooled: Option<&'a dyn Spooled>,
    error: Option<io::Error>,
}

impl Out<'_> {
    fn push(&mut self, c: char) {
        self.text.push(c);
    }

    fn push_str(&mut self, s: &str) {
        self.text.push_str(s);
        if self.text.len() >= CHUNK {
            self.flush();
        }
    }

    /// Writes what was gathered to the sink (nothing without one).
    fn flush(&mut self) {
        let Some(sink) = self.sink.as_mut() else {
            return;
        };
        if self.error.is_none()
            && let Err(err) = sink.write_all(self.text.as_bytes())
        {
            self.error = Some(err);
        }
        self.text.clear();
    }
}

impl std::fmt::Write for Out<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.push_str(s);
        Ok(())
    }
}

/// `value` as a YAML document (a mapping at the top: `key: value` lines).
pub(crate) fn to_yaml(value: &Value) -> String {
    let mut out = Out {
        text: String::new(),
        sink: None,
        spooled: None,
        error: None,
    };
    document(&mut out, value);
    out.text
}

/// `value` as a YAML document written into `sink` as it is made, each
/// string that stands for one of `spooled`'s texts written as that text.
pub(crate) fn write_yaml(
    value: &Value,
    spooled: Option<&dyn Spooled>,
    sink: &mut dyn io::Write,
) -> io::Result<()> {
    let mut out = Out {
        text: String::with_capacity(CHUNK + 1024),
        sink: Some(sink),
        spooled,
        error: None,
    };
    document(&mut out, value);
    out.flush();
    match out.error {
        Some(err) => Err(err),
        None => Ok(()),
    }
}

fn document(out: &mut Out<'_>, value: &Value) {
    match value {
        Value::Object(map) if !map.is_empty() => mapping(out, map, 0),
        Value::Array(items) if !items.is_empty() => sequence(out, items, 0),
        other => {
            scalar(out, other, 0);
            out.push('\n');
        }
    }
}

fn indent(out: &mut Out<'_>, n: usize) {
    out.text.extend(std::iter::repeat_n(' ', n));
}

fn mapping(out: &mut Out<'_>, map: &serde_json::Map<String, Value>, at: usize) {
    for (n, (key, value)) in map.iter().enumerate() {
        if n > 0 {
            indent(out, at);
        }
        string(out, key, at, true);
        out.push(':');
        nested(out, value, at + 2);
    }
}

fn sequence(out: &mut Out<'_>, items: &[Value], at: usize) {
    for (n, item) in items.iter().enumerate() {
        if n > 0 {
            indent(out, at);
        }
        out.push_str("- ");
        match item {
            Value::Object(map) if !map.is_empty() => mapping(out, map, at + 2),
            Value::Array(inner) if !inner.is_empty() => sequence(out, inner, at + 2),
            other => {
                scalar(out, other, at + 2);
                out.push('\n');
            }
        }
    }
}

/// A value after `key:`: on the next lines when it is a non-empty
/// collection, after a space otherwise.
fn nested(out: &mut Out<'_>, value: &Value, at: usize) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            indent(out, at);
            mapping(out, map, at);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            indent(out, at);
            sequence(out, items, at);
        }
        other => {
            out.push(' ');
            scalar(out, other, at);
            out.push('\n');
        }
    }
}

fn scalar(out: &mut Out<'_>, value: &Value, at: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => string(out, s, at, false),
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
}

/// A string: plain, a literal block (values only), or double-quoted; or,
/// for a value that stands for a spooled text, that text.
fn string(out: &mut Out<'_>, s: &str, at: usize, key: bool) {
    if !key
        && let Some(spooled) = out.spooled
        && let Some((style, reader)) = spooled.spooled(s)
    {
        out.flush();
        if out.error.is_none()
            && let Err(err) = spooled_string(out, &style, reader, at)
        {
            out.error = Some(err);
        }
        return;
    }
    match Style::of(s) {
        Style::Plain => out.push_str(s),
        Style::Block(header) if !key => block(out, &header, s, at),
        _ => quoted(out, s),
    }
}

/// A spooled text, read from `reader` a piece at a time, in `style`.
fn spooled_string(
    out: &mut Out<'_>,
    style: &Style,
    mut reader: Box<dyn io::Read + '_>,
    at: usize,
) -> io::Result<()> {
    let mut bytes = vec![0u8; CHUNK];
    // Bytes of a character cut at the end of the last piece.
    let mut carried = 0;
    let mut lines = None;
    match style {
        Style::Block(header) => {
            out.push_str(header);
            lines = Some(BlockLines::begin(out, at.max(2)));
        }
        Style::Quoted => out.push('"'),
        Style::Plain => {}
    }
    loop {
        let n = reader.read(&mut bytes[carried..])?;
        let end = carried + n;
        if n == 0 && carried > 0 {
            return Err(io::Error::other("a spooled text ends inside a character"));
        }
        if n == 0 {
            break;
        }
        let (text, rest) = match std::str::from_utf8(&bytes[..end]) {
            Ok(text) => (text, 0),
            Err(err) if err.error_len().is_none() => {
                let valid = err.valid_up_to();
                let text = std::str::from_utf8(&bytes[..valid]).map_err(io::Error::other)?;
                (text, end - valid)
            }
            Err(err) => return Err(io::Error::other(err)),
        };
        match style {
            Style::Plain => out.push_str(text),
            Style::Block(_) => {
                if let Some(lines) = lines.as_mut() {
                    lines.feed(out, text);
                }
            }
            Style::Quoted => {
                for c in text.chars() {
                    escaped(out, c);
                }
                if out.text.len() >= CHUNK {
                    out.flush();
                }
            }
        }
        bytes.copy_within(end - rest..end, 0);
        carried = rest;
    }
    if *style == Style::Quoted {
        out.push('"');
    }
    out.flush();
    match out.error.take() {
        Some(err) => Err(err),
        None => Ok(()),
    }
}

/// The lines of a literal block written as its text comes: each line of
/// the text without its last newline on a line of its own, indented
/// unless it is empty (the block's chomping says how many newlines end
/// the text).
struct BlockLines {
    at: usize,
    /// A newline was read and not written yet (it may be the last).
    pending: bool,
    /// Something was written on the current line.
    content: bool,
}

impl BlockLines {
    /// Starts the block's first line.
    fn begin(out: &mut Out<'_>, at: usize) -> Self {
        out.push('\n');
        Self {
            at,
            pending: false,
            content: false,
        }
    }

    fn feed(&mut self, out: &mut Out<'_>, text: &str) {
        for (n, piece) in text.split('\n').enumerate() {
            if n > 0 {
                // A newline: the one held back before it is not the last.
                if self.pending {
                    self.newline(out);
                }
                self.pending = true;
            }
            if piece.is_empty() {
                continue;
            }
            if self.pending {
                self.newline(out);
                self.pending = false;
            }
            if !self.content {
                indent(out, self.at);
                self.content = true;
            }
            out.push_str(piece);
        }
    }

    fn newline(&mut self, out: &mut Out<'_>) {
        out.push('\n');
        self.content = false;
    }
}

/// Words a plain scalar could be read as instead of a string (YAML 1.1
/// and 1.2 booleans and nulls).
const TYPED_WORDS: [&str; 16] = [
    "true", "false", "null", "~", "yes", "no", "on", "off", "y", "n", ".nan", ".inf", "-.inf",
    "+.inf", "<<", "=",
];

fn plain_ok(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if s.len() > 200 || s.starts_with(' ') || s.ends_with(' ') {
        return false;
    }
    if "-?:,[]{}#&*!|>'\"%@`".contains(first) {
        return false;
    }
    if TYPED_WORDS.contains(&s.to_ascii_lowercase().as_str()) {
        return false;
    }
    // Anything that starts like a number (1, .5, +3, 0x1F, 1_000, 12:30).
    if first.is_ascii_digit() || ((first == '.' || first == '+') && s.len() > 1) {
        return false;
    }
    if s.contains(": ") || s.contains(" #") || s.ends_with(':') {
        return false;
    }
    s.chars()
        .all(|c| (' '..='~').contains(&c) || (c >= '\u{a0}' && !needs_escape(c)))
}

/// Characters always written as escapes.
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
        )
}

/// Whether `s` may be a literal block: several lines, each of printable
/// characters only (a tab is one), no carriage return, and not only
/// whitespace.
fn block_ok(s: &str) -> bool {
    s.contains('\n')
        && s.len() > 1
        && !s.trim().is_empty()
        && s.chars()
            .all(|c| c == '\n' || c == '\t' || !needs_escape(c))
        && !s
            .split('\n')
            .any(|l| l.ends_with(' ') && l.trim().is_empty() && !l.is_empty())
}

/// A literal block: `header` (an indentation indicator when the first
/// line starts with a space, and the chomping that keeps the trailing
/// newlines exactly: `-` none, clip one, `+` more), then the lines.
fn block(out: &mut Out<'_>, header: &str, s: &str, at: usize) {
    out.push_str(header);
    BlockLines::begin(out, at.max(2)).feed(out, s);
}

/// A double-quoted string, every character that is not printable ASCII
/// or plain text escaped.
fn quoted(out: &mut Out<'_>, s: &str) {
    out.push('"');
    for c in s.chars() {
        escaped(out, c);
    }
    out.push('"');
}

/// One character of a double-quoted string.
fn escaped(out: &mut Out<'_>, c: char) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        '\0' => out.push_str("\\0"),
        c if needs_escape(c) => {
            let n = u32::from(c);
            if n <= 0xff {
                let _ = write!(out, "\\x{n:02x}");
            } else {
                let _ = write!(out, "\\u{n:04x}");
            }
        }
        c => out.push(c),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    /// What the scenario loader reads `yaml` as.
    fn read_back(yaml: &str) -> Value {
        let stream = crate::scenario::yaml::parse(yaml);
        assert!(stream.fatal.is_none(), "{:?}\n{yaml}", stream.fatal);
        stream.documents[0].root.to_json()
    }

    proptest! {
        /// Issue 21 item 10: U+2028 came back with spaces added. Any
        /// string, as a key or a value, alone or in a list, reads back
        /// byte for byte.
        #[test]
        fn every_string_reads_back_exactly(
            key in "\\PC{0,8}|[ -~]{1,8}",
            value in any::<String>(),
            lines in proptest::collection::vec("[ \t\\PC\u{85}\u{2028}\r]{0,12}", 0..5),
        ) {
            let key = if key.is_empty() { "k".to_owned() } else { key };
            let text = lines.join("\n");
            let mut doc = serde_json::Map::new();
            doc.insert("text".into(), json!(text));
            doc.insert("list".into(), json!([text, {"a": value, "b": [text]}]));
            doc.insert(
                "nested".into(),
                json!({"x": format!("{text}\n"), "y": format!("{text}\n\n")}),
            );
            doc.insert(key, json!(value));
            let doc = Value::Object(doc);
            prop_assert_eq!(read_back(&to_yaml(&doc)), doc);
        }
    }

    #[test]
    fn strings_are_written_in_the_plainest_style_that_reads_back() {
        let doc = json!({
            "name": "imported pi session s1",
            "n": 3,
            "empty": "",
            "yes": "yes",
            "num": "0755",
            "colon": "a: b",
            "lines": "one\n two\n",
            "indented": "  x\ny",
            "seps": "a\u{2028}b\u{85}c\u{1b}[0m",
            "cr": "a\r\nb\n",
            "list": [{"call": "read", "args": {"path": "${workspace}/a"}}, "x", []],
            "keys": {"a b": 1, "-x": 2},
        });
        assert_eq!(
            to_yaml(&doc),
            "name: imported pi session s1\n\
             \"n\": 3\n\
             empty: \"\"\n\
             \"yes\": \"yes\"\n\
             num: \"0755\"\n\
             colon: \"a: b\"\n\
             lines: |\n  one\n   two\n\
             indented: |2-\n    x\n  y\n\
             seps: \"a\\u2028b\\x85c\\x1b[0m\"\n\
             cr: \"a\\r\\nb\\n\"\n\
             list:\n  - call: read\n    args:\n      path: ${workspace}/a\n  - x\n  - []\n\
             keys:\n  a b: 1\n  \"-x\": 2\n"
        );
    }
}
