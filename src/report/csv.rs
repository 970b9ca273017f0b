//! `scenarios.csv` (one row per scenario) and `calls.csv` (one row per
//! tool call), written with the `csv` crate (RFC 4180 quoting, `\n` line
//! ends, a header row). Columns are fixed whether or not a baseline was
//! given; baseline columns are empty without one. Booleans are `true` /
//! `false`.

use crate::run::RunSummary;
use crate::run::Status;

use super::gate::Comparison;

/// The columns of `scenarios.csv`.
pub const SCENARIO_COLUMNS: [&str; 25] = [
    "name",
    "file",
    "status",
    "tags",
    "skip_reason",
    "failures",
    "first_failure",
    "turns",
    "calls",
    "errors",
    "retries",
    "retries_avoided",
    "result_tokens",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "duration_ms",
    "baseline_status",
    "baseline_result_tokens",
    "baseline_input_tokens",
    "baseline_output_tokens",
    "baseline_retries",
    "baseline_errors",
    "gate_breaches",
];

/// The columns of `calls.csv`.
pub const CALL_COLUMNS: [&str; 12] = [
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
];

fn status(s: Status) -> &'static str {
    match s {
        Status::Passed => "passed",
        Status::Failed => "failed",
        Status::Skipped => "skipped",
    }
}

fn finish(writer: csv::Writer<Vec<u8>>) -> Result<Vec<u8>, csv::Error> {
    writer
        .into_inner()
        .map_err(|err| csv::Error::from(err.into_error()))
}

/// `scenarios.csv`.
pub fn scenarios(
    summary: &RunSummary,
    comparison: Option<&Comparison>,
) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    w.write_record(SCENARIO_COLUMNS)?;
    for o in &summary.scenarios {
        let s = &o.stats;
        let first = o
            .failures
            .first()
            .map(|f| format!("{} · {}", f.step.as_deref().unwrap_or("scenario"), f.check))
            .unwrap_or_default();
        let change = comparison.and_then(|c| c.scenarios.iter().find(|x| x.name == o.name));
        let mut record = vec![
            o.name.clone(),
            o.file.clone(),
            status(o.status).to_owned(),
            o.tags.join(" "),
            o.skip_reason.clone().unwrap_or_default(),
            o.failures.len().to_string(),
            first,
        ];
        record.extend(
            [
                s.turns,
                s.calls,
                s.errors,
                s.retries,
                s.retries_avoided,
                s.result_tokens,
                s.input_tokens,
                s.output_tokens,
                s.cache_read_tokens,
                s.cache_write_tokens,
                s.duration_ms,
            ]
            .map(|n| n.to_string()),
        );
        match change {
            Some(c) => {
                record.push(status(c.baseline_status).to_owned());
                record.extend(
                    [
                        c.baseline.result_tokens,
                        c.baseline.input_tokens,
                        c.baseline.output_tokens,
                        c.baseline.retries,
                        c.baseline.errors,
                    ]
                    .map(|n| n.to_string()),
                );
            }
            None => record.extend(std::iter::repeat_n(String::new(), 6)),
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
        record.push(breaches.join(" "));
        w.write_record(&record)?;
    }
    finish(w)
}

/// `calls.csv`.
pub fn calls(summary: &RunSummary) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    w.write_record(CALL_COLUMNS)?;
    for o in &summary.scenarios {
        for (seq, c) in o.calls.iter().enumerate() {
            w.write_record([
                o.name.clone(),
                o.file.clone(),
                (seq + 1).to_string(),
                c.id.clone(),
                c.tool.clone(),
                c.turn.to_string(),
                c.retry.to_string(),
                c.is_error.to_string(),
                c.truncated.to_string(),
                c.args_tokens.to_string(),
                c.result_tokens.to_string(),
                c.duration_ms.to_string(),
            ])?;
        }
    }
    finish(w)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::run::CallStat;
    use crate::run::ScenarioOutcome;

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
            "scenario,file,seq,id,tool,turn,retry,is_error,truncated,args_tokens,result_tokens,duration_ms\n\
             \"a, \"\"b\"\"\",x.yaml,1,c1,read,1,false,false,false,0,0,0\n"
        );
        let text = String::from_utf8(scenarios(&summary, None).unwrap()).unwrap();
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let row = reader.records().next().unwrap().unwrap();
        assert_eq!(row.len(), SCENARIO_COLUMNS.len());
        assert_eq!(&row[0], "a, \"b\"");
        assert_eq!(&row[18], "");
    }
}
