//! `harness tools [--json] [--tokens [--tokenizer NAME]] [--check] [--mcp CMD [ARGS…]]`.
//!
//! With `--mcp`, the definitions are an MCP server's: the command is
//! started in the current directory (as a scenario's server is, with the
//! minimal environment), its `tools/list` read, and the server stopped.
//! `--check` audits the definitions (`tools_check.rs`): an MCP server's,
//! or without `--mcp` those `harness mcp` serves.

use clap::Args;
use rmcp::model::Tool;

use crate::exit;
use crate::mcp::client::server_tool_spec;
use crate::tools::ToolSpec;
use crate::tools::Workspace;
use crate::tools::show_name;

/// Flags of `harness tools`.
#[derive(Debug, Args)]
pub(super) struct ToolsArgs {
    /// Print JSON: an array of {name, description, parameters}.
    #[arg(long)]
    json: bool,
    /// Active tools: a preset (coding, readonly, all) or a comma list.
    #[arg(long, value_name = "TOOLS")]
    tools: Option<String>,
    /// Print what each definition costs in tokens (description, schema,
    /// the whole definition) and the tool section of a request in total.
    #[arg(long)]
    tokens: bool,
    /// Token counter for --tokens and --check: o200k (default), cl100k or
    /// chars4.
    #[arg(long, value_name = "NAME", default_value = "o200k")]
    tokenizer: String,
    /// Audit the definitions: what known MCP clients reject or mishandle,
    /// tool by tool, and their token cost (docs/mcp.md); exit 1 when a
    /// finding is an error. Without --mcp, the tools `harness mcp` serves.
    #[arg(long, conflicts_with = "tokens")]
    check: bool,
    /// With --check: the most tokens the definitions may cost together
    /// (more is an error).
    #[arg(long, value_name = "N", requires = "check")]
    max_definition_tokens: Option<u64>,
    /// With --check: the name the server is registered under in a client
    /// (default: the file name of the --mcp command; `harness` without it).
    #[arg(long, value_name = "NAME", requires = "check")]
    server_name: Option<String>,
    /// An MCP server's tools instead of the built-in ones: the command
    /// and its arguments (everything after --mcp), started in the current
    /// directory.
    #[arg(
        long,
        value_name = "CMD",
        num_args = 1..,
        allow_hyphen_values = true,
        trailing_var_arg = true,
        conflicts_with = "tools"
    )]
    mcp: Vec<String>,
    /// The sandbox the --mcp server starts in (writes in the current
    /// directory and a private TMPDIR, the network kept, nothing it starts
    /// outlives the listing).
    #[command(flatten)]
    sandbox: super::sandbox::SandboxFlags,
}

pub(super) fn run(args: ToolsArgs) -> u8 {
    let (definitions, specs): (Vec<Tool>, Vec<ToolSpec>) = if args.mcp.is_empty() {
        let root = std::env::temp_dir();
        let workspace = match Workspace::local(&root) {
            Ok(ws) => ws,
            Err(err) => return super::common::usage_error(err),
        };
        match super::common::registry(workspace, args.tools.as_deref()) {
            Ok(registry) => (
                crate::mcp::tool_definitions(&registry),
                registry.specs().cloned().collect(),
            ),
            Err(err) => return super::common::usage_error(err),
        }
    } else {
        match super::common::server_tools(&args.mcp, None, args.sandbox) {
            Ok(tools) => {
                let specs = tools.iter().map(|t| server_tool_spec(t, "")).collect();
                (tools, specs)
            }
            Err(err) => {
                eprintln!("error: {err}");
                return exit::FAILED;
            }
        }
    };
    if args.check {
        let server = args.server_name.clone().unwrap_or_else(|| {
            args.mcp.first().map_or_else(
                || "harness".to_owned(),
                |program| {
                    std::path::Path::new(program)
                        .file_name()
                        .map_or_else(|| program.clone(), |n| n.to_string_lossy().into_owned())
                },
            )
        });
        return super::tools_check::run(&super::tools_check::Check {
            server: &server,
            tools: &definitions,
            specs: &specs,
            tokenizer: &args.tokenizer,
            budget: args.max_definition_tokens,
            json: args.json,
        });
    }
    if args.tokens {
        return print_costs(&specs, &args);
    }
    if args.json {
        let definitions: Vec<_> = specs.iter().map(ToolSpec::definition).collect();
        match serde_json::to_string_pretty(&definitions) {
            Ok(json) => println!("{}", super::output::json_text(&json)),
            Err(err) => return super::common::usage_error(err),
        }
        return exit::SUCCESS;
    }
    // Names (a server's among them) are shown on one line, their control
    // characters as pictures; descriptions are text.
    let name = |text: &str| show_name(text.as_bytes()).into_owned();
    for spec in &specs {
        println!(
            "{} ({}, {:?})",
            name(&spec.name),
            name(&spec.label),
            spec.execution_mode
        );
        println!("  {}", spec.description);
        if let Some(props) = spec
            .parameters
            .get("properties")
            .and_then(|p| p.as_object())
        {
            let required: Vec<&str> = spec
                .parameters
                .get("required")
                .and_then(|r| r.as_array())
                .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
                .unwrap_or_default();
            for (property, schema) in props {
                let kind = schema.get("type").and_then(|t| t.as_str()).unwrap_or("any");
                let marker = if required.contains(&property.as_str()) {
                    ""
                } else {
                    "?"
                };
                let doc = schema
                    .get("description")
                    .and_then(|d| d.as_str())
                    .unwrap_or("");
                println!("    {}{marker}: {}  {doc}", name(property), name(kind));
            }
        }
        println!();
    }
    exit::SUCCESS
}

fn print_costs(specs: &[ToolSpec], args: &ToolsArgs) -> u8 {
    let tokens = match super::common::tokenizer(&args.tokenizer) {
        Ok(t) => t,
        Err(err) => return super::common::usage_error(format!("--tokenizer: {err}")),
    };
    let costs = crate::run::stats::definition_costs(specs, tokens.as_ref());
    if args.json {
        match serde_json::to_string_pretty(&costs) {
            Ok(json) => println!("{}", super::output::json_text(&json)),
            Err(err) => return super::common::usage_error(err),
        }
        return exit::SUCCESS;
    }
    let names: Vec<String> = costs
        .tools
        .iter()
        .map(|c| show_name(c.tool.as_bytes()).into_owned())
        .collect();
    let width = names
        .iter()
        .map(|name| name.chars().count())
        .chain([5])
        .max()
        .unwrap_or(5);
    println!(
        "{:<width$}  {:>11}  {:>6}  {:>10}",
        "tool", "description", "schema", "definition"
    );
    for (c, name) in costs.tools.iter().zip(&names) {
        println!(
            "{:<width$}  {:>11}  {:>6}  {:>10}",
            name, c.description_tokens, c.schema_tokens, c.definition_tokens
        );
    }
    println!(
        "{:<width$}  {:>11}  {:>6}  {:>10}",
        "total",
        costs
            .tools
            .iter()
            .map(|c| c.description_tokens)
            .sum::<u64>(),
        costs.tools.iter().map(|c| c.schema_tokens).sum::<u64>(),
        costs.total_tokens
    );
    println!(
        "\n{} tokenizer; the total is the tool section of a request as sent (`tools:` and the \
         definitions as one JSON array), which every request carries",
        costs.tokenizer
    );
    exit::SUCCESS
}
