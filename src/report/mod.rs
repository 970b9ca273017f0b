//! The report layer: pure functions from a [`RunSummary`] (and, with a
//! baseline, its [`Comparison`]) to text or bytes. It reads results only;
//! it runs nothing, prints nothing and touches no file: the CLI writes
//! what these functions return.
//!
//! | format | file in `--report DIR` | module |
//! | --- | --- | --- |
//! | JSON, the whole run | `run.json` | [`json`] |
//! | JUnit XML | `junit.xml` | [`junit`] |
//! | CSV, one row per scenario | `scenarios.csv` | [`csv`] |
//! | CSV, one row per tool call | `calls.csv` | [`csv`] |
//! | Markdown for a pull request | `summary.md` | [`markdown`] |
//!
//! [`gate`] compares a run with a baseline; [`merge`] combines partition
//! reports; [`console`] is what `harness run` prints.
//!
//! [`RunSummary`]: crate::run::RunSummary

pub mod console;
pub mod csv;
pub mod gate;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod merge;

use crate::run::RunSummary;

pub use gate::Baseline;
pub use gate::Comparison;
pub use gate::Gate;

/// A report file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Format {
    /// `run.json`.
    Json,
    /// `junit.xml`.
    Junit,
    /// `scenarios.csv`.
    ScenariosCsv,
    /// `calls.csv`.
    CallsCsv,
    /// `summary.md`.
    Markdown,
}

impl Format {
    /// Every format, in the order files are written.
    pub const ALL: [Self; 5] = [
        Self::Json,
        Self::Junit,
        Self::ScenariosCsv,
        Self::CallsCsv,
        Self::Markdown,
    ];

    /// The file name in a report directory.
    pub fn file_name(self) -> &'static str {
        match self {
            Self::Json => "run.json",
            Self::Junit => "junit.xml",
            Self::ScenariosCsv => "scenarios.csv",
            Self::CallsCsv => "calls.csv",
            Self::Markdown => "summary.md",
        }
    }
}

/// A report that could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// JSON serialisation failed.
    #[error("cannot render JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// CSV serialisation failed.
    #[error("cannot render CSV: {0}")]
    Csv(#[from] ::csv::Error),
}

/// The bytes of one report of a run.
pub fn render(
    format: Format,
    summary: &RunSummary,
    comparison: Option<&Comparison>,
) -> Result<Vec<u8>, RenderError> {
    Ok(match format {
        Format::Json => json::render(summary, comparison)?,
        Format::Junit => junit::render(summary, comparison),
        Format::ScenariosCsv => self::csv::scenarios(summary, comparison)?,
        Format::CallsCsv => self::csv::calls(summary)?,
        Format::Markdown => markdown::render(summary, comparison),
    })
}
