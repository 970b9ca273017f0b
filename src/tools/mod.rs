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
//! registry.rs   lookup -> prepare -> normalise -> validate -> queue -> execute
//! args.rs       lenient normalisation + JSON Schema validation
//! truncate.rs   head/tail truncation and its facts
//! output.rs     bash's bounded output accumulator; ansi.rs cleans it (D12)
//! path.rs       normalisation, workspace confinement, "did you mean"
//! ops/          FsOps + ProcessOps traits; LocalFs, MemoryFs, LocalProcess
//! walk.rs      the grep/find walker: ignore rules, parallel, sorted
//! read.rs write.rs …   one tool each
//! ```

pub mod ansi;
pub mod args;
pub mod bash;
pub mod contract;
pub mod edit;
pub mod edit_diff;
pub mod edit_match;
pub mod error;
pub mod file_kind;
pub mod find;
mod fs_error;
pub mod grep;
pub mod ls;
pub mod mutation_queue;
pub mod ops;
pub mod output;
pub mod path;
pub mod read;
pub mod registry;
pub mod truncate;
pub mod walk;
pub mod write;

#[cfg(test)]
#[allow(dead_code, reason = "helpers shared by the tool tests")]
pub(crate) mod testutil;

use std::sync::Arc;

pub use contract::AnyTool;
pub use contract::Content;
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
pub use error::ToolError;
pub use ops::Workspace;
pub use registry::ALL_TOOL_NAMES;
pub use registry::CallArguments;
pub use registry::PreparedCall;
pub use registry::Preset;
pub use registry::Registry;
pub use registry::RegistryBuilder;
pub use registry::RegistryError;
pub use registry::ToolCall;

/// The built-in tools, one instance each.
pub fn builtin_tools() -> Vec<Arc<dyn AnyTool>> {
    vec![
        Arc::new(read::ReadTool),
        Arc::new(write::WriteTool),
        Arc::new(edit::EditTool),
        Arc::new(bash::BashTool),
        Arc::new(grep::GrepTool),
        Arc::new(find::FindTool),
        Arc::new(ls::LsTool),
    ]
}
