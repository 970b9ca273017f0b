//! `harness schema [--suite]`: the JSON Schema of the scenario format (or
//! of `harness.yaml`), generated from the same types the loader uses, with
//! the loader's structural rules stated in it. It describes one document:
//! each document of a multi-document file is validated on its own
//! (docs/scenarios.md).

use clap::Args;

use crate::exit;
use crate::scenario::model::ScenarioDoc;
use crate::scenario::model::SuiteDoc;

/// Flags of `harness schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Print the schema of harness.yaml instead of a scenario's.
    #[arg(long)]
    suite: bool,
}

pub fn run(args: SchemaArgs) -> u8 {
    let schema = if args.suite {
        schemars::schema_for!(SuiteDoc)
    } else {
        schemars::schema_for!(ScenarioDoc)
    };
    match serde_json::to_string_pretty(&schema) {
        Ok(text) => {
            println!("{text}");
            exit::SUCCESS
        }
        Err(err) => super::usage_error(err),
    }
}
