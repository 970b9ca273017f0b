//! The relay of `harness record`: an MCP server to a real client that
//! forwards every line, both ways and byte for byte, to the real server it
//! started, and notes what passed: each `tools/call` with its arguments,
//! its answer (a result, a JSON-RPC error, or none when it was cancelled)
//! and which calls were in flight together (a parallel step).
//!
//! It is transparent by construction: the client sees exactly the
//! server's lines (results, progress, errors, requests of its own), and
//! the server the client's (cancellations included); only newline-
//! delimited JSON-RPC is read, and nothing is ever written that the other
//! side did not send. A line longer than [`MAX_OBSERVED_LINE`] is still
//! forwarded whole, in pieces, but not looked into. The end of the
//! client's input closes the server's; the relay ends when the server's
//! output ends.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;

use serde_json::Value;
use tokio::io::AsyncBufRead;
use tokio::io::AsyncBufReadExt as _;
use tokio::io::AsyncWrite;
use tokio::io::AsyncWriteExt as _;

/// The longest line the relay looks into (a request or an answer); longer
/// ones pass through unread.
pub const MAX_OBSERVED_LINE: usize = 64 * 1024 * 1024;

/// How a recorded call was answered.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// A `CallToolResult`, as the server sent it.
    Result(Value),
    /// A JSON-RPC error.
    Error {
        /// Its code.
        code: i64,
        /// Its message.
        message: String,
        /// Its data.
        data: Option<Value>,
    },
    /// The client cancelled it (`notifications/cancelled`) before an
    /// answer came.
    Cancelled,
    /// No answer came before the server's output ended.
    Unanswered,
}

/// One `tools/call` that passed through.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The tool's name.
    pub name: String,
    /// Its arguments (`{}` when the request had none).
    pub arguments: Value,
    /// How it was answered.
    pub answer: Answer,
    /// The step it belongs to: calls sent while an earlier one of the
    /// same step was still unanswered share it (the client sent them in
    /// parallel), counting from 0.
    pub step: usize,
}

/// What passed through a relay.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Traffic {
    /// Every `tools/call`, in the order the client sent them.
    pub calls: Vec<Call>,
    /// Lines from either side that were not JSON-RPC (forwarded all the
    /// same).
    pub other_lines: u64,
    /// Lines longer than [`MAX_OBSERVED_LINE`], forwarded unread.
    pub overlong_lines: u64,
    /// The tool names the server's `tools/list` answers named (every
    /// page), in the order listed; empty when the client never asked.
    pub listed: Vec<String>,
}

#[derive(Default)]
struct State {
    traffic: Traffic,
    /// Request id (as JSON text) to the index of its call.
    pending: HashMap<String, usize>,
    /// Ids (as JSON text) of `tools/list` requests not answered yet.
    listing: Vec<String>,
    /// Unanswered calls of the last step.
    in_flight: usize,
    /// Steps begun.
    steps: usize,
}

impl State {
    fn client_sent(&mut self, message: &Value) {
        let method = message.get("method").and_then(Value::as_str);
        match method {
            Some("tools/list") => {
                if let Some(id) = message.get("id") {
                    self.listing.push(id.to_string());
                }
            }
            Some("tools/call") => {
                let Some(id) = message.get("id") else {
                    return;
                };
                let params = message.get("params");
                let name = params
                    .and_then(|p| p.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                let arguments = params
                    .and_then(|p| p.get("arguments"))
                    .cloned()
                    .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
                if self.in_flight == 0 {
                    self.steps += 1;
                }
                self.in_flight += 1;
                self.pending
                    .insert(id.to_string(), self.traffic.calls.len());
                self.traffic.calls.push(Call {
                    name,
                    arguments,
                    answer: Answer::Unanswered,
                    step: self.steps - 1,
                });
            }
            Some("notifications/cancelled") => {
                let id = message
                    .get("params")
                    .and_then(|p| p.get("requestId"))
                    .map(Value::to_string);
                if let Some(index) = id.and_then(|id| self.pending.remove(&id)) {
                    self.answered(index, Answer::Cancelled);
                }
            }
            _ => {}
        }
    }

    fn server_sent(&mut self, message: &Value) {
        if message.get("method").is_some() {
            return;
        }
        let Some(id) = message.get("id").map(Value::to_string) else {
            return;
        };
        if let Some(at) = self.listing.iter().position(|l| *l == id) {
            self.listing.swap_remove(at);
            let tools = message
                .get("result")
                .and_then(|r| r.get("tools"))
                .and_then(Value::as_array);
            for name in tools
                .into_iter()
                .flatten()
                .filter_map(|t| t.get("name")?.as_str())
            {
                if !self.traffic.listed.iter().any(|l| l == name) {
                    self.traffic.listed.push(name.to_owned());
                }
            }
            return;
        }
        let Some(index) = self.pending.remove(&id) else {
            return;
        };
        let answer = if let Some(result) = message.get("result") {
            Answer::Result(result.clone())
        } else {
            let error = message.get("error");
            Answer::Error {
                code: error
                    .and_then(|e| e.get("code"))
                    .and_then(Value::as_i64)
                    .unwrap_or(0),
                message: error
                    .and_then(|e| e.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                data: error.and_then(|e| e.get("data")).cloned(),
            }
        };
        self.answered(index, answer);
    }

    fn answered(&mut self, index: usize, answer: Answer) {
        if let Some(call) = self.traffic.calls.get_mut(index) {
            if call.step + 1 == self.steps {
                self.in_flight = self.in_flight.saturating_sub(1);
            }
            call.answer = answer;
        }
    }
}

/// Which side a line came from.
#[derive(Clone, Copy)]
enum Side {
    Client,
    Server,
}

/// Relays `client_in` to `server_in` and `server_out` to `client_out`,
/// line by line, until the server's output ends (the client's input
/// ending closes the server's input, and is told to `client_ended`, so
/// the caller can stop a server that does not end by itself), and
/// returns what passed.
pub async fn relay<CI, CO, SI, SO>(
    client_in: CI,
    client_out: CO,
    server_in: SI,
    server_out: SO,
    client_ended: Arc<tokio::sync::Notify>,
) -> Traffic
where
    CI: AsyncBufRead + Unpin + Send + 'static,
    CO: AsyncWrite + Unpin + Send + 'static,
    SI: AsyncWrite + Unpin + Send + 'static,
    SO: AsyncBufRead + Unpin + Send + 'static,
{
    let state = Arc::new(Mutex::new(State::default()));
    let upstream_state = state.clone();
    let upstream = tokio::spawn(async move {
        pump(client_in, server_in, Side::Client, upstream_state).await;
        client_ended.notify_one();
    });
    pump(server_out, client_out, Side::Server, state.clone()).await;
    // The server's output ended: what the client still sends has nowhere
    // to go.
    upstream.abort();
    let _ = upstream.await;
    let mut state = state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    std::mem::take(&mut state.traffic)
}

/// Copies `from` to `to` line by line, noting each line in `state`; at
/// the end of `from`, shuts `to` down.
async fn pump<R, W>(mut from: R, mut to: W, side: Side, state: Arc<Mutex<State>>)
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut line = Vec::new();
    loop {
        line.clear();
        let (complete, ended) = read_line(&mut from, &mut line)
            .await
            .unwrap_or((false, true));
        if complete {
            observe(&line, side, &state);
        } else if !line.is_empty() {
            if let Ok(mut s) = state.lock() {
                s.traffic.overlong_lines += 1;
            }
            // The rest of the line, forwarded as it comes.
            if to.write_all(&line).await.is_err() {
                break;
            }
            if !ended && pass_rest(&mut from, &mut to).await.is_err() {
                break;
            }
            let _ = to.flush().await;
            continue;
        }
        if !line.is_empty() && (to.write_all(&line).await.is_err() || to.flush().await.is_err()) {
            break;
        }
        if ended {
            break;
        }
    }
    let _ = to.shutdown().await;
}

/// Reads one line into `line`, up to [`MAX_OBSERVED_LINE`] bytes: whether
/// the line is complete (ends with a newline, or ends the input), and
/// whether the input ended.
async fn read_line<R: AsyncBufRead + Unpin>(
    from: &mut R,
    line: &mut Vec<u8>,
) -> std::io::Result<(bool, bool)> {
    loop {
        let available = from.fill_buf().await?;
        if available.is_empty() {
            return Ok((true, true));
        }
        let room = MAX_OBSERVED_LINE - line.len();
        if let Some(at) = available.iter().take(room).position(|b| *b == b'\n') {
            line.extend_from_slice(&available[..=at]);
            from.consume(at + 1);
            return Ok((true, false));
        }
        let take = available.len().min(room);
        line.extend_from_slice(&available[..take]);
        from.consume(take);
        if line.len() >= MAX_OBSERVED_LINE {
            return Ok((false, false));
        }
    }
}

/// Forwards the rest of an overlong line, up to and including its newline.
async fn pass_rest<R, W>(from: &mut R, to: &mut W) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    loop {
        let available = from.fill_buf().await?;
        if available.is_empty() {
            return Ok(());
        }
        let (chunk, done) = match available.iter().position(|b| *b == b'\n') {
            Some(at) => (at + 1, true),
            None => (available.len(), false),
        };
        to.write_all(&available[..chunk]).await?;
        from.consume(chunk);
        if done {
            return Ok(());
        }
    }
}

fn observe(line: &[u8], side: Side, state: &Mutex<State>) {
    let text = line.strip_suffix(b"\n").unwrap_or(line);
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    if text.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    let Ok(mut state) = state.lock() else {
        return;
    };
    let messages = match serde_json::from_slice::<Value>(text) {
        Ok(Value::Array(batch)) => batch,
        Ok(message @ Value::Object(_)) => vec![message],
        _ => {
            state.traffic.other_lines += 1;
            return;
        }
    };
    for message in &messages {
        match side {
            Side::Client => state.client_sent(message),
            Side::Server => state.server_sent(message),
        }
    }
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
