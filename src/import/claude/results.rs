//! What Claude Code recorded as a call's result, read: the results no
//! tool produced (the user's refusals, a sibling's failure, permission
//! prompts, the client's own failures), and a tool's answer without
//! Claude Code's presentation, from `toolUseResult` where the client
//! recorded one and from the text otherwise (docs/replay.md,
//! "Presentation").

use crate::judge::presentation::numbered;
use serde_json::Value;

use crate::import::paths::PathMap;
use crate::import::paths::join_relative;
use crate::import::paths::mapped_relative;
use crate::import::session::Outcome;
use crate::scenario::replay::AnswerForm;
use crate::scenario::replay::FailureKind;

/// Texts Claude Code records for a call that no tool answered, as they
/// begin (after `Error: ` or `<tool_use_error>`), and why the call is not
/// replayed.
const NOT_ANSWERS: [(&str, &str); 9] = [
    (
        "The user doesn't want to proceed with this tool use",
        "the user rejected it",
    ),
    (
        "The user doesn't want to take this action right now",
        "the user rejected it",
    ),
    ("User rejected tool use", "the user rejected it"),
    (
        "[Request interrupted by user for tool use]",
        "the user interrupted it",
    ),
    (
        "Sibling tool call errored",
        "Claude Code did not run it: another call of its batch failed (\"Sibling tool call \
         errored\")",
    ),
    (
        "Streaming fallback - tool execution discarded",
        "Claude Code discarded it (a streaming fallback)",
    ),
    (
        "File has not been read yet",
        "Claude Code refused it before running it: the file had not been read in the session, \
         so it was left unchanged",
    ),
    (
        "File has been modified since read",
        "Claude Code refused it before running it: the file had changed since it was read, so \
         it was left unchanged",
    ),
    (
        "File has been unexpectedly modified",
        "Claude Code refused it before running it: the file had changed since it was read, so \
         it was left unchanged",
    ),
];

/// Why a recorded result does not answer its call, if it does not.
pub(crate) fn not_an_answer(text: &str) -> Option<&'static str> {
    let t = text.trim_start();
    let t = t.strip_prefix("Error: ").unwrap_or(t);
    let t = t.strip_prefix("<tool_use_error>").unwrap_or(t);
    let t = t.strip_prefix("Error: ").unwrap_or(t);
    if let Some((_, why)) = NOT_ANSWERS.iter().find(|(p, _)| t.starts_with(p)) {
        return Some(why);
    }
    if t.starts_with("Permission to use ") && t.contains("has been denied") {
        return Some("the user's permission settings denied it");
    }
    if t.contains("requested permissions to") && t.contains("haven't granted it yet") {
        return Some("it needed a permission the user had not granted, so it did not run");
    }
    let rg =
        t.contains("ripgrep") || t.contains("/rg ") || t.contains("/rg\n") || t.ends_with("/rg");
    let failed = ["ENOENT", "EACCES", "EPERM", "spawn", "failed to start"]
        .iter()
        .any(|w| t.contains(w));
    if rg && failed && t.len() < 2000 {
        return Some("Claude Code's own ripgrep failed to start: the client failed, no search ran");
    }
    None
}

/// The result of a call of Claude Code's `tool` (as recorded) whose
/// arguments, as replayed, are `args`: the text the model saw, and the
/// answer and file texts `toolUseResult` (when given) records.
pub(crate) fn outcome(
    tool: &str,
    args: &Value,
    (text, images): (String, usize),
    is_error: bool,
    recorded: Option<&Value>,
    map: &PathMap,
) -> Outcome {
    let mut out = Outcome {
        is_error,
        images,
        ..Outcome::default()
    };
    let tur = recorded.filter(|v| v.is_object());
    let field = |k: &str| tur.and_then(|t| t.get(k));
    let string = |k: &str| field(k).and_then(Value::as_str);
    match tool {
        "Read" => {
            out.whole = Some(Err(
                "its recorded text is numbered and no structured result (toolUseResult) gives \
                 the file's text",
            ));
            if is_error {
                out.whole = Some(Err("its recorded result is an error"));
            } else if let Some(file) = field("file").filter(|_| string("type") == Some("text")) {
                let content = file.get("content").and_then(Value::as_str);
                let n = |k: &str| file.get(k).and_then(Value::as_u64);
                if let Some(content) = content {
                    out.answer = Some((AnswerForm::Text, content.to_owned()));
                    let whole = n("startLine").unwrap_or(1) <= 1
                        && matches!((n("numLines"), n("totalLines")), (Some(a), Some(b)) if a >= b);
                    out.whole = Some(if whole {
                        Ok(())
                    } else {
                        Err("its recorded result holds only part of the file")
                    });
                }
            } else if tur.is_some() || images > 0 {
                out.whole = Some(Err("its recorded result is not a text file's"));
            } else if let Some(lines) = unnumbered(&text) {
                out.answer = Some((AnswerForm::Text, lines));
            }
        }
        "Edit" | "MultiEdit" | "Write" => {
            if !is_error {
                out.answer = Some((AnswerForm::Done, String::new()));
            }
            let original = if tool == "MultiEdit" {
                string("originalFileContents")
            } else {
                string("originalFile")
            };
            if tool != "Write" {
                out.original = original.map(str::to_owned);
            }
        }
        "Bash" => {
            if let (Some(stdout), Some(stderr)) = (string("stdout"), string("stderr"))
                && field("interrupted").and_then(Value::as_bool) != Some(true)
            {
                let parts: Vec<&str> = [stdout, stderr]
                    .iter()
                    .map(|s| without_reset(s).trim_end())
                    .filter(|s| !s.is_empty())
                    .collect();
                out.answer = Some((AnswerForm::Text, parts.join("\n")));
            }
            // `grep` finding nothing, `diff` finding differences: a
            // non-zero exit Claude Code did not count as an error.
            out.nonzero_exit = string("returnCodeInterpretation")
                .filter(|why| !is_error && !why.trim().is_empty())
                .map(str::to_owned);
        }
        "Grep" => out.answer = grep_answer(args, &text, tur, map),
        "Glob" => {
            let names = match field("filenames").and_then(Value::as_array) {
                Some(list) => Some(
                    list.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect(),
                ),
                None => listed_files(&text),
            };
            out.answer = names.map(|n: Vec<String>| (AnswerForm::Files, sorted_paths(n, map)));
        }
        "LS" => out.answer = ls_entries(&text).map(|e| (AnswerForm::Entries, e)),
        _ => {}
    }
    if is_error
        && out
            .answer
            .as_ref()
            .is_some_and(|(f, _)| *f != AnswerForm::Done)
    {
        out.answer = None;
    }
    if is_error {
        out.answer = match tool {
            "Bash" => exit_output(&text).map(|o| (AnswerForm::Text, o)),
            _ => failure(&text).map(|k| (AnswerForm::Failure, k.as_str().to_owned())),
        };
    }
    out.text = text;
    out
}

/// The kind of a failure Claude Code's file tools report.
fn failure(text: &str) -> Option<FailureKind> {
    let t = text.trim_start();
    let t = t.strip_prefix("<tool_use_error>").unwrap_or(t);
    let t = t.strip_prefix("Error: ").unwrap_or(t);
    let starts = [
        (
            "String to replace not found in file",
            FailureKind::TextNotFound,
        ),
        (
            "No changes to make: old_string and new_string are exactly the same",
            FailureKind::NoChange,
        ),
        ("File does not exist", FailureKind::NoSuchFile),
    ];
    if let Some((_, kind)) = starts.iter().find(|(p, _)| t.starts_with(p)) {
        return Some(*kind);
    }
    if t.starts_with("Found ") && t.contains(" matches of the string to replace") {
        return Some(FailureKind::TextNotUnique);
    }
    (t.starts_with("EISDIR") || t.contains("EISDIR: illegal operation on a directory"))
        .then_some(FailureKind::IsADirectory)
}

/// A failed command's text (`Exit code 2` or `Error: Exit code 2` on
/// the first line): the output after it.
fn exit_output(text: &str) -> Option<String> {
    let t = text.strip_prefix("Error: ").unwrap_or(text);
    let (first, rest) = t.split_once('\n').unwrap_or((t, ""));
    let code = first.strip_prefix("Exit code ")?;
    code.trim().parse::<i64>().ok()?;
    Some(without_reset(rest).trim_end().to_owned())
}

/// A read's text without Claude Code's line numbers (`   12→text` or
/// `    12\ttext`) and the `<system-reminder>` blocks after it; `None`
/// when a line is not numbered.
pub(crate) fn unnumbered(text: &str) -> Option<String> {
    let body = without_reminders(text);
    if body.is_empty() {
        return Some(String::new());
    }
    let mut out = Vec::new();
    for line in body.split('\n') {
        let t = line.trim_start_matches(' ');
        let digits = t.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let rest = &t[digits..];
        out.push(rest.strip_prefix('→').or_else(|| rest.strip_prefix('\t'))?);
    }
    Some(out.join("\n"))
}

/// `text` without the `<system-reminder>` blocks it ends with, and the
/// newlines before them.
fn without_reminders(text: &str) -> &str {
    let mut body = text.trim_end_matches('\n');
    while body.trim_end().ends_with("</system-reminder>") {
        match body.rfind("<system-reminder>") {
            Some(at) => body = body[..at].trim_end_matches('\n'),
            None => break,
        }
    }
    body
}

/// A command's output without Claude Code's `Shell cwd was reset to …`.
fn without_reset(text: &str) -> &str {
    match text.rfind("Shell cwd was reset to ") {
        Some(at) if !text[at..].trim_end().contains('\n') => text[..at].trim_end_matches('\n'),
        _ => text,
    }
}

/// Recorded paths, workspace-relative, sorted, one a line.
fn sorted_paths(paths: Vec<String>, map: &PathMap) -> String {
    let mut rel: Vec<String> = paths.iter().map(|p| map.relative(p)).collect();
    rel.sort();
    rel.join("\n")
}

/// The paths a `Glob` or `Grep` text lists (`Found 2 files` first, or
/// `No files found`); `None` when it lists none that way.
fn listed_files(text: &str) -> Option<Vec<String>> {
    let text = text.trim();
    if text == "No files found" {
        return Some(Vec::new());
    }
    let lines = text
        .lines()
        .filter(|l| !l.starts_with("Found ") && !l.starts_with('(') && !l.starts_with('['))
        .filter(|l| !l.trim().is_empty());
    let list: Vec<String> = lines.map(str::to_owned).collect();
    list.iter().all(|l| l.starts_with('/')).then_some(list)
}

/// `Grep`'s answer by its output mode.
fn grep_answer(
    args: &Value,
    text: &str,
    tur: Option<&Value>,
    map: &PathMap,
) -> Option<(AnswerForm, String)> {
    let mode = tur
        .and_then(|t| t.get("mode"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let content = tur.and_then(|t| t.get("content")).and_then(Value::as_str);
    let searched = args
        .get("path")
        .and_then(Value::as_str)
        .map_or_else(|| ".".to_owned(), mapped_relative);
    match mode {
        "files_with_matches" => {
            let names = tur?.get("filenames")?.as_array()?;
            let names = names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
            Some((AnswerForm::Files, sorted_paths(names, map)))
        }
        "content" => {
            matches(content.unwrap_or(""), &searched, map).map(|m| (AnswerForm::Matches, m))
        }
        "count" => counts(content.unwrap_or(""), map).map(|c| (AnswerForm::Counts, c)),
        _ => None,
    }
    .or_else(|| {
        // No structured result: the text, when it reads as one of the modes.
        if tur.is_some() {
            return None;
        }
        if text.trim() == "No matches found" {
            return Some((AnswerForm::Matches, String::new()));
        }
        if text.starts_with("Found ") && text.contains(" file") {
            return listed_files(text).map(|n| (AnswerForm::Files, sorted_paths(n, map)));
        }
        matches(text, &searched, map).map(|m| (AnswerForm::Matches, m))
    })
}

/// ripgrep's content lines (`path:N:text`, `N:text` for one file, context
/// `path-N-text`, `--` between groups) as sorted `path:text` of the
/// matching lines; `None` when a line reads as none of these.
fn matches(content: &str, searched: &str, map: &PathMap) -> Option<String> {
    let mut out = Vec::new();
    for line in content.lines() {
        if line == "--" || line.is_empty() || (line.starts_with('[') && line.ends_with(']')) {
            continue;
        }
        let digits = line.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && !line.starts_with('/') {
            match line.as_bytes().get(digits) {
                Some(b':') => out.push(format!("{searched}:{}", &line[digits + 1..])),
                Some(b'-') => {}
                _ => return None,
            }
            continue;
        }
        match numbered(line, b':') {
            Some((path, text)) => {
                out.push(format!(
                    "{}:{text}",
                    join_relative(".", &map.relative(path))
                ));
            }
            None if numbered(line, b'-').is_some() => {}
            None => return None,
        }
    }
    out.sort();
    Some(out.join("\n"))
}

/// ripgrep's count lines (`path:N`) as sorted `path:N`.
fn counts(content: &str, map: &PathMap) -> Option<String> {
    let mut out = Vec::new();
    for line in content
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with("Found "))
    {
        let (path, n) = line.rsplit_once(':')?;
        n.parse::<u64>().ok()?;
        out.push(format!("{}:{n}", map.relative(path)));
    }
    out.sort();
    Some(out.join("\n"))
}

/// The entries of the directory an `LS` text shows (its tree's first
/// level: `- /p/dir/` then `  - name`, directories with `/`), sorted.
fn ls_entries(text: &str) -> Option<String> {
    let mut lines = text.lines();
    let root = lines.next()?;
    if !root.starts_with("- ") {
        return None;
    }
    let mut out: Vec<&str> = lines
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.strip_prefix("  - "))
        .collect();
    out.sort_unstable();
    Some(out.join("\n"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn results_no_tool_produced_are_told() {
        let cases = [
            (
                "<tool_use_error>Sibling tool call errored</tool_use_error>",
                true,
            ),
            (
                "Permission to use Bash with command rm -rf x has been denied.",
                true,
            ),
            (
                "Claude requested permissions to write to /p/a.txt, but you haven't granted it \
                 yet.",
                true,
            ),
            (
                "Error: spawn /usr/lib/node_modules/@anthropic-ai/claude-code/vendor/ripgrep/x64-linux/rg ENOENT",
                true,
            ),
            (
                "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>",
                true,
            ),
            (
                "<tool_use_error>String to replace not found in file.</tool_use_error>",
                false,
            ),
            ("rg: regex parse error", false),
            ("Exit code 1\nnpm ERR! missing script: test", false),
        ];
        let got: Vec<bool> = cases
            .iter()
            .map(|(t, _)| not_an_answer(t).is_some())
            .collect();
        let want: Vec<bool> = cases.iter().map(|(_, w)| *w).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_read_s_numbers_and_reminders_are_presentation() {
        assert_eq!(
            unnumbered(
                "     1→fn main() {\n     2→}\n     3→\n\n<system-reminder>\nBe careful.\n\
                 </system-reminder>\n"
            )
            .as_deref(),
            Some("fn main() {\n}\n")
        );
        assert_eq!(unnumbered("     1\tx\n     2\ty").as_deref(), Some("x\ny"));
        assert_eq!(
            unnumbered("<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>").as_deref(),
            Some("")
        );
        assert_eq!(unnumbered("File does not exist."), None);
        let map = PathMap::new(Some("/p"));
        let read = outcome(
            "Read",
            &json!({"path": "${workspace}/a"}),
            ("     1→a".to_owned(), 0),
            false,
            Some(
                &json!({"type": "text", "file": {"filePath": "/p/a", "content": "a\n",
                "numLines": 2, "startLine": 1, "totalLines": 2}}),
            ),
            &map,
        );
        assert_eq!(
            (read.answer, read.whole),
            (Some((AnswerForm::Text, "a\n".to_owned())), Some(Ok(())))
        );
    }

    #[test]
    fn grep_glob_and_ls_answers_are_workspace_relative_and_sorted() {
        let map = PathMap::new(Some("/p"));
        let args = json!({"path": "${workspace}/src"});
        let grep = |text: &str, tur: Value| {
            outcome("Grep", &args, (text.to_owned(), 0), false, Some(&tur), &map).answer
        };
        assert_eq!(
            grep(
                "",
                json!({"mode": "content", "content": "/p/src/b.rs:3:fn b()\n/p/src/b.rs-4-}\n--\n/p/src/a.rs:1:fn a()"})
            ),
            Some((
                AnswerForm::Matches,
                "src/a.rs:fn a()\nsrc/b.rs:fn b()".to_owned()
            ))
        );
        assert_eq!(
            grep(
                "",
                json!({"mode": "content", "content": "12:let x = 1;\n13-let y"})
            ),
            Some((AnswerForm::Matches, "src:let x = 1;".to_owned()))
        );
        assert_eq!(
            grep(
                "",
                json!({"mode": "files_with_matches", "filenames": ["/p/src/b.rs", "/p/a.rs"]})
            ),
            Some((AnswerForm::Files, "a.rs\nsrc/b.rs".to_owned()))
        );
        assert_eq!(
            grep(
                "",
                json!({"mode": "count", "content": "/p/src/a.rs:2\n/p/b.rs:1"})
            ),
            Some((AnswerForm::Counts, "b.rs:1\nsrc/a.rs:2".to_owned()))
        );
        let glob = outcome(
            "Glob",
            &json!({}),
            ("/p/b\n/p/a".to_owned(), 0),
            false,
            None,
            &map,
        );
        assert_eq!(glob.answer, Some((AnswerForm::Files, "a\nb".to_owned())));
        let ls = outcome(
            "LS",
            &json!({}),
            ("- /p/\n  - src/\n    - a.rs\n  - README.md\n\nNOTE: do any of the files above seem malicious?".to_owned(), 0),
            false,
            None,
            &map,
        );
        assert_eq!(
            ls.answer,
            Some((AnswerForm::Entries, "README.md\nsrc/".to_owned()))
        );
        let bash = outcome(
            "Bash",
            &json!({}),
            (String::new(), 0),
            false,
            Some(
                &json!({"stdout": "out\n", "stderr": "warn\nShell cwd was reset to /p", "interrupted": false}),
            ),
            &map,
        );
        assert_eq!(
            bash.answer,
            Some((AnswerForm::Text, "out\nwarn".to_owned()))
        );
    }
}
