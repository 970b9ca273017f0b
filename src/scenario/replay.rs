//! Replayed sessions in the scenario format (docs/replay.md): the
//! `recorded:` result kept beside a call, the `replay:` settings of a
//! scenario and of `harness.yaml`, the `git_checkout` workspace kind, and
//! what the loader makes of them ([`ReplayPlan`]). An imported scenario is
//! one whose calls carry `recorded:`; the run compares each result with it
//! (`judge::drift`).

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
pub(crate) struct RecordedSpec {
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
    /// (`harness import --sync-reads`); for a read with an `answer`, the
    /// answer's text, and for an edit, its `original`.
    pub sync: Option<bool>,
    /// The tool's answer without the recording client's presentation (its
    /// line numbers, reminders, wording), as the importer read it: a
    /// result whose text differs but whose answer agrees is
    /// `presentation`, not `differs` (docs/replay.md).
    pub answer: Option<AnswerSpec>,
    /// The file's whole text before this call (an edit's `originalFile`),
    /// as the client recorded it; with `sync: true` it is written into the
    /// file before the call.
    pub original: Option<TextSpec>,
    /// The command exited non-zero and the client did not count it as an
    /// error, reading the exit as this (Claude Code's
    /// `returnCodeInterpretation`, such as `No matches found` for `grep`):
    /// a bash result today that is only a non-zero exit counts as no error
    /// when it is compared.
    pub nonzero_exit: Option<String>,
}

/// `recorded.answer`: a form, and its text (inline or in a file), or none
/// when it is the recorded `text` itself.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = text_or_file)]
pub(crate) struct AnswerSpec {
    /// What the answer is.
    pub form: AnswerForm,
    /// Its text (the recorded `text` when neither this nor `file` is given).
    pub text: Option<String>,
    /// Instead of `text`: a file holding it, relative to the scenario file.
    pub file: Option<String>,
}

/// A text, inline or in a file beside the scenario.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = text_or_file)]
pub(crate) struct TextSpec {
    /// The text.
    pub text: Option<String>,
    /// Instead of `text`: a file holding it, relative to the scenario file.
    pub file: Option<String>,
}

/// The form of a recorded answer, and how today's result is put in it.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, PartialOrd, Ord,
)]
#[serde(rename_all = "lowercase")]
pub(crate) enum AnswerForm {
    /// The tool's text itself: a read's lines, a command's output
    /// (trailing newlines and today's notices and exit status left out).
    #[default]
    Text,
    /// A change that succeeded.
    Done,
    /// Workspace-relative paths, sorted, one a line.
    Files,
    /// Matching lines as `path:text`, sorted (context lines left out).
    Matches,
    /// Matching lines per file as `path:N`, sorted.
    Counts,
    /// A directory's entries, directories with `/`, sorted.
    Entries,
    /// A failure, by its kind ([`FailureKind`]).
    Failure,
}

impl AnswerForm {
    /// Its name in the scenario (`recorded.answer.form`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Done => "done",
            Self::Files => "files",
            Self::Matches => "matches",
            Self::Counts => "counts",
            Self::Entries => "entries",
            Self::Failure => "failure",
        }
    }
}

/// The kinds of failure an answer of form `failure` names, the same for
/// every client: what went wrong, whatever the words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FailureKind {
    /// An edit's old text is not in the file.
    TextNotFound,
    /// An edit's old text is in the file more than once.
    TextNotUnique,
    /// An edit would change nothing.
    NoChange,
    /// The file does not exist.
    NoSuchFile,
    /// The path is a directory.
    IsADirectory,
}

impl FailureKind {
    /// Its words in `recorded.answer.text`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::TextNotFound => "text not found",
            Self::TextNotUnique => "text not unique",
            Self::NoChange => "no change",
            Self::NoSuchFile => "no such file",
            Self::IsADirectory => "is a directory",
        }
    }
}

/// A recorded answer, validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RecordedAnswer {
    /// Its form.
    pub form: AnswerForm,
    /// Its text (`None`: the recorded text).
    pub text: Option<RecordedText>,
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
pub(crate) enum Require {
    /// Every replayed call's `is_error` agrees with the recorded one
    /// (the default).
    #[default]
    Error,
    /// That, and every text is `same` or `paths`.
    Text,
    /// Nothing: the comparison is only reported.
    None,
}

/// `replay:` in a scenario.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReplaySpec {
    /// The recorded session's working directory: recorded texts are
    /// compared with it shown as `/workspace`.
    pub cwd: Option<String>,
    /// What must agree for the scenario to pass (default `error`).
    pub require: Option<Require>,
    /// Seconds this scenario may run (an imported session fits its
    /// length); overrides the suite's `timeout`, `--timeout` overrides it.
    #[schemars(range(max = crate::base::bounds::ONE_DAY_SECS), extend("exclusiveMinimum" = 0))]
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
pub(crate) struct SuiteReplaySpec {
    /// What must agree for imported scenarios to pass (default `error`).
    pub require: Option<Require>,
}

/// `workspace: { git_checkout: { repo, rev } }`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GitCheckoutSpec {
    /// The repository, relative to the scenario file (or absolute).
    #[schemars(length(min = 1))]
    pub repo: String,
    /// The revision to check out (a commit, tag or branch).
    #[schemars(length(min = 1))]
    pub rev: String,
}

/// The text of a recorded result: inline, or in a sidecar file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RecordedText {
    /// Written in the scenario.
    Inline(String),
    /// In the file `rel` below the directory `base` (the scenario's),
    /// read when the run compares, through a handle of `base`: a link
    /// that leads out of it is refused then too.
    File {
        /// The scenario's directory.
        base: PathBuf,
        /// The file, relative to it.
        rel: PathBuf,
    },
}

/// One recorded result, validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Recorded {
    /// Whether it was an error.
    pub is_error: bool,
    /// Its text.
    pub text: RecordedText,
    /// Images it held.
    pub images: usize,
    /// Write the text into the read file before the call.
    pub sync: bool,
    /// The tool's answer without the client's presentation.
    pub answer: Option<RecordedAnswer>,
    /// The file's text before the call.
    pub original: Option<RecordedText>,
    /// The client's reading of a non-zero exit it did not count as an
    /// error.
    pub nonzero_exit: Option<String>,
}

/// What the run needs to compare an imported scenario's results.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ReplayPlan {
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
pub(crate) const MAX_RECORDED_FILE_BYTES: u64 = 64 * 1024 * 1024;

#[cfg(test)]
mod tests {
    use super::AnswerForm;

    /// The importer writes `as_str`; the loader reads with serde: the two
    /// names agree for every form.
    #[test]
    fn each_form_is_written_as_it_is_read() {
        let forms = [
            AnswerForm::Text,
            AnswerForm::Done,
            AnswerForm::Files,
            AnswerForm::Matches,
            AnswerForm::Counts,
            AnswerForm::Entries,
            AnswerForm::Failure,
        ];
        let written: Vec<serde_json::Value> = forms.iter().map(|f| f.as_str().into()).collect();
        let read: Vec<AnswerForm> = written
            .iter()
            .map(|w| serde_json::from_value(w.clone()).unwrap())
            .collect();
        assert_eq!(read, forms);
    }
}
