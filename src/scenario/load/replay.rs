//! An imported session's parts of a scenario (docs/replay.md): each
//! call's `recorded:` result, and the comparison plan of `replay:`.

use crate::scenario::replay::Recorded;
use crate::scenario::replay::RecordedAnswer;
use crate::scenario::replay::RecordedSpec;
use crate::scenario::replay::RecordedText;
use crate::scenario::replay::ReplayPlan;
use crate::scenario::replay::ReplaySpec;
use crate::scenario::yaml::Seg;

use super::suite::Suite;
use super::validator::Validator;
use super::validator::is_inside;
use super::validator::join;
use super::validator::k;

impl Validator<'_> {
    /// `recorded:` of call `id`: `text` or `file` (a sidecar beside the
    /// scenario, inside its directory), and the `answer` and `original`
    /// an importer found.
    pub(super) fn recorded_result(
        &mut self,
        id: &str,
        spec: &RecordedSpec,
        at: &[Seg],
        label: &str,
    ) {
        let at = join(at, [k("recorded")]);
        let Some(text) = self.text_or_file(&at, label, spec.text.as_ref(), spec.file.as_ref())
        else {
            return;
        };
        let text = text.unwrap_or_else(|| RecordedText::Inline(String::new()));
        let answer = match &spec.answer {
            Some(answer) => {
                let at = join(&at, [k("answer")]);
                let Some(text) =
                    self.text_or_file(&at, label, answer.text.as_ref(), answer.file.as_ref())
                else {
                    return;
                };
                Some(RecordedAnswer {
                    form: answer.form,
                    text,
                })
            }
            None => None,
        };
        let original = match &spec.original {
            Some(original) => {
                let at = join(&at, [k("original")]);
                match self.text_or_file(&at, label, original.text.as_ref(), original.file.as_ref())
                {
                    Some(Some(text)) => Some(text),
                    Some(None) => {
                        self.problem_at_key(&at, format!("{label}: give `text` or `file`"));
                        return;
                    }
                    None => return,
                }
            }
            None => None,
        };
        self.recorded.insert(
            id.to_owned(),
            Recorded {
                is_error: spec.is_error,
                text,
                images: spec.images.unwrap_or(0),
                sync: spec.sync.unwrap_or(false),
                answer,
                original,
                nonzero_exit: spec.nonzero_exit.clone(),
            },
        );
    }

    /// `text` or `file` at `at`: the text, or a sidecar file beside the
    /// scenario, inside its directory (a symlink that leads out of it is
    /// refused); `Some(None)` when neither is given, `None` after a
    /// problem.
    fn text_or_file(
        &mut self,
        at: &[Seg],
        label: &str,
        text: Option<&String>,
        file: Option<&String>,
    ) -> Option<Option<RecordedText>> {
        match (text, file) {
            (Some(_), Some(_)) => {
                self.problem_at_key(
                    &join(at, [k("file")]),
                    format!("{label}: give either `text` or `file`, not both"),
                );
                None
            }
            (Some(text), None) => Some(Some(RecordedText::Inline(text.clone()))),
            (None, Some(file)) => {
                let file_at = join(at, [k("file")]);
                if !is_inside(file) {
                    self.problem(
                        &file_at,
                        format!(
                            "{label}: `{file}` must be a relative path below the scenario's \
                             directory, without `..`"
                        ),
                    );
                    return None;
                }
                let path = self.base_dir.join(file);
                if !path.is_file() {
                    self.problem(
                        &file_at,
                        format!(
                            "{label}: the recorded text file {} does not exist; import the \
                             session again, or give the text inline",
                            path.display()
                        ),
                    );
                    return None;
                }
                // A file named without a directory is in `.`.
                let base = match self.base_dir.as_os_str().is_empty() {
                    true => std::path::Path::new("."),
                    false => self.base_dir.as_path(),
                };
                let inside = match (path.canonicalize(), base.canonicalize()) {
                    (Ok(real), Ok(base)) => real.starts_with(base),
                    _ => false,
                };
                if !inside {
                    self.problem(
                        &file_at,
                        format!(
                            "{label}: the recorded text file {} is a symlink that leads out of \
                             the scenario's directory; it is not followed",
                            path.display()
                        ),
                    );
                    return None;
                }
                Some(Some(RecordedText::File {
                    base: self.base_dir.to_path_buf(),
                    rel: file.into(),
                }))
            }
            (None, None) => Some(None),
        }
    }

    /// The comparison plan of an imported scenario: present when it has
    /// `replay:` or a call with `recorded:`.
    pub(super) fn replay_plan(
        &mut self,
        spec: Option<&ReplaySpec>,
        suite: &Suite,
    ) -> Option<ReplayPlan> {
        if spec.is_none() && self.recorded.is_empty() {
            return None;
        }
        let require = spec
            .and_then(|r| r.require)
            .or(suite.doc.replay.as_ref().and_then(|r| r.require))
            .unwrap_or_default();
        Some(ReplayPlan {
            cwd: spec.and_then(|r| r.cwd.clone()),
            require,
            skipped: spec.and_then(|r| r.skipped).unwrap_or(0),
            recorded: std::mem::take(&mut self.recorded),
        })
    }
}
