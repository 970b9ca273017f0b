//! The conditions a scenario runs under: `faults:`, `bash:` and the
//! calls' `cancel_after_ms` (checked by [`crate::scenario::conditions`]).

use std::collections::BTreeMap;

use crate::scenario::conditions;
use crate::scenario::model::CallSpec;
use crate::scenario::model::ScenarioDoc;
use crate::scenario::yaml::Seg;

use super::scenario::Conditions;
use super::suite::Suite;
use super::validator::Validator;
use super::validator::is_inside;
use super::validator::join;
use super::validator::k;

impl Validator<'_> {
    /// `faults:`, `bash:` and the calls' `cancel_after_ms`, which must be
    /// in the last step (the run ends with it).
    /// A scenario without `bash:` takes its suite file's, whole (checked
    /// where the suite file was read).
    pub(super) fn conditions(&mut self, doc: &ScenarioDoc, suite: &Suite) -> Conditions {
        let (faults, problems) = conditions::faults(&doc.faults);
        for (at, message) in problems {
            self.problem(&at, message);
        }
        let (bash, shell) = match &doc.bash {
            Some(spec) => {
                let (config, shell, problems) = conditions::bash(spec, is_inside);
                for (at, message) in problems {
                    self.problem(&at, message);
                }
                (config, shell)
            }
            None => match &suite.doc.bash {
                Some(spec) => {
                    let (config, shell, _) = conditions::bash(spec, is_inside);
                    (config, shell)
                }
                None => Default::default(),
            },
        };
        let last = doc.model.len().saturating_sub(1);
        let mut cancel_after = BTreeMap::new();
        for (id, (after, at)) in std::mem::take(&mut self.cancel_after) {
            if let Some(Seg::Index(step)) = at.get(1)
                && *step != last
            {
                self.problem_at_key(
                    &at,
                    format!(
                        "step {}: the run ends when this call is cancelled, so the steps after \
                         it would never run; make it the last step",
                        step + 1
                    ),
                );
            }
            cancel_after.insert(id, after);
        }
        Conditions {
            faults,
            bash,
            shell,
            cancel_after,
        }
    }

    /// A call's `cancel_after_ms`: in range, not on a retry, and without
    /// retries of its own (the run ends with the call).
    pub(super) fn cancel_after_of(
        &mut self,
        spec: &CallSpec,
        at: &[Seg],
        id: &str,
        label: &str,
        retry: bool,
    ) {
        let Some(ms) = spec.cancel_after_ms else {
            return;
        };
        let key = join(at, [k("cancel_after_ms")]);
        if retry {
            self.problem_at_key(
                &key,
                format!(
                    "{label}: a retry cannot be cancelled; put `cancel_after_ms` on a call of the \
                     last step"
                ),
            );
            return;
        }
        if spec.retry.is_some() {
            self.problem_at_key(
                &join(at, [k("retry")]),
                format!(
                    "{label}: the run ends when this call is cancelled, so its `retry` would never \
                     be sent"
                ),
            );
        }
        match conditions::cancel_after(ms) {
            Ok(after) => {
                self.cancel_after.insert(id.to_owned(), (after, key));
            }
            Err(message) => self.problem(&key, message),
        }
    }
}
