//! `harness mcp` end to end: the real binary, driven through rmcp's own
//! client (the official Rust SDK) and, where a test needs to see every
//! line on the wire (what is sent for a cancelled request, progress only
//! with a token, the end of the input), through newline-delimited JSON-RPC
//! written by hand. The checks against the Python and TypeScript SDKs and
//! the MCP Inspector are in tests/mcp/ (run by .ci/run).

use std::io::BufRead;
use std::io::BufReader;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::Child;
use std::process::ChildStdin;
use std::process::Command;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use insta::assert_snapshot;
use pretty_assertions::assert_eq;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::model::CallToolResult;
use rmcp::model::ContentBlock;
use rmcp::service::RunningService;
use serde_json::Value;
use serde_json::json;

use super::cli_support::output_within;
use super::cli_support::texts;

/// The longest any one exchange may take before the test fails.
const LIMIT: Duration = Duration::from_secs(60);

/// A 2x1 PNG (red, blue), which read sends back unchanged.
const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAAEElEQVR4nGP4z8DAwMDAAAANAgGBJbkpAAAAAElFTkSuQmCC";

fn harness() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness"));
    cmd.env_remove("NO_COLOR");
    cmd
}

/// Whether a process is gone or a zombie (dead, waiting to be reaped).
fn is_dead(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return true;
    };
    let state = stat[stat.rfind(')').unwrap() + 1..].trim_start().as_bytes()[0];
    matches!(state, b'Z' | b'X')
}

/// Waits, at most `limit`, for process `pid` to end (a pidfd becomes
/// readable when it does: no polling); true when it ended. For processes
/// that were sent SIGKILL but are not waited for by anyone in particular
/// (the background processes killed as the server exits).
pub(crate) fn ends_within(pid: i32, limit: Duration) -> bool {
    // SAFETY: pidfd_open takes a pid and flags and returns a new file
    // descriptor or -1; the descriptor is closed below.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as i32;
    if fd < 0 {
        // No such process: it ended already.
        return true;
    }
    let mut poll = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let millis = i32::try_from(limit.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: one valid pollfd; then the descriptor we opened is closed.
    let ready = unsafe { libc::poll(&mut poll, 1, millis) };
    unsafe { libc::close(fd) };
    ready == 1 || is_dead(pid)
}

/// A FIFO at `path`: a command writes to it, the test blocks reading it.
fn mkfifo(path: &Path) {
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        path,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
}

/// The first line written to the FIFO at `path`.
fn read_fifo_line(path: &Path) -> String {
    let mut line = String::new();
    BufReader::new(std::fs::File::open(path).unwrap())
        .read_line(&mut line)
        .unwrap();
    line.trim().to_owned()
}

/// Starts a bash call `id` whose command waits on a `sleep 1000`, and
/// returns the sleep's pid once it runs (told through a FIFO in
/// `workspace`).
fn start_long_bash(wire: &mut Wire, workspace: &Path, id: i64, progress: Option<&str>) -> i32 {
    let fifo = workspace.join(format!("pid-{id}.fifo"));
    mkfifo(&fifo);
    wire.call(
        id,
        "bash",
        json!({ "command": format!("sleep 1000 & echo $! > pid-{id}.fifo; wait") }),
        progress,
    );
    read_fifo_line(&fifo).parse().unwrap()
}

/// What `harness call` prints for the call: the in-process result.
fn harness_call(workspace: &Path, tool: &str, args: &Value) -> Value {
    let out = harness()
        .args(["call", tool, &args.to_string(), "--cwd"])
        .arg(workspace)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", texts(&out).1);
    serde_json::from_slice(&out.stdout).unwrap()
}

/// An MCP result in `harness call`'s shape.
fn as_harness(result: &CallToolResult) -> Value {
    let content: Vec<Value> = result
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text(text) => json!({ "type": "text", "text": text.text }),
            ContentBlock::Image(image) => {
                json!({ "type": "image", "data": image.data, "mime_type": image.mime_type })
            }
            other => json!({ "type": format!("{other:?}") }),
        })
        .collect();
    json!({
        "is_error": result.is_error.unwrap_or(false),
        "content": content,
        "details": result
            .meta
            .as_ref()
            .and_then(|meta| meta.0.get("harness/details").cloned())
            .unwrap_or(Value::Null),
    })
}

fn arguments(value: Value) -> CallToolRequestParams {
    let Value::Object(map) = value["arguments"].clone() else {
        panic!("arguments must be an object");
    };
    CallToolRequestParams::new(value["name"].as_str().unwrap().to_owned()).with_arguments(map)
}

/// `harness mcp` with `args` over `workspace`, connected to rmcp's client.
async fn connect(
    workspace: &Path,
    args: &[&str],
) -> (RunningService<rmcp::RoleClient, ()>, tokio::process::Child) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("mcp")
        .arg("--cwd")
        .arg(workspace)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let stdin = child.stdin.take().unwrap();
    let client = ().serve((stdout, stdin)).await.unwrap();
    (client, child)
}

/// Ends the session as clients do (the input closes) and returns the
/// server's exit code.
async fn close(
    client: RunningService<rmcp::RoleClient, ()>,
    mut child: tokio::process::Child,
) -> Option<i32> {
    client.cancel().await.unwrap();
    tokio::time::timeout(LIMIT, child.wait())
        .await
        .expect("harness mcp did not exit after its input closed")
        .unwrap()
        .code()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tool_list_is_the_registry_in_prompt_order_with_hints() {
    let dir = tempfile::tempdir().unwrap();
    let (client, child) = connect(dir.path(), &[]).await;
    let listed = client.peer().list_tools(None).await.unwrap();
    assert_eq!(close(client, child).await, Some(0));
    let reference: Value =
        serde_json::from_slice(&harness().args(["tools", "--json"]).output().unwrap().stdout)
            .unwrap();
    let definitions: Vec<Value> = listed
        .tools
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "description": t.description,
                "parameters": t.schema_as_json_value(),
            })
        })
        .collect();
    assert_eq!(Value::Array(definitions), reference);
    let hints: Vec<String> = listed
        .tools
        .iter()
        .map(|t| {
            format!(
                "{} ({}): {} _meta {}",
                t.name,
                t.title.as_deref().unwrap_or(""),
                serde_json::to_string(&t.annotations).unwrap(),
                serde_json::to_string(&t.meta).unwrap()
            )
        })
        .collect();
    assert_snapshot!("mcp_tool_hints", hints.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_result_is_what_harness_call_prints() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("notes.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(dir.path().join("secret.txt"), "outside\n").unwrap();
    use base64::Engine as _;
    let png = base64::engine::general_purpose::STANDARD
        .decode(PNG_BASE64)
        .unwrap();
    std::fs::write(ws.join("pixel.png"), &png).unwrap();
    let outside = dir.path().join("secret.txt").display().to_string();
    let calls = [
        json!({ "name": "read", "arguments": { "path": "notes.txt", "limit": 2 } }),
        json!({ "name": "read", "arguments": { "path": "pixel.png" } }),
        json!({ "name": "read", "arguments": { "path": "missing.txt" } }),
        json!({ "name": "read", "arguments": { "path": "../secret.txt" } }),
        json!({ "name": "read", "arguments": { "path": outside } }),
        json!({ "name": "read", "arguments": { "path": 5 } }),
        json!({ "name": "read", "arguments": {} }),
        json!({ "name": "edit", "arguments": { "path": "notes.txt", "edits": [{ "oldText": "four", "newText": "4" }] } }),
        json!({ "name": "grep", "arguments": { "pattern": "t" } }),
        json!({ "name": "find", "arguments": { "pattern": "*.txt" } }),
        json!({ "name": "ls", "arguments": {} }),
        json!({ "name": "bash", "arguments": { "command": "echo out; echo err >&2; exit 3" } }),
    ];
    let (client, child) = connect(&ws, &[]).await;
    let mut got = Vec::new();
    for call in &calls {
        let result = client
            .peer()
            .call_tool(arguments(call.clone()))
            .await
            .unwrap();
        assert_eq!(result.structured_content, None);
        got.push(as_harness(&result));
    }
    assert_eq!(close(client, child).await, Some(0));
    let wanted: Vec<Value> = calls
        .iter()
        .map(|call| harness_call(&ws, call["name"].as_str().unwrap(), &call["arguments"]))
        .collect();
    assert_eq!(got, wanted);
    // The image arrives as an image block, byte for byte.
    assert_eq!(
        got[1]["content"][1],
        json!({ "type": "image", "data": PNG_BASE64, "mime_type": "image/png" })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_and_inactive_tools_are_json_rpc_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (client, child) = connect(dir.path(), &["--tools", "readonly"]).await;
    let mut errors = Vec::new();
    for name in ["nope", "bash"] {
        let err = client
            .peer()
            .call_tool(CallToolRequestParams::new(name))
            .await
            .unwrap_err();
        let rmcp::ServiceError::McpError(data) = err else {
            panic!("{name}: not a JSON-RPC error: {err}");
        };
        errors.push(json!({ "code": data.code.0, "message": data.message, "data": data.data }));
    }
    assert_eq!(close(client, child).await, Some(0));
    assert_eq!(
        errors,
        vec![
            json!({
                "code": -32602,
                "message": "Tool \"nope\" not found. Available tools: read, grep, find, ls. Call one of those by its exact name.",
                "data": { "available_tools": ["read", "grep", "find", "ls"] }
            }),
            json!({
                "code": -32602,
                "message": "Tool \"bash\" is not active in this session. Available tools: read, grep, find, ls. Use one of those instead.",
                "data": { "available_tools": ["read", "grep", "find", "ls"] }
            }),
        ]
    );
}

/// Ten edits of one file sent at once through rmcp's client are all
/// applied (each waits for the one before it in the mutation queue).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_concurrent_edits_of_one_file_all_apply() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..10).map(|i| format!("line {i}: old\n")).collect();
    std::fs::write(dir.path().join("shared.txt"), lines).unwrap();
    let (client, child) = connect(dir.path(), &[]).await;
    let mut running = tokio::task::JoinSet::new();
    for i in 0..10 {
        let peer = client.peer().clone();
        let edit = arguments(json!({
            "name": "edit",
            "arguments": {
                "path": "shared.txt",
                "edits": [{ "oldText": format!("line {i}: old"), "newText": format!("line {i}: new") }]
            }
        }));
        running.spawn(async move { peer.call_tool(edit).await.unwrap().is_error });
    }
    let errors: Vec<Option<bool>> = running.join_all().await;
    assert_eq!(close(client, child).await, Some(0));
    assert_eq!(errors, vec![Some(false); 10]);
    let edited: String = (0..10).map(|i| format!("line {i}: new\n")).collect();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("shared.txt")).unwrap(),
        edited
    );
}

/// Ten writes of one file, sent one after another without waiting: each
/// runs in the order its request arrived, so the last one sent wins, and
/// all ten are answered.
#[test]
fn writes_to_one_file_run_in_arrival_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut wire = Wire::start(dir.path());
    for i in 0..10 {
        wire.call(
            100 + i,
            "write",
            json!({ "path": "one.txt", "content": format!("write {i}\n") }),
            None,
        );
    }
    let answers: Vec<Value> = (0..10)
        .map(|i| wire.answer_any(100 + i)["result"]["isError"].clone())
        .collect();
    let (code, _) = wire.finish();
    assert_eq!(code, Some(0));
    assert_eq!(answers, vec![json!(false); 10]);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("one.txt")).unwrap(),
        "write 9\n"
    );
}

/// A server spoken to line by line: every line it writes is kept.
struct Wire {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    seen: Vec<Value>,
    /// The pipes of the server's stdin and stdout (`pipe:[INODE]`), read
    /// from this side's ends (the server's own descriptors are closed to
    /// other processes: it is not dumpable).
    pipes: [String; 2],
}

impl Wire {
    /// `harness mcp` without bash's sandbox: these tests follow commands by
    /// the pids they print, which a sandbox's PID namespace would number
    /// its own way (tests/integration/sandbox.rs covers the sandbox).
    fn start(workspace: &Path) -> Self {
        let mut child = harness()
            .arg("mcp")
            .arg("--cwd")
            .arg(workspace)
            .arg("--no-sandbox")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let pipe = |fd: i32| {
            std::fs::read_link(format!("/proc/self/fd/{fd}"))
                .unwrap()
                .display()
                .to_string()
        };
        let pipes = [
            pipe(child.stdin.as_ref().unwrap().as_raw_fd()),
            pipe(stdout.as_raw_fd()),
        ];
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let value = serde_json::from_str(&line.unwrap()).unwrap();
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut wire = Self {
            child,
            stdin,
            lines,
            seen: Vec::new(),
            pipes,
        };
        wire.send(json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": { "name": "wire", "version": "1" }
            }
        }));
        wire.answer(0);
        wire.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        wire
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn call(&mut self, id: i64, name: &str, args: Value, progress_token: Option<&str>) {
        let mut params = json!({ "name": name, "arguments": args });
        if let Some(token) = progress_token {
            params["_meta"] = json!({ "progressToken": token });
        }
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params }));
    }

    /// Reads lines until the answer to request `id`, and returns it.
    fn answer(&mut self, id: i64) -> Value {
        loop {
            let line = self
                .lines
                .recv_timeout(LIMIT)
                .expect("no answer from harness mcp");
            self.seen.push(line.clone());
            if line["id"] == json!(id) {
                return line;
            }
        }
    }

    /// The answer to request `id`, whether it came already or comes now.
    fn answer_any(&mut self, id: i64) -> Value {
        if let Some(line) = self.seen.iter().find(|l| l["id"] == json!(id)) {
            return line.clone();
        }
        self.answer(id)
    }

    /// Closes the input, reads what is left and returns the exit code.
    fn finish(mut self) -> (Option<i32>, Vec<Value>) {
        drop(self.stdin.take());
        while let Ok(line) = self.lines.recv_timeout(LIMIT) {
            self.seen.push(line);
        }
        let (tx, rx) = mpsc::channel();
        let mut child = self.child;
        std::thread::spawn(move || {
            let _ = tx.send(child.wait());
        });
        let status = rx
            .recv_timeout(LIMIT)
            .expect("harness mcp did not exit after its input closed")
            .unwrap();
        (status.code(), self.seen)
    }
}

/// Progress goes out only for a call that asked with a token, counts up,
/// carries the output so far, and comes before the call's answer.
#[test]
fn progress_only_with_a_token_and_before_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let mut wire = Wire::start(dir.path());
    let command = "for i in 1 2 3 4 5 6; do echo step$i; sleep 0.3; done";
    wire.call(1, "bash", json!({ "command": command }), Some("tok"));
    let answered = wire.answer(1);
    wire.call(2, "bash", json!({ "command": command }), None);
    wire.answer(2);
    let (code, seen) = wire.finish();
    assert_eq!(code, Some(0));
    let answer_at = seen.iter().position(|l| l["id"] == json!(1)).unwrap();
    let progress: Vec<&Value> = seen
        .iter()
        .filter(|l| l["method"] == json!("notifications/progress"))
        .collect();
    assert!(progress.len() >= 2, "{progress:?}");
    let mut last = 0.0;
    for (i, note) in seen.iter().enumerate() {
        if note["method"] != json!("notifications/progress") {
            continue;
        }
        assert!(i < answer_at, "progress after the answer: {note}");
        assert_eq!(note["params"]["progressToken"], json!("tok"));
        let number = note["params"]["progress"].as_f64().unwrap();
        assert!(number > last, "{number} after {last}");
        last = number;
        let message = note["params"]["message"].as_str().unwrap();
        assert!(message.starts_with("step1\n"), "{message:?}");
    }
    assert_eq!(
        answered["result"]["content"],
        json!([{ "type": "text", "text": "step1\nstep2\nstep3\nstep4\nstep5\nstep6\n" }])
    );
}

/// A cancelled bash call: its command is killed, nothing more is sent for
/// it, and the server answers the next request.
#[test]
fn a_cancelled_call_is_killed_gets_no_answer_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut wire = Wire::start(dir.path());
    let pid = start_long_bash(&mut wire, dir.path(), 7, Some("p7"));
    assert!(!is_dead(pid));
    wire.send(json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": { "requestId": 7, "reason": "the user pressed Esc" }
    }));
    wire.call(8, "ls", json!({}), None);
    let listing = wire.answer(8);
    let (code, seen) = wire.finish();
    assert_eq!(code, Some(0));
    // The server ends only once every call has: the command is dead.
    assert!(is_dead(pid), "process {pid} survived the cancellation");
    assert_eq!(
        listing["result"]["content"],
        json!([{ "type": "text", "text": "pid-7.fifo" }])
    );
    let about_7: Vec<&Value> = seen
        .iter()
        .filter(|l| l["id"] == json!(7) || l["params"]["progressToken"] == json!("p7"))
        .collect();
    assert_eq!(about_7, Vec::<&Value>::new());
}

/// A command's stdin is /dev/null, and no descriptor of the JSON-RPC
/// stream reaches it: `cat` reads nothing, the request sent right behind
/// the call still arrives, and none of the command's descriptors is the
/// server's stdin or stdout.
#[test]
fn commands_never_read_the_json_rpc_stream() {
    let dir = tempfile::tempdir().unwrap();
    let mut wire = Wire::start(dir.path());
    let stream = wire.pipes.clone();
    let stdin = wire.stdin.as_mut().unwrap();
    let command = "cat; for fd in /proc/self/fd/*; do echo \"${fd##*/} $(readlink $fd)\"; done";
    writeln!(
        stdin,
        "{}\n{}",
        json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": { "name": "bash", "arguments": { "command": command } } }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" })
    )
    .unwrap();
    stdin.flush().unwrap();
    let listed = wire.answer_any(2);
    let ran = wire.answer_any(1);
    let (code, _) = wire.finish();
    assert_eq!(code, Some(0));
    assert_eq!(listed["result"]["tools"].as_array().map(Vec::len), Some(7));
    let text = ran["result"]["content"][0]["text"].as_str().unwrap();
    let fds: Vec<(&str, &str)> = text
        .lines()
        .filter_map(|line| line.split_once(' '))
        .collect();
    assert_eq!(fds.first(), Some(&("0", "/dev/null")), "{text}");
    let leaked: Vec<&(&str, &str)> = fds
        .iter()
        .filter(|(_, target)| stream.iter().any(|s| s == target))
        .collect();
    assert_eq!(
        leaked,
        Vec::<&(&str, &str)>::new(),
        "server's stream: {stream:?}"
    );
}

/// The input ends while calls run: a quick one finishes and is answered,
/// one that outlives the grace is cancelled (and answered as aborted),
/// background processes die, and the exit code is 0.
#[test]
fn at_the_end_of_the_input_calls_finish_or_are_cancelled_and_nothing_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let mut wire = Wire::start(dir.path());
    wire.call(
        1,
        "bash",
        json!({ "command": "sleep 1000 & echo $!" }),
        None,
    );
    let background: i32 = wire.answer(1)["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let long = start_long_bash(&mut wire, dir.path(), 2, None);
    wire.call(
        3,
        "bash",
        json!({ "command": "sleep 0.2; echo done" }),
        None,
    );
    let (code, seen) = wire.finish();
    assert_eq!(code, Some(0));
    let answer = |id: i64| {
        seen.iter().find(|l| l["id"] == json!(id)).map(|l| {
            (
                l["result"]["isError"].clone(),
                l["result"]["content"].clone(),
            )
        })
    };
    assert_eq!(
        (answer(2), answer(3)),
        (
            Some((
                json!(true),
                json!([{ "type": "text", "text": "Command aborted" }])
            )),
            Some((json!(false), json!([{ "type": "text", "text": "done\n" }])))
        )
    );
    // The cancelled command is dead when its call ends; the background one
    // was sent SIGKILL as the server let go of its processes.
    assert_eq!(
        (is_dead(long), ends_within(background, LIMIT)),
        (true, true)
    );
}

#[test]
fn sigterm_cancels_the_calls_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let mut wire = Wire::start(dir.path());
    let pid = start_long_bash(&mut wire, dir.path(), 1, None);
    let server = rustix::process::Pid::from_raw(wire.child.id() as i32).unwrap();
    rustix::process::kill_process(server, rustix::process::Signal::TERM).unwrap();
    let (code, seen) = wire.finish();
    assert_eq!(code, Some(0));
    assert!(is_dead(pid), "process {pid} survived SIGTERM");
    assert_eq!(
        seen.iter()
            .find(|l| l["id"] == json!(1))
            .map(|l| l["result"]["content"].clone()),
        Some(json!([{ "type": "text", "text": "Command aborted" }]))
    );
}

#[test]
fn limits_come_from_a_file_of_limits_keys_and_its_problems_are_located() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.yaml");
    std::fs::write(&good, "max_lines: 10\nmax_bytes: 2048\n").unwrap();
    let mut wire_cmd = harness();
    wire_cmd
        .args(["mcp", "--limits"])
        .arg(&good)
        .arg("--cwd")
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = wire_cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        "{}\n{}",
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": { "name": "t", "version": "1" } } }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" })
    )
    .unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let list: Value = serde_json::from_str(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .nth(1)
            .unwrap(),
    )
    .unwrap();
    let read = &list["result"]["tools"][0];
    assert_eq!(
        (
            read["description"].as_str().unwrap().split(". ").nth(2),
            &read["_meta"]
        ),
        (
            Some(
                "Text output is cut at 10 lines or 2.0KB, whichever comes first, with a notice saying how to get the rest"
            ),
            &json!({ "anthropic/maxResultSizeChars": 2048 + 4096 })
        )
    );

    let mut report = String::new();
    let mut run = |args: &[&str]| {
        let mut cmd = harness();
        cmd.arg("mcp")
            .args(args)
            .current_dir(dir.path())
            .stdin(Stdio::null());
        let out = output_within(cmd, LIMIT);
        let (stdout, stderr) = texts(&out);
        report.push_str(&format!(
            "$ harness mcp {}\nexit {:?}, stdout {stdout:?}\n{}",
            args.join(" "),
            out.status.code(),
            stderr.replace(&dir.path().display().to_string(), "DIR")
        ));
    };
    for (name, text) in [
        (
            "ranges.yaml",
            "max_lines: 0\nbash_timeout: -1\nmax_log_bytes: 99999999999\n",
        ),
        ("typo.yaml", "max_line: 5\n"),
        ("nested.yaml", "limits:\n  max_lines: 5\n"),
        ("two.yaml", "max_lines: 5\n---\nmax_bytes: 5\n"),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
        run(&["--limits", name]);
    }
    run(&["--limits", "absent.yaml"]);
    run(&["--tools", "read,nope"]);
    run(&["--cwd", "no/such/dir"]);
    assert_snapshot!("mcp_limits_errors", report);
}
