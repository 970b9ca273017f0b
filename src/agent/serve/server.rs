//! The HTTP server: hyper's HTTP/1 on 127.0.0.1, one request per
//! connection (closed after each response, which every agent measured
//! accepts), each request routed by its path to its wire format, read,
//! answered by the [`Responder`] and recorded.
//!
//! Bounded everywhere: bodies (413 past the cap, refused from their
//! `content-length` before they are read), the time a request's head and
//! body may take to arrive, the connections served at once, and what is
//! recorded (past the budget, requests get 503 and are counted, not
//! kept). Anything that is not a `POST` to a served path gets a 404 with
//! a JSON error naming what is served. A panic of the responder is a 500,
//! never the server's end.

use std::convert::Infallible;
use std::net::Ipv4Addr;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::time::Duration;

use http_body_util::BodyExt;
use http_body_util::Full;
use http_body_util::Limited;
use hyper::Method;
use hyper::Request;
use hyper::Response;
use hyper::StatusCode;
use hyper::body::Bytes;
use hyper::body::Incoming;
use hyper::header;
use hyper::header::HeaderValue;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use hyper_util::rt::TokioTimer;
use tokio::net::TcpListener;
use tokio::net::TcpStream;
use tokio::sync::OwnedSemaphorePermit;
use tokio::sync::Semaphore;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::agent::wire;
use crate::agent::wire::Api;
use crate::agent::wire::Envelope;
use crate::agent::wire::Refusal;
use crate::agent::wire::WireLimits;

use super::record::Exchange;
use super::record::MAX_PATH_BYTES;
use super::record::floor_char_boundary;
use super::responder::AnswerKind;
use super::responder::Responder;

/// How a server runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServeConfig {
    /// The port on 127.0.0.1 (0: a free one).
    pub port: u16,
    /// The formats served (the others' paths get 404).
    pub apis: Vec<Api>,
    /// The bounds of a request body.
    pub limits: WireLimits,
    /// Whether each exchange keeps the body as sent.
    pub keep_bodies: bool,
    /// The most body bytes recorded over the server's life; past it,
    /// requests are refused with 503.
    pub max_recorded_bytes: usize,
    /// The most exchanges recorded; past it, requests are refused with
    /// 503 and only counted.
    pub max_exchanges: usize,
    /// The most connections served at once (more wait to be accepted).
    pub max_connections: usize,
    /// How long a request's head, and then its body, may take to arrive.
    pub read_timeout: Duration,
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            port: 0,
            apis: Api::ALL.to_vec(),
            limits: WireLimits::default(),
            keep_bodies: false,
            max_recorded_bytes: 512 * 1024 * 1024,
            max_exchanges: 10_000,
            max_connections: 64,
            read_timeout: Duration::from_secs(30),
        }
    }
}

/// Called with each exchange as it is recorded (`--log` writes it).
pub type OnExchange = Box<dyn Fn(&Exchange) + Send + Sync>;

/// How long connections may take to finish once the server stops.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// What the server recorded.
#[derive(Debug, Default)]
struct Recorded {
    exchanges: Vec<Exchange>,
    bytes: usize,
    refused: u64,
}

/// What every connection shares.
struct Shared {
    responder: Arc<dyn Responder>,
    config: ServeConfig,
    serial: AtomicU64,
    recorded: Mutex<Recorded>,
    on_exchange: Option<OnExchange>,
    finished: watch::Sender<bool>,
}

/// A running model server.
pub struct ModelServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: CancellationToken,
    accept: Option<tokio::task::JoinHandle<()>>,
    tracker: TaskTracker,
}

impl std::fmt::Debug for ModelServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl ModelServer {
    /// Binds 127.0.0.1 and starts serving on the current Tokio runtime.
    pub async fn start(
        config: ServeConfig,
        responder: Arc<dyn Responder>,
        on_exchange: Option<OnExchange>,
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, config.port)).await?;
        let addr = listener.local_addr()?;
        let (finished, _) = watch::channel(false);
        let shared = Arc::new(Shared {
            responder,
            config,
            serial: AtomicU64::new(0),
            recorded: Mutex::new(Recorded::default()),
            on_exchange,
            finished,
        });
        let stop = CancellationToken::new();
        let tracker = TaskTracker::new();
        let accept = tokio::spawn(accept_loop(
            listener,
            Arc::clone(&shared),
            stop.clone(),
            tracker.clone(),
        ));
        Ok(Self {
            addr,
            shared,
            stop,
            accept: Some(accept),
            tracker,
        })
    }

    /// The address served.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL (`http://127.0.0.1:PORT`), without a path.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Whether a final answer has been sent.
    pub fn is_finished(&self) -> bool {
        *self.shared.finished.borrow()
    }

    /// Resolves once a final answer has been sent whole (its connection
    /// closed).
    pub async fn finished(&self) {
        let mut receiver = self.shared.finished.subscribe();
        // The sender lives as long as `self`: the wait ends only by a
        // final answer.
        let _ = receiver.wait_for(|done| *done).await;
    }

    /// The exchanges recorded so far, in the order received.
    pub fn exchanges(&self) -> Vec<Exchange> {
        let recorded = self.recorded();
        let mut exchanges = recorded.exchanges.clone();
        exchanges.sort_by_key(|exchange| exchange.serial);
        exchanges
    }

    /// Requests refused and not recorded because the record was full.
    pub fn unrecorded(&self) -> u64 {
        self.recorded().refused
    }

    fn recorded(&self) -> std::sync::MutexGuard<'_, Recorded> {
        self.shared
            .recorded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Stops accepting, lets the connections in flight finish (each gets
    /// a few seconds), and returns every exchange, in the order received.
    pub async fn stop(mut self) -> Vec<Exchange> {
        self.stop.cancel();
        if let Some(accept) = self.accept.take() {
            let _ = accept.await;
        }
        self.tracker.close();
        self.tracker.wait().await;
        let mut exchanges = std::mem::take(&mut self.recorded().exchanges);
        exchanges.sort_by_key(|exchange| exchange.serial);
        exchanges
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        // Without `stop`, the tasks still end: the listener closes and the
        // connections are let go.
        self.stop.cancel();
    }
}

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    stop: CancellationToken,
    tracker: TaskTracker,
) {
    let permits = Arc::new(Semaphore::new(shared.config.max_connections.max(1)));
    loop {
        let permit = tokio::select! {
            () = stop.cancelled() => return,
            permit = Arc::clone(&permits).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => return,
            },
        };
        let stream = tokio::select! {
            () = stop.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => {
                    // Out of descriptors, say: a moment before the next
                    // accept, rather than a busy loop.
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = tokio::time::sleep(Duration::from_millis(50)) => {}
                    }
                    continue;
                }
            },
        };
        tracker.spawn(connection(
            stream,
            Arc::clone(&shared),
            stop.clone(),
            permit,
        ));
    }
}

async fn connection(
    stream: TcpStream,
    shared: Arc<Shared>,
    stop: CancellationToken,
    _permit: OwnedSemaphorePermit,
) {
    let final_sent = Arc::new(AtomicBool::new(false));
    let service = {
        let shared = Arc::clone(&shared);
        let final_sent = Arc::clone(&final_sent);
        service_fn(move |request| {
            let shared = Arc::clone(&shared);
            let final_sent = Arc::clone(&final_sent);
            async move { Ok::<_, Infallible>(handle(shared, request, &final_sent).await) }
        })
    };
    let connection = http1::Builder::new()
        .keep_alive(false)
        .timer(TokioTimer::new())
        .header_read_timeout(shared.config.read_timeout)
        .serve_connection(TokioIo::new(stream), service);
    let mut connection = std::pin::pin!(connection);
    let stopped = tokio::select! {
        _ = connection.as_mut() => false,
        () = stop.cancelled() => true,
    };
    if stopped {
        connection.as_mut().graceful_shutdown();
        let _ = tokio::time::timeout(STOP_GRACE, connection.as_mut()).await;
    }
    if final_sent.load(Ordering::SeqCst) {
        shared.finished.send_replace(true);
    }
}

/// A response with a body and its type; the connection closes after it.
fn response(status: StatusCode, content_type: &'static str, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

fn status_of(refusal: Refusal) -> StatusCode {
    match refusal {
        Refusal::BadRequest => StatusCode::BAD_REQUEST,
        Refusal::NotFound => StatusCode::NOT_FOUND,
        Refusal::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        Refusal::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
    }
}

impl Shared {
    /// Records an exchange (or counts it, when the record is full) and
    /// tells the caller.
    fn record(&self, exchange: Exchange) {
        if let Some(on_exchange) = &self.on_exchange {
            on_exchange(&exchange);
        }
        let mut recorded = self.recorded.lock().unwrap_or_else(PoisonError::into_inner);
        if recorded.exchanges.len() < self.config.max_exchanges {
            recorded.bytes += exchange.body_bytes;
            recorded.exchanges.push(exchange);
        } else {
            recorded.refused += 1;
        }
    }

    /// Whether a body of `bytes` may still be recorded.
    fn has_room(&self, bytes: usize) -> bool {
        let recorded = self.recorded.lock().unwrap_or_else(PoisonError::into_inner);
        recorded.exchanges.len() < self.config.max_exchanges
            && recorded.bytes.saturating_add(bytes) <= self.config.max_recorded_bytes
    }

    /// Refuses a request: its error recorded, the body in its format's
    /// error shape.
    fn refuse(
        &self,
        mut exchange: Exchange,
        refusal: Refusal,
        message: String,
    ) -> Response<Full<Bytes>> {
        let status = status_of(refusal);
        let body = wire::error_body(exchange.api, refusal, &message);
        exchange.status = status.as_u16();
        exchange.error = Some(message);
        self.record(exchange);
        response(status, "application/json", body)
    }

    /// What is served, for a 404.
    fn served(&self) -> String {
        self.config
            .apis
            .iter()
            .map(|api| format!("POST {} ({api})", wire::paths(*api).join(", ")))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

async fn handle(
    shared: Arc<Shared>,
    request: Request<Incoming>,
    final_sent: &AtomicBool,
) -> Response<Full<Bytes>> {
    let serial = shared.serial.fetch_add(1, Ordering::SeqCst) + 1;
    let method = request.method().clone();
    let path = request
        .uri()
        .path_and_query()
        .map_or("/", |path| path.as_str());
    let mut exchange = Exchange {
        serial,
        method: method.to_string(),
        path: path[..floor_char_boundary(path, MAX_PATH_BYTES)].to_owned(),
        api: None,
        status: 0,
        body_bytes: 0,
        request: None,
        answer: None,
        error: None,
        body: None,
    };
    let route = if method == Method::POST {
        wire::route(path).filter(|route| shared.config.apis.contains(&route.api))
    } else {
        None
    };
    let Some(route) = route else {
        let shown: String = exchange.path.chars().take(200).collect();
        let message = format!(
            "nothing is served at {method} {shown}: this scripted model answers {}",
            shared.served()
        );
        return shared.refuse(exchange, Refusal::NotFound, message);
    };
    exchange.api = Some(route.api);
    let limits = shared.config.limits;
    let too_large = |bytes: String| {
        format!(
            "the request body has {bytes} bytes, more than the {} this server reads",
            limits.max_body_bytes
        )
    };
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if let Some(length) = declared
        && length > limits.max_body_bytes as u64
    {
        return shared.refuse(exchange, Refusal::TooLarge, too_large(length.to_string()));
    }
    let read = Limited::new(request.into_body(), limits.max_body_bytes).collect();
    let body = match tokio::time::timeout(shared.config.read_timeout, read).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(err)) if err.is::<http_body_util::LengthLimitError>() => {
            let message = too_large(format!("more than {}", limits.max_body_bytes));
            return shared.refuse(exchange, Refusal::TooLarge, message);
        }
        Ok(Err(err)) => {
            let message = format!("cannot read the request body: {err}");
            return shared.refuse(exchange, Refusal::BadRequest, message);
        }
        Err(_) => {
            let message = format!(
                "the request body did not arrive within {} s",
                shared.config.read_timeout.as_secs()
            );
            return shared.refuse(exchange, Refusal::BadRequest, message);
        }
    };
    exchange.body_bytes = body.len();
    if !shared.has_room(body.len()) {
        let message = format!(
            "this scripted model has recorded {} requests or {} MiB of them, its limit; it \
             answers no more",
            shared.config.max_exchanges,
            shared.config.max_recorded_bytes >> 20
        );
        return shared.refuse(exchange, Refusal::Unavailable, message);
    }
    if shared.config.keep_bodies {
        exchange.body = Some(String::from_utf8_lossy(&body).into_owned());
    }
    let parsed = match wire::parse(&route, &body, limits) {
        Ok(parsed) => parsed,
        Err(err) => return shared.refuse(exchange, Refusal::BadRequest, err.message),
    };
    // The responder may count tokens of a large request: off the
    // runtime's threads, and a panic in it is an error answer.
    let responder = Arc::clone(&shared.responder);
    let answered = tokio::task::spawn_blocking(move || {
        let answer = responder.respond(&parsed);
        (parsed, answer)
    })
    .await;
    let (parsed, answer) = match answered {
        Ok(answered) => answered,
        Err(err) => {
            let message = format!("the scripted model failed to answer: {err}");
            let status = StatusCode::INTERNAL_SERVER_ERROR;
            let body = wire::error_body(exchange.api, Refusal::Unavailable, &message);
            exchange.status = status.as_u16();
            exchange.error = Some(message);
            shared.record(exchange);
            return response(status, "application/json", body);
        }
    };
    let envelope = Envelope {
        serial,
        model: parsed.model.clone(),
    };
    let encoded = wire::encode(&route, parsed.stream, &answer.reply, &envelope);
    if answer.kind == AnswerKind::Final {
        final_sent.store(true, Ordering::SeqCst);
    }
    exchange.status = StatusCode::OK.as_u16();
    exchange.request = Some(parsed);
    exchange.answer = Some(answer);
    shared.record(exchange);
    response(StatusCode::OK, encoded.content_type, encoded.body)
}
