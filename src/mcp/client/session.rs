//! [`McpClient`]: one connection to an MCP tool server, from its start to
//! its stop.
//!
//! - **Start** ([`McpClient::start`]): a `command` is spawned (see
//!   `process.rs`) and spoken to over its stdio (`stdio.rs`); a `url` is
//!   reached over Streamable HTTP (rmcp's client, a session of its own per
//!   connection, the `headers` on every request). The `initialize`
//!   handshake and `tools/list` (every page) must both be done within the
//!   start-up timeout, or the start fails with a [`StartError`] that says
//!   which step, in seconds, and how the process ended with its last
//!   stderr lines.
//! - **Calls** ([`McpClient::call`]) are concurrent requests. Each is
//!   bounded by the call timeout; past it, or when the caller's token
//!   fires, `notifications/cancelled` is sent and the call ends in an error
//!   result at once. A server that exits (or closes its output) mid-call
//!   makes that call, and every later one, an error result naming its exit
//!   status and its last stderr lines.
//! - **Stop** ([`McpClient::stop`]): the session is closed (for stdio, the
//!   server's stdin), then the process gets a grace to exit, `SIGTERM` to
//!   its group, a grace again, and `SIGKILL`. Dropping the client kills the
//!   group at once.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;
use std::time::SystemTime;

use rmcp::RoleClient;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequest;
use rmcp::model::CallToolRequestParams;
use rmcp::model::ClientRequest;
use rmcp::model::CustomRequest;
use rmcp::model::ServerResult;
use rmcp::model::Tool;
use rmcp::service::ClientInitializeError;
use rmcp::service::Peer;
use rmcp::service::PeerRequestOptions;
use rmcp::service::RunningService;
use rmcp::service::ServiceError;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde::Serialize;
use serde_json::Value;
use serde_json::json;
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

use super::answers::jsonrpc_error;
use super::answers::tool_result;
use super::auth::ClientCredentials;
use super::auth::access_token;
use super::ids::ExactIds;
use super::process::Command;
use super::process::Exit;
use super::process::ServerProcess;
use super::process::Stopped;
use super::process::spawn;
use super::requests::Answering;
use super::requests::Answers;
use super::requests::Handler;
use super::requests::Served;
use super::stdio::Junk;
use super::stdio::LineTransport;
use super::stdio::unreadable;
use super::wording::initialize_failure;
use super::wording::request_failure;
use crate::tools::Sandbox;
use crate::tools::ToolError;
use crate::tools::ToolResult;

mod raw;
pub use raw::RawAnswer;

/// The start-up timeout when none is given: 10 seconds (Codex's budget).
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// The grace of each step of a stop when none is given.
pub const DEFAULT_STOP_GRACE: Duration = Duration::from_secs(1);

/// How long, after a server's connection closed, its exit status and the
/// end of its stderr are waited for before a message names them.
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// `details.error_class` of a call the server could not answer because it
/// exited (or closed its output).
pub const SERVER_EXITED_CLASS: &str = "mcp_server_exited";

/// `details.error_class` of a call past its call timeout.
pub const TIMEOUT_CLASS: &str = "mcp_timeout";

/// `details.error_class` of a call that could not reach the server or got
/// an answer that is not a tool result.
pub const TRANSPORT_CLASS: &str = "mcp_transport_error";

/// How to reach a server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Launch {
    /// Start this command and speak over its stdio.
    Command(Command),
    /// Reach a running server over Streamable HTTP.
    Url {
        /// `http://HOST:PORT/PATH`.
        url: String,
        /// Sent with every request.
        headers: Vec<(String, String)>,
    },
}

/// One server to connect to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerConfig {
    /// The server's name (for messages and reports).
    pub name: String,
    /// How to reach it.
    pub launch: Launch,
    /// How long `initialize` and `tools/list` may take together.
    pub startup_timeout: Duration,
    /// How long one call may take (`None`: no bound but the caller's).
    pub call_timeout: Option<Duration>,
    /// The grace of each step of a stop.
    pub stop_grace: Duration,
    /// The answers to the server's requests (sampling, elicitation,
    /// roots); only those declared are advertised.
    pub answers: Answers,
    /// OAuth client credentials for a server reached by URL: an access
    /// token is got before `initialize` and sent with every request.
    pub auth: Option<ClientCredentials>,
}

impl ServerConfig {
    /// A server with the default timeouts.
    pub fn new(name: impl Into<String>, launch: Launch) -> Self {
        Self {
            name: name.into(),
            launch,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            call_timeout: None,
            stop_grace: DEFAULT_STOP_GRACE,
            answers: Answers::default(),
            auth: None,
        }
    }
}

/// What is known of a server once it started.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ServerFacts {
    /// Its name in the configuration.
    pub name: String,
    /// `stdio` or `streamable_http`.
    pub transport: &'static str,
    /// `serverInfo.name`.
    pub server_name: Option<String>,
    /// `serverInfo.version`.
    pub server_version: Option<String>,
    /// The protocol version agreed on.
    pub protocol_version: String,
    /// When it was started, in milliseconds since the Unix epoch.
    pub started_at_ms: u64,
    /// From the start to the answer of `tools/list`, in milliseconds.
    pub startup_ms: u64,
    /// How many tools it listed.
    pub tools: usize,
}

/// How a server's connection ended.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StopReport {
    /// How the process was ended (`None` for a server reached by URL).
    pub stopped: Option<Stopped>,
    /// Its exit status, as words (`exit status 0`, `killed by signal 9
    /// (SIGKILL)`), for a process.
    pub exit_status: Option<String>,
    /// Its exit code, when it exited by itself.
    pub exit_code: Option<i32>,
    /// Whether it ended (crashed) before it was asked to stop.
    pub ended_early: bool,
    /// Bytes it wrote to stderr.
    pub stderr_bytes: u64,
    /// Its last stderr lines (control characters shown).
    pub stderr_tail: String,
    /// Lines of its stdout that were not JSON-RPC messages.
    pub junk_lines: u64,
    /// The first of those (at most three, 200 characters each).
    pub junk_samples: Vec<String>,
}

/// A server that did not start: why, with what it left.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct StartError {
    /// The server's name.
    pub server: String,
    /// What went wrong.
    pub message: String,
    /// How its process ended, when it did.
    pub exit_status: Option<String>,
    /// Its last stderr lines.
    pub stderr_tail: String,
}

impl StartError {
    fn describe(&self) -> String {
        let mut text = format!(
            "MCP server `{}` did not start: {}",
            self.server, self.message
        );
        if let Some(status) = &self.exit_status {
            text.push_str(&format!(" (it ended: {status})"));
        }
        if !self.stderr_tail.is_empty() {
            text.push_str(&format!(
                "; its last stderr lines:\n{}",
                indent(&self.stderr_tail)
            ));
        }
        text
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|line| format!("  {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0} s")
    } else {
        format!("{secs} s")
    }
}

/// A connection to one MCP server. Share it behind an `Arc`: calls take
/// `&self` and run concurrently.
pub struct McpClient {
    name: String,
    peer: Peer<RoleClient>,
    running: tokio::sync::Mutex<Option<RunningService<RoleClient, Handler>>>,
    tools: Vec<Tool>,
    process: Option<ServerProcess>,
    url: Option<String>,
    junk: Arc<Junk>,
    facts: ServerFacts,
    call_timeout: Option<Duration>,
    stop_grace: Duration,
    stopping: CancellationToken,
    stopped: OnceCell<StopReport>,
    answering: Arc<Answering>,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("facts", &self.facts)
            .finish_non_exhaustive()
    }
}

fn header_map(
    headers: &[(String, String)],
) -> Result<HashMap<http::HeaderName, http::HeaderValue>, String> {
    headers
        .iter()
        .map(|(name, value)| {
            let header = http::HeaderName::try_from(name.as_str())
                .map_err(|_| format!("`{name}` is not a valid HTTP header name"))?;
            let value = http::HeaderValue::try_from(value.as_str())
                .map_err(|_| format!("the value of header `{name}` is not a valid header value"))?;
            Ok((header, value))
        })
        .collect()
}

impl McpClient {
    /// Starts (or reaches) the server, and lists its tools.
    pub async fn start(config: ServerConfig) -> Result<Self, StartError> {
        Self::start_in(config, None).await
    }

    /// [`McpClient::start`], with a command's server started in `sandbox`
    /// (shared with the caller's other programs, or one of its own): its
    /// writes, network and processes confined as the sandbox's report
    /// says; the sandbox lives at least as long as the server. A `url`
    /// server is not started here, so the sandbox does not apply to it.
    pub async fn start_in(
        config: ServerConfig,
        sandbox: Option<Arc<Sandbox>>,
    ) -> Result<Self, StartError> {
        let started = Instant::now();
        let started_at_ms = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let deadline = tokio::time::Instant::now() + config.startup_timeout;
        let junk = Arc::new(Junk::default());
        let answering = Arc::new(Answering::new(&config.name, config.answers.clone()));
        let handler = Handler(Arc::clone(&answering));
        let fail = |message: String| StartError {
            server: config.name.clone(),
            message,
            exit_status: None,
            stderr_tail: String::new(),
        };
        let timeout = seconds(config.startup_timeout);
        let token = match (&config.launch, &config.auth) {
            (Launch::Url { url, .. }, Some(credentials)) => {
                match access_token(url, credentials, config.startup_timeout).await {
                    Ok(token) => Some(token),
                    Err(why) => {
                        return Err(fail(format!(
                            "its OAuth authorization (client credentials of `{}`) failed: {why}",
                            credentials.client_id
                        )));
                    }
                }
            }
            _ => None,
        };
        let (serving, process, url, transport) = match &config.launch {
            Launch::Command(command) => {
                let spawned =
                    spawn(command, sandbox.clone()).map_err(|err| fail(err.to_string()))?;
                let transport = ExactIds::new(
                    LineTransport::new(spawned.stdout, spawned.stdin, Arc::clone(&junk)),
                    Arc::clone(&junk),
                );
                let serving = tokio::time::timeout_at(deadline, handler.clone().serve(transport));
                (futures_boxed(serving), Some(spawned.process), None, "stdio")
            }
            Launch::Url { url, headers } => {
                let headers = header_map(headers).map_err(fail)?;
                let mut http = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(headers);
                if let Some(token) = token {
                    http = http.auth_header(token);
                }
                let transport = ExactIds::new(
                    StreamableHttpClientTransport::from_config(http),
                    Arc::clone(&junk),
                );
                let serving = tokio::time::timeout_at(deadline, handler.clone().serve(transport));
                (
                    futures_boxed(serving),
                    None,
                    Some(url.clone()),
                    "streamable_http",
                )
            }
        };
        let running = match serving.await {
            Ok(Ok(running)) => running,
            Ok(Err(err)) => {
                // A process that ended before `initialize` was written
                // fails the write instead (a broken pipe): the same end.
                let closed = matches!(err, ClientInitializeError::ConnectionClosed(_))
                    || (process.is_some()
                        && matches!(err, ClientInitializeError::TransportError { .. }));
                let message = match err {
                    _ if closed => {
                        "it closed the connection before it answered `initialize`".to_owned()
                    }
                    ClientInitializeError::JsonRpcError(ref error)
                        if let Some(why) = unreadable(error) =>
                    {
                        format!("its answer to `initialize` could not be read: {why}")
                    }
                    ClientInitializeError::JsonRpcError(error) => format!(
                        "it answered `initialize` with JSON-RPC error {}: {}",
                        error.code.0, error.message
                    ),
                    other => format!("`initialize` failed: {}", initialize_failure(&other)),
                };
                return Err(failed_start(&config.name, message, process, closed).await);
            }
            Err(_) => {
                let message = format!("it did not answer `initialize` within {timeout}");
                return Err(failed_start(&config.name, message, process, false).await);
            }
        };
        let peer = running.peer().clone();
        let tools = match tokio::time::timeout_at(deadline, peer.list_all_tools()).await {
            Ok(Ok(tools)) => tools,
            Ok(Err(err)) => {
                let closed = matches!(err, ServiceError::TransportClosed);
                let message = match err {
                    ServiceError::McpError(ref error) if let Some(why) = unreadable(error) => {
                        format!("its answer to `tools/list` could not be read: {why}")
                    }
                    ServiceError::McpError(error) => format!(
                        "it answered `tools/list` with JSON-RPC error {}: {}",
                        error.code.0, error.message
                    ),
                    ServiceError::TransportClosed => {
                        "it closed the connection before it answered `tools/list`".to_owned()
                    }
                    other => format!("`tools/list` failed: {}", request_failure(&other)),
                };
                drop(running);
                return Err(failed_start(&config.name, message, process, closed).await);
            }
            Err(_) => {
                let message =
                    format!("it answered `initialize` but not `tools/list` within {timeout}");
                drop(running);
                return Err(failed_start(&config.name, message, process, false).await);
            }
        };
        let info = peer.peer_info();
        let facts = ServerFacts {
            name: config.name.clone(),
            transport,
            server_name: info
                .as_ref()
                .and_then(|i| i.server_info.as_ref())
                .map(|s| s.name.clone()),
            server_version: info
                .as_ref()
                .and_then(|i| i.server_info.as_ref())
                .map(|s| s.version.clone()),
            protocol_version: info
                .as_ref()
                .map(|i| i.protocol_version.to_string())
                .unwrap_or_default(),
            started_at_ms,
            startup_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            tools: tools.len(),
        };
        Ok(Self {
            name: config.name,
            peer,
            running: tokio::sync::Mutex::new(Some(running)),
            tools,
            process,
            url,
            junk,
            facts,
            call_timeout: config.call_timeout,
            stop_grace: config.stop_grace,
            stopping: CancellationToken::new(),
            stopped: OnceCell::new(),
            answering,
        })
    }

    /// The server's name in the configuration.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its tools, in `tools/list` order.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// Its tools' names in `tools/list` order, for messages (`a, b`), or
    /// `none`.
    pub fn tool_names(&self) -> String {
        if self.tools.is_empty() {
            return "none".to_owned();
        }
        let names: Vec<&str> = self.tools.iter().map(|t| t.name.as_ref()).collect();
        names.join(", ")
    }

    /// What is known of it.
    pub fn facts(&self) -> &ServerFacts {
        &self.facts
    }

    /// Lines of its stdout so far that were not messages.
    pub fn junk_lines(&self) -> u64 {
        self.junk.lines()
    }

    /// Whether it can still be called: not stopped, its process not ended,
    /// its connection open.
    pub fn is_running(&self) -> bool {
        !self.stopping.is_cancelled() && self.ended().is_none() && !self.peer.is_transport_closed()
    }

    /// What a stop would report so far, without stopping it (for a server
    /// that goes on serving other scenarios).
    pub fn report_so_far(&self) -> StopReport {
        let (stderr_bytes, stderr_tail) = self.process.as_ref().map_or((0, String::new()), |p| {
            (p.stderr().total_bytes(), p.stderr().last_lines())
        });
        StopReport {
            stopped: None,
            exit_status: None,
            exit_code: None,
            ended_early: false,
            stderr_bytes,
            stderr_tail,
            junk_lines: self.junk.lines(),
            junk_samples: self.junk.samples(),
        }
    }

    /// The process's id (its group's), for a server that was started.
    pub fn pid(&self) -> Option<i32> {
        self.process.as_ref().map(ServerProcess::pgid)
    }

    /// Calls `tool` with `arguments` as written (an object, or anything
    /// else a test sends on purpose). Ends at the call timeout or when
    /// `cancel` fires, having sent `notifications/cancelled`.
    pub async fn call(
        &self,
        tool: &str,
        arguments: Value,
        cancel: &CancellationToken,
    ) -> ToolResult {
        if let Some(ended) = self.ended() {
            return self.gone(tool, &ended, false).await;
        }
        if self.stopping.is_cancelled() {
            return ToolResult::error(
                format!(
                    "MCP server `{}` has been stopped; `{tool}` was not called.",
                    self.name
                ),
                Some(json!({ "error_class": SERVER_EXITED_CLASS })),
            );
        }
        // Arguments that are no object (`null`, an array, a string) are
        // sent as written all the same: the server's answer to them is
        // what is being tested.
        let request = match arguments {
            Value::Object(map) => ClientRequest::CallToolRequest(CallToolRequest::new(
                CallToolRequestParams::new(tool.to_owned()).with_arguments(map),
            )),
            other => ClientRequest::CustomRequest(CustomRequest::new(
                "tools/call",
                Some(json!({ "name": tool, "arguments": other })),
            )),
        };
        let mut handle = match self
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(err) => return self.failed(tool, err).await,
        };
        let timeout = async {
            match self.call_timeout {
                Some(limit) => tokio::time::sleep(limit).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            answer = &mut handle.rx => {
                let result = match answer {
                    Ok(Ok(result)) => answer_result(tool, &result),
                    Ok(Err(err)) => self.failed(tool, err).await,
                    Err(_) => self.failed(tool, ServiceError::TransportClosed).await,
                };
                self.with_refusals(result)
            },
            () = timeout => {
                let limit = self.call_timeout.unwrap_or_default();
                let _ = handle.cancel(Some("call_timeout".to_owned())).await;
                ToolResult::error(
                    format!(
                        "The call to `{tool}` on MCP server `{}` took longer than its call_timeout \
                         of {}; it was cancelled.",
                        self.name,
                        seconds(limit)
                    ),
                    Some(json!({
                        "error_class": TIMEOUT_CLASS,
                        "timeout_ms": u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
                    })),
                )
            }
            () = cancel.cancelled() => {
                let _ = handle.cancel(Some("cancelled".to_owned())).await;
                ToolResult::from(ToolError::cancelled())
            }
        }
    }

    /// The server's requests answered so far (sampling, elicitation,
    /// roots), in order.
    pub fn served(&self) -> Vec<Served> {
        self.answering.served()
    }

    /// `result` failed by the server's requests the client refused since
    /// the last call ended (the requests it made during this call): each
    /// refusal is an internal error of the call, which fails its step.
    pub(super) fn with_refusals(&self, mut result: ToolResult) -> ToolResult {
        let refusals = self.answering.take_refusals();
        if !refusals.is_empty() {
            let mut said: Vec<String> = result.internal_error.take().into_iter().collect();
            said.extend(refusals.into_iter().map(|r| format!("{r}.")));
            result.internal_error = Some(said.join(" "));
        }
        result
    }

    /// How the process ended, if it has (a server reached by URL: never).
    fn ended(&self) -> Option<Exit> {
        self.process.as_ref().and_then(ServerProcess::exit)
    }

    /// The connection's peer, for requests other than tool calls.
    pub(super) fn peer(&self) -> &Peer<RoleClient> {
        &self.peer
    }

    /// The bound of one request.
    pub(super) fn call_timeout(&self) -> Option<Duration> {
        self.call_timeout
    }

    /// The error result of a call whose request or answer failed.
    pub(super) async fn failed(&self, tool: &str, err: ServiceError) -> ToolResult {
        match err {
            ServiceError::McpError(ref error) if let Some(why) = unreadable(error) => {
                ToolResult::error(
                    format!(
                        "MCP server `{}` answered the call to `{tool}`, but its answer could not \
                         be read: {why}.",
                        self.name
                    ),
                    Some(json!({ "error_class": TRANSPORT_CLASS, "reason": why })),
                )
            }
            ServiceError::McpError(error) => {
                jsonrpc_error(error.code.0, &error.message, error.data.as_ref())
            }
            ServiceError::TransportClosed | ServiceError::TransportSend(_)
                if self.process.is_some() =>
            {
                let exit = match &self.process {
                    Some(process) => process.ended_within(EXIT_WAIT).await,
                    None => None,
                };
                match exit {
                    Some(exit) => self.gone(tool, &exit, true).await,
                    None => self.transport_error(
                        tool,
                        "it closed its output but is still running".to_owned(),
                    ),
                }
            }
            other => self.transport_error(tool, request_failure(&other)),
        }
    }

    fn transport_error(&self, tool: &str, why: String) -> ToolResult {
        let place = self
            .url
            .as_ref()
            .map_or_else(String::new, |url| format!(" at {url}"));
        ToolResult::error(
            format!(
                "The call to `{tool}` on MCP server `{}`{place} failed: {why}.",
                self.name
            ),
            Some(json!({ "error_class": TRANSPORT_CLASS, "reason": why })),
        )
    }

    /// The error result of a call to a server that exited (`during`: while
    /// this call ran).
    async fn gone(&self, tool: &str, exit: &Exit, during: bool) -> ToolResult {
        let tail = match &self.process {
            Some(process) => {
                process.stderr_read_within(EXIT_WAIT).await;
                process.stderr().last_lines()
            }
            None => String::new(),
        };
        let when = if during {
            format!("exited during the call to `{tool}`")
        } else {
            format!("is not running (it exited before this call to `{tool}`)")
        };
        let mut text = format!("MCP server `{}` {when}: {}.", self.name, exit.status);
        if tail.is_empty() {
            text.push_str(" It wrote nothing to stderr.");
        } else {
            text.push_str(&format!(" Its last stderr lines:\n{}", indent(&tail)));
        }
        ToolResult::error(
            text,
            Some(json!({
                "error_class": SERVER_EXITED_CLASS,
                "exit_status": exit.status,
                "exit_code": exit.code,
                "stderr_tail": tail,
            })),
        )
    }

    /// Ends the connection and the process (see the module documentation);
    /// a second stop returns the first one's report.
    pub async fn stop(&self) -> StopReport {
        self.stopped
            .get_or_init(|| async {
                self.stopping.cancel();
                let ended_early = self.ended().is_some();
                let running = self.running.lock().await.take();
                if let Some(mut running) = running {
                    let _ = running.close_with_timeout(self.stop_grace).await;
                }
                let (stopped, exit, stderr_bytes, stderr_tail) = match &self.process {
                    Some(process) => {
                        let (mut stopped, exit) = process.stop(self.stop_grace).await;
                        if stopped == Stopped::AlreadyEnded && !ended_early {
                            // It ended while its session was being closed.
                            stopped = Stopped::InputClosed;
                        }
                        process.stderr_read_within(EXIT_WAIT).await;
                        (
                            Some(stopped),
                            Some(exit),
                            process.stderr().total_bytes(),
                            process.stderr().last_lines(),
                        )
                    }
                    None => (None, None, 0, String::new()),
                };
                StopReport {
                    stopped,
                    exit_status: exit.as_ref().map(|e| e.status.clone()),
                    exit_code: exit.as_ref().and_then(|e| e.code),
                    ended_early,
                    stderr_bytes,
                    stderr_tail,
                    junk_lines: self.junk.lines(),
                    junk_samples: self.junk.samples(),
                }
            })
            .await
            .clone()
    }
}

/// The tool result of an answer to `tools/call`.
fn answer_result(tool: &str, result: &ServerResult) -> ToolResult {
    match serde_json::to_value(result) {
        Ok(value @ Value::Object(_)) => tool_result(&value),
        _ => ToolResult::error(
            format!("The MCP server's answer to `{tool}` is not a tool result."),
            Some(json!({ "error_class": TRANSPORT_CLASS })),
        ),
    }
}

type Serving = std::pin::Pin<
    Box<
        dyn Future<
                Output = Result<
                    Result<RunningService<RoleClient, Handler>, ClientInitializeError>,
                    tokio::time::error::Elapsed,
                >,
            > + Send,
    >,
>;

fn futures_boxed(
    future: impl Future<
        Output = Result<
            Result<RunningService<RoleClient, Handler>, ClientInitializeError>,
            tokio::time::error::Elapsed,
        >,
    > + Send
    + 'static,
) -> Serving {
    Box::pin(future)
}

/// The error of a start that failed at `message`: the process (if any) is
/// killed, and its status and last stderr lines are named.
/// With `closed` (the server closed the connection), its exit is waited
/// for: it is probably ending.
async fn failed_start(
    server: &str,
    message: String,
    process: Option<ServerProcess>,
    closed: bool,
) -> StartError {
    let (exit_status, stderr_tail) = match process {
        Some(process) => {
            // A server still running at a timeout may end as soon as its
            // input closes, which dropping the transport already did: that
            // end is ours as much as a kill, so only a server that closed
            // the connection itself has a status to report.
            let exit = if closed {
                process.ended_within(EXIT_WAIT).await
            } else {
                None
            };
            let exit = match exit {
                Some(exit) => Some(exit),
                None => {
                    // Ended by us: its status says nothing of the server.
                    process.kill().await;
                    None
                }
            };
            process.stderr_read_within(EXIT_WAIT).await;
            (exit.map(|e| e.status), process.stderr().last_lines())
        }
        None => (None, String::new()),
    };
    StartError {
        server: server.to_owned(),
        message,
        exit_status,
        stderr_tail,
    }
}
