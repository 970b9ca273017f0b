//! Claude Code's tools mapped onto this harness's seven (docs/replay.md,
//! "Claude Code's tools"): which of ours replays each, how its arguments
//! translate, what the mapping could not keep, and why the tools that have
//! no counterpart are not replayed.

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use crate::import::edits;
use crate::import::paths::split_absolute_glob;
use crate::import::session::MAX_BASH_SECS;
use crate::import::shell::git_moves_tree;

/// A Claude Code call as one of ours.
#[derive(Debug)]
pub(crate) struct Mapped {
    /// Our tool.
    pub tool: &'static str,
    /// Its arguments, paths as recorded (mapped afterwards).
    pub args: Value,
    /// What the mapping could not keep.
    pub note: Option<String>,
    /// The mapping is finished when the result tells the file's text
    /// before the call (an edit with `replace_all`, a `MultiEdit`).
    pub refine: bool,
}

/// A bash timeout as recorded (milliseconds) in seconds, if it is one a
/// call can have: a positive number of milliseconds, at most a day.
pub(crate) fn bash_timeout(ms: Option<&Value>) -> Result<Option<f64>, String> {
    let Some(value) = ms.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    match value.as_f64() {
        Some(ms) if ms.is_finite() && ms > 0.0 => Ok(Some((ms / 1000.0).min(MAX_BASH_SECS))),
        _ => Err(format!(
            "its recorded timeout {value} is not a positive number of milliseconds"
        )),
    }
}

/// ripgrep's file types (`Grep {type}`) that real sessions use, as globs.
const RG_TYPES: [(&str, &str); 40] = [
    ("c", "*.{c,h}"),
    ("cpp", "*.{C,cc,cpp,cxx,c++,h,H,hh,hpp,hxx,inl}"),
    ("cs", "*.cs"),
    ("csharp", "*.cs"),
    ("css", "*.{css,scss}"),
    ("dart", "*.dart"),
    ("docker", "*{Dockerfile,dockerfile}*"),
    ("elixir", "*.{ex,eex,exs,heex}"),
    ("go", "*.go"),
    ("h", "*.{h,hh,hpp}"),
    ("html", "*.{htm,html,ejs}"),
    ("java", "*.{java,jsp,jspx,properties}"),
    ("js", "*.{js,jsx,vue,cjs,mjs}"),
    ("json", "*.{json,sarif}"),
    ("jsx", "*.jsx"),
    ("kotlin", "*.{kt,kts}"),
    ("lua", "*.lua"),
    ("make", "*{Makefile,makefile,GNUmakefile,.mk,.mak}"),
    ("markdown", "*.{markdown,md,mdown,mdwn,mkd,mkdn,mdx}"),
    ("md", "*.{markdown,md,mdown,mdwn,mkd,mkdn,mdx}"),
    ("php", "*.{php,php3,php4,php5,php7,php8,pht,phtml}"),
    ("proto", "*.proto"),
    ("py", "*.{py,pyi}"),
    ("python", "*.{py,pyi}"),
    ("rb", "*.{rb,gemspec,rake}"),
    ("ruby", "*.{rb,gemspec,rake}"),
    ("rs", "*.rs"),
    ("rust", "*.rs"),
    ("scala", "*.{scala,sbt}"),
    ("sh", "*.{sh,bash,zsh,ksh,csh,fish}"),
    ("sql", "*.{sql,psql}"),
    ("svelte", "*.svelte"),
    ("swift", "*.swift"),
    ("toml", "*.toml"),
    ("ts", "*.{ts,tsx,cts,mts}"),
    ("tsx", "*.tsx"),
    ("txt", "*.txt"),
    ("typescript", "*.{ts,tsx,cts,mts}"),
    ("xml", "*.{xml,xsd,xsl,xslt,svg}"),
    ("yaml", "*.{yaml,yml}"),
];

/// Why a tool Claude Code has and this harness has not is not replayed.
fn no_counterpart(name: &str) -> String {
    let why = match name {
        "Task" | "Agent" => {
            "starts a sub-agent; the sub-agent's own calls are a side chain of the transcript \
             (`--sidechains` imports each as a scenario)"
        }
        "TodoWrite" | "TodoRead" | "TaskCreate" | "TaskUpdate" | "TaskList" | "TaskGet" => {
            "keeps the client's to-do list"
        }
        "WebFetch" | "WebSearch" => "reaches the web",
        "BashOutput" | "KillBash" | "KillShell" | "TaskOutput" | "TaskStop" => {
            "reads or stops a command running in the background, which this harness's bash does \
             not keep"
        }
        "NotebookEdit" | "NotebookRead" => "works on notebook cells, which no tool here has",
        "Skill" | "SlashCommand" => "loads one of the client's skills or commands",
        "ExitPlanMode" | "EnterPlanMode" | "AskUserQuestion" => "talks to the user",
        _ if name.starts_with("mcp__") => "is a tool of an MCP server the client had",
        _ => "has no counterpart among this harness's tools",
    };
    format!("Claude Code's `{name}` {why}")
}

/// A Claude Code call mapped onto one of ours, or why it is not replayed.
pub(crate) fn map_call(name: &str, input: &Value, default_timeout: f64) -> Result<Mapped, String> {
    let get = |k: &str| input.get(k).cloned().filter(|v| !v.is_null());
    let mut args = Map::new();
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            args.insert(k.to_owned(), v);
        }
    };
    let mut notes: Vec<String> = Vec::new();
    let mut refine = false;
    let tool = match name {
        "Read" => {
            put("path", get("file_path"));
            // Claude Code reads an `offset` of 0 from the first line, as
            // without one; ours counts lines from 1 and refuses 0.
            put(
                "offset",
                get("offset").filter(|o| o.as_f64().is_none_or(|n| n != 0.0)),
            );
            put("limit", get("limit"));
            if input.get("pages").is_some() {
                notes.push("`pages` (of a PDF) has no counterpart; dropped".to_owned());
            }
            "read"
        }
        "Write" => {
            put("path", get("file_path"));
            put("content", get("content"));
            "write"
        }
        "Edit" => {
            put("path", get("file_path"));
            put(
                "edits",
                Some(json!([{
                    "oldText": input.get("old_string").cloned().unwrap_or(Value::Null),
                    "newText": input.get("new_string").cloned().unwrap_or(Value::Null),
                }])),
            );
            if input.get("replace_all").and_then(Value::as_bool) == Some(true) {
                notes.push(REPLACE_ALL_UNKNOWN.to_owned());
                refine = true;
            }
            "edit"
        }
        "MultiEdit" => {
            put("path", get("file_path"));
            let edits = input
                .get("edits")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let mapped: Vec<Value> = edits
                .iter()
                .map(|e| {
                    json!({
                        "oldText": e.get("old_string").cloned().unwrap_or(Value::Null),
                        "newText": e.get("new_string").cloned().unwrap_or(Value::Null),
                    })
                })
                .collect();
            if edits
                .iter()
                .any(|e| e.get("replace_all").and_then(Value::as_bool) == Some(true))
            {
                notes.push(REPLACE_ALL_UNKNOWN.to_owned());
            }
            put("edits", Some(Value::Array(mapped)));
            refine = true;
            "edit"
        }
        "Bash" => {
            if input.get("run_in_background").and_then(Value::as_bool) == Some(true) {
                return Err(
                    "it ran in the background (`run_in_background`), which this harness's bash \
                     does not do: replayed, it would hold the session until it ended"
                        .to_owned(),
                );
            }
            put("command", get("command"));
            let secs = match bash_timeout(input.get("timeout")) {
                Ok(secs) => secs.unwrap_or(default_timeout),
                Err(why) => {
                    notes.push(format!("{why}; given {default_timeout} seconds"));
                    default_timeout
                }
            };
            put("timeout", Some(Value::from(secs)));
            if let Some(sub) = input
                .get("command")
                .and_then(Value::as_str)
                .and_then(git_moves_tree)
            {
                notes.push(format!(
                    "`git {sub}` changes the files of the working tree: replayed on the \
                     replay's clone, whose branches are today's, the files after it may not be \
                     the ones the session saw"
                ));
            }
            "bash"
        }
        "Grep" => return Ok(grep(input)),
        "Glob" => {
            let pattern = input.get("pattern").and_then(Value::as_str).unwrap_or("");
            match split_absolute_glob(pattern) {
                Some((dir, rest)) => {
                    put("pattern", Some(Value::from(rest)));
                    put("path", Some(Value::from(dir)));
                }
                None => {
                    put("pattern", get("pattern"));
                    put("path", get("path"));
                }
            }
            "find"
        }
        "LS" => {
            put("path", get("path"));
            if input.get("ignore").is_some_and(|v| !v.is_null()) {
                notes
                    .push("`ignore` has no counterpart (ls lists every entry); dropped".to_owned());
            }
            "ls"
        }
        other => return Err(no_counterpart(other)),
    };
    Ok(Mapped {
        tool,
        args: Value::Object(args),
        note: (!notes.is_empty()).then(|| notes.join("; ")),
        refine,
    })
}

/// What an import says of `replace_all` before it knows the file.
pub(crate) const REPLACE_ALL_UNKNOWN: &str = "replace_all: the file's text before the call is not \
     recorded, so the occurrences are not known; replayed as one replacement, which fails when \
     the text occurs more than once";

/// `Grep`: `-C`/`context` and `-A`/`-B` become `context` (ours shows as
/// many lines before as after), `-i` is `ignoreCase`, `type` a glob,
/// `head_limit` the limit of matching lines; `files_with_matches` and
/// `count` are replayed as a search of lines and compared by the files
/// and counts they show.
fn grep(input: &Value) -> Mapped {
    let get = |k: &str| input.get(k).cloned().filter(|v| !v.is_null());
    let num = |k: &str| input.get(k).and_then(Value::as_f64).filter(|n| *n >= 0.0);
    let mut args = Map::new();
    let mut notes: Vec<String> = Vec::new();
    if let Some(p) = get("pattern") {
        args.insert("pattern".into(), p);
    }
    if let Some(p) = get("path") {
        args.insert("path".into(), p);
    }
    let glob = get("glob");
    let kind = input.get("type").and_then(Value::as_str);
    match (glob, kind) {
        (Some(g), None) => {
            args.insert("glob".into(), g);
        }
        (None, Some(t)) => match RG_TYPES.iter().find(|(name, _)| *name == t) {
            Some((_, glob)) => {
                args.insert("glob".into(), Value::from(*glob));
            }
            None => notes.push(format!("type `{t}` is not a file type known here; dropped")),
        },
        (Some(g), Some(t)) => {
            args.insert("glob".into(), g);
            notes.push(format!(
                "type `{t}` and glob together have no counterpart (one glob); the type is dropped"
            ));
        }
        (None, None) => {}
    }
    if input.get("-i").and_then(Value::as_bool) == Some(true) {
        args.insert("ignoreCase".into(), Value::Bool(true));
    }
    let mode = input
        .get("output_mode")
        .and_then(Value::as_str)
        .unwrap_or("files_with_matches");
    let around = num("-C").or_else(|| num("context"));
    let (after, before) = (num("-A"), num("-B"));
    if mode == "content" {
        let context = around.or(match (after, before) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0).max(b.unwrap_or(0.0))),
        });
        if around.is_none() && (after.is_some() || before.is_some()) && after != before {
            notes.push(format!(
                "-A {} -B {}: context here is as many lines before as after; replayed with \
                 context {}",
                after.unwrap_or(0.0),
                before.unwrap_or(0.0),
                context.unwrap_or(0.0)
            ));
        }
        if let Some(c) = context.filter(|c| *c > 0.0) {
            args.insert("context".into(), Value::from(c));
        }
        if let Some(limit) = num("head_limit").filter(|n| *n >= 1.0) {
            args.insert("limit".into(), Value::from(limit));
        }
    } else {
        notes.push(format!(
            "output_mode {mode}: replayed as a search of matching lines, compared by the {} they \
             show",
            if mode == "count" {
                "counts per file"
            } else {
                "files"
            }
        ));
    }
    if input.get("multiline").and_then(Value::as_bool) == Some(true) {
        notes.push("multiline has no counterpart (matches stay within a line)".to_owned());
    }
    if input
        .get("offset")
        .and_then(Value::as_f64)
        .is_some_and(|o| o > 0.0)
    {
        notes.push("offset (of the output) has no counterpart; dropped".to_owned());
    }
    Mapped {
        tool: "grep",
        args: Value::Object(args),
        note: (!notes.is_empty()).then(|| notes.join("; ")),
        refine: false,
    }
}

/// The edits of a recorded `Edit {replace_all}` or `MultiEdit` once the
/// file's text before the call (`original`) is known: the `edits` value
/// for our edit (paths untouched) and what to say of it.
pub(crate) fn refine(name: &str, input: &Value, original: &str) -> Option<(Value, Option<String>)> {
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let as_value = |reps: &[edits::Replacement]| {
        Value::Array(
            reps.iter()
                .map(|r| json!({"oldText": r.old, "newText": r.new}))
                .collect(),
        )
    };
    if name == "Edit" {
        let (old, new) = (text(input, "old_string"), text(input, "new_string"));
        let (reps, n) = edits::replace_all(original, &old, &new)?;
        if n == 1 {
            return Some((json!([{"oldText": old, "newText": new}]), None));
        }
        let note = Some(format!(
            "replace_all: {n} occurrences in the recorded file, replayed as {} replacement{} \
                 of the lines that hold them",
            reps.len(),
            if reps.len() == 1 { "" } else { "s" }
        ));
        return Some((as_value(&reps), note));
    }
    let list: Vec<(String, String, bool)> = input
        .get("edits")
        .and_then(Value::as_array)?
        .iter()
        .map(|e| {
            (
                text(e, "old_string"),
                text(e, "new_string"),
                e.get("replace_all").and_then(Value::as_bool) == Some(true),
            )
        })
        .collect();
    match edits::sequential(original, &list) {
        Ok(reps) => {
            let same = reps.len() == list.len()
                && reps
                    .iter()
                    .zip(&list)
                    .all(|(r, (old, new, _))| r.old == *old && r.new == *new);
            let note = (!same).then(|| {
                format!(
                    "MultiEdit applies each edit to the result of the one before; these depend \
                     on each other (or replace all), so they are replayed as {} replacement{} of \
                     the lines they change in the recorded file",
                    reps.len(),
                    if reps.len() == 1 { "" } else { "s" }
                )
            });
            Some((as_value(&reps), note))
        }
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapped(name: &str, input: Value) -> (String, Value, Option<String>) {
        let m = map_call(name, &input, 30.0).unwrap();
        (m.tool.to_owned(), m.args, m.note)
    }

    #[test]
    fn grep_keeps_context_case_type_and_limit() {
        assert_eq!(
            mapped(
                "Grep",
                json!({"pattern": "fn", "path": "/p/src", "output_mode": "content", "-A": 2,
                       "-B": 1, "-i": true, "-n": true, "type": "rust", "head_limit": 20})
            ),
            (
                "grep".to_owned(),
                json!({"pattern": "fn", "path": "/p/src", "glob": "*.rs", "ignoreCase": true,
                       "context": 2.0, "limit": 20.0}),
                Some(
                    "-A 2 -B 1: context here is as many lines before as after; replayed with \
                     context 2"
                        .to_owned()
                )
            )
        );
        let (_, args, note) = mapped("Grep", json!({"pattern": "x", "-C": 3}));
        assert_eq!(args, json!({"pattern": "x"}));
        assert_eq!(
            note.as_deref(),
            Some(
                "output_mode files_with_matches: replayed as a search of matching lines, \
                 compared by the files they show"
            )
        );
        let (_, args, note) = mapped(
            "Grep",
            json!({"pattern": "x", "output_mode": "content", "context": 3}),
        );
        assert_eq!(
            (args, note),
            (json!({"pattern": "x", "context": 3.0}), None)
        );
    }

    #[test]
    fn absolute_globs_background_commands_and_bad_timeouts() {
        assert_eq!(
            mapped("Glob", json!({"pattern": "/p/src/**/*.ts", "path": "/p"})).1,
            json!({"pattern": "**/*.ts", "path": "/p/src"})
        );
        assert!(
            map_call(
                "Bash",
                &json!({"command": "npm run dev", "run_in_background": true}),
                30.0
            )
            .unwrap_err()
            .starts_with("it ran in the background")
        );
        assert_eq!(
            mapped("Bash", json!({"command": "ls", "timeout": -1_000_000})),
            (
                "bash".to_owned(),
                json!({"command": "ls", "timeout": 30.0}),
                Some(
                    "its recorded timeout -1000000 is not a positive number of milliseconds; \
                     given 30 seconds"
                        .to_owned()
                )
            )
        );
        assert_eq!(
            mapped("Bash", json!({"command": "git checkout main && git pull"})).2,
            Some(
                "`git checkout` changes the files of the working tree: replayed on the \
                 replay's clone, whose branches are today's, the files after it may not be the \
                 ones the session saw"
                    .to_owned()
            )
        );
        assert_eq!(
            mapped("Bash", json!({"command": "ls", "timeout": 1e300})).1,
            json!({"command": "ls", "timeout": MAX_BASH_SECS})
        );
        assert_eq!(
            map_call("mcp__github__get_issue", &json!({}), 30.0).unwrap_err(),
            "Claude Code's `mcp__github__get_issue` is a tool of an MCP server the client had"
        );
    }

    #[test]
    fn replace_all_and_dependent_multi_edits_are_refined_from_the_original() {
        let original = "a = 1\nb = a\n";
        let (edits, note) = refine(
            "Edit",
            &json!({"old_string": "a", "new_string": "x", "replace_all": true}),
            original,
        )
        .unwrap();
        assert_eq!(
            edits,
            json!([{"oldText": "a = 1\nb = a\n", "newText": "x = 1\nb = x\n"}])
        );
        assert_eq!(
            note.as_deref(),
            Some(
                "replace_all: 2 occurrences in the recorded file, replayed as 1 replacement of \
                 the lines that hold them"
            )
        );
        let (edits, note) = refine(
            "MultiEdit",
            &json!({"edits": [{"old_string": "b = a", "new_string": "b = 2"}]}),
            original,
        )
        .unwrap();
        assert_eq!(
            (edits, note),
            (json!([{"oldText": "b = a", "newText": "b = 2"}]), None)
        );
    }
}
