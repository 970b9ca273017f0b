//! Baselines and gates: comparing a run with the figures of an earlier one.
//!
//! A baseline holds, per scenario, its status and figures (no timings, so a
//! committed baseline changes only when figures do). [`compare`] sets a run
//! against it and judges the gates:
//!
//! - a scenario that passed in the baseline and fails now is a regression;
//! - a gate `KEY=+LIMIT` is breached when a figure grew by more than the
//!   limit, for one scenario or in total. `LIMIT` is a count (`+0`: any
//!   growth) or a percentage of the baseline figure (`+5%`; from a baseline
//!   of 0, any growth breaches). `tokens` watches result and input tokens.
//!
//! Only scenarios present in both, and skipped in neither, are compared;
//! totals are summed over those same scenarios, so a new or missing
//! scenario is reported but never breaches a gate. A partitioned run
//! compares only its own scenarios.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::fmt;
use std::fmt::Write as _;
use std::str::FromStr;

use serde::Deserialize;
use serde::Serialize;

use crate::run::RunSummary;
use crate::run::ScenarioStats;
use crate::run::Status;

/// The version of the baseline file format.
pub const BASELINE_SCHEMA_VERSION: u32 = 1;

/// The `kind` of a baseline file.
pub const BASELINE_KIND: &str = "harness-baseline";

/// A scenario's figures, without timings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Figures {
    /// Assistant messages.
    pub turns: u64,
    /// Tool calls.
    pub calls: u64,
    /// Error results.
    pub errors: u64,
    /// Retry calls sent.
    pub retries: u64,
    /// Retries not needed.
    pub retries_avoided: u64,
    /// Result tokens.
    pub result_tokens: u64,
    /// Input tokens (cache reads excluded).
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to the cache.
    pub cache_write_tokens: u64,
}

impl From<&ScenarioStats> for Figures {
    fn from(s: &ScenarioStats) -> Self {
        Self {
            turns: s.turns,
            calls: s.calls,
            errors: s.errors,
            retries: s.retries,
            retries_avoided: s.retries_avoided,
            result_tokens: s.result_tokens,
            input_tokens: s.input_tokens,
            output_tokens: s.output_tokens,
            cache_read_tokens: s.cache_read_tokens,
            cache_write_tokens: s.cache_write_tokens,
        }
    }
}

impl Figures {
    fn add(&mut self, o: &Self) {
        self.turns += o.turns;
        self.calls += o.calls;
        self.errors += o.errors;
        self.retries += o.retries;
        self.retries_avoided += o.retries_avoided;
        self.result_tokens += o.result_tokens;
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.cache_read_tokens += o.cache_read_tokens;
        self.cache_write_tokens += o.cache_write_tokens;
    }

    /// The value of one gated figure.
    pub fn get(&self, metric: Metric) -> u64 {
        match metric {
            Metric::ResultTokens => self.result_tokens,
            Metric::InputTokens => self.input_tokens,
            Metric::OutputTokens => self.output_tokens,
            Metric::Retries => self.retries,
            Metric::Errors => self.errors,
            Metric::Turns => self.turns,
            Metric::Calls => self.calls,
        }
    }
}

/// One scenario in a baseline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaselineScenario {
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
pub struct Baseline {
    /// [`BASELINE_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// [`BASELINE_KIND`].
    pub kind: String,
    /// The tokenizer the figures were counted with.
    pub tokenizer: String,
    /// Scenarios by name.
    pub scenarios: BTreeMap<String, BaselineScenario>,
}

impl Baseline {
    /// The baseline of a run.
    pub fn of(summary: &RunSummary) -> Self {
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
                            figures: Figures::from(&s.stats),
                        },
                    )
                })
                .collect(),
        }
    }

    /// The file's text: pretty JSON, scenarios sorted by name.
    pub fn to_json(&self) -> Result<Vec<u8>, serde_json::Error> {
        let mut bytes = serde_json::to_vec_pretty(self)?;
        bytes.push(b'\n');
        Ok(bytes)
    }

    /// Reads a baseline file, or a run report (`run.json`), whose figures
    /// then serve as the baseline.
    pub fn parse(text: &str) -> Result<Self, String> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|err| format!("not valid JSON: {err}"))?;
        let kind = value.get("kind").and_then(serde_json::Value::as_str);
        if kind == Some(BASELINE_KIND) {
            let version = value.get("schema_version").and_then(|v| v.as_u64());
            if version != Some(u64::from(BASELINE_SCHEMA_VERSION)) {
                return Err(format!(
                    "baseline schema_version {} is not supported (this harness reads {})",
                    version.map_or_else(|| "(none)".to_owned(), |v| v.to_string()),
                    BASELINE_SCHEMA_VERSION
                ));
            }
            return serde_json::from_value(value).map_err(|err| format!("not a baseline: {err}"));
        }
        if value
            .get("scenarios")
            .is_some_and(serde_json::Value::is_array)
        {
            let summary = super::json::parse_value(value).map_err(|err| err.to_string())?;
            return Ok(Self::of(&summary));
        }
        Err(format!(
            "neither a baseline (`kind: {BASELINE_KIND}`) nor a run report (run.json)"
        ))
    }
}

/// A figure a gate watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Tokens of tool results.
    ResultTokens,
    /// Input tokens of requests.
    InputTokens,
    /// Output tokens of responses.
    OutputTokens,
    /// Retry calls sent.
    Retries,
    /// Error results.
    Errors,
    /// Assistant messages.
    Turns,
    /// Tool calls.
    Calls,
}

impl Metric {
    /// The figure's name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ResultTokens => "result_tokens",
            Self::InputTokens => "input_tokens",
            Self::OutputTokens => "output_tokens",
            Self::Retries => "retries",
            Self::Errors => "errors",
            Self::Turns => "turns",
            Self::Calls => "calls",
        }
    }
}

/// What a gate watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GateKey {
    /// Result tokens and input tokens.
    Tokens,
    /// Result tokens only.
    ResultTokens,
    /// Input tokens only.
    InputTokens,
    /// Output tokens.
    OutputTokens,
    /// Retries sent.
    Retries,
    /// Error results.
    Errors,
    /// Turns.
    Turns,
    /// Calls.
    Calls,
}

/// The gate keys, as written.
pub const GATE_KEYS: [&str; 8] = [
    "tokens",
    "result_tokens",
    "input_tokens",
    "output_tokens",
    "retries",
    "errors",
    "turns",
    "calls",
];

impl GateKey {
    /// The key as written.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tokens => "tokens",
            Self::ResultTokens => "result_tokens",
            Self::InputTokens => "input_tokens",
            Self::OutputTokens => "output_tokens",
            Self::Retries => "retries",
            Self::Errors => "errors",
            Self::Turns => "turns",
            Self::Calls => "calls",
        }
    }

    /// The figures it watches.
    pub fn metrics(self) -> &'static [Metric] {
        match self {
            Self::Tokens => &[Metric::ResultTokens, Metric::InputTokens],
            Self::ResultTokens => &[Metric::ResultTokens],
            Self::InputTokens => &[Metric::InputTokens],
            Self::OutputTokens => &[Metric::OutputTokens],
            Self::Retries => &[Metric::Retries],
            Self::Errors => &[Metric::Errors],
            Self::Turns => &[Metric::Turns],
            Self::Calls => &[Metric::Calls],
        }
    }
}

impl FromStr for GateKey {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "tokens" => Self::Tokens,
            "result_tokens" => Self::ResultTokens,
            "input_tokens" => Self::InputTokens,
            "output_tokens" => Self::OutputTokens,
            "retries" => Self::Retries,
            "errors" => Self::Errors,
            "turns" => Self::Turns,
            "calls" => Self::Calls,
            other => {
                return Err(format!(
                    "unknown gate `{other}` (known: {})",
                    GATE_KEYS.join(", ")
                ));
            }
        })
    }
}

/// How much a figure may grow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// By at most this many.
    Count(u64),
    /// By at most this percentage of the baseline, in hundredths of a
    /// percent (`+5%` is 500), so that comparisons are exact.
    Percent(u64),
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Count(n) => write!(f, "+{n}"),
            Self::Percent(h) if h % 100 == 0 => write!(f, "+{}%", h / 100),
            Self::Percent(h) if h % 10 == 0 => write!(f, "+{}.{}%", h / 100, h / 10 % 10),
            Self::Percent(h) => write!(f, "+{}.{:02}%", h / 100, h % 100),
        }
    }
}

impl FromStr for Limit {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let err = || {
            format!(
                "invalid limit `{text}`: expected +N (a count) or +P% (a percentage, up to two \
                 decimals), e.g. +0 or +5%"
            )
        };
        let s = text.trim();
        if s.starts_with('-') {
            return Err(format!(
                "invalid limit `{text}`: a gate limits growth, so the limit is + a count or a \
                 percentage"
            ));
        }
        let s = s.strip_prefix('+').unwrap_or(s);
        if let Some(number) = s.strip_suffix('%') {
            let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
            let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
            if !digits(whole) || (!fraction.is_empty() && !digits(fraction)) || fraction.len() > 2 {
                return Err(err());
            }
            let whole: u64 = whole.parse().map_err(|_| err())?;
            let fraction: u64 = format!("{fraction:0<2}").parse().map_err(|_| err())?;
            let hundredths = whole
                .checked_mul(100)
                .and_then(|w| w.checked_add(fraction))
                .ok_or_else(err)?;
            Ok(Self::Percent(hundredths))
        } else if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            s.parse().map(Self::Count).map_err(|_| err())
        } else {
            Err(err())
        }
    }
}

impl Limit {
    /// Whether growing from `baseline` to `current` breaks the limit.
    pub fn breached(self, baseline: u64, current: u64) -> bool {
        let Some(grew) = current.checked_sub(baseline) else {
            return false;
        };
        match self {
            Self::Count(n) => grew > n,
            Self::Percent(h) => u128::from(grew) * 10_000 > u128::from(baseline) * u128::from(h),
        }
    }
}

/// One gate: `KEY=+LIMIT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gate {
    /// What it watches.
    pub key: GateKey,
    /// How much growth it allows.
    pub limit: Limit,
}

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.key.as_str(), self.limit)
    }
}

impl FromStr for Gate {
    type Err = String;

    /// `KEY=+LIMIT`, as `--gate` takes it.
    fn from_str(text: &str) -> Result<Self, String> {
        let (key, limit) = text.split_once('=').ok_or_else(|| {
            format!("invalid gate `{text}`: expected KEY=+LIMIT, e.g. tokens=+5% or retries=+0")
        })?;
        Self::new(key.trim(), limit)
    }
}

impl Gate {
    /// A gate from its key and limit texts (as `harness.yaml` holds them).
    pub fn new(key: &str, limit: &str) -> Result<Self, String> {
        Ok(Self {
            key: key.parse()?,
            limit: limit.parse()?,
        })
    }
}

/// Gates by key: later ones replace earlier ones with the same key (the
/// command line overrides `harness.yaml`). Sorted by key.
pub fn combine(gates: impl IntoIterator<Item = Gate>) -> Vec<Gate> {
    let mut by_key = BTreeMap::new();
    for gate in gates {
        by_key.insert(gate.key, gate);
    }
    by_key.into_values().collect()
}

/// A figure that grew past a gate's limit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Breach {
    /// The scenario, or `None` for the totals.
    pub scenario: Option<String>,
    /// The figure.
    pub metric: Metric,
    /// Its value in the baseline.
    pub baseline: u64,
    /// Its value now.
    pub current: u64,
}

impl Breach {
    /// `` `name` result_tokens 100 → 120 (+20.0%) ``.
    pub fn describe(&self) -> String {
        let scope = match &self.scenario {
            Some(name) => format!("`{name}`"),
            None => "total".to_owned(),
        };
        format!(
            "{scope} {} {} → {} ({})",
            self.metric.as_str(),
            self.baseline,
            self.current,
            change_text(self.baseline, self.current)
        )
    }
}

/// `+20.0%`, `-3.5%`, `±0`, or `+12 from 0`.
pub fn change_text(baseline: u64, current: u64) -> String {
    if baseline == current {
        return "±0".to_owned();
    }
    if baseline == 0 {
        return format!("+{current} from 0");
    }
    let pct = (current as f64 - baseline as f64) / baseline as f64 * 100.0;
    format!("{pct:+.1}%")
}

/// How one gate fared.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateOutcome {
    /// The gate, as written (`tokens=+5%`).
    pub gate: String,
    /// Whether no figure breached it.
    pub held: bool,
    /// The figures that breached it: scenarios in run order, then totals.
    pub breaches: Vec<Breach>,
}

/// One scenario present in both the run and the baseline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScenarioChange {
    /// The scenario.
    pub name: String,
    /// Its status in the baseline.
    pub baseline_status: Status,
    /// Its status now.
    pub status: Status,
    /// Whether its figures were compared (skipped in neither).
    pub compared: bool,
    /// Its figures in the baseline.
    pub baseline: Figures,
    /// Its figures now.
    pub current: Figures,
}

/// A run set against a baseline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comparison {
    /// Whether no scenario regressed and every gate held.
    pub passed: bool,
    /// The gates and how they fared, sorted by key.
    pub gates: Vec<GateOutcome>,
    /// Scenarios that passed in the baseline and fail now, in run order.
    pub regressions: Vec<String>,
    /// Scenarios not in the baseline, in run order.
    pub new: Vec<String>,
    /// Baseline scenarios not in the run, by name. A partitioned run
    /// lists only those that belong to its partition (hash partitions)
    /// or none (slices).
    pub missing: Vec<String>,
    /// Scenarios present in both, in run order.
    pub scenarios: Vec<ScenarioChange>,
    /// Figures summed over the compared scenarios: the baseline's.
    pub baseline_totals: Figures,
    /// Figures summed over the compared scenarios: now.
    pub current_totals: Figures,
}

impl Comparison {
    /// Breaches of every gate.
    pub fn breaches(&self) -> usize {
        self.gates.iter().map(|g| g.breaches.len()).sum()
    }
}

/// Sets a run against a baseline and judges the gates.
pub fn compare(summary: &RunSummary, baseline: &Baseline, gates: &[Gate]) -> Comparison {
    let in_run: BTreeSet<&str> = summary.scenarios.iter().map(|s| s.name.as_str()).collect();
    let mut comparison = Comparison {
        passed: true,
        gates: Vec::new(),
        regressions: Vec::new(),
        new: Vec::new(),
        missing: Vec::new(),
        scenarios: Vec::new(),
        baseline_totals: Figures::default(),
        current_totals: Figures::default(),
    };
    for outcome in &summary.scenarios {
        let Some(before) = baseline.scenarios.get(&outcome.name) else {
            comparison.new.push(outcome.name.clone());
            continue;
        };
        if before.status == Status::Passed && outcome.status == Status::Failed {
            comparison.regressions.push(outcome.name.clone());
        }
        let compared = before.status != Status::Skipped && outcome.status != Status::Skipped;
        let current = Figures::from(&outcome.stats);
        if compared {
            comparison.baseline_totals.add(&before.figures);
            comparison.current_totals.add(&current);
        }
        comparison.scenarios.push(ScenarioChange {
            name: outcome.name.clone(),
            baseline_status: before.status,
            status: outcome.status,
            compared,
            baseline: before.figures,
            current,
        });
    }
    comparison.missing = baseline
        .scenarios
        .keys()
        .filter(|name| !in_run.contains(name.as_str()))
        .filter(|name| match &summary.partition {
            None => true,
            Some(info) => info.spec.holds_name(name).unwrap_or(false),
        })
        .cloned()
        .collect();
    for gate in gates {
        let mut breaches = Vec::new();
        let mut check = |scenario: Option<&str>, before: &Figures, now: &Figures| {
            for &metric in gate.key.metrics() {
                let (b, c) = (before.get(metric), now.get(metric));
                if gate.limit.breached(b, c) {
                    breaches.push(Breach {
                        scenario: scenario.map(str::to_owned),
                        metric,
                        baseline: b,
                        current: c,
                    });
                }
            }
        };
        for change in comparison.scenarios.iter().filter(|c| c.compared) {
            check(Some(&change.name), &change.baseline, &change.current);
        }
        check(
            None,
            &comparison.baseline_totals,
            &comparison.current_totals,
        );
        comparison.gates.push(GateOutcome {
            gate: gate.to_string(),
            held: breaches.is_empty(),
            breaches,
        });
    }
    comparison.passed =
        comparison.regressions.is_empty() && comparison.gates.iter().all(|g| g.held);
    comparison
}

/// The comparison as console lines.
pub fn console_text(comparison: &Comparison) -> String {
    let mut out = String::new();
    let list = |names: &[String]| {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = write!(
        out,
        "baseline: {} scenario{} compared",
        comparison.scenarios.iter().filter(|c| c.compared).count(),
        if comparison.scenarios.iter().filter(|c| c.compared).count() == 1 {
            ""
        } else {
            "s"
        }
    );
    if !comparison.new.is_empty() {
        let _ = write!(out, "; new: {}", list(&comparison.new));
    }
    if !comparison.missing.is_empty() {
        let _ = write!(out, "; missing: {}", list(&comparison.missing));
    }
    out.push('\n');
    for name in &comparison.regressions {
        let _ = writeln!(
            out,
            "regression: `{name}` passed in the baseline and fails now"
        );
    }
    for gate in &comparison.gates {
        if gate.held {
            let _ = writeln!(out, "gate {}: held", gate.gate);
        } else {
            let _ = writeln!(
                out,
                "gate {}: BREACHED ({})",
                gate.gate,
                gate.breaches.len()
            );
            for breach in &gate.breaches {
                let _ = writeln!(out, "  {}", breach.describe());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::run::ScenarioOutcome;

    fn outcome(
        name: &str,
        status: Status,
        result: u64,
        input: u64,
        retries: u64,
    ) -> ScenarioOutcome {
        let mut o = ScenarioOutcome::empty(name, &format!("{name}.yaml"), &[], status);
        o.stats.result_tokens = result;
        o.stats.input_tokens = input;
        o.stats.retries = retries;
        o.stats.calls = 2;
        o.stats.duration_ms = 17;
        o
    }

    fn run(scenarios: Vec<ScenarioOutcome>) -> RunSummary {
        RunSummary {
            scenarios,
            tokenizer: "o200k".into(),
            ..RunSummary::default()
        }
    }

    fn gates(list: &[&str]) -> Vec<Gate> {
        list.iter().map(|g| g.parse().unwrap()).collect()
    }

    #[test]
    fn limits_parse_and_print() {
        let cases = [
            ("+5%", Limit::Percent(500), "+5%"),
            ("5%", Limit::Percent(500), "+5%"),
            ("+2.5%", Limit::Percent(250), "+2.5%"),
            ("+0.25%", Limit::Percent(25), "+0.25%"),
            ("+0", Limit::Count(0), "+0"),
            ("3", Limit::Count(3), "+3"),
        ];
        for (text, limit, shown) in cases {
            assert_eq!(text.parse::<Limit>().unwrap(), limit, "{text}");
            assert_eq!(limit.to_string(), shown);
        }
        for bad in ["", "+", "-5%", "five", "+5.123%", "+.5%", "+5x", "5 %"] {
            assert!(bad.parse::<Limit>().is_err(), "{bad}");
        }
        assert_eq!(
            "tokens".parse::<Gate>().unwrap_err(),
            "invalid gate `tokens`: expected KEY=+LIMIT, e.g. tokens=+5% or retries=+0"
        );
        assert_eq!(
            "latency=+5%".parse::<Gate>().unwrap_err(),
            "unknown gate `latency` (known: tokens, result_tokens, input_tokens, \
             output_tokens, retries, errors, turns, calls)"
        );
    }

    #[test]
    fn limits_are_exact_at_the_edge() {
        let five = Limit::Percent(500);
        assert!(!five.breached(100, 105));
        assert!(five.breached(100, 106));
        assert!(!five.breached(100, 90));
        assert!(five.breached(0, 1));
        assert!(!five.breached(0, 0));
        assert!(!Limit::Count(0).breached(2, 2));
        assert!(Limit::Count(0).breached(2, 3));
        assert!(!Limit::Count(1).breached(2, 3));
    }

    #[test]
    fn command_line_gates_override_the_suite_ones() {
        let combined = combine(gates(&["tokens=+5%", "retries=+0", "tokens=+10%"]));
        assert_eq!(
            combined.iter().map(Gate::to_string).collect::<Vec<_>>(),
            ["tokens=+10%", "retries=+0"]
        );
    }

    fn base() -> RunSummary {
        run(vec![
            outcome("a", Status::Passed, 100, 1000, 0),
            outcome("b", Status::Passed, 200, 2000, 1),
        ])
    }

    #[test]
    fn each_gate_holds_without_a_regression() {
        let baseline = Baseline::of(&base());
        let mut now = base();
        // Within the limits: +5 % exactly and no extra retries or errors.
        now.scenarios[0].stats.result_tokens = 105;
        now.scenarios[1].stats.input_tokens = 1990;
        let c = compare(
            &now,
            &baseline,
            &gates(&["tokens=+5%", "retries=+0", "errors=+0"]),
        );
        assert!(c.passed, "{c:#?}");
        assert_eq!(c.breaches(), 0);
        assert!(c.gates.iter().all(|g| g.held));
    }

    #[test]
    fn the_tokens_gate_fails_on_a_token_regression() {
        let baseline = Baseline::of(&base());
        let mut now = base();
        now.scenarios[0].stats.result_tokens = 106;
        let c = compare(&now, &baseline, &gates(&["tokens=+5%"]));
        assert!(!c.passed);
        assert_eq!(
            c.gates,
            vec![GateOutcome {
                gate: "tokens=+5%".into(),
                held: false,
                breaches: vec![Breach {
                    scenario: Some("a".into()),
                    metric: Metric::ResultTokens,
                    baseline: 100,
                    current: 106,
                }],
            }]
        );
        assert_eq!(
            c.gates[0].breaches[0].describe(),
            "`a` result_tokens 100 → 106 (+6.0%)"
        );
    }

    #[test]
    fn the_tokens_gate_also_watches_the_total() {
        let baseline = Baseline::of(&run(vec![
            outcome("a", Status::Passed, 100, 1000, 0),
            outcome("b", Status::Passed, 100, 1000, 0),
        ]));
        // Each scenario grows 4 % (held per scenario); with a 3 % gate the
        // total breaches too.
        let now = run(vec![
            outcome("a", Status::Passed, 100, 1040, 0),
            outcome("b", Status::Passed, 100, 1040, 0),
        ]);
        let held = compare(&now, &baseline, &gates(&["tokens=+5%"]));
        assert!(held.passed);
        let c = compare(&now, &baseline, &gates(&["input_tokens=+3%"]));
        assert_eq!(
            c.gates[0]
                .breaches
                .iter()
                .map(Breach::describe)
                .collect::<Vec<_>>(),
            [
                "`a` input_tokens 1000 → 1040 (+4.0%)",
                "`b` input_tokens 1000 → 1040 (+4.0%)",
                "total input_tokens 2000 → 2080 (+4.0%)"
            ]
        );
    }

    #[test]
    fn the_retries_gate_fails_on_one_more_retry() {
        let baseline = Baseline::of(&base());
        let mut now = base();
        now.scenarios[1].stats.retries = 2;
        let c = compare(&now, &baseline, &gates(&["retries=+0", "errors=+0"]));
        assert!(!c.passed);
        let retries = c.gates.iter().find(|g| g.gate == "retries=+0").unwrap();
        assert_eq!(
            retries
                .breaches
                .iter()
                .map(Breach::describe)
                .collect::<Vec<_>>(),
            [
                "`b` retries 1 → 2 (+100.0%)",
                "total retries 1 → 2 (+100.0%)"
            ]
        );
        assert!(c.gates.iter().find(|g| g.gate == "errors=+0").unwrap().held);
    }

    #[test]
    fn the_errors_gate_fails_on_a_new_error() {
        let baseline = Baseline::of(&base());
        let mut now = base();
        now.scenarios[0].stats.errors = 1;
        let c = compare(&now, &baseline, &gates(&["errors=+0"]));
        assert!(!c.passed);
        assert_eq!(
            c.gates[0].breaches[0].describe(),
            "`a` errors 0 → 1 (+1 from 0)"
        );
        let lenient = compare(&now, &baseline, &gates(&["errors=+1"]));
        assert!(lenient.passed);
    }

    #[test]
    fn a_scenario_that_passed_and_now_fails_is_a_regression() {
        let baseline = Baseline::of(&base());
        let mut now = base();
        now.scenarios[1].status = Status::Failed;
        let c = compare(&now, &baseline, &[]);
        assert!(!c.passed);
        assert_eq!(c.regressions, ["b"]);
    }

    #[test]
    fn new_missing_and_skipped_scenarios_are_reported_not_gated() {
        let baseline = Baseline::of(&run(vec![
            outcome("a", Status::Passed, 100, 1000, 0),
            outcome("gone", Status::Passed, 100, 1000, 0),
            outcome("s", Status::Skipped, 0, 0, 0),
        ]));
        let now = run(vec![
            outcome("a", Status::Passed, 100, 1000, 0),
            outcome("fresh", Status::Passed, 900, 9000, 3),
            outcome("s", Status::Passed, 100, 1000, 2),
        ]);
        let c = compare(&now, &baseline, &gates(&["tokens=+0%", "retries=+0"]));
        assert!(c.passed, "{c:#?}");
        assert_eq!(c.new, ["fresh"]);
        assert_eq!(c.missing, ["gone"]);
        assert_eq!(
            c.scenarios
                .iter()
                .map(|s| (s.name.as_str(), s.compared))
                .collect::<Vec<_>>(),
            [("a", true), ("s", false)]
        );
        assert_eq!(c.current_totals.result_tokens, 100);
        assert!(
            console_text(&c)
                .starts_with("baseline: 1 scenario compared; new: `fresh`; missing: `gone`\n")
        );
    }

    #[test]
    fn a_hash_partition_misses_only_its_own_scenarios() {
        let names: Vec<String> = (0..20).map(|i| format!("s{i}")).collect();
        let baseline = Baseline::of(&run(names
            .iter()
            .map(|n| outcome(n, Status::Passed, 1, 1, 0))
            .collect()));
        let spec: crate::run::Partition = "hash:1/3".parse().unwrap();
        let mine: Vec<&String> = names.iter().filter(|n| spec.contains(0, n)).collect();
        let mut now = run(mine
            .iter()
            .skip(1)
            .map(|n| outcome(n, Status::Passed, 1, 1, 0))
            .collect());
        now.partition = Some(crate::run::PartitionInfo {
            spec,
            suite_scenarios: 19,
        });
        let c = compare(&now, &baseline, &[]);
        assert_eq!(c.missing, [mine[0].clone()]);
    }

    #[test]
    fn baselines_round_trip_and_reject_other_files() {
        let baseline = Baseline::of(&base());
        let text = String::from_utf8(baseline.to_json().unwrap()).unwrap();
        assert!(!text.contains("duration"), "{text}");
        assert_eq!(Baseline::parse(&text).unwrap(), baseline);
        let report = super::super::json::render(&base(), None).unwrap();
        assert_eq!(
            Baseline::parse(std::str::from_utf8(&report).unwrap()).unwrap(),
            baseline
        );
        assert_eq!(
            Baseline::parse("{}").unwrap_err(),
            "neither a baseline (`kind: harness-baseline`) nor a run report (run.json)"
        );
        assert_eq!(
            Baseline::parse(r#"{"kind": "harness-baseline", "schema_version": 9}"#).unwrap_err(),
            "baseline schema_version 9 is not supported (this harness reads 1)"
        );
        assert!(
            Baseline::parse("nope")
                .unwrap_err()
                .starts_with("not valid JSON")
        );
    }
}
