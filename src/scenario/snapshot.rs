//! Snapshots of tool results: `<file stem>.snap.yaml` beside the scenario,
//! keyed by step id (prefixed by the scenario name when a file holds several
//! scenarios). A snapshot holds the result's error flag, text and details
//! as the model saw them, so the workspace is already `/workspace` and the
//! scratch directory `/scratch` (see [`crate::agent::present`]). What could
//! still differ between machines and runs is made stable: any other path
//! under the system temp dir is written `$TMP`, random hex names under it
//! are masked, and timings are dropped.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use crate::tools::ToolResult;

/// Keys whose values are timings, dropped from snapshots.
const TIMING_KEYS: &[&str] = &["duration_ms", "elapsed_ms", "duration", "wall_time_ms"];

static HEX_RUN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[0-9a-f]{12,}").unwrap_or_else(|_| unreachable!()));

/// The snapshot form of a result (as presented to the model).
pub(crate) fn snapshot_value(result: &ToolResult) -> Value {
    let mut value = serde_json::json!({
        "is_error": result.is_error,
        "text": result.text(),
        "details": result.details.clone().unwrap_or(Value::Null),
    });
    if result
        .content
        .iter()
        .any(|c| matches!(c, crate::tools::Content::Image { .. }))
    {
        value["images"] = Value::from(
            result
                .content
                .iter()
                .filter_map(|c| match c {
                    crate::tools::Content::Image { data, mime_type } => {
                        Some(format!("{mime_type}, {} base64 characters", data.len()))
                    }
                    crate::tools::Content::Text { .. } => None,
                })
                .collect::<Vec<_>>(),
        );
    }
    redact(&mut value);
    value
}

fn redact(value: &mut Value) {
    match value {
        Value::String(text) => *text = redact_text(text),
        Value::Array(items) => items.iter_mut().for_each(redact),
        Value::Object(map) => {
            map.retain(|k, _| !TIMING_KEYS.contains(&k.as_str()));
            map.values_mut().for_each(redact);
        }
        _ => {}
    }
}

/// Replaces temporary paths with `$TMP`, masking random hex names inside
/// them.
pub(crate) fn redact_text(text: &str) -> String {
    let mut out = text.to_owned();
    let tmp = std::env::temp_dir().display().to_string();
    let tmp = tmp.trim_end_matches('/');
    if !tmp.is_empty() && out.contains(tmp) {
        out = out.replace(tmp, "$TMP");
        // Mask random names under the temp dir, e.g. bash's full-output log.
        let mut masked = String::with_capacity(out.len());
        let mut rest = out.as_str();
        while let Some(at) = rest.find("$TMP/") {
            masked.push_str(&rest[..at]);
            let tail = &rest[at..];
            let end = tail
                .find(|c: char| c.is_whitespace() || c == '"' || c == ']' || c == ')')
                .unwrap_or(tail.len());
            masked.push_str(&HEX_RUN.replace_all(&tail[..end], "XXXX"));
            rest = &tail[end..];
        }
        masked.push_str(rest);
        out = masked;
    }
    out
}

/// Reads a snapshot file; a missing file is an empty map. It is read
/// like a scenario file ([`super::yaml`]): the same nesting and alias
/// limits, a key written twice refused, and a problem named at
/// `file:line:col`.
pub(crate) fn load(path: &Path) -> Result<BTreeMap<String, Value>, String> {
    match super::text_file::read_regular(path) {
        Ok(text) => parse(&text).map_err(|(pos, message)| {
            format!(
                "{}:{}:{}: cannot read this snapshot file: {message}",
                path.display(),
                pos.line,
                pos.column
            )
        }),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(err) => Err(format!(
            "cannot read snapshot file {}: {err}",
            path.display()
        )),
    }
}

/// The entries of a snapshot file's text: one mapping of step keys to
/// values (or nothing), or where and why it is not one.
fn parse(text: &str) -> Result<BTreeMap<String, Value>, (super::yaml::Pos, String)> {
    use super::yaml::Kind;
    let stream = super::yaml::parse(text);
    let located = |problem: &super::yaml::TreeProblem| {
        let message = if problem.path.is_empty() {
            problem.message.clone()
        } else {
            format!("{}: {}", problem.path, problem.message)
        };
        (problem.pos, message)
    };
    if let Some(problem) = &stream.fatal {
        return Err(located(problem));
    }
    let mut documents = stream.documents.iter();
    let Some(document) = documents.next() else {
        return Ok(BTreeMap::new());
    };
    if let Some(extra) = documents.next() {
        return Err((
            extra.pos,
            "a snapshot file holds one document; remove this one (or the file, to \
             record its snapshots again)"
                .to_owned(),
        ));
    }
    if let Some(problem) = document.problems.first() {
        return Err(located(problem));
    }
    if document.root.is_null() {
        return Ok(BTreeMap::new());
    }
    let Kind::Map(entries) = &document.root.kind else {
        return Err((
            document.root.pos,
            "a snapshot file is a mapping of step keys to results; remove the file to record \
             its snapshots again"
                .to_owned(),
        ));
    };
    entries
        .iter()
        .map(|(key, value)| match key.text() {
            Some(name) => Ok((name.to_owned(), value.to_json())),
            None => Err((
                key.pos,
                "a snapshot key is a step's key, written as text".to_owned(),
            )),
        })
        .collect()
}

/// Writes a snapshot file (keys sorted) as a new file renamed over the
/// old name: a link there (a planted `.snap.yaml.new` leading out of the
/// suite) is replaced, never written through.
pub(crate) fn save(path: &Path, entries: &BTreeMap<String, Value>) -> Result<(), String> {
    let text = serde_yaml::to_string(entries)
        .map_err(|err| format!("cannot encode snapshots for {}: {err}", path.display()))?;
    let cannot = |err: std::io::Error| format!("cannot write {}: {err}", path.display());
    crate::tools::ops::write_new_over(&crate::tools::ops::LocalFs, path, text.as_bytes(), 0o644)
        .map_err(cannot)
}

/// The `.snap.yaml.new` path written on a mismatch.
pub(crate) fn new_path(path: &Path) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".new");
    name.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Content;

    #[test]
    fn keeps_presented_paths_and_redacts_tmp_paths_and_timings() {
        let tmp = std::env::temp_dir().display().to_string();
        let result = ToolResult {
            is_error: false,
            content: vec![Content::text(format!(
                "Full output: /scratch/harness-bash-1.log in /workspace/src; \
                 made {tmp}/harness-x-0123456789abcdef"
            ))],
            details: Some(serde_json::json!({"duration_ms": 12, "path": "/workspace/a"})),
            internal_error: None,
            facts: None,
            call_id: None,
        };
        assert_eq!(
            snapshot_value(&result),
            serde_json::json!({
                "is_error": false,
                "text": "Full output: /scratch/harness-bash-1.log in /workspace/src; \
                         made $TMP/harness-x-XXXX",
                "details": {"path": "/workspace/a"}
            })
        );
    }

    #[test]
    fn round_trips_through_yaml() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.snap.yaml");
        let mut entries = BTreeMap::new();
        entries.insert(
            "call_1_1".to_owned(),
            serde_json::json!({"text": "a\nb\n", "is_error": false}),
        );
        save(&path, &entries).unwrap();
        assert_eq!(load(&path).unwrap(), entries);
        assert_eq!(
            load(&dir.path().join("missing.snap.yaml")).unwrap(),
            BTreeMap::new()
        );
    }

    #[test]
    fn reads_what_serde_yaml_writes() {
        let mut entries = BTreeMap::new();
        entries.insert(
            "scenario/call_1_1".to_owned(),
            serde_json::json!({
                "is_error": false,
                "text": "yes\nno\n123\n~\n  indented\n\u{1b}[0m tab\t end ",
                "details": {"n": 3, "f": 1.5, "neg": -7, "none": null, "list": ["on", "0x10", ""], "big": u64::MAX}
            }),
        );
        entries.insert("2".to_owned(), serde_json::json!("1.0"));
        let text = serde_yaml::to_string(&entries).unwrap();
        assert_eq!(parse(&text).unwrap(), entries);
        assert_eq!(parse("").unwrap(), BTreeMap::new());
        assert_eq!(parse("~\n").unwrap(), BTreeMap::new());
    }

    #[test]
    fn refuses_deep_nesting_aliases_and_odd_shapes_at_their_place() {
        let deep = format!("a: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        let (pos, message) = parse(&deep).unwrap_err();
        assert_eq!(pos.line, 1);
        assert!(message.contains("deeper than 128"), "{message}");
        let bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n";
        let (pos, message) = parse(bomb).unwrap_err();
        assert_eq!(
            (pos.line, message.contains("100000 nodes")),
            (5, true),
            "{message}"
        );
        assert_eq!(
            parse("a: 1\na: 2\n").unwrap_err().0,
            crate::scenario::yaml::Pos { line: 2, column: 1 }
        );
        assert_eq!(
            parse("- 1\n").unwrap_err(),
            (
                crate::scenario::yaml::Pos { line: 1, column: 1 },
                "a snapshot file is a mapping of step keys to results; remove the file to \
                 record its snapshots again"
                    .to_owned()
            )
        );
        assert_eq!(parse("a: 1\n---\nb: 2\n").unwrap_err().0.line, 2);
    }

    #[test]
    fn a_bad_file_is_named_with_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.snap.yaml");
        std::fs::write(&path, "k: [1, 2\n").unwrap();
        let error = load(&path).unwrap_err();
        let place = format!("{}:", path.display());
        assert!(error.starts_with(&place), "{error}");
        assert!(
            error[place.len()..].starts_with("2:1: cannot read this snapshot file: "),
            "{error}"
        );
    }
}
