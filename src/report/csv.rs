//! `scenarios.csv` (one row per scenario) and `calls.csv` (one row per
//! tool call), written with the `csv` crate (RFC 4180 quoting, `\n` line
//! ends, a header row). Columns are fixed whether or not a baseline was
//! given; baseline columns are empty without one. Booleans are `true` /
//! `false`.
//!
//! No text cell can be a formula (the OWASP rule for CSV injection): one
//! that starts with `=`, `+`, `-`, `@`, a tab or a carriage return gets a
//! `'` in front, so that a spreadsheet shows it as text instead of running
//! it. Numbers are left alone: the figures, and a text cell that is a
//! plain number (`-5`, `-0.5`).

use std::borrow::Cow;

use crate::judge::Figures;
use crate::run::Metric;
use crate::run::RunSummary;
use crate::run::ScenarioOutcome;

use super::baseline::LATER_FIGURES;
use super::compare::Comparison;

/// The columns of `scenarios.csv` before the figures.
const SCENARIO_HEAD: [&str; 7] = [
    "name",
    "file",
    "status",
    "tags",
    "skip_reason",
    "failures",
    "first_failure",
];

/// The baseline figures of `scenarios.csv`, after `baseline_status`, each
/// named `baseline_` and the figure.
const BASELINE_METRICS: [Metric; 5] = [
    Metric::ResultTokens,
    Metric::InputTokens,
    Metric::OutputTokens,
    Metric::Retries,
    Metric::Errors,
];

/// Whether `name` is one of [`LATER_FIGURES`], the figures added after
/// the columns were first laid out: they come last (after
/// `gate_breaches`), so that every earlier column keeps its place.
fn is_later(name: &str) -> bool {
    LATER_FIGURES.iter().any(|m| m.as_str() == name)
}

/// The columns of `scenarios.csv`: the scenario, its figures and
/// `duration_ms`, `baseline_status`, the baseline figures,
/// `gate_breaches`, and the figures added later.
pub(crate) fn scenario_columns() -> Vec<String> {
    let head = SCENARIO_HEAD.into_iter().map(str::to_owned);
    let figures = Figures::NAMES
        .into_iter()
        .filter(|name| !is_later(name))
        .chain(["duration_ms", "baseline_status"])
        .map(str::to_owned);
    let baseline = BASELINE_METRICS.map(|m| format!("baseline_{}", m.as_str()));
    head.chain(figures)
        .chain(baseline)
        .chain(["gate_breaches".to_owned()])
        .chain(LATER_FIGURES.map(|m| m.as_str().to_owned()))
        .collect()
}

/// The columns of `calls.csv`.
pub(crate) const CALL_COLUMNS: [&str; 14] = [
    "scenario",
    "file",
    "seq",
    "id",
    "tool",
    "turn",
    "retry",
    "is_error",
    "truncated",
    "args_tokens",
    "result_tokens",
    "duration_ms",
    "recorded_tokens",
    "agreement",
];

/// `text` as a cell a spreadsheet cannot run: a `'` before a first
/// character that would start a formula, unless the text is a plain
/// number.
fn cell(text: &str) -> Cow<'_, str> {
    let formula = text
        .chars()
        .next()
        .is_some_and(|c| matches!(c, '=' | '+' | '-' | '@' | '\t' | '\r'));
    if formula && !is_plain_number(text) {
        Cow::Owned(format!("'{text}"))
    } else {
        Cow::Borrowed(text)
    }
}

/// An optional sign, digits, and an optional fraction: `-5`, `+0.25`.
fn is_plain_number(text: &str) -> bool {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, "0"));
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    all_digits(whole) && all_digits(fraction)
}

fn writer() -> csv::Writer<Vec<u8>> {
    csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new())
}

fn finish(writer: csv::Writer<Vec<u8>>) -> Result<Vec<u8>, csv::Error> {
    writer
        .into_inner()
        .map_err(|err| csv::Error::from(err.into_error()))
}

/// The runs a CSV file has rows for: the run itself (no variant name),
/// or with `--variant` each variant's run with its name and its
/// comparison (`variants[i]` is `summary.variants[i]`'s; the first
/// variant's falls back to `comparison`, the top level's).
fn runs<'a>(
    summary: &'a RunSummary,
    comparison: Option<&'a Comparison>,
    variants: &'a [Option<Comparison>],
) -> Vec<(Option<&'a str>, &'a RunSummary, Option<&'a Comparison>)> {
    if summary.variants.is_empty() {
        return vec![(None, summary, comparison)];
    }
    summary
        .variants
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let compared = match variants.get(i) {
                Some(c) => c.as_ref(),
                None if i == 0 => comparison,
                None => None,
            };
            (Some(v.name.as_str()), &v.summary, compared)
        })
        .collect()
}

/// `scenarios.csv`: a row per scenario; with `--variant`, per scenario
/// and variant, each compared with its variant's baseline (`variants[i]`
/// for `summary.variants[i]`), with a last column `variant` (a run
/// without variants has none).
pub(crate) fn scenarios(
    summary: &RunSummary,
    comparison: Option<&Comparison>,
    variants: &[Option<Comparison>],
) -> Result<Vec<u8>, csv::Error> {
    let mut w = writer();
    let mut columns = scenario_columns();
    if !summary.variants.is_empty() {
        columns.push("variant".to_owned());
    }
    w.write_record(columns)?;
    for (variant, run, comparison) in runs(summary, comparison, variants) {
        for o in &run.scenarios {
            let mut record = scenario_record(o, comparison);
            if let Some(name) = variant {
                record.push(cell(name).into_owned());
            }
            w.write_record(&record)?;
        }
    }
    finish(w)
}

/// One row of `scenarios.csv`, without the `variant` column.
fn scenario_record(o: &ScenarioOutcome, comparison: Option<&Comparison>) -> Vec<String> {
    let first = o
        .failures
        .first()
        .map(|f| format!("{} · {}", f.step.as_deref().unwrap_or("scenario"), f.check))
        .unwrap_or_default();
    let change = comparison.and_then(|c| c.scenarios.iter().find(|x| x.name == o.name));
    let mut record = vec![
        cell(&o.name).into_owned(),
        cell(&o.file).into_owned(),
        o.status.as_str().to_owned(),
        cell(&o.tags.join(" ")).into_owned(),
        cell(o.skip_reason.as_deref().unwrap_or_default()).into_owned(),
        o.failures.len().to_string(),
        cell(&first).into_owned(),
    ];
    record.extend(
        o.stats
            .figures
            .named()
            .filter(|(name, _)| !is_later(name))
            .map(|(_, n)| n.to_string()),
    );
    record.push(o.stats.duration_ms.to_string());
    match change {
        Some(c) => {
            record.push(c.baseline_status.as_str().to_owned());
            record.extend(BASELINE_METRICS.map(|m| m.value(&c.baseline).to_string()));
        }
        None => record.extend(std::iter::repeat_n(
            String::new(),
            1 + BASELINE_METRICS.len(),
        )),
    }
    let breaches: Vec<String> = comparison
        .map(|c| {
            c.gates
                .iter()
                .filter(|g| {
                    g.breaches
                        .iter()
                        .any(|b| b.scenario.as_deref() == Some(o.name.as_str()))
                })
                .map(|g| g.gate.clone())
                .collect()
        })
        .unwrap_or_default();
    record.push(cell(&breaches.join(" ")).into_owned());
    record.extend(LATER_FIGURES.map(|m| m.value(&o.stats.figures).to_string()));
    record
}

/// `calls.csv`: a row per call; with `--variant`, of every variant, with
/// a last column `variant` (a run without variants has none).
pub(crate) fn calls(summary: &RunSummary) -> Result<Vec<u8>, csv::Error> {
    let mut w = writer();
    let mut columns: Vec<&str> = CALL_COLUMNS.to_vec();
    if !summary.variants.is_empty() {
        columns.push("variant");
    }
    w.write_record(columns)?;
    for (variant, run, _) in runs(summary, None, &[]) {
        for o in &run.scenarios {
            for (seq, c) in o.calls.iter().enumerate() {
                let mut record = vec![
                    cell(&o.name).into_owned(),
                    cell(&o.file).into_owned(),
                    (seq + 1).to_string(),
                    cell(&c.id).into_owned(),
                    cell(&c.tool).into_owned(),
                    c.turn.to_string(),
                    c.retry.to_string(),
                    c.is_error.to_string(),
                    c.truncated.to_string(),
                    c.args_tokens.to_string(),
                    c.result_tokens.to_string(),
                    c.duration_ms.to_string(),
                    c.recorded_tokens.map(|t| t.to_string()).unwrap_or_default(),
                    c.agreement
                        .map(|a| a.as_str().to_owned())
                        .unwrap_or_default(),
                ];
                if let Some(name) = variant {
                    record.push(cell(name).into_owned());
                }
                w.write_record(&record)?;
            }
        }
    }
    finish(w)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::judge::tally::CallStat;
    use crate::run::Status;

    #[test]
    fn quotes_fields_that_need_it() {
        let mut o = ScenarioOutcome::empty("a, \"b\"", "x.yaml", &[], Status::Passed);
        o.calls.push(CallStat {
            id: "c1".into(),
            tool: "read".into(),
            turn: 1,
            ..CallStat::default()
        });
        let summary = RunSummary {
            scenarios: vec![o],
            ..RunSummary::default()
        };
        let text = String::from_utf8(calls(&summary).unwrap()).unwrap();
        assert_eq!(
            text,
            "scenario,file,seq,id,tool,turn,retry,is_error,truncated,args_tokens,result_tokens,duration_ms,recorded_tokens,agreement\n\
             \"a, \"\"b\"\"\",x.yaml,1,c1,read,1,false,false,false,0,0,0,,\n"
        );
        let text = String::from_utf8(scenarios(&summary, None, &[]).unwrap()).unwrap();
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let row = reader.records().next().unwrap().unwrap();
        assert_eq!(row.len(), scenario_columns().len());
        assert_eq!(&row[0], "a, \"b\"");
        assert_eq!(&row[18], "");
    }

    #[test]
    fn no_text_cell_can_be_a_formula() {
        let mut o = ScenarioOutcome::empty(
            "=HYPERLINK(\"http://x\",\"y\")",
            "+cmd.yaml",
            &["@SUM(A1)".to_owned(), "-x".to_owned()],
            Status::Skipped,
        );
        o.skip_reason = Some("\t=1+1".to_owned());
        o.calls.push(CallStat {
            id: "-5".into(),
            tool: "\r=2".into(),
            turn: 1,
            ..CallStat::default()
        });
        let mut plain =
            ScenarioOutcome::empty("-2.5", "a-b.yaml", &["x=y".to_owned()], Status::Passed);
        plain.calls.push(CallStat {
            id: "-1+1".into(),
            tool: "read".into(),
            turn: 2,
            ..CallStat::default()
        });
        let summary = RunSummary {
            scenarios: vec![o, plain],
            ..RunSummary::default()
        };
        let text = String::from_utf8(calls(&summary).unwrap()).unwrap();
        assert_eq!(
            text.lines().skip(1).collect::<Vec<_>>(),
            [
                "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",'+cmd.yaml,1,-5,\"'\r=2\",1,false,false,\
                 false,0,0,0,,",
                "-2.5,a-b.yaml,1,'-1+1,read,2,false,false,false,0,0,0,,"
            ]
        );
        let text = String::from_utf8(scenarios(&summary, None, &[]).unwrap()).unwrap();
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let rows: Vec<Vec<String>> = reader
            .records()
            .map(|row| row.unwrap().iter().take(7).map(str::to_owned).collect())
            .collect();
        assert_eq!(
            rows,
            [
                vec![
                    "'=HYPERLINK(\"http://x\",\"y\")",
                    "'+cmd.yaml",
                    "skipped",
                    "'@SUM(A1) -x",
                    "'\t=1+1",
                    "0",
                    ""
                ],
                vec!["-2.5", "a-b.yaml", "passed", "x=y", "", "0", ""]
            ]
        );
    }

    #[test]
    fn the_scenario_columns_are_fixed() {
        assert_eq!(
            scenario_columns().join(","),
            "name,file,status,tags,skip_reason,failures,first_failure,turns,calls,errors,\
             retries,retries_avoided,result_tokens,input_tokens,output_tokens,\
             cache_read_tokens,cache_write_tokens,duration_ms,baseline_status,\
             baseline_result_tokens,baseline_input_tokens,baseline_output_tokens,\
             baseline_retries,baseline_errors,gate_breaches,definition_tokens"
        );
    }
}
