//! The MCP client: the harness as the client of any MCP tool server, so
//! a scenario can call a server's tools as it calls the built-in ones.
//!
//! ```text
//! process.rs  a server's process: PATH lookup, working directory, its own
//!             process group, a minimal environment, stderr drained into a
//!             bounded tail, the exit watched, the stop (grace, SIGTERM,
//!             SIGKILL to the group)
//! stdio.rs    the stdio transport: newline-delimited JSON-RPC, junk lines
//!             counted and ignored, an answer that cannot be read made an
//!             error that says why
//! requests.rs a server's requests to the client (sampling, elicitation,
//!             roots) answered from what the scenario declared, advertised
//!             only when declared; the others refused in plain words
//! ids.rs      answers matched to requests by exact id, type included
//! answers.rs  a server's answer as a ToolResult: content, isError,
//!             structuredContent and _meta in details, harness mcp's own
//!             details, JSON-RPC errors
//! auth.rs     OAuth client credentials (machine to machine) for a server
//!             reached by URL: discovery, the token, no secret in Debug
//! checks.rs   resources/list, resources/read, prompts/list, prompts/get
//!             as results whose text is the answer's JSON (check steps)
//! session.rs  McpClient: start (a command or a URL over Streamable HTTP),
//!             initialize and tools/list within the start-up timeout,
//!             concurrent calls with a call timeout and cancellation, a
//!             server that exits mid-call, stop; session/raw.rs: a request
//!             sent exactly as written (`harness fuzz`), and a ping
//! tool.rs     ServerTool: a server's tool in the registry, through the
//!             same erased trait as the built-ins
//! visible.rs  what a server wrote (stderr, junk), made safe to show
//! wording.rs  rmcp's transport and protocol failures in plain words (no
//!             Rust type names)
//! ```

mod answers;
mod auth;
mod checks;
mod ids;
mod process;
mod requests;
mod session;
mod stdio;
mod tool;
mod visible;
mod wording;

pub use answers::JSONRPC_ERROR_CLASS;
pub use answers::content_block;
pub use answers::jsonrpc_error;
pub use answers::tool_result;
pub use auth::ClientCredentials;
pub use auth::Credential;
pub use auth::SIGNING_ALGORITHMS;
pub use process::Command;
pub use process::INHERITED_ENV;
pub use process::Stopped;
pub use process::signal_group;
pub use requests::Answers;
pub use requests::ElicitAction;
pub use requests::Elicitation;
pub use requests::Root;
pub use requests::SAMPLING_MODEL;
pub use requests::Served;
pub use session::DEFAULT_STARTUP_TIMEOUT;
pub use session::DEFAULT_STOP_GRACE;
pub use session::Launch;
pub use session::McpClient;
pub use session::RawAnswer;
pub use session::SERVER_EXITED_CLASS;
pub use session::ServerConfig;
pub use session::ServerFacts;
pub use session::StartError;
pub use session::StopReport;
pub use session::TIMEOUT_CLASS;
pub use session::TRANSPORT_CLASS;
pub use stdio::MAX_LINE_BYTES;
pub use tool::ServerTool;
pub use tool::into_output;
pub use tool::server_tool_spec;
pub(crate) use visible::visible_text;
