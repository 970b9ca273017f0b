//! Requests sent exactly as the caller wrote them, below
//! [`McpClient::call`]'s checks: `harness fuzz` sends `tools/call` with
//! any `params` (`arguments: null`, an array, a string), and asks whether
//! the server still answers a `ping`.

use std::time::Duration;

use rmcp::model::ClientRequest;
use rmcp::model::CustomRequest;
use rmcp::service::PeerRequestOptions;
use rmcp::service::ServiceError;
use serde_json::Value;

use super::McpClient;
use super::SERVER_EXITED_CLASS;
use super::unreadable;

/// How a request sent as written was answered.
#[derive(Clone, Debug, PartialEq)]
pub enum RawAnswer {
    /// A result: the JSON of the answer's `result`.
    Result(Value),
    /// A JSON-RPC error: its code and message.
    Error {
        /// The error's `code`.
        code: i32,
        /// The error's `message`.
        message: String,
    },
    /// An answer arrived but could not be read as JSON-RPC: why.
    Unreadable(String),
    /// No answer within the time limit (the request was cancelled).
    Timeout,
    /// The server's process ended: its exit status and last stderr lines.
    Exited {
        /// How it ended (`exited with code 1`, `killed by signal 9`).
        status: String,
        /// Its last stderr lines.
        stderr_tail: String,
    },
    /// The request could not be sent or its answer not received: why.
    Transport(String),
}

impl McpClient {
    /// Sends the request `method` with `params` as given (none: no
    /// `params` member) and waits at most `limit` for its answer; past
    /// it, `notifications/cancelled` is sent.
    pub async fn request_as_written(
        &self,
        method: &str,
        params: Option<Value>,
        limit: Duration,
    ) -> RawAnswer {
        if let Some(ended) = self.ended() {
            return self.exited(method, &ended, false).await;
        }
        let request = ClientRequest::CustomRequest(CustomRequest::new(method, params));
        let mut handle = match self
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(err) => return self.raw_failure(method, err).await,
        };
        tokio::select! {
            answer = &mut handle.rx => match answer {
                Ok(Ok(result)) => match serde_json::to_value(&result) {
                    Ok(value) => RawAnswer::Result(value),
                    Err(err) => RawAnswer::Unreadable(err.to_string()),
                },
                Ok(Err(err)) => self.raw_failure(method, err).await,
                Err(_) => self.raw_failure(method, ServiceError::TransportClosed).await,
            },
            () = tokio::time::sleep(limit) => {
                let _ = handle.cancel(Some("timeout".to_owned())).await;
                RawAnswer::Timeout
            }
        }
    }

    /// Whether the server answers a `ping` within `limit` (with a result
    /// or any JSON-RPC error: it is up and reading).
    pub async fn answers_ping(&self, limit: Duration) -> bool {
        matches!(
            self.request_as_written("ping", None, limit).await,
            RawAnswer::Result(_) | RawAnswer::Error { .. }
        )
    }

    async fn raw_failure(&self, method: &str, err: ServiceError) -> RawAnswer {
        match err {
            ServiceError::McpError(ref error) if let Some(why) = unreadable(error) => {
                RawAnswer::Unreadable(why.to_owned())
            }
            ServiceError::McpError(error) => RawAnswer::Error {
                code: error.code.0,
                message: error.message.into_owned(),
            },
            other => {
                let result = self.failed(method, other).await;
                let details = result.details.unwrap_or_default();
                if details.get("error_class").and_then(Value::as_str) == Some(SERVER_EXITED_CLASS) {
                    RawAnswer::Exited {
                        status: text(&details, "exit_status"),
                        stderr_tail: text(&details, "stderr_tail"),
                    }
                } else {
                    RawAnswer::Transport(text(&details, "reason"))
                }
            }
        }
    }

    async fn exited(&self, method: &str, ended: &super::Exit, during: bool) -> RawAnswer {
        let result = self.gone(method, ended, during).await;
        let details = result.details.unwrap_or_default();
        RawAnswer::Exited {
            status: text(&details, "exit_status"),
            stderr_tail: text(&details, "stderr_tail"),
        }
    }
}

fn text(details: &Value, key: &str) -> String {
    details
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}
