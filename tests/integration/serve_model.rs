//! `harness serve-model` end to end: the process started on a scenario,
//! its URL read from standard output, and hand-written HTTP requests in
//! each wire format driving its script to the end (docs/agents.md).

use std::io::BufRead as _;
use std::io::BufReader;
use std::io::Read as _;
use std::io::Write as _;
use std::net::TcpStream;
use std::path::Path;
use std::process::Child;
use std::process::Command;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::Value;
use serde_json::json;

use crate::cli_support::output_within;

/// How long any step may take before the test fails instead of hanging.
const LIMIT: Duration = Duration::from_secs(30);

const SCENARIO: &str = r#"
name: served
model:
  - call: read
    args: { path: "${workspace}/a.txt" }
  - parallel:
      - call: grep
        args: { pattern: x }
      - call: bash
        args: { command: ls }
  - say: Finished in ${workspace}.
"#;

/// A running `harness serve-model` and its URL.
struct Served {
    child: Child,
    url: String,
}

fn serve(dir: &Path, extra: &[&str]) -> Served {
    std::fs::write(dir.join("served.yaml"), SCENARIO).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_harness"))
        .current_dir(dir)
        .args(["serve-model", "served.yaml", "--workspace", "."])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let url = rx.recv_timeout(LIMIT).unwrap().trim_end().to_owned();
    Served { child, url }
}

impl Served {
    /// One request on a fresh connection, read to its end (the server
    /// closes it): the status and the body.
    fn post(&self, path: &str, body: &Value) -> (u16, String) {
        let address = self.url.strip_prefix("http://").unwrap();
        let mut stream = TcpStream::connect(address).unwrap();
        stream.set_read_timeout(Some(LIMIT)).unwrap();
        let body = body.to_string();
        write!(
            stream,
            "POST {path} HTTP/1.1\r\nhost: {address}\r\nauthorization: Bearer k\r\n\
             content-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let (head, body) = response.split_once("\r\n\r\n").unwrap();
        (head[9..12].parse().unwrap(), body.to_owned())
    }

    /// The exit code and standard error, once the process has ended.
    fn wait(self) -> (Option<i32>, String) {
        let (tx, rx) = mpsc::channel();
        let mut child = self.child;
        std::thread::spawn(move || {
            let status = child.wait().unwrap();
            let mut err = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            let _ = tx.send((status.code(), err));
        });
        rx.recv_timeout(LIMIT).unwrap()
    }
}

/// One call made in the conversation so far: its id, tool, arguments
/// and the result the "agent" got.
type Made = (&'static str, &'static str, Value, &'static str);

/// A conversation of `made` calls (each answered) in one format, with
/// `tools` declared.
trait Format {
    fn path(&self) -> &'static str;
    fn body(&self, made: &[Made], tools: bool) -> Value;
    /// The text and the calls (tool, arguments) of an answer.
    fn answer(&self, body: &str) -> (String, Vec<(String, Value)>);
}

fn data(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter(|data| *data != "[DONE]")
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}

struct Anthropic;

impl Format for Anthropic {
    fn path(&self) -> &'static str {
        "/v1/messages?beta=true"
    }
    fn body(&self, made: &[Made], tools: bool) -> Value {
        let mut messages = vec![json!({"role": "user", "content": "go"})];
        for (id, name, args, result) in made {
            messages.push(json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": id, "name": name, "input": args}]}));
            messages.push(json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "content": result}]}));
        }
        let tools: Vec<Value> = if tools {
            vec![json!({"name": "read", "input_schema": {"type": "object"}})]
        } else {
            Vec::new()
        };
        json!({"model": "m", "stream": true, "max_tokens": 10, "messages": messages, "tools": tools})
    }
    fn answer(&self, body: &str) -> (String, Vec<(String, Value)>) {
        let mut text = String::new();
        let mut calls = Vec::new();
        for event in data(body) {
            if event["type"] == "content_block_start"
                && event["content_block"]["type"] == "tool_use"
            {
                calls.push((
                    event["content_block"]["name"].as_str().unwrap().to_owned(),
                    Value::Null,
                ));
            }
            match event["delta"]["type"].as_str() {
                Some("text_delta") => text.push_str(event["delta"]["text"].as_str().unwrap()),
                Some("input_json_delta") => {
                    let json = event["delta"]["partial_json"].as_str().unwrap();
                    calls.last_mut().unwrap().1 = serde_json::from_str(json).unwrap();
                }
                _ => {}
            }
        }
        (text, calls)
    }
}

struct Responses;

impl Format for Responses {
    fn path(&self) -> &'static str {
        "/v1/responses"
    }
    fn body(&self, made: &[Made], tools: bool) -> Value {
        let mut input = vec![json!({"type": "message", "role": "user", "content": "go"})];
        for (id, name, args, result) in made {
            input.push(json!({"type": "function_call", "call_id": id, "name": name,
                "arguments": args.to_string()}));
            input.push(json!({"type": "function_call_output", "call_id": id, "output": result}));
        }
        let tools: Vec<Value> = if tools {
            vec![json!({"type": "function", "name": "read", "parameters": {}})]
        } else {
            Vec::new()
        };
        json!({"model": "m", "stream": true, "store": false, "input": input, "tools": tools})
    }
    fn answer(&self, body: &str) -> (String, Vec<(String, Value)>) {
        let completed = data(body)
            .into_iter()
            .find(|event| event["type"] == "response.completed")
            .unwrap();
        let mut text = String::new();
        let mut calls = Vec::new();
        for item in completed["response"]["output"].as_array().unwrap() {
            match item["type"].as_str().unwrap() {
                "message" => text.push_str(item["content"][0]["text"].as_str().unwrap()),
                "function_call" => calls.push((
                    item["name"].as_str().unwrap().to_owned(),
                    serde_json::from_str(item["arguments"].as_str().unwrap()).unwrap(),
                )),
                other => panic!("unexpected item {other}"),
            }
        }
        (text, calls)
    }
}

struct Chat;

impl Format for Chat {
    fn path(&self) -> &'static str {
        "/v1/chat/completions"
    }
    fn body(&self, made: &[Made], tools: bool) -> Value {
        let mut messages = vec![json!({"role": "user", "content": "go"})];
        for (id, name, args, result) in made {
            messages.push(json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}]}));
            messages.push(json!({"role": "tool", "tool_call_id": id, "content": result}));
        }
        let tools: Vec<Value> = if tools {
            vec![json!({"type": "function", "function": {"name": "read"}})]
        } else {
            Vec::new()
        };
        json!({"model": "m", "stream": true, "messages": messages, "tools": tools})
    }
    fn answer(&self, body: &str) -> (String, Vec<(String, Value)>) {
        let mut text = String::new();
        let mut calls = Vec::new();
        for chunk in data(body) {
            let Some(delta) = chunk["choices"].get(0).map(|c| &c["delta"]) else {
                continue;
            };
            if let Some(content) = delta["content"].as_str() {
                text.push_str(content);
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                calls.push((
                    call["function"]["name"].as_str().unwrap().to_owned(),
                    serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap(),
                ));
            }
        }
        (text, calls)
    }
}

struct Gemini;

impl Format for Gemini {
    fn path(&self) -> &'static str {
        "/v1beta/models/gem:streamGenerateContent?alt=sse"
    }
    fn body(&self, made: &[Made], tools: bool) -> Value {
        let mut contents = vec![json!({"role": "user", "parts": [{"text": "go"}]})];
        for (_, name, args, result) in made {
            contents.push(
                json!({"role": "model", "parts": [{"functionCall": {"name": name, "args": args}}]}),
            );
            contents.push(json!({"role": "user", "parts": [
                {"functionResponse": {"name": name, "response": {"output": result}}}]}));
        }
        let tools: Vec<Value> = if tools {
            vec![json!({"functionDeclarations": [{"name": "read"}]})]
        } else {
            Vec::new()
        };
        json!({"contents": contents, "tools": tools})
    }
    fn answer(&self, body: &str) -> (String, Vec<(String, Value)>) {
        let chunks = data(body);
        assert_eq!(chunks.len(), 1, "{body}");
        let mut text = String::new();
        let mut calls = Vec::new();
        for part in chunks[0]["candidates"][0]["content"]["parts"]
            .as_array()
            .unwrap()
        {
            if let Some(t) = part["text"].as_str() {
                text.push_str(t);
            }
            if let Some(call) = part.get("functionCall") {
                calls.push((
                    call["name"].as_str().unwrap().to_owned(),
                    call["args"].clone(),
                ));
            }
        }
        (text, calls)
    }
}

/// Drives a whole run in `format`: the first step, a side call, the
/// parallel step, a repeated request, the final text.
fn full_run(served: &Served, format: &dyn Format, workspace: &str) {
    let ask = |made: &[Made], tools: bool| {
        let (status, body) = served.post(format.path(), &format.body(made, tools));
        assert_eq!(status, 200, "{body}");
        format.answer(&body)
    };
    assert_eq!(
        ask(&[], true),
        (
            String::new(),
            vec![(
                "read".to_owned(),
                json!({"path": format!("{workspace}/a.txt")})
            )]
        )
    );
    // A side call is answered apart and moves nothing.
    assert_eq!(ask(&[], false), ("OK".to_owned(), Vec::new()));
    let first: Made = ("a1", "read", json!({"path": "a.txt"}), "hello");
    let parallel = (
        String::new(),
        vec![
            ("grep".to_owned(), json!({"pattern": "x"})),
            ("bash".to_owned(), json!({"command": "ls"})),
        ],
    );
    assert_eq!(ask(std::slice::from_ref(&first), true), parallel);
    // The same conversation again: the same answer.
    assert_eq!(ask(std::slice::from_ref(&first), true), parallel);
    let made = [
        first,
        ("a2", "grep", json!({"pattern": "x"}), "a.txt:1: x"),
        ("a3", "bash", json!({"command": "ls"}), "a.txt"),
    ];
    assert_eq!(
        ask(&made, true),
        (format!("Finished in {workspace}."), Vec::new())
    );
}

#[test]
fn each_format_drives_a_whole_script() {
    let formats: [(&str, &dyn Format); 4] = [
        ("anthropic-messages", &Anthropic),
        ("openai-responses", &Responses),
        ("openai-chat", &Chat),
        ("gemini", &Gemini),
    ];
    for (api, format) in formats {
        let dir = tempfile::tempdir().unwrap();
        let workspace = std::fs::canonicalize(dir.path()).unwrap();
        let served = serve(dir.path(), &["--api", api]);
        assert!(
            served.url.starts_with("http://127.0.0.1:"),
            "{}",
            served.url
        );
        full_run(&served, format, workspace.to_str().unwrap());
        // The final text sent, the command ends by itself.
        assert_eq!(served.wait(), (Some(0), String::new()), "{api}");
    }
}

#[test]
fn all_formats_at_once_and_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let served = serve(dir.path(), &["--log", "requests.jsonl"]);
    // One conversation, each turn in another format: the answer follows
    // from the history alone.
    let first: Made = ("a1", "read", json!({"path": "a.txt"}), "hello");
    let (status, _) = served.post(Anthropic.path(), &Anthropic.body(&[], true));
    assert_eq!(status, 200);
    let (status, _) = served.post(Chat.path(), &Chat.body(&[], false));
    assert_eq!(status, 200);
    let (status, body) = served.post(
        Responses.path(),
        &Responses.body(std::slice::from_ref(&first), true),
    );
    assert_eq!((status, Responses.answer(&body).1.len()), (200, 2));
    let (status, body) = served.post("/v1/nothing", &json!({}));
    assert_eq!(status, 404, "{body}");
    let made = [
        first,
        ("a2", "grep", json!({}), ""),
        ("a3", "bash", json!({}), ""),
    ];
    let (status, body) = served.post(Gemini.path(), &Gemini.body(&made, true));
    assert_eq!(status, 200);
    assert!(Gemini.answer(&body).0.starts_with("Finished in "), "{body}");
    assert_eq!(served.wait(), (Some(0), String::new()));
    let log = std::fs::read_to_string(dir.path().join("requests.jsonl")).unwrap();
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary: Vec<(u64, &str, u64, bool, &str)> = lines
        .iter()
        .map(|l| {
            (
                l["serial"].as_u64().unwrap(),
                l["path"].as_str().unwrap(),
                l["status"].as_u64().unwrap(),
                l["side_call"].as_bool().unwrap(),
                l["answer"]["kind"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (1, "/v1/messages?beta=true", 200, false, "calls"),
            (2, "/v1/chat/completions", 200, true, "side"),
            (3, "/v1/responses", 200, false, "calls"),
            (4, "/v1/nothing", 404, false, "-"),
            (
                5,
                "/v1beta/models/gem:streamGenerateContent?alt=sse",
                200,
                false,
                "final"
            ),
        ]
    );
    // Each line keeps the body as sent.
    assert_eq!(
        serde_json::from_str::<Value>(lines[0]["body"].as_str().unwrap()).unwrap(),
        Anthropic.body(&[], true)
    );
    assert_eq!(lines[2]["request"]["history_calls"], 1);
}

#[test]
fn a_signal_before_the_end_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let served = serve(dir.path(), &[]);
    let pid = rustix::process::Pid::from_raw(served.child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    assert_eq!(
        served.wait(),
        (
            Some(1),
            "stopped before the script was done (0 requests answered)\n".to_owned()
        )
    );
}

#[test]
fn what_cannot_be_served_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("two.yaml"),
        "name: a\nmodel: [{say: x}]\n---\nname: b\nmodel: [{say: y}]\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("one.yaml"), "name: a\nmodel: [{say: x}]\n").unwrap();
    let cases: [(&[&str], &str); 4] = [
        (
            &["two.yaml"],
            "error: two.yaml holds 2 scenarios (a, b); serve-model serves one: put it in a file of its own\n",
        ),
        (
            &["missing.yaml"],
            "error: missing.yaml:1:1: cannot open the scenario path: No such file or directory (os error 2)\n",
        ),
        (
            &["one.yaml", "--workspace", "nowhere"],
            "error: --workspace nowhere: No such file or directory (os error 2)\n",
        ),
        (
            &["two.yaml", "--api", "openai"],
            "error: invalid value 'openai' for '--api <API>': unknown API `openai` (known: \
             anthropic-messages, openai-responses, openai-chat, gemini)\n\nFor more information, try '--help'.\n",
        ),
    ];
    for (args, want) in cases {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness"));
        cmd.current_dir(dir.path())
            .arg("serve-model")
            .args(args)
            .stdin(Stdio::null());
        let out = output_within(cmd, LIMIT);
        assert_eq!(
            (
                out.status.code(),
                String::from_utf8(out.stderr).unwrap(),
                out.stdout
            ),
            (Some(2), want.to_owned(), Vec::new()),
            "{args:?}"
        );
    }
}
