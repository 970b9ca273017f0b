//! The tool layer: the seven tools of a coding agent, and everything that
//! makes them safe and predictable to call.
//!
//! This layer knows nothing of scenarios, models or reports; any Rust agent
//! can embed it. A call goes through [`Registry::prepare`] (lookup, argument
//! preparation, lenient normalisation, JSON Schema validation, typed
//! arguments, a place in the per-file mutation queue) and then
//! [`PreparedCall::execute`] (the tool runs on its own task with a
//! [`ToolContext`]: workspace operations, limits, a cancellation token and
//! an update sink), and always ends in exactly one [`ToolResult`].
//!
//! ```text
//! registry.rs        lookup -> prepare -> normalise -> validate -> queue -> execute
//! contract.rs        Tool, ToolContext, ToolOutput, ToolResult, Limits
//! facts.rs           Facts: a result's typed facts (ErrorKind, ErrorClass,
//!                    the tool's details struct)
//! builtin.rs         the built-in tools' declared behaviours, and typed
//!                    facts read back from details JSON
//! args.rs            lenient normalisation + JSON Schema validation
//! task.rs            run_blocking: a tool's blocking work off the runtime
//! mutation_queue.rs  one queue per real path for write and edit
//! workspace.rs       Workspace: FsOps + ProcessOps + path policy + Scratch;
//!                    resolve / resolve_existing, the one way to a path
//! path.rs            normalisation, confinement, "did you mean"
//! visible.rs         control characters and names as tool output shows them
//! ops/               FsOps + ProcessOps traits; ConfinedFs, LocalFs,
//!                    MemoryFs, LocalProcess
//! truncate.rs        head/tail truncation and its facts
//! search/            ignore rules, the walker, globs; the grep and find tools
//! edit/              matching, messages, line endings, diffs; the edit tool
//! bash/              the bash tool, its output accumulator, ANSI cleaning (D12)
//! read.rs write.rs ls.rs   one tool each
//! ```
//!
//! Dependencies point one way: `ops` knows nothing of paths or
//! workspaces, `path` uses only `ops`, `workspace` bundles both, and the
//! tools use the workspace (and `search` for walking).
//!
//! The public surface is what an embedder needs: the registry, the
//! contract, the operations traits and their backends, [`Workspace`],
//! [`Limits`], the seven tools and their details structs, a result's typed
//! [`Facts`] ([`facts_of`]), and [`truncate`] (the truncation every tool
//! applies, for embedders that render output of their own, and whose
//! [`Truncation`](truncate::Truncation) facts appear in `details`). The
//! edit tool's matching engine is public as [`edit::matching`] for the
//! `edit` bench and for previews.

pub(crate) mod args;
mod bash;
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
mod read;
pub(crate) mod registry;
mod search;
mod task;
pub mod truncate;
mod visible;

#[cfg(feature = "cli")]
pub(crate) use visible::control_picture;
mod workspace;
mod write;

#[cfg(test)]
#[allow(dead_code, reason = "helpers shared by the tool tests")]
pub(crate) mod testutil;

pub use bash::BashDetails;
pub use bash::BashTool;
pub use builtin::TOOL_BEHAVIOURS;
pub use builtin::facts_of;
pub use builtin::parse_facts;
pub use contract::AnyTool;
pub use contract::Content;
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
pub use edit::EditDetails;
pub use edit::EditTool;
pub use error::ToolError;
pub use facts::EditRule;
pub use facts::ErrorClass;
pub use facts::ErrorKind;
pub use facts::Facts;
pub use facts::ToolDetails;
pub use ls::LsDetails;
pub use ls::LsTool;
pub use path::PathError;
pub use path::ResolvedPath;
pub use read::ImageDetails;
pub use read::OmittedReason;
pub use read::ReadDetails;
pub use read::ReadTool;
pub use registry::ALL_TOOL_NAMES;
pub use registry::CallArguments;
pub use registry::PreparedCall;
pub use registry::Preset;
pub use registry::Registry;
pub use registry::RegistryBuilder;
pub use registry::RegistryError;
pub use registry::ToolCall;
pub use registry::builtin_tools;
pub use search::find::FindDetails;
pub use search::find::FindTool;
pub use search::grep::GrepDetails;
pub use search::grep::GrepTool;
pub use workspace::BashConfig;
pub use workspace::Lookup;
pub use workspace::Scratch;
pub use workspace::ScratchNames;
pub use workspace::Workspace;
pub use write::WriteDetails;
pub use write::WriteTool;
