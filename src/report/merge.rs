//! `harness report merge`: partition reports (`run.json`) combined into one
//! run, identical in content to an unpartitioned run apart from timings.
//!
//! The reports must share `schema_version` and tokenizer, and no scenario
//! may appear twice. When they are partitions (they record `partition`),
//! they must all be partitions of one split (same kind and `N`), each
//! partition `1..=N` exactly once, and together they must hold every
//! scenario of the selection; otherwise a lost CI job would go unnoticed.
//! Partitions are put back in discovery order by each scenario's position
//! in the whole selection. Reports that are not partitions are simply
//! concatenated in the order given.
//!
//! The merged run's wall time (`duration_ms`) is the longest of the parts'
//! (partitions run side by side, so the longest one is what the whole run
//! took). Its totals are summed again over every scenario, `duration_ms`
//! included, exactly as for an unpartitioned run (see
//! [`RunSummary::totals`]).

use std::collections::BTreeMap;

use crate::run::Gate;
use crate::run::Partition;
use crate::run::RunSummary;
use crate::run::VariantRun;

/// How many missing partitions a refused merge names (the rest are
/// counted).
pub(crate) const MISSING_SHOWN: usize = 10;

/// One report to merge.
#[derive(Clone, Debug)]
pub(crate) struct Part {
    /// Where it came from, for messages.
    pub source: String,
    /// Its `schema_version`.
    pub schema_version: u32,
    /// Its run.
    pub summary: RunSummary,
}

/// Why reports cannot be merged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum MergeError {
    /// Nothing to merge.
    #[error("no reports to merge")]
    Empty,
    /// Different format versions.
    #[error(
        "{report} has schema_version {found}, {first_report} has {first}; merge reports written by \
         the same harness version"
    )]
    SchemaVersion {
        /// The odd report.
        report: String,
        /// Its version.
        found: u32,
        /// The first report.
        first_report: String,
        /// Its version.
        first: u32,
    },
    /// Different tokenizers.
    #[error(
        "{report} counted tokens with {found}, {first_report} with {first}; figures of \
         different tokenizers cannot be combined"
    )]
    Tokenizer {
        /// The odd report.
        report: String,
        /// Its tokenizer.
        found: String,
        /// The first report.
        first_report: String,
        /// Its tokenizer.
        first: String,
    },
    /// A scenario in two reports.
    #[error("scenario `{name}` is in both {first_report} and {report}")]
    Duplicate {
        /// The scenario.
        name: String,
        /// The first report holding it.
        first_report: String,
        /// The second.
        report: String,
    },
    /// Partitions mixed with whole runs, or of different splits.
    #[error("{report} {found}, but {first_report} {first}; merge the partitions of one split")]
    Split {
        /// The odd report.
        report: String,
        /// What it is.
        found: String,
        /// The first report.
        first_report: String,
        /// What that is.
        first: String,
    },
    /// The same partition twice.
    #[error("partition {partition} is both {first_report} and {report}")]
    SamePartition {
        /// The partition.
        partition: String,
        /// The first report.
        first_report: String,
        /// The second.
        report: String,
    },
    /// Partitions missing.
    #[error(
        "missing partition{}: {}{} (of {count}); every partition's run.json is needed",
        if missing.len() == 1 && *more == 0 { "" } else { "s" },
        missing.join(", "),
        if *more == 0 { String::new() } else { format!(" and {more} more") }
    )]
    MissingPartitions {
        /// The first missing partitions, at most [`MISSING_SHOWN`].
        missing: Vec<String>,
        /// How many more are missing.
        more: u64,
        /// `N`.
        count: u64,
    },
    /// Different gates.
    #[error("{report} was run with the gates [{found}], {first_report} with [{first}]")]
    Gates {
        /// The odd report.
        report: String,
        /// Its gates.
        found: String,
        /// The first report.
        first_report: String,
        /// Its gates.
        first: String,
    },
    /// Partitions of different selections (other scenarios, paths or
    /// filters), told apart by their suite fingerprints.
    #[error(
        "{report} is a partition of another selection than {first_report} (suite fingerprints \
         {found} and {first}): run every partition on the same scenarios with the same paths, \
         --filter, --exact, --exclude and --tag"
    )]
    Selection {
        /// The odd report.
        report: String,
        /// Its fingerprint.
        found: String,
        /// The first report.
        first_report: String,
        /// Its fingerprint.
        first: String,
    },
    /// Runs of different variants, or a run of variants and one without.
    #[error(
        "{report} was run with the variants [{found}], {first_report} with [{first}]; merge the \
         partitions of one run of variants"
    )]
    Variants {
        /// The odd report.
        report: String,
        /// Its variants' names.
        found: String,
        /// The first report.
        first_report: String,
        /// Its variants' names.
        first: String,
    },
    /// The partitions do not add up to their selection.
    #[error(
        "the partitions hold {found} scenarios but their selection had {expected}; were they run \
         with the same paths, --filter and --tag?"
    )]
    Incomplete {
        /// Scenarios in the reports.
        found: usize,
        /// Scenarios in the selection.
        expected: usize,
    },
}

fn describe(p: Option<Partition>) -> String {
    match p {
        Some(p) => format!("is partition {p}"),
        None => "is a whole run".to_owned(),
    }
}

/// Merges runs; see the module doc for the rules.
pub(crate) fn merge(parts: Vec<Part>) -> Result<RunSummary, MergeError> {
    check(&parts)?;
    Ok(combine(parts))
}

/// The gates a merged run is judged by: those its partitions recorded,
/// with `given` (`--gate` of the merge) taking a key's place; recorded in
/// `summary.gates` too.
pub(crate) fn with_gates(
    summary: &mut RunSummary,
    given: Vec<Gate>,
) -> Result<Vec<Gate>, crate::run::GateError> {
    let recorded: Vec<Gate> = summary
        .gates
        .iter()
        .map(|g| g.parse())
        .collect::<Result<_, _>>()?;
    let gates = crate::run::gate::combine(recorded.into_iter().chain(given));
    summary.gates = gates.iter().map(Gate::to_string).collect();
    Ok(gates)
}

/// Whether the parts can be merged: alike, no scenario twice and, for
/// partitions, every partition of one split with every scenario.
fn check(parts: &[Part]) -> Result<(), MergeError> {
    let first = parts.first().ok_or(MergeError::Empty)?;
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut partitions: BTreeMap<u64, String> = BTreeMap::new();
    for part in parts {
        check_alike(first, part)?;
        if let Some(spec) = part.summary.partition.map(|p| p.spec)
            && let Some(other) = partitions.insert(spec.index, part.source.clone())
        {
            return Err(MergeError::SamePartition {
                partition: spec.to_string(),
                first_report: other,
                report: part.source.clone(),
            });
        }
        for outcome in &part.summary.scenarios {
            if let Some(other) = seen.insert(outcome.name.clone(), part.source.clone()) {
                return Err(MergeError::Duplicate {
                    name: outcome.name.clone(),
                    first_report: other,
                    report: part.source.clone(),
                });
            }
        }
    }
    let Some(info) = first.summary.partition else {
        return Ok(());
    };
    // Every index is within 1..=N (a partition's K is at most its N, and
    // all share one N), so the count of the missing needs no list of them.
    let absent = info.spec.count.saturating_sub(partitions.len() as u64);
    if absent > 0 {
        // Only the ones named are looked for.
        let missing: Vec<String> = (1..=info.spec.count)
            .filter(|k| !partitions.contains_key(k))
            .take(MISSING_SHOWN)
            .map(|k| {
                Partition {
                    index: k,
                    ..info.spec
                }
                .to_string()
            })
            .collect();
        return Err(MergeError::MissingPartitions {
            more: absent - missing.len() as u64,
            missing,
            count: info.spec.count,
        });
    }
    if seen.len() != info.suite_scenarios {
        return Err(MergeError::Incomplete {
            found: seen.len(),
            expected: info.suite_scenarios,
        });
    }
    Ok(())
}

/// Whether `part` was run like `first`: the same format version,
/// tokenizer, gates and split.
fn check_alike(first: &Part, part: &Part) -> Result<(), MergeError> {
    if part.schema_version != first.schema_version {
        return Err(MergeError::SchemaVersion {
            report: part.source.clone(),
            found: part.schema_version,
            first_report: first.source.clone(),
            first: first.schema_version,
        });
    }
    if part.summary.tokenizer != first.summary.tokenizer {
        return Err(MergeError::Tokenizer {
            report: part.source.clone(),
            found: part.summary.tokenizer.clone(),
            first_report: first.source.clone(),
            first: first.summary.tokenizer.clone(),
        });
    }
    if part.summary.gates != first.summary.gates {
        return Err(MergeError::Gates {
            report: part.source.clone(),
            found: part.summary.gates.join(", "),
            first_report: first.source.clone(),
            first: first.summary.gates.join(", "),
        });
    }
    let names =
        |p: &Part| -> Vec<String> { p.summary.variants.iter().map(|v| v.name.clone()).collect() };
    if names(part) != names(first) {
        return Err(MergeError::Variants {
            report: part.source.clone(),
            found: names(part).join(", "),
            first_report: first.source.clone(),
            first: names(first).join(", "),
        });
    }
    let this = part.summary.partition.map(|p| p.spec);
    let that = first.summary.partition.map(|p| p.spec);
    let same_split = match (this, that) {
        (Some(a), Some(b)) => a.kind == b.kind && a.count == b.count,
        (None, None) => true,
        _ => false,
    };
    let same_selection = part.summary.partition.map(|p| p.suite_scenarios)
        == first.summary.partition.map(|p| p.suite_scenarios);
    if !same_split || !same_selection {
        let with_size = |p: Option<crate::run::PartitionInfo>| match p {
            Some(info) => format!(
                "{} of {} scenarios",
                describe(Some(info.spec)),
                info.suite_scenarios
            ),
            None => describe(None),
        };
        return Err(MergeError::Split {
            report: part.source.clone(),
            found: with_size(part.summary.partition),
            first_report: first.source.clone(),
            first: with_size(first.summary.partition),
        });
    }
    let fingerprints = (
        part.summary.partition.and_then(|p| p.suite_fingerprint),
        first.summary.partition.and_then(|p| p.suite_fingerprint),
    );
    // Reports of older versions have none; they are checked by count only.
    if let (Some(found), Some(expected)) = fingerprints
        && found != expected
    {
        return Err(MergeError::Selection {
            report: part.source.clone(),
            found: found.to_string(),
            first_report: first.source.clone(),
            first: expected.to_string(),
        });
    }
    Ok(())
}

/// `summary.md` of a merge that was refused: the verdict, why, and the
/// files given, so that a CI step that publishes the summary shows the
/// reason instead of failing on a missing file.
pub(crate) fn refusal_markdown(reason: &str, files: &[String]) -> Vec<u8> {
    let mut text = String::from("## harness: ❌ merge refused\n\n");
    text.push_str(
        "`harness report merge` refused the files below and wrote no other report, for this \
         reason:\n\n",
    );
    let fence = "`".repeat(longest_backtick_run(reason).max(2) + 1);
    text.push_str(&format!("{fence}text\n{reason}\n{fence}\n\n"));
    text.push_str(&format!(
        "{} file{} given:\n\n",
        files.len(),
        if files.len() == 1 { "" } else { "s" }
    ));
    for file in files {
        text.push_str(&format!("- `{}`\n", file.replace('`', "'")));
    }
    text.into_bytes()
}

/// The longest run of backticks in `text`, so a fence can be longer.
fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// The parts as one run: partitions back in discovery order, whole runs
/// in the order given; with `--variant`, each variant's runs combined the
/// same way (the parts have the same variants, in the same order).
fn combine(mut parts: Vec<Part>) -> RunSummary {
    let mut variants: Vec<(VariantRun, Vec<Part>)> = parts
        .first()
        .map(|p| {
            p.summary
                .variants
                .iter()
                .map(|v| {
                    let named = VariantRun {
                        name: v.name.clone(),
                        file: v.file.clone(),
                        summary: RunSummary::default(),
                    };
                    (named, Vec::new())
                })
                .collect()
        })
        .unwrap_or_default();
    for part in &mut parts {
        let runs = std::mem::take(&mut part.summary.variants);
        for ((_, of_variant), run) in variants.iter_mut().zip(runs) {
            of_variant.push(Part {
                source: part.source.clone(),
                schema_version: part.schema_version,
                summary: run.summary,
            });
        }
    }
    let mut merged = combine_runs(parts);
    merged.variants = variants
        .into_iter()
        .map(|(mut run, of_variant)| {
            run.summary = combine_runs(of_variant);
            run
        })
        .collect();
    merged
}

/// [`combine`] for runs without variants.
fn combine_runs(parts: Vec<Part>) -> RunSummary {
    let partitioned = parts.first().is_some_and(|p| p.summary.partition.is_some());
    let mut merged = RunSummary::default();
    if let Some(first) = parts.first() {
        merged.tokenizer = first.summary.tokenizer.clone();
        merged.gates = first.summary.gates.clone();
        merged.repeat = first.summary.repeat;
    }
    for part in parts {
        let s = part.summary;
        merged.duration_ms = merged.duration_ms.max(s.duration_ms);
        merged.interrupted |= s.interrupted;
        merged.load_errors.extend(s.load_errors);
        merged.scenarios.extend(s.scenarios);
    }
    if partitioned {
        merged.scenarios.sort_by_key(|o| o.index);
    } else {
        for (index, outcome) in merged.scenarios.iter_mut().enumerate() {
            outcome.index = index;
        }
    }
    merged.load_errors.sort();
    merged.load_errors.dedup();
    merged
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::run::PartitionInfo;
    use crate::run::ScenarioOutcome;
    use crate::run::Status;
    use crate::run::partition::Fingerprint;

    fn whole(names: &[&str]) -> RunSummary {
        RunSummary {
            scenarios: names
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    let mut o = ScenarioOutcome::empty(n, "f.yaml", &[], Status::Passed);
                    o.index = i;
                    o.stats.figures.calls = i as u64;
                    o.stats.duration_ms = 10;
                    o
                })
                .collect(),
            tokenizer: "o200k".into(),
            ..RunSummary::default()
        }
    }

    fn split(run: &RunSummary, spec: &str) -> Part {
        let spec: Partition = spec.parse().unwrap();
        let mut summary = run.clone();
        summary
            .scenarios
            .retain(|o| spec.contains(o.index, &o.name));
        summary.partition = Some(PartitionInfo {
            spec,
            suite_scenarios: run.scenarios.len(),
            suite_fingerprint: Some(Fingerprint::of(
                run.scenarios.iter().map(|o| o.name.as_str()),
            )),
        });
        Part {
            source: format!("{spec}.json"),
            schema_version: 1,
            summary,
        }
    }

    const NAMES: [&str; 9] = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];

    #[test]
    fn merged_partitions_equal_the_whole_run() {
        let run = whole(&NAMES);
        for kind in ["hash", "slice"] {
            let parts: Vec<Part> = (1..=3)
                .rev()
                .map(|k| split(&run, &format!("{kind}:{k}/3")))
                .collect();
            let merged = merge(parts).unwrap();
            assert_eq!(merged.scenarios, run.scenarios, "{kind}");
            assert_eq!(merged.partition, None);
        }
    }

    #[test]
    fn refuses_what_cannot_be_combined() {
        let run = whole(&NAMES);
        let p = |s: &str| split(&run, s);
        let err = |parts: Vec<Part>| merge(parts).unwrap_err().to_string();
        assert_eq!(err(vec![]), "no reports to merge");
        assert_eq!(
            err(vec![p("hash:1/3"), p("hash:3/3")]),
            "missing partition: hash:2/3 (of 3); every partition's run.json is needed"
        );
        // Many missing: the first ten are named, the rest counted.
        assert_eq!(
            err(vec![p("slice:3/1000")]),
            "missing partitions: slice:1/1000, slice:2/1000, slice:4/1000, slice:5/1000, \
             slice:6/1000, slice:7/1000, slice:8/1000, slice:9/1000, slice:10/1000, \
             slice:11/1000 and 989 more (of 1000); every partition's run.json is needed"
        );
        assert_eq!(
            err(vec![p("hash:1/2"), p("hash:1/2")]),
            "partition hash:1/2 is both hash:1/2.json and hash:1/2.json"
        );
        assert_eq!(
            err(vec![p("hash:1/2"), p("slice:2/2")]),
            "slice:2/2.json is partition slice:2/2 of 9 scenarios, but hash:1/2.json is \
             partition hash:1/2 of 9 scenarios; merge the partitions of one split"
        );
        let mut other = p("hash:2/2");
        other.summary.tokenizer = "cl100k".into();
        assert_eq!(
            err(vec![p("hash:1/2"), other]),
            "hash:2/2.json counted tokens with cl100k, hash:1/2.json with o200k; figures of \
             different tokenizers cannot be combined"
        );
        let mut other = p("hash:2/2");
        other.schema_version = 2;
        assert!(err(vec![p("hash:1/2"), other]).starts_with("hash:2/2.json has schema_version 2"));
        assert_eq!(
            err(vec![
                part("a.json", &["x", "y"]),
                part("b.json", &["x", "y"])
            ]),
            "scenario `x` is in both a.json and b.json"
        );
        let mut short = p("slice:2/2");
        short.summary.scenarios.pop();
        assert_eq!(
            err(vec![p("slice:1/2"), short]),
            "the partitions hold 8 scenarios but their selection had 9; were they run with the \
             same paths, --filter and --tag?"
        );
    }

    #[test]
    fn refuses_partitions_of_different_selections() {
        let one = whole(&NAMES);
        let mut names = NAMES.to_vec();
        names[8] = "z";
        let other = whole(&names);
        let err = merge(vec![split(&one, "slice:1/2"), split(&other, "slice:2/2")])
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!(
                "slice:2/2.json is a partition of another selection than slice:1/2.json (suite \
                 fingerprints {} and {}): run every partition on the same scenarios with the \
                 same paths, --filter, --exact, --exclude and --tag",
                Fingerprint::of(names.iter().copied()),
                Fingerprint::of(NAMES.iter().copied())
            )
        );
        // Older reports have no fingerprint and are checked by count only.
        let mut parts = vec![split(&one, "slice:1/2"), split(&one, "slice:2/2")];
        for part in &mut parts {
            if let Some(info) = &mut part.summary.partition {
                info.suite_fingerprint = None;
            }
        }
        assert_eq!(merge(parts).unwrap().scenarios, one.scenarios);
    }

    #[test]
    fn a_refusal_has_a_summary_that_says_why() {
        let text = String::from_utf8(refusal_markdown(
            "missing partition: hash:2/2 (of 2); every partition's run.json is needed",
            &["parts/1/run.json".to_owned()],
        ))
        .unwrap();
        assert_eq!(
            text,
            "## harness: ❌ merge refused\n\n`harness report merge` refused the files below and \
             wrote no other report, for this reason:\n\n```text\nmissing partition: hash:2/2 \
             (of 2); every partition's run.json is needed\n```\n\n1 file given:\n\n- \
             `parts/1/run.json`\n"
        );
    }

    /// A whole run of `names` read from `source`.
    fn part(source: &str, names: &[&str]) -> Part {
        Part {
            source: source.into(),
            schema_version: 1,
            summary: whole(names),
        }
    }

    #[test]
    fn whole_runs_are_concatenated_in_order() {
        let merged = merge(vec![part("a.json", &["x", "y"]), part("b.json", &["z"])]).unwrap();
        assert_eq!(
            merged
                .scenarios
                .iter()
                .map(|o| (o.name.as_str(), o.index))
                .collect::<Vec<_>>(),
            [("x", 0), ("y", 1), ("z", 2)]
        );
        assert_eq!(merged.totals().figures.calls, 1);
    }

    #[test]
    fn the_wall_time_is_the_longest_part_and_totals_are_sums() {
        let run = whole(&NAMES);
        let mut parts: Vec<Part> = (1..=3)
            .map(|k| split(&run, &format!("slice:{k}/3")))
            .collect();
        for (part, ms) in parts.iter_mut().zip([40, 70, 50]) {
            part.summary.duration_ms = ms;
        }
        let merged = merge(parts).unwrap();
        assert_eq!(merged.duration_ms, 70);
        assert_eq!(merged.totals().duration_ms, 90);
        assert_eq!(merged.totals(), run.totals());
    }
}
