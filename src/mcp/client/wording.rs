//! What went wrong between the harness and a server, in plain words.
//!
//! rmcp's errors name the Rust types they passed through (`Transport
//! [rmcp::transport::worker::WorkerTransport<…<reqwest::…::Client>>]
//! error: Client error: …`) and print some values as Rust debug output
//! (`Some("text/html")`). These functions say the same in words a user
//! reads: what the server did, then the cause the HTTP client gave, each
//! error of its chain once.

use std::error::Error;

use rmcp::service::ClientInitializeError;
use rmcp::service::ServiceError;
use rmcp::transport::DynamicTransportError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

use super::visible::visible_text;

/// The error of rmcp's HTTP client over reqwest.
type HttpError = StreamableHttpError<reqwest::Error>;

/// What failed in `initialize` (other than the answers `session.rs` words
/// itself: a closed connection, a JSON-RPC error).
pub(super) fn initialize_failure(err: &ClientInitializeError) -> String {
    match err {
        ClientInitializeError::TransportError { error, .. } => transport(error),
        ClientInitializeError::ExpectedInitResponse(_) => {
            "its first message was not an answer to `initialize`".to_owned()
        }
        ClientInitializeError::ExpectedInitResult(_) => {
            "its answer to `initialize` is not an initialize result".to_owned()
        }
        ClientInitializeError::ConflictInitResponseId(expected, got)
        | ClientInitializeError::UncorrelatedErrorResponse {
            expected,
            received: got,
        } => format!("its answer to `initialize` (id {expected}) carried id {got}"),
        ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported, ..
        } => {
            let versions: Vec<String> = server_supported.iter().map(ToString::to_string).collect();
            format!(
                "it speaks no protocol version the harness speaks (it offered {})",
                versions.join(", ")
            )
        }
        other => plain(&other.to_string()),
    }
}

/// What failed in a request after the start (other than a JSON-RPC error
/// answer, which has wording of its own).
pub(super) fn request_failure(err: &ServiceError) -> String {
    match err {
        ServiceError::TransportSend(error) => transport(error),
        ServiceError::TransportClosed => "the connection closed".to_owned(),
        ServiceError::UnexpectedResponse => "it answered with a result of another kind".to_owned(),
        ServiceError::Cancelled { .. } => "the request was cancelled".to_owned(),
        ServiceError::Timeout { timeout } => {
            format!("no answer came within {} s", timeout.as_secs_f64())
        }
        other => plain(&other.to_string()),
    }
}

/// A transport's failure: for rmcp's HTTP client what the server did or
/// the HTTP client's own error chain; for any other transport its
/// error's chain.
fn transport(error: &DynamicTransportError) -> String {
    let inner: &(dyn Error + 'static) = error.error.as_ref();
    match inner.downcast_ref::<HttpError>() {
        Some(http) => http_failure(http),
        None => chain(inner),
    }
}

fn http_failure(error: &HttpError) -> String {
    match error {
        StreamableHttpError::Client(client) => chain(client),
        StreamableHttpError::Io(io) => chain(io),
        StreamableHttpError::HttpStatus(status) => {
            format!("it answered with HTTP status {}", status.status)
        }
        StreamableHttpError::UnexpectedContentType(Some(kind)) => format!(
            "it answered with content type `{}`, not JSON or an event stream",
            visible_text(kind)
        ),
        StreamableHttpError::UnexpectedContentType(None) => {
            "it answered without a content type".to_owned()
        }
        StreamableHttpError::UnexpectedServerResponse(_) | StreamableHttpError::Deserialize(_) => {
            "it answered with something that is not the JSON-RPC message expected".to_owned()
        }
        StreamableHttpError::Sse(sse) => format!("its event stream broke: {}", chain(sse)),
        StreamableHttpError::TokioJoinError(_) => "the HTTP client's task failed".to_owned(),
        StreamableHttpError::AuthRequired(_) => {
            "it requires authorization (HTTP 401): give the server `auth:` (OAuth client \
             credentials) or an `Authorization` header in `headers:`"
                .to_owned()
        }
        StreamableHttpError::InsufficientScope(_) => {
            "it refused the access token's scope (HTTP 403): ask for the scopes it needs in \
             `auth.scopes`"
                .to_owned()
        }
        StreamableHttpError::Auth(auth) => format!("its authorization failed: {}", chain(auth)),
        StreamableHttpError::ResponseBodyTooLarge { max_size } => {
            format!("its answer was longer than the {max_size} bytes an answer may have")
        }
        other => plain(&other.to_string()),
    }
}

/// An error and its sources, each said once, joined by `: `, in plain
/// words.
fn chain(error: &(dyn Error + 'static)) -> String {
    plain(&sources(error))
}

/// An error and its sources, each said once, joined by `: `.
pub(super) fn sources(error: &(dyn Error + 'static)) -> String {
    let mut said: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(error) = next {
        let text = error.to_string();
        if !said.iter().any(|s| s.contains(&text)) {
            said.push(text);
        }
        next = error.source();
    }
    said.join(": ")
}

/// A message that came from a library, fit to show: its controls shown,
/// its first letter as written.
fn plain(text: &str) -> String {
    visible_text(text.trim())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_chain_says_each_error_once() {
        #[derive(Debug)]
        struct Outer(std::io::Error);
        impl std::fmt::Display for Outer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "error sending request")
            }
        }
        impl Error for Outer {
            fn source(&self) -> Option<&(dyn Error + 'static)> {
                Some(&self.0)
            }
        }
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused\u{1b}[2J");
        assert_eq!(
            chain(&Outer(io)),
            "error sending request: refused\u{241b}[2J"
        );
        let status = HttpError::HttpStatus(
            rmcp::transport::streamable_http_client::HttpStatusError::new(502, None),
        );
        assert_eq!(http_failure(&status), "it answered with HTTP status 502");
        let auth = HttpError::AuthRequired(
            rmcp::transport::streamable_http_client::AuthRequiredError::new(
                "Bearer resource_metadata=\"http://x\"".to_owned(),
            ),
        );
        assert_eq!(
            http_failure(&auth),
            "it requires authorization (HTTP 401): give the server `auth:` (OAuth client \
             credentials) or an `Authorization` header in `headers:`"
        );
    }
}
