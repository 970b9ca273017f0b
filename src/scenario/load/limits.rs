//! Tool limits: `limits:` of a scenario or suite file, and a file of
//! such keys (`harness mcp --limits FILE`), checked and applied over pi's
//! limits.

use std::path::Path;

use crate::scenario::de;
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
pub const MAX_LIMIT: usize = u32::MAX as usize;
/// The most `limits.max_log_bytes` may be set to (4 GiB).
pub const MAX_LOG_BYTES: u64 = 4 * 1024 * 1024 * 1024;

/// Reads a file of `limits:` keys (what a scenario's or a suite's `limits:`
/// holds, at the top level of the file; `harness mcp --limits FILE`): pi's
/// limits with the file's over them, or every problem of the file, each
/// located as in a scenario file.
pub fn load_limits(path: &Path) -> Result<Limits, Vec<ScenarioError>> {
    let text = read_regular(path).map_err(|err| {
        vec![ScenarioError::at_start(
            path,
            format!("cannot read the limits file: {err}"),
        )]
    })?;
    limits_from_text(path, &text)
}

/// The limits file `text`, as if read from `path` (see [`load_limits`]).
pub fn limits_from_text(path: &Path, text: &str) -> Result<Limits, Vec<ScenarioError>> {
    let stream = yaml::parse(text);
    let mut problems: Vec<Problem> = stream.fatal.map(Problem::from).into_iter().collect();
    let mut documents = stream.documents.into_iter().filter(|d| !d.root.is_null());
    let mut limits = Limits::default();
    if let Some(mut document) = documents.next() {
        problems.extend(document.problems.drain(..).map(Problem::from));
        let mut found = Vec::new();
        let parsed =
            de::deserialize_all::<LimitsSpec>(&mut document.root, &mut found, |_, _| false);
        problems.extend(found.into_iter().map(|mut p| {
            if p.path.is_empty() && p.message.starts_with("unknown field `limits`") {
                p.message = "the keys of `limits:` go at the top level of a limits file \
                             (`max_lines: 500`), not under `limits:`"
                    .to_owned();
            }
            Problem::from(p)
        }));
        if let Some(spec) = parsed {
            let mut v = Validator::new(&document.root);
            v.limits(&[], &spec);
            problems.extend(v.problems);
            apply_limits(&mut limits, &spec);
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
    pub(super) fn limits(&mut self, at: &[Seg], limits: &LimitsSpec) {
        let counts = [
            ("max_lines", limits.max_lines),
            ("max_bytes", limits.max_bytes),
            ("grep_max_line", limits.grep_max_line),
            ("grep_limit", limits.grep_limit),
            ("find_limit", limits.find_limit),
            ("ls_limit", limits.ls_limit),
        ];
        for (key, value) in counts {
            self.count_in_range(&join(at, [k(key)]), value, MAX_LIMIT);
        }
        self.seconds_in_range(&join(at, [k("bash_timeout")]), limits.bash_timeout);
        self.seconds_in_range(&join(at, [k("grep_timeout")]), limits.grep_timeout);
        if let Some(n) = limits.max_log_bytes
            && n > MAX_LOG_BYTES
        {
            self.problem(
                &join(at, [k("max_log_bytes")]),
                format!(
                    "must be a whole number of bytes from 0 to {MAX_LOG_BYTES} (4 GiB); it is {n}"
                ),
            );
        }
    }
}

pub(super) fn apply_limits(limits: &mut Limits, spec: &LimitsSpec) {
    let pairs = [
        (&mut limits.max_lines, spec.max_lines),
        (&mut limits.max_bytes, spec.max_bytes),
        (&mut limits.grep_max_line, spec.grep_max_line),
        (&mut limits.grep_limit, spec.grep_limit),
        (&mut limits.find_limit, spec.find_limit),
        (&mut limits.ls_limit, spec.ls_limit),
    ];
    for (slot, value) in pairs {
        if let Some(value) = value {
            *slot = value;
        }
    }
    if spec.bash_timeout.is_some() {
        limits.bash_timeout = spec.bash_timeout;
    }
    if let Some(bytes) = spec.max_log_bytes {
        limits.max_log_bytes = bytes;
    }
    if spec.grep_timeout.is_some() {
        limits.grep_timeout = spec.grep_timeout;
    }
}
