//! `harness mcp --http ADDR`: the server over Streamable HTTP at `/mcp`.
//!
//! rmcp's server transport does the protocol (sessions, SSE streams,
//! protocol-version headers, the 4 MiB body limit: 413 past it); this file
//! serves it with hyper's HTTP/1 server and puts in front of it what a
//! local server needs:
//!
//! - DNS rebinding protection: a `Host` that is not the bound address, or
//!   `localhost`, `127.0.0.1` or `[::1]`, with the bound port, and an
//!   `Origin` that is present and not `http(s)://` one of those three
//!   (any port), are refused with 403 and a sentence saying why;
//! - only `/mcp` is served (404 elsewhere);
//! - at most [`MAX_SESSIONS`] sessions at once: a new session past it gets
//!   503 with a sentence (a session ends with an HTTP DELETE, or after
//!   5 minutes without a request); at most [`MAX_CONNECTIONS`] connections
//!   (one past it is closed at once).
//!
//! Every session is a [`McpServer::session`] of one server: one registry,
//! one mutation queue, each session's calls prepared in arrival order
//! (`arrival.rs` wraps each session's transport). `stop` ends it: the
//! sessions are cancelled (and with them their calls: a running bash
//! command's process group is killed), the calls waited for, the
//! connections closed.

use std::convert::Infallible;
use std::net::IpAddr;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures_core::Stream;
use http::Request;
use http::Response;
use http::StatusCode;
use http_body_util::BodyExt;
use http_body_util::Full;
use http_body_util::combinators::BoxBody;
use hyper::body::Bytes;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use hyper_util::rt::TokioTimer;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::model::ServerJsonRpcMessage;
use rmcp::transport::StreamableHttpServerConfig;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::WorkerTransport;
use rmcp::transport::streamable_http_server::SessionId;
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManagerError;
use rmcp::transport::streamable_http_server::session::local::LocalSessionWorker;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::arrival::Arrivals;
use super::logging::shown;
use super::server::McpServer;

/// The path the server answers on.
pub const MCP_PATH: &str = "/mcp";

/// The most sessions held at once.
pub const MAX_SESSIONS: usize = 32;

/// The most connections served at once.
pub const MAX_CONNECTIONS: usize = 128;

/// The largest request body (rmcp answers 413 past it).
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// How long a connection may take to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(30);

type Body = BoxBody<Bytes, Infallible>;

/// A bound listener, not yet serving.
#[derive(Debug)]
pub struct HttpListener {
    listener: TcpListener,
    addr: SocketAddr,
}

impl HttpListener {
    /// Binds `addr` (`127.0.0.1:8931`; port 0 picks a free one).
    pub async fn bind(addr: SocketAddr) -> Result<Self, String> {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|err| format!("--http {addr}: cannot listen there: {err}"))?;
        let addr = listener
            .local_addr()
            .map_err(|err| format!("--http {addr}: {err}"))?;
        Ok(Self { listener, addr })
    }

    /// The URL it serves MCP on.
    pub fn url(&self) -> String {
        format!("http://{}{MCP_PATH}", self.addr)
    }

    /// Serves `server` until `stop` fires, then ends every session, waits
    /// for their calls and closes the connections.
    pub async fn serve(self, server: &McpServer, stop: CancellationToken) {
        let guard = Arc::new(Guard::new(self.addr));
        let sessions = Arc::new(Sessions {
            local: LocalSessionManager::default(),
            server: server.clone(),
        });
        let config = StreamableHttpServerConfig::default()
            .with_cancellation_token(stop.child_token())
            .with_max_request_body_bytes(MAX_BODY_BYTES)
            // Checked in front, with our own words (the guard).
            .disable_allowed_hosts()
            .disable_allowed_origins();
        let factory = server.clone();
        let service = StreamableHttpService::new(
            move || Ok(factory.session()),
            Arc::clone(&sessions),
            config,
        );
        let connections_left = Arc::new(Semaphore::new(MAX_CONNECTIONS));
        let mut connections = JoinSet::new();
        loop {
            let accepted = tokio::select! {
                () = stop.cancelled() => break,
                accepted = self.listener.accept() => accepted,
                Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            };
            let stream = match accepted {
                Ok((stream, _)) => stream,
                Err(err) => {
                    eprintln!("harness mcp: a connection could not be accepted: {err}");
                    // Out of descriptors, say: give the others time to end.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let Ok(permit) = Arc::clone(&connections_left).try_acquire_owned() else {
                drop(stream);
                continue;
            };
            let guard = Arc::clone(&guard);
            let sessions = Arc::clone(&sessions);
            let service = service.clone();
            let stop = stop.clone();
            connections.spawn(async move {
                let _permit = permit;
                let handler = hyper::service::service_fn(move |request| {
                    let guard = Arc::clone(&guard);
                    let sessions = Arc::clone(&sessions);
                    let service = service.clone();
                    async move {
                        Ok::<_, Infallible>(match guard.refusal(&request, &sessions).await {
                            Some(refusal) => refusal,
                            None => service.handle(request).await,
                        })
                    }
                });
                let connection = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(HEADER_TIMEOUT)
                    .serve_connection(TokioIo::new(stream), handler);
                let mut connection = std::pin::pin!(connection);
                tokio::select! {
                    _ = connection.as_mut() => {}
                    () = stop.cancelled() => connection.as_mut().graceful_shutdown(),
                }
            });
        }
        // The sessions were cancelled with `stop` (their token is its
        // child), and with them every call.
        server.calls_ended().await;
        connections.shutdown().await;
    }
}

/// What is refused before rmcp sees a request.
#[derive(Debug)]
struct Guard {
    /// The `Host` values accepted, lower case.
    hosts: Vec<String>,
}

impl Guard {
    fn new(addr: SocketAddr) -> Self {
        let port = addr.port();
        let mut names = vec![
            "localhost".to_owned(),
            "127.0.0.1".to_owned(),
            "[::1]".to_owned(),
        ];
        let bound = match addr.ip() {
            IpAddr::V4(ip) => ip.to_string(),
            IpAddr::V6(ip) => format!("[{ip}]"),
        };
        if !names.contains(&bound) {
            names.push(bound);
        }
        let mut hosts: Vec<String> = names.iter().map(|name| format!("{name}:{port}")).collect();
        if port == 80 {
            hosts.extend(names);
        }
        Self { hosts }
    }

    /// The answer for a request that is not let through, if it is not.
    async fn refusal(
        &self,
        request: &Request<Incoming>,
        sessions: &Sessions,
    ) -> Option<Response<Body>> {
        if request.uri().path() != MCP_PATH {
            return Some(plain(
                StatusCode::NOT_FOUND,
                format!("Not found: this server answers MCP on {MCP_PATH} only.\n"),
            ));
        }
        let headers = request.headers();
        let host = headers
            .get(http::header::HOST)
            .and_then(|value| value.to_str().ok())
            .or_else(|| request.uri().authority().map(http::uri::Authority::as_str));
        match host {
            Some(host) if self.hosts.iter().any(|ok| ok.eq_ignore_ascii_case(host)) => {}
            Some(host) => {
                return Some(plain(
                    StatusCode::FORBIDDEN,
                    format!(
                        "Forbidden: the Host header {} is not this server's address; a local MCP \
                         server answers only {} (a protection against DNS rebinding).\n",
                        shown(host),
                        self.hosts.join(", ")
                    ),
                ));
            }
            None => {
                return Some(plain(
                    StatusCode::FORBIDDEN,
                    "Forbidden: the request has no Host header (needed to guard against DNS \
                     rebinding).\n"
                        .to_owned(),
                ));
            }
        }
        if let Some(origin) = headers.get(http::header::ORIGIN) {
            let text = origin.to_str().unwrap_or("(not text)");
            if !local_origin(text) {
                return Some(plain(
                    StatusCode::FORBIDDEN,
                    format!(
                        "Forbidden: the Origin {} is not a local page; this server answers \
                         pages of http(s)://localhost, 127.0.0.1 or [::1] only (a protection \
                         against DNS rebinding).\n",
                        shown(text)
                    ),
                ));
            }
        }
        let new_session =
            request.method() == http::Method::POST && !headers.contains_key("mcp-session-id");
        if new_session && sessions.count().await >= MAX_SESSIONS {
            return Some(plain(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "Service unavailable: this server already holds {MAX_SESSIONS} sessions, the \
                     most it holds at once. End one (an HTTP DELETE with its Mcp-Session-Id), \
                     or wait: a session ends after 5 minutes without a request.\n"
                ),
            ));
        }
        None
    }
}

/// Whether an `Origin` is a page of this machine: `http(s)://` and
/// `localhost`, `127.0.0.1` or `[::1]`, with any port or none.
fn local_origin(origin: &str) -> bool {
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let host = match rest.rsplit_once(':') {
        Some((host, port))
            if !port.is_empty() && port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit()) =>
        {
            host
        }
        _ => rest,
    };
    ["localhost", "127.0.0.1", "[::1]"]
        .iter()
        .any(|name| name.eq_ignore_ascii_case(host))
}

/// A plain-text answer.
fn plain(status: StatusCode, text: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// rmcp's in-memory sessions, each session's transport wrapped so that its
/// calls are prepared in arrival order.
struct Sessions {
    local: LocalSessionManager,
    server: McpServer,
}

impl Sessions {
    async fn count(&self) -> usize {
        self.local.sessions.read().await.len()
    }
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = Arrivals<WorkerTransport<LocalSessionWorker>>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.local.create_session().await?;
        let transport = Arrivals::new(
            transport,
            Arc::clone(self.server.registry()),
            CancellationToken::new(),
        );
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.local.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.local.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.local.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.local.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.resume(id, last_event_id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_pages_of_this_machine_are_local_origins() {
        for origin in [
            "http://localhost",
            "http://localhost:8931",
            "https://127.0.0.1:3000",
            "http://[::1]:1",
            "HTTP://LOCALHOST:1".to_lowercase().as_str(),
        ] {
            assert!(local_origin(origin), "{origin}");
        }
        for origin in [
            "http://evil.example.com",
            "http://localhost.evil.com",
            "http://127.0.0.1.nip.io:80",
            "null",
            "file://",
            "ftp://localhost",
            "http://localhost:",
            "http://localhost:123456",
            "http://user@localhost",
        ] {
            assert!(!local_origin(origin), "{origin}");
        }
    }

    #[test]
    fn the_hosts_accepted_are_the_loopback_names_and_the_bound_address_with_its_port() {
        let guard = Guard::new(SocketAddr::from(([0, 0, 0, 0], 8931)));
        assert_eq!(
            guard.hosts,
            vec![
                "localhost:8931",
                "127.0.0.1:8931",
                "[::1]:8931",
                "0.0.0.0:8931"
            ]
        );
        let guard = Guard::new(SocketAddr::from(([127, 0, 0, 1], 80)));
        assert_eq!(
            guard.hosts,
            vec![
                "localhost:80",
                "127.0.0.1:80",
                "[::1]:80",
                "localhost",
                "127.0.0.1",
                "[::1]"
            ]
        );
    }
}
