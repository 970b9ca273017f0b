//! Writing a [`Recording`] as scenario files: one per session (or one per
//! `split` calls), each replayed call with its recorded result beside it
//! (large texts in sidecar files next to the scenario), the calls left
//! out and the problems met as comments at the top. A file is written as
//! it is made, the large argument texts read back from the spool
//! ([`super::spool`]), so that it is never whole in memory.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::out::OutDir;
use super::session::Call;
use super::session::Recording;
use super::session::Text;
use super::yaml::Spooled;
use super::yaml::write_yaml;

/// Seconds a replayed call other than bash is given in the time budget.
const SECS_PER_CALL: f64 = 2.0;
/// Seconds every imported scenario has besides its calls.
const BASE_SECS: f64 = 60.0;
/// The longest time budget a scenario may have (a day).
const MAX_SECS: f64 = crate::base::bounds::ONE_DAY;

/// How the files are written.
#[derive(Clone, Debug, Default)]
pub(crate) struct WriteOptions {
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
pub(crate) struct Imported {
    /// Scenario files, in order.
    pub scenarios: Vec<String>,
    /// Calls replayed.
    pub calls: usize,
    /// Sidecar files (written while the session was read).
    pub sidecars: usize,
    /// Reads marked to sync.
    pub synced_reads: usize,
    /// Edits marked to sync (their recorded original written first).
    pub synced_edits: usize,
    /// With `sync_reads`: the replayed reads not marked, by why not.
    pub unsynced_reads: BTreeMap<&'static str, usize>,
}

/// Seconds a bash call adds to the time budget: its timeout when it is a
/// positive number of seconds (at most a day), else what any call adds.
fn bash_secs(call: &Call) -> f64 {
    call.args
        .get("timeout")
        .and_then(Value::as_f64)
        .filter(|t| call.tool == "bash" && t.is_finite() && *t > 0.0)
        .map_or(SECS_PER_CALL, |t| t.min(MAX_SECS))
}

/// Writes the scenarios of `rec` into `dir`.
pub(crate) fn write(
    rec: &Recording,
    dir: &OutDir,
    options: &WriteOptions,
) -> Result<Imported, String> {
    let mut written = Imported {
        sidecars: rec.sidecars.as_ref().map_or(0, |s| s.written),
        ..Imported::default()
    };
    if options.sync_reads {
        for call in rec.calls() {
            if let Err(why) = sync_decision(call) {
                *written.unsynced_reads.entry(why).or_default() += 1;
            }
        }
    }
    let parts = split(&rec.batches, options.split);
    let count = parts.len().max(1);
    for (n, part) in parts.iter().enumerate() {
        let stem = part_stem(&options.stem, n, count);
        let mut steps = Vec::new();
        let mut budget = BASE_SECS;
        for batch in part {
            let mut calls = Vec::new();
            for call in batch.iter() {
                budget += bash_secs(call);
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
        replay.insert(
            "timeout".into(),
            json!(budget.clamp(BASE_SECS, MAX_SECS).ceil()),
        );
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
        let top = header(rec, options, n == 0);
        let doc = Value::Object(doc);
        let spool = rec.spool().map(|s| s as &dyn Spooled);
        let file = format!("{stem}.yaml");
        dir.write_with(&file, |out| {
            out.write_all(top.as_bytes())?;
            write_yaml(&doc, spool, out)
        })
        .map_err(|err| format!("cannot write {}: {err}", dir.show(&file).display()))?;
        written.scenarios.push(file);
    }
    Ok(written)
}

/// The scenario files [`write()`] makes of `rec`, in order, without
/// writing them.
pub(crate) fn files(rec: &Recording, options: &WriteOptions) -> Vec<String> {
    let count = split(&rec.batches, options.split).len().max(1);
    (0..count)
        .map(|n| format!("{}.yaml", part_stem(&options.stem, n, count)))
        .collect()
}

/// The stem of part `n` (from 0) of `count`: `stem-N` when the session is
/// split into several, else `stem`.
fn part_stem(stem: &str, n: usize, count: usize) -> String {
    if count > 1 {
        format!("{stem}-{}", n + 1)
    } else {
        stem.to_owned()
    }
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
fn call_value(call: &Call, options: &WriteOptions, written: &mut Imported) -> Value {
    let mut recorded = Map::new();
    let text_or_file = |map: &mut Map<String, Value>, text: &Text| match text {
        Text::Inline(text) => map.insert("text".into(), json!(text)),
        Text::Sidecar(rel) => map.insert("file".into(), json!(rel)),
    };
    if let Some(result) = &call.result {
        recorded.insert("is_error".into(), json!(result.is_error));
        text_or_file(&mut recorded, &result.text);
        if result.images > 0 {
            recorded.insert("images".into(), json!(result.images));
        }
        if options.sync_reads && sync_decision(call) == Ok(true) {
            recorded.insert("sync".into(), json!(true));
            if call.tool == "read" {
                written.synced_reads += 1;
            } else {
                written.synced_edits += 1;
            }
        }
        if let Some(answer) = &result.answer {
            let mut map = Map::new();
            map.insert("form".into(), json!(answer.form.as_str()));
            if let Some(text) = &answer.text {
                text_or_file(&mut map, text);
            }
            recorded.insert("answer".into(), Value::Object(map));
        }
        if let Some(why) = &result.nonzero_exit {
            recorded.insert("nonzero_exit".into(), json!(why));
        }
        if let Some(original) = result.original.as_ref().filter(|_| options.sync_reads) {
            let mut map = Map::new();
            text_or_file(&mut map, original);
            recorded.insert("original".into(), Value::Object(map));
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

/// Whether `--sync-reads` marks `call`: `Ok(false)` for a call that is not
/// a read, else `Ok(true)` or why not. Only a whole-file read whose
/// recorded text is the file's whole text is marked: no truncation or
/// continuation notice of any kind, not an error, not an image.
fn sync_decision(call: &Call) -> Result<bool, &'static str> {
    let Some(result) = &call.result else {
        return Ok(false);
    };
    if call.tool == "edit" {
        return Ok(result.original.is_some());
    }
    if call.tool != "read" {
        return Ok(false);
    }
    if !call.syncable {
        return Err("it reads part of the file (offset or limit)");
    }
    if result.is_error {
        return Err("its recorded result is an error");
    }
    if result.images > 0 {
        return Err("its recorded result is an image");
    }
    match result.notice {
        Some(why) => Err(why),
        None => Ok(true),
    }
}

/// The comment block at the top of a scenario.
fn header(rec: &Recording, options: &WriteOptions, first: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Imported by `harness import {}` from {} ({} lines). Each call's `recorded` is the",
        rec.format,
        comment(&options.source),
        rec.lines
    );
    out.push_str(
        "# result the model saw then; `harness run` reports how today's results differ \
         (docs/replay.md).\n",
    );
    if let Some((n, line)) = rec.side {
        let _ = writeln!(
            out,
            "# This is side chain {n} of the transcript (a sub-agent's own calls), from line \
             {line}; it starts from the same workspace as the main chain."
        );
    }
    if !first {
        return out;
    }
    let notes: Vec<String> = rec
        .calls()
        .filter_map(|c| {
            c.note
                .as_ref()
                .map(|n| format!("line {}: {} {}: {n}", c.line, c.tool, comment(&c.id)))
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
                s.line,
                comment(&s.tool),
                comment(&s.args),
                comment(&s.reason)
            );
        }
    }
    if let Some(sides) = &rec.sidechains {
        if sides.imported {
            let _ = writeln!(
                out,
                "#\n# Side chains (sub-agents): {}, each imported as a scenario of its own \
                 ({}-side-N.yaml).",
                sides.chains, options.stem
            );
        } else {
            let _ = writeln!(
                out,
                "#\n# Side chains (sub-agents): {} from line {}, with {} call{}, not imported; \
                 `harness import claude --sidechains` imports each as a scenario of its own.",
                sides.chains,
                sides.line,
                sides.calls,
                if sides.calls == 1 { "" } else { "s" }
            );
        }
    }
    if !notes.is_empty() {
        let _ = writeln!(out, "#\n# Mapped with a difference:");
        for n in &notes {
            let _ = writeln!(out, "#   {}", comment(n));
        }
    }
    if options.sync_reads {
        let unsynced: Vec<(&Call, &str)> = rec
            .calls()
            .filter_map(|c| sync_decision(c).err().map(|why| (c, why)))
            .collect();
        if !unsynced.is_empty() {
            let _ = writeln!(out, "#\n# Reads not synced ({}):", unsynced.len());
            for (c, why) in unsynced {
                let _ = writeln!(out, "#   line {}: read {}: {why}", c.line, comment(&c.id));
            }
        }
    }
    if !rec.notes.is_empty() {
        let _ = writeln!(out, "#\n# Problems in the session file:");
        for n in &rec.notes {
            let _ = writeln!(out, "#   line {}: {}", n.line, comment(&n.message));
        }
    }
    out.push('\n');
    out
}

/// Whether `line`, the first line of a file, is the header [`write()`] puts
/// on a scenario imported from the session file named `source`.
pub(crate) fn imported_from(line: &str, source: &str) -> bool {
    line.strip_prefix("# Imported by `harness import ")
        .and_then(|rest| rest.split_once("` from "))
        .is_some_and(|(_, rest)| rest.starts_with(&format!("{} (", comment(source))))
}

/// `text` as it may stand in a comment: on one line, every control
/// character (a newline, a carriage return, an escape …) and every other
/// line or paragraph separator written as an escape (`\n`, `\u{1b}`), so
/// that no recorded text can end the comment and add YAML of its own.
pub(crate) fn comment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}') => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}
