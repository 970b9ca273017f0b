//! `run.json`: the whole run, for scripts and for `harness report merge`.
//!
//! The document is versioned with a top-level `schema_version`
//! ([`SCHEMA_VERSION`]). Within a version, fields are only ever added;
//! renaming or removing one, or changing its meaning, bumps the version.
//! The names that scripts rely on are fixed: `schema_version`, `tokenizer`,
//! `totals`, `scenarios[]` with `name`, `file`, `status` (`passed`,
//! `failed`, `skipped`), `failures[]`, `stats` and `calls[]` (see
//! docs/reports.md for every field).

use serde::Deserialize;
use serde::Serialize;

use crate::judge::drift::ReplayStats;
use crate::run::LoadError;
use crate::run::PartitionInfo;
use crate::run::RepeatSpec;
use crate::run::RunSummary;
use crate::run::ScenarioOutcome;
use crate::run::ScenarioStats;
use crate::run::Status;
use crate::run::VariantRun;
use crate::run::coverage;
use crate::run::coverage::Coverage;
use crate::run::stats;
use crate::run::stats::ServerStats;
use crate::run::stats::ToolStats;

use super::baseline::describe_json;
use super::compare::Comparison;
use super::repeats::RepeatTotals;

/// The version of the `run.json` format.
pub(crate) const SCHEMA_VERSION: u32 = 1;

/// Scenarios by status.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub(crate) struct Counts {
    /// All scenarios in the report.
    pub scenarios: usize,
    /// Passed.
    pub passed: usize,
    /// Failed.
    pub failed: usize,
    /// Skipped.
    pub skipped: usize,
}

impl Counts {
    /// The counts of a run.
    pub(crate) fn of(summary: &RunSummary) -> Self {
        Self {
            scenarios: summary.scenarios.len(),
            passed: summary.count(Status::Passed),
            failed: summary.count(Status::Failed),
            skipped: summary.count(Status::Skipped),
        }
    }
}

/// The `run.json` document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct RunReport {
    /// The version of this format: 1. Within a version fields are only
    /// added.
    #[schemars(extend("const" = 1))]
    pub schema_version: u32,
    /// The harness version that wrote it.
    pub harness_version: String,
    /// The tokenizer every token figure was counted with.
    pub tokenizer: String,
    /// Wall time of the run; after `harness report merge`, of the longest
    /// partition.
    pub duration_ms: u64,
    /// Whether the run was interrupted (Ctrl-C).
    pub interrupted: bool,
    /// The partition this run was (`null` for a whole run).
    pub partition: Option<PartitionInfo>,
    /// Scenarios by status.
    pub counts: Counts,
    /// Every scenario's `stats` summed, `duration_ms` too: the sum of the
    /// scenarios' wall times, which a merge of partitions keeps (the run's
    /// own wall time is the top-level `duration_ms`).
    pub totals: ScenarioStats,
    /// Per-tool figures, by tool name.
    pub tools: Vec<ToolStats>,
    /// Per-MCP-server figures, by the servers' names in the scenarios
    /// (absent when no scenario had a server).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<ServerStats>,
    /// Scenario files that could not be loaded.
    pub load_errors: Vec<LoadError>,
    /// The gates configured for the run, as written (`tokens=+5%`).
    pub gates: Vec<String>,
    /// The comparison with a baseline (`null` without `--baseline`).
    pub comparison: Option<Comparison>,
    /// Every scenario, in discovery order.
    pub scenarios: Vec<ScenarioOutcome>,
    /// The `replay` sections of the scenarios summed (absent when no
    /// scenario replayed an imported session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayStats>,
    /// With `--coverage`: what the run's calls exercised of each tool and
    /// of the loop, and what they never did (docs/reports.md, "Coverage").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Coverage>,
    /// With `--repeat`: the repeated run as a whole (each scenario's own
    /// figures are its `repeats`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<RepeatTotals>,
    /// With `--variant`: every variant's run, in the order given; the
    /// top-level `scenarios`, `counts`, `totals` and `tools` are the first
    /// variant's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<VariantReport>,
}

/// One variant's run in `run.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct VariantReport {
    /// The variant's name (`--variant NAME=FILE`).
    pub name: String,
    /// Its suite file, as given.
    pub file: String,
    /// The tokenizer its figures were counted with.
    pub tokenizer: String,
    /// Wall time of its run.
    pub duration_ms: u64,
    /// Its scenarios by status.
    pub counts: Counts,
    /// Its scenarios' `stats` summed.
    pub totals: ScenarioStats,
    /// Its per-tool figures.
    pub tools: Vec<ToolStats>,
    /// With `--repeat`: its repeated run as a whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<RepeatTotals>,
    /// With `--baseline`: its comparison with its own baseline (absent
    /// without one; the first variant's is also the top-level
    /// `comparison`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
    /// Every scenario of its run, in discovery order.
    pub scenarios: Vec<ScenarioOutcome>,
}

impl VariantReport {
    fn new(variant: &VariantRun, comparison: Option<&Comparison>) -> Self {
        let summary = &variant.summary;
        Self {
            name: variant.name.clone(),
            file: variant.file.clone(),
            tokenizer: summary.tokenizer.clone(),
            duration_ms: summary.duration_ms,
            counts: Counts::of(summary),
            totals: summary.totals(),
            tools: stats::per_tool(summary),
            repeat: RepeatTotals::of(summary),
            comparison: comparison.cloned(),
            scenarios: summary.scenarios.clone(),
        }
    }

    fn into_variant(self, of: &RunSummary) -> VariantRun {
        VariantRun {
            name: self.name,
            file: self.file,
            summary: RunSummary {
                scenarios: self.scenarios,
                tokenizer: self.tokenizer,
                duration_ms: self.duration_ms,
                interrupted: of.interrupted,
                partition: of.partition,
                load_errors: Vec::new(),
                gates: of.gates.clone(),
                repeat: of.repeat,
                variants: Vec::new(),
            },
        }
    }
}

impl RunReport {
    /// The report of a run without variants' comparisons.
    #[cfg(test)]
    pub(crate) fn new(summary: &RunSummary, comparison: Option<&Comparison>) -> Self {
        Self::of_variants(summary, comparison, &[])
    }

    /// The report of a run of variants, `variants[i]` being the
    /// comparison of `summary.variants[i]` with its baseline (the first
    /// variant's falls back to `comparison`).
    pub(crate) fn of_variants(
        summary: &RunSummary,
        comparison: Option<&Comparison>,
        variants: &[Option<Comparison>],
    ) -> Self {
        let compared = |i: usize| match variants.get(i) {
            Some(c) => c.as_ref(),
            None if i == 0 => comparison,
            None => None,
        };
        Self {
            schema_version: SCHEMA_VERSION,
            harness_version: env!("CARGO_PKG_VERSION").to_owned(),
            tokenizer: summary.tokenizer.clone(),
            duration_ms: summary.duration_ms,
            interrupted: summary.interrupted,
            partition: summary.partition,
            counts: Counts::of(summary),
            totals: summary.totals(),
            tools: stats::per_tool(summary),
            servers: stats::per_server(summary),
            load_errors: summary.load_errors.clone(),
            gates: summary.gates.clone(),
            comparison: comparison.cloned(),
            scenarios: summary.scenarios.clone(),
            replay: summary.replay_totals(),
            coverage: coverage::summarize(summary),
            repeat: RepeatTotals::of(summary),
            variants: summary
                .variants
                .iter()
                .enumerate()
                .map(|(i, v)| VariantReport::new(v, compared(i)))
                .collect(),
        }
    }

    /// The run it describes (its totals are summed again from the
    /// scenarios).
    pub(crate) fn into_summary(self) -> RunSummary {
        let mut summary = RunSummary {
            scenarios: self.scenarios,
            tokenizer: self.tokenizer,
            duration_ms: self.duration_ms,
            interrupted: self.interrupted,
            partition: self.partition,
            load_errors: self.load_errors,
            gates: self.gates,
            repeat: self.repeat.map(|r| RepeatSpec {
                runs: r.runs,
                min_pass: r.min_pass,
            }),
            variants: Vec::new(),
        };
        let variants = self
            .variants
            .into_iter()
            .map(|v| v.into_variant(&summary))
            .collect();
        summary.variants = variants;
        summary
    }
}

/// `run.json` of a run: pretty JSON ending with a newline; with variants,
/// each with its comparison ([`RunReport::of_variants`]).
pub(crate) fn render(
    summary: &RunSummary,
    comparison: Option<&Comparison>,
    variants: &[Option<Comparison>],
) -> Result<Vec<u8>, serde_json::Error> {
    let report = RunReport::of_variants(summary, comparison, variants);
    let mut bytes = serde_json::to_vec_pretty(&report)?;
    bytes.push(b'\n');
    Ok(bytes)
}

pub(crate) use super::json_file::JsonError;

/// Why a `run.json` could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadError {
    /// Not JSON at all.
    #[error("not valid JSON: {0}")]
    Syntax(JsonError),
    /// JSON, but no `schema_version`.
    #[error("not a harness run report (no `schema_version`)")]
    NotAReport,
    /// A `schema_version` that is not a whole number.
    #[error("`schema_version` must be a whole number such as {SCHEMA_VERSION}, not {found}")]
    VersionType {
        /// What was there, described.
        found: String,
    },
    /// A version this harness does not read.
    #[error(
        "run report schema_version {found} is not supported (this harness reads {SCHEMA_VERSION})"
    )]
    Version {
        /// The version found.
        found: u64,
    },
    /// The right version, but fields are wrong.
    #[error("invalid run report: {0}")]
    Shape(JsonError),
}

impl ReadError {
    /// Where in the file the problem is (line, column), when it has a
    /// place.
    pub(crate) fn place(&self) -> Option<(usize, usize)> {
        match self {
            Self::Syntax(err) | Self::Shape(err) => err.place,
            Self::NotAReport | Self::VersionType { .. } | Self::Version { .. } => None,
        }
    }
}

/// Reads a `run.json`, checking its `schema_version` first. A field that
/// is wrong is named with its place in `text`.
pub(crate) fn parse(text: &str) -> Result<RunReport, ReadError> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|err| ReadError::Syntax(JsonError::of(&err)))?;
    parse_report(value).map_err(|err| match err {
        ReadError::Shape(_) => match serde_json::from_str::<RunReport>(text) {
            Err(placed) => ReadError::Shape(JsonError::of(&placed)),
            Ok(_) => err,
        },
        other => other,
    })
}

fn parse_report(value: serde_json::Value) -> Result<RunReport, ReadError> {
    let version = value.get("schema_version").ok_or(ReadError::NotAReport)?;
    let version = version.as_u64().ok_or_else(|| ReadError::VersionType {
        found: describe_json(version),
    })?;
    if version != u64::from(SCHEMA_VERSION) {
        return Err(ReadError::Version { found: version });
    }
    serde_json::from_value(value).map_err(|err| ReadError::Shape(JsonError::of(&err)))
}

/// The run of a parsed `run.json` value.
pub(crate) fn parse_value(value: serde_json::Value) -> Result<RunSummary, ReadError> {
    parse_report(value).map(RunReport::into_summary)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::judge::tally::CallStat;

    fn summary() -> RunSummary {
        let mut a = ScenarioOutcome::empty("a", "s/a.yaml", &["t".into()], Status::Passed);
        a.stats.figures.calls = 1;
        a.stats.figures.result_tokens = 7;
        a.stats.duration_ms = 3;
        a.calls.push(CallStat {
            id: "call_1_1".into(),
            tool: "read".into(),
            turn: 1,
            result_tokens: 7,
            ..CallStat::default()
        });
        let mut b = ScenarioOutcome::empty("b", "s/b.yaml", &[], Status::Skipped);
        b.index = 1;
        b.skip_reason = Some("later".into());
        b.stats.duration_ms = 1;
        RunSummary {
            scenarios: vec![a, b],
            tokenizer: "o200k".into(),
            duration_ms: 5,
            ..RunSummary::default()
        }
    }

    #[test]
    fn the_fixed_names_are_there() {
        let bytes = render(&summary(), None, &[]).unwrap();
        let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(value["schema_version"], 1);
        assert_eq!(value["tokenizer"], "o200k");
        assert_eq!(value["totals"]["result_tokens"], 7);
        let a = &value["scenarios"][0];
        for key in ["name", "file", "status", "failures", "stats", "calls"] {
            assert!(a.get(key).is_some(), "{key}");
        }
        for key in [
            "turns",
            "calls",
            "errors",
            "retries",
            "retries_avoided",
            "result_tokens",
            "input_tokens",
            "output_tokens",
            "cache_read_tokens",
            "duration_ms",
        ] {
            assert!(a["stats"].get(key).is_some(), "{key}");
            assert!(value["totals"].get(key).is_some(), "{key}");
        }
        for key in [
            "tool",
            "is_error",
            "truncated",
            "args_tokens",
            "result_tokens",
        ] {
            assert!(a["calls"][0].get(key).is_some(), "{key}");
        }
        assert_eq!(value["scenarios"][1]["status"], "skipped");
        assert_eq!(value["comparison"], serde_json::Value::Null);
    }

    #[test]
    fn round_trips() {
        let s = summary();
        let bytes = render(&s, None, &[]).unwrap();
        let back = parse(std::str::from_utf8(&bytes).unwrap())
            .unwrap()
            .into_summary();
        assert_eq!(back.scenarios, s.scenarios);
        assert_eq!(back.tokenizer, s.tokenizer);
    }

    #[test]
    fn other_versions_and_documents_are_refused() {
        assert_eq!(
            parse(r#"{"schema_version": 2}"#).unwrap_err().to_string(),
            "run report schema_version 2 is not supported (this harness reads 1)"
        );
        assert_eq!(
            parse(r#"{"scenarios": []}"#).unwrap_err().to_string(),
            "not a harness run report (no `schema_version`)"
        );
        for (version, found) in [
            (r#""1""#, r#"the string "1""#),
            ("1.5", "the number 1.5"),
            ("-1", "the number -1"),
            ("null", "null"),
            ("[1]", "an array"),
        ] {
            assert_eq!(
                parse(&format!(r#"{{"schema_version": {version}}}"#))
                    .unwrap_err()
                    .to_string(),
                format!("`schema_version` must be a whole number such as 1, not {found}")
            );
        }
        assert!(
            parse("[")
                .unwrap_err()
                .to_string()
                .starts_with("not valid JSON")
        );
        assert!(
            parse(r#"{"schema_version": 1}"#)
                .unwrap_err()
                .to_string()
                .starts_with("invalid run report")
        );
    }

    #[test]
    fn totals_sum_the_scenarios_and_the_run_keeps_its_wall_time() {
        let bytes = render(&summary(), None, &[]).unwrap();
        let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(value["duration_ms"], 5);
        assert_eq!(value["totals"]["duration_ms"], 4);
        assert_eq!(value["totals"]["calls"], 1);
    }
}
