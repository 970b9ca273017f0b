//! The drift of an imported session (docs/replay.md): each replayed call's
//! result compared with the one recorded beside it. Both texts are seen as
//! the model sees them: the current result is already presented (the
//! workspace is `/workspace`), and the recorded text goes through a
//! presenter that shows the recorded working directory as `/workspace`.
//! So `same` (identical text), `paths` (identical once the recorded
//! directory is shown as `/workspace`), `presentation` (the answers agree
//! once each side's presentation is taken off: the importer's `answer`
//! and today's result put in its form, [`super::presentation`]) and
//! `differs` do not depend on the machine or the temp dir.
//!
//! The comparison reads the finished transcript's call records: what the
//! model sent, what it read back, and the typed facts of the result (its
//! kind of failure, a command's exit), never the words of a message. A run
//! that timed out keeps the comparison of every call answered before it,
//! and counts the recorded calls it never reached as `not_replayed`.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;

use crate::agent::CallRecord;
use crate::agent::Presenter;
use crate::agent::TokenCounter;
use crate::scenario::replay::AnswerForm;
use crate::scenario::replay::FailureKind;
use crate::scenario::replay::MAX_RECORDED_FILE_BYTES;
use crate::scenario::replay::Recorded;
use crate::scenario::replay::RecordedText;
use crate::scenario::replay::ReplayPlan;
use crate::scenario::replay::Require;
use crate::tools::BashDetails;
use crate::tools::CallArguments;
use crate::tools::EditRule;
use crate::tools::ErrorClass;
use crate::tools::ErrorKind;
use crate::tools::Facts;
use crate::tools::facts_of;

use super::failure::Failure;
use super::presentation;

/// How a current result's text compares with the recorded one.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Agreement {
    /// Identical text.
    Same,
    /// Identical once the recorded working directory is shown as
    /// `/workspace`.
    Paths,
    /// The tool's answer agrees once the recording client's presentation
    /// and ours are taken off (line numbers, reminders, wording, order).
    Presentation,
    /// Different.
    Differs,
}

impl Agreement {
    /// `same`, `paths` or `differs`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Same => "same",
            Self::Paths => "paths",
            Self::Presentation => "presentation",
            Self::Differs => "differs",
        }
    }
}

/// Counts of a set of replayed calls.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReplayCounts {
    /// Calls replayed and compared (they had a recorded result).
    pub calls: u64,
    /// Calls whose `is_error` agreed with the recorded one.
    pub error_agree: u64,
    /// Calls whose `is_error` did not.
    pub error_disagree: u64,
    /// Texts identical.
    pub same: u64,
    /// Texts identical after mapping the workspace path.
    pub paths: u64,
    /// Texts that differ only in presentation: the answers agree.
    #[serde(default)]
    pub presentation: u64,
    /// Texts different.
    pub differs: u64,
    /// Tokens of the recorded result texts.
    pub recorded_tokens: u64,
    /// Tokens of the current result texts.
    pub current_tokens: u64,
}

impl ReplayCounts {
    fn add(&mut self, other: &Self) {
        self.calls += other.calls;
        self.error_agree += other.error_agree;
        self.error_disagree += other.error_disagree;
        self.same += other.same;
        self.paths += other.paths;
        self.presentation += other.presentation;
        self.differs += other.differs;
        self.recorded_tokens += other.recorded_tokens;
        self.current_tokens += other.current_tokens;
    }

    /// Current over recorded result tokens, to 4 decimals (`None` when
    /// nothing was recorded).
    pub fn token_ratio(&self) -> Option<f64> {
        (self.recorded_tokens > 0).then(|| {
            let ratio = self.current_tokens as f64 / self.recorded_tokens as f64;
            (ratio * 10_000.0).round() / 10_000.0
        })
    }
}

/// The `replay` section of a scenario in `run.json` (and, summed, of the
/// run).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReplayStats {
    /// Every compared call.
    #[serde(flatten)]
    pub counts: ReplayCounts,
    /// Calls of the session left out at import (never answered).
    pub skipped: u64,
    /// Scripted calls with no recorded result (not compared).
    pub unrecorded: u64,
    /// Calls with a recorded result that the run never reached (it timed
    /// out, was interrupted or stopped early): not compared.
    #[serde(default)]
    pub not_replayed: u64,
    /// Files written with a recorded read's text before the read
    /// (`--sync-reads`).
    pub synced_files: u64,
    /// `current_tokens / recorded_tokens`, to 4 decimals.
    pub token_ratio: Option<f64>,
    /// The same counts per tool, by name.
    pub tools: BTreeMap<String, ReplayCounts>,
}

impl ReplayStats {
    /// Several scenarios' sections summed (`None` when none has one).
    pub fn sum<'a>(all: impl IntoIterator<Item = &'a ReplayStats>) -> Option<ReplayStats> {
        let mut total: Option<ReplayStats> = None;
        for stats in all {
            let t = total.get_or_insert_with(ReplayStats::default);
            t.counts.add(&stats.counts);
            t.skipped += stats.skipped;
            t.unrecorded += stats.unrecorded;
            t.not_replayed += stats.not_replayed;
            t.synced_files += stats.synced_files;
            for (tool, counts) in &stats.tools {
                t.tools.entry(tool.clone()).or_default().add(counts);
            }
        }
        if let Some(t) = &mut total {
            t.token_ratio = t.counts.token_ratio();
        }
        total
    }
}

/// One compared call, for its `calls[]` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CallReplay {
    /// Tokens of the recorded text.
    pub recorded_tokens: u64,
    /// How the texts compare.
    pub agreement: Agreement,
    /// Whether the recorded result was an error.
    pub recorded_is_error: bool,
}

/// What the comparison found.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ReplayResult {
    /// The scenario's `replay` section.
    pub stats: ReplayStats,
    /// Per call id.
    pub calls: BTreeMap<String, CallReplay>,
    /// Disagreements that fail the scenario under its `require`.
    pub failures: Vec<Failure>,
}

/// The recorded text of `recorded` (a sidecar is read, at most
/// [`MAX_RECORDED_FILE_BYTES`]).
pub(crate) fn recorded_text(recorded: &Recorded) -> Result<String, String> {
    text_of(&recorded.text)
}

/// A recorded text: inline, or a sidecar read through a handle of its
/// scenario's directory (a link that leads out of it is refused by the
/// kernel), a regular file of at most [`MAX_RECORDED_FILE_BYTES`].
pub(crate) fn text_of(text: &RecordedText) -> Result<String, String> {
    match text {
        RecordedText::Inline(text) => Ok(text.clone()),
        RecordedText::File { base, rel } => read_sidecar(base, rel),
    }
}

fn read_sidecar(base: &Path, rel: &Path) -> Result<String, String> {
    use cap_std::fs::OpenOptionsExt as _;
    let path = base.join(rel);
    let cannot =
        |err: std::io::Error| format!("cannot read the recorded text {}: {err}", path.display());
    let dir =
        cap_std::fs::Dir::open_ambient_dir(base, cap_std::ambient_authority()).map_err(cannot)?;
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true).custom_flags(libc::O_NONBLOCK);
    let file = dir.open_with(rel, &options).map_err(cannot)?;
    if !file.metadata().map_err(cannot)?.is_file() {
        return Err(format!(
            "the recorded text {} is not a regular file",
            path.display()
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_RECORDED_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| format!("cannot read the recorded text {}: {err}", path.display()))?;
    if bytes.len() as u64 > MAX_RECORDED_FILE_BYTES {
        return Err(format!(
            "the recorded text {} is larger than {MAX_RECORDED_FILE_BYTES} bytes",
            path.display()
        ));
    }
    String::from_utf8(bytes)
        .map_err(|_| format!("the recorded text {} is not UTF-8", path.display()))
}

/// The comparison of an imported scenario's results with the recorded
/// ones, made call by call in the order the transcript holds them.
pub(crate) struct Drift<'a> {
    plan: &'a ReplayPlan,
    tokens: &'a dyn TokenCounter,
    labels: &'a BTreeMap<String, String>,
    /// The recorded texts as the model would see them today.
    recorded_view: Presenter,
    /// How the model sees the workspace.
    workspace: String,
    /// Recorded calls that got a result.
    reached: u64,
    result: ReplayResult,
}

impl<'a> Drift<'a> {
    /// A comparison for `plan`; `workspace_name` is how the model sees the
    /// workspace, `labels` name calls in failures.
    pub(crate) fn new(
        plan: &'a ReplayPlan,
        tokens: &'a dyn TokenCounter,
        workspace_name: &str,
        labels: &'a BTreeMap<String, String>,
    ) -> Self {
        let recorded_view = match &plan.cwd {
            Some(cwd) => Presenter::default().with_root(workspace_name, [cwd]),
            None => Presenter::default(),
        };
        Self {
            plan,
            tokens,
            labels,
            recorded_view,
            workspace: workspace_name.to_owned(),
            reached: 0,
            result: ReplayResult::default(),
        }
    }

    /// One answered call, in the order the results were appended to the
    /// conversation: its result (presented, as the model read it) against
    /// its recorded one.
    pub(crate) fn call(&mut self, record: &CallRecord) {
        let args = match &record.call.arguments {
            CallArguments::Json(args) => Some(args),
            CallArguments::Text(_) => None,
        };
        let facts = facts_of(&record.call.name, &record.result);
        let now = Today {
            text: record.result.text(),
            is_error: record.result.is_error,
            failure: failure_kind(&facts),
            nonzero_exit: exited_nonzero(&facts),
            tokens: record.result_tokens,
        };
        self.compare(&record.call.id, &record.call.name, args, now);
    }

    /// One call's result (`now`) against its recorded one.
    fn compare(&mut self, id: &str, tool: &str, args: Option<&Value>, now: Today) {
        let Today {
            text: now,
            is_error,
            failure,
            nonzero_exit,
            tokens: current_tokens,
        } = now;
        let plan = self.plan;
        let Some(recorded) = plan.recorded.get(id) else {
            self.result.stats.unrecorded += 1;
            return;
        };
        self.reached += 1;
        // A non-zero exit the client did not count as an error (`grep`
        // finding nothing) is counted as it counted it.
        let is_error = is_error
            && !(tool == "bash"
                && !recorded.is_error
                && recorded.nonzero_exit.is_some()
                && nonzero_exit);
        let label = self
            .labels
            .get(id)
            .cloned()
            .unwrap_or_else(|| format!("call {id}"));
        let then = match recorded_text(recorded) {
            Ok(text) => text,
            Err(err) => {
                self.result.failures.push(Failure::new(
                    Some(&label),
                    "replay",
                    "a readable recorded text",
                    err,
                ));
                return;
            }
        };
        let agreement = if then == now {
            Agreement::Same
        } else if self.recorded_view.text(&then) == now {
            Agreement::Paths
        } else if self.answers_agree(tool, args, recorded, (&now, is_error, failure), &then) {
            Agreement::Presentation
        } else {
            Agreement::Differs
        };
        let result = &mut self.result;
        let error_agrees = recorded.is_error == is_error;
        let counts = ReplayCounts {
            calls: 1,
            error_agree: u64::from(error_agrees),
            error_disagree: u64::from(!error_agrees),
            same: u64::from(agreement == Agreement::Same),
            paths: u64::from(agreement == Agreement::Paths),
            presentation: u64::from(agreement == Agreement::Presentation),
            differs: u64::from(agreement == Agreement::Differs),
            recorded_tokens: self.tokens.count(&then),
            current_tokens,
        };
        let word = |e: bool| if e { "an error" } else { "not an error" };
        if plan.require != Require::None && !error_agrees {
            result.failures.push(Failure::new(
                Some(&label),
                "replay.is_error",
                format!("{} (as recorded)", word(recorded.is_error)),
                format!("{}: {}", word(is_error), now),
            ));
        } else if plan.require == Require::Text && agreement == Agreement::Differs {
            result.failures.push(Failure::new(
                Some(&label),
                "replay.text",
                self.recorded_view.text(&then),
                now,
            ));
        }
        result.calls.insert(
            id.to_owned(),
            CallReplay {
                recorded_tokens: counts.recorded_tokens,
                agreement,
                recorded_is_error: recorded.is_error,
            },
        );
        result
            .stats
            .tools
            .entry(tool.to_owned())
            .or_default()
            .add(&counts);
        result.stats.counts.add(&counts);
    }

    /// Whether the recorded answer of call `id` (when the importer gave
    /// one, and both results agree on being errors) agrees with today's
    /// result (`now`) put in its form; `then` is the recorded text, the
    /// answer when it has no text of its own.
    fn answers_agree(
        &self,
        tool: &str,
        args: Option<&Value>,
        recorded: &Recorded,
        (now, is_error, failure): (&str, bool, Option<FailureKind>),
        then: &str,
    ) -> bool {
        let Some(answer) = &recorded.answer else {
            return false;
        };
        if recorded.is_error != is_error {
            return false;
        }
        let recorded_answer = match &answer.text {
            // A change that succeeded has nothing more to say.
            _ if answer.form == AnswerForm::Done => String::new(),
            Some(text) => match text_of(text) {
                Ok(text) => text,
                Err(_) => return false,
            },
            None => then.to_owned(),
        };
        let Some(ours) = presentation::answer(
            answer.form,
            tool,
            args,
            (now, is_error, failure),
            &self.workspace,
        ) else {
            return false;
        };
        presentation::agree(answer.form, &ours, &recorded_answer)
            || presentation::agree(
                answer.form,
                &ours,
                &self.recorded_view.text(&recorded_answer),
            )
    }

    /// What was compared; `synced` is how many files `--sync-reads` wrote.
    /// Recorded calls that got no result are `not_replayed`.
    pub(crate) fn finish(self, synced: u64) -> ReplayResult {
        let mut result = self.result;
        result.stats.skipped = self.plan.skipped;
        result.stats.synced_files = synced;
        result.stats.not_replayed = (self.plan.recorded.len() as u64).saturating_sub(self.reached);
        result.stats.token_ratio = result.stats.counts.token_ratio();
        result
    }
}

/// What a result of today says, for the comparison.
struct Today {
    /// Its text, presented.
    text: String,
    /// Whether it is an error.
    is_error: bool,
    /// Its kind of failure, as an answer of form `failure` names it.
    failure: Option<FailureKind>,
    /// A command that ran and exited with a code other than 0 (not a
    /// timeout, a signal or a cancellation).
    nonzero_exit: bool,
    /// What it cost, as the loop priced it.
    tokens: u64,
}

/// The kind of failure a result's facts say, in the words every client's
/// answers share.
fn failure_kind(facts: &Facts) -> Option<FailureKind> {
    Some(match facts.error? {
        ErrorKind::Edit(EditRule::NotFound) => FailureKind::TextNotFound,
        ErrorKind::Edit(EditRule::Duplicate) => FailureKind::TextNotUnique,
        ErrorKind::Edit(EditRule::NoChange) => FailureKind::NoChange,
        ErrorKind::Io(ErrorClass::NotFound) => FailureKind::NoSuchFile,
        ErrorKind::Io(ErrorClass::IsADirectory) => FailureKind::IsADirectory,
        _ => return None,
    })
}

/// Whether a bash result is a command that exited with a code other than
/// 0 (not one stopped by a timeout, a signal or a cancellation).
fn exited_nonzero(facts: &Facts) -> bool {
    facts.details::<BashDetails>().is_some_and(|d| {
        d.exit_code.is_some_and(|c| c != 0) && !d.timed_out && !d.cancelled && d.signal.is_none()
    })
}

/// The drift of an imported scenario's answered `calls` (all of them, or
/// those before a timeout) from the recorded results of `plan`; `synced`
/// is how many files `--sync-reads` wrote.
pub(crate) fn drift(
    plan: &ReplayPlan,
    labels: &BTreeMap<String, String>,
    calls: &[CallRecord],
    (tokens, workspace_name): (&dyn TokenCounter, &str),
    synced: u64,
) -> ReplayResult {
    let mut drift = Drift::new(plan, tokens, workspace_name, labels);
    for record in calls {
        drift.call(record);
    }
    drift.finish(synced)
}
