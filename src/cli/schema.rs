//! `harness schema [--suite | --report]`: the JSON Schema of the scenario
//! format (or of `harness.yaml`), generated from the same types the loader
//! uses, with the loader's structural rules stated in it. It describes one
//! document: each document of a multi-document file is validated on its
//! own (docs/scenarios.md). `--report` prints the schema of `run.json`,
//! generated from the types the report is written from.

use clap::Args;

use crate::exit;
use crate::report::json::RunReport;
use crate::scenario::model::ScenarioDoc;
use crate::scenario::model::SuiteDoc;

/// Flags of `harness schema`.
#[derive(Debug, Args)]
pub(super) struct SchemaArgs {
    /// Print the schema of harness.yaml instead of a scenario's.
    #[arg(long, conflicts_with = "report")]
    suite: bool,
    /// Print the schema of the run report (run.json) instead of a scenario's.
    #[arg(long)]
    report: bool,
}

pub(super) fn run(args: SchemaArgs) -> u8 {
    let schema = if args.suite {
        schemars::schema_for!(SuiteDoc)
    } else if args.report {
        schemars::schema_for!(RunReport)
    } else {
        schemars::schema_for!(ScenarioDoc)
    };
    match serde_json::to_string_pretty(&schema) {
        Ok(text) => {
            println!("{}", super::output::json_text(&text));
            exit::SUCCESS
        }
        Err(err) => super::common::usage_error(err),
    }
}
