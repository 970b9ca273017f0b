//! Writing a [`Recording`] as scenario files: one per session (or one per
//! `split` calls), each replayed call with its recorded result beside it
//! (large texts in sidecar files next to the scenario), the calls left
//! out and the problems met as comments at the top.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::session::Call;
use super::session::Recording;
use super::session::Text;

/// Seconds a replayed call other than bash is given in the time budget.
const SECS_PER_CALL: f64 = 2.0;
/// Seconds every imported scenario has besides its calls.
const BASE_SECS: f64 = 60.0;
/// The longest time budget a scenario may have (a day).
const MAX_SECS: f64 = 86_400.0;

/// How the files are written.
#[derive(Clone, Debug, Default)]
pub struct WriteOptions {
    /// The scenario files' stem (`session` → `session.yaml`).
    pub stem: String,
    /// The session file's name, for people.
    pub source: String,
    /// Calls per scenario (`None`: one scenario).
    pub split: Option<usize>,
    /// The `workspace:` value.
    pub workspace: Value,
    /// Mark whole-file reads for `sync`.
    pub sync_reads: bool,
}

/// What was written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// Scenario files, in order.
    pub scenarios: Vec<String>,
    /// Calls replayed.
    pub calls: usize,
    /// Sidecar files (written while the session was read).
    pub sidecars: usize,
    /// Reads marked to sync.
    pub synced_reads: usize,
}

/// Writes the scenarios of `rec` into `dir`.
pub fn write(rec: &Recording, dir: &Path, options: &WriteOptions) -> Result<Written, String> {
    let mut written = Written {
        sidecars: rec.sidecars.as_ref().map_or(0, |s| s.written),
        ..Written::default()
    };
    let parts = split(&rec.batches, options.split);
    let count = parts.len().max(1);
    for (n, part) in parts.iter().enumerate() {
        let stem = if count > 1 {
            format!("{}-{}", options.stem, n + 1)
        } else {
            options.stem.clone()
        };
        let mut steps = Vec::new();
        let mut budget = BASE_SECS;
        for batch in part {
            let mut calls = Vec::new();
            for call in batch.iter() {
                budget += call
                    .args
                    .get("timeout")
                    .and_then(Value::as_f64)
                    .filter(|_| call.tool == "bash")
                    .unwrap_or(SECS_PER_CALL);
                calls.push(call_value(call, options, &mut written));
            }
            if calls.len() == 1 {
                steps.extend(calls);
            } else {
                steps.push(json!({ "parallel": calls }));
            }
        }
        if steps.is_empty() {
            steps.push(json!({ "say": "The recorded session made no call that can be replayed." }));
        }
        let mut replay = Map::new();
        if let Some(cwd) = &rec.cwd {
            replay.insert("cwd".into(), json!(cwd));
        }
        replay.insert("source".into(), json!(options.source));
        if n == 0 {
            replay.insert("skipped".into(), json!(rec.skipped.len()));
        }
        replay.insert("timeout".into(), json!(budget.min(MAX_SECS).ceil()));
        let mut doc = Map::new();
        let name = if count > 1 {
            format!(
                "imported {} session {} (part {} of {count})",
                rec.format,
                options.stem,
                n + 1
            )
        } else {
            format!("imported {} session {}", rec.format, options.stem)
        };
        doc.insert("name".into(), json!(name));
        doc.insert("tags".into(), json!(["imported", rec.format]));
        doc.insert("replay".into(), Value::Object(replay));
        if !options.workspace.is_null() {
            doc.insert("workspace".into(), options.workspace.clone());
        }
        doc.insert("model".into(), Value::Array(steps));
        let yaml = serde_yaml::to_string(&Value::Object(doc))
            .map_err(|err| format!("cannot write the scenario as YAML: {err}"))?;
        let text = format!("{}{yaml}", header(rec, options, n == 0));
        let file = format!("{stem}.yaml");
        std::fs::write(dir.join(&file), text)
            .map_err(|err| format!("cannot write {}: {err}", dir.join(&file).display()))?;
        written.scenarios.push(file);
    }
    Ok(written)
}

/// Batches grouped `split` calls a scenario at most (a batch is never cut).
fn split(batches: &[Vec<Call>], split: Option<usize>) -> Vec<Vec<&Vec<Call>>> {
    let mut parts: Vec<Vec<&Vec<Call>>> = vec![Vec::new()];
    let mut in_part = 0;
    for batch in batches {
        if let Some(max) = split
            && in_part > 0
            && in_part + batch.len() > max
        {
            parts.push(Vec::new());
            in_part = 0;
        }
        in_part += batch.len();
        if let Some(part) = parts.last_mut() {
            part.push(batch);
        }
    }
    parts
}

/// One call of the script, with `recorded:`.
fn call_value(call: &Call, options: &WriteOptions, written: &mut Written) -> Value {
    let mut recorded = Map::new();
    if let Some(result) = &call.result {
        recorded.insert("is_error".into(), json!(result.is_error));
        match &result.text {
            Text::Inline(text) => recorded.insert("text".into(), json!(text)),
            Text::Sidecar(rel) => recorded.insert("file".into(), json!(rel)),
        };
        if result.images > 0 {
            recorded.insert("images".into(), json!(result.images));
        }
        if options.sync_reads
            && call.syncable
            && !result.is_error
            && result.images == 0
            && result.complete
        {
            recorded.insert("sync".into(), json!(true));
            written.synced_reads += 1;
        }
    }
    written.calls += 1;
    json!({
        "call": call.tool,
        "id": call.id,
        "args": call.args,
        "recorded": recorded,
    })
}

/// The comment block at the top of a scenario.
fn header(rec: &Recording, options: &WriteOptions, first: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Imported by `harness import {}` from {} ({} lines). Each call's `recorded` is the",
        rec.format, options.source, rec.lines
    );
    out.push_str(
        "# result the model saw then; `harness run` reports how today's results differ \
         (docs/replay.md).\n",
    );
    if !first {
        return out;
    }
    let notes: Vec<String> = rec
        .calls()
        .filter_map(|c| {
            c.note
                .as_ref()
                .map(|n| format!("line {}: {} {}: {n}", c.line, c.tool, c.id))
        })
        .collect();
    if !rec.skipped.is_empty() {
        let n = rec.skipped.len();
        let _ = writeln!(
            out,
            "#\n# Not replayed ({n} call{}):",
            if n == 1 { "" } else { "s" }
        );
        for s in &rec.skipped {
            let _ = writeln!(
                out,
                "#   line {}: {} {} — {}",
                s.line, s.tool, s.args, s.reason
            );
        }
    }
    if !notes.is_empty() {
        let _ = writeln!(out, "#\n# Mapped with a difference:");
        for n in &notes {
            let _ = writeln!(out, "#   {n}");
        }
    }
    if !rec.notes.is_empty() {
        let _ = writeln!(out, "#\n# Problems in the session file:");
        for n in &rec.notes {
            let _ = writeln!(out, "#   line {}: {}", n.line, one_line(&n.message));
        }
    }
    out.push('\n');
    out
}

/// `text` on one line (a comment cannot hold a newline).
fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}
