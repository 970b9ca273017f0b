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

use std::fmt::Write as _;

use serde_json::Value;

/// `value` as a YAML document (a mapping at the top: `key: value` lines).
pub(crate) fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => mapping(&mut out, map, 0),
        Value::Array(items) if !items.is_empty() => sequence(&mut out, items, 0),
        other => {
            scalar(&mut out, other, 0);
            out.push('\n');
        }
    }
    out
}

fn indent(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

fn mapping(out: &mut String, map: &serde_json::Map<String, Value>, at: usize) {
    for (n, (key, value)) in map.iter().enumerate() {
        if n > 0 {
            indent(out, at);
        }
        string(out, key, at, true);
        out.push(':');
        nested(out, value, at + 2);
    }
}

fn sequence(out: &mut String, items: &[Value], at: usize) {
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
fn nested(out: &mut String, value: &Value, at: usize) {
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

fn scalar(out: &mut String, value: &Value, at: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => string(out, s, at, false),
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
}

/// A string: plain, a literal block (values only), or double-quoted.
fn string(out: &mut String, s: &str, at: usize, key: bool) {
    if plain_ok(s) {
        out.push_str(s);
    } else if !key && block_ok(s) {
        block(out, s, at);
    } else {
        quoted(out, s);
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

/// A literal block: `|` with an indentation indicator when the first line
/// starts with a space, and the chomping that keeps the trailing newlines
/// exactly (`-` none, clip one, `+` more).
fn block(out: &mut String, s: &str, at: usize) {
    let body = s.trim_end_matches('\n');
    let trailing = s.len() - body.len();
    let at = at.max(2);
    out.push('|');
    if body.starts_with(' ') || body.starts_with('\n') {
        // Relative to the parent, whose content this is indented 2 past.
        out.push('2');
    }
    out.push_str(match trailing {
        0 => "-",
        1 => "",
        _ => "+",
    });
    for line in s.strip_suffix('\n').unwrap_or(s).split('\n') {
        out.push('\n');
        if !line.is_empty() {
            indent(out, at);
            out.push_str(line);
        }
    }
}

/// A double-quoted string, every character that is not printable ASCII
/// or plain text escaped.
fn quoted(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
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
    out.push('"');
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
