//! Scenarios served to real coding agents (docs/agents.md): which program
//! runs an agent (`launch`), the scenario's MCP servers given to it
//! (`mcp`), one scenario with its agent end to end
//! (`execute`), and what the agent sent read into the transcript the
//! judge reads (`transcript`).

pub(crate) mod execute;
pub(crate) mod launch;
mod mcp;
pub(crate) mod transcript;
