//! Statistics over a run: per-tool aggregates, and what the tool
//! definitions themselves cost.
//!
//! Per-call, per-turn and per-scenario figures are gathered by the runner
//! (see [`super::outcome`]; the totals are [`RunSummary::totals`]); this
//! module aggregates them per tool. Everything here is
//! a pure function of its inputs.
//!
//! Percentiles use the nearest-rank method: `pQ` of `n` sorted values is
//! the value at rank `ceil(Q / 100 * n)` (1-based), so it is always one of
//! the observed values; the empty list has `0`.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::Serialize;

use crate::agent::TokenCounter;
use crate::tools::ToolSpec;

use super::outcome::RunSummary;

/// One tool's figures across a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct ToolStats {
    /// The tool.
    pub tool: String,
    /// Calls made to it.
    pub calls: u64,
    /// Calls whose result was an error.
    pub errors: u64,
    /// `errors / calls`, rounded to four decimals (0 without calls).
    pub error_rate: f64,
    /// Calls whose result the tool truncated.
    pub truncations: u64,
    /// Argument tokens summed (model output).
    pub args_tokens: u64,
    /// Result tokens summed (model input).
    pub result_tokens: u64,
    /// Median result tokens of one call (nearest rank).
    pub result_tokens_p50: u64,
    /// 95th percentile of result tokens of one call (nearest rank).
    pub result_tokens_p95: u64,
    /// Largest result of one call, in tokens.
    pub result_tokens_max: u64,
    /// Wall time summed over calls.
    pub duration_ms: u64,
}

/// The value at `percent` of `sorted` (ascending) by nearest rank; 0 when
/// empty.
pub(crate) fn percentile(sorted: &[u64], percent: u64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let n = sorted.len() as u64;
    let rank = (percent.min(100) * n).div_ceil(100).max(1);
    sorted[usize::try_from(rank - 1).unwrap_or(0).min(sorted.len() - 1)]
}

fn rate(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    (part as f64 / whole as f64 * 10_000.0).round() / 10_000.0
}

/// Per-tool figures over every call of the run, sorted by tool name.
pub(crate) fn per_tool(summary: &RunSummary) -> Vec<ToolStats> {
    let mut results: BTreeMap<&str, (ToolStats, Vec<u64>)> = BTreeMap::new();
    for call in summary.scenarios.iter().flat_map(|s| s.calls.iter()) {
        let (stats, sizes) = results.entry(&call.tool).or_insert_with(|| {
            (
                ToolStats {
                    tool: call.tool.clone(),
                    ..ToolStats::default()
                },
                Vec::new(),
            )
        });
        // Saturating: the calls may come from run.json files (a merge).
        stats.calls = stats.calls.saturating_add(1);
        stats.errors = stats.errors.saturating_add(u64::from(call.is_error));
        stats.truncations = stats.truncations.saturating_add(u64::from(call.truncated));
        stats.args_tokens = stats.args_tokens.saturating_add(call.args_tokens);
        stats.result_tokens = stats.result_tokens.saturating_add(call.result_tokens);
        stats.duration_ms = stats.duration_ms.saturating_add(call.duration_ms);
        sizes.push(call.result_tokens);
    }
    results
        .into_values()
        .map(|(mut stats, mut sizes)| {
            sizes.sort_unstable();
            stats.error_rate = rate(stats.errors, stats.calls);
            stats.result_tokens_p50 = percentile(&sizes, 50);
            stats.result_tokens_p95 = percentile(&sizes, 95);
            stats.result_tokens_max = sizes.last().copied().unwrap_or(0);
            stats
        })
        .collect()
}

/// What one tool definition costs in every request that carries it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct DefinitionCost {
    /// The tool.
    pub tool: String,
    /// Tokens of the description text.
    pub description_tokens: u64,
    /// Tokens of the parameters' JSON Schema, as serialised in a request.
    pub schema_tokens: u64,
    /// Tokens of the whole definition (`{name, description, parameters}`
    /// as JSON), which is what a request carries.
    pub definition_tokens: u64,
}

/// What the active tool definitions cost.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct DefinitionCosts {
    /// The tokenizer.
    pub tokenizer: String,
    /// One entry per tool, in registry order.
    pub tools: Vec<DefinitionCost>,
    /// Tokens of the whole tool section of a request, exactly as the faux
    /// provider prices it (`tools:` and the JSON array of definitions).
    /// BPE merges across boundaries, so this is not the sum of the parts.
    pub total_tokens: u64,
}

/// The token cost of each tool definition, as sent to a model.
pub(crate) fn definition_costs<'a>(
    specs: impl IntoIterator<Item = &'a ToolSpec>,
    tokens: &dyn TokenCounter,
) -> DefinitionCosts {
    let specs: Vec<&ToolSpec> = specs.into_iter().collect();
    let tools = specs
        .iter()
        .map(|spec| DefinitionCost {
            tool: spec.name.to_string(),
            description_tokens: tokens.count(&spec.description),
            schema_tokens: tokens.count(&compact(&spec.parameters)),
            definition_tokens: tokens.count(&compact(&spec.definition())),
        })
        .collect();
    let definitions: Vec<_> = specs.iter().map(|s| s.definition()).collect();
    let section = if definitions.is_empty() {
        String::new()
    } else {
        format!("tools:{}", compact(&definitions))
    };
    DefinitionCosts {
        tokenizer: tokens.name().to_owned(),
        tools,
        total_tokens: tokens.count(&section),
    }
}

/// Compact JSON, the way a request serialises it.
fn compact<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::judge::tally::CallStat;
    use crate::run::ScenarioOutcome;
    use crate::run::Status;

    #[test]
    fn nearest_rank_percentiles() {
        assert_eq!(percentile(&[], 50), 0);
        assert_eq!(percentile(&[7], 50), 7);
        assert_eq!(percentile(&[7], 95), 7);
        let values: Vec<u64> = (1..=20).collect();
        assert_eq!(percentile(&values, 50), 10);
        assert_eq!(percentile(&values, 95), 19);
        assert_eq!(percentile(&values, 100), 20);
        assert_eq!(percentile(&[1, 2, 3, 4], 50), 2);
        assert_eq!(percentile(&[1, 2, 3, 4], 95), 4);
    }

    fn call(tool: &str, is_error: bool, truncated: bool, result_tokens: u64) -> CallStat {
        CallStat {
            id: "c".into(),
            tool: tool.into(),
            turn: 1,
            retry: false,
            is_error,
            truncated,
            args_tokens: 2,
            result_tokens,
            duration_ms: 1,
            ..CallStat::default()
        }
    }

    #[test]
    fn per_tool_aggregates_across_scenarios() {
        let mut a = ScenarioOutcome::empty("a", "a.yaml", &[], Status::Passed);
        a.calls = vec![
            call("read", false, false, 10),
            call("read", true, false, 30),
            call("grep", false, true, 5),
        ];
        let mut b = ScenarioOutcome::empty("b", "b.yaml", &[], Status::Failed);
        b.calls = vec![call("read", false, true, 20)];
        let summary = RunSummary {
            scenarios: vec![a, b],
            ..RunSummary::default()
        };
        assert_eq!(
            per_tool(&summary),
            vec![
                ToolStats {
                    tool: "grep".into(),
                    calls: 1,
                    errors: 0,
                    error_rate: 0.0,
                    truncations: 1,
                    args_tokens: 2,
                    result_tokens: 5,
                    result_tokens_p50: 5,
                    result_tokens_p95: 5,
                    result_tokens_max: 5,
                    duration_ms: 1,
                },
                ToolStats {
                    tool: "read".into(),
                    calls: 3,
                    errors: 1,
                    error_rate: 0.3333,
                    truncations: 1,
                    args_tokens: 6,
                    result_tokens: 60,
                    result_tokens_p50: 20,
                    result_tokens_p95: 30,
                    result_tokens_max: 30,
                    duration_ms: 3,
                },
            ]
        );
    }

    #[test]
    fn definition_costs_price_the_request_section() {
        let dir = tempfile::tempdir().unwrap();
        let registry =
            crate::tools::Registry::builder(crate::tools::Workspace::local(dir.path()).unwrap())
                .build()
                .unwrap();
        let counter = crate::agent::Chars4;
        let costs = definition_costs(registry.specs(), &counter);
        assert_eq!(costs.tokenizer, "chars4");
        assert_eq!(costs.tools.len(), registry.specs().count());
        let read = registry.specs().find(|s| s.name == "read").unwrap();
        let entry = costs.tools.iter().find(|c| c.tool == "read").unwrap();
        assert_eq!(entry.description_tokens, counter.count(&read.description));
        assert_eq!(
            entry.definition_tokens,
            counter.count(&serde_json::to_string(&read.definition()).unwrap())
        );
        let all: Vec<_> = registry.specs().map(|s| s.definition()).collect();
        assert_eq!(
            costs.total_tokens,
            counter.count(&format!("tools:{}", serde_json::to_string(&all).unwrap()))
        );
    }
}
