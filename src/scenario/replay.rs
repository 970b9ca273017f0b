//! Replayed sessions in the scenario format (docs/replay.md): the
//! `recorded:` result kept beside a call, the `replay:` settings of a
//! scenario and of `harness.yaml`, the `git_checkout` workspace kind, and
//! what the loader makes of them ([`ReplayPlan`]). An imported scenario is
//! one whose calls carry `recorded:`; the run compares each result with it
//! (`run::replay`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

/// `recorded:` on a call: the result the model saw when the session was
/// recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = text_or_file)]
pub struct RecordedSpec {
    /// Whether the recorded result was an error.
    pub is_error: bool,
    /// The recorded result's text (its text blocks joined by newlines).
    pub text: Option<String>,
    /// Instead of `text`: a file holding it, relative to the scenario file
    /// (the importer writes large texts beside the scenario).
    pub file: Option<String>,
    /// The recorded result also held this many images.
    pub images: Option<usize>,
    /// Before this call (a whole-file read), write `text` into the file it
    /// reads, so the calls after it see what the model saw
    /// (`harness import --sync-reads`).
    pub sync: Option<bool>,
}

/// `text` or `file`, not both.
fn text_or_file(schema: &mut schemars::Schema) {
    schema.insert(
        "not".to_owned(),
        serde_json::json!({"required": ["text", "file"]}),
    );
}

/// What decides whether an imported scenario passes.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, PartialOrd, Ord,
)]
#[serde(rename_all = "lowercase")]
pub enum Require {
    /// Every replayed call's `is_error` agrees with the recorded one
    /// (the default).
    #[default]
    Error,
    /// That, and every text is `same` or `paths`.
    Text,
    /// Nothing: the comparison is only reported.
    None,
}

impl Require {
    /// `error`, `text` or `none`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Text => "text",
            Self::None => "none",
        }
    }
}

/// `replay:` in a scenario.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplaySpec {
    /// The recorded session's working directory: recorded texts are
    /// compared with it shown as `/workspace`.
    pub cwd: Option<String>,
    /// What must agree for the scenario to pass (default `error`).
    pub require: Option<Require>,
    /// Seconds this scenario may run (an imported session fits its
    /// length); overrides the suite's `timeout`, `--timeout` overrides it.
    #[schemars(range(max = 86400), extend("exclusiveMinimum" = 0))]
    pub timeout: Option<f64>,
    /// Calls of the session that were never answered (aborted), left out
    /// of the script and counted here.
    pub skipped: Option<u64>,
    /// Where the session came from (a file name), for people.
    pub source: Option<String>,
}

/// `replay:` in `harness.yaml`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuiteReplaySpec {
    /// What must agree for imported scenarios to pass (default `error`).
    pub require: Option<Require>,
}

/// `workspace: { git_checkout: { repo, rev } }`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitCheckoutSpec {
    /// The repository, relative to the scenario file (or absolute).
    #[schemars(length(min = 1))]
    pub repo: String,
    /// The revision to check out (a commit, tag or branch).
    #[schemars(length(min = 1))]
    pub rev: String,
}

/// The text of a recorded result: inline, or in a sidecar file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordedText {
    /// Written in the scenario.
    Inline(String),
    /// In this file (read when the run compares).
    File(PathBuf),
}

/// One recorded result, validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    /// Whether it was an error.
    pub is_error: bool,
    /// Its text.
    pub text: RecordedText,
    /// Images it held.
    pub images: usize,
    /// Write the text into the read file before the call.
    pub sync: bool,
}

/// What the run needs to compare an imported scenario's results.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReplayPlan {
    /// The recorded working directory, shown as `/workspace`.
    pub cwd: Option<String>,
    /// What must agree.
    pub require: Require,
    /// Calls left out at import.
    pub skipped: u64,
    /// Recorded results by call id.
    pub recorded: BTreeMap<String, Recorded>,
}

/// The largest sidecar file the run reads (64 MiB): larger means it was
/// not written by the importer.
pub const MAX_RECORDED_FILE_BYTES: u64 = 64 * 1024 * 1024;
