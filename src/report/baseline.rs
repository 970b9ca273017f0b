//! The baseline file: per scenario its file, status and [`Figures`], as
//! `--save-baseline` writes it and `--baseline` reads it back.
//!
//! A baseline has no timings, so a committed baseline changes only when a
//! figure does. Scenarios are sorted by name. A run report (`run.json`)
//! also serves as a baseline; [`crate::report::read_baseline`] reads
//! either.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::Serialize;

use crate::judge::Figures;
use crate::run::Metric;
use crate::run::RunSummary;
use crate::run::Status;

/// The version of the baseline file format.
pub(crate) const BASELINE_SCHEMA_VERSION: u32 = 1;

/// The `kind` of a baseline file.
pub(crate) const BASELINE_KIND: &str = "harness-baseline";

/// Figures added after the first reports were written: a baseline (or a
/// `run.json`) written before one existed lacks it, reads it as 0, and
/// gates do not compare it ([`Baseline::unrecorded`]); `scenarios.csv`
/// puts them in its last columns, so that every earlier column keeps its
/// place.
pub(crate) const LATER_FIGURES: [Metric; 1] = [Metric::DefinitionTokens];

/// One scenario in a baseline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct BaselineScenario {
    /// The file it came from (for people; not compared).
    pub file: String,
    /// How it ended.
    pub status: Status,
    /// Its figures.
    #[serde(flatten)]
    pub figures: Figures,
}

/// The per-scenario figures of a run, as `--save-baseline` writes them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Baseline {
    /// [`BASELINE_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// [`BASELINE_KIND`].
    pub kind: String,
    /// The tokenizer the figures were counted with.
    pub tokenizer: String,
    /// Scenarios by name.
    pub scenarios: BTreeMap<String, BaselineScenario>,
    /// The variant it is the baseline of (`harness run --variant`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The figures the file does not hold for every scenario, because it
    /// was written before they existed: read as 0, and not compared by the
    /// gates that watch them. Found where the file is read; never written.
    #[serde(skip)]
    pub unrecorded: Vec<Metric>,
}

/// A baseline file that cannot be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BaselineError {
    /// A version this harness does not read (`None`: no version).
    #[error(
        "baseline schema_version {} is not supported (this harness reads {BASELINE_SCHEMA_VERSION})",
        .found.map_or_else(|| "(none)".to_owned(), |v| v.to_string())
    )]
    Version {
        /// The version found.
        found: Option<u64>,
    },
    /// A `schema_version` that is not a whole number.
    #[error(
        "baseline `schema_version` must be a whole number such as {BASELINE_SCHEMA_VERSION}, not \
         {found}"
    )]
    VersionType {
        /// What was there, described.
        found: String,
    },
    /// The right version, but fields are wrong.
    #[error("not a baseline: {0}")]
    Shape(super::json_file::JsonError),
}

/// A baseline counted with another tokenizer than the run, whose figures
/// therefore cannot be compared.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the baseline was counted with the {baseline} tokenizer and this run uses {run}; run with \
     --tokenizer {baseline} or save a new baseline"
)]
pub(crate) struct TokenizerMismatch {
    /// The baseline's tokenizer.
    pub baseline: String,
    /// The run's tokenizer.
    pub run: String,
}

impl Baseline {
    /// The baseline of a run.
    pub(crate) fn of(summary: &RunSummary) -> Self {
        Self {
            schema_version: BASELINE_SCHEMA_VERSION,
            kind: BASELINE_KIND.to_owned(),
            tokenizer: summary.tokenizer.clone(),
            scenarios: summary
                .scenarios
                .iter()
                .map(|s| {
                    (
                        s.name.clone(),
                        BaselineScenario {
                            file: s.file.clone(),
                            status: s.status,
                            figures: s.stats.figures,
                        },
                    )
                })
                .collect(),
            variant: None,
            unrecorded: Vec::new(),
        }
    }

    /// The file's text: pretty JSON, scenarios sorted by name.
    pub(crate) fn to_json(&self) -> Result<Vec<u8>, serde_json::Error> {
        let mut bytes = serde_json::to_vec_pretty(self)?;
        bytes.push(b'\n');
        Ok(bytes)
    }

    /// Whether a run counted with `tokenizer` can be compared with it.
    pub(crate) fn counted_with(&self, tokenizer: &str) -> Result<(), TokenizerMismatch> {
        if self.tokenizer == tokenizer {
            return Ok(());
        }
        Err(TokenizerMismatch {
            baseline: self.tokenizer.clone(),
            run: tokenizer.to_owned(),
        })
    }

    /// Whether a JSON document says it is a baseline (its `kind`).
    pub(crate) fn is_baseline(value: &serde_json::Value) -> bool {
        value.get("kind").and_then(serde_json::Value::as_str) == Some(BASELINE_KIND)
    }

    /// Reads a baseline document, checking its `schema_version` first.
    pub(crate) fn from_value(value: serde_json::Value) -> Result<Self, BaselineError> {
        let version = value.get("schema_version");
        if let Some(version) = version
            && version.as_u64().is_none()
        {
            return Err(BaselineError::VersionType {
                found: describe_json(version),
            });
        }
        let found = version.and_then(serde_json::Value::as_u64);
        if found != Some(u64::from(BASELINE_SCHEMA_VERSION)) {
            return Err(BaselineError::Version { found });
        }
        let scenarios = value
            .get("scenarios")
            .and_then(serde_json::Value::as_object);
        let unrecorded = unrecorded(scenarios.into_iter().flat_map(|map| map.values()));
        let mut baseline: Self = serde_json::from_value(value)
            .map_err(|err| BaselineError::Shape(super::json_file::JsonError::of(&err)))?;
        baseline.unrecorded = unrecorded;
        Ok(baseline)
    }
}

/// The figures of [`LATER_FIGURES`] that some of `figures` (JSON objects
/// of figures, one per scenario) lack.
pub(crate) fn unrecorded<'a>(
    figures: impl IntoIterator<Item = &'a serde_json::Value>,
) -> Vec<Metric> {
    let figures: Vec<&serde_json::Value> = figures.into_iter().collect();
    LATER_FIGURES
        .into_iter()
        .filter(|metric| figures.iter().any(|f| f.get(metric.as_str()).is_none()))
        .collect()
}

/// A JSON value described for a message: its type and, when short, the
/// value itself (`the string "1"`, `null`, `the number 1.5`).
pub(crate) fn describe_json(value: &serde_json::Value) -> String {
    use serde_json::Value;
    let text = value.to_string();
    let short = text.chars().count() <= 40;
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(_) if short => format!("the number {text}"),
        Value::Number(_) => "a number".to_owned(),
        Value::String(_) if short => format!("the string {text}"),
        Value::String(_) => "a string".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::run::ScenarioOutcome;

    #[test]
    fn a_baseline_holds_figures_without_timings() {
        let mut a = ScenarioOutcome::empty("a", "a.yaml", &[], Status::Passed);
        a.stats.figures.calls = 2;
        a.stats.duration_ms = 17;
        let summary = RunSummary {
            scenarios: vec![a],
            tokenizer: "o200k".into(),
            ..RunSummary::default()
        };
        let text = String::from_utf8(Baseline::of(&summary).to_json().unwrap()).unwrap();
        assert!(!text.contains("duration"), "{text}");
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(Baseline::is_baseline(&value));
        assert_eq!(Baseline::from_value(value).unwrap(), Baseline::of(&summary));
        assert_eq!(
            Baseline::from_value(serde_json::json!({"kind": BASELINE_KIND}))
                .unwrap_err()
                .to_string(),
            "baseline schema_version (none) is not supported (this harness reads 1)"
        );
        assert_eq!(
            Baseline::from_value(serde_json::json!({"kind": BASELINE_KIND, "schema_version": "1"}))
                .unwrap_err()
                .to_string(),
            "baseline `schema_version` must be a whole number such as 1, not the string \"1\""
        );
    }
}
