//! The report layer: pure functions from a [`RunSummary`] (and, with a
//! baseline, its [`Comparison`]) to text or bytes, and [`outputs`], which
//! writes the files asked for (each rendered once, each written by
//! renaming a new file over its name). It reads results only; it runs
//! nothing and prints nothing: the CLI prints.
//!
//! | format | file in `--report DIR` | module |
//! | --- | --- | --- |
//! | JSON, the whole run | `run.json` | [`json`] |
//! | JUnit XML | `junit.xml` | [`junit`] |
//! | CSV, one row per scenario | `scenarios.csv` | [`csv`] |
//! | CSV, one row per tool call | `calls.csv` | [`csv`] |
//! | Markdown for a pull request | `summary.md` | [`markdown`] |
//! | HTML to look at, transcripts included | `index.html` | [`html`] |
//!
//! Against a baseline:
//!
//! | module | holds |
//! | --- | --- |
//! | [`baseline`] | the baseline file: its types, reading and writing |
//! | [`compare`](mod@compare) | setting a run against a baseline ([`Comparison`]) |
//! | [`verdict`] | how each gate fared and how changes are worded |
//!
//! [`merge`] combines partition reports; [`console`] is what `harness run`
//! and `harness report merge` print; [`coverage`] is the coverage section
//! of summary.md and of the console (`harness run --coverage`). [`read_baseline`] reads what
//! `--baseline` names: a baseline file or a `run.json`.
//!
//! Modules use one another in one direction only: `baseline`, `verdict`,
//! `merge`, `repeats` (what `--repeat` adds), `variants` (what `--variant`
//! adds) and `markup` (every escape of
//! text into HTML and XML) use none of the others; `compare` uses `baseline` and
//! `verdict`; `json`, `console` and `csv` use `compare`; `markdown` uses
//! `compare`, `verdict`, `repeats`, `variants` and `coverage` (which uses none of the others),
//! `junit` uses `compare`, `console` and `markup`, `html` uses `compare`,
//! `console`, `json`, `markup`, `variants` and `verdict`. This file
//! dispatches over them ([`render`], [`read_baseline`]). The gate language
//! itself is [`crate::run::gate`]: a run records its gates.
//!
//! [`RunSummary`]: crate::run::RunSummary

pub(crate) mod baseline;
pub(crate) mod compare;
pub(crate) mod console;
pub(crate) mod coverage;
pub(crate) mod csv;
pub(crate) mod html;
pub(crate) mod json;
pub(crate) mod json_file;
pub(crate) mod junit;
pub(crate) mod markdown;
mod markup;
pub(crate) mod merge;
pub(crate) mod outputs;
pub(crate) mod repeats;
pub(crate) mod servers;
pub(crate) mod variants;
pub(crate) mod verdict;

use crate::run::RunSummary;

pub(crate) use baseline::Baseline;
pub(crate) use baseline::BaselineError;
pub(crate) use compare::Comparison;
pub(crate) use compare::compare;

/// A report file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Format {
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
    /// `index.html`.
    Html,
}

impl Format {
    /// Every format, in the order files are written.
    pub(crate) const ALL: [Self; 6] = [
        Self::Json,
        Self::Junit,
        Self::ScenariosCsv,
        Self::CallsCsv,
        Self::Markdown,
        Self::Html,
    ];

    /// The file name in a report directory.
    pub(crate) fn file_name(self) -> &'static str {
        match self {
            Self::Json => "run.json",
            Self::Junit => "junit.xml",
            Self::ScenariosCsv => "scenarios.csv",
            Self::CallsCsv => "calls.csv",
            Self::Markdown => "summary.md",
            Self::Html => "index.html",
        }
    }
}

/// A report that could not be rendered.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RenderError {
    /// JSON serialisation failed.
    #[error("cannot render JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// CSV serialisation failed.
    #[error("cannot render CSV: {0}")]
    Csv(#[from] ::csv::Error),
    /// The HTML report's data could not be written.
    #[error(transparent)]
    Html(#[from] html::HtmlError),
}

/// What `--baseline` names that cannot be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BaselineReadError {
    /// Not JSON at all.
    #[error("not valid JSON: {0}")]
    Syntax(json::JsonError),
    /// A baseline file that cannot be read.
    #[error(transparent)]
    Baseline(#[from] BaselineError),
    /// A run report that cannot be read.
    #[error(transparent)]
    RunReport(#[from] json::ReadError),
    /// Neither.
    #[error(
        "neither a baseline (`kind: {}`) nor a run report (run.json)",
        baseline::BASELINE_KIND
    )]
    Neither,
}

impl BaselineReadError {
    /// Where in the file the problem is (line, column), when it has a
    /// place.
    pub(crate) fn place(&self) -> Option<(usize, usize)> {
        match self {
            Self::Syntax(err) | Self::Baseline(BaselineError::Shape(err)) => err.place,
            Self::RunReport(err) => err.place(),
            Self::Baseline(_) | Self::Neither => None,
        }
    }
}

/// Reads a baseline file, or a run report (`run.json`), whose figures then
/// serve as the baseline.
pub(crate) fn read_baseline(text: &str) -> Result<Baseline, BaselineReadError> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|err| BaselineReadError::Syntax(json::JsonError::of(&err)))?;
    if Baseline::is_baseline(&value) {
        return Baseline::from_value(value).map_err(|err| match err {
            BaselineError::Shape(_) => match serde_json::from_str::<Baseline>(text) {
                Err(placed) => BaselineError::Shape(json::JsonError::of(&placed)).into(),
                Ok(_) => err.into(),
            },
            other => other.into(),
        });
    }
    if value
        .get("scenarios")
        .is_some_and(serde_json::Value::is_array)
    {
        let stats = value
            .get("scenarios")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|scenario| scenario.get("stats"));
        let unrecorded = baseline::unrecorded(stats);
        let summary = json::parse_value(value)?;
        return Ok(Baseline {
            unrecorded,
            ..Baseline::of(&summary)
        });
    }
    Err(BaselineReadError::Neither)
}

/// The bytes of one report of a run. With `--variant`, each variant is
/// compared with its own baseline: `variants[i]` is the comparison of
/// `summary.variants[i]` (`comparison` the first one's, as the top level
/// is the first variant's run); without variants, `variants` is empty.
pub(crate) fn render(
    format: Format,
    summary: &RunSummary,
    comparison: Option<&Comparison>,
    variants: &[Option<Comparison>],
) -> Result<Vec<u8>, RenderError> {
    Ok(match format {
        Format::Json => json::render(summary, comparison, variants)?,
        Format::Junit => junit::render(summary, comparison, variants),
        Format::ScenariosCsv => self::csv::scenarios(summary, comparison, variants)?,
        Format::CallsCsv => self::csv::calls(summary)?,
        Format::Markdown => markdown::render(summary, comparison, variants),
        Format::Html => html::render(summary, comparison, variants)?,
    })
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::run::ScenarioOutcome;
    use crate::run::Status;

    fn base() -> RunSummary {
        let outcome = |name: &str, result: u64| {
            let mut o = ScenarioOutcome::empty(name, &format!("{name}.yaml"), &[], Status::Passed);
            o.stats.figures.result_tokens = result;
            o.stats.figures.calls = 2;
            o.stats.duration_ms = 17;
            o
        };
        RunSummary {
            scenarios: vec![outcome("a", 100), outcome("b", 200)],
            tokenizer: "o200k".into(),
            ..RunSummary::default()
        }
    }

    #[test]
    fn baselines_round_trip_and_reject_other_files() {
        let baseline = Baseline::of(&base());
        let text = String::from_utf8(baseline.to_json().unwrap()).unwrap();
        assert!(!text.contains("duration"), "{text}");
        assert_eq!(read_baseline(&text).unwrap(), baseline);
        let report = json::render(&base(), None, &[]).unwrap();
        assert_eq!(
            read_baseline(std::str::from_utf8(&report).unwrap()).unwrap(),
            baseline
        );
        assert_eq!(
            read_baseline("{}").unwrap_err().to_string(),
            "neither a baseline (`kind: harness-baseline`) nor a run report (run.json)"
        );
        assert_eq!(
            read_baseline(r#"{"kind": "harness-baseline", "schema_version": 9}"#)
                .unwrap_err()
                .to_string(),
            "baseline schema_version 9 is not supported (this harness reads 1)"
        );
        assert!(
            read_baseline("nope")
                .unwrap_err()
                .to_string()
                .starts_with("not valid JSON")
        );
    }

    /// `text` (JSON) with every `definition_tokens` key taken out, as a
    /// harness before that figure wrote it.
    fn without_definition_tokens(text: &[u8]) -> String {
        fn strip(value: &mut serde_json::Value) {
            match value {
                serde_json::Value::Object(map) => {
                    map.remove("definition_tokens");
                    map.values_mut().for_each(strip);
                }
                serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
                _ => {}
            }
        }
        let mut value: serde_json::Value = serde_json::from_slice(text).unwrap();
        strip(&mut value);
        value.to_string()
    }

    #[test]
    fn a_baseline_written_before_definition_tokens_reads_it_as_unrecorded() {
        let mut run = base();
        run.scenarios[0].stats.figures.definition_tokens = 40;
        let baseline = Baseline::of(&run);
        let text = baseline.to_json().unwrap();
        assert!(String::from_utf8_lossy(&text).contains("\"definition_tokens\": 40"));
        // Today's files record it.
        assert_eq!(
            read_baseline(std::str::from_utf8(&text).unwrap())
                .unwrap()
                .unrecorded,
            []
        );
        // An older baseline file, and an older run.json, do not.
        let mut old = Baseline::of(&base());
        old.unrecorded = vec![crate::run::Metric::DefinitionTokens];
        assert_eq!(
            read_baseline(&without_definition_tokens(&text)).unwrap(),
            old
        );
        let report = json::render(&run, None, &[]).unwrap();
        assert_eq!(
            read_baseline(&without_definition_tokens(&report)).unwrap(),
            old
        );
    }
}
