//! Checks: a scenario's expectations, and the loop's own contract, applied
//! to what a run produced. Every failure says where (the step), which check,
//! what was expected and what happened.

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::agent::FauxReport;
use crate::agent::Message;
use crate::agent::TokenCounter;
use crate::agent::Transcript;
use crate::tools::Content;
use crate::tools::ToolResult;
use crate::tools::truncate::count_lines;

use super::load::CallCheck;
use super::load::Scenario;
use super::model::Eol;
use super::model::ErrorExpect;
use super::model::FileExpect;
use super::model::TruncatedExpect;
use super::snapshot;

/// One failed check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Failure {
    /// Where: `step 2 (grep)`, `files: src/a.ts`, `loop contract` …
    pub step: Option<String>,
    /// Which check: `contains`, `stats.retries` …
    pub check: String,
    /// What was expected.
    pub expected: String,
    /// What happened.
    pub actual: String,
}

impl Failure {
    fn new(
        step: Option<&str>,
        check: &str,
        expected: impl Into<String>,
        actual: impl Into<String>,
    ) -> Self {
        Self {
            step: step.map(str::to_owned),
            check: check.to_owned(),
            expected: expected.into(),
            actual: actual.into(),
        }
    }
}

/// The run's figures that checks bound.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Figures {
    /// Assistant messages from the script (steps and retries).
    pub turns: u64,
    /// Tool calls sent.
    pub calls: u64,
    /// Results with `is_error`.
    pub errors: u64,
    /// Retry calls sent.
    pub retries: u64,
    /// Retries not needed because the call succeeded.
    pub retries_avoided: u64,
    /// Tokens of every result, as the model reads them.
    pub result_tokens: u64,
    /// Input tokens over every request (cache reads excluded).
    pub input_tokens: u64,
    /// Output tokens over every response.
    pub output_tokens: u64,
    /// Input tokens served from the cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to the cache.
    pub cache_write_tokens: u64,
}

/// The text of a result as the model is charged for it: text blocks, and
/// images as `[image:MIME:LEN]`, joined by newlines (as §faux.3 prices them).
pub fn priced_text(content: &[Content]) -> String {
    content
        .iter()
        .map(|block| match block {
            Content::Text { text } => text.clone(),
            Content::Image { data, mime_type } => format!("[image:{mime_type}:{}]", data.len()),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Computes a run's figures.
pub fn figures(transcript: &Transcript, report: &FauxReport, tokens: &dyn TokenCounter) -> Figures {
    let mut f = Figures {
        turns: report.turns.iter().filter(|t| t.scripted).count() as u64,
        calls: transcript.calls.len() as u64,
        retries: report.retries_sent as u64,
        retries_avoided: report.retries_avoided as u64,
        ..Figures::default()
    };
    for record in &transcript.calls {
        f.errors += u64::from(record.result.is_error);
        f.result_tokens += tokens.count(&priced_text(&record.result.content));
    }
    for turn in &report.turns {
        f.input_tokens += turn.usage.input;
        f.output_tokens += turn.usage.output;
        f.cache_read_tokens += turn.usage.cache_read;
        f.cache_write_tokens += turn.usage.cache_write;
    }
    f
}

/// A snapshot compared during the checks.
#[derive(Clone, Debug, PartialEq)]
pub struct SnapshotOutcome {
    /// The key in the snapshot file.
    pub key: String,
    /// The value this run produced.
    pub value: Value,
    /// Whether it equals the stored one.
    pub matched: bool,
}

/// What the checks found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckOutput {
    /// Failed checks, in scenario order.
    pub failures: Vec<Failure>,
    /// Snapshots compared (to be written when new or changed).
    pub snapshots: Vec<SnapshotOutcome>,
}

/// Everything the checks look at.
pub struct CheckInput<'a> {
    /// The scenario.
    pub scenario: &'a Scenario,
    /// What the loop produced.
    pub transcript: &'a Transcript,
    /// What the faux model did.
    pub report: &'a FauxReport,
    /// The figures.
    pub figures: &'a Figures,
    /// The workspace root (real path).
    pub workspace: &'a Path,
    /// The suite's tokenizer.
    pub tokens: &'a dyn TokenCounter,
    /// The stored snapshots of the scenario's file.
    pub stored_snapshots: &'a BTreeMap<String, Value>,
}

/// Runs every check.
pub fn check(input: &CheckInput<'_>) -> CheckOutput {
    let mut out = CheckOutput::default();
    loop_contract(input, &mut out.failures);
    let results: HashMap<&str, &crate::agent::CallRecord> = input
        .transcript
        .calls
        .iter()
        .map(|r| (r.call.id.as_str(), r))
        .collect();
    for (id, check) in &input.scenario.call_checks {
        match results.get(id.as_str()) {
            Some(record) => call_checks(input, id, check, &record.result, record.updates, &mut out),
            None => {
                // A retry that was not needed is not a failure.
                if check.label.contains(", retry ") {
                    continue;
                }
                out.failures.push(Failure::new(
                    Some(&check.label),
                    "sent",
                    "the call was sent and has a result",
                    "the call was never sent (the run ended before this step)",
                ));
            }
        }
    }
    file_checks(input, &mut out.failures);
    order_check(input, &mut out.failures);
    stats_checks(input, &mut out.failures);
    out
}

/// The loop's own contract, checked on every scenario.
fn loop_contract(input: &CheckInput<'_>, failures: &mut Vec<Failure>) {
    let contract = Some("loop contract");
    let messages = &input.transcript.messages;
    let mut i = 0;
    while i < messages.len() {
        if let Message::Assistant(a) = &messages[i] {
            let expected: Vec<&str> = a.tool_calls().map(|c| c.id.as_str()).collect();
            let got: Vec<&str> = messages[i + 1..]
                .iter()
                .take_while(|m| matches!(m, Message::ToolResult(_)))
                .filter_map(|m| match m {
                    Message::ToolResult(r) => Some(r.tool_call_id.as_str()),
                    _ => None,
                })
                .collect();
            if expected != got {
                failures.push(Failure::new(
                    contract,
                    "one result per call, in call order",
                    format!("results for {expected:?}"),
                    format!("results for {got:?}"),
                ));
            }
        }
        i += 1;
    }
    for record in &input.transcript.calls {
        if record.result.is_error && record.result.text().trim().is_empty() {
            failures.push(Failure::new(
                contract,
                "error results say what to change",
                format!("a text for the error result of {}", record.call.id),
                "an empty text",
            ));
        }
        if let Some(internal) = &record.result.internal_error {
            failures.push(Failure::new(
                Some(label_of(input, &record.call.id).as_str()),
                "tool layer",
                "no internal error",
                format!("internal error: {internal}"),
            ));
        }
    }
    for failure in &input.report.capture_failures {
        failures.push(Failure::new(
            Some(label_of(input, &failure.call_id).as_str()),
            &format!("capture.{}", failure.name),
            format!("a match for /{}/", failure.regex),
            format!("no match in: {}", failure.text),
        ));
    }
    if let Some(overrun) = &input.report.overrun {
        failures.push(Failure::new(
            contract,
            "script length",
            "the run ends with the script",
            overrun.clone(),
        ));
    }
    if let Some(error) = &input.transcript.error
        && input.report.overrun.is_none()
    {
        failures.push(Failure::new(
            contract,
            "run",
            "the run ends normally",
            error.clone(),
        ));
    }
}

fn label_of(input: &CheckInput<'_>, id: &str) -> String {
    input
        .scenario
        .call_labels
        .get(id)
        .cloned()
        .unwrap_or_else(|| format!("call {id}"))
}

fn call_checks(
    input: &CheckInput<'_>,
    id: &str,
    check: &CallCheck,
    result: &ToolResult,
    updates: usize,
    out: &mut CheckOutput,
) {
    let step = Some(check.label.as_str());
    let e = &check.expect;
    let text = result.text();
    let failures = &mut out.failures;
    let state = |is_error: bool| {
        if is_error {
            "an error result"
        } else {
            "a successful result"
        }
    };
    if let Some(ok) = e.ok
        && ok == result.is_error
    {
        failures.push(Failure::new(
            step,
            "ok",
            state(!ok),
            format!("{}: {}", state(result.is_error), text),
        ));
    }
    match &e.error {
        Some(ErrorExpect::Flag(want)) if *want != result.is_error => {
            failures.push(Failure::new(
                step,
                "error",
                state(*want),
                format!("{}: {}", state(result.is_error), text),
            ));
        }
        Some(ErrorExpect::Matches(pattern)) => {
            if !result.is_error {
                failures.push(Failure::new(
                    step,
                    "error",
                    format!("an error result matching /{pattern}/"),
                    format!("a successful result: {text}"),
                ));
            } else if let Some(regex) = &check.error_regex
                && !regex.is_match(&text)
            {
                failures.push(Failure::new(
                    step,
                    "error",
                    format!("an error text matching /{pattern}/"),
                    text.clone(),
                ));
            }
        }
        _ => {}
    }
    for needle in e.contains.iter().flat_map(|l| l.0.iter()) {
        if !text.contains(needle.as_str()) {
            failures.push(Failure::new(
                step,
                "contains",
                format!("text containing {needle:?}"),
                text.clone(),
            ));
        }
    }
    for needle in e.not_contains.iter().flat_map(|l| l.0.iter()) {
        if text.contains(needle.as_str()) {
            failures.push(Failure::new(
                step,
                "not_contains",
                format!("text without {needle:?}"),
                text.clone(),
            ));
        }
    }
    if let (Some(pattern), Some(regex)) = (&e.matches, &check.matches)
        && !regex.is_match(&text)
    {
        failures.push(Failure::new(
            step,
            "matches",
            format!("text matching /{pattern}/"),
            text.clone(),
        ));
    }
    if let Some(want) = &e.equals
        && *want != text
    {
        failures.push(Failure::new(step, "equals", want.clone(), text.clone()));
    }
    if let Some(want) = e.lines {
        let got = count_lines(&text);
        if got != want {
            failures.push(Failure::new(
                step,
                "lines",
                format!("{want} lines"),
                format!("{got} lines"),
            ));
        }
    }
    if let Some(want) = e.truncated {
        let truncation = result.details.as_ref().and_then(|d| d.get("truncation"));
        let truncated = truncation
            .and_then(|t| t.get("truncated"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let by = truncation
            .and_then(|t| t.get("truncated_by"))
            .and_then(Value::as_str);
        let ok = match want {
            TruncatedExpect::Flag(flag) => flag == truncated,
            TruncatedExpect::Lines => truncated && by == Some("lines"),
            TruncatedExpect::Bytes => truncated && by == Some("bytes"),
        };
        if !ok {
            let expected = match want {
                TruncatedExpect::Flag(true) => "truncated".to_owned(),
                TruncatedExpect::Flag(false) => "not truncated".to_owned(),
                TruncatedExpect::Lines => "truncated by lines".to_owned(),
                TruncatedExpect::Bytes => "truncated by bytes".to_owned(),
            };
            let actual = match (truncated, by) {
                (false, _) => "not truncated".to_owned(),
                (true, Some(by)) => format!("truncated by {by}"),
                (true, None) => "truncated".to_owned(),
            };
            failures.push(Failure::new(step, "truncated", expected, actual));
        }
    }
    if let Some(want) = &e.details {
        let actual = result.details.clone().unwrap_or(Value::Null);
        if let Some(path) = subset_mismatch(want, &actual, String::new()) {
            failures.push(Failure::new(
                step,
                "details",
                format!(
                    "details containing {want} (first difference at {})",
                    if path.is_empty() { "/" } else { &path }
                ),
                actual.to_string(),
            ));
        }
    }
    if let Some(want) = e.image {
        let has = result
            .content
            .iter()
            .any(|c| matches!(c, Content::Image { .. }));
        if has != want {
            failures.push(Failure::new(
                step,
                "image",
                if want {
                    "an image block"
                } else {
                    "no image block"
                },
                if has {
                    "an image block"
                } else {
                    "no image block"
                },
            ));
        }
    }
    if let Some(want) = &e.updates
        && updates < want.min
    {
        failures.push(Failure::new(
            step,
            "updates",
            format!("at least {} updates", want.min),
            format!("{updates} updates"),
        ));
    }
    if let Some(max) = e.max_tokens {
        let got = input.tokens.count(&priced_text(&result.content));
        if got > max {
            failures.push(Failure::new(
                step,
                "max_tokens",
                format!("at most {max} tokens ({})", input.tokens.name()),
                format!("{got} tokens"),
            ));
        }
    }
    if e.snapshot == Some(true) {
        let key = match &input.scenario.snapshot_prefix {
            Some(prefix) => format!("{prefix}/{id}"),
            None => id.to_owned(),
        };
        let value = snapshot::snapshot_value(result, input.workspace);
        let stored = input.stored_snapshots.get(&key);
        let matched = stored == Some(&value);
        if !matched {
            let expected = match stored {
                Some(old) => serde_yaml::to_string(old).unwrap_or_default(),
                None => format!(
                    "a stored snapshot `{key}` in {} (none yet; run with --update-snapshots to accept)",
                    input.scenario.snapshot_file.display()
                ),
            };
            failures.push(Failure::new(
                step,
                "snapshot",
                expected,
                serde_yaml::to_string(&value).unwrap_or_default(),
            ));
        }
        out.snapshots.push(SnapshotOutcome {
            key,
            value,
            matched,
        });
    }
}

/// The JSON pointer of the first place where `want` is not a subset of
/// `actual`, or `None` when it is.
pub fn subset_mismatch(want: &Value, actual: &Value, path: String) -> Option<String> {
    match (want, actual) {
        (Value::Object(w), Value::Object(a)) => {
            for (key, value) in w {
                let child = format!("{path}/{key}");
                match a.get(key) {
                    Some(actual) => {
                        if let Some(p) = subset_mismatch(value, actual, child) {
                            return Some(p);
                        }
                    }
                    None => return Some(child),
                }
            }
            None
        }
        (Value::Array(w), Value::Array(a)) => {
            if w.len() != a.len() {
                return Some(path);
            }
            w.iter()
                .zip(a)
                .enumerate()
                .find_map(|(i, (w, a))| subset_mismatch(w, a, format!("{path}/{i}")))
        }
        (Value::Number(w), Value::Number(a)) => (w.as_f64() != a.as_f64()).then_some(path),
        (w, a) => (w != a).then_some(path),
    }
}

fn file_checks(input: &CheckInput<'_>, failures: &mut Vec<Failure>) {
    for (rel, expect) in &input.scenario.run_check.expect.files {
        let label = format!("files: {rel}");
        let step = Some(label.as_str());
        let path = input.workspace.join(rel);
        let exists = path.symlink_metadata().is_ok();
        let checks = match expect {
            FileExpect::Equals(want) => {
                match std::fs::read(&path) {
                    Ok(bytes) => {
                        let got = String::from_utf8_lossy(&bytes);
                        if got != *want {
                            failures.push(Failure::new(
                                step,
                                "equals",
                                want.clone(),
                                got.into_owned(),
                            ));
                        }
                    }
                    Err(err) => failures.push(Failure::new(
                        step,
                        "equals",
                        want.clone(),
                        format!("cannot read the file: {err}"),
                    )),
                }
                continue;
            }
            FileExpect::Checks(checks) => checks,
        };
        if let Some(absent) = checks.absent
            && absent == exists
        {
            failures.push(Failure::new(
                step,
                "absent",
                if absent {
                    "no such file"
                } else {
                    "the file exists"
                },
                if exists {
                    "the file exists"
                } else {
                    "no such file"
                },
            ));
            continue;
        }
        if let Some(want) = checks.exists
            && want != exists
        {
            failures.push(Failure::new(
                step,
                "exists",
                if want {
                    "the file exists"
                } else {
                    "no such file"
                },
                if exists {
                    "the file exists"
                } else {
                    "no such file"
                },
            ));
            continue;
        }
        let needs_content = checks.equals.is_some()
            || checks.contains.is_some()
            || checks.not_contains.is_some()
            || checks.matches.is_some()
            || checks.bom.is_some()
            || checks.eol.is_some();
        if needs_content {
            let bytes = match std::fs::read(&path) {
                Ok(bytes) => bytes,
                Err(err) => {
                    failures.push(Failure::new(
                        step,
                        "read",
                        "a readable file",
                        format!("cannot read it: {err}"),
                    ));
                    continue;
                }
            };
            let text = String::from_utf8_lossy(&bytes);
            if let Some(want) = &checks.equals
                && *want != text
            {
                failures.push(Failure::new(
                    step,
                    "equals",
                    want.clone(),
                    text.clone().into_owned(),
                ));
            }
            for needle in checks.contains.iter().flat_map(|l| l.0.iter()) {
                if !text.contains(needle.as_str()) {
                    failures.push(Failure::new(
                        step,
                        "contains",
                        format!("content containing {needle:?}"),
                        text.clone().into_owned(),
                    ));
                }
            }
            for needle in checks.not_contains.iter().flat_map(|l| l.0.iter()) {
                if text.contains(needle.as_str()) {
                    failures.push(Failure::new(
                        step,
                        "not_contains",
                        format!("content without {needle:?}"),
                        text.clone().into_owned(),
                    ));
                }
            }
            if let Some(regex) = input.scenario.run_check.file_regexes.get(rel)
                && !regex.is_match(&text)
            {
                failures.push(Failure::new(
                    step,
                    "matches",
                    format!("content matching /{}/", regex.as_str()),
                    text.clone().into_owned(),
                ));
            }
            if let Some(want) = checks.bom {
                let has = bytes.starts_with(b"\xEF\xBB\xBF");
                if has != want {
                    failures.push(Failure::new(
                        step,
                        "bom",
                        if want { "a UTF-8 BOM" } else { "no BOM" },
                        if has { "a UTF-8 BOM" } else { "no BOM" },
                    ));
                }
            }
            if let Some(want) = checks.eol {
                let crlf = bytes.windows(2).filter(|w| w == b"\r\n").count();
                let lf = bytes.iter().filter(|b| **b == b'\n').count();
                let (ok, what) = match want {
                    Eol::Lf => (crlf == 0, "LF line endings only"),
                    Eol::Crlf => (lf > 0 && crlf == lf, "CRLF line endings only"),
                };
                if !ok {
                    failures.push(Failure::new(
                        step,
                        "eol",
                        what,
                        format!("{} CRLF and {} bare LF line endings", crlf, lf - crlf),
                    ));
                }
            }
        }
        if let Some(mode) = &checks.mode {
            use std::os::unix::fs::PermissionsExt;
            match std::fs::metadata(&path) {
                Ok(meta) => {
                    let got = format!("{:o}", meta.permissions().mode() & 0o7777);
                    let want = u32::from_str_radix(mode, 8)
                        .map(|m| format!("{m:o}"))
                        .unwrap_or_else(|_| mode.clone());
                    if got != want {
                        failures.push(Failure::new(step, "mode", want, got));
                    }
                }
                Err(err) => failures.push(Failure::new(
                    step,
                    "mode",
                    mode.clone(),
                    format!("cannot stat it: {err}"),
                )),
            }
        }
    }
}

fn order_check(input: &CheckInput<'_>, failures: &mut Vec<Failure>) {
    if let Some(want) = &input.scenario.run_check.expect.order {
        let got: Vec<&str> = input
            .transcript
            .calls
            .iter()
            .map(|r| r.call.name.as_str())
            .collect();
        if got != want.iter().map(String::as_str).collect::<Vec<_>>() {
            failures.push(Failure::new(
                Some("order"),
                "order",
                format!("{want:?}"),
                format!("{got:?}"),
            ));
        }
    }
}

fn stats_checks(input: &CheckInput<'_>, failures: &mut Vec<Failure>) {
    let Some(stats) = &input.scenario.run_check.expect.stats else {
        return;
    };
    let f = input.figures;
    let step = Some("stats");
    let exact = [
        ("stats.retries", stats.retries, f.retries),
        ("stats.errors", stats.errors, f.errors),
        ("stats.turns", stats.turns, f.turns),
    ];
    for (name, want, got) in exact {
        if let Some(want) = want
            && want != got
        {
            failures.push(Failure::new(step, name, want.to_string(), got.to_string()));
        }
    }
    let bounds = [
        ("stats.max_retries", stats.max_retries, f.retries),
        ("stats.max_errors", stats.max_errors, f.errors),
        (
            "stats.max_result_tokens",
            stats.max_result_tokens,
            f.result_tokens,
        ),
        (
            "stats.max_input_tokens",
            stats.max_input_tokens,
            f.input_tokens + f.cache_read_tokens,
        ),
        (
            "stats.max_output_tokens",
            stats.max_output_tokens,
            f.output_tokens,
        ),
    ];
    for (name, max, got) in bounds {
        if let Some(max) = max
            && got > max
        {
            failures.push(Failure::new(
                step,
                name,
                format!("at most {max}"),
                got.to_string(),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn subset_reports_the_first_difference() {
        let actual = json!({"a": 1, "b": {"c": [1, 2], "d": "x"}, "e": 2.0});
        assert_eq!(
            subset_mismatch(&json!({"a": 1}), &actual, String::new()),
            None
        );
        assert_eq!(
            subset_mismatch(&json!({"e": 2}), &actual, String::new()),
            None
        );
        assert_eq!(
            subset_mismatch(&json!({"b": {"d": "x"}}), &actual, String::new()),
            None
        );
        assert_eq!(
            subset_mismatch(&json!({"b": {"c": [1]}}), &actual, String::new()),
            Some("/b/c".into())
        );
        assert_eq!(
            subset_mismatch(&json!({"z": 1}), &actual, String::new()),
            Some("/z".into())
        );
        assert_eq!(
            subset_mismatch(&json!({"b": {"d": "y"}}), &actual, String::new()),
            Some("/b/d".into())
        );
    }

    #[test]
    fn priced_text_renders_images_as_placeholders() {
        let content = vec![
            Content::text("Read image file [image/png]"),
            Content::Image {
                data: "AAAA".into(),
                mime_type: "image/png".into(),
            },
        ];
        assert_eq!(
            priced_text(&content),
            "Read image file [image/png]\n[image:image/png:4]"
        );
    }
}
