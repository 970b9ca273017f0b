//! [`McpServer`]: the tool registry as an MCP server, and the lifecycle of
//! one session over a byte stream (stdio for `harness mcp`).
//!
//! Requests are served concurrently (rmcp answers each on a task of its
//! own); calls are prepared in arrival order (see `arrival.rs`). A
//! `notifications/cancelled` cancels the call's token, which the registry
//! and every tool watch (a running bash command's process group is
//! killed), and rmcp sends nothing for the request afterwards.
//!
//! A session ends when the input ends or `stop` fires. At the end of the
//! input the calls still running get [`EOF_GRACE`] to finish (their results
//! are still written), and are then cancelled; `stop` cancels them at once.
//! [`McpServer::serve`] returns only when every call has ended, so a
//! caller that then drops the server (and with it the registry, whose
//! process backend kills what commands left running in the background)
//! leaves no process behind.
//!
//! rmcp marks logging deprecated (SEP-2577 drops it from the 2026-07-28
//! revision); the revisions before it have it (logging.rs).
#![allow(deprecated)]

use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::RoleServer;
use rmcp::ServerHandler;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::model::CallToolResponse;
use rmcp::model::CustomRequest;
use rmcp::model::CustomResult;
use rmcp::model::Implementation;
use rmcp::model::ListResourceTemplatesResult;
use rmcp::model::ListResourcesResult;
use rmcp::model::ListToolsResult;
use rmcp::model::PaginatedRequestParams;
use rmcp::model::ReadResourceRequestParams;
use rmcp::model::ReadResourceResponse;
use rmcp::model::ServerCapabilities;
use rmcp::model::ServerConfig;
use rmcp::model::SetLevelRequestParams;
use rmcp::model::Tool;
use rmcp::service::QuitReason;
use rmcp::service::RequestContext;
use rmcp::service::ServerInitializeError;
use serde_json::Value;
use tokio::io::AsyncRead;
use tokio::io::AsyncWrite;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::arrival::Arrival;
use super::arrival::Arrivals;
use super::arrival::tool_call;
use super::lines::Lines;
use super::listing::tool_definitions;
use super::logging::Level;
use super::logging::SessionLog;
use super::logging::shown;
use super::progress;
use super::resources::Resources;
use super::results::call_tool_result;
use crate::tools::PrepareError;
use crate::tools::Registry;
use crate::tools::ToolError;
use crate::tools::ToolResult;

/// How long calls still running at the end of the input may go on before
/// they are cancelled. Clients wait 2 seconds after closing a server's
/// input before they send SIGTERM.
pub const EOF_GRACE: Duration = Duration::from_secs(1);

/// How long [`McpServer::serve`] waits for cancelled calls to end (a
/// killed command is waited for up to 2 seconds by the process backend).
const CALLS_END_WAIT: Duration = Duration::from_secs(5);

/// The tool registry, served over MCP. Cloning shares it, and the session
/// state (the logging level); [`McpServer::session`] shares the registry
/// with a session state of its own.
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<Inner>,
    log: Arc<SessionLog>,
}

struct Inner {
    registry: Arc<Registry>,
    tools: Vec<Tool>,
    calls: TaskTracker,
    resources: Option<Resources>,
    /// Said at `warning` to each session once it sets a level that
    /// includes warnings (the sandbox's shortfalls).
    warnings: Vec<String>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("registry", &self.inner.registry)
            .finish_non_exhaustive()
    }
}

/// How a session ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionEnd {
    /// The client closed the connection (the end of the input), before or
    /// after the handshake.
    Closed,
    /// `stop` fired.
    Stopped,
}

impl McpServer {
    /// A server for the active tools of `registry`.
    pub fn new(registry: Registry) -> Self {
        Self::with_warnings(registry, Vec::new())
    }

    /// A server for the active tools of `registry` that says `warnings`
    /// (what is wrong with its environment, the sandbox's shortfalls) to
    /// every session whose logging level includes warnings.
    pub fn with_warnings(registry: Registry, warnings: Vec<String>) -> Self {
        let tools = tool_definitions(&registry);
        let resources = Resources::of(&registry);
        Self {
            inner: Arc::new(Inner {
                registry: Arc::new(registry),
                tools,
                calls: TaskTracker::new(),
                resources,
                warnings,
            }),
            log: Arc::default(),
        }
    }

    /// The same server for another session: the registry, its mutation
    /// queue and the calls shared, a logging level of its own.
    pub fn session(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
            log: Arc::default(),
        }
    }

    /// Waits until every call of every session has ended, cancelled calls
    /// given [`CALLS_END_WAIT`] at most.
    pub(super) async fn calls_ended(&self) {
        self.inner.calls.close();
        let _ = tokio::time::timeout(CALLS_END_WAIT, self.inner.calls.wait()).await;
        self.inner.calls.reopen();
    }

    /// The registry the sessions share.
    pub(super) fn registry(&self) -> &Arc<Registry> {
        &self.inner.registry
    }

    /// The tool definitions `tools/list` answers with.
    pub fn tools(&self) -> &[Tool] {
        &self.inner.tools
    }

    /// Serves one session over `read` and `write` (newline-delimited
    /// JSON-RPC) until the input ends or `stop` fires, and returns once
    /// every call of it has ended. An error is a session that could not
    /// start (a first message that is neither a request nor a ping) or a
    /// failure of rmcp's own task.
    pub async fn serve<R, W>(
        &self,
        read: R,
        write: W,
        stop: CancellationToken,
    ) -> Result<SessionEnd, String>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let eof = CancellationToken::new();
        // Cancelling it ends rmcp's loop and cancels every request's token.
        let shutdown = CancellationToken::new();
        let transport = Arrivals::new(
            Lines::new(read, write),
            Arc::clone(&self.inner.registry),
            eof.clone(),
        );
        let ender = tokio::spawn(end_when(stop.clone(), eof, shutdown.clone()));
        let outcome = match self
            .session()
            .serve_with_ct(transport, shutdown.clone())
            .await
        {
            Ok(running) => match running.waiting().await {
                Ok(QuitReason::JoinError(err)) | Err(err) => {
                    Err(format!("the MCP session's task failed: {err}"))
                }
                // Cancelled (by `stop`, or after the end of the input) or
                // closed (the input ended).
                Ok(_) => Ok(if stop.is_cancelled() {
                    SessionEnd::Stopped
                } else {
                    SessionEnd::Closed
                }),
            },
            Err(ServerInitializeError::ConnectionClosed(_)) => Ok(SessionEnd::Closed),
            Err(ServerInitializeError::ExpectedInitializeRequest(_)) => Err(
                "the MCP session could not start: its first message was not a request (a client \
                 starts with `initialize`, or on 2026-07-28 with a request that carries the \
                 protocol version in its `_meta`)"
                    .to_owned(),
            ),
            Err(ServerInitializeError::Cancelled) => Ok(if stop.is_cancelled() {
                SessionEnd::Stopped
            } else {
                SessionEnd::Closed
            }),
            Err(err) => Err(format!("the MCP session could not start: {err}")),
        };
        shutdown.cancel();
        ender.abort();
        self.calls_ended().await;
        outcome
    }

    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let inner = &self.inner;
        let _running = inner.calls.token();
        let prepared = context
            .extensions
            .get::<Arrival>()
            .and_then(Arrival::take)
            .unwrap_or_else(|| inner.registry.prepare(&tool_call(&context.id, &request)));
        let peer = &context.peer;
        let what = format!("tools/call {} (id {})", shown(&request.name), context.id);
        if inner.registry.spec(&request.name).is_none() {
            let error = unknown_tool(prepared.err());
            self.log
                .send(
                    peer,
                    Level::Warning,
                    format!("{what} refused: {}", error.message),
                )
                .await;
            return Err(error);
        }
        let prepared = match prepared {
            Ok(prepared) => prepared,
            Err(err) => {
                let result = err.into_result();
                self.log
                    .send(
                        peer,
                        Level::Warning,
                        format!("{what} refused: {}", result.text()),
                    )
                    .await;
                return Ok(call_tool_result(result).into());
            }
        };
        self.log
            .send(peer, Level::Debug, format!("{what} started"))
            .await;
        let (sink, progress) = progress::forward(
            context.meta.get_progress_token(),
            context.peer.clone(),
            context.ct.clone(),
        );
        let result = prepared.execute(context.ct.clone(), sink).await;
        progress.finish().await;
        let (level, ending) = match (&result.internal_error, result.is_error) {
            (Some(internal), _) => (Level::Error, format!("broke the tool layer: {internal}")),
            (None, true) => (Level::Warning, format!("failed: {}", result.text())),
            (None, false) => (Level::Debug, "ended".to_owned()),
        };
        self.log.send(peer, level, format!("{what} {ending}")).await;
        Ok(call_tool_result(result).into())
    }
}

/// The -32602 for a request of a method this server has whose params do
/// not parse (rmcp hands such a request over as a custom one, whose
/// default answer is -32601 Method not found); -32601 for the rest.
fn custom_request_error(request: &CustomRequest) -> ErrorData {
    let method = request.method.as_str();
    let reason = match method {
        "tools/call" => request.params_as::<CallToolRequestParams>().err(),
        "resources/read" => request.params_as::<ReadResourceRequestParams>().err(),
        "logging/setLevel" => request.params_as::<SetLevelRequestParams>().err(),
        "initialize" | "ping" | "tools/list" | "resources/list" | "resources/templates/list" => {
            request.params_as::<Value>().err()
        }
        _ => {
            return ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "Method not found: this server has no method {}.",
                    shown(method)
                ),
                None,
            );
        }
    };
    let why = match (reason, &request.params) {
        (Some(err), _) => err.to_string(),
        (None, None) => "they are missing".to_owned(),
        (None, Some(_)) => "they are not what the method takes".to_owned(),
    };
    ErrorData::invalid_params(
        format!("Invalid params for {method}: {}.", shown(&why)),
        None,
    )
}

/// Cancels `shutdown` when `stop` fires, or [`EOF_GRACE`] after the input
/// ended.
async fn end_when(stop: CancellationToken, eof: CancellationToken, shutdown: CancellationToken) {
    tokio::select! {
        () = stop.cancelled() => {}
        () = async {
            eof.cancelled().await;
            tokio::time::sleep(EOF_GRACE).await;
        } => {}
    }
    shutdown.cancel();
}

/// The JSON-RPC error for a tool that is not served (-32602, as the Python,
/// TypeScript and rmcp servers answer): the registry's message, which names
/// the tools there are, and its details as the error's data.
fn unknown_tool(refusal: Option<PrepareError>) -> ErrorData {
    let result = refusal.map_or_else(
        || ToolResult::from(ToolError::failed("Tool not found.")),
        PrepareError::into_result,
    );
    ErrorData::invalid_params(result.text(), result.details)
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_resources()
            .enable_tools()
            .build();
        if self.inner.resources.is_none() {
            capabilities.resources = None;
        }
        ServerConfig::new(capabilities).with_server_info(
            Implementation::new("harness", env!("CARGO_PKG_VERSION"))
                .with_title("harness: the coding-agent tool layer"),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.inner.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, context).await
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if self.log.set(request.level) {
            for warning in &self.inner.warnings {
                self.log
                    .send(&context.peer, Level::Warning, warning.clone())
                    .await;
            }
        }
        Ok(())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let Some(resources) = &self.inner.resources else {
            return Err(no_resources());
        };
        let cursor = request.as_ref().and_then(|params| params.cursor.as_deref());
        resources.list(cursor, context.ct.clone()).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        if self.inner.resources.is_none() {
            return Err(no_resources());
        }
        Ok(Resources::templates())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let Some(resources) = &self.inner.resources else {
            return Err(no_resources());
        };
        let _running = self.inner.calls.token();
        Ok(resources
            .read(&request.uri, context.ct.clone())
            .await?
            .into())
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(custom_request_error(&request))
    }
}

/// The error of a resources method on a server without `read`.
fn no_resources() -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        "Method not found: this server offers no resources (they are the workspace's files as \
         the read tool reads them, and read is not among the served tools).",
        None,
    )
}
