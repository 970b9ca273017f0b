//! What a check reports: [`Failure`]s and the snapshots compared, and the
//! wording the parts share (yes-or-no checks, substrings and regexes on a
//! text).

use std::sync::Arc;

use regex::Regex;
use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;

use crate::judge::deadline::Deadline;
use crate::judge::focus;
use crate::judge::focus::Focus;

use super::actual::Actual;
use super::actual::ActualCut;
use super::actual::Checked;
use super::kind::CheckKind;

/// One failed check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Failure {
    /// Where: `step 2 (grep)`, `files: src/a.ts`, `loop contract` …
    pub step: Option<String>,
    /// Which check: `contains`, `stats.retries` …
    pub check: CheckKind,
    /// What was expected.
    pub expected: String,
    /// What happened: at most [`super::MAX_ACTUAL_BYTES`] (a longer text
    /// keeps its beginning and end around a line saying what is left
    /// out), shared by the failures on one text.
    pub actual: Arc<str>,
    /// Only when `actual` is cut: the whole text it was cut from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual_cut: Option<ActualCut>,
    /// For a long `actual`: the lines to show first, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<Focus>,
}

impl std::fmt::Display for Failure {
    /// `step 2 (grep): contains: expected …; got …`, as one line per
    /// failure for people; the reports word it in full.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(step) = &self.step {
            write!(f, "{step}: ")?;
        }
        write!(
            f,
            "{}: expected {}; got {}",
            self.check, self.expected, self.actual
        )
    }
}

impl Failure {
    /// A failure at `step` (`None`: the whole scenario); `actual` is kept
    /// within [`super::MAX_ACTUAL_BYTES`].
    pub fn new(
        step: Option<&str>,
        check: impl Into<CheckKind>,
        expected: impl Into<String>,
        actual: impl Into<Actual>,
    ) -> Self {
        let actual = actual.into();
        Self {
            step: step.map(str::to_owned),
            check: check.into(),
            expected: expected.into(),
            actual: actual.text,
            actual_cut: actual.cut,
            focus: None,
        }
    }

    /// The failure with the lines of `actual` to show first.
    pub fn with_focus(mut self, focus: Option<Focus>) -> Self {
        self.focus = focus;
        self
    }

    /// The failure with its `actual` text rewritten by `change` (its
    /// paths presented, say), kept within the bound again. What a cut
    /// left out stays said.
    pub fn map_actual(mut self, change: impl FnOnce(&str) -> String) -> Self {
        let actual = Actual::from(change(&self.actual));
        self.actual = actual.text;
        self.actual_cut = actual.cut.or(self.actual_cut);
        self
    }

    /// A failure on a checked text: its shared [`Actual`], and the focus
    /// found in the whole text, which keeps its lines when the text is cut.
    pub(super) fn on_text(
        step: Option<&str>,
        check: CheckKind,
        expected: String,
        checked: &Checked<'_>,
        focus: Option<Focus>,
    ) -> Self {
        let failure = Self::new(step, check, expected, checked.actual());
        let cut = failure.actual_cut.is_some();
        failure.with_focus(focus.map(|f| {
            if cut {
                f.keeping_lines(checked.text())
            } else {
                f
            }
        }))
    }
}

/// A snapshot compared during the checks.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SnapshotOutcome {
    /// The key in the snapshot file.
    pub key: String,
    /// The value this run produced.
    pub value: Value,
    /// Whether it equals the stored one.
    pub matched: bool,
}

/// What the checks found.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct CheckOutput {
    /// Failed checks, in scenario order.
    pub failures: Vec<Failure>,
    /// Snapshots compared (to be written when new or changed).
    pub snapshots: Vec<SnapshotOutcome>,
}

/// `yes` or `no`: how a yes-or-no check words each side.
pub(super) fn either(flag: bool, yes: &'static str, no: &'static str) -> &'static str {
    if flag { yes } else { no }
}

/// A yes-or-no check: fails when `got` is not `want`, each side worded by
/// [`either`].
pub(super) fn flag_check(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    check: CheckKind,
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

/// `contains` on a text: each needle is in it; `noun` names the text in
/// the expectation (`text` of a result, `content` of a file). Stops when
/// `deadline` passes (the caller says so).
pub(super) fn contains_check(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    text: (&str, &Checked<'_>),
    needles: &[String],
    deadline: &Deadline,
) {
    needles_check(failures, step, text, needles, deadline, false);
}

/// `not_contains` on a text: no needle is in it.
pub(super) fn not_contains_check(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    text: (&str, &Checked<'_>),
    needles: &[String],
    deadline: &Deadline,
) {
    needles_check(failures, step, text, needles, deadline, true);
}

/// One failure for each needle that is in the text when `refused`, or
/// missing from it when not: the focus is the occurrence, or where the
/// needle nearly is.
fn needles_check(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    (noun, checked): (&str, &Checked<'_>),
    needles: &[String],
    deadline: &Deadline,
    refused: bool,
) {
    let text = checked.text();
    for needle in needles {
        if deadline.passed() {
            return;
        }
        if focus::occurs(text, needle) != refused {
            continue;
        }
        let (kind, expected, focus) = if refused {
            let focus = focus::for_occurrence(text, needle);
            (
                CheckKind::NotContains,
                format!("{noun} without {needle:?}"),
                focus,
            )
        } else {
            let Ok(focus) = focus::for_contains(text, needle, deadline) else {
                return;
            };
            (
                CheckKind::Contains,
                format!("{noun} containing {needle:?}"),
                focus,
            )
        };
        failures.push(Failure::on_text(step, kind, expected, checked, focus));
    }
}

/// `matches` on a text.
pub(super) fn matches_check(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    (noun, checked): (&str, &Checked<'_>),
    regex: &Regex,
) {
    let text = checked.text();
    if !regex.is_match(text) {
        failures.push(Failure::on_text(
            step,
            CheckKind::Matches,
            format!("{noun} matching /{}/", regex.as_str()),
            checked,
            focus::for_regex(text),
        ));
    }
}
