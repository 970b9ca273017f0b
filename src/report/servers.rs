//! A run's MCP servers in their authors' terms: one line (console) or row
//! (summary.md) per server with the calls the scenarios sent it, how it
//! answered them and what its tool definitions cost, from
//! [`stats::per_server`]. Nothing here for a run without servers.

use std::fmt::Write as _;

use crate::mcp::client::visible_text;
use crate::run::RunSummary;
use crate::run::stats;
use crate::run::stats::ServerStats;

/// `server memory (mcp-server-memory 0.6.3): 14 calls in 5 scenarios, 3
/// error results (1 a JSON-RPC error), results 1234 tokens, tool
/// definitions 561 tokens per scenario`, one per server, sorted by name.
pub(crate) fn console_lines(summary: &RunSummary) -> Vec<String> {
    stats::per_server(summary)
        .iter()
        .map(console_line)
        .collect()
}

fn console_line(s: &ServerStats) -> String {
    let mut parts = vec![format!(
        "{} in {}",
        count(s.calls, "call"),
        count(s.scenarios, "scenario")
    )];
    let mut errors = count(s.error_results, "error result");
    match s.jsonrpc_errors {
        0 => {}
        n if n == s.error_results && n == 1 => errors.push_str(" (a JSON-RPC error)"),
        n if n == s.error_results => errors.push_str(" (all JSON-RPC errors)"),
        1 => errors.push_str(" (1 a JSON-RPC error)"),
        n => errors.push_str(&format!(" ({n} JSON-RPC errors)")),
    }
    parts.push(errors);
    parts.push(format!("results {} tokens", s.result_tokens));
    if let Some(definitions) = definitions(s) {
        parts.push(format!(
            "tool definitions {definitions} tokens per scenario"
        ));
    }
    if s.failed_starts > 0 {
        parts.push(format!(
            "did not start in {}",
            count(s.failed_starts, "scenario")
        ));
    }
    if s.ended_early > 0 {
        parts.push(format!(
            "ended early in {}",
            count(s.ended_early, "scenario")
        ));
    }
    let what = s
        .server
        .as_deref()
        .map(|server| format!(" ({})", visible_text(server)))
        .unwrap_or_default();
    format!(
        "server {}{what}: {}",
        visible_text(&s.name),
        parts.join(", ")
    )
}

/// What its tool definitions cost in a scenario: `561`, or `387 to 561`
/// when scenarios activated different tools (console, summary.md and
/// index.html alike).
pub(crate) fn definitions(s: &ServerStats) -> Option<String> {
    match (s.definition_tokens_min, s.definition_tokens_max) {
        (Some(min), Some(max)) if min == max => Some(min.to_string()),
        (Some(min), Some(max)) => Some(format!("{min} to {max}")),
        _ => None,
    }
}

fn count(n: u64, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// The `### MCP servers` table of summary.md, each text cell through
/// `cell`; empty for a run without servers.
pub(crate) fn markdown(summary: &RunSummary, cell: impl Fn(&str) -> String) -> String {
    let servers = stats::per_server(summary);
    if servers.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "### MCP servers\n\n\
         | server | scenarios | calls | error results | JSON-RPC errors | result tokens | tool definitions per scenario | did not start | ended early |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for s in &servers {
        let name = match &s.server {
            Some(server) => format!("{} ({})", cell(&s.name), cell(server)),
            None => cell(&s.name),
        };
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {} |",
            s.scenarios,
            s.calls,
            s.error_results,
            s.jsonrpc_errors,
            s.result_tokens,
            definitions(s).unwrap_or_else(|| "-".to_owned()),
            s.failed_starts,
            s.ended_early,
        );
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::run::ScenarioOutcome;
    use crate::run::Status;
    use crate::run::servers::ServerOutcome;

    fn scenario(name: &str, servers: Vec<ServerOutcome>) -> ScenarioOutcome {
        let mut outcome = ScenarioOutcome::empty(name, "s.yaml", &[], Status::Passed);
        outcome.servers = servers;
        outcome
    }

    fn memory(calls: u64, errors: u64, rpc: u64, tokens: u64, defs: u64) -> ServerOutcome {
        ServerOutcome {
            name: "memory".to_owned(),
            transport: "stdio".to_owned(),
            server_name: Some("memory-server".to_owned()),
            server_version: Some("0.6.3".to_owned()),
            calls,
            error_results: errors,
            jsonrpc_errors: rpc,
            result_tokens: tokens,
            definition_tokens: Some(defs),
            ..ServerOutcome::default()
        }
    }

    fn summary() -> RunSummary {
        let broken = ServerOutcome {
            name: "b\u{1b}[2Jad".to_owned(),
            transport: "stdio".to_owned(),
            error: Some("program `nope` not found".to_owned()),
            ..ServerOutcome::default()
        };
        RunSummary {
            scenarios: vec![
                scenario("one", vec![memory(3, 1, 1, 40, 561), broken]),
                scenario("two", vec![memory(2, 2, 0, 12, 387)]),
                scenario("plain", Vec::new()),
            ],
            ..RunSummary::default()
        }
    }

    #[test]
    fn each_server_is_summed_over_its_scenarios_in_its_authors_terms() {
        assert_eq!(
            console_lines(&summary()),
            [
                "server b␛[2Jad: 0 calls in 1 scenario, 0 error results, results 0 tokens, \
                 did not start in 1 scenario",
                "server memory (memory-server 0.6.3): 5 calls in 2 scenarios, 3 error results \
                 (1 a JSON-RPC error), results 52 tokens, tool definitions 387 to 561 tokens per scenario",
            ]
        );
        assert_eq!(
            markdown(&summary(), |t| format!("`{t}`")),
            "### MCP servers\n\n\
             | server | scenarios | calls | error results | JSON-RPC errors | result tokens | tool definitions per scenario | did not start | ended early |\n\
             |---|---:|---:|---:|---:|---:|---:|---:|---:|\n\
             | `b\u{1b}[2Jad` | 1 | 0 | 0 | 0 | 0 | - | 1 | 0 |\n\
             | `memory` (`memory-server 0.6.3`) | 2 | 5 | 3 | 1 | 52 | 387 to 561 | 0 | 0 |\n\n"
        );
    }

    #[test]
    fn a_run_without_servers_says_nothing_of_them() {
        let plain = RunSummary {
            scenarios: vec![scenario("plain", Vec::new())],
            ..RunSummary::default()
        };
        assert_eq!(console_lines(&plain), Vec::<String>::new());
        assert_eq!(markdown(&plain, str::to_owned), "");
    }

    #[test]
    fn all_errors_being_json_rpc_errors_is_said_once() {
        let only = RunSummary {
            scenarios: vec![scenario("one", vec![memory(4, 4, 4, 9, 100)])],
            ..RunSummary::default()
        };
        assert_eq!(
            console_lines(&only),
            [
                "server memory (memory-server 0.6.3): 4 calls in 1 scenario, 4 error results \
              (all JSON-RPC errors), results 9 tokens, tool definitions 100 tokens per scenario"
            ]
        );
    }
}
