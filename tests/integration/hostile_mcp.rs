//! The harness against hostile MCP peers (issue 42): as a client, the
//! servers of `tests/fixtures/mcp/hostile_server.py` (answers under the
//! wrong id, answers nested past what can be read, tool names with line
//! breaks); as `harness mcp`, clients that flood it without reading. Every
//! wait is bounded; none is a sleep.

use std::path::Path;
use std::time::Duration;
use std::time::Instant;

use harness::mcp::client::Command;
use harness::mcp::client::Launch;
use harness::mcp::client::McpClient;
use harness::mcp::client::ServerConfig;
use harness::tools::ToolResult;
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const HARNESS: &str = env!("CARGO_BIN_EXE_harness");

/// The longest any one exchange may take before the test fails.
const LIMIT: Duration = Duration::from_secs(30);

/// The hostile server's script.
fn script() -> String {
    format!(
        "{}/tests/fixtures/mcp/hostile_server.py",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// The hostile server in `mode` (with its argument), as a client starts it.
fn hostile(mode: &[&str], cwd: &Path) -> ServerConfig {
    let mut args = vec![script()];
    args.extend(mode.iter().map(|m| (*m).to_owned()));
    let mut config = ServerConfig::new(
        "hostile",
        Launch::Command(Command {
            program: "python3".to_owned(),
            args,
            env: Vec::new(),
            cwd: cwd.to_path_buf(),
        }),
    );
    config.startup_timeout = LIMIT;
    config.stop_grace = Duration::from_millis(300);
    config
}

async fn call(client: &McpClient, tool: &str) -> ToolResult {
    let cancel = CancellationToken::new();
    tokio::time::timeout(LIMIT, client.call(tool, json!({}), &cancel))
        .await
        .expect("the call ends within the limit")
}

/// Issue 42, item 9: an answer whose id is the string `"2"` does not
/// answer request `2`; it is a junk line, and the answer under the
/// request's own id is the one taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_under_an_id_of_another_type_answers_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let client = McpClient::start(hostile(&["string-id"], dir.path()))
        .await
        .unwrap();
    let first = call(&client, "echo").await;
    let second = call(&client, "echo").await;
    assert_eq!(
        (first.text(), second.text(), client.junk_lines()),
        (
            "answered under the request's id".to_owned(),
            "answered under the request's id".to_owned(),
            2
        )
    );
    let report = client.stop().await;
    assert_eq!(report.junk_samples.len(), 2, "{report:?}");
    assert!(
        report.junk_samples[0].starts_with("{\"jsonrpc\":\"2.0\",\"id\":\""),
        "{report:?}"
    );
}

/// Issue 42, item 8: a `tools/list` answer nested deeper than the
/// 127 levels a message is read to fails the start at once, saying so
/// (it was dropped as junk, and the start waited out its whole timeout
/// to blame the server for not answering).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tools_list_answer_nested_too_deep_fails_the_start_at_once_saying_why() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let err = match McpClient::start(hostile(&["deep-list", "130"], dir.path())).await {
        Ok(client) => panic!("started: {:?}", client.facts()),
        Err(err) => err,
    };
    assert_eq!(
        (err.message.as_str(), err.exit_status.as_deref()),
        (
            "its answer to `tools/list` could not be read: it is nested 135 levels deep (arrays \
             and objects inside one another), and a message may be nested 127 at most",
            None
        )
    );
    // Not the start-up timeout: the answer was judged when it came.
    assert!(started.elapsed() < LIMIT, "{:?}", started.elapsed());
}

/// The same for the answer to a call: the call ends at once with an
/// error result that says why, instead of waiting for an answer that came.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_answer_nested_too_deep_is_an_error_result_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let client = McpClient::start(hostile(&["deep-call", "200"], dir.path()))
        .await
        .unwrap();
    let result = call(&client, "echo").await;
    let why = "it is nested 202 levels deep (arrays and objects inside one another), and a \
               message may be nested 127 at most";
    assert_eq!(
        (result.is_error, result.text(), result.details),
        (
            true,
            format!(
                "MCP server `hostile` answered the call to `echo`, but its answer could not be \
                 read: {why}."
            ),
            Some(json!({ "error_class": "mcp_transport_error", "reason": why }))
        )
    );
    // Not a junk line: it was an answer, and said so.
    assert_eq!(client.junk_lines(), 0);
    client.stop().await;
}

fn harness_output(args: &[&str]) -> (i32, String, String) {
    let output = std::process::Command::new(HARNESS)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// Issue 42, item 10: a tool name with a line break is shown on one line
/// (its control characters as pictures), in the listing and the token
/// table alike.
#[test]
fn a_tool_name_with_a_line_break_is_shown_on_one_line() {
    let script = script();
    let mcp = ["--mcp", "python3", script.as_str(), "name-newline"];
    let (code, out, err) = harness_output(&[&["tools"][..], &mcp].concat());
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            0,
            "line\u{240a}break (line\u{240a}break, Parallel)\n  A tool of the hostile server.\n\n\
             bell\u{2407} (bell\u{2407}, Parallel)\n  A tool of the hostile server.\n\n",
            ""
        )
    );
    let (code, out, _) = harness_output(&[&["tools", "--tokens"][..], &mcp].concat());
    assert_eq!(code, 0);
    let rows: Vec<&str> = out.lines().take(4).collect();
    assert_eq!(
        rows,
        [
            "tool        description  schema  definition",
            "line␊break            7       9          27",
            "bell␇                 7       9          28",
            "total                14      18          56",
        ]
    );
}

/// The hostile HTTP server in `mode`, its port read from its first line;
/// it ends when the returned child's input closes (dropping the child).
fn hostile_http(mode: &str) -> (std::process::Child, u16) {
    use std::io::BufRead;
    let mut child = std::process::Command::new("python3")
        .arg(format!(
            "{}/tests/fixtures/mcp/hostile_http.py",
            env!("CARGO_MANIFEST_DIR")
        ))
        .arg(mode)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (child, line.trim().parse().unwrap())
}

fn url_server(url: String) -> ServerConfig {
    let mut config = ServerConfig::new(
        "web",
        Launch::Url {
            url,
            headers: Vec::new(),
        },
    );
    config.startup_timeout = LIMIT;
    config
}

/// Issue 42, item 10: what an HTTP server's failures are called names no
/// Rust type of the MCP library (`Transport [rmcp::transport::…<…>]`), in
/// a start that fails and in calls that do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_failures_are_worded_plainly() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let unreachable =
        match McpClient::start(url_server(format!("http://127.0.0.1:{port}/mcp"))).await {
            Ok(client) => panic!("started: {:?}", client.facts()),
            Err(err) => err.message.replace(&port.to_string(), "PORT"),
        };
    let mut called = Vec::new();
    for mode in ["status-500", "html", "not-json"] {
        let (mut child, port) = hostile_http(mode);
        let client = McpClient::start(url_server(format!("http://127.0.0.1:{port}/mcp")))
            .await
            .unwrap();
        let result = call(&client, "echo").await;
        called.push(result.text().replace(&port.to_string(), "PORT"));
        client.stop().await;
        drop(child.stdin.take());
        child.wait().unwrap();
    }
    assert_eq!(
        (unreachable.as_str(), called),
        (
            "`initialize` failed: error sending request for url (http://127.0.0.1:PORT/mcp): \
             client error (Connect): tcp connect error: Connection refused (os error 111)",
            [
                "it answered with HTTP status 500",
                "it answered with content type `text/html`, not JSON or an event stream",
                "it answered with something that is not the JSON-RPC message expected",
            ]
            .map(|why| {
                format!(
                    "The call to `echo` on MCP server `web` at http://127.0.0.1:PORT/mcp failed: \
                     {why}."
                )
            })
            .to_vec()
        )
    );
}

/// What a bash command finds when it tries to open the harness's own
/// standard input (to read) and output (to write) through
/// `/proc/$PPID/fd/`: `fd0 refused, fd1 refused` when it cannot.
const PROBE_PARENT: &str = "for fd in 0 1; do \
    if [ $fd = 0 ]; then (exec 3<\"/proc/$PPID/fd/0\"); else (exec 3>\"/proc/$PPID/fd/1\"); fi \
    2>/dev/null && printf 'fd%s opened ' $fd || printf 'fd%s refused ' $fd; done";

/// `harness ARGS`, without any capability when the tests run as root:
/// a command then has what its parent has, and only the parent's own
/// protection (not being dumpable) stands between them. (Root with
/// `CAP_SYS_PTRACE` opens any process's descriptors, and a process with
/// fewer capabilities than its parent is refused by that alone.)
fn unprivileged(args: &[&str]) -> std::process::Command {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let mut command = if root {
        let mut setpriv = std::process::Command::new("setpriv");
        setpriv.args(["--inh-caps=-all", "--bounding-set=-all", "--", HARNESS]);
        setpriv
    } else {
        std::process::Command::new(HARNESS)
    };
    command.args(args);
    command
}

/// Issue 42, item 7: a command `harness mcp` runs cannot open the
/// protocol stream through `/proc/$PPID/fd/0` and `/proc/$PPID/fd/1`
/// (same user): `harness mcp` is not dumpable while it serves.
#[test]
fn a_command_cannot_open_the_protocol_stream_of_harness_mcp() {
    use std::io::BufRead;
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    // Without the sandbox (whose PID namespace hides the parent too), so
    // the test is of the guard alone.
    let mut child = unprivileged(&["mcp", "--no-sandbox", "--cwd", dir.path().to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let messages = [
        json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": { "name": "probe", "version": "1" }
            }
        }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": { "name": "bash", "arguments": { "command": PROBE_PARENT } }
        }),
    ];
    for message in messages {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    let mut answer = None;
    for line in std::io::BufReader::new(child.stdout.take().unwrap()).lines() {
        let message: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        if message["id"] == json!(1) {
            answer = Some(message["result"]["content"][0]["text"].clone());
            break;
        }
    }
    drop(stdin);
    child.wait().unwrap();
    assert_eq!(answer, Some(json!("fd0 refused fd1 refused ")));
}

/// The same for `harness call`, whose standard output is the result a
/// script reads.
#[test]
fn a_command_cannot_open_the_streams_of_harness_call() {
    let dir = tempfile::tempdir().unwrap();
    let args = json!({ "command": PROBE_PARENT }).to_string();
    let output = unprivileged(&["call", "--no-sandbox", "bash", &args])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::piped())
        .output()
        .unwrap();
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        result["content"][0]["text"],
        json!("fd0 refused fd1 refused ")
    );
}

/// And for `harness run`, whose process holds every figure and verdict a
/// command could otherwise reach through `/proc/$PPID/`.
#[test]
fn a_command_cannot_open_the_streams_of_harness_run() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("probe.yaml");
    let yaml = format!(
        "name: probe\nsandbox: off\nmodel:\n  - call: bash\n    args: {{ command: {} }}\n    expect: {{ equals: \
         \"fd0 refused fd1 refused \" }}\n",
        json!(PROBE_PARENT)
    );
    std::fs::write(&scenario, yaml).unwrap();
    let output = unprivileged(&["run", scenario.to_str().unwrap()])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::piped())
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stdout}");
}

/// Issue 42, item 3: `harness mcp` pushes back on a client that sends
/// requests and never reads the answers. It takes at most 64 requests
/// that are not yet answered; then it reads no more of its input, so
/// the client's writes block (here: the pipe stays full for 5 s) instead
/// of the server growing by every answer it cannot write. Once the
/// client reads, every request is answered.
#[test]
fn harness_mcp_stops_reading_while_its_answers_are_not_read() {
    use std::io::BufRead;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    const REQUESTS: usize = 400;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "x\n".repeat(2000)).unwrap();
    let mut child = std::process::Command::new(HARNESS)
        .args(["mcp", "--cwd", dir.path().to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let init = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": { "name": "flood", "version": "1" }
        }
    });
    writeln!(stdin, "{init}").unwrap();
    stdin.flush().unwrap();
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    writeln!(
        stdin,
        "{}",
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })
    )
    .unwrap();
    let request = |id: usize| {
        format!(
            "{}\n",
            json!({
                "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {
                    "name": "read",
                    "arguments": { "path": "f.txt" },
                    // Long requests: fewer fit in the pipe.
                    "_meta": { "pad": "p".repeat(1000) }
                }
            })
        )
    };
    let lines: Vec<String> = (1..=REQUESTS).map(request).collect();
    let flood = lines.concat();
    // Write without blocking until the pipe stays full for 5 s.
    let fd = stdin.as_raw_fd();
    // SAFETY: fcntl on a descriptor this test owns.
    unsafe {
        libc::fcntl(
            fd,
            libc::F_SETFL,
            libc::fcntl(fd, libc::F_GETFL) | libc::O_NONBLOCK,
        )
    };
    let mut sent = 0;
    while sent < flood.len() {
        match stdin.write(&flood.as_bytes()[sent..]) {
            Ok(n) => sent += n,
            Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => {
                let mut poll = libc::pollfd {
                    fd,
                    events: libc::POLLOUT,
                    revents: 0,
                };
                // SAFETY: one valid pollfd.
                if unsafe { libc::poll(&mut poll, 1, 5000) } == 0 {
                    break;
                }
            }
            Err(err) => panic!("{err}"),
        }
    }
    // What it took: 64 in flight, and what the pipe (64 KiB) and the
    // reading side's buffers (less than 32 KiB: rmcp's 8 KiB reader, the
    // line being read) hold, in whole requests, plus the one being read.
    let taken = flood.as_bytes()[..sent]
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    let bound = 64 + (64 + 32) * 1024 / lines[0].len() + 1;
    assert!(
        taken <= bound,
        "{taken} of {REQUESTS} requests taken, more than {bound}"
    );
    // Reading the answers lets the rest in: every request is answered.
    let reader = std::thread::spawn(move || {
        let mut answered = 0;
        let mut line = String::new();
        while answered < REQUESTS {
            line.clear();
            if out.read_line(&mut line).unwrap() == 0 {
                break;
            }
            answered += 1;
        }
        answered
    });
    // SAFETY: as above.
    unsafe {
        libc::fcntl(
            fd,
            libc::F_SETFL,
            libc::fcntl(fd, libc::F_GETFL) & !libc::O_NONBLOCK,
        )
    };
    stdin.write_all(&flood.as_bytes()[sent..]).unwrap();
    stdin.flush().unwrap();
    assert_eq!(reader.join().unwrap(), REQUESTS);
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}
