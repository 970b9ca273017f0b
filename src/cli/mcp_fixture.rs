//! `harness mcp-fixture [MODE…]` (hidden): a small MCP server over stdio
//! that misbehaves on request, for the tests and the shipped suite
//! (scenarios/mcp/) of the harness as an MCP client. It needs nothing but
//! the harness binary: JSON-RPC is written by hand, so every misbehaviour
//! is exact.
//!
//! Modes (any number of them):
//!
//! | mode | what the server does |
//! | --- | --- |
//! | `hang` | never answers a `tools/call` |
//! | `crash` | writes to stderr and exits with status 3 before it answers `initialize` |
//! | `junk` | a banner and a line of junk on stdout before every answer |
//! | `flood` | 4 MiB on stderr before it answers `initialize`, 64 KiB with every answer |
//! | `no-init` | reads `initialize` and never answers it |
//! | `ignore-sigterm` | ignores `SIGTERM` and the end of its input: only `SIGKILL` ends it |
//! | `grandchild` | starts a process of its own (in its group) that would outlive it |
//! | `hostile-tools` | lists tools made to break a suite written from them: `${HOME}` and `${workspace}` in an example and a default, a name with a line break, one of 10 KB |
//!
//! Without a mode it is a well-behaved server with these tools: `echo`
//! (`text`), `sleep` (`ms`), `fail` (an `isError` result), `rpc_error` (a
//! JSON-RPC error), `structured` (`structuredContent` and `_meta`),
//! `blocks` (image, audio, a resource link and an embedded resource),
//! `exit` (`code`: exits during the call), `read_file` (`path`: the file's
//! text, or an `isError` result naming the path), `cwd`, `env` (`name`)
//! `grandchild_pid` and `calls` (how many calls the process served). Each `notifications/cancelled` it gets is noted on
//! stderr (`cancelled request ID`), and no answer is sent for that request.

use std::collections::HashSet;
use std::io::BufRead;
use std::io::Write;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::time::Duration;

use clap::Args;
use serde_json::Value;
use serde_json::json;

/// Flags of `harness mcp-fixture`.
#[derive(Debug, Args)]
pub(super) struct FixtureArgs {
    /// hang, crash, junk, flood, no-init, ignore-sigterm, grandchild,
    /// hostile-tools; or
    /// `idle` (the grandchild itself: sleeps until killed).
    modes: Vec<String>,
}

const MODES: [&str; 9] = [
    "hang",
    "crash",
    "junk",
    "flood",
    "no-init",
    "ignore-sigterm",
    "grandchild",
    "hostile-tools",
    "idle",
];

struct Fixture {
    modes: Vec<String>,
    out: Mutex<std::io::Stdout>,
    cancelled: Mutex<HashSet<String>>,
    grandchild: Mutex<Option<u32>>,
    calls: std::sync::atomic::AtomicU64,
}

impl Fixture {
    fn has(&self, mode: &str) -> bool {
        self.modes.iter().any(|m| m == mode)
    }

    fn stderr(&self, text: &str) {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{text}");
        let _ = err.flush();
    }

    /// Writes one message (with junk before it in `junk` mode); false when
    /// stdout is gone.
    fn send(&self, message: &Value) -> bool {
        if self.has("flood") {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(&[b'e'; 64 * 1024]);
            let _ = err.write_all(b"\n");
        }
        let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        if self.has("junk") {
            let _ = writeln!(out, "fixture: this line is not JSON-RPC");
        }
        writeln!(out, "{message}").is_ok() && out.flush().is_ok()
    }

    fn answer(&self, id: &Value, result: Value) -> bool {
        if self
            .cancelled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(&id.to_string())
        {
            return true;
        }
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "result": result }))
    }

    fn error(&self, id: &Value, code: i64, message: &str, data: Option<Value>) -> bool {
        let mut error = json!({ "code": code, "message": message });
        if let Some(data) = data {
            error["data"] = data;
        }
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "error": error }))
    }
}

fn text(text: impl Into<String>) -> Value {
    json!({ "content": [{ "type": "text", "text": text.into() }], "isError": false })
}

fn error_text(text: impl Into<String>) -> Value {
    json!({ "content": [{ "type": "text", "text": text.into() }], "isError": true })
}

/// The tools of `hostile-tools`: what broke suites `harness init --mcp`
/// wrote (issue 42 item 5). All are annotated read-only.
fn hostile_tools() -> Value {
    let tool = |name: &str, properties: Value, required: &[&str]| {
        json!({
            "name": name,
            "inputSchema": { "type": "object", "properties": properties, "required": required },
            "annotations": { "readOnlyHint": true },
        })
    };
    json!([
        tool(
            "vars",
            json!({
                "home": { "type": "string", "examples": ["${HOME}/notes"] },
                "where": { "type": "string", "default": "${workspace}" },
            }),
            &["home", "where"]
        ),
        tool("line\nbreak", json!({}), &[]),
        tool(&"t".repeat(10_240), json!({}), &[]),
    ])
}

fn tools() -> Value {
    let tool = |name: &str, description: &str, properties: Value, required: &[&str]| {
        json!({
            "name": name,
            "description": description,
            "inputSchema": { "type": "object", "properties": properties, "required": required },
        })
    };
    json!([
        tool(
            "echo",
            "Echoes `text`.",
            json!({ "text": { "type": "string" } }),
            &["text"]
        ),
        tool(
            "sleep",
            "Answers after `ms` milliseconds.",
            json!({ "ms": { "type": "integer" } }),
            &["ms"]
        ),
        tool("fail", "Always an error result.", json!({}), &[]),
        tool("rpc_error", "Always a JSON-RPC error.", json!({}), &[]),
        tool(
            "structured",
            "A result with structuredContent and _meta.",
            json!({}),
            &[]
        ),
        tool(
            "blocks",
            "Image, audio, resource link and embedded resource blocks.",
            json!({}),
            &[]
        ),
        tool(
            "exit",
            "Exits with `code` during the call.",
            json!({ "code": { "type": "integer" } }),
            &[]
        ),
        tool(
            "read_file",
            "The text of the file at `path`.",
            json!({ "path": { "type": "string" } }),
            &["path"]
        ),
        tool("cwd", "The server's working directory.", json!({}), &[]),
        tool(
            "env",
            "The value of the variable `name`.",
            json!({ "name": { "type": "string" } }),
            &["name"]
        ),
        tool(
            "grandchild_pid",
            "The pid of the process the server started (grandchild mode).",
            json!({}),
            &[]
        ),
        tool(
            "calls",
            "How many calls this server process has served, this one included.",
            json!({}),
            &[]
        ),
    ])
}

fn call(fixture: &Fixture, id: &Value, params: &Value) {
    let name = params.get("name").and_then(Value::as_str).unwrap_or("");
    let served = fixture
        .calls
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        + 1;
    let args = params.get("arguments").cloned().unwrap_or(json!({}));
    let arg_str = |key: &str| {
        args.get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let arg_int = |key: &str| args.get(key).and_then(Value::as_i64).unwrap_or(0);
    let result = match name {
        "echo" => text(arg_str("text")),
        "sleep" => {
            let ms = u64::try_from(arg_int("ms")).unwrap_or(0);
            std::thread::sleep(Duration::from_millis(ms));
            text(format!("slept {ms} ms"))
        }
        "fail" => error_text("the fixture fails this call on purpose"),
        "rpc_error" => {
            fixture.error(
                id,
                -32000,
                "the fixture refuses this call",
                Some(json!({ "why": "asked to" })),
            );
            return;
        }
        "structured" => json!({
            "content": [{ "type": "text", "text": "{\"answer\":42}" }],
            "structuredContent": { "answer": 42 },
            "isError": false,
            "_meta": { "fixture/trace": "t-1" },
        }),
        "blocks" => json!({
            "content": [
                { "type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png" },
                { "type": "audio", "data": "UklGRg==", "mimeType": "audio/wav" },
                { "type": "resource_link", "uri": "file:///notes.txt", "name": "notes.txt", "mimeType": "text/plain" },
                { "type": "resource", "resource": { "uri": "fixture://greeting", "text": "hello" } },
            ],
            "isError": false,
        }),
        "exit" => {
            let code = i32::try_from(arg_int("code")).unwrap_or(1);
            fixture.stderr(&format!(
                "fixture: exiting with status {code} during a call, as asked"
            ));
            std::process::exit(code);
        }
        "read_file" => {
            let path = arg_str("path");
            match std::fs::read_to_string(&path) {
                Ok(body) => text(format!("{path}:\n{body}")),
                Err(err) => error_text(format!("cannot read {path}: {err}")),
            }
        }
        "cwd" => text(
            std::env::current_dir()
                .map(|d| d.display().to_string())
                .unwrap_or_default(),
        ),
        "env" => text(std::env::var(arg_str("name")).unwrap_or_else(|_| "(unset)".to_owned())),
        "grandchild_pid" => {
            let pid = *fixture
                .grandchild
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            text(pid.map_or_else(|| "none".to_owned(), |p| p.to_string()))
        }
        "calls" => text(served.to_string()),
        _ => {
            fixture.error(id, -32602, &format!("Unknown tool: {name}"), None);
            return;
        }
    };
    fixture.answer(id, result);
}

fn spawn_grandchild(fixture: &Fixture) {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    // Its stdout and stderr are the server's: it holds the pipes open.
    let child = std::process::Command::new(exe)
        .args(["mcp-fixture", "idle"])
        .stdin(std::process::Stdio::null())
        .spawn();
    if let Ok(child) = child {
        fixture.stderr(&format!("fixture: grandchild pid {}", child.id()));
        *fixture
            .grandchild
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(child.id());
        // Not waited for: it is meant to outlive the server unless its group dies.
        std::mem::forget(child);
    }
}

fn sleep_forever() -> ! {
    loop {
        std::thread::park();
    }
}

pub(super) fn run(args: &FixtureArgs) -> u8 {
    if let Some(unknown) = args.modes.iter().find(|m| !MODES.contains(&m.as_str())) {
        eprintln!(
            "error: unknown mode `{unknown}` (modes: {})",
            MODES.join(", ")
        );
        return crate::exit::USAGE;
    }
    let fixture = Arc::new(Fixture {
        modes: args.modes.clone(),
        out: Mutex::new(std::io::stdout()),
        cancelled: Mutex::new(HashSet::new()),
        grandchild: Mutex::new(None),
        calls: std::sync::atomic::AtomicU64::new(0),
    });
    if fixture.has("idle") {
        sleep_forever();
    }
    if fixture.has("ignore-sigterm") {
        // SAFETY: setting a signal's disposition to SIG_IGN has no
        // memory-safety preconditions.
        unsafe {
            libc::signal(libc::SIGTERM, libc::SIG_IGN);
        }
    }
    if fixture.has("grandchild") {
        spawn_grandchild(&fixture);
    }
    if fixture.has("crash") {
        fixture.stderr("fixture: crashing on purpose before initialize");
        return 3;
    }
    if fixture.has("junk") {
        let mut out = fixture.out.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = writeln!(out, "fixture banner: starting up");
        let _ = out.flush();
    }
    if fixture.has("flood") {
        let mut err = std::io::stderr().lock();
        for _ in 0..64 {
            let _ = err.write_all(&[b'f'; 64 * 1024]);
        }
        let _ = err.write_all(b"\nfixture: flooded stderr with 4 MiB\n");
        let _ = err.flush();
    }
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let method = message.get("method").and_then(Value::as_str).unwrap_or("");
        let id = message.get("id").cloned();
        let params = message.get("params").cloned().unwrap_or(json!({}));
        match (method, id) {
            ("initialize", Some(id)) => {
                if fixture.has("no-init") {
                    continue;
                }
                let version = params
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("2025-11-25")
                    .to_owned();
                fixture.answer(
                    &id,
                    json!({
                        "protocolVersion": version,
                        "capabilities": { "tools": {} },
                        "serverInfo": { "name": "harness-fixture", "version": env!("CARGO_PKG_VERSION") },
                    }),
                );
            }
            ("tools/list", Some(id)) => {
                let tools = if fixture.has("hostile-tools") {
                    hostile_tools()
                } else {
                    tools()
                };
                fixture.answer(&id, json!({ "tools": tools }));
            }
            ("tools/call", Some(id)) => {
                if fixture.has("hang") {
                    continue;
                }
                let fixture = Arc::clone(&fixture);
                std::thread::spawn(move || call(&fixture, &id, &params));
            }
            ("ping", Some(id)) => {
                fixture.answer(&id, json!({}));
            }
            ("notifications/cancelled", None) => {
                let request = params.get("requestId").cloned().unwrap_or(Value::Null);
                fixture.stderr(&format!("fixture: cancelled request {request}"));
                fixture
                    .cancelled
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(request.to_string());
            }
            (_, Some(id)) => {
                fixture.error(&id, -32601, &format!("Method not found: {method}"), None);
            }
            (_, None) => {}
        }
    }
    if fixture.has("ignore-sigterm") {
        fixture.stderr("fixture: input closed; staying up anyway");
        sleep_forever();
    }
    crate::exit::SUCCESS
}
