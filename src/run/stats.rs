//! Statistics over a run: per-tool and per-MCP-server aggregates, and what the tool
//! definitions themselves cost (per tool for `harness tools --tokens`, per
//! scenario and per MCP server for `definition_tokens` in `run.json`).
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
use super::outcome::ScenarioOutcome;

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

/// One MCP server's figures across a run, in its author's terms: the
/// calls the scenarios sent it, how it answered them, and what its tool
/// definitions cost. Servers are told apart by their name in the
/// scenarios.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct ServerStats {
    /// Its name in the scenarios (`servers:`).
    pub name: String,
    /// What it says it is (`serverInfo`'s name and version), from the
    /// first scenario it started in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// Scenarios it was a server of.
    pub scenarios: u64,
    /// Of those, the ones it did not start in.
    pub failed_starts: u64,
    /// Of those, the ones it ended in before it was asked to stop.
    pub ended_early: u64,
    /// Tool calls sent to it.
    pub calls: u64,
    /// Calls it answered with an error (`isError`, a JSON-RPC error) or
    /// did not answer.
    pub error_results: u64,
    /// Of those, JSON-RPC errors.
    pub jsonrpc_errors: u64,
    /// Tokens of its answers, as the model read them.
    pub result_tokens: u64,
    /// The smallest and largest `definition_tokens` it had in a scenario
    /// (the same when every scenario activated the same tools); absent
    /// when its tools were never set up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition_tokens_min: Option<u64>,
    /// See `definition_tokens_min`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition_tokens_max: Option<u64>,
}

/// Per-server figures over every scenario of the run, sorted by name.
pub(crate) fn per_server(summary: &RunSummary) -> Vec<ServerStats> {
    let mut results: BTreeMap<&str, ServerStats> = BTreeMap::new();
    for server in summary.scenarios.iter().flat_map(|s| s.servers.iter()) {
        let stats = results.entry(&server.name).or_insert_with(|| ServerStats {
            name: server.name.clone(),
            ..ServerStats::default()
        });
        if stats.server.is_none() {
            stats.server = server.identity();
        }
        // Saturating: the figures may come from run.json files (a merge).
        stats.scenarios = stats.scenarios.saturating_add(1);
        stats.failed_starts = stats
            .failed_starts
            .saturating_add(u64::from(server.error.is_some()));
        stats.ended_early = stats
            .ended_early
            .saturating_add(u64::from(server.ended_early));
        stats.calls = stats.calls.saturating_add(server.calls);
        stats.error_results = stats.error_results.saturating_add(server.error_results);
        stats.jsonrpc_errors = stats.jsonrpc_errors.saturating_add(server.jsonrpc_errors);
        stats.result_tokens = stats.result_tokens.saturating_add(server.result_tokens);
        if let Some(tokens) = server.definition_tokens {
            stats.definition_tokens_min = Some(
                stats
                    .definition_tokens_min
                    .map_or(tokens, |m| m.min(tokens)),
            );
            stats.definition_tokens_max = Some(
                stats
                    .definition_tokens_max
                    .map_or(tokens, |m| m.max(tokens)),
            );
        }
    }
    results.into_values().collect()
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
    DefinitionCosts {
        tokenizer: tokens.name().to_owned(),
        tools,
        total_tokens: section_tokens(specs.iter().copied(), tokens),
    }
}

/// The tokens of the tool section of a request that carries `specs`, in
/// that order: the faux provider's tools part, priced; 0 without tools (a
/// request without tools has no tool section).
fn section_tokens<'a>(
    specs: impl IntoIterator<Item = &'a ToolSpec>,
    tokens: &dyn TokenCounter,
) -> u64 {
    let part = crate::agent::faux::tools_part(specs);
    if part.is_empty() {
        return 0;
    }
    tokens.count(&part)
}

/// What a scenario's tool definitions cost the model: `definition_tokens`
/// of its figures and of each of its MCP servers in `run.json`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ScenarioDefinitions {
    /// The tool section of each of its requests: every active tool,
    /// built-in ones and the servers' alike, in prompt order.
    pub total_tokens: u64,
    /// Each server (by its name in the scenario): the tool section of a
    /// request that carried only that server's active tools, in prompt
    /// order (0 when none of its tools is active).
    pub servers: Vec<(String, u64)>,
}

impl ScenarioDefinitions {
    /// The costs of `specs` (a scenario's active tools, in prompt order),
    /// whole and for each server of `servers` (its name and active tools'
    /// names), priced with `tokens`.
    pub(crate) fn of<'a>(
        specs: impl IntoIterator<Item = &'a ToolSpec>,
        servers: &[(String, Vec<String>)],
        tokens: &dyn TokenCounter,
    ) -> Self {
        let specs: Vec<&ToolSpec> = specs.into_iter().collect();
        let servers = servers
            .iter()
            .map(|(server, active)| {
                let own = specs
                    .iter()
                    .copied()
                    .filter(|spec| active.iter().any(|name| *name == spec.name));
                (server.clone(), section_tokens(own, tokens))
            })
            .collect();
        Self {
            total_tokens: section_tokens(specs, tokens),
            servers,
        }
    }

    /// Records the costs in `outcome`: its figures' `definition_tokens`,
    /// and each of its servers' (by name; a server not priced has none).
    pub(crate) fn record(&self, outcome: &mut ScenarioOutcome) {
        outcome.stats.figures.definition_tokens = self.total_tokens;
        for server in &mut outcome.servers {
            server.definition_tokens = self
                .servers
                .iter()
                .find(|(name, _)| *name == server.name)
                .map(|(_, tokens)| *tokens);
        }
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

    fn spec(name: &str, description: &str) -> ToolSpec {
        ToolSpec {
            name: name.to_owned().into(),
            label: name.to_owned().into(),
            description: description.to_owned(),
            prompt_snippet: String::new(),
            prompt_guidelines: Vec::new(),
            parameters: serde_json::json!({"type": "object"}),
            execution_mode: crate::tools::ExecutionMode::Parallel,
        }
    }

    /// A built-in tool and two of server `fx`'s; server `idle` has no
    /// active tool.
    fn scenario_specs() -> Vec<ToolSpec> {
        vec![
            spec("read", "Reads a file."),
            spec("fx_echo", "Echoes `text`."),
            spec("fx_fail", "Always an error result."),
        ]
    }

    fn scenario_servers() -> Vec<(String, Vec<String>)> {
        vec![
            ("fx".into(), vec!["fx_echo".into(), "fx_fail".into()]),
            ("idle".into(), Vec::new()),
        ]
    }

    #[test]
    fn a_scenario_prices_its_tool_section_and_each_servers_share() {
        let specs = scenario_specs();
        let costs = ScenarioDefinitions::of(&specs, &scenario_servers(), &crate::agent::Chars4);
        // chars4: the whole section is 255 characters, fx's alone 178.
        assert_eq!(
            costs,
            ScenarioDefinitions {
                total_tokens: 64,
                servers: vec![("fx".into(), 45), ("idle".into(), 0)],
            }
        );
        let fx_section = "tools:[{\"name\":\"fx_echo\",\"description\":\"Echoes `text`.\",\
                          \"parameters\":{\"type\":\"object\"}},{\"name\":\"fx_fail\",\
                          \"description\":\"Always an error result.\",\"parameters\":\
                          {\"type\":\"object\"}}]";
        assert_eq!(fx_section.len(), 178);
        // The total is the tool part of a request exactly as the faux
        // provider prices it.
        let request = crate::agent::provider::Request {
            system: "",
            messages: &[],
            tools: &specs,
        };
        let parts = crate::agent::faux::prompt_parts(&request);
        assert_eq!(parts.len(), 1);
        assert_eq!(costs.total_tokens, crate::agent::Chars4.count(&parts[0]));
        assert_eq!(
            costs.total_tokens,
            definition_costs(&specs, &crate::agent::Chars4).total_tokens
        );
    }

    #[test]
    fn a_longer_description_costs_more_and_only_where_it_is() {
        let mut specs = scenario_specs();
        specs[1]
            .description
            .push_str(" Use it to check that calls arrive as written.");
        let costs = ScenarioDefinitions::of(&specs, &scenario_servers(), &crate::agent::Chars4);
        assert_eq!(
            costs,
            ScenarioDefinitions {
                total_tokens: 76,
                servers: vec![("fx".into(), 56), ("idle".into(), 0)],
            }
        );
        let none = ScenarioDefinitions::of(&[], &[], &crate::agent::Chars4);
        assert_eq!(none, ScenarioDefinitions::default());
    }

    #[test]
    fn the_costs_are_recorded_in_the_figures_and_by_server() {
        let costs = ScenarioDefinitions {
            total_tokens: 64,
            servers: vec![("fx".into(), 45), ("idle".into(), 0)],
        };
        let server = |name: &str| crate::run::servers::ServerOutcome {
            name: name.into(),
            transport: "stdio".into(),
            ..Default::default()
        };
        let mut outcome = ScenarioOutcome::empty("s", "s.yaml", &[], Status::Passed);
        outcome.servers = vec![server("idle"), server("fx"), server("unpriced")];
        costs.record(&mut outcome);
        assert_eq!(outcome.stats.figures.definition_tokens, 64);
        assert_eq!(
            outcome
                .servers
                .iter()
                .map(|s| (s.name.as_str(), s.definition_tokens))
                .collect::<Vec<_>>(),
            [("idle", Some(0)), ("fx", Some(45)), ("unpriced", None)]
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
