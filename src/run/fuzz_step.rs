//! The tool a `fuzz` step is served as (`mcp:fuzz`): the server its
//! arguments name is sent its tools' adversarial calls by
//! [`crate::mcp::fuzz::run_on`], the generator and classification of
//! `harness fuzz`, through the scenario's running client. Its result
//! summarises the fuzz in text that is the same on every run (no
//! durations): a line per tool, its failures under it (bounded, the rest
//! counted), the verdict; an error result when the fuzz failed. A server
//! that went down during the fuzz is stopped, not restarted, so the
//! scenario's later steps find it ended.
//!
//! The tools a step names are checked when the scenario's servers have
//! started ([`unknown_tools`]), the first moment they are known.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use serde_json::json;

use crate::agent::FauxArgs;
use crate::agent::FauxStep;
use crate::judge::Failure;
use crate::mcp::client::McpClient;
use crate::mcp::fuzz;
use crate::scenario::Scenario;
use crate::scenario::client::FUZZ;
use crate::tools::ToolContext;
use crate::tools::ToolError;
use crate::tools::ToolOutput;
use crate::tools::truncate::format_number;

/// What a step asks, read back from its call's arguments.
struct Asked {
    server: String,
    options: fuzz::Options,
}

fn asked(args: &Value) -> Result<Asked, String> {
    let server = args
        .get("server")
        .and_then(Value::as_str)
        .ok_or("the fuzz step's arguments name no `server`")?;
    let number = |key: &str| {
        args.get(key)
            .and_then(Value::as_u64)
            .ok_or(format!("the fuzz step's `{key}` is not a whole number"))
    };
    let cases = number("cases")?;
    let timeout_ms = number("timeout_ms")?;
    if !(1..=fuzz::generate::MAX_CASES as u64).contains(&cases)
        || !(1..=fuzz::MAX_TIMEOUT_SECS * 1000).contains(&timeout_ms)
    {
        return Err("the fuzz step's `cases` or `timeout_ms` is out of range".to_owned());
    }
    let tools = match args.get("tools") {
        None => Vec::new(),
        Some(Value::Array(names)) => names
            .iter()
            .map(|n| n.as_str().map(str::to_owned))
            .collect::<Option<Vec<String>>>()
            .ok_or("the fuzz step's `tools` is not a list of names")?,
        Some(_) => return Err("the fuzz step's `tools` is not a list of names".to_owned()),
    };
    Ok(Asked {
        server: server.to_owned(),
        options: fuzz::Options {
            seed: number("seed")?,
            cases: usize::try_from(cases).unwrap_or(fuzz::generate::MAX_CASES),
            timeout: Duration::from_millis(timeout_ms),
            tools,
            max_restarts: 0,
        },
    })
}

/// The sentence for `missing`, tools of a step that `server` lacks.
fn missing_message(server: &str, missing: &[String], client: &McpClient) -> String {
    let missing: Vec<String> = missing.iter().map(|m| format!("`{m}`")).collect();
    format!(
        "MCP server `{server}` has no tool {}; its tools are {}",
        missing.join(", "),
        client.tool_names()
    )
}

/// The first `fuzz` step of `scenario` naming a tool its server lacks, as
/// a failure of the scenario's start.
pub(super) fn unknown_tools(
    scenario: &Scenario,
    clients: &BTreeMap<String, Arc<McpClient>>,
) -> Option<Failure> {
    let calls = scenario.script.steps.iter().flat_map(|step| match step {
        FauxStep::Calls(calls) => calls.as_slice(),
        _ => &[],
    });
    for call in calls.filter(|c| c.name == FUZZ) {
        let FauxArgs::Json(args) = &call.args else {
            continue;
        };
        let Ok(asked) = asked(args) else { continue };
        let Some(client) = clients.get(&asked.server) else {
            continue;
        };
        if let Err(missing) = fuzz::selected(client.tools(), &asked.options.tools) {
            let label = scenario.call_labels.get(&call.id);
            return Some(Failure::new(
                label.map(String::as_str),
                "tools",
                format!(
                    "MCP server `{}` has every tool the fuzz step names",
                    asked.server
                ),
                missing_message(&asked.server, &missing, client),
            ));
        }
    }
    None
}

/// Runs the fuzz a step's `args` ask for against the scenario's running
/// servers.
pub(super) async fn execute(
    clients: &BTreeMap<String, Arc<McpClient>>,
    args: &Value,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let asked = asked(args).map_err(ToolError::fatal)?;
    let server = asked.server.as_str();
    let Some(client) = clients.get(server) else {
        return Err(ToolError::failed(format!(
            "MCP server `{server}` is not running in this scenario."
        )));
    };
    let options = &asked.options;
    let tools = fuzz::selected(client.tools(), &options.tools)
        .map_err(|missing| ToolError::failed(missing_message(server, &missing, client)))?;
    if !client.is_running() {
        return Err(ToolError::failed(format!(
            "MCP server `{server}` is not running: it ended before the fuzz step, so there is \
             nothing to fuzz."
        )));
    }
    let report = fuzz::run_on(&tools, options, client, &ctx.cancel).await;
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::cancelled());
    }
    let down = !client.is_running();
    let text = summary(server, tools.len(), &report, options, down);
    let details = details(server, &report, options, down);
    if report.passed() {
        Ok(ToolOutput {
            details: Some(details),
            ..ToolOutput::text(text)
        })
    } else {
        Err(ToolError::failed_with(text, details))
    }
}

/// The result's text: the same on every run of the same server.
fn summary(
    server: &str,
    tools: usize,
    report: &fuzz::Report,
    options: &fuzz::Options,
    down: bool,
) -> String {
    let mut lines = vec![format!(
        "fuzz of MCP server `{server}`: {tools} tool(s), at most {} call(s) each, seed {}, \
         timeout {} s",
        options.cases,
        options.seed,
        format_number(options.timeout.as_secs_f64())
    )];
    lines.extend(fuzz::text::lines(
        report,
        " (`harness fuzz --json FILE` lists them all)",
    ));
    lines.push(format!(
        "{} call(s) and {} ping(s)",
        report.calls, report.pings
    ));
    if down {
        lines.push(format!(
            "MCP server `{server}` went down during the fuzz and is not restarted: the steps \
             after this one find it ended"
        ));
    }
    lines.push(fuzz::text::verdict(report));
    lines.join("\n")
}

/// The result's details: each tool's tally and the failures listed.
fn details(server: &str, report: &fuzz::Report, options: &fuzz::Options, down: bool) -> Value {
    let listed: Vec<Value> = report
        .tools
        .iter()
        .flat_map(|tool| {
            report
                .failures
                .iter()
                .filter(|f| f.tool == tool.name)
                .take(fuzz::text::SHOWN_FAILURES)
        })
        .map(fuzz::text::failure_json)
        .collect();
    fuzz::text::report_json(
        server,
        report,
        options,
        json!({
            "failures": listed,
            "failure_count": report.failures.len(),
            "internal_errors_on_plausible_input": report.internal_errors_on_plausible_input.len(),
            "stopped_early": report.stopped_early,
            "server_down": down,
            "calls": report.calls,
            "pings": report.pings,
        }),
    )
}
