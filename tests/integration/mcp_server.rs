//! The server side of `harness mcp` beyond tools: `--http` (Streamable
//! HTTP, through rmcp's own client and by hand for the refusals), logging,
//! resources, and the answers to what is not a message (-32700, -32600,
//! -32602) with their line on standard error.

use std::io::BufRead;
use std::io::BufReader;
use std::io::Read;
use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::process::Child;
use std::process::ChildStdin;
use std::process::Command;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use pretty_assertions::assert_eq;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::Value;
use serde_json::json;

use super::mcp::ends_within;

/// The longest any one exchange may take before the test fails.
const LIMIT: Duration = Duration::from_secs(60);

/// A 2x1 PNG (red, blue), which read sends back unchanged.
const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAAEElEQVR4nGP4z8DAwMDAAAANAgGBJbkpAAAAAElFTkSuQmCC";

/// What read says of a missing `nope.txt`.
const NOPE: &str = "File not found: nope.txt. No similar name exists there; use the find tool \
                    (pattern \"**/nope.txt\") or ls to locate it.";

fn png_bytes() -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(PNG_BASE64)
        .unwrap()
}

/// Lines of a child's pipe, read on a thread.
fn lines_of(pipe: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// `harness mcp --http 127.0.0.1:0` over `workspace`, its URL and the rest
/// of its standard error.
struct Http {
    child: Child,
    url: String,
    port: u16,
    stderr: mpsc::Receiver<String>,
}

impl Http {
    fn start(workspace: &Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_harness"))
            .args(["mcp", "--http", "127.0.0.1:0", "--no-sandbox", "--cwd"])
            .arg(workspace)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = lines_of(child.stderr.take().unwrap());
        let first = stderr.recv_timeout(LIMIT).unwrap();
        let url = first
            .strip_prefix("harness mcp: serving on ")
            .unwrap_or_else(|| panic!("unexpected first line: {first}"))
            .to_owned();
        let port: u16 = url
            .strip_prefix("http://127.0.0.1:")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .unwrap()
            .parse()
            .unwrap();
        assert_ne!(port, 0);
        Self {
            child,
            url,
            port,
            stderr,
        }
    }

    /// A raw HTTP/1.1 POST of an `initialize` with these extra headers
    /// (and this Host): the status line and the body.
    fn post_initialize(&self, host: &str, extra: &str) -> (String, String) {
        let body = json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": { "name": "raw", "version": "1" }
            }
        })
        .to_string();
        self.raw(&format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: \
             application/json, text/event-stream\r\n{extra}Content-Length: {}\r\nConnection: \
             close\r\n\r\n{body}",
            body.len()
        ))
    }

    fn raw(&self, request: &str) -> (String, String) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream.set_read_timeout(Some(LIMIT)).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        let status = answer.lines().next().unwrap_or_default().to_owned();
        let body = answer
            .split_once("\r\n\r\n")
            .map(|(_, body)| body.to_owned())
            .unwrap_or_default();
        (status, body)
    }

    /// SIGTERM, then the exit code and what else it said on stderr.
    fn stop(mut self) -> (Option<i32>, Vec<String>) {
        let pid = rustix::process::Pid::from_raw(self.child.id() as i32).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(self.child.wait());
        });
        let status = rx
            .recv_timeout(LIMIT)
            .expect("harness mcp --http did not exit after SIGTERM")
            .unwrap();
        let rest: Vec<String> = self.stderr.iter().collect();
        (status.code(), rest)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_serves_the_tools_and_a_call_and_ends_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    let server = Http::start(dir.path());
    let client =
        ().serve(StreamableHttpClientTransport::from_uri(server.url.as_str()))
            .await
            .unwrap();
    let info = client.peer().peer_info().unwrap();
    assert_eq!(
        serde_json::to_value(&info.capabilities).unwrap(),
        json!({ "logging": {}, "resources": {}, "tools": {} })
    );
    let tools: Vec<String> = client
        .peer()
        .list_tools(None)
        .await
        .unwrap()
        .tools
        .iter()
        .map(|tool| tool.name.to_string())
        .collect();
    assert_eq!(
        tools,
        ["read", "bash", "edit", "write", "grep", "find", "ls"]
    );
    let args = json!({ "path": "a.txt" });
    let result = client
        .peer()
        .call_tool(
            CallToolRequestParams::new("read").with_arguments(args.as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&result.content).unwrap(),
        json!([{ "type": "text", "text": "one\ntwo\n" }])
    );
    client.cancel().await.unwrap();
    assert_eq!(server.stop(), (Some(0), Vec::new()));
}

#[test]
fn http_refuses_a_foreign_host_or_origin_and_other_paths() {
    let dir = tempfile::tempdir().unwrap();
    let server = Http::start(dir.path());
    let port = server.port;
    let hosts = format!("localhost:{port}, 127.0.0.1:{port}, [::1]:{port}");
    assert_eq!(
        server.post_initialize("evil.example.com", "Origin: http://evil.example.com\r\n"),
        (
            "HTTP/1.1 403 Forbidden".to_owned(),
            format!(
                "Forbidden: the Host header evil.example.com is not this server's address; a \
                 local MCP server answers only {hosts} (a protection against DNS rebinding).\n"
            )
        )
    );
    assert_eq!(
        server.post_initialize(&format!("localhost:{}", port + 1), ""),
        (
            "HTTP/1.1 403 Forbidden".to_owned(),
            format!(
                "Forbidden: the Host header localhost:{} is not this server's address; a local \
                 MCP server answers only {hosts} (a protection against DNS rebinding).\n",
                port + 1
            )
        )
    );
    assert_eq!(
        server.post_initialize(
            &format!("127.0.0.1:{port}"),
            "Origin: http://evil.example.com\r\n"
        ),
        (
            "HTTP/1.1 403 Forbidden".to_owned(),
            "Forbidden: the Origin http://evil.example.com is not a local page; this server \
             answers pages of http(s)://localhost, 127.0.0.1 or [::1] only (a protection against \
             DNS rebinding).\n"
                .to_owned()
        )
    );
    assert_eq!(
        server.raw(&format!(
            "GET /other HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
        )),
        (
            "HTTP/1.1 404 Not Found".to_owned(),
            "Not found: this server answers MCP on /mcp only.\n".to_owned()
        )
    );
    // A local page of another port is let through.
    let (status, _) = server.post_initialize(
        &format!("localhost:{port}"),
        "Origin: http://localhost:5173\r\n",
    );
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(server.stop(), (Some(0), Vec::new()));
}

#[test]
fn http_holds_at_most_32_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let server = Http::start(dir.path());
    let host = format!("127.0.0.1:{}", server.port);
    let statuses: Vec<String> = (0..33)
        .map(|_| server.post_initialize(&host, "").0)
        .collect();
    let mut expected = vec!["HTTP/1.1 200 OK".to_owned(); 32];
    expected.push("HTTP/1.1 503 Service Unavailable".to_owned());
    assert_eq!(statuses, expected);
    assert_eq!(
        server.post_initialize(&host, "").1,
        "Service unavailable: this server already holds 32 sessions, the most it holds at once. \
         End one (an HTTP DELETE with its Mcp-Session-Id), or wait: a session ends after 5 \
         minutes without a request.\n"
    );
    assert_eq!(server.stop(), (Some(0), Vec::new()));
}

#[test]
fn http_sigterm_cancels_a_running_call_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = Http::start(dir.path());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let url = server.url.clone();
    let fifo = dir.path().join("pid.fifo");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    let call = runtime.spawn(async move {
        let client = ().serve(StreamableHttpClientTransport::from_uri(url.as_str())).await.unwrap();
        let args = json!({ "command": "sleep 1000 & echo $! > pid.fifo; wait" });
        let _ = client
            .peer()
            .call_tool(
                CallToolRequestParams::new("bash")
                    .with_arguments(args.as_object().unwrap().clone()),
            )
            .await;
    });
    let mut line = String::new();
    BufReader::new(std::fs::File::open(&fifo).unwrap())
        .read_line(&mut line)
        .unwrap();
    let sleep: i32 = line.trim().parse().unwrap();
    assert_eq!(server.stop(), (Some(0), Vec::new()));
    assert!(
        ends_within(sleep, LIMIT),
        "process {sleep} survived SIGTERM"
    );
    call.abort();
    runtime.shutdown_timeout(Duration::from_secs(1));
}

/// `harness mcp` on stdio, its lines by hand.
struct Stdio2 {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: mpsc::Receiver<String>,
    stderr: mpsc::Receiver<String>,
}

impl Stdio2 {
    fn start(workspace: &Path, args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_harness"))
            .args(["mcp", "--no-sandbox", "--cwd"])
            .arg(workspace)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = lines_of(child.stdout.take().unwrap());
        let stderr = lines_of(child.stderr.take().unwrap());
        let stdin = child.stdin.take();
        let mut wire = Self {
            child,
            stdin,
            stdout,
            stderr,
        };
        wire.line(
            &json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": { "name": "wire", "version": "1" }
                }
            })
            .to_string(),
        );
        wire.next();
        wire.line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        wire
    }

    fn line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, id: i64, method: &str, params: Value) {
        self.line(
            &json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string(),
        );
    }

    fn next(&mut self) -> Value {
        let line = self
            .stdout
            .recv_timeout(LIMIT)
            .expect("no line from harness mcp");
        serde_json::from_str(&line).unwrap()
    }

    /// The lines up to and with the answer to `id`.
    fn until(&mut self, id: i64) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let line = self.next();
            let done = line["id"] == json!(id);
            seen.push(line);
            if done {
                return seen;
            }
        }
    }

    /// The lines up to the last answer of `ids` (answered in any order).
    fn until_all(&mut self, ids: &[i64]) -> Vec<Value> {
        let mut seen = Vec::new();
        let mut left: Vec<i64> = ids.to_vec();
        while !left.is_empty() {
            let line = self.next();
            left.retain(|id| line["id"] != json!(id));
            seen.push(line);
        }
        seen
    }

    fn answer(&mut self, id: i64) -> Value {
        self.until(id).pop().unwrap()
    }

    /// Closes the input; the exit code and the lines of stderr.
    fn finish(mut self) -> (Option<i32>, Vec<String>) {
        drop(self.stdin.take());
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(self.child.wait());
        });
        let status = rx.recv_timeout(LIMIT).unwrap().unwrap();
        (status.code(), self.stderr.iter().collect())
    }
}

#[test]
fn what_is_not_a_message_is_answered_and_said_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let mut wire = Stdio2::start(dir.path(), &[]);
    wire.line("not json \u{1b}[31m at all");
    assert_eq!(
        wire.next(),
        json!({ "jsonrpc": "2.0", "error": { "code": -32700,
            "message": "Parse error: the line is not JSON (expected ident at line 1 column 2)." } })
    );
    wire.line(r#"{"jsonrpc":"2.0","id":"x"}"#);
    assert_eq!(
        wire.next(),
        json!({ "jsonrpc": "2.0", "id": "x", "error": { "code": -32600,
            "message": "Invalid Request: this is not a JSON-RPC 2.0 message of MCP (a request \
                        needs \"jsonrpc\": \"2.0\", an id, a method and, for most methods, \
                        params)." } })
    );
    wire.request(3, "tools/call", json!({ "name": 5 }));
    assert_eq!(
        wire.answer(3),
        json!({ "jsonrpc": "2.0", "id": 3, "error": { "code": -32602,
            "message": "Invalid params for tools/call: invalid type: integer `5`, expected a \
                        string." } })
    );
    wire.request(4, "resources/read", json!({}));
    assert_eq!(
        wire.answer(4),
        json!({ "jsonrpc": "2.0", "id": 4, "error": { "code": -32602,
            "message": "Invalid params for resources/read: missing field `uri`." } })
    );
    wire.request(5, "no/such", json!({}));
    assert_eq!(
        wire.answer(5),
        json!({ "jsonrpc": "2.0", "id": 5, "error": { "code": -32601,
            "message": "Method not found: this server has no method no/such." } })
    );
    assert_eq!(
        wire.finish(),
        (
            Some(0),
            vec![
                "harness mcp: a line that is not JSON was answered with -32700 Parse error \
                 (expected ident at line 1 column 2): not json \\u{1b}[31m at all"
                    .to_owned(),
                "harness mcp: JSON that is not an MCP message was answered with -32600 Invalid \
                 Request: {\"jsonrpc\":\"2.0\",\"id\":\"x\"}"
                    .to_owned(),
            ]
        )
    );
}

/// The data of the log messages among `lines`, with their level.
fn logged(lines: &[Value]) -> Vec<(String, String)> {
    lines
        .iter()
        .filter(|line| line["method"] == "notifications/message")
        .map(|line| {
            assert_eq!(line["params"]["logger"], "harness");
            (
                line["params"]["level"].as_str().unwrap().to_owned(),
                line["params"]["data"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn log_messages_come_after_set_level_at_that_level_and_above() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let mut wire = Stdio2::start(dir.path(), &[]);
    // Before a level is set: nothing.
    wire.request(
        1,
        "tools/call",
        json!({ "name": "read", "arguments": { "path": "a.txt" } }),
    );
    assert_eq!(logged(&wire.until(1)), Vec::new());
    wire.request(2, "logging/setLevel", json!({ "level": "debug" }));
    assert_eq!(
        wire.until(2),
        vec![json!({ "jsonrpc": "2.0", "id": 2, "result": {} })]
    );
    wire.request(
        3,
        "tools/call",
        json!({ "name": "read", "arguments": { "path": "a.txt" } }),
    );
    wire.request(
        4,
        "tools/call",
        json!({ "name": "read", "arguments": { "path": "nope.txt" } }),
    );
    wire.request(
        5,
        "tools/call",
        json!({ "name": "read", "arguments": { "pth": "a.txt" } }),
    );
    wire.request(6, "tools/call", json!({ "name": "fly", "arguments": {} }));
    let lines = wire.until_all(&[3, 4, 5, 6]);
    let mut messages = logged(&lines);
    messages.sort();
    let failed = |text: &str| ("warning".to_owned(), text.to_owned());
    let debug = |text: &str| ("debug".to_owned(), text.to_owned());
    assert_eq!(
        messages,
        vec![
            debug("tools/call read (id 3) ended"),
            debug("tools/call read (id 3) started"),
            debug("tools/call read (id 4) started"),
            failed(
                "tools/call fly (id 6) refused: Tool \"fly\" not found. Available tools: read, \
                 bash, edit, write, grep, find, ls. Call one of those by its exact name."
            ),
            failed(&format!("tools/call read (id 4) failed: {NOPE}")),
            failed(
                "tools/call read (id 5) refused: Validation failed for tool \"read\":\n  - \
                 /path: expected a value (the property is required), received nothing\n\n\
                 Received arguments:\n{\n  \"pth\": \"a.txt\"\n}\n\nFix the listed \
                 arguments and call read again."
            ),
        ]
    );
    // At error, the failures are no longer said.
    wire.request(7, "logging/setLevel", json!({ "level": "error" }));
    wire.answer(7);
    wire.request(
        8,
        "tools/call",
        json!({ "name": "read", "arguments": { "path": "nope.txt" } }),
    );
    assert_eq!(logged(&wire.until(8)), Vec::new());
    assert_eq!(wire.finish(), (Some(0), Vec::new()));
}

#[test]
fn resources_are_the_workspace_files_read_as_read_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join(".gitignore"), "ignored.txt\n").unwrap();
    std::fs::write(ws.join("ignored.txt"), "no\n").unwrap();
    std::fs::write(ws.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(ws.join("a b.txt"), "spaced\n").unwrap();
    std::fs::write(ws.join("pic.png"), png_bytes()).unwrap();
    let long: String = (1..=3000).map(|n| format!("line {n}\n")).collect();
    std::fs::write(ws.join("long.txt"), &long).unwrap();
    std::fs::write(dir.path().join("secret.txt"), "outside\n").unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret.txt"), ws.join("link.txt")).unwrap();
    // `git init` is not needed for .gitignore: find reads it anyway.
    let mut wire = Stdio2::start(&ws, &[]);
    wire.request(1, "resources/list", json!({}));
    let listed = wire.answer(1);
    let names: Vec<(String, String)> = listed["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["uri"].as_str().unwrap().to_owned(),
                r["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let pair = |uri: &str, name: &str| (uri.to_owned(), name.to_owned());
    assert_eq!(
        names,
        vec![
            pair("file:///.gitignore", ".gitignore"),
            pair("file:///a%20b.txt", "a b.txt"),
            pair("file:///link.txt", "link.txt"),
            pair("file:///long.txt", "long.txt"),
            pair("file:///pic.png", "pic.png"),
            pair("file:///src/main.rs", "src/main.rs"),
        ]
    );
    assert_eq!(listed["result"].get("nextCursor"), None);
    assert_eq!(
        listed["result"]["resources"][4],
        json!({ "uri": "file:///pic.png", "name": "pic.png", "mimeType": "image/png" })
    );

    wire.request(2, "resources/templates/list", json!({}));
    assert_eq!(
        wire.answer(2)["result"]["resourceTemplates"],
        json!([{
            "uriTemplate": "file:///{path}", "name": "workspace file",
            "title": "A file of the workspace",
            "description": "Any file of the workspace by its path relative to the workspace \
                            root, read as the read tool reads it (the same limits and \
                            truncation; images as base64)."
        }])
    );

    wire.request(3, "resources/read", json!({ "uri": "file:///a%20b.txt" }));
    assert_eq!(
        wire.answer(3)["result"],
        json!({ "contents": [{ "uri": "file:///a%20b.txt", "mimeType": "text/plain", "text": "spaced\n" }] })
    );
    wire.request(
        4,
        "resources/read",
        json!({ "uri": "file:///src%2Fmain.rs" }),
    );
    assert_eq!(
        wire.answer(4)["result"]["contents"][0]["text"],
        json!("fn main() {}\n")
    );
    wire.request(5, "resources/read", json!({ "uri": "file:///pic.png" }));
    assert_eq!(
        wire.answer(5)["result"],
        json!({ "contents": [{ "uri": "file:///pic.png", "mimeType": "image/png", "blob": PNG_BASE64 }] })
    );
    // Truncated exactly as read truncates.
    let read = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["call", "read", r#"{"path":"long.txt"}"#, "--cwd"])
        .arg(&ws)
        .output()
        .unwrap();
    let read: Value = serde_json::from_slice(&read.stdout).unwrap();
    wire.request(6, "resources/read", json!({ "uri": "file:///long.txt" }));
    assert_eq!(
        wire.answer(6)["result"]["contents"][0]["text"],
        read["content"][0]["text"]
    );
    assert!(
        read["content"][0]["text"]
            .as_str()
            .unwrap()
            .ends_with("[Showing lines 1-2000 of 3000. Use offset=2001 to continue.]")
    );

    // Outside the workspace, by .. or by a symlink, and unknown URIs.
    let not_found = |id: i64, wire: &mut Stdio2, uri: &str| {
        wire.request(id, "resources/read", json!({ "uri": uri }));
        let answer = wire.answer(id);
        (
            answer["error"]["code"].clone(),
            answer["error"]["message"].as_str().unwrap().to_owned(),
        )
    };
    let relative = "Resource not found: A resource path is relative to the workspace and stays \
                    inside it (no leading /, no ..).";
    assert_eq!(
        not_found(7, &mut wire, "file:///../secret.txt"),
        (json!(-32002), relative.to_owned())
    );
    assert_eq!(
        not_found(8, &mut wire, "file:////etc/passwd"),
        (json!(-32002), relative.to_owned())
    );
    let (code, message) = not_found(9, &mut wire, "file:///link.txt");
    assert_eq!(code, json!(-32002));
    assert!(message.starts_with("Resource not found: "), "{message}");
    assert!(!message.contains("outside\n"), "{message}");
    assert_eq!(
        not_found(10, &mut wire, "test://static-text"),
        (
            json!(-32002),
            "Resource not found: The resources of this server are the workspace's files, \
             file:///{path} with the path relative to the workspace."
                .to_owned()
        )
    );
    let (code, message) = not_found(11, &mut wire, "file:///nope.txt");
    assert_eq!(
        (code, message.as_str()),
        (
            json!(-32002),
            format!("Resource not found: {NOPE}").as_str()
        )
    );
    assert_eq!(wire.finish(), (Some(0), Vec::new()));
}

#[test]
fn resources_are_listed_a_page_at_a_time_and_only_with_read() {
    let dir = tempfile::tempdir().unwrap();
    for n in 0..1203 {
        std::fs::write(dir.path().join(format!("f{n:04}.txt")), "x\n").unwrap();
    }
    let mut wire = Stdio2::start(dir.path(), &[]);
    let mut cursor: Option<String> = None;
    let mut pages = Vec::new();
    for id in 1..10 {
        let params = cursor
            .as_ref()
            .map_or_else(|| json!({}), |cursor| json!({ "cursor": cursor }));
        wire.request(id, "resources/list", params);
        let answer = wire.answer(id);
        let resources = answer["result"]["resources"].as_array().unwrap();
        pages.push((
            resources.len(),
            resources.first().unwrap()["name"].clone(),
            answer["result"].get("nextCursor").cloned(),
        ));
        cursor = answer["result"]["nextCursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(
        pages,
        vec![
            (500, json!("f0000.txt"), Some(json!("500"))),
            (500, json!("f0500.txt"), Some(json!("1000"))),
            (203, json!("f1000.txt"), None),
        ]
    );
    wire.request(20, "resources/list", json!({ "cursor": "bogus" }));
    assert_eq!(
        wire.answer(20)["error"],
        json!({ "code": -32602, "message": "The cursor is not one this server gave: pass the \
            nextCursor of the previous resources/list page, or none for the first page.",
            "data": { "cursor": "bogus" } })
    );
    assert_eq!(wire.finish(), (Some(0), Vec::new()));

    // Without read among the tools: no resources.
    let mut wire = Stdio2::start(dir.path(), &["--tools", "bash,ls"]);
    wire.request(1, "resources/list", json!({}));
    assert_eq!(wire.answer(1)["error"]["code"], json!(-32601));
    assert_eq!(wire.finish(), (Some(0), Vec::new()));
}
