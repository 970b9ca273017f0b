//! The stdio framing of `harness mcp`: newline-delimited JSON-RPC, read
//! here so that what cannot be a message is answered and said.
//!
//! rmcp's own reader drops a line that is not JSON without a word, and
//! answers JSON that is no message with `Invalid request` and no id. Here
//! a line that is not JSON gets `-32700 Parse error` (no id: MCP leaves it out when none can be read), JSON that
//! is not a JSON-RPC message `-32600 Invalid Request` (with its id when it
//! has one), a line longer than [`MAX_LINE_BYTES`] `-32600` too; each
//! with one line on standard error that says what was wrong, the line
//! itself quoted escaped and cut ([`shown`]). A notification that is not
//! one of MCP's is ignored, as rmcp does (editors send LSP's). Writing
//! stays rmcp's.

use std::pin::Pin;

use rmcp::ErrorData;
use rmcp::RoleServer;
use rmcp::model::RequestId;
use rmcp::service::RxJsonRpcMessage;
use rmcp::service::TxJsonRpcMessage;
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use serde_json::Value;
use tokio::io::AsyncBufReadExt;
use tokio::io::AsyncRead;
use tokio::io::AsyncWrite;
use tokio::io::BufReader;

use super::logging::shown;

/// The longest line read (rmcp's own bound, so a message that fits over
/// HTTP fits here); a longer one is skipped to its end, never held.
pub(super) const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

type Pending = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The stdio transport of a session.
pub(super) struct Lines<R, W: AsyncWrite + Send + Unpin + 'static> {
    read: BufReader<R>,
    /// The line read so far: it survives a `receive` dropped mid-line
    /// (rmcp polls it in a select).
    line: Vec<u8>,
    /// Skipping the rest of a line that was too long.
    skipping: bool,
    writer: AsyncRwTransport<RoleServer, tokio::io::Empty, W>,
    /// An error answer being written, finished before the next read.
    pending: Option<Pending>,
}

/// What one read gave.
enum Read {
    Line,
    TooLong,
    End,
}

impl<R, W> Lines<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub(super) fn new(read: R, write: W) -> Self {
        Self {
            read: BufReader::new(read),
            line: Vec::new(),
            skipping: false,
            writer: AsyncRwTransport::new_server(tokio::io::empty(), write),
            pending: None,
        }
    }

    /// Reads to the end of a line, keeping at most [`MAX_LINE_BYTES`] of
    /// it. Cancel-safe: bytes are consumed only once copied.
    async fn read_line(&mut self) -> Read {
        loop {
            let available = match self.read.fill_buf().await {
                Ok(available) => available,
                Err(err) => {
                    eprintln!("harness mcp: standard input cannot be read: {err}");
                    return Read::End;
                }
            };
            if available.is_empty() {
                return Read::End;
            }
            let newline = memchr::memchr(b'\n', available);
            let take = newline.map_or(available.len(), |at| at + 1);
            let mut outcome = None;
            if self.skipping {
                if newline.is_some() {
                    self.skipping = false;
                }
            } else if self.line.len().saturating_add(take) > MAX_LINE_BYTES {
                self.line.clear();
                self.skipping = newline.is_none();
                outcome = Some(Read::TooLong);
            } else {
                self.line.extend_from_slice(&available[..take]);
                if newline.is_some() {
                    outcome = Some(Read::Line);
                }
            }
            self.read.consume(take);
            if let Some(outcome) = outcome {
                return outcome;
            }
        }
    }

    /// Answers with `error` (no id: none could be read) and says `what` on
    /// standard error.
    fn refuse(&mut self, error: ErrorData, id: Option<RequestId>, what: &str) {
        eprintln!("harness mcp: {what}");
        self.pending = Some(Box::pin({
            let send = self
                .writer
                .send(TxJsonRpcMessage::<RoleServer>::error(error, id));
            async move {
                let _ = send.await;
            }
        }));
    }

    /// The message of a whole line, or `None` when the line is no message
    /// (answered or ignored).
    fn message(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let line = std::mem::take(&mut self.line);
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
        if text.iter().all(u8::is_ascii_whitespace) {
            self.line = line;
            self.line.clear();
            return None;
        }
        let parsed = serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(text);
        let outcome = match parsed {
            Ok(message) => Some(message),
            Err(_) => {
                let quoted = shown(&String::from_utf8_lossy(text));
                match serde_json::from_slice::<Value>(text) {
                    Err(err) => {
                        self.refuse(
                            ErrorData::parse_error(format!("Parse error: the line is not JSON ({err})."), None),
                            None,
                            &format!(
                                "a line that is not JSON was answered with -32700 Parse error ({err}): {quoted}"
                            ),
                        );
                    }
                    Ok(value) => self.not_a_message(&value, &quoted),
                }
                None
            }
        };
        // The buffer's memory is kept for the next line.
        self.line = line;
        self.line.clear();
        outcome
    }

    /// JSON that is no JSON-RPC message MCP knows: a request (it has an
    /// id) or something without a method is answered; a notification of a
    /// method MCP does not have is ignored.
    fn not_a_message(&mut self, value: &Value, quoted: &str) {
        let id = value.get("id").and_then(|id| match id {
            Value::String(text) => Some(RequestId::String(text.as_str().into())),
            Value::Number(number) => number.as_i64().map(RequestId::Number),
            _ => None,
        });
        let method = value.get("method").and_then(Value::as_str);
        if value.get("id").is_none() && method.is_some() {
            return;
        }
        self.refuse(
            ErrorData::invalid_request(
                "Invalid Request: this is not a JSON-RPC 2.0 message of MCP (a request needs \
                 \"jsonrpc\": \"2.0\", an id, a method and, for most methods, params).",
                None,
            ),
            id,
            &format!(
                "JSON that is not an MCP message was answered with -32600 Invalid Request: {quoted}"
            ),
        );
    }
}

impl<R, W> Transport<RoleServer> for Lines<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.writer.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if let Some(pending) = self.pending.as_mut() {
                pending.await;
                self.pending = None;
            }
            match self.read_line().await {
                Read::End => return None,
                Read::TooLong => self.refuse(
                    ErrorData::invalid_request(
                        format!(
                            "Invalid Request: a message may be at most {MAX_LINE_BYTES} bytes."
                        ),
                        None,
                    ),
                    None,
                    &format!(
                        "a line longer than {MAX_LINE_BYTES} bytes was skipped and answered with \
                         -32600 Invalid Request"
                    ),
                ),
                Read::Line => {
                    if let Some(message) = self.message() {
                        return Some(message);
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        if let Some(pending) = self.pending.take() {
            pending.await;
        }
        Transport::<RoleServer>::close(&mut self.writer).await
    }
}

/// Whether a message is a request (for the tests' assertions).
#[cfg(test)]
fn is_request(message: &RxJsonRpcMessage<RoleServer>) -> bool {
    matches!(message, rmcp::model::JsonRpcMessage::Request(_))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    async fn exchange(input: &'static [u8]) -> (Vec<bool>, String) {
        let (mut client, server_out) = tokio::io::duplex(1 << 16);
        let mut lines = Lines::new(input, server_out);
        let mut got = Vec::new();
        while let Some(message) = lines.receive().await {
            got.push(is_request(&message));
        }
        let _ = Transport::<RoleServer>::close(&mut lines).await;
        drop(lines);
        let mut written = String::new();
        let _ = client.read_to_string(&mut written).await;
        (got, written)
    }

    #[tokio::test]
    async fn junk_gets_parse_error_and_shapeless_json_invalid_request() {
        let input = b"not json\n\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\n\
            {\"jsonrpc\":\"2.0\",\"id\":8}\n[1,2]\n\
            {\"jsonrpc\":\"2.0\",\"method\":\"$/lsp\"}\n";
        let (got, written) = exchange(input).await;
        // The ping, and the notification (rmcp takes any method).
        assert_eq!(got, vec![true, false]);
        let answers: Vec<Value> = written
            .lines()
            .map(|line| serde_json::from_str(line).unwrap_or(Value::Null))
            .collect();
        let expected_parse =
            "Parse error: the line is not JSON (expected ident at line 1 column 2).";
        let invalid = "Invalid Request: this is not a JSON-RPC 2.0 message of MCP (a request \
                       needs \"jsonrpc\": \"2.0\", an id, a method and, for most methods, params).";
        assert_eq!(
            answers,
            vec![
                serde_json::json!({"jsonrpc":"2.0","error":{"code":-32700,"message":expected_parse}}),
                serde_json::json!({"jsonrpc":"2.0","id":8,"error":{"code":-32600,"message":invalid}}),
                serde_json::json!({"jsonrpc":"2.0","error":{"code":-32600,"message":invalid}}),
            ]
        );
    }
}
