//! `harness`: a production-grade tool layer for coding agents, and a
//! headless batch evaluation harness around it.
//!
//! ```text
//! base      what every layer shares: `${var}` expansion, bounds, signals,
//!           panic isolation, a task aborted on drop
//! tools     the real tool layer: contract, registry, workspace (path
//!           policy over pluggable I/O), truncation, argument normalisation
//!           + validation, per-file mutation queue, the seven tools, the
//!           kernel sandbox of the programs it starts
//! mcp       the registry served over the Model Context Protocol (rmcp),
//!           and the client of any MCP server
//! agent     messages, the Provider trait, the agent loop, the faux provider,
//!           the presentation of paths to the model; the faux script served
//!           over HTTP in four wire formats to real agents, their profiles
//! scenario  the file format: YAML, located errors, the model, loading
//! judge     every check, on a finished transcript (and the workspace's
//!           files); figures, tally, coverage, replay drift
//! run       discovery, the environment (workspaces, git, faults),
//!           settings and gates, the runner, concurrent execution
//! report    console, JSON, JUnit XML, CSV, Markdown, HTML; baselines,
//!           comparisons, gate verdicts, writing the report files
//! import    recorded sessions of real agents turned into scenarios
//! cli       clap commands; the only place that prints or picks an exit code
//! ```
//!
//! Each layer uses only the layers above it (docs/architecture.md). [`tools`] is the embeddable
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
