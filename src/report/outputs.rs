//! The report files of a run written where they were asked for: each
//! format rendered at most once ([`Reports`]: one `run.json` serves
//! `--report DIR`, `--json FILE` and the record of the last run), every
//! file written whole by renaming a new one over its name, and what could
//! not be written said rather than printed (the command line prints).

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

use crate::run::RunSummary;

use super::Format;
use super::baseline::Baseline;
use super::compare::Comparison;

/// Where a run's reports go: each format's file, and the baseline file.
#[derive(Clone, Debug, Default)]
pub(crate) struct Outputs {
    /// Each report to write, in the order they are written.
    pub files: Vec<(Format, PathBuf)>,
    /// Where the per-scenario figures go (`--save-baseline`).
    pub baseline: Option<PathBuf>,
}

/// What [`write_outputs`] wrote, and what it could not.
#[derive(Debug, Default)]
pub(crate) struct Written {
    /// The files written.
    files: Vec<String>,
    /// One message per file that could not be written.
    errors: Vec<String>,
}

impl Written {
    /// Notes that `path` (a `what`: report, baseline) was written, or why
    /// it was not.
    pub(crate) fn record(&mut self, path: &Path, what: &str, result: Result<(), String>) {
        match result {
            Ok(()) => self.files.push(path.display().to_string()),
            Err(err) => self
                .errors
                .push(format!("cannot write the {what} {}: {err}", path.display())),
        }
    }

    /// Whether every file was written.
    pub(crate) fn ok(&self) -> bool {
        self.errors.is_empty()
    }

    /// The files written.
    pub(crate) fn files(&self) -> &[String] {
        &self.files
    }

    /// One message per file that could not be written.
    pub(crate) fn errors(&self) -> &[String] {
        &self.errors
    }
}

/// The reports of one run, each rendered at most once: one `run.json`
/// serves `--report DIR`, `--json FILE` and the record of the last run.
pub(crate) struct Reports<'a> {
    summary: &'a RunSummary,
    comparison: Option<&'a Comparison>,
    /// With `--variant`: each variant's comparison with its own baseline.
    variants: &'a [Option<Comparison>],
    rendered: BTreeMap<Format, Result<Vec<u8>, String>>,
}

impl<'a> Reports<'a> {
    /// The reports of `summary` (compared as `comparison` says), none
    /// rendered yet.
    pub(crate) fn new(summary: &'a RunSummary, comparison: Option<&'a Comparison>) -> Self {
        Self {
            summary,
            comparison,
            variants: &[],
            rendered: BTreeMap::new(),
        }
    }

    /// The reports of a run of variants, `variants[i]` comparing
    /// `summary.variants[i]` with its own baseline.
    pub(crate) fn of_variants(
        summary: &'a RunSummary,
        comparison: Option<&'a Comparison>,
        variants: &'a [Option<Comparison>],
    ) -> Self {
        Self {
            variants,
            ..Self::new(summary, comparison)
        }
    }

    /// The bytes of `format`, rendered on first use.
    pub(crate) fn bytes(&mut self, format: Format) -> Result<&[u8], String> {
        let (summary, comparison, variants) = (self.summary, self.comparison, self.variants);
        match self.rendered.entry(format).or_insert_with(|| {
            crate::report::render(format, summary, comparison, variants)
                .map_err(|err| err.to_string())
        }) {
            Ok(bytes) => Ok(bytes),
            Err(err) => Err(err.clone()),
        }
    }
}

/// Writes every requested report and the baseline, and says which it
/// wrote and which it could not; nothing is printed here, so that the
/// files are written before anything reaches the console.
pub(crate) fn write_outputs(outputs: &Outputs, reports: &mut Reports<'_>) -> Written {
    let summary = reports.summary;
    let mut written = Written::default();
    for (format, path) in &outputs.files {
        let result = reports
            .bytes(*format)
            .and_then(|bytes| write_file(path, bytes).map_err(|err| err.to_string()));
        match result {
            Ok(()) => written.files.push(path.display().to_string()),
            Err(err) => written
                .errors
                .push(format!("cannot write the report {}: {err}", path.display())),
        }
    }
    if let Some(path) = &outputs.baseline {
        let result = Baseline::of(summary)
            .to_json()
            .map_err(|err| err.to_string())
            .and_then(|bytes| write_file(path, &bytes).map_err(|err| err.to_string()));
        match result {
            Ok(()) => written.files.push(path.display().to_string()),
            Err(err) => written.errors.push(format!(
                "cannot write the baseline {}: {err}",
                path.display()
            )),
        }
    }
    written
}

/// Writes `bytes` to `path` through a temporary file in the same
/// directory, so that a reader never sees half a report.
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    // A report is for everyone who can read the directory, like any file
    // the user writes.
    crate::tools::ops::write_new_over(&crate::tools::ops::LocalFs, path, bytes, 0o644)
}

/// A baseline that has none of the scenarios about to run compares
/// nothing: most likely the baseline of another suite, or a wrong path.
pub(crate) fn shares_a_scenario<'a>(
    baseline: &Baseline,
    names: impl Iterator<Item = &'a str>,
) -> Result<(), String> {
    let names: Vec<&str> = names.collect();
    if names.is_empty() || names.iter().any(|n| baseline.scenarios.contains_key(*n)) {
        return Ok(());
    }
    Err(format!(
        "the baseline shares no scenario with this run ({} scenario{} to run, {} in the \
         baseline), so it would compare nothing; is it the baseline of another suite?",
        names.len(),
        if names.len() == 1 { "" } else { "s" },
        baseline.scenarios.len()
    ))
}
