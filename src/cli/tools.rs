//! `harness tools [--json]`.

use clap::Args;

use crate::exit;
use crate::tools::Registry;
use crate::tools::Workspace;

/// Flags of `harness tools`.
#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// Print JSON: an array of {name, description, parameters}.
    #[arg(long)]
    json: bool,
    /// Active tools: a preset (coding, readonly, all) or a comma list.
    #[arg(long, value_name = "TOOLS")]
    tools: Option<String>,
}

pub fn run(args: ToolsArgs) -> u8 {
    let root = std::env::temp_dir();
    let workspace = match Workspace::local(&root) {
        Ok(ws) => ws,
        Err(err) => return super::usage_error(err),
    };
    let builder = super::tool_selection(Registry::builder(workspace), args.tools.as_deref());
    let registry = match builder.build() {
        Ok(registry) => registry,
        Err(err) => return super::usage_error(format!("--tools: {err}")),
    };
    if args.json {
        let definitions: Vec<_> = registry.specs().map(|s| s.definition()).collect();
        match serde_json::to_string_pretty(&definitions) {
            Ok(json) => println!("{json}"),
            Err(err) => return super::usage_error(err),
        }
        return exit::SUCCESS;
    }
    for spec in registry.specs() {
        println!("{} ({}, {:?})", spec.name, spec.label, spec.execution_mode);
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
            for (name, schema) in props {
                let kind = schema.get("type").and_then(|t| t.as_str()).unwrap_or("any");
                let marker = if required.contains(&name.as_str()) {
                    ""
                } else {
                    "?"
                };
                let doc = schema
                    .get("description")
                    .and_then(|d| d.as_str())
                    .unwrap_or("");
                println!("    {name}{marker}: {kind}  {doc}");
            }
        }
        println!();
    }
    exit::SUCCESS
}
