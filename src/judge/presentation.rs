//! Today's result put in the form of a recorded answer (docs/replay.md,
//! "Presentation"): this harness's own presentation taken off, as the
//! importer took the recording client's off, so that the two answers
//! compare as answers. What is taken off is this harness's notices (the
//! bracketed paragraph at the end of a read, grep, find or ls, a command's
//! exit status), the control pictures read shows for control characters,
//! a read's CRLF line endings (Claude Code shows them as LF), the
//! directories find lists (the clients' globs list files only),
//! `path:N: ` before grep's matching lines (context lines are left out),
//! and order (the list forms are sorted); paths become workspace-relative.

use serde_json::Value;

use crate::scenario::replay::AnswerForm;
use crate::scenario::replay::FailureKind;

/// What grep says when nothing matched, ls of an empty directory, and
/// bash of a command that wrote nothing (the tools' own words).
const NO_MATCHES: &str = "No matches found";
const EMPTY_DIRECTORY: &str = "(empty directory)";
const NO_OUTPUT: &str = "(no output)";

/// How the model sees the workspace, for tests.
#[cfg(test)]
const WORKSPACE: &str = "/workspace";

/// `text`, the result of our `tool` called with `args` (as sent, the
/// workspace seen as `workspace`), in `form`; `None` when it cannot be
/// put in that form (a failure for a change, a text that is not the
/// tool's listing). A failure's kind (`failure`) is the one its typed
/// facts say, never read from its words.
pub(crate) fn answer(
    form: AnswerForm,
    tool: &str,
    args: Option<&Value>,
    (text, is_error, failure): (&str, bool, Option<FailureKind>),
    workspace: &str,
) -> Option<String> {
    let path = args
        .and_then(|a| a.get("path"))
        .and_then(Value::as_str)
        .map_or_else(|| ".".to_owned(), |p| relative(p, workspace));
    match form {
        AnswerForm::Done => (!is_error).then(String::new),
        AnswerForm::Text => Some(match tool {
            "read" => unpictured(&lf_lines(without_notice(text))),
            "bash" => command_output(text),
            _ => text.to_owned(),
        }),
        AnswerForm::Files => match tool {
            "find" => {
                // Claude Code's Glob and Gemini CLI's glob list files
                // only; find lists directories too, with a `/`.
                let mut list: Vec<String> = listed(text, "No files found")
                    .filter(|l| !l.ends_with('/'))
                    .map(|l| under(&path, l))
                    .collect();
                list.sort();
                Some(list.join("\n"))
            }
            "grep" => {
                let mut files: Vec<String> = matching(text, &path)?
                    .into_iter()
                    .map(|(file, _)| file)
                    .collect();
                files.sort();
                files.dedup();
                Some(files.join("\n"))
            }
            _ => None,
        },
        AnswerForm::Matches => {
            let mut lines: Vec<String> = matching(text, &path)?
                .into_iter()
                .map(|(file, line)| format!("{file}:{line}"))
                .collect();
            lines.sort();
            Some(lines.join("\n"))
        }
        AnswerForm::Counts => {
            let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
            for (file, _) in matching(text, &path)? {
                *counts.entry(file).or_default() += 1;
            }
            let lines: Vec<String> = counts.iter().map(|(f, n)| format!("{f}:{n}")).collect();
            Some(lines.join("\n"))
        }
        AnswerForm::Failure => is_error
            .then_some(failure)
            .flatten()
            .map(|k| k.as_str().to_owned()),
        AnswerForm::Entries => {
            let mut list: Vec<&str> = listed(text, EMPTY_DIRECTORY).collect();
            list.sort_unstable();
            Some(list.join("\n"))
        }
    }
}

/// Whether two answers of `form` agree: texts compare without their
/// trailing newlines.
pub(crate) fn agree(form: AnswerForm, now: &str, then: &str) -> bool {
    let (now, then) = match form {
        AnswerForm::Text => (now.trim_end_matches('\n'), then.trim_end_matches('\n')),
        _ => (now, then),
    };
    now == then
        || agrees_but_for_redactions(now, then)
        || form == AnswerForm::Text && without_dot_slash(now) == without_dot_slash(then)
}

/// `text` with a leading `./` taken off each line: `grep -rn x .` names
/// `./a.txt`, and the ripgrep a client's shell runs for `grep` (Claude
/// Code's) names `a.txt`; the same file either way.
fn without_dot_slash(text: &str) -> String {
    text.split('\n')
        .map(|line| line.strip_prefix("./").unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `now` is `then` with each redaction marker of a published
/// transcript (`[REDACTED]`, `[REDACTED_AWS_KEY]`, `<redacted>`, a bare
/// `REDACTED` as Entire's checkpoints write it, a user name left out as
/// `[USER]` or `<username>`) standing
/// for any text, the markers being at most half of `then`: a secret
/// scanner that cleaned the transcript before it was shared changed what
/// the model saw there, not the tool.
fn agrees_but_for_redactions(now: &str, then: &str) -> bool {
    let mut literal = Vec::new();
    let mut rest = then;
    let mut marked = 0;
    while let Some((before, marker, after)) = next_marker(rest) {
        literal.push(before);
        marked += marker.len();
        rest = after;
    }
    if literal.is_empty() || marked * 2 > then.len() {
        return false;
    }
    literal.push(rest);
    // Each literal part in order: the first at the start, the last at
    // the end, the others where they are first found.
    let (first, last) = (literal[0], literal[literal.len() - 1]);
    let Some(mut body) = now.strip_prefix(first) else {
        return false;
    };
    let Some(inner) = body.strip_suffix(last) else {
        return false;
    };
    body = inner;
    for part in &literal[1..literal.len() - 1] {
        match body.find(part) {
            Some(at) => body = &body[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// A redaction marker with no brackets: the word as Entire (entire.io)
/// writes it in the transcripts its checkpoints keep, for a secret or any
/// run of high-entropy text, even inside a word of a path
/// (`/Users/me/.REDACTED.jsonl`).
const BARE_MARKER: &str = "REDACTED";

/// The first redaction marker in `text`: the text before it, the marker,
/// the text after it.
fn next_marker(text: &str) -> Option<(&str, &str, &str)> {
    let bytes = text.as_bytes();
    let in_word = |b: Option<&u8>| b.is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_');
    let mut from = 0;
    while let Some(at) = text[from..].find(['[', '<', 'R']).map(|n| from + n) {
        if bytes[at] == b'R' {
            let end = at + BARE_MARKER.len();
            let bare = text[at..].starts_with(BARE_MARKER)
                && !in_word(at.checked_sub(1).and_then(|i| bytes.get(i)))
                && !in_word(bytes.get(end));
            if bare {
                return Some((&text[..at], &text[at..end], &text[end..]));
            }
            from = at + 1;
            continue;
        }
        let close = if bytes[at] == b'[' { b']' } else { b'>' };
        let word = &bytes[at + 1..];
        let name = word
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_' || **c == b'-')
            .count();
        let marker = word.get(name) == Some(&close)
            && (word[..name.min(8)].eq_ignore_ascii_case(b"REDACTED")
                || word[..name].eq_ignore_ascii_case(b"USER")
                || word[..name].eq_ignore_ascii_case(b"USERNAME"));
        if marker {
            let end = at + 1 + name + 1;
            return Some((&text[..at], &text[at..end], &text[end..]));
        }
        from = at + 1;
    }
    None
}

/// A path argument as sent (`/workspace/src`, `src`, `./src`) relative to
/// the workspace (`src`, `.` for the workspace itself); other absolute
/// paths stay.
fn relative(path: &str, workspace: &str) -> String {
    if path == workspace || path.is_empty() || path == "." || path == "./" {
        return ".".to_owned();
    }
    let rel = path
        .strip_prefix(workspace)
        .and_then(|r| r.strip_prefix('/'))
        .unwrap_or(path);
    rel.strip_prefix("./")
        .unwrap_or(rel)
        .trim_end_matches('/')
        .to_owned()
}

/// `rel` below the workspace-relative directory `dir`.
fn under(dir: &str, rel: &str) -> String {
    if dir == "." || rel.starts_with('/') {
        rel.to_owned()
    } else {
        format!("{dir}/{rel}")
    }
}

/// `text` without the bracketed notice paragraph our tools end with.
fn without_notice(text: &str) -> &str {
    match text.rfind("\n\n[") {
        Some(at) if text.ends_with(']') && !text[at + 2..].contains('\n') => &text[..at],
        _ if text.starts_with('[') && text.ends_with(']') && !text.contains('\n') => "",
        _ => text,
    }
}

/// The lines of a listing, without its notice and its word for none.
fn listed<'a>(text: &'a str, none: &'a str) -> impl Iterator<Item = &'a str> {
    let body = without_notice(text);
    body.lines()
        .filter(move |l| !l.is_empty() && !l.starts_with(none))
}

/// A read's text with its CRLF line endings as LF: Claude Code's Read
/// shows a CRLF file's lines without their `\r` (in the text and in
/// `toolUseResult.file.content`), so line endings are presentation.
fn lf_lines(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains("\r\n") {
        std::borrow::Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Control pictures (U+2400–U+241F, U+2421), which read shows for control
/// characters, as the characters.
fn unpictured(text: &str) -> String {
    text.chars()
        .map(|c| match u32::from(c) {
            n @ 0x2400..=0x241f => char::from_u32(n - 0x2400).unwrap_or(c),
            0x2421 => '\u{7f}',
            _ => c,
        })
        .collect()
}

/// bash's text without its exit status or notice: what the command wrote.
fn command_output(text: &str) -> String {
    let mut body = text;
    for status in [
        "\n\nCommand exited with code ",
        "\n\nCommand was killed by signal ",
        "\n\nCommand timed out after ",
        "\n\nCommand aborted",
    ] {
        if let Some(at) = body.rfind(status)
            && !body[at + 2..].contains("\n\n")
        {
            body = &body[..at];
        }
    }
    for status in [
        "Command exited with code ",
        "Command was killed by signal ",
        "Command timed out after ",
        "Command aborted",
    ] {
        if body.starts_with(status) && !body.contains('\n') {
            body = "";
        }
    }
    let body = without_notice(body);
    let body = if body == NO_OUTPUT { "" } else { body };
    body.trim_end().to_owned()
}

/// grep's matching lines (`path:N: text`; context lines `path-N- text`
/// left out) as (workspace-relative path, text), below the searched
/// `dir`; a search of one file shows its name, and is taken as that file.
fn matching(text: &str, dir: &str) -> Option<Vec<(String, String)>> {
    let body = without_notice(text);
    if body == NO_MATCHES {
        return Some(Vec::new());
    }
    let file_name = dir.rsplit('/').next().unwrap_or(dir);
    let mut found = Vec::new();
    for line in body.lines() {
        if let Some((path, text)) = split_numbered(line, b':') {
            let file = if path == file_name && dir != "." {
                dir.to_owned()
            } else {
                under(dir, path)
            };
            found.push((file, text.to_owned()));
        } else if split_numbered(line, b'-').is_none() {
            return None;
        }
    }
    Some(found)
}

/// `path<sep>N<sep> text` split into the path and the text (one space
/// after the number dropped: our grep's form).
fn split_numbered(line: &str, sep: u8) -> Option<(&str, &str)> {
    numbered(line, sep).map(|(path, rest)| (path, rest.strip_prefix(' ').unwrap_or(rest)))
}

/// `path<sep>N<sep>text` split into the path and the text: the first
/// `sep` followed by digits and `sep` again, so a path holding `sep` is
/// kept whole. Also how the importer reads ripgrep's match lines.
pub(crate) fn numbered(line: &str, sep: u8) -> Option<(&str, &str)> {
    let bytes = line.as_bytes();
    let mut from = 0;
    while let Some(i) = memchr::memchr(sep, &bytes[from..]).map(|i| from + i) {
        let digits = bytes[i + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if i > 0 && digits > 0 && bytes.get(i + 1 + digits) == Some(&sep) {
            return Some((&line[..i], &line[i + 2 + digits..]));
        }
        from = i + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_published_transcript_s_redactions_stand_for_any_text() {
        let file = "key = \"AKIAEXAMPLE\"\nurl = [\"mongodb://\", \"mysql://\"]\nid = 1\n";
        let cases = [
            (
                "key = \"[REDACTED_AWS_KEY]\"\nurl = [\"mongodb://\", \"mysql://\"]\nid = 1",
                true,
            ),
            // A scanner's marker may swallow quotes and line ends too.
            (
                "key = \"AKIAEXAMPLE\"\nurl = [\"[REDACTED_DB_CONNECTION] \"mysql://\"]\nid = 1",
                true,
            ),
            (
                "<redacted>\nurl = [\"mongodb://\", \"mysql://\"]\nid = 1",
                true,
            ),
            // Text around the markers must still agree, in order.
            ("key = \"[REDACTED]\"\nid = 2", false),
            ("id = 1\n[REDACTED]key", false),
            // Mostly markers says nothing.
            ("[REDACTED][REDACTED][REDACTED] = 1", false),
            // Not a marker: `[REDACTEDX` unclosed, `[USERS]`.
            (
                "key = \"[REDACTEDX\"\nurl = [\"mongodb://\", \"mysql://\"]\nid = 1",
                false,
            ),
            (
                "key = \"[USERS]\"\nurl = [\"mongodb://\", \"mysql://\"]\nid = 1",
                false,
            ),
        ];
        assert!(agree(
            AnswerForm::Text,
            "cwd: /home/mischa\nok",
            "cwd: /home/[USER]\nok"
        ));
        for (then, agrees) in cases {
            assert_eq!(agree(AnswerForm::Text, file, then), agrees, "{then}");
        }
        assert!(!agree(AnswerForm::Text, "anything", "[REDACTED]"));
    }

    #[test]
    fn a_leading_dot_slash_is_presentation_in_a_text() {
        assert!(agree(
            AnswerForm::Text,
            "./hello.txt:1:hello harness\n./a/b.txt:2:x",
            "hello.txt:1:hello harness\na/b.txt:2:x"
        ));
        assert!(!agree(AnswerForm::Text, "./hello.txt:1:x", "other.txt:1:x"));
        assert!(!agree(AnswerForm::Matches, "./a:x", "a:x"));
    }

    #[test]
    fn entire_s_bare_redactions_stand_for_any_text() {
        // Entire's checkpoints write a bare REDACTED for a secret, and for
        // high-entropy text inside a word or a path.
        let file = "const cid = 'bafkreigaknpexyvxt76zgkitav';\nlog = \"/Users/me/.claude/s3cr3tZ.jsonl\"\n";
        let cases = [
            (
                "const cid = 'REDACTED';\nlog = \"/Users/me/.claude/s3cr3tZ.jsonl\"",
                true,
            ),
            (
                "const cid = 'REDACTED';\nlog = \"/Users/me/.REDACTED.jsonl\"",
                true,
            ),
            // Still a word of its own: `REDACTEDX`, `XREDACTED` and
            // `REDACTED_KEY` are text.
            (
                "const cid = 'REDACTEDX';\nlog = \"/Users/me/.claude/s3cr3tZ.jsonl\"",
                false,
            ),
            (
                "const cid = 'XREDACTED';\nlog = \"/Users/me/.claude/s3cr3tZ.jsonl\"",
                false,
            ),
            (
                "const cid = 'REDACTED_KEY';\nlog = \"/Users/me/.claude/s3cr3tZ.jsonl\"",
                false,
            ),
            // The rest must agree.
            ("const cid = 'REDACTED';\nlog = 2", false),
        ];
        for (then, agrees) in cases {
            assert_eq!(agree(AnswerForm::Text, file, then), agrees, "{then}");
        }
    }

    #[test]
    fn our_presentation_comes_off() {
        let grep = "a.ts:1: let a\nsub/b.ts-1- x\nsub/b.ts:2: Hello\n\n[100 matches limit reached]";
        let args = json!({"path": "/workspace/src"});
        assert_eq!(
            answer(
                AnswerForm::Matches,
                "grep",
                Some(&args),
                (grep, false, None),
                WORKSPACE
            )
            .as_deref(),
            Some("src/a.ts:let a\nsrc/sub/b.ts:Hello")
        );
        assert_eq!(
            answer(
                AnswerForm::Files,
                "grep",
                Some(&args),
                (grep, false, None),
                WORKSPACE
            )
            .as_deref(),
            Some("src/a.ts\nsrc/sub/b.ts")
        );
        assert_eq!(
            answer(
                AnswerForm::Counts,
                "grep",
                None,
                ("x:1: a\nx:3: b\ny:2: c", false, None),
                WORKSPACE
            )
            .as_deref(),
            Some("x:2\ny:1")
        );
        let one = json!({"path": "src/a.ts"});
        assert_eq!(
            answer(
                AnswerForm::Matches,
                "grep",
                Some(&one),
                ("a.ts:1: let a", false, None),
                WORKSPACE
            )
            .as_deref(),
            Some("src/a.ts:let a")
        );
        assert_eq!(
            answer(
                AnswerForm::Files,
                "find",
                Some(&json!({"path": "src"})),
                ("b.ts\nsub/\nsub/c.ts\na.ts", false, None),
                WORKSPACE
            )
            .as_deref(),
            Some("src/a.ts\nsrc/b.ts\nsrc/sub/c.ts")
        );
        assert_eq!(
            answer(
                AnswerForm::Text,
                "read",
                None,
                (
                    "a\u{241b}b\n\n[3 more lines in file. Use offset=4 to continue.]",
                    false,
                    None
                ),
                WORKSPACE
            )
            .as_deref(),
            Some("a\u{1b}b")
        );
        assert_eq!(
            answer(
                AnswerForm::Text,
                "bash",
                None,
                ("out\nerr\n\nCommand exited with code 1", true, None),
                WORKSPACE
            )
            .as_deref(),
            Some("out\nerr")
        );
        assert_eq!(
            answer(
                AnswerForm::Text,
                "bash",
                None,
                ("(no output)", false, None),
                WORKSPACE
            )
            .as_deref(),
            Some("")
        );
        assert_eq!(
            answer(
                AnswerForm::Entries,
                "ls",
                None,
                ("src/\nREADME.md", false, None),
                WORKSPACE
            )
            .as_deref(),
            Some("README.md\nsrc/")
        );
        assert_eq!(
            answer(AnswerForm::Done, "edit", None, ("x", true, None), WORKSPACE),
            None
        );
        assert_eq!(
            answer(
                AnswerForm::Failure,
                "edit",
                None,
                (
                    "Found 2 occurrences of the text in x.txt. The text must be unique.",
                    true,
                    Some(FailureKind::TextNotUnique)
                ),
                WORKSPACE
            )
            .as_deref(),
            Some("text not unique")
        );
        assert!(agree(AnswerForm::Text, "a\n", "a"));
        assert_eq!(
            answer(
                AnswerForm::Text,
                "read",
                None,
                ("# Notes\r\n\r\nline\r\n", false, None),
                WORKSPACE
            )
            .as_deref(),
            Some("# Notes\n\nline\n")
        );
        assert!(!agree(AnswerForm::Files, "a\n", "a"));
    }
}
