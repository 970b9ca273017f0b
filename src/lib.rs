//! `harness`: a production-grade tool layer for coding agents, and a
//! headless batch evaluation harness around it.
//!
//! ```text
//! tools     the real tool layer: contract, registry, workspace (path
//!           policy over pluggable I/O), truncation, argument normalisation
//!           + validation, per-file mutation queue, the seven tools (search/,
//!           edit/ and bash/ in folders of their own)
//! mcp       the registry served over the Model Context Protocol (rmcp)
//! agent     messages, the Provider trait, the agent loop, the faux provider,
//!           the presentation of paths to the model; the faux script served
//!           over HTTP in four wire formats to real agents, their profiles
//! scenario  the YAML model, located errors, workspaces, figures, checks,
//!           snapshots
//! run       discovery, filters, partitions, the gate language, the runner
//!           builder, concurrent execution, statistics
//! report    console, JSON, JUnit XML, CSV, Markdown; baselines, comparisons
//!           and gate verdicts
//! cli       clap commands: run, check, list, call, tools, schema, report
//! ```
//!
//! Each layer uses only the layers above it. [`tools`] is the embeddable
//! library; it knows nothing of scenarios or models. The default feature
//! `cli` builds every layer; without it (`default-features = false`) the
//! library is [`tools`] alone.
//!
//! One call through the registry, as an agent loop makes it:
//!
//! ```
//! use harness::tools::{CancellationToken, Registry, ToolCall, UpdateSink, Workspace};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("hello.txt"), "one\ntwo\n")?;
//! let registry = Registry::builder(Workspace::local(dir.path())?).build()?;
//! let call = ToolCall::new("call_1", "read", serde_json::json!({"path": "hello.txt"}));
//! let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! let result = runtime.block_on(registry.dispatch(
//!     &call,
//!     CancellationToken::new(),
//!     UpdateSink::discard(),
//! ));
//! assert!(!result.is_error);
//! assert_eq!(result.text(), "one\ntwo\n");
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

#[cfg(feature = "cli")]
pub mod agent;
pub(crate) mod base;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "cli")]
pub mod exit;
#[cfg(feature = "cli")]
pub(crate) mod import;
#[cfg(feature = "cli")]
pub(crate) mod judge;
#[cfg(feature = "cli")]
pub mod mcp;
#[cfg(feature = "cli")]
pub(crate) mod report;
#[cfg(feature = "cli")]
pub mod run;
#[cfg(feature = "cli")]
pub(crate) mod scenario;
pub mod tools;
