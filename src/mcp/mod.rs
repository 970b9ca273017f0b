//! The MCP layer: the tool registry served over the Model Context
//! Protocol, so that any MCP client (Claude Code, Codex, Gemini CLI,
//! Cursor, the MCP Inspector) calls the same tools, with the same
//! results, as the agent loop does in-process.
//!
//! It uses only the tool layer, through its public API, and the official
//! Rust SDK (`rmcp`) for the protocol: both eras of it, the `initialize`
//! handshake (2025-11-25 and earlier) and the stateless 2026-07-28
//! revision (`server/discover`).
//!
//! ```text
//! listing.rs  tools/list: the active tools in prompt order, their
//!             schemas as `harness tools --json` prints them, annotations
//! results.rs  a ToolResult as a CallToolResult: content as the model gets
//!             it, isError, details under `_meta["harness/details"]`
//! progress.rs bash's streamed updates as notifications/progress
//! arrival.rs  the transport wrapper that prepares each tools/call in the
//!             order it arrived (the mutation queue's order) and notices
//!             the end of the input
//! lines.rs    the stdio framing: -32700 for a line that is not JSON,
//!             -32600 for JSON that is no message, a line on stderr each
//! logging.rs  logging/setLevel and notifications/message per session;
//!             text escaped and cut for stderr and messages
//! resources.rs the workspace's files as file:///{path} resources, listed
//!             by find and read by read
//! server.rs   McpServer (the ServerHandler) and one session's lifecycle
//! http.rs     `harness mcp --http`: Streamable HTTP at /mcp over hyper,
//!             Host/Origin checks, bounded sessions and connections
//! audit.rs    what known clients reject or mishandle in tool definitions
//! record.rs   the relay of `harness record`: a client's lines to a real
//!             server and back, unchanged, and the tools/calls noted
//! fuzz/       `harness fuzz`: adversarial calls from each tool's schema,
//!             sent as written, the answers sorted
//! client/     the other side: the harness as the client of any MCP tool
//!             server (a command over stdio, or a URL over Streamable
//!             HTTP), whose tools enter the registry like the built-ins
//! ```
//!
//! What a client gets is what the model gets in-process: the same
//! validation (rmcp validates nothing for a hand-written handler; the
//! registry does, as for `harness call`), the same texts and images, the
//! same truncation, the same mutation queue. docs/mcp.md is the user's
//! side of it.

mod arrival;
pub mod audit;
pub mod client;
pub mod fuzz;
pub mod http;
mod lines;
mod listing;
mod logging;
mod progress;
pub mod record;
mod resources;
mod results;
mod server;

pub use listing::MAX_RESULT_CHARS_META_KEY;
pub use listing::annotations;
pub use listing::tool_definitions;
pub use results::DETAILS_META_KEY;
pub use results::INTERNAL_ERROR_META_KEY;
pub use results::call_tool_result;
pub use server::EOF_GRACE;
pub use server::McpServer;
pub use server::SessionEnd;
