//! The harness as an MCP client (src/mcp/client): driven against the
//! misbehaving server of the tests (`mcp_fixture MODE…`) in each of
//! its modes, and against `harness mcp` itself. Every wait is bounded
//! (start-up and call timeouts, stop graces); none is a sleep.

use std::sync::Arc;
use std::time::Duration;

use harness::mcp::client::Command;
use harness::mcp::client::Launch;
use harness::mcp::client::McpClient;
use harness::mcp::client::ServerConfig;
use harness::mcp::client::ServerTool;
use harness::mcp::client::StartError;
use harness::mcp::client::Stopped;
use harness::tools::Content;
use harness::tools::Registry;
use harness::tools::ToolCall;
use harness::tools::ToolError;
use harness::tools::ToolResult;
use harness::tools::UpdateSink;
use harness::tools::Workspace;
use pretty_assertions::assert_eq;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::mcp::ends_within;
use super::test_helpers::mcp_fixture;

const HARNESS: &str = env!("CARGO_BIN_EXE_harness");

/// The longest any one exchange may take before the test fails.
const LIMIT: Duration = Duration::from_secs(30);

fn fixture(modes: &[&str], cwd: &std::path::Path) -> ServerConfig {
    let args: Vec<String> = modes.iter().map(|m| (*m).to_owned()).collect();
    let mut config = ServerConfig::new(
        "fx",
        Launch::Command(Command {
            program: mcp_fixture(),
            args,
            env: vec![("FIXTURE_SETTING".to_owned(), "on".to_owned())],
            cwd: cwd.to_path_buf(),
        }),
    );
    config.startup_timeout = LIMIT;
    config.stop_grace = Duration::from_millis(300);
    config
}

async fn start(config: ServerConfig) -> McpClient {
    McpClient::start(config).await.unwrap()
}

async fn start_err(config: ServerConfig) -> StartError {
    match McpClient::start(config).await {
        Ok(client) => panic!("started: {:?}", client.facts()),
        Err(err) => err,
    }
}

async fn call(client: &McpClient, tool: &str, args: Value) -> ToolResult {
    let cancel = CancellationToken::new();
    tokio::time::timeout(LIMIT, client.call(tool, args, &cancel))
        .await
        .unwrap()
}

fn text_of(result: &ToolResult) -> String {
    result.text()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_is_started_listed_called_and_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(fixture(&[], dir.path())).await;
    let facts = client.facts().clone();
    assert_eq!(
        (
            facts.name.as_str(),
            facts.transport,
            facts.server_name.as_deref(),
            facts.protocol_version.as_str(),
            facts.tools
        ),
        ("fx", "stdio", Some("harness-fixture"), "2025-11-25", 12)
    );
    let names: Vec<&str> = client.tools().iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "echo",
            "sleep",
            "fail",
            "rpc_error",
            "structured",
            "blocks",
            "exit",
            "read_file",
            "cwd",
            "env",
            "grandchild_pid",
            "calls"
        ]
    );
    assert_eq!(
        call(&client, "echo", json!({ "text": "hi" })).await,
        ToolResult::ok(harness::tools::ToolOutput::text("hi"))
    );
    assert_eq!(
        call(&client, "fail", json!({})).await,
        ToolResult::error("the fixture fails this call on purpose", None)
    );
    let refused = call(&client, "rpc_error", Value::Null).await;
    assert_eq!(
        (refused.is_error, text_of(&refused), refused.details),
        (
            true,
            "The MCP server answered with JSON-RPC error -32000 instead of a result: the fixture \
             refuses this call"
                .to_owned(),
            Some(json!({
                "error_class": "mcp_jsonrpc_error",
                "jsonrpc_error": {
                    "code": -32000,
                    "message": "the fixture refuses this call",
                    "data": { "why": "asked to" }
                }
            }))
        )
    );
    let unknown = call(&client, "nope", json!({})).await;
    assert_eq!(
        unknown.details.as_ref().unwrap()["jsonrpc_error"]["code"],
        json!(-32602)
    );
    let structured = call(&client, "structured", json!({})).await;
    assert_eq!(
        structured.details,
        Some(json!({
            "structured_content": { "answer": 42 },
            "structured_content_duplicates_text": true,
            "meta": { "fixture/trace": "t-1" }
        }))
    );
    let blocks = call(&client, "blocks", json!({})).await;
    assert_eq!(
        blocks.content,
        vec![
            Content::Image {
                data: "iVBORw0KGgo=".to_owned(),
                mime_type: "image/png".to_owned()
            },
            Content::text("[audio audio/wav: 8 bytes of base64 data]"),
            Content::text("[resource link file:///notes.txt: notes.txt (text/plain)]"),
            Content::text("[resource fixture://greeting]\nhello"),
        ]
    );
    // Arguments that are no object are sent as written: the server answers.
    let not_an_object = call(&client, "echo", json!(["x"])).await;
    assert_eq!(
        text_of(&not_an_object),
        "The MCP server answered with JSON-RPC error -32602 instead of a result: Invalid \
         arguments for tool echo: expected an object, received [\"x\"]"
    );
    let pid = client.pid().unwrap();
    let report = client.stop().await;
    assert_eq!(
        (
            report.stopped,
            report.exit_status.as_deref(),
            report.ended_early,
            report.junk_lines
        ),
        (Some(Stopped::InputClosed), Some("exit status 0"), false, 0)
    );
    assert!(ends_within(pid, LIMIT));
    // A second stop is the first one's report; a call after it is refused.
    assert_eq!(client.stop().await, report);
    assert!(
        call(&client, "echo", json!({ "text": "late" }))
            .await
            .is_error
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_runs_in_its_directory_with_a_minimal_environment() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(fixture(&[], dir.path())).await;
    let cwd = call(&client, "cwd", json!({})).await;
    assert_eq!(
        text_of(&cwd),
        dir.path().canonicalize().unwrap().display().to_string()
    );
    let env = |name: &str| {
        let client = &client;
        let name = name.to_owned();
        async move { text_of(&call(client, "env", json!({ "name": name })).await) }
    };
    assert_eq!(env("FIXTURE_SETTING").await, "on");
    assert_eq!(env("PATH").await, std::env::var("PATH").unwrap());
    // Cargo sets this for the test process; the server does not get it.
    assert!(std::env::var("CARGO_PKG_NAME").is_ok());
    assert_eq!(env("CARGO_PKG_NAME").await, "(unset)");
    client.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_past_its_timeout_is_cancelled_and_the_server_is_told() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = fixture(&["hang"], dir.path());
    config.call_timeout = Some(Duration::from_millis(250));
    let client = start(config).await;
    let result = call(&client, "echo", json!({ "text": "never" })).await;
    assert_eq!(
        (result.is_error, text_of(&result), result.details),
        (
            true,
            "The call to `echo` on MCP server `fx` took longer than its call_timeout of 0.25 s; \
             it was cancelled."
                .to_owned(),
            Some(json!({ "error_class": "mcp_timeout", "timeout_ms": 250 }))
        )
    );
    // The server goes on; the cancellation reached it.
    let report = client.stop().await;
    assert_eq!(report.stopped, Some(Stopped::InputClosed));
    assert!(
        report.stderr_tail.contains("fixture: cancelled request 2"),
        "{}",
        report.stderr_tail
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_ends_at_once_as_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(fixture(&[], dir.path())).await;
    let cancel = CancellationToken::new();
    cancel.cancel();
    let result = tokio::time::timeout(
        LIMIT,
        client.call("sleep", json!({ "ms": 600_000 }), &cancel),
    )
    .await
    .unwrap();
    assert_eq!(result, ToolResult::from(ToolError::cancelled()));
    // The server answers the next call (the sleeping one is on a thread).
    assert_eq!(
        text_of(&call(&client, "echo", json!({ "text": "next" })).await),
        "next"
    );
    let pid = client.pid().unwrap();
    let report = client.stop().await;
    assert!(report.stderr_tail.contains("fixture: cancelled request 2"));
    assert!(ends_within(pid, LIMIT));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_mid_call_makes_that_call_and_later_ones_errors() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(fixture(&[], dir.path())).await;
    let during = call(&client, "exit", json!({ "code": 7 })).await;
    assert_eq!(
        (during.is_error, text_of(&during), during.details),
        (
            true,
            "MCP server `fx` exited during the call to `exit`: exit status 7. Its last stderr \
             lines:\n  fixture: exiting with status 7 during a call, as asked"
                .to_owned(),
            Some(json!({
                "error_class": "mcp_server_exited",
                "exit_status": "exit status 7",
                "exit_code": 7,
                "stderr_tail": "fixture: exiting with status 7 during a call, as asked"
            }))
        )
    );
    let later = call(&client, "echo", json!({ "text": "anyone?" })).await;
    assert_eq!(
        text_of(&later),
        "MCP server `fx` is not running (it exited before this call to `echo`): exit status 7. \
         Its last stderr lines:\n  fixture: exiting with status 7 during a call, as asked"
    );
    let report = client.stop().await;
    assert_eq!(
        (report.stopped, report.exit_code, report.ended_early),
        (Some(Stopped::AlreadyEnded), Some(7), true)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_crashes_at_start_fails_with_its_status_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let err = start_err(fixture(&["crash"], dir.path())).await;
    assert_eq!(
        err.to_string(),
        "MCP server `fx` did not start: it closed the connection before it answered \
         `initialize` (it ended: exit status 3); its last stderr lines:\n  fixture: crashing on \
         purpose before initialize"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_initialize_fails_within_its_timeout_and_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = fixture(&["no-init", "grandchild"], dir.path());
    config.startup_timeout = Duration::from_millis(500);
    let err = start_err(config).await;
    assert_eq!(
        (err.message.as_str(), err.exit_status.as_deref()),
        ("it did not answer `initialize` within 0.5 s", None)
    );
    // Its grandchild went with it.
    let grandchild: i32 = err
        .stderr_tail
        .strip_prefix("fixture: grandchild pid ")
        .unwrap()
        .parse()
        .unwrap();
    assert!(ends_within(grandchild, LIMIT));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_program_fails_to_start_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = fixture(&[], dir.path());
    config.launch = Launch::Command(Command {
        program: "no-such-mcp-server-anywhere".to_owned(),
        args: vec![],
        env: vec![("PATH".to_owned(), "/nonexistent".to_owned())],
        cwd: dir.path().to_path_buf(),
    });
    assert_eq!(
        start_err(config).await.to_string(),
        "MCP server `fx` did not start: program `no-such-mcp-server-anywhere` not found on PATH \
         (/nonexistent)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn junk_on_stdout_is_counted_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(fixture(&["junk"], dir.path())).await;
    assert_eq!(
        text_of(&call(&client, "echo", json!({ "text": "through" })).await),
        "through"
    );
    let report = client.stop().await;
    // The banner, then one line before each of three answers.
    assert_eq!(
        (report.junk_lines, report.junk_samples),
        (
            4,
            vec![
                "fixture banner: starting up".to_owned(),
                "fixture: this line is not JSON-RPC".to_owned(),
                "fixture: this line is not JSON-RPC".to_owned(),
            ]
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_on_stderr_is_drained_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(fixture(&["flood"], dir.path())).await;
    assert_eq!(
        text_of(&call(&client, "echo", json!({ "text": "heard" })).await),
        "heard"
    );
    let report = client.stop().await;
    let start_flood = 64 * 64 * 1024 + "\nfixture: flooded stderr with 4 MiB\n".len();
    let per_answer = 64 * 1024 + 1;
    assert_eq!(report.stderr_bytes, (start_flood + 3 * per_answer) as u64);
    assert_eq!(report.stopped, Some(Stopped::InputClosed));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_ignores_sigterm_is_killed_with_its_grandchild() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(fixture(&["ignore-sigterm", "grandchild"], dir.path())).await;
    let grandchild: i32 = text_of(&call(&client, "grandchild_pid", json!({})).await)
        .parse()
        .unwrap();
    let report = client.stop().await;
    assert_eq!(
        (report.stopped, report.exit_status.as_deref()),
        (Some(Stopped::Killed), Some("killed by signal 9 (SIGKILL)"))
    );
    assert!(ends_within(grandchild, LIMIT));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grandchild_of_a_well_behaved_server_goes_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(fixture(&["grandchild"], dir.path())).await;
    let grandchild: i32 = text_of(&call(&client, "grandchild_pid", json!({})).await)
        .parse()
        .unwrap();
    let report = client.stop().await;
    assert_eq!(report.exit_status.as_deref(), Some("exit status 0"));
    assert!(ends_within(grandchild, LIMIT));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_url_fails_to_start() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut config = ServerConfig::new(
        "web",
        Launch::Url {
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: vec![("X-Test".to_owned(), "1".to_owned())],
        },
    );
    config.startup_timeout = LIMIT;
    let err = start_err(config).await;
    assert!(err.message.starts_with("`initialize` failed"), "{err}");
    let mut bad_header = ServerConfig::new(
        "web",
        Launch::Url {
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: vec![("bad header".to_owned(), "1".to_owned())],
        },
    );
    bad_header.startup_timeout = LIMIT;
    assert_eq!(
        start_err(bad_header).await.message,
        "`bad header` is not a valid HTTP header name"
    );
}

/// `harness mcp` through the client gives what the tools give in-process,
/// details included, and its tools enter a registry like the built-ins.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn harness_mcp_through_the_client_is_the_tools_in_process() {
    let dir = tempfile::tempdir().unwrap();
    let long: String = (1..=3000).map(|n| format!("line {n}\n")).collect();
    std::fs::write(dir.path().join("long.txt"), long).unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\nbeta\n").unwrap();
    let root = dir.path().canonicalize().unwrap();
    let mut config = ServerConfig::new(
        "h",
        Launch::Command(Command {
            program: HARNESS.to_owned(),
            args: vec![
                "mcp".to_owned(),
                "--cwd".to_owned(),
                root.display().to_string(),
            ],
            env: vec![],
            cwd: root.clone(),
        }),
    );
    config.startup_timeout = LIMIT;
    let client = Arc::new(start(config).await);
    assert_eq!(client.facts().server_name.as_deref(), Some("harness"));
    let served = Registry::builder(Workspace::local(&root).unwrap())
        .allow(["srv_read", "srv_grep"])
        .tool(Arc::new(ServerTool::new(&client, "read", "srv_").unwrap()))
        .tool(Arc::new(ServerTool::new(&client, "grep", "srv_").unwrap()))
        .build()
        .unwrap();
    assert_eq!(served.active_names(), ["srv_read", "srv_grep"]);
    let local = Registry::builder(Workspace::local(&root).unwrap())
        .build()
        .unwrap();
    let calls = [
        ("read", json!({ "path": "a.txt" })),
        ("read", json!({ "path": "long.txt" })),
        ("read", json!({ "path": "missing.txt" })),
        ("read", json!({ "path": "a.txt", "offset": "x" })),
        ("grep", json!({ "pattern": "beta" })),
    ];
    for (tool, args) in calls {
        let here = dispatch(&local, tool.to_owned(), &args).await;
        let there = tokio::time::timeout(LIMIT, dispatch(&served, format!("srv_{tool}"), &args))
            .await
            .unwrap();
        assert_eq!(there, here, "{tool} {args}");
    }
    client.stop().await;
}

async fn dispatch(registry: &Registry, name: String, args: &Value) -> ToolResult {
    let call = ToolCall::new("c1", name, args.clone());
    registry
        .dispatch(&call, CancellationToken::new(), UpdateSink::discard())
        .await
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

/// `harness tools --mcp CMD…` prices and prints a server's definitions:
/// those of `harness mcp` are the built-in ones, to the token.
#[test]
fn harness_tools_prices_and_prints_a_servers_definitions() {
    for flags in [&["--tokens"][..], &["--json"], &["--tokens", "--json"], &[]] {
        let mut with_server = flags.to_vec();
        with_server.extend(["--mcp", HARNESS, "mcp", "--tools", "readonly"]);
        let built_in = [flags, &["--tools", "readonly"]].concat();
        let served = harness_output(&[&["tools"][..], &with_server].concat());
        let local = harness_output(&[&["tools"][..], &built_in].concat());
        assert_eq!(served.0, 0, "{}", served.2);
        if flags.is_empty() {
            // The listing's labels and modes are the server's view.
            assert!(served.1.contains("read (Read, Parallel)"), "{}", served.1);
        } else {
            assert_eq!(served.1, local.1, "{flags:?}");
        }
    }
    let fixture = harness_output(&["tools", "--tokens", "--mcp", &mcp_fixture(), "junk"]);
    assert_eq!(fixture.0, 0, "{}", fixture.2);
    assert!(
        fixture
            .1
            .starts_with("tool            description  schema  definition\necho")
    );
    let (code, out, err) = harness_output(&["tools", "--mcp", &mcp_fixture(), "crash"]);
    assert_eq!(
        (code, out.as_str(), err.lines().next().unwrap_or("")),
        (
            1,
            "",
            format!(
                "error: MCP server `{}` did not start: it closed the connection before it \
                 answered `initialize` (it ended: exit status 3); its last stderr lines:",
                mcp_fixture()
            )
            .as_str()
        )
    );
}
