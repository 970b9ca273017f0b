//! What the checks look at ([`CheckInput`]), and the `${var}` an
//! expectation sees.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::agent::Presenter;
use crate::agent::TokenCounter;
use crate::agent::Transcript;
use crate::judge::deadline::Deadline;
use crate::judge::figures::Figures;
use crate::scenario::load::Scenario;
use crate::scenario::vars;

/// Everything the checks look at.
pub(crate) struct CheckInput<'a> {
    /// The scenario.
    pub scenario: &'a Scenario,
    /// What the run produced: every message, every call with its result
    /// and what it streamed, and what the scripted model did.
    pub transcript: &'a Transcript,
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
    /// When the scenario's time budget ends: the checks stop there.
    pub deadline: Deadline,
}

/// The variables an expectation sees: `bound` (those of its call, or the
/// final ones), with `${workspace}` the workspace as the model sees it.
pub(super) fn variables(input: &CheckInput<'_>, bound: Option<&vars::Vars>) -> vars::Vars {
    let mut all = bound.unwrap_or(&input.transcript.model.vars).clone();
    all.insert("workspace".to_owned(), input.workspace_name.to_owned());
    all
}
