//! The checks of one call: its outcome, text, truncation, details,
//! images, updates, cost and snapshot.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::Value;

use crate::scenario::figures::priced_text;
use crate::scenario::focus;
use crate::scenario::images;
use crate::scenario::load::CallCheck;
use crate::scenario::model::CallExpect;
use crate::scenario::model::DetailCheck;
use crate::scenario::model::ErrorExpect;
use crate::scenario::model::ImageChecks;
use crate::scenario::model::ImageExpect;
use crate::scenario::model::ImagesExpect;
use crate::scenario::model::TruncatedExpect;
use crate::scenario::model::UpdatesExpect;
use crate::scenario::pointer;
use crate::scenario::snapshot;
use crate::scenario::updates::CallUpdates;
use crate::scenario::updates::MAX_KEPT_BYTES;
use crate::scenario::vars;
use crate::tools::Content;
use crate::tools::ToolResult;
use crate::tools::truncate::TruncatedBy;
use crate::tools::truncate::Truncation;
use crate::tools::truncate::count_lines;

use super::failure::CheckOutput;
use super::failure::Failure;
use super::failure::SnapshotOutcome;
use super::failure::either;
use super::failure::flag_check;
use super::failure::substring_checks;
use super::input::CheckInput;
use super::input::expanded_regex;
use super::input::variables;

/// `cancelled`: whether the run's cancellation reached the call.
pub(super) fn cancelled_check(
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

/// The truncation facts a tool put in `details.truncation`, if any.
pub fn truncation(result: &ToolResult) -> Option<Truncation> {
    Truncation::from_details(result.details.as_ref()?)
}

pub(super) fn truncated_by(by: TruncatedBy) -> &'static str {
    match by {
        TruncatedBy::Lines => "lines",
        TruncatedBy::Bytes => "bytes",
    }
}

pub(super) fn call_checks(
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
pub(super) fn truncation_check(
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
                    crate::tools::truncate::format_size(MAX_KEPT_BYTES)
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
