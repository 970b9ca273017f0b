//! The checks of one call: its outcome, text, truncation, details,
//! images, updates, cost, snapshot and cancellation, each judged in the
//! order the call's [`CallCheck`] lists them.

use serde_json::Value;

use crate::agent::CallRecord;
use crate::agent::MAX_KEPT_UPDATE_BYTES;
use crate::agent::Streamed;
use crate::judge::deadline::Deadline;
use crate::judge::focus;
use crate::judge::images;
use crate::judge::pointer;
use crate::scenario::detail_spec::ImageChecks;
use crate::scenario::expect::CallCheck;
use crate::scenario::expect::CallExpectation;
use crate::scenario::expect::Pattern;
use crate::scenario::model::TruncatedExpect;
use crate::scenario::snapshot;
use crate::tools::Content;
use crate::tools::ToolResult;
use crate::tools::facts_of;
use crate::tools::truncate::TruncatedBy;
use crate::tools::truncate::Truncation;
use crate::tools::truncate::count_lines;

use super::actual::Checked;
use super::expand;
use super::failure::CheckOutput;
use super::failure::Failure;
use super::failure::SnapshotOutcome;
use super::failure::contains_check;
use super::failure::either;
use super::failure::flag_check;
use super::failure::matches_check;
use super::failure::not_contains_check;
use super::input::CheckInput;
use super::input::variables;
use super::kind::CheckKind;
use super::kind::ImageBlock;

/// Judges one call's result (and how it ended): each of its checks, in
/// order, after its `${var}` are expanded with the call's variables.
pub(super) fn call_checks(
    input: &CheckInput<'_>,
    id: &str,
    check: &CallCheck,
    record: &CallRecord,
    out: &mut CheckOutput,
) {
    let vars = variables(input, input.transcript.model.call_vars.get(id));
    let checks = expand::call_checks(check, &vars, &mut out.failures);
    let step = Some(check.label.as_str());
    let result = &record.result;
    let text = result.text();
    let checked = Checked::new(&text);
    let deadline = &input.deadline;
    for expectation in checks.iter() {
        if deadline.passed() {
            return;
        }
        let failures = &mut out.failures;
        match expectation {
            CallExpectation::Ok(_)
            | CallExpectation::Error(_)
            | CallExpectation::ErrorMatches(_) => {
                outcome_check(failures, step, expectation, result, &checked);
            }
            CallExpectation::Contains(needles) => {
                contains_check(failures, step, ("text", &checked), needles, deadline);
            }
            CallExpectation::NotContains(needles) => {
                not_contains_check(failures, step, ("text", &checked), needles, deadline);
            }
            CallExpectation::Matches(pattern) => {
                if let Some(regex) = &pattern.regex {
                    matches_check(failures, step, ("text", &checked), regex);
                }
            }
            CallExpectation::Equals(want) => {
                if *want != text {
                    failures.push(Failure::new(
                        step,
                        CheckKind::Equals,
                        want.clone(),
                        checked.actual(),
                    ));
                }
            }
            CallExpectation::Lines(want) => {
                let got = count_lines(&text);
                if got != *want {
                    failures.push(Failure::new(
                        step,
                        CheckKind::Lines,
                        format!("{want} lines"),
                        format!("{got} lines"),
                    ));
                }
            }
            CallExpectation::Truncated(want) => {
                truncation_check(failures, step, *want, truncation(&record.call.name, result));
            }
            CallExpectation::Details(want) => details_check(failures, step, want, result),
            CallExpectation::DetailsAt { pointer, check } => {
                for (matcher, expected, actual) in
                    pointer::misses(result.details.as_ref(), pointer, check)
                {
                    let kind = CheckKind::DetailsAt {
                        pointer: pointer.clone(),
                        matcher: matcher.to_owned(),
                    };
                    failures.push(Failure::new(step, kind, expected, actual));
                }
            }
            CallExpectation::HasImage(want) => {
                let has = result
                    .content
                    .iter()
                    .any(|c| matches!(c, Content::Image { .. }));
                flag_check(
                    failures,
                    step,
                    CheckKind::Image,
                    (*want, has),
                    ("an image block", "no image block"),
                );
            }
            CallExpectation::MaxTokens(max) => {
                let got = record.result_tokens;
                if got > *max {
                    failures.push(Failure::new(
                        step,
                        CheckKind::MaxTokens,
                        format!("at most {max} tokens ({})", input.tokens.name()),
                        format!("{got} tokens"),
                    ));
                }
            }
            CallExpectation::EachImage(want) => each_image_check(failures, step, want, result),
            CallExpectation::Images { count, each } => {
                images_check(failures, step, (*count, each), result);
            }
            CallExpectation::UpdatesMin(_)
            | CallExpectation::UpdatesMax(_)
            | CallExpectation::UpdatesContains(_)
            | CallExpectation::UpdatesLastContains(_) => {
                updates_check(failures, step, expectation, &record.updates, deadline);
            }
            CallExpectation::Snapshot => snapshot_check(input, id, step, result, out),
            CallExpectation::Cancelled(want) => cancelled_check(failures, step, *want, record),
        }
    }
}

/// `cancelled`: whether the run's cancellation reached the call.
fn cancelled_check(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    want: bool,
    record: &CallRecord,
) {
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
        step,
        CheckKind::Cancelled,
        state(want),
        format!("{}: {}", state(record.cancelled), record.result.text()),
    ));
}

/// `details`: the result's details hold these (a subset).
fn details_check(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    want: &Value,
    result: &ToolResult,
) {
    let actual = result.details.clone().unwrap_or(Value::Null);
    if let Some(path) = subset_mismatch(want, &actual, String::new()) {
        failures.push(Failure::new(
            step,
            CheckKind::Details,
            format!(
                "details containing {want} (first difference at {})",
                if path.is_empty() { "/" } else { &path }
            ),
            actual.to_string(),
        ));
    }
}

/// The truncation facts of a result of `tool` (the typed facts of its
/// details, `details.truncation`), if its output was cut.
pub(crate) fn truncation(tool: &str, result: &ToolResult) -> Option<Truncation> {
    facts_of(tool, result).truncation().cloned()
}

pub(super) fn truncated_by(by: TruncatedBy) -> &'static str {
    match by {
        TruncatedBy::Lines => "lines",
        TruncatedBy::Bytes => "bytes",
    }
}

/// `ok`, `error` and `error: REGEX`: whether the result is an error (and
/// what it says).
fn outcome_check(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    expectation: &CallExpectation,
    result: &ToolResult,
    checked: &Checked<'_>,
) {
    let text = checked.text();
    let state = |is_error: bool| either(is_error, "an error result", "a successful result");
    let actual = || format!("{}: {text}", state(result.is_error));
    match expectation {
        CallExpectation::Ok(ok) if *ok == result.is_error => {
            failures.push(Failure::new(step, CheckKind::Ok, state(!ok), actual()));
        }
        CallExpectation::Error(want) if *want != result.is_error => {
            failures.push(Failure::new(step, CheckKind::Error, state(*want), actual()));
        }
        CallExpectation::ErrorMatches(Pattern {
            text: pattern,
            regex,
        }) => {
            if !result.is_error {
                failures.push(Failure::new(
                    step,
                    CheckKind::Error,
                    format!("an error result matching /{pattern}/"),
                    actual(),
                ));
            } else if let Some(regex) = regex
                && !regex.is_match(text)
            {
                failures.push(Failure::on_text(
                    step,
                    CheckKind::Error,
                    format!("an error text matching /{pattern}/"),
                    checked,
                    focus::for_regex(text),
                ));
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
    failures.push(Failure::new(step, CheckKind::Truncated, expected, actual));
}

/// The failures of image block `i` of `blocks` against `want`, each named
/// after the block (`image width`, `images[0] height`).
fn image_block_check(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    (blocks, i, block): (&[images::Block], usize, ImageBlock),
    want: &ImageChecks,
) {
    let Some(found) = blocks.get(i) else { return };
    for (what, expected, actual) in images::misses(found, want) {
        let kind = CheckKind::ImageBlock {
            block,
            what: what.to_owned(),
        };
        failures.push(Failure::new(step, kind, expected, actual));
    }
}

/// `image: {checks}`: there is an image block, and every one passes.
fn each_image_check(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    want: &ImageChecks,
    result: &ToolResult,
) {
    let blocks = images::blocks(&result.content);
    if blocks.is_empty() {
        failures.push(Failure::new(
            step,
            CheckKind::Image,
            "an image block",
            "no image block",
        ));
    }
    for i in 0..blocks.len() {
        let block = if blocks.len() == 1 {
            ImageBlock::Only
        } else {
            ImageBlock::Nth(i + 1)
        };
        image_block_check(failures, step, (&blocks, i, block), want);
    }
}

/// `images`: how many image blocks, and each one's checks in order.
fn images_check(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    (count, each): (usize, &[ImageChecks]),
    result: &ToolResult,
) {
    let blocks = images::blocks(&result.content);
    if blocks.len() != count {
        failures.push(Failure::new(
            step,
            CheckKind::Images,
            blocks_text(count),
            blocks_text(blocks.len()),
        ));
    }
    for (i, want) in each.iter().enumerate() {
        image_block_check(failures, step, (&blocks, i, ImageBlock::Listed(i)), want);
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
fn updates_check(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    expectation: &CallExpectation,
    streamed: &Streamed,
    deadline: &Deadline,
) {
    let count = streamed.count;
    let last = streamed.last_text();
    match expectation {
        CallExpectation::UpdatesMin(min) if count < *min => {
            failures.push(Failure::new(
                step,
                CheckKind::Updates,
                format!("at least {min} updates"),
                updates_text(count),
            ));
        }
        CallExpectation::UpdatesMax(max) if count > *max => {
            failures.push(Failure::new(
                step,
                CheckKind::UpdatesMax,
                format!("at most {max} updates"),
                updates_text(count),
            ));
        }
        CallExpectation::UpdatesContains(needles) => {
            let kept = streamed.kept.as_slice();
            let unkept = streamed.unkept;
            for needle in needles {
                if !kept.iter().any(|t| focus::occurs(t, needle)) {
                    let note = if unkept > 0 {
                        format!(
                            " ({unkept} later updates were past the {} the checks keep)",
                            crate::tools::truncate::format_size(MAX_KEPT_UPDATE_BYTES)
                        )
                    } else {
                        String::new()
                    };
                    failures.push(Failure::new(
                        step,
                        CheckKind::UpdatesContains,
                        format!("an update containing {needle:?}"),
                        format!(
                            "{}, none containing it{note}; the last: {}",
                            updates_text(count),
                            shown_update(last.as_deref())
                        ),
                    ));
                }
            }
        }
        CallExpectation::UpdatesLastContains(needles) => {
            let last = last.as_deref();
            let checked = Checked::new(last.unwrap_or(""));
            for needle in needles {
                if deadline.passed() {
                    return;
                }
                if !last.is_some_and(|t| focus::occurs(t, needle)) {
                    let Ok(focus) = focus::for_contains(checked.text(), needle, deadline) else {
                        return;
                    };
                    let expected = format!("a last update containing {needle:?}");
                    let kind = CheckKind::UpdatesLastContains;
                    failures.push(match last {
                        Some(text) if !text.is_empty() => {
                            Failure::on_text(step, kind, expected, &checked, focus)
                        }
                        _ => Failure::new(step, kind, expected, shown_update(last)),
                    });
                }
            }
        }
        _ => {}
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
            CheckKind::Snapshot,
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
pub(super) fn subset_mismatch(want: &Value, actual: &Value, path: String) -> Option<String> {
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
