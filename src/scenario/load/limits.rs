//! Tool limits: `limits:` of a scenario or suite file, and a file of
//! such keys (`harness mcp --limits FILE`), checked and applied over pi's
//! limits.

use std::path::Path;

use crate::scenario::de;
use crate::scenario::model::LimitValue;
use crate::scenario::model::LimitsSpec;
use crate::scenario::text_file::read_regular;
use crate::scenario::yaml;
use crate::scenario::yaml::Seg;
use crate::tools::Limits;

use super::error::Problem;
use super::error::ScenarioError;
use super::error::into_errors;
use super::validator::Validator;
use super::validator::join;
use super::validator::k;

/// The largest integer tool limit a file may set.
pub(super) const MAX_LIMIT: usize = u32::MAX as usize;
/// The most `limits.max_log_bytes` may be set to (4 GiB).
pub(super) const MAX_LOG_BYTES: u64 = 4 * 1024 * 1024 * 1024;

/// Reads a file of `limits:` keys (what a scenario's or a suite's `limits:`
/// holds, at the top level of the file; `harness mcp --limits FILE`): pi's
/// limits with the file's over them, or every problem of the file, each
/// located as in a scenario file.
pub(crate) fn load_limits(path: &Path) -> Result<Limits, Vec<ScenarioError>> {
    let text = read_regular(path).map_err(|err| {
        vec![ScenarioError::at_start(
            path,
            format!("cannot read the limits file: {err}"),
        )]
    })?;
    limits_from_text(path, &text)
}

/// The limits file `text`, as if read from `path` (see [`load_limits`]).
pub(super) fn limits_from_text(path: &Path, text: &str) -> Result<Limits, Vec<ScenarioError>> {
    let stream = yaml::parse(text);
    let mut problems: Vec<Problem> = stream.fatal.map(Problem::from).into_iter().collect();
    let mut documents = stream.documents.into_iter().filter(|d| !d.root.is_null());
    let mut limits = Limits::default();
    if let Some(mut document) = documents.next() {
        problems.extend(document.problems.drain(..).map(Problem::from));
        let mut found = Vec::new();
        let parsed =
            de::deserialize_all::<LimitsSpec>(&mut document.root, &mut found, |_, _| false);
        let mut v = Validator::new(&document.root);
        v.after(&found);
        problems.extend(found.into_iter().map(|mut p| {
            if p.path.is_empty() && p.message.starts_with("unknown field `limits`") {
                p.message = "the keys of `limits:` go at the top level of a limits file \
                             (`max_lines: 500`), not under `limits:`"
                    .to_owned();
            }
            Problem::from(p)
        }));
        if let Some(spec) = parsed {
            v.limits(&[], &spec);
            problems.extend(v.problems);
            spec.apply(&mut limits);
        }
    }
    if let Some(extra) = documents.next() {
        problems.push(Problem {
            pos: extra.pos,
            path: String::new(),
            message: "a limits file holds one document; remove the `---` and what follows"
                .to_owned(),
        });
    }
    if problems.is_empty() {
        Ok(limits)
    } else {
        Err(into_errors(problems, path))
    }
}

impl Validator<'_> {
    /// The keys of `limits:` (at `at`), each against its range.
    pub(super) fn limits(&mut self, at: &[Seg], limits: &LimitsSpec) {
        for (key, value) in limits.values() {
            let at = join(at, [k(key)]);
            match value {
                LimitValue::Count(n) => self.count_in_range(&at, Some(n), MAX_LIMIT),
                LimitValue::Seconds(t) => self.seconds_in_range(&at, Some(t)),
                LimitValue::LogBytes(n) => {
                    if n > MAX_LOG_BYTES {
                        self.problem(
                            &at,
                            format!(
                                "must be a whole number of bytes from 0 to {MAX_LOG_BYTES} (4 \
                                 GiB); it is {n}"
                            ),
                        );
                    }
                }
            }
        }
    }
}
