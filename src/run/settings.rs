//! The settings of a run, each with its one type and its one parser, shared
//! by the command line (`harness run --jobs/--timeout/--tokenizer`), the
//! suite file (`jobs:`, `tokenizer:` and `gates:` of `harness.yaml`,
//! checked here and placed at file:line:col by the suite loader,
//! [`suite_problems`]) and the runner builder, which takes them typed:
//!
//! | setting | type | range |
//! | --- | --- | --- |
//! | scenarios at once | [`Jobs`] | 1 to [`Jobs::MAX`] |
//! | a scenario's time budget | [`Budget`] | more than 0 s, at most a day (`base::bounds`) |
//! | what figures are counted with | [`Tokenizer`] | o200k, cl100k, chars4 |
//! | regression gates | [`Gate`](super::gate::Gate) | `KEY=+LIMIT` ([`super::gate`]) |
//!
//! Each place words a bad value its own way (a flag's message, a located
//! problem in a file); what is accepted is decided here only. (A file's
//! `timeout:` is checked by the scenario loader against the same one-day
//! bound, which both take from `base::bounds`.)

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::agent::TokenCounter;
use crate::agent::tokens::tokenizer_by_name;
use crate::agent::tokens::tokenizer_name;

use super::gate::Gate;
use super::gate::GateError;
use super::gate::GateKey;
use super::gate::Limit;
use super::gate::combine;
use crate::base::bounds::ONE_DAY;
use crate::base::bounds::seconds_fit;
use crate::scenario::SettingProblem;
use crate::scenario::de::closest;
use crate::scenario::model::SuiteDoc;
use crate::scenario::yaml::Seg;

/// How many scenarios run at once: 1 to [`Jobs::MAX`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Jobs(usize);

impl Jobs {
    /// The most scenarios that may run at once.
    pub const MAX: usize = 1024;

    /// `jobs`, if it is a number of scenarios at once that can work.
    pub fn new(jobs: usize) -> Result<Self, OutOfRange> {
        if (1..=Self::MAX).contains(&jobs) {
            Ok(Self(jobs))
        } else {
            Err(OutOfRange)
        }
    }

    /// The number of cores, at most [`Jobs::MAX`] (2 when it cannot be
    /// known).
    pub fn cores() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Self(cores.clamp(1, Self::MAX))
    }

    /// `--jobs N`: a whole number from 1 to [`Jobs::MAX`].
    pub fn parse(text: &str) -> Result<Self, String> {
        let range = format!("use 1 to {}", Self::MAX);
        let jobs = text
            .trim()
            .parse::<usize>()
            .map_err(|_| format!("`{text}` is not a whole number; {range}"))?;
        Self::new(jobs)
            .map_err(|_| format!("`{text}` is not a number of scenarios at once; {range}"))
    }

    /// How a file words a bad `jobs` (after its path).
    pub fn problem(jobs: usize) -> String {
        format!(
            "must be a whole number from 1 to {} (it is {jobs})",
            Self::MAX
        )
    }

    /// The number.
    pub fn get(self) -> usize {
        self.0
    }
}

/// A value outside the range of its setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfRange;

/// The time a scenario may run: from a positive number of seconds, at
/// most a day. (A file's value of less than half a nanosecond comes
/// to no time at all, as it always did; `--timeout` refuses it.)
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Budget(Duration);

impl Budget {
    /// The budget when nothing else is configured: a minute.
    pub const DEFAULT: Self = Self(crate::scenario::DEFAULT_TIMEOUT);

    /// The budget of `seconds`, if it is one (a finite number; never a
    /// panic).
    pub fn from_secs(seconds: f64) -> Result<Self, OutOfRange> {
        if !seconds_fit(seconds) {
            return Err(OutOfRange);
        }
        Duration::try_from_secs_f64(seconds)
            .map(Self)
            .map_err(|_| OutOfRange)
    }

    /// `--timeout SECS`: seconds, more than 0 and at most a day, that come
    /// to some time.
    pub fn parse(text: &str) -> Result<Self, String> {
        let range = format!("use a number of seconds greater than 0 and at most {ONE_DAY}");
        let seconds = text
            .trim()
            .parse::<f64>()
            .map_err(|_| format!("`{text}` is not a number; {range}"))?;
        Self::from_secs(seconds)
            .ok()
            .filter(|budget| !budget.0.is_zero())
            .ok_or_else(|| format!("`{text}` is not a time budget; {range}"))
    }

    /// The duration.
    pub fn duration(self) -> Duration {
        self.0
    }
}

/// What a run's tokens are counted with.
#[derive(Clone, Debug)]
pub struct Tokenizer(Arc<dyn TokenCounter>);

impl Tokenizer {
    /// The tokenizer when neither the command line nor the suite names one.
    pub const DEFAULT: &'static str = "o200k";

    /// The tokenizer called `name` (o200k, cl100k, chars4), loaded; the
    /// error says which names there are.
    pub fn parse(name: &str) -> Result<Self, String> {
        tokenizer_by_name(name).map(Self)
    }

    /// Whether `name` names a tokenizer, without loading it (how a suite
    /// file's `tokenizer` is checked); the error says which names there
    /// are.
    pub fn check_name(name: &str) -> Result<(), String> {
        tokenizer_name(name).map(|_| ())
    }

    /// Its name, as reports show it.
    pub fn name(&self) -> &str {
        self.0.name()
    }

    /// The counter.
    pub fn counter(&self) -> Arc<dyn TokenCounter> {
        Arc::clone(&self.0)
    }
}

impl fmt::Display for Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The problems of a suite file's run settings: `jobs`, `tokenizer` (its
/// name, not loaded) and `gates` (each key and limit where it is written,
/// as `harness run` would refuse them). The suite loader places them at
/// file:line:col with the file's other problems.
pub(crate) fn suite_problems(doc: &SuiteDoc) -> Vec<SettingProblem> {
    let mut out = Vec::new();
    let mut problem = |at: Vec<Seg>, at_key: bool, message: String| {
        out.push(SettingProblem {
            at,
            at_key,
            message,
        });
    };
    let k = |key: &str| Seg::Key(key.to_owned());
    if let Some(n) = doc.jobs
        && Jobs::new(n).is_err()
    {
        problem(vec![k("jobs")], false, Jobs::problem(n));
    }
    if let Some(name) = &doc.tokenizer
        && let Err(err) = Tokenizer::check_name(name)
    {
        problem(vec![k("tokenizer")], false, err);
    }
    for (key, limit) in doc.gates.iter().flatten() {
        let at = vec![k("gates"), k(key)];
        if let Err(err) = key.parse::<GateKey>() {
            problem(at.clone(), true, gate_problem(&err));
        }
        if let Err(err) = limit.parse::<Limit>() {
            problem(at, false, gate_problem(&err));
        }
    }
    out
}

/// How a suite file words a gate that does not parse: the gate
/// language's own words, with the hint for a key close to a known one.
fn gate_problem(err: &GateError) -> String {
    match err {
        GateError::UnknownKey { key, .. } => {
            let hint = closest(key, GateKey::all().map(GateKey::as_str))
                .map(|c| format!("; did you mean `{c}`?"))
                .unwrap_or_default();
            format!("{err}{hint}")
        }
        _ => err.to_string(),
    }
}

/// The `jobs` of a suite file checked by [`suite_problems`].
pub(crate) fn suite_jobs(doc: &SuiteDoc) -> Option<Jobs> {
    doc.jobs.and_then(|n| Jobs::new(n).ok())
}

/// The `gates` of a suite file checked by [`suite_problems`], sorted by
/// key.
pub(crate) fn suite_gates(doc: &SuiteDoc) -> Vec<Gate> {
    combine(
        doc.gates
            .iter()
            .flatten()
            .filter_map(|(key, limit)| Gate::new(key, limit).ok()),
    )
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
