//! The tool layer: the seven tools of a coding agent, and everything that
//! makes them safe and predictable to call.
//!
//! This layer knows nothing of scenarios, models or reports; any Rust agent
//! can embed it, and built with `default-features = false` the crate is
//! this layer alone (docs/embedding.md in the repository).
//!
//! A call goes through [`Registry::prepare`] (lookup, argument
//! preparation, lenient normalisation, JSON Schema validation, typed
//! arguments, a place in the per-file mutation queue) and then
//! [`PreparedCall::execute`] (the tool runs on its own task with a
//! [`ToolContext`]: workspace operations, limits, a cancellation token and
//! an update sink), and always ends in exactly one [`ToolResult`], which
//! carries the call's id. [`Registry::dispatch`] does both for one call;
//! [`Registry::run_batch`] runs the calls of one model message by the
//! batch rules (prepared in order, run in parallel unless a tool is
//! [`ExecutionMode::Sequential`], one result per call in call order).
//!
//! What there is:
//!
//! - the registry: [`Registry`], [`RegistryBuilder`], [`Preset`],
//!   [`ToolCall`], [`PreparedCall`], [`PrepareError`], [`BatchEvent`],
//!   [`BatchResult`];
//! - the contract: [`Tool`] (typed arguments) and [`AnyTool`] (erased),
//!   [`ToolSpec`], [`ToolDefinition`], [`ToolContext`], [`ToolOutput`],
//!   [`ToolResult`], [`Content`], [`ToolUpdate`], [`UpdateSink`],
//!   [`ToolError`], [`Limits`], [`run_blocking`];
//! - the disk and processes: the [`ops`] traits ([`ops::FsOps`],
//!   [`ops::ProcessOps`]) and their backends ([`ConfinedFs`], [`LocalFs`],
//!   [`MemoryFs`], [`LocalProcess`]), and [`Workspace`], which adds the path
//!   policy (confinement to the root, the model's path habits);
//! - the seven tools ([`ReadTool`], [`WriteTool`], [`EditTool`],
//!   [`BashTool`], [`GrepTool`], [`FindTool`], [`LsTool`]), their argument
//!   types and their details structs;
//! - a result's typed [`Facts`] ([`facts_of`], [`ErrorKind`],
//!   [`ErrorClass`]), [`truncate`] (the truncation every tool applies) and
//!   [`edit::matching`] (the edit tool's matching engine, for previews).
//!
//! # Writing a tool
//!
//! A tool of one's own implements [`Tool`]: a [`ToolSpec`], typed
//! arguments (the registry validates them against the spec's schema
//! first), and `execute`. A tool that can take long must watch
//! `ctx.cancel` and return [`ToolError::cancelled`] when it fires; the
//! registry does not stop a tool that ignores it (only dropping the call's
//! future does). Blocking work goes through [`run_blocking`].
//!
//! [`Tool`]'s page has a whole tool, with cancellation, as an example.
//!
//! # The runtime
//!
//! The tools run on [Tokio](https://tokio.rs): call [`Registry::dispatch`],
//! [`PreparedCall::execute`] and [`Registry::run_batch`] from inside a Tokio
//! runtime with both the IO and the time driver
//! (`tokio::runtime::Builder::enable_all`); either flavour, current-thread
//! or multi-thread, will do. Outside a runtime they do not panic: the call
//! ends in an error result whose [`ToolResult::internal_error`] says so.
//! On a runtime without the IO driver (bash's pipes) or the time driver
//! (timeouts), the tool that needs it ends in an internal error naming
//! the missing driver. [`Registry::prepare`] needs no runtime.
//!
//! # Build profile
//!
//! grep's regex engines, read's image codecs and the confined file system
//! are slow unoptimised. Cargo's dev-profile settings of a dependency do
//! not carry over to the crate that depends on it, so an embedder's debug
//! builds should optimise them, as this crate's own `Cargo.toml` does:
//!
//! ```toml
//! [profile.dev.package.regex-automata]
//! opt-level = 2
//! [profile.dev.package.image]
//! opt-level = 2
//! [profile.dev.package.cap-primitives]
//! opt-level = 2
//! ```
//!
//! (the full list is in docs/embedding.md).

pub(crate) mod args;
mod bash;
mod batch;
mod builtin;
pub(crate) mod contract;
pub mod edit;
pub(crate) mod error;
pub(crate) mod facts;
pub(crate) mod file_kind;
pub(crate) mod fs_error;
mod image;
mod ls;
pub(crate) mod mutation_queue;
pub mod ops;
pub(crate) mod path;
pub(crate) mod place;
mod read;
pub(crate) mod registry;
mod search;
mod task;
pub mod truncate;
mod visible;

#[cfg(feature = "cli")]
pub(crate) use visible::control_picture;
#[cfg(feature = "cli")]
pub(crate) use visible::show_name;
mod workspace;
mod write;

#[cfg(test)]
#[allow(dead_code, reason = "helpers shared by the tool tests")]
pub(crate) mod testutil;

pub use serde_json::Value;
pub use tokio_util::sync::CancellationToken;

pub use bash::BashArgs;
pub use bash::BashDetails;
pub use bash::BashTool;
pub use batch::BatchEvent;
pub use batch::BatchResult;
pub use builtin::TOOL_BEHAVIOURS;
pub use builtin::facts_of;
pub use builtin::parse_facts;
pub use contract::AnyTool;
pub use contract::Content;
pub use contract::DEFAULT_GREP_TIMEOUT;
pub use contract::DEFAULT_MAX_LOG_BYTES;
pub use contract::ErasedArgs;
pub use contract::ExecutionMode;
pub use contract::Limits;
pub use contract::Tool;
pub use contract::ToolContext;
pub use contract::ToolDefinition;
pub use contract::ToolOutput;
pub use contract::ToolResult;
pub use contract::ToolSpec;
pub use contract::ToolUpdate;
pub use contract::UpdateSink;
pub use contract::priced_text_of;
pub use contract::text_of;
pub use edit::EditArgs;
pub use edit::EditDetails;
pub use edit::EditTool;
pub use error::CANCELLED_MESSAGE;
pub use error::ToolError;
pub use facts::EditRule;
pub use facts::ErrorClass;
pub use facts::ErrorKind;
pub use facts::Facts;
pub use facts::ToolDetails;
pub use fs_error::describe_exec_error;
pub use fs_error::describe_io_error;
pub use ls::LsArgs;
pub use ls::LsDetails;
pub use ls::LsTool;
pub use ops::ConfinedFs;
pub use ops::LocalFs;
pub use ops::LocalProcess;
pub use ops::MemoryFs;
pub use ops::sandbox::Network;
pub use ops::sandbox::Sandbox;
pub use ops::sandbox::SandboxPolicy;
pub use ops::sandbox::SandboxReport;
pub use path::PathError;
pub use path::ResolvedPath;
pub use read::ImageDetails;
pub use read::OmittedReason;
pub use read::ReadArgs;
pub use read::ReadDetails;
pub use read::ReadTool;
pub use registry::ALL_TOOL_NAMES;
pub use registry::CallArguments;
pub use registry::PrepareError;
pub use registry::PreparedCall;
pub use registry::Preset;
pub use registry::Registry;
pub use registry::RegistryBuilder;
pub use registry::RegistryError;
pub use registry::Router;
pub use registry::ToolCall;
pub use registry::builtin_tools;
pub use search::find::FindArgs;
pub use search::find::FindDetails;
pub use search::find::FindTool;
pub use search::grep::GrepArgs;
pub use search::grep::GrepDetails;
pub use search::grep::GrepTool;
pub use task::run_blocking;
pub use workspace::BashConfig;
pub use workspace::Lookup;
pub use workspace::Scratch;
pub use workspace::ScratchNames;
pub use workspace::Workspace;
pub use write::WriteArgs;
pub use write::WriteDetails;
pub use write::WriteTool;
