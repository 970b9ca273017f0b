//! An imported session's parts of a scenario (docs/replay.md): each
//! call's `recorded:` result, and the comparison plan of `replay:`.

use crate::scenario::replay::Recorded;
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
    /// scenario, inside its directory).
    pub(super) fn recorded_result(
        &mut self,
        id: &str,
        spec: &RecordedSpec,
        at: &[Seg],
        label: &str,
    ) {
        let at = join(at, [k("recorded")]);
        let text = match (&spec.text, &spec.file) {
            (Some(_), Some(_)) => {
                self.problem_at_key(
                    &join(&at, [k("file")]),
                    format!("{label}: give either `text` or `file`, not both"),
                );
                return;
            }
            (Some(text), None) => RecordedText::Inline(text.clone()),
            (None, Some(file)) => {
                let file_at = join(&at, [k("file")]);
                if !is_inside(file) {
                    self.problem(
                        &file_at,
                        format!(
                            "{label}: `{file}` must be a relative path below the scenario's \
                             directory, without `..`"
                        ),
                    );
                    return;
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
                    return;
                }
                RecordedText::File(path)
            }
            (None, None) => RecordedText::Inline(String::new()),
        };
        self.recorded.insert(
            id.to_owned(),
            Recorded {
                is_error: spec.is_error,
                text,
                images: spec.images.unwrap_or(0),
                sync: spec.sync.unwrap_or(false),
            },
        );
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
