//! The settings of a run, each with its one type and its one parser, shared
//! by the command line (`harness run --jobs/--timeout/--tokenizer`), the
//! suite loader (`jobs:`, `timeout:` of `harness.yaml`, `replay.timeout`)
//! and the runner builder, which takes them typed:
//!
//! | setting | type | range |
//! | --- | --- | --- |
//! | scenarios at once | [`Jobs`] | 1 to [`Jobs::MAX`] |
//! | a scenario's time budget | [`Budget`] | more than 0 s, at most [`MAX_SECS`] |
//! | what figures are counted with | [`Tokenizer`] | o200k, cl100k, chars4 |
//! | regression gates | [`Gate`](super::gate::Gate) | `KEY=+LIMIT` ([`super::gate`]) |
//!
//! Each place words a bad value its own way (a flag's message, a located
//! problem in a file); what is accepted is decided here only.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::agent::TokenCounter;
use crate::agent::tokens::tokenizer_by_name;
use crate::agent::tokens::tokenizer_name;
use crate::tools::truncate::format_number;

/// The most seconds a time budget (or a timeout of a file) may give: one
/// day.
pub const MAX_SECS: f64 = 86_400.0;

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
/// most `MAX_SECS` (a day). (A file's value of less than half a nanosecond comes
/// to no time at all, as it always did; `--timeout` refuses it.)
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Budget(Duration);

impl Budget {
    /// The budget when nothing else is configured: a minute.
    pub const DEFAULT: Self = Self(Duration::from_secs(60));

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
        let range = format!("use a number of seconds greater than 0 and at most {MAX_SECS}");
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

/// Whether `seconds` is a number of seconds a file may give: positive and
/// at most [`MAX_SECS`] (a time budget, or a tool's timeout in `limits:`).
pub fn seconds_fit(seconds: f64) -> bool {
    seconds.is_finite() && seconds > 0.0 && seconds <= MAX_SECS
}

/// How a file words seconds that do not fit (after its path).
pub fn seconds_problem(seconds: f64) -> String {
    format!(
        "must be a positive number of seconds, at most {MAX_SECS} (one day); it is {}",
        format_number(seconds)
    )
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

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
