//! The conditions a scenario runs under: `faults:`, `bash:` and the
//! calls' `cancel_after_ms`, checked and turned into the types of
//! [`crate::scenario::setup`] and the tool layer's [`BashConfig`]. Each
//! problem comes back with the path of the value it is about, located at
//! file:line:col.

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

use crate::scenario::de::closest;
use crate::scenario::model::BashSpec;
use crate::scenario::model::CallSpec;
use crate::scenario::model::FaultSpec;
use crate::scenario::model::ScenarioDoc;
use crate::scenario::model::SuiteDoc;
use crate::scenario::setup::Conditions;
use crate::scenario::setup::FaultError;
use crate::scenario::setup::FaultOp;
use crate::scenario::setup::FaultRule;
use crate::scenario::setup::MAX_FAULT_DELAY;
use crate::scenario::yaml::Seg;
use crate::tools::BashConfig;

use super::validator::Validator;
use super::validator::is_inside;
use super::validator::join;
use super::validator::k;

impl Validator<'_> {
    /// `faults:`, `bash:` and the calls' `cancel_after_ms`, which must be
    /// in the last step (the run ends with it).
    /// A scenario without `bash:` takes its suite file's, whole (checked
    /// where the suite file was read).
    pub(super) fn conditions(&mut self, doc: &ScenarioDoc, suite: &SuiteDoc) -> Conditions {
        let (faults, problems) = faults(&doc.faults);
        for (at, message) in problems {
            self.problem(&at, message);
        }
        let (bash, shell) = match &doc.bash {
            Some(spec) => {
                let (config, shell, problems) = bash(spec, is_inside);
                for (at, message) in problems {
                    self.problem(&at, message);
                }
                (config, shell)
            }
            None => match &suite.bash {
                Some(spec) => {
                    let (config, shell, _) = bash(spec, is_inside);
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
        match cancel_after(ms) {
            Ok(after) => {
                self.cancel_after.insert(id.to_owned(), (after, key));
            }
            Err(message) => self.problem(&key, message),
        }
    }
}

/// A problem: where (below the document root) and what.
pub(super) type Problem = (Vec<Seg>, String);

/// The largest `cancel_after_ms`: one day.
pub(super) const MAX_CANCEL_AFTER_MS: u64 = crate::base::bounds::ONE_DAY_MS;

/// The largest `after_bytes`: 4 GiB.
pub(super) const MAX_AFTER_BYTES: u64 = 4 * 1024 * 1024 * 1024;

/// The largest `times`.
pub(super) const MAX_FAULT_TIMES: u64 = 1_000_000_000;

fn at(base: &[Seg], key: &str) -> Vec<Seg> {
    let mut path = base.to_vec();
    path.push(Seg::Key(key.to_owned()));
    path
}

/// `faults:`: the rules, in order, or the problems found.
pub(super) fn faults(specs: &[FaultSpec]) -> (Vec<FaultRule>, Vec<Problem>) {
    let mut rules = Vec::new();
    let mut problems = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let base = vec![Seg::Key("faults".to_owned()), Seg::Index(i)];
        match fault(spec, &base) {
            Ok(rule) => rules.push(rule),
            Err(found) => problems.extend(found),
        }
    }
    (rules, problems)
}

fn fault(spec: &FaultSpec, base: &[Seg]) -> Result<FaultRule, Vec<Problem>> {
    let mut problems = Vec::new();
    let op = FaultOp::parse(&spec.op);
    if op.is_none() {
        let names = FaultOp::ALL.map(FaultOp::name);
        let hint = closest(&spec.op, names.into_iter())
            .map(|c| format!("; did you mean `{c}`?"))
            .unwrap_or_default();
        problems.push((
            at(base, "op"),
            format!(
                "unknown fault operation `{}`: use one of {}{hint}",
                spec.op,
                names.join(", ")
            ),
        ));
    }
    let mut rule = FaultRule::new(op.unwrap_or(FaultOp::Read));
    if let Some(glob) = &spec.path {
        if op == Some(FaultOp::Exec) {
            problems.push((
                at(base, "path"),
                "an `exec` fault has no path: it applies to every command (limit it with \
                 `times`)"
                    .to_owned(),
            ));
        } else if glob.starts_with('/') || glob.split('/').any(|part| part == "..") {
            problems.push((
                at(base, "path"),
                format!(
                    "`{glob}` must be a glob relative to the workspace (no leading `/`, no `..`)"
                ),
            ));
        } else {
            match rule.clone().with_path(glob) {
                Ok(with) => rule = with,
                Err(err) => problems.push((
                    at(base, "path"),
                    format!("`{glob}` is not a valid glob: {}", err.kind()),
                )),
            }
        }
    }
    if let Some(text) = &spec.error {
        match fault_error(text) {
            Ok(error) => rule = rule.with_error(error),
            Err(message) => problems.push((at(base, "error"), message)),
        }
    }
    if let Some(ms) = spec.delay_ms {
        let max = MAX_FAULT_DELAY.as_millis();
        if u128::from(ms) > max {
            problems.push((
                at(base, "delay_ms"),
                format!("must be at most {max} milliseconds (ten minutes); it is {ms}"),
            ));
        } else {
            rule = rule.with_delay(Duration::from_millis(ms));
        }
    }
    if let Some(bytes) = spec.after_bytes {
        if op.is_some_and(|op| !op.streams()) {
            problems.push((
                at(base, "after_bytes"),
                format!(
                    "only `read`, `create` and `write` faults stop part way; a `{}` either \
                     happens or fails",
                    spec.op
                ),
            ));
        } else if bytes > MAX_AFTER_BYTES {
            problems.push((
                at(base, "after_bytes"),
                format!("must be at most {MAX_AFTER_BYTES} bytes (4 GiB); it is {bytes}"),
            ));
        } else if spec.error.is_none() {
            problems.push((
                at(base, "after_bytes"),
                "give the `error` the stream stops with (e.g. `error: ENOSPC`)".to_owned(),
            ));
        } else {
            rule = rule.with_after_bytes(bytes);
        }
    }
    if let Some(times) = spec.times {
        if (1..=MAX_FAULT_TIMES).contains(&times) {
            rule = rule.with_times(times);
        } else {
            problems.push((
                at(base, "times"),
                format!("must be a whole number from 1 to {MAX_FAULT_TIMES}; it is {times}"),
            ));
        }
    }
    if spec.error.is_none() && spec.delay_ms.is_none() && spec.after_bytes.is_none() {
        problems.push((
            base.to_vec(),
            "a fault needs `error`, `delay_ms` or both: what happens to the operation".to_owned(),
        ));
    }
    if problems.is_empty() {
        Ok(rule)
    } else {
        Err(problems)
    }
}

/// An error name, or a message of one's own. A word that looks like an
/// error name but is not a known one is refused, so that a typo does not
/// become a message.
fn fault_error(text: &str) -> Result<FaultError, String> {
    if let Some(error) = FaultError::errno(text) {
        return Ok(error);
    }
    let looks_like_errno = text.len() > 1
        && text.starts_with('E')
        && text
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
    if looks_like_errno {
        let hint = closest(text, FaultError::errno_names())
            .map(|c| format!("did you mean `{c}`? "))
            .unwrap_or_default();
        return Err(format!(
            "unknown error name `{text}`: {hint}known names are {}; any other text (with a space \
             or lower-case letters) is used as the error's message",
            FaultError::errno_names().collect::<Vec<_>>().join(", ")
        ));
    }
    if text.trim().is_empty() {
        return Err("must name an error (e.g. ENOSPC) or give a message".to_owned());
    }
    Ok(FaultError::Message(text.to_owned()))
}

/// `bash:`: the tool layer's configuration and the shell to use, or the
/// problems found. `inside` says whether a relative path stays inside the
/// workspace.
pub(super) fn bash(
    spec: &BashSpec,
    inside: impl Fn(&str) -> bool,
) -> (BashConfig, Option<PathBuf>, Vec<Problem>) {
    let base = vec![Seg::Key("bash".to_owned())];
    let mut problems = Vec::new();
    let env_at = at(&base, "env");
    for (key, value) in &spec.env {
        let valid_key = !key.is_empty()
            && !key.starts_with(|c: char| c.is_ascii_digit())
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid_key {
            let mut path = env_at.clone();
            path.push(Seg::Key(key.clone()));
            problems.push((
                path,
                format!(
                    "`{key}` is not a variable name: use letters, digits and `_`, not starting \
                     with a digit"
                ),
            ));
        } else if value.contains('\0') {
            let mut path = env_at.clone();
            path.push(Seg::Key(key.clone()));
            problems.push((path, "a variable's value cannot hold a NUL byte".to_owned()));
        }
    }
    if spec
        .command_prefix
        .as_deref()
        .is_some_and(|p| p.contains('\0'))
    {
        problems.push((
            at(&base, "command_prefix"),
            "cannot hold a NUL byte".to_owned(),
        ));
    }
    if let Some(cwd) = &spec.cwd
        && !inside(cwd)
    {
        problems.push((
            at(&base, "cwd"),
            format!(
                "`{cwd}` must be a directory inside the workspace: a relative path without `..`"
            ),
        ));
    }
    let shell = spec.shell.as_ref().map(PathBuf::from);
    if let Some(shell) = &shell
        && let Some(problem) = shell_problem(shell)
    {
        problems.push((at(&base, "shell"), problem));
    }
    let config = BashConfig {
        env: spec
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        command_prefix: spec.command_prefix.clone(),
        cwd: spec.cwd.clone(),
    };
    (config, shell, problems)
}

/// Why `shell` cannot run commands, if it cannot.
fn shell_problem(shell: &Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let shown = shell.display();
    if !shell.is_absolute() {
        return Some(format!(
            "`{shown}` must be the absolute path of a shell (e.g. /bin/sh)"
        ));
    }
    match std::fs::metadata(shell) {
        Err(err) => Some(format!(
            "the shell `{shown}` cannot be used: {err}; give the absolute path of an installed \
             shell (e.g. /bin/sh)"
        )),
        Ok(meta) if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 => Some(format!(
            "`{shown}` is not an executable file; give the absolute path of a shell (e.g. /bin/sh)"
        )),
        Ok(_) => None,
    }
}

/// `cancel_after_ms:` as a duration, or why not.
pub(super) fn cancel_after(ms: u64) -> Result<Duration, String> {
    if (1..=MAX_CANCEL_AFTER_MS).contains(&ms) {
        Ok(Duration::from_millis(ms))
    } else {
        Err(format!(
            "must be a whole number of milliseconds from 1 to {MAX_CANCEL_AFTER_MS} (one day); \
             it is {ms}"
        ))
    }
}

#[cfg(test)]
#[path = "setup_tests.rs"]
mod tests;
