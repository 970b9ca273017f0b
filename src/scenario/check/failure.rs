//! What a check reports: [`Failure`]s and the snapshots compared, and the
//! wording the parts share (yes-or-no checks, substrings and regexes on a
//! text).

use regex::Regex;
use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;

use crate::scenario::focus;
use crate::scenario::focus::Focus;

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
        check: impl Into<CheckKind>,
        expected: impl Into<String>,
        actual: impl Into<String>,
    ) -> Self {
        Self {
            step: step.map(str::to_owned),
            check: check.into(),
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
/// the expectation (`text` of a result, `content` of a file).
pub(super) fn contains_check(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    noun: &str,
    text: &str,
    needles: &[String],
) {
    for needle in needles {
        if !text.contains(needle.as_str()) {
            failures.push(
                Failure::new(
                    step,
                    CheckKind::Contains,
                    format!("{noun} containing {needle:?}"),
                    text,
                )
                .with_focus(focus::for_contains(text, needle)),
            );
        }
    }
}

/// `not_contains` on a text: no needle is in it.
pub(super) fn not_contains_check(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    noun: &str,
    text: &str,
    needles: &[String],
) {
    for needle in needles {
        if text.contains(needle.as_str()) {
            failures.push(
                Failure::new(
                    step,
                    CheckKind::NotContains,
                    format!("{noun} without {needle:?}"),
                    text,
                )
                .with_focus(focus::for_occurrence(text, needle)),
            );
        }
    }
}

/// `matches` on a text.
pub(super) fn matches_check(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    noun: &str,
    text: &str,
    regex: &Regex,
) {
    if !regex.is_match(text) {
        failures.push(
            Failure::new(
                step,
                CheckKind::Matches,
                format!("{noun} matching /{}/", regex.as_str()),
                text,
            )
            .with_focus(focus::for_regex(text)),
        );
    }
}
