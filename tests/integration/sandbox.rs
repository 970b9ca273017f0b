//! The sandbox of `harness call` and `harness mcp` (D21), through the
//! command line: writes outside refused, the network kept by default and
//! cut by `--no-network`, `--no-sandbox`, daemons gone when the call or
//! server ends; and an MCP server started in a sandbox by the client.
//!
//! These need Landlock and user namespaces: [`require`] fails with what
//! is missing instead of letting a test pass without a sandbox.

use std::io::BufRead;
use std::io::BufReader;
use std::io::Read;
use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;

use harness::mcp::client::Launch;
use harness::mcp::client::McpClient;
use harness::mcp::client::ServerConfig;
use harness::tools::Network;
use harness::tools::Sandbox;
use harness::tools::SandboxPolicy;
use pretty_assertions::assert_eq;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::mcp::ends_within;

const HARNESS: &str = env!("CARGO_BIN_EXE_harness");

/// The longest any one exchange may take before the test fails.
pub(super) const LIMIT: Duration = Duration::from_secs(30);

/// Fails the test, saying what is missing, when the kernel cannot sandbox.
pub(super) fn require() {
    let support = harness::tools::ops::sandbox::support();
    if let Err(reason) = &support.landlock {
        panic!("this test needs Landlock, which is unavailable: {reason}");
    }
    if let Err(reason) = &support.namespaces {
        panic!("this test needs user namespaces, which are unavailable: {reason}");
    }
}

/// A base directory holding the workspace `ws/`.
struct Layout {
    _dir: tempfile::TempDir,
    base: PathBuf,
    ws: PathBuf,
}

impl Layout {
    fn new() -> Self {
        require();
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir(base.join("ws")).unwrap();
        Self {
            ws: base.join("ws"),
            base,
            _dir: dir,
        }
    }

    /// What is in the base directory besides the workspace.
    fn left_outside(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.base)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name != "ws")
            .collect();
        names.sort();
        names
    }
}

fn harness() -> Command {
    let mut command = Command::new(HARNESS);
    command.env("LC_ALL", "C");
    command
}

/// `harness call bash COMMAND --cwd WS FLAGS…`: its JSON result.
fn call_bash(ws: &Path, command: &str, flags: &[&str]) -> Value {
    let out = harness()
        .args([
            "call",
            "bash",
            &json!({ "command": command }).to_string(),
            "--cwd",
        ])
        .arg(ws)
        .args(flags)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned()
        ),
        (Some(0), String::new())
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Writes outside (`../x`), inside, then connects to `port` and says
/// hello.
fn probe_command(port: u16) -> String {
    format!(
        "touch ../x; echo $?; echo in > in.txt && echo wrote; exec \
         3<>/dev/tcp/127.0.0.1/{port} && echo hello >&3 && exec 3>&- && echo connected"
    )
}

/// What arrives at `listener` within `limit`, or `None`.
pub(super) fn arrived(listener: &TcpListener, limit: Duration) -> Option<String> {
    listener.set_nonblocking(true).unwrap();
    let deadline = Instant::now() + limit;
    loop {
        match listener.accept() {
            Ok((mut stream, _)) => {
                stream.set_nonblocking(false).unwrap();
                let mut text = String::new();
                stream.read_to_string(&mut text).unwrap();
                return Some(text);
            }
            Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return None;
                }
                std::thread::yield_now();
            }
            Err(err) => panic!("accept: {err}"),
        }
    }
}

const WRITES: &str = "[Sandboxed: commands may write only in the workspace and $TMPDIR; a write \
                      anywhere else fails with \"Permission denied\"";

#[test]
fn harness_call_bash_is_sandboxed_with_the_network_by_default() {
    let layout = Layout::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let result = call_bash(&layout.ws, &probe_command(port), &[]);
    assert_eq!(
        result,
        json!({
            "is_error": false,
            "content": [{"type": "text", "text": format!(
                "touch: cannot touch '../x': Permission denied\n1\nwrote\nconnected\n\n\n{WRITES}.]"
            )}],
            "details": {"exit_code": 0, "cleaned": false}
        })
    );
    // The connection was made while the command ran.
    assert_eq!(
        arrived(&listener, Duration::ZERO).as_deref(),
        Some("hello\n")
    );
    assert_eq!(layout.left_outside(), Vec::<String>::new());
    assert_eq!(
        std::fs::read_to_string(layout.ws.join("in.txt")).unwrap(),
        "in\n"
    );
}

#[test]
fn harness_call_bash_with_no_network_reaches_nothing() {
    let layout = Layout::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let result = call_bash(&layout.ws, &probe_command(port), &["--no-network"]);
    assert_eq!(
        result,
        json!({
            "is_error": true,
            "content": [{"type": "text", "text": format!(
                "touch: cannot touch '../x': Permission denied\n1\nwrote\n/bin/bash: connect: \
                 Connection refused\n/bin/bash: line 1: /dev/tcp/127.0.0.1/{port}: Connection \
                 refused\n\n\nCommand exited with code 1\n\n{WRITES}; they have no network.]"
            )}],
            "details": {"exit_code": 1, "cleaned": false}
        })
    );
    // The command has ended: a connection would be queued by now.
    assert_eq!(arrived(&listener, Duration::ZERO), None);
    assert_eq!(layout.left_outside(), Vec::<String>::new());
}

#[test]
fn harness_call_bash_with_no_sandbox_writes_anywhere() {
    let layout = Layout::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let result = call_bash(&layout.ws, &probe_command(port), &["--no-sandbox"]);
    assert_eq!(
        result,
        json!({
            "is_error": false,
            "content": [{"type": "text", "text": "0\nwrote\nconnected\n"}],
            "details": {"exit_code": 0, "cleaned": false}
        })
    );
    assert_eq!(
        arrived(&listener, Duration::ZERO).as_deref(),
        Some("hello\n")
    );
    assert_eq!(layout.left_outside(), ["x"]);
}

#[test]
fn no_network_and_no_sandbox_do_not_go_together() {
    let layout = Layout::new();
    let out = harness()
        .args([
            "call",
            "bash",
            r#"{"command":"true"}"#,
            "--no-sandbox",
            "--no-network",
        ])
        .arg("--cwd")
        .arg(&layout.ws)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("the argument '--no-sandbox' cannot be used with '--no-network'"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Starts three daemons that leave the command's process group: `setsid`,
/// a double fork (a subshell's background child, orphaned at once) and
/// `nohup … & disown`, each a `sleep` of a duration no other process has.
pub(super) fn daemons_command(marks: &[&str; 3]) -> String {
    format!(
        "setsid sleep {} > /dev/null 2>&1 & (setsid sleep {} > /dev/null 2>&1 & ) ; nohup sleep \
         {} > /dev/null 2>&1 & disown; echo started",
        marks[0], marks[1], marks[2]
    )
}

/// Two `setsid` daemons (one through a double fork) that say when they
/// have left the process group (each writes its pid file after `setsid`),
/// and a command that waits for that before it ends: without a sandbox the
/// two outlive it, never killed with the group by a race.
pub(crate) fn setsid_daemons_command(marks: &[&str; 2]) -> String {
    format!(
        "setsid sh -c 'echo $$ > a.pid; exec sleep {a}' > /dev/null 2>&1 & (setsid sh -c 'echo \
         $$ > b.pid; exec sleep {b}' > /dev/null 2>&1 & ) ; until [ -s a.pid ] && [ -s b.pid ]; \
         do :; done; rm a.pid b.pid; echo started",
        a = marks[0],
        b = marks[1]
    )
}

/// The host pids of running processes whose command line is exactly
/// `sleep MARK`.
pub(super) fn sleeping(mark: &str) -> Vec<i32> {
    let wanted = format!("sleep\0{mark}\0").into_bytes();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|line| line == wanted)
                && std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .is_ok_and(|stat| !stat.contains(") Z ") && !stat.contains(") X "))
        })
        .collect()
}

/// Each mark's pid once it is running (waiting, bounded, for a background
/// child to execute `sleep`).
pub(super) fn find_daemons(marks: &[&str]) -> Vec<i32> {
    let deadline = Instant::now() + LIMIT;
    marks
        .iter()
        .map(|mark| {
            loop {
                match sleeping(mark).as_slice() {
                    [pid] => break *pid,
                    found if Instant::now() >= deadline => panic!("sleep {mark}: {found:?}"),
                    _ => std::thread::yield_now(),
                }
            }
        })
        .collect()
}

/// Which of `pids` are still running after a bounded wait; kills them (the
/// test cleans up after itself either way).
pub(super) fn still_running(pids: &[i32]) -> Vec<i32> {
    let left: Vec<i32> = pids
        .iter()
        .copied()
        .filter(|&pid| !ends_within(pid, Duration::from_secs(5)))
        .collect();
    for &pid in &left {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    left
}

#[test]
fn daemons_of_harness_call_are_gone_when_it_ends() {
    let layout = Layout::new();
    let marks = ["2001.25", "2002.25", "2003.25"];
    let result = call_bash(&layout.ws, &daemons_command(&marks), &[]);
    assert_eq!(result["details"]["exit_code"], json!(0));
    // `harness call` has exited: nothing of its command is left.
    assert_eq!(
        marks.iter().flat_map(|m| sleeping(m)).collect::<Vec<_>>(),
        Vec::<i32>::new()
    );
    // Without the sandbox the two that leave the process group (`setsid`)
    // outlive it, which is what the sandbox is for (the `nohup` one stays
    // in bash's group, which the call kills). The command waits until both
    // have called `setsid` (each writes its pid after) before it ends,
    // or the group could be killed before they left it; the test kills
    // them.
    let marks = ["2011.25", "2012.25"];
    let command = setsid_daemons_command(&marks);
    call_bash(&layout.ws, &command, &["--no-sandbox"]);
    let outlived = find_daemons(&marks);
    assert_eq!(still_running(&outlived).len(), 2);
}

/// A `harness mcp` session over its standard input and output.
struct Session {
    child: std::process::Child,
    input: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<Value>,
}

impl Session {
    fn start(ws: &Path, flags: &[&str]) -> Self {
        let mut child = harness()
            .args(["mcp", "--cwd"])
            .arg(ws)
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let output = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(output).lines() {
                let Ok(line) = line else { return };
                if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                    return;
                }
            }
        });
        let mut session = Self {
            input: child.stdin.take(),
            child,
            lines,
        };
        session.send(&json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": { "protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": { "name": "test", "version": "1" } }
        }));
        session.answer(0);
        session.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        session
    }

    fn send(&mut self, message: &Value) {
        let input = self.input.as_mut().unwrap();
        writeln!(input, "{message}").unwrap();
        input.flush().unwrap();
    }

    fn answer(&self, id: i64) -> Value {
        loop {
            let line = self.lines.recv_timeout(LIMIT).expect("an answer in time");
            if line["id"] == json!(id) {
                return line;
            }
        }
    }

    /// The text and error flag of a bash call.
    fn bash(&mut self, id: i64, command: &str) -> (String, bool) {
        self.send(&json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": "bash", "arguments": { "command": command } }
        }));
        let answer = self.answer(id);
        let result = &answer["result"];
        (
            result["content"][0]["text"].as_str().unwrap().to_owned(),
            result["isError"] == json!(true),
        )
    }

    /// Closes the input and waits (bounded) for the exit code.
    fn finish(mut self) -> Option<i32> {
        drop(self.input.take());
        let deadline = Instant::now() + LIMIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(Instant::now() < deadline, "harness mcp did not exit");
            std::thread::yield_now();
        }
    }
}

#[test]
fn harness_mcp_bash_is_sandboxed_and_its_daemons_end_with_the_server() {
    let layout = Layout::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut session = Session::start(&layout.ws, &[]);
    let first = session.bash(1, &probe_command(port));
    let marks = ["3001.25", "3002.25", "3003.25"];
    let second = session.bash(2, &daemons_command(&marks));
    // The daemons outlive their call (a server started in the background
    // is there for the next) …
    let daemons = find_daemons(&marks);
    assert_eq!(
        (first, second),
        (
            (
                format!(
                    "touch: cannot touch '../x': Permission denied\n1\nwrote\nconnected\n\n\n\
                     {WRITES}.]"
                ),
                false
            ),
            ("started\n".to_owned(), false)
        )
    );
    assert_eq!(arrived(&listener, LIMIT).as_deref(), Some("hello\n"));
    // … not the server.
    assert_eq!(session.finish(), Some(0));
    assert_eq!(still_running(&daemons), Vec::<i32>::new());
    assert_eq!(layout.left_outside(), Vec::<String>::new());
}

#[test]
fn harness_mcp_bash_with_no_network_reaches_nothing() {
    let layout = Layout::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut session = Session::start(&layout.ws, &["--no-network"]);
    let (text, is_error) = session.bash(1, &probe_command(port));
    assert_eq!(session.finish(), Some(0));
    assert_eq!(
        (text, is_error),
        (
            format!(
                "touch: cannot touch '../x': Permission denied\n1\nwrote\n/bin/bash: connect: \
                 Connection refused\n/bin/bash: line 1: /dev/tcp/127.0.0.1/{port}: Connection \
                 refused\n\n\nCommand exited with code 1\n\n{WRITES}; they have no network.]"
            ),
            true
        )
    );
    assert_eq!(arrived(&listener, Duration::ZERO), None);
}

#[test]
fn harness_mcp_with_no_sandbox_lets_bash_write_outside() {
    let layout = Layout::new();
    let mut session = Session::start(&layout.ws, &["--no-sandbox"]);
    let answer = session.bash(1, "touch ../x && echo done");
    assert_eq!(session.finish(), Some(0));
    assert_eq!(answer, ("done\n".to_owned(), false));
    assert_eq!(layout.left_outside(), ["x"]);
}

/// A stdio MCP server that tries to write outside its workspace as it
/// starts, then serves (the tests' `mcp_fixture`): in a sandbox the write is
/// refused, and the server still starts and answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_server_that_writes_outside_at_start_is_refused_and_still_serves() {
    let layout = Layout::new();
    let script = format!(
        "if echo leaked > {}/leak.txt; then echo wrote > started.txt; else echo refused > \
         started.txt; fi; exec {}",
        layout.base.display(),
        super::test_helpers::mcp_fixture()
    );
    let mut config = ServerConfig::new(
        "fx",
        Launch::Command(harness::mcp::client::Command {
            program: "sh".to_owned(),
            args: vec!["-c".to_owned(), script],
            env: Vec::new(),
            cwd: layout.ws.clone(),
        }),
    );
    config.startup_timeout = LIMIT;
    let sandbox = Arc::new(
        Sandbox::new(SandboxPolicy::workspace(&layout.ws).with_network(Network::None)).unwrap(),
    );
    let client = McpClient::start_in(config, Some(sandbox)).await.unwrap();
    let result = tokio::time::timeout(
        LIMIT,
        client.call(
            "echo",
            json!({ "text": "still here" }),
            &CancellationToken::new(),
        ),
    )
    .await
    .unwrap();
    client.stop().await;
    assert_eq!(
        (result.text(), result.is_error),
        ("still here".to_owned(), false)
    );
    assert_eq!(
        std::fs::read_to_string(layout.ws.join("started.txt")).unwrap(),
        "refused\n"
    );
    assert_eq!(layout.left_outside(), Vec::<String>::new());
}
