//! `scenarios.csv` (one row per scenario) and `calls.csv` (one row per
//! tool call), written with the `csv` crate (RFC 4180 quoting, `\n` line
//! ends, a header row). Columns are fixed whether or not a baseline was
//! given; baseline columns are empty without one. Booleans are `true` /
//! `false`.

use crate::run::Metric;
use crate::run::RunSummary;
use crate::scenario::Figures;

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

/// The columns of `scenarios.csv`: the scenario, its figures and
/// `duration_ms`, `baseline_status`, the baseline figures and
/// `gate_breaches`.
pub fn scenario_columns() -> Vec<String> {
    let head = SCENARIO_HEAD.into_iter().map(str::to_owned);
    let figures = Figures::NAMES
        .into_iter()
        .chain(["duration_ms", "baseline_status"])
        .map(str::to_owned);
    let baseline = BASELINE_METRICS.map(|m| format!("baseline_{}", m.as_str()));
    head.chain(figures)
        .chain(baseline)
        .chain(["gate_breaches".to_owned()])
        .collect()
}

/// The columns of `calls.csv`.
pub const CALL_COLUMNS: [&str; 14] = [
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

/// `scenarios.csv`.
pub fn scenarios(
    summary: &RunSummary,
    comparison: Option<&Comparison>,
) -> Result<Vec<u8>, csv::Error> {
    let mut w = writer();
    w.write_record(scenario_columns())?;
    for o in &summary.scenarios {
        let first = o
            .failures
            .first()
            .map(|f| format!("{} · {}", f.step.as_deref().unwrap_or("scenario"), f.check))
            .unwrap_or_default();
        let change = comparison.and_then(|c| c.scenarios.iter().find(|x| x.name == o.name));
        let mut record = vec![
            o.name.clone(),
            o.file.clone(),
            o.status.as_str().to_owned(),
            o.tags.join(" "),
            o.skip_reason.clone().unwrap_or_default(),
            o.failures.len().to_string(),
            first,
        ];
        record.extend(o.stats.figures.values().map(|n| n.to_string()));
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
        record.push(breaches.join(" "));
        w.write_record(&record)?;
    }
    finish(w)
}

/// `calls.csv`.
pub fn calls(summary: &RunSummary) -> Result<Vec<u8>, csv::Error> {
    let mut w = writer();
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
                c.recorded_tokens.map(|t| t.to_string()).unwrap_or_default(),
                c.agreement
                    .map(|a| a.as_str().to_owned())
                    .unwrap_or_default(),
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
        let text = String::from_utf8(scenarios(&summary, None).unwrap()).unwrap();
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let row = reader.records().next().unwrap().unwrap();
        assert_eq!(row.len(), scenario_columns().len());
        assert_eq!(&row[0], "a, \"b\"");
        assert_eq!(&row[18], "");
    }

    #[test]
    fn the_scenario_columns_are_fixed() {
        assert_eq!(
            scenario_columns().join(","),
            "name,file,status,tags,skip_reason,failures,first_failure,turns,calls,errors,\
             retries,retries_avoided,result_tokens,input_tokens,output_tokens,\
             cache_read_tokens,cache_write_tokens,duration_ms,baseline_status,\
             baseline_result_tokens,baseline_input_tokens,baseline_output_tokens,\
             baseline_retries,baseline_errors,gate_breaches"
        );
    }
}
