//! The stdio transport of a server the harness started: newline-delimited
//! JSON-RPC over its stdin and stdout, framed here rather than by rmcp so
//! that what is not a message is counted.
//!
//! A task reads stdout line by line (a line is at most [`MAX_LINE_BYTES`])
//! and hands each JSON-RPC message to rmcp. A line that is not one (a log
//! line printed to the wrong stream, a line too long) is a *junk line*:
//! counted, its first few kept for the report (shown safely), and
//! otherwise ignored, so a server that prints a banner still works. A
//! line that is an answer to a request (an `id` with a `result` or an
//! `error`) but cannot be read as one (nested deeper than the 127 levels a
//! message is read to, say) is not junk: the request gets an error in its
//! place that says why, so it ends at once.
//! Closing the transport closes the server's stdin, which is how a server
//! is asked to stop.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;

use rmcp::RoleClient;
use rmcp::model::ErrorCode;
use rmcp::model::ErrorData;
use rmcp::model::RequestId;
use rmcp::model::ServerJsonRpcMessage;
use rmcp::service::RxJsonRpcMessage;
use rmcp::service::TxJsonRpcMessage;
use rmcp::transport::Transport;
use serde::de::IgnoredAny;
use tokio::io::AsyncBufReadExt;
use tokio::io::AsyncRead;
use tokio::io::AsyncWrite;
use tokio::io::AsyncWriteExt;
use tokio::io::BufReader;
use tokio::sync::mpsc;

use super::visible::visible_text;

/// The longest line read from a server: 64 MiB (a longer one is dropped
/// as junk, without being held).
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// How many junk lines are kept as samples, and how many characters of each.
const JUNK_SAMPLES: usize = 3;
const JUNK_SAMPLE_CHARS: usize = 200;

/// The junk lines of a server's stdout.
#[derive(Debug, Default)]
pub(super) struct Junk {
    state: Mutex<JunkState>,
}

#[derive(Debug, Default)]
struct JunkState {
    lines: u64,
    samples: Vec<String>,
}

impl Junk {
    /// Notes a message that answers nothing (see `ids.rs`): it is
    /// serialised only when a sample of it is still kept.
    pub(super) fn note_message(&self, message: &impl serde::Serialize) {
        let wanted = {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.lines = state.lines.saturating_add(1);
            state.samples.len() < JUNK_SAMPLES
        };
        if wanted {
            let line = serde_json::to_vec(message).unwrap_or_default();
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            if state.samples.len() < JUNK_SAMPLES {
                state.samples.push(sample(&line, false));
            }
        }
    }

    fn note(&self, line: &[u8], oversized: bool) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.lines = state.lines.saturating_add(1);
        if state.samples.len() < JUNK_SAMPLES {
            state.samples.push(sample(line, oversized));
        }
    }

    /// How many lines were junk.
    pub(super) fn lines(&self) -> u64 {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .lines
    }

    /// The first junk lines (at most three, each at most 200 characters).
    pub(super) fn samples(&self) -> Vec<String> {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .samples
            .clone()
    }
}

/// The sample kept of a junk line: its first [`JUNK_SAMPLE_CHARS`]
/// characters, `…` when there was more, control characters shown.
fn sample(line: &[u8], oversized: bool) -> String {
    let text = String::from_utf8_lossy(line);
    let mut sample: String = text.chars().take(JUNK_SAMPLE_CHARS).collect();
    if oversized || text.chars().nth(JUNK_SAMPLE_CHARS).is_some() {
        sample.push('…');
    }
    visible_text(&sample)
}

type Writer = Arc<tokio::sync::Mutex<Option<Box<dyn AsyncWrite + Send + Unpin>>>>;

/// rmcp's client transport over a server's stdin and stdout.
pub(super) struct LineTransport {
    write: Writer,
    incoming: mpsc::Receiver<ServerJsonRpcMessage>,
}

impl LineTransport {
    /// A transport writing to `stdin` and reading `stdout`; junk lines go
    /// to `junk`.
    pub(super) fn new<R, W>(stdout: R, stdin: W, junk: Arc<Junk>) -> Self
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let (sender, incoming) = mpsc::channel(64);
        tokio::spawn(read_messages(stdout, sender, junk));
        Self {
            write: Arc::new(tokio::sync::Mutex::new(Some(Box::new(stdin)))),
            incoming,
        }
    }
}

async fn read_messages<R: AsyncRead + Unpin>(
    stdout: R,
    sender: mpsc::Sender<ServerJsonRpcMessage>,
    junk: Arc<Junk>,
) {
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let mut line: Vec<u8> = Vec::new();
    let mut oversized = false;
    loop {
        let (complete, used) = match reader.fill_buf().await {
            Ok([]) | Err(_) => break,
            Ok(available) => match memchr::memchr(b'\n', available) {
                Some(end) => {
                    if !oversized {
                        take(&mut line, &available[..end], &mut oversized);
                    }
                    (true, end + 1)
                }
                None => {
                    if !oversized {
                        take(&mut line, available, &mut oversized);
                    }
                    (false, available.len())
                }
            },
        };
        reader.consume(used);
        if !complete {
            continue;
        }
        let text = line.strip_suffix(b"\r").unwrap_or(&line);
        if oversized {
            junk.note(text, true);
        } else if !text.iter().all(u8::is_ascii_whitespace) {
            let message = serde_json::from_slice::<ServerJsonRpcMessage>(text)
                .ok()
                .or_else(|| unreadable_answer(text));
            match message {
                Some(message) => {
                    if sender.send(message).await.is_err() {
                        return;
                    }
                }
                None => junk.note(text, false),
            }
        }
        line.clear();
        oversized = false;
    }
    // A last line without its newline is not a message either.
    if oversized || !line.iter().all(u8::is_ascii_whitespace) {
        junk.note(&line, oversized);
    }
}

/// The deepest nesting of arrays and objects a message may have: serde_json
/// reads 127 levels and refuses the 128th.
const MAX_NESTING: usize = 127;

/// The key of an error's `data` that marks it as made here, for an answer
/// that came but could not be read; its value says why.
const UNREADABLE: &str = "harness/unreadable_answer";

/// What a line that is not a message of its own says of itself: enough
/// to tell an answer to a request.
#[derive(serde::Deserialize)]
struct Envelope {
    id: Option<RequestId>,
    method: Option<IgnoredAny>,
    result: Option<IgnoredAny>,
    error: Option<IgnoredAny>,
}

/// For a line that did not read as a message but is an answer (an `id`
/// with a `result` or an `error`, no `method`), the error that answers
/// its request instead, saying why the answer could not be read: so the
/// request ends at once rather than wait for an answer that came. (The
/// envelope is read without building the nested values, to any depth.)
fn unreadable_answer(line: &[u8]) -> Option<ServerJsonRpcMessage> {
    let envelope: Envelope = serde_json::from_slice(line).ok()?;
    if envelope.method.is_some() || (envelope.result.is_none() && envelope.error.is_none()) {
        return None;
    }
    let id = envelope.id?;
    let depth = nesting(line);
    let why = if depth > MAX_NESTING {
        format!(
            "it is nested {depth} levels deep (arrays and objects inside one another), and a \
             message may be nested {MAX_NESTING} at most"
        )
    } else {
        "it is not a well-formed JSON-RPC answer".to_owned()
    };
    let data = serde_json::json!({ UNREADABLE: why });
    Some(ServerJsonRpcMessage::error(
        ErrorData::new(ErrorCode::PARSE_ERROR, why, Some(data)),
        Some(id),
    ))
}

/// Why an answer could not be read, when `error` is the one
/// [`unreadable_answer`] made for it.
pub(super) fn unreadable(error: &ErrorData) -> Option<&str> {
    error.data.as_ref()?.get(UNREADABLE)?.as_str()
}

/// The deepest nesting of arrays and objects in JSON text (brackets
/// inside strings do not count).
fn nesting(json: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &byte in json {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Appends `bytes` to `line` unless that makes it longer than
/// [`MAX_LINE_BYTES`], in which case the line is dropped (only its start is
/// kept, for the junk sample).
fn take(line: &mut Vec<u8>, bytes: &[u8], oversized: &mut bool) {
    if line.len() + bytes.len() > MAX_LINE_BYTES {
        *oversized = true;
        line.truncate(JUNK_SAMPLE_CHARS * 4);
        line.shrink_to_fit();
    } else {
        line.extend_from_slice(bytes);
    }
}

impl Transport<RoleClient> for LineTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = Arc::clone(&self.write);
        async move {
            let mut line = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            line.push(b'\n');
            let mut guard = write.lock().await;
            let Some(stdin) = guard.as_mut() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::BrokenPipe,
                    "the server's input is closed",
                ));
            };
            stdin.write_all(&line).await?;
            stdin.flush().await
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let mut guard = self.write.lock().await;
        if let Some(mut stdin) = guard.take() {
            let _ = stdin.shutdown().await;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test]
    async fn messages_pass_and_junk_is_counted_with_samples() {
        let (mut server_out, client_in) = tokio::io::duplex(1 << 16);
        let (client_out, _server_in) = tokio::io::duplex(1 << 16);
        let junk = Arc::new(Junk::default());
        let mut transport = LineTransport::new(client_in, client_out, Arc::clone(&junk));
        server_out
            .write_all(
                b"starting up...\n\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n{\"not\": \
                  \"a message\"}\n\x1b[31mred\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/\
                  tools/list_changed\"}\nno newline at the end",
            )
            .await
            .unwrap();
        drop(server_out);
        let mut kinds = Vec::new();
        while let Some(message) = transport.receive().await {
            kinds.push(match message {
                rmcp::model::JsonRpcMessage::Response(_) => "response",
                rmcp::model::JsonRpcMessage::Notification(_) => "notification",
                _ => "other",
            });
        }
        assert_eq!(kinds, ["response", "notification"]);
        assert_eq!(
            (junk.lines(), junk.samples()),
            (
                4,
                vec![
                    "starting up...".to_owned(),
                    "{\"not\": \"a message\"}".to_owned(),
                    "\u{241b}[31mred".to_owned(),
                ]
            )
        );
    }

    /// An answer nested at most 127 levels is read; one nested deeper
    /// answers its request with an error that says why; a line that is no
    /// answer stays junk.
    #[test]
    fn an_answer_nested_past_what_can_be_read_says_so() {
        let answer = |depth: usize| {
            // The message and its result are two levels.
            let inner = format!("{}{}", "[".repeat(depth - 2), "]".repeat(depth - 2));
            format!("{{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{{\"x\":{inner}}}}}")
        };
        assert_eq!(nesting(answer(127).as_bytes()), 127);
        assert!(serde_json::from_str::<ServerJsonRpcMessage>(&answer(127)).is_ok());
        assert!(serde_json::from_str::<ServerJsonRpcMessage>(&answer(128)).is_err());
        let made = unreadable_answer(answer(128).as_bytes()).unwrap();
        let (error, id) = made.into_error().unwrap();
        assert_eq!(
            (id, unreadable(&error), error.code),
            (
                Some(RequestId::Number(4)),
                Some(
                    "it is nested 128 levels deep (arrays and objects inside one another), and \
                     a message may be nested 127 at most"
                ),
                ErrorCode::PARSE_ERROR
            )
        );
        // Brackets in strings are text; a request and a line without an
        // id are not answers.
        assert_eq!(nesting(br#"{"a":"[[[{{{\"]]"}"#), 1);
        assert!(
            unreadable_answer(br#"{"jsonrpc":"2.0","id":1,"method":"x","result":1}"#).is_none()
        );
        assert!(unreadable_answer(br#"{"jsonrpc":"2.0","result":[[]]}"#).is_none());
        let broken = unreadable_answer(br#"{"jsonrpc":"2.0","id":"a","error":"no"}"#).unwrap();
        assert_eq!(
            unreadable(&broken.into_error().unwrap().0),
            Some("it is not a well-formed JSON-RPC answer")
        );
    }

    #[test]
    fn an_oversized_line_is_dropped() {
        let mut line = Vec::new();
        let mut oversized = false;
        take(&mut line, &vec![b'x'; MAX_LINE_BYTES], &mut oversized);
        assert!(!oversized);
        take(&mut line, b"y", &mut oversized);
        assert_eq!((oversized, line.len()), (true, JUNK_SAMPLE_CHARS * 4));
    }

    #[tokio::test]
    async fn closing_closes_the_servers_input() {
        use tokio::io::AsyncReadExt;
        let (_server_out, client_in) = tokio::io::duplex(64);
        let (client_out, mut server_in) = tokio::io::duplex(64);
        let mut transport = LineTransport::new(client_in, client_out, Arc::default());
        transport.close().await.unwrap();
        let mut rest = Vec::new();
        server_in.read_to_end(&mut rest).await.unwrap();
        assert_eq!(rest, b"");
    }
}
