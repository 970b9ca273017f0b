//! The one integration-test binary: the CLI end to end, and the property
//! tests of the tool layer through its public API.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests panic on failure"
)]

mod agents;
mod bounds;
mod checks;
mod ci_recipes;
mod cli;
mod cli_support;
mod conditions;
mod confinement;
mod coverage;
mod definition_cost;
mod determinism;
mod doc_references;
mod docs_audit;
mod first_hours;
mod fuzz;
mod hostile_files;
mod hostile_mcp;
mod html_report;
mod lab;
mod layering;
mod lifecycle;
mod loading;
mod mcp;
mod mcp_client;
mod mcp_client_side;
mod mcp_scenarios;
mod mcp_server;
mod mcp_toolkit;
mod properties;
mod replay;
mod replay_codex;
mod replay_reads;
mod reports;
mod robustness;
mod run;
mod sandbox;
mod sandbox_run;
mod selection;
mod serve_model;
mod starter;
mod terminal;
mod test_helpers;
mod xsd;
