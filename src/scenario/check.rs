//! Checks: a scenario's expectations, and the loop's own contract, applied
//! to what a run produced. Every failure says where (the step), which check,
//! what was expected and what happened.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;

use crate::agent::FauxReport;
use crate::agent::Message;
use crate::agent::Presenter;
use crate::agent::TokenCounter;
use crate::agent::Transcript;
use crate::tools::Content;
use crate::tools::ToolResult;
use crate::tools::ops::ConfinedFs;
use crate::tools::ops::FsOps;
use crate::tools::truncate::TruncatedBy;
use crate::tools::truncate::Truncation;
use crate::tools::truncate::count_lines;

use super::exact;
use super::figures::Figures;
use super::figures::priced_text;
use super::focus;
use super::focus::Focus;
use super::images;
use super::load::CallCheck;
use super::load::Scenario;
use super::model::CallExpect;
use super::model::DetailCheck;
use super::model::Eol;
use super::model::ErrorExpect;
use super::model::FileChecks;
use super::model::FileExpect;
use super::model::ImageChecks;
use super::model::ImageExpect;
use super::model::ImagesExpect;
use super::model::StringList;
use super::model::TruncatedExpect;
use super::model::UpdatesExpect;
use super::pointer;
use super::snapshot;
use super::updates::CallUpdates;
use super::updates::UpdateLog;
use super::vars;

/// One failed check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Failure {
    /// Where: `step 2 (grep)`, `files: src/a.ts`, `loop contract` …
    pub step: Option<String>,
    /// Which check: `contains`, `stats.retries` …
    pub check: String,
    /// What was expected.
    pub expected: String,
    /// What happened.
    pub actual: String,
    /// For a long `actual`: the lines to show first, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<Focus>,
}

impl Failure {
    /// A failure at `step` (`None`: the whole scenario).
    pub fn new(
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
            focus: None,
        }
    }

    /// The failure with the lines of `actual` to show first.
    pub fn with_focus(mut self, focus: Option<Focus>) -> Self {
        self.focus = focus;
        self
    }
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
    /// The workspace as the model sees it: what `${workspace}` in an
    /// expectation stands for.
    pub workspace_name: &'a str,
    /// How the model sees the machine's paths: file contents are checked
    /// as the model would read them.
    pub presenter: &'a Presenter,
    /// The suite's tokenizer.
    pub tokens: &'a dyn TokenCounter,
    /// The stored snapshots of the scenario's file.
    pub stored_snapshots: &'a BTreeMap<String, Value>,
    /// The partial results calls streamed.
    pub updates: &'a UpdateLog,
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
            Some(record) => {
                call_checks(input, id, check, &record.result, record.updates, &mut out);
                cancelled_check(&mut out.failures, check, record);
            }
            // A retry that was not needed is not a failure.
            None if check.retry => {}
            None => out.failures.push(Failure::new(
                Some(&check.label),
                "sent",
                "the call was sent and has a result",
                "the call was never sent (the run ended before this step)",
            )),
        }
    }
    file_checks(input, &mut out.failures);
    order_check(input, &mut out.failures);
    stats_checks(input, &mut out.failures);
    out
}

/// `cancelled`: whether the run's cancellation reached the call.
fn cancelled_check(
    failures: &mut Vec<Failure>,
    check: &CallCheck,
    record: &crate::agent::CallRecord,
) {
    let Some(want) = check.expect.cancelled else {
        return;
    };
    if want == record.cancelled {
        return;
    }
    let state = |cancelled: bool| {
        either(
            cancelled,
            "a call the cancellation reached",
            "a call that ended before any cancellation",
        )
    };
    failures.push(Failure::new(
        Some(check.label.as_str()),
        "cancelled",
        state(want),
        format!("{}: {}", state(record.cancelled), record.result.text()),
    ));
}

/// The loop's own contract, checked on every scenario.
fn loop_contract(input: &CheckInput<'_>, failures: &mut Vec<Failure>) {
    let contract = Some("loop contract");
    let messages = &input.transcript.messages;
    for (i, message) in messages.iter().enumerate() {
        let Message::Assistant(a) = message else {
            continue;
        };
        let expected: Vec<&str> = a.tool_calls().map(|c| c.id.as_str()).collect();
        let got: Vec<&str> = messages[i + 1..]
            .iter()
            .map_while(|m| match m {
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

/// `yes` or `no`: how a yes-or-no check words each side.
fn either(flag: bool, yes: &'static str, no: &'static str) -> &'static str {
    if flag { yes } else { no }
}

/// A yes-or-no check: fails when `got` is not `want`, each side worded by
/// [`either`].
fn flag_check(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    check: &str,
    (want, got): (bool, bool),
    (yes, no): (&'static str, &'static str),
) {
    if want != got {
        failures.push(Failure::new(
            step,
            check,
            either(want, yes, no),
            either(got, yes, no),
        ));
    }
}

/// `contains`, `not_contains` and `matches` on a text; `noun` names it in
/// the expectation (`text` of a result, `content` of a file).
fn substring_checks(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    noun: &str,
    text: &str,
    (contains, not_contains): (Option<&StringList>, Option<&StringList>),
    matches: Option<&regex::Regex>,
) {
    for needle in contains.iter().flat_map(|l| l.0.iter()) {
        if !text.contains(needle.as_str()) {
            failures.push(
                Failure::new(
                    step,
                    "contains",
                    format!("{noun} containing {needle:?}"),
                    text,
                )
                .with_focus(focus::for_contains(text, needle)),
            );
        }
    }
    for needle in not_contains.iter().flat_map(|l| l.0.iter()) {
        if text.contains(needle.as_str()) {
            failures.push(
                Failure::new(
                    step,
                    "not_contains",
                    format!("{noun} without {needle:?}"),
                    text,
                )
                .with_focus(focus::for_occurrence(text, needle)),
            );
        }
    }
    if let Some(regex) = matches
        && !regex.is_match(text)
    {
        failures.push(
            Failure::new(
                step,
                "matches",
                format!("{noun} matching /{}/", regex.as_str()),
                text,
            )
            .with_focus(focus::for_regex(text)),
        );
    }
}

/// The truncation facts a tool put in `details.truncation`, if any.
pub fn truncation(result: &ToolResult) -> Option<Truncation> {
    Truncation::from_details(result.details.as_ref()?)
}

fn truncated_by(by: TruncatedBy) -> &'static str {
    match by {
        TruncatedBy::Lines => "lines",
        TruncatedBy::Bytes => "bytes",
    }
}

fn call_checks(
    input: &CheckInput<'_>,
    id: &str,
    check: &CallCheck,
    result: &ToolResult,
    updates: usize,
    out: &mut CheckOutput,
) {
    let vars = variables(input, input.report.call_vars.get(id));
    let expanded = expanded_call_check(check, &vars, &mut out.failures);
    let check = expanded.as_ref();
    let step = Some(check.label.as_str());
    let e = &check.expect;
    let text = result.text();
    let failures = &mut out.failures;
    outcome_checks(failures, step, check, result, &text);
    substring_checks(
        failures,
        step,
        "text",
        &text,
        (e.contains.as_ref(), e.not_contains.as_ref()),
        check.matches.as_deref(),
    );
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
        truncation_check(failures, step, want, truncation(result));
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
    details_at_checks(failures, step, check, result);
    content_checks(input, failures, step, e, result);
    images_checks(failures, step, e, result);
    if let Some(want) = &e.updates {
        updates_checks(failures, step, want, updates, input.updates.of(id));
    }
    if e.snapshot == Some(true) {
        snapshot_check(input, id, step, result, out);
    }
}

/// `ok` and `error`: whether the result is an error (and what it says).
fn outcome_checks(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    check: &CallCheck,
    result: &ToolResult,
    text: &str,
) {
    let state = |is_error: bool| either(is_error, "an error result", "a successful result");
    let actual = || format!("{}: {text}", state(result.is_error));
    if let Some(ok) = check.expect.ok
        && ok == result.is_error
    {
        failures.push(Failure::new(step, "ok", state(!ok), actual()));
    }
    match &check.expect.error {
        Some(ErrorExpect::Flag(want)) if *want != result.is_error => {
            failures.push(Failure::new(step, "error", state(*want), actual()));
        }
        Some(ErrorExpect::Matches(pattern)) => {
            if !result.is_error {
                failures.push(Failure::new(
                    step,
                    "error",
                    format!("an error result matching /{pattern}/"),
                    actual(),
                ));
            } else if let Some(regex) = &check.error_regex
                && !regex.is_match(text)
            {
                failures.push(
                    Failure::new(
                        step,
                        "error",
                        format!("an error text matching /{pattern}/"),
                        text,
                    )
                    .with_focus(focus::for_regex(text)),
                );
            }
        }
        _ => {}
    }
}

/// `truncated`: what the tool reported about cutting its output.
fn truncation_check(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    want: TruncatedExpect,
    facts: Option<Truncation>,
) {
    let truncated = facts.as_ref().is_some_and(|t| t.truncated);
    let by = facts.and_then(|t| t.truncated_by);
    let ok = match want {
        TruncatedExpect::Flag(flag) => flag == truncated,
        TruncatedExpect::Lines => truncated && by == Some(TruncatedBy::Lines),
        TruncatedExpect::Bytes => truncated && by == Some(TruncatedBy::Bytes),
    };
    if ok {
        return;
    }
    let expected = match want {
        TruncatedExpect::Flag(flag) => either(flag, "truncated", "not truncated").to_owned(),
        TruncatedExpect::Lines => "truncated by lines".to_owned(),
        TruncatedExpect::Bytes => "truncated by bytes".to_owned(),
    };
    let actual = match (truncated, by) {
        (false, _) => "not truncated".to_owned(),
        (true, Some(by)) => format!("truncated by {}", truncated_by(by)),
        (true, None) => "truncated".to_owned(),
    };
    failures.push(Failure::new(step, "truncated", expected, actual));
}

/// `image`, `updates` and `max_tokens`: what the result holds and costs.
fn content_checks(
    input: &CheckInput<'_>,
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    e: &CallExpect,
    result: &ToolResult,
) {
    if let Some(ImageExpect::Flag(want)) = e.image {
        let has = result
            .content
            .iter()
            .any(|c| matches!(c, Content::Image { .. }));
        flag_check(
            failures,
            step,
            "image",
            (want, has),
            ("an image block", "no image block"),
        );
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
}

/// `details_at`: each pointer's matchers on the result's details.
fn details_at_checks(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    check: &CallCheck,
    result: &ToolResult,
) {
    for (at, want) in check.expect.details_at.iter().flatten() {
        let regex = check.details_regexes.get(at).map(|r| &**r);
        for (matcher, expected, actual) in pointer::misses(result.details.as_ref(), at, want, regex)
        {
            failures.push(Failure::new(
                step,
                &format!(
                    "details_at {} {matcher}",
                    if at.is_empty() { "(root)" } else { at }
                ),
                expected,
                actual,
            ));
        }
    }
}

/// `image: {checks}` and `images`: the image blocks, each checked.
fn images_checks(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    e: &CallExpect,
    result: &ToolResult,
) {
    let blocks = images::blocks(&result.content);
    let each = |failures: &mut Vec<Failure>, name: &str, i: usize, want: &ImageChecks| {
        let Some(block) = blocks.get(i) else { return };
        for (what, expected, actual) in images::misses(block, want) {
            failures.push(Failure::new(
                step,
                &format!("{name} {what}"),
                expected,
                actual,
            ));
        }
    };
    if let Some(ImageExpect::Checks(want)) = &e.image {
        if blocks.is_empty() {
            failures.push(Failure::new(
                step,
                "image",
                "an image block",
                "no image block",
            ));
        }
        for i in 0..blocks.len() {
            let name = if blocks.len() == 1 {
                "image".to_owned()
            } else {
                format!("image {}", i + 1)
            };
            each(failures, &name, i, want);
        }
    }
    let (count, list): (usize, &[ImageChecks]) = match &e.images {
        None => return,
        Some(ImagesExpect::Count(n)) => (*n, &[]),
        Some(ImagesExpect::Each(list)) => (list.len(), list),
    };
    if blocks.len() != count {
        failures.push(Failure::new(
            step,
            "images",
            blocks_text(count),
            blocks_text(blocks.len()),
        ));
    }
    for (i, want) in list.iter().enumerate() {
        each(failures, &format!("images[{i}]"), i, want);
    }
}

fn updates_text(n: usize) -> String {
    format!("{n} update{}", if n == 1 { "" } else { "s" })
}

/// An update's text as a failure shows it.
fn shown_update(text: Option<&str>) -> String {
    match text {
        None => "(no update)".to_owned(),
        Some("") => "(an empty update)".to_owned(),
        Some(text) => text.to_owned(),
    }
}

fn blocks_text(n: usize) -> String {
    format!("{n} image block{}", if n == 1 { "" } else { "s" })
}

/// `updates`: how many partial results the call streamed, and what they
/// said. `count` is the loop's own count.
fn updates_checks(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    want: &UpdatesExpect,
    count: usize,
    log: Option<&CallUpdates>,
) {
    if let Some(min) = want.min
        && count < min
    {
        failures.push(Failure::new(
            step,
            "updates",
            format!("at least {min} updates"),
            updates_text(count),
        ));
    }
    if let Some(max) = want.max
        && count > max
    {
        failures.push(Failure::new(
            step,
            "updates.max",
            format!("at most {max} updates"),
            updates_text(count),
        ));
    }
    let kept: &[String] = log.map_or(&[], |l| l.kept.as_slice());
    let unkept = log.map_or(0, |l| l.unkept);
    for needle in want.contains.iter().flat_map(|l| l.0.iter()) {
        if !kept.iter().any(|t| t.contains(needle.as_str())) {
            let note = if unkept > 0 {
                format!(
                    " ({unkept} later updates were past the {} the checks keep)",
                    crate::tools::truncate::format_size(super::updates::MAX_KEPT_BYTES)
                )
            } else {
                String::new()
            };
            failures.push(Failure::new(
                step,
                "updates.contains",
                format!("an update containing {needle:?}"),
                format!(
                    "{}, none containing it{note}; the last: {}",
                    updates_text(count),
                    shown_update(log.and_then(|l| l.last.as_deref()))
                ),
            ));
        }
    }
    for needle in want.last_contains.iter().flat_map(|l| l.0.iter()) {
        let last = log.and_then(|l| l.last.as_deref());
        if !last.is_some_and(|t| t.contains(needle.as_str())) {
            let text = last.unwrap_or("");
            failures.push(
                Failure::new(
                    step,
                    "updates.last_contains",
                    format!("a last update containing {needle:?}"),
                    shown_update(last),
                )
                .with_focus(focus::for_contains(text, needle)),
            );
        }
    }
}

/// `snapshot: true`: the result against the stored snapshot.
fn snapshot_check(
    input: &CheckInput<'_>,
    id: &str,
    step: Option<&str>,
    result: &ToolResult,
    out: &mut CheckOutput,
) {
    let key = match &input.scenario.snapshot_prefix {
        Some(prefix) => format!("{prefix}/{id}"),
        None => id.to_owned(),
    };
    let value = snapshot::snapshot_value(result);
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
        out.failures.push(Failure::new(
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

/// The largest file a file check reads.
pub const MAX_CHECKED_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The files of `expect.files`, reached only through a handle confined to
/// the workspace (D1): regular files only, opened without blocking, at most
/// [`MAX_CHECKED_FILE_BYTES`] each. A path that leads outside the workspace
/// (absolute, `..`, a symlink) cannot be read; for `exists`/`absent` it
/// does not exist.
struct CheckedFiles {
    fs: Result<ConfinedFs, String>,
    /// The largest file read: [`MAX_CHECKED_FILE_BYTES`].
    max: u64,
}

impl CheckedFiles {
    fn new(workspace: &Path) -> Self {
        Self {
            fs: ConfinedFs::new(workspace)
                .map_err(|err| format!("the workspace cannot be opened: {err}")),
            max: MAX_CHECKED_FILE_BYTES,
        }
    }

    fn exists(&self, rel: &str) -> bool {
        self.fs
            .as_ref()
            .is_ok_and(|fs| fs.symlink_metadata(&fs.root().join(rel)).is_ok())
    }

    fn read(&self, rel: &str) -> Result<Vec<u8>, String> {
        let fs = self.fs.as_ref().map_err(String::clone)?;
        fs.read_capped(&fs.root().join(rel), self.max)
            .map_err(|err| match err.kind() {
                std::io::ErrorKind::FileTooLarge => format!(
                    "it is larger than {}, the most a file check reads",
                    crate::tools::truncate::format_size(
                        usize::try_from(self.max).unwrap_or(usize::MAX)
                    )
                ),
                _ => err.to_string(),
            })
    }

    /// The target of the symlink at `rel` as written, or what is there
    /// instead.
    fn link(&self, rel: &str) -> Result<String, String> {
        let fs = self.fs.as_ref().map_err(String::clone)?;
        let path = fs.root().join(rel);
        match fs.symlink_metadata(&path) {
            Ok(meta) if meta.kind == crate::tools::ops::FileKind::Symlink => fs
                .read_link(&path)
                .map(|target| target.display().to_string())
                .map_err(|err| format!("a symlink that cannot be read: {err}")),
            Ok(meta) if meta.is_dir() => Err("a directory, not a symlink".to_owned()),
            Ok(_) => Err("a file, not a symlink".to_owned()),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                Err("no such file".to_owned())
            }
            Err(err) => Err(format!("cannot look at it: {err}")),
        }
    }

    fn mode(&self, rel: &str) -> Result<u32, String> {
        let fs = self.fs.as_ref().map_err(String::clone)?;
        fs.metadata(&fs.root().join(rel))
            .map(|meta| meta.mode)
            .map_err(|err| err.to_string())
    }
}

/// The variables an expectation sees: `bound` (those of its call, or the
/// final ones), with `${workspace}` the workspace as the model sees it.
fn variables(input: &CheckInput<'_>, bound: Option<&vars::Vars>) -> vars::Vars {
    let mut all = bound.unwrap_or(&input.report.vars).clone();
    all.insert("workspace".to_owned(), input.workspace_name.to_owned());
    all
}

/// A regex of an expectation after expansion; a failure when it no
/// longer compiles (a value too large for the regex engine).
fn expanded_regex(
    pattern: Option<&str>,
    step: &str,
    failures: &mut Vec<Failure>,
) -> Option<std::sync::Arc<regex::Regex>> {
    let pattern = pattern?;
    match regex::Regex::new(pattern) {
        Ok(regex) => Some(std::sync::Arc::new(regex)),
        Err(err) => {
            failures.push(Failure::new(
                Some(step),
                "expect",
                "a regex that compiles once its variables are expanded",
                err.to_string(),
            ));
            // A regex that matches nothing, so the check fails.
            regex::Regex::new("[^\\s\\S]").ok().map(std::sync::Arc::new)
        }
    }
}

/// A call's checks with their `${var}` expanded (docs/scenarios.md,
/// "Variables"); unchanged when they have none.
fn expanded_call_check<'c>(
    check: &'c CallCheck,
    vars: &vars::Vars,
    failures: &mut Vec<Failure>,
) -> Cow<'c, CallCheck> {
    if !vars::call_expect_has_vars(&check.expect) {
        return Cow::Borrowed(check);
    }
    let expect = vars::expand_call_expect(&check.expect, vars);
    let error_pattern = match &expect.error {
        Some(ErrorExpect::Matches(p)) => Some(p.as_str()),
        _ => None,
    };
    let error_regex = expanded_regex(error_pattern, &check.label, failures);
    let matches = expanded_regex(expect.matches.as_deref(), &check.label, failures);
    let mut details_regexes = BTreeMap::new();
    for (at, detail) in expect.details_at.iter().flatten() {
        if let DetailCheck::Matchers(m) = detail
            && let Some(regex) = expanded_regex(m.matches.as_deref(), &check.label, failures)
        {
            details_regexes.insert(at.clone(), regex);
        }
    }
    Cow::Owned(CallCheck {
        expect,
        error_regex,
        matches,
        details_regexes,
        ..check.clone()
    })
}

fn file_checks(input: &CheckInput<'_>, failures: &mut Vec<Failure>) {
    let files = CheckedFiles::new(input.workspace);
    let vars = variables(input, None);
    for (rel, expect) in &input.scenario.run_check.expect.files {
        let expect: &FileExpect = expect;
        let label = format!("files: {rel}");
        let step = Some(label.as_str());
        let (expect, expanded_regex) = if vars::file_expect_has_vars(expect) {
            let expanded = vars::expand_file_expect(expect, &vars);
            let pattern = match &expanded {
                FileExpect::Checks(c) => c.matches.clone(),
                FileExpect::Equals(_) => None,
            };
            let regex = expanded_regex(pattern.as_deref(), &label, failures);
            (Cow::Owned(expanded), regex)
        } else {
            (Cow::Borrowed(expect), None)
        };
        let expect = expect.as_ref();
        match expect {
            FileExpect::Equals(want) => match files.read(rel) {
                Ok(bytes) => {
                    let got = input.presenter.text(&String::from_utf8_lossy(&bytes));
                    if got != *want {
                        failures.push(Failure::new(step, "equals", want.clone(), got));
                    }
                }
                Err(err) => failures.push(Failure::new(
                    step,
                    "equals",
                    want.clone(),
                    format!("cannot read the file: {err}"),
                )),
            },
            FileExpect::Checks(checks) => {
                let regex = expanded_regex
                    .as_deref()
                    .or_else(|| input.scenario.run_check.file_regexes.get(rel).map(|r| &**r));
                let bytes = input.scenario.run_check.file_bytes.get(rel);
                file_object_checks(
                    failures,
                    step,
                    (&files, rel, input.presenter),
                    checks,
                    (regex, bytes.map(Vec::as_slice)),
                );
            }
        }
    }
}

/// The object form of a file's checks; `regex` is its compiled `matches`.
/// The file's text is checked as `presenter` shows it to the model.
fn file_object_checks(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    (files, rel, presenter): (&CheckedFiles, &str, &Presenter),
    checks: &FileChecks,
    (regex, want_bytes): (Option<&regex::Regex>, Option<&[u8]>),
) {
    let exists = files.exists(rel);
    let presence = ("the file exists", "no such file");
    if let Some(absent) = checks.absent
        && absent == exists
    {
        flag_check(failures, step, "absent", (!absent, exists), presence);
        return;
    }
    if let Some(want) = checks.exists
        && want != exists
    {
        flag_check(failures, step, "exists", (want, exists), presence);
        return;
    }
    if let Some(target) = &checks.symlink {
        let found = files.link(rel).map(|t| presenter.text(&t));
        if found.as_deref().ok() != Some(target.as_str()) {
            let actual = match found {
                Ok(other) => format!("a symlink to {other:?}"),
                Err(what) => what,
            };
            failures.push(Failure::new(
                step,
                "symlink",
                format!("a symlink to {target:?}"),
                actual,
            ));
        }
    }
    let needs_content = checks.equals.is_some()
        || checks.contains.is_some()
        || checks.not_contains.is_some()
        || checks.matches.is_some()
        || checks.bom.is_some()
        || checks.eol.is_some()
        || checks.bytes_base64.is_some()
        || checks.sha256.is_some();
    if needs_content {
        match files.read(rel) {
            Ok(bytes) => {
                let text = presenter.text(&String::from_utf8_lossy(&bytes));
                content_of_file_checks(failures, step, (&bytes, &text), checks, regex);
                let exact = [
                    (
                        "bytes_base64",
                        want_bytes.and_then(|w| exact::bytes(w, &bytes)),
                    ),
                    (
                        "sha256",
                        checks
                            .sha256
                            .as_deref()
                            .and_then(|w| exact::sha256(w, &bytes)),
                    ),
                ];
                for (check, miss) in exact {
                    if let Some((expected, actual)) = miss {
                        failures.push(Failure::new(step, check, expected, actual));
                    }
                }
            }
            Err(err) => {
                failures.push(Failure::new(
                    step,
                    "read",
                    "a readable file",
                    format!("cannot read it: {err}"),
                ));
                return;
            }
        }
    }
    if let Some(mode) = &checks.mode {
        mode_check(failures, step, files.mode(rel), mode);
    }
}

/// `equals`, `contains`, `not_contains`, `matches` on a file's text (as
/// presented), `bom` and `eol` on its bytes.
fn content_of_file_checks(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    (bytes, text): (&[u8], &str),
    checks: &FileChecks,
    regex: Option<&regex::Regex>,
) {
    if let Some(want) = &checks.equals
        && *want != text
    {
        failures.push(Failure::new(step, "equals", want.clone(), text));
    }
    substring_checks(
        failures,
        step,
        "content",
        text,
        (checks.contains.as_ref(), checks.not_contains.as_ref()),
        regex,
    );
    if let Some(want) = checks.bom {
        let has = bytes.starts_with(b"\xEF\xBB\xBF");
        flag_check(
            failures,
            step,
            "bom",
            (want, has),
            ("a UTF-8 BOM", "no BOM"),
        );
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

/// `mode`: the file's permission bits.
fn mode_check(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    found: Result<u32, String>,
    mode: &str,
) {
    match found {
        Ok(found) => {
            let got = format!("{:o}", found & 0o7777);
            let want = u32::from_str_radix(mode, 8)
                .map(|m| format!("{m:o}"))
                .unwrap_or_else(|_| mode.to_owned());
            if got != want {
                failures.push(Failure::new(step, "mode", want, got));
            }
        }
        Err(err) => failures.push(Failure::new(
            step,
            "mode",
            mode,
            format!("cannot stat it: {err}"),
        )),
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

    /// Issue 10, item 4: file checks read only regular files inside the
    /// workspace, never blocking, never more than the cap.
    #[test]
    fn file_checks_read_only_regular_files_inside_the_workspace() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let ws = base.join("ws");
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        std::fs::write(base.join("secret.txt"), "secret").unwrap();
        std::fs::write(ws.join("small.txt"), "1234").unwrap();
        std::fs::write(ws.join("big.txt"), "12345").unwrap();
        std::os::unix::fs::symlink("/dev/zero", ws.join("zero")).unwrap();
        let fifo =
            std::ffi::CString::new(ws.join("fifo").into_os_string().into_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let files = CheckedFiles {
            max: 4,
            ..CheckedFiles::new(&ws)
        };
        let outside = Err("the path leads outside the workspace".to_owned());
        let not_regular = Err("not a regular file (a pipe, socket or device)".to_owned());
        let abs_secret = base.join("secret.txt").display().to_string();
        let read: Vec<Result<Vec<u8>, String>> = [
            "small.txt",
            "big.txt",
            "../secret.txt",
            "sub/../../secret.txt",
            abs_secret.as_str(),
            "/etc/hostname",
            "zero",
            "fifo",
        ]
        .iter()
        .map(|rel| files.read(rel))
        .collect();
        assert_eq!(
            read,
            [
                Ok(b"1234".to_vec()),
                Err("it is larger than 4B, the most a file check reads".to_owned()),
                outside.clone(),
                outside.clone(),
                outside.clone(),
                outside.clone(),
                outside.clone(),
                not_regular,
            ]
        );
        assert!(files.exists("fifo"));
        assert!(!files.exists("../secret.txt"));
        assert_eq!(files.mode("small.txt").map(|m| m & 0o7000), Ok(0));
        assert_eq!(files.mode("../secret.txt"), outside.map(|_: Vec<u8>| 0));
    }

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
    fn truncation_facts_are_read_from_the_details() {
        let facts = json!({
            "truncated": true,
            "truncated_by": "lines",
            "total_lines": 3000,
            "total_bytes": 9000,
            "output_lines": 2000,
            "output_bytes": 6000,
            "last_line_partial": false,
            "first_line_exceeds_limit": false,
            "max_lines": 2000,
            "max_bytes": 51200
        });
        let result = ToolResult::ok(
            crate::tools::ToolOutput::text("cut").with_details(json!({ "truncation": facts })),
        );
        let read = truncation(&result).unwrap();
        assert_eq!(
            (read.truncated, read.truncated_by, read.total_lines),
            (true, Some(TruncatedBy::Lines), 3000)
        );
        assert_eq!(
            truncation(&ToolResult::ok(crate::tools::ToolOutput::text("whole"))),
            None
        );
        let mut failures = Vec::new();
        truncation_check(&mut failures, None, TruncatedExpect::Bytes, Some(read));
        assert_eq!(
            failures,
            [Failure::new(
                None,
                "truncated",
                "truncated by bytes",
                "truncated by lines"
            )]
        );
    }
}
