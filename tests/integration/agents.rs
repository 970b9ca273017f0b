//! `harness run` serving scenarios to a coding agent, end to end, with
//! the tiny agent of the tests (tests/fixtures/fake_agent.rs: OpenAI
//! Chat, not streamed, `read_file` and `write_file`) defined under
//! `agents:` (docs/agents.md). The four real agents are tested by
//! tests/agents/run.sh in CI; this needs none of them.

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::Value;
use serde_json::json;

use crate::cli_support::output_within;

/// How long a run may take before the test fails instead of hanging.
const LIMIT: Duration = Duration::from_secs(60);

/// The fake agent, copied to `dir` (so that a process of it left
/// running is found by its path, whatever else runs on the machine).
fn fake_agent(dir: &Path) -> PathBuf {
    let harness = Path::new(env!("CARGO_BIN_EXE_harness"));
    let built = harness
        .parent()
        .map(|dir| dir.join("examples").join("fake_agent"))
        .unwrap_or_default();
    assert!(
        built.is_file(),
        "{} is missing: `cargo test` builds it (or `cargo build --example fake_agent`)",
        built.display()
    );
    let copy = dir.join("fake_agent");
    std::fs::copy(&built, &copy).unwrap();
    copy
}

const OK: &str = r#"name: fake reads and writes
agent: fake
prompt: Copy the greeting.
workspace:
  files:
    a.txt: "hello\n"
model:
  - call: read_file
    args: { path: "${workspace}/a.txt" }
    expect: { contains: hello }
  - call: write_file
    args: { path: "${workspace}/b.txt", content: "hello again\n" }
    expect: { equals: "wrote 12 bytes to /workspace/b.txt" }
  - say: Copied.
expect:
  files:
    b.txt: "hello again\n"
"#;

const CHECK: &str = r#"name: fake misses a check
agent: fake
workspace:
  files:
    a.txt: "hello\n"
model:
  - call: read_file
    args: { path: "${workspace}/a.txt" }
    expect: { contains: goodbye }
  - say: Read.
"#;

const EARLY: &str = r#"name: quitter exits early
agent: quitter
workspace:
  files:
    a.txt: "hello\n"
model:
  - call: read_file
    args: { path: "${workspace}/a.txt" }
    expect: { contains: hello }
  - say: Read.
"#;

const HANG: &str = r#"name: hanger hangs
agent: hanger
model:
  - call: read_file
    args: { path: "${workspace}/a.txt" }
  - say: Read.
"#;

fn suite(dir: &Path) -> PathBuf {
    let agent = fake_agent(dir);
    let agent = agent.display();
    let defs: String = [
        ("fake", "ok"),
        ("quitter", "exit-early"),
        ("hanger", "hang"),
    ]
    .iter()
    .map(|(name, mode)| {
        format!(
            "  {name}: {{ command: [\"{agent}\", \"${{model_url}}\", {mode}, \"${{prompt}}\"], \
                 api: openai-chat }}\n"
        )
    })
    .collect();
    std::fs::write(
        dir.join("harness.yaml"),
        format!("timeout: 3\nagents:\n{defs}"),
    )
    .unwrap();
    let scenarios = dir.join("scenarios");
    std::fs::create_dir(&scenarios).unwrap();
    for (file, text) in [
        ("a.yaml", OK),
        ("b.yaml", CHECK),
        ("c.yaml", EARLY),
        ("d.yaml", HANG),
    ] {
        std::fs::write(scenarios.join(file), text).unwrap();
    }
    scenarios
}

fn harness(dir: &Path, tmp: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness"));
    cmd.args(args)
        .current_dir(dir)
        .env("TMPDIR", tmp)
        .env("NO_COLOR", "1");
    output_within(cmd, LIMIT)
}

/// The processes whose command line names `path`.
fn running(path: &Path) -> Vec<String> {
    let needle = path.display().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(&needle) {
            found.push(cmdline);
        }
    }
    found
}

/// A scenario's record, without what depends on the machine (how it
/// was isolated) and on timing (durations).
fn record(scenario: &Value) -> Value {
    let mut agent = scenario["agent"].clone();
    let isolation = agent["isolation"].as_str().unwrap();
    assert!(
        ["sandbox", "process group"].contains(&isolation),
        "{isolation}"
    );
    let agent = agent.as_object_mut().unwrap();
    agent.remove("isolation");
    agent.remove("warnings");
    let mut stats = scenario["stats"].clone();
    stats.as_object_mut().unwrap().remove("duration_ms");
    json!({
        "name": scenario["name"],
        "status": scenario["status"],
        "agent": agent,
        "stats": stats,
        "failures": scenario["failures"],
    })
}

#[test]
fn an_agent_of_the_suites_own_is_served_judged_and_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    suite(dir.path());
    let out = harness(
        dir.path(),
        tmp.path(),
        &["run", "scenarios", "--report", "out"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    // Nothing the hanging agent started is left.
    assert_eq!(
        running(&dir.path().join("fake_agent")),
        Vec::<String>::new()
    );
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/run.json")).unwrap())
            .unwrap();
    let mut scenarios: Vec<Value> = run["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(record)
        .collect();
    // The hanging agent's own words name its process ids, which depend
    // on whether it ran in a pid namespace.
    let hung = scenarios[3]["agent"]["stderr"].as_str().unwrap().to_owned();
    assert!(hung.starts_with("fake_agent: pids "), "{hung}");
    scenarios[3]["agent"]["stderr"] = json!("fake_agent: pids …");
    let stats = |turns: u64, calls: u64, result: u64, input: u64, output: u64| {
        json!({"turns": turns, "calls": calls, "errors": 0, "retries": 0, "retries_avoided": 0,
            "result_tokens": result, "input_tokens": input, "output_tokens": output,
            "cache_read_tokens": 0, "cache_write_tokens": 0,
            // The tools in an agent's requests are its own: not priced.
            "definition_tokens": 0})
    };
    let agent = |name: &str,
                 exit: &str,
                 code: Option<i32>,
                 finished: bool,
                 requests: u64,
                 output: &str,
                 stderr: &str| {
        let mut a = json!({"name": name, "api": "openai-chat", "exit": exit, "finished": finished,
            "requests": requests, "side_calls": 1, "output": output, "stderr": stderr});
        if let Some(code) = code {
            a["exit_code"] = json!(code);
        }
        a
    };
    let last_words = "its last words (stderr): fake_agent: giving up before running any tool";
    assert_eq!(
        scenarios,
        vec![
            json!({"name": "fake reads and writes", "status": "passed",
                "agent": agent("fake", "exit status 0", Some(0), true, 4, "Copied.", ""),
                "stats": stats(3, 2, 12, 375, 32), "failures": []}),
            json!({"name": "fake misses a check", "status": "failed",
                "agent": agent("fake", "exit status 0", Some(0), true, 3, "Read.", ""),
                "stats": stats(2, 1, 2, 224, 14),
                "failures": [{"step": "step 1 (read_file)", "check": "contains",
                    "expected": "text containing \"goodbye\"", "actual": "hello\n"}]}),
            json!({"name": "quitter exits early", "status": "failed",
                "agent": agent("quitter", "exit status 3", Some(3), false, 2, "",
                    "fake_agent: giving up before running any tool"),
                "stats": stats(1, 0, 0, 103, 12),
                "failures": [
                    {"step": "loop contract", "check": "run", "expected": "the run ends normally",
                     "actual": format!("the agent `quitter` ended (exit status 3) before the \
                        script's final answer; {last_words}")},
                    {"step": "step 1 (read_file)", "check": "sent",
                     "expected": "the call was sent and has a result",
                     "actual": format!("the agent `quitter` never returned a result for it; \
                        {last_words}")}]}),
            json!({"name": "hanger hangs", "status": "failed",
                "agent": agent("hanger", "stopped at the time budget", None, false, 2, "",
                    "fake_agent: pids …"),
                "stats": stats(1, 0, 0, 101, 12),
                "failures": [{"step": null, "check": "timeout",
                    "expected": "the scenario finishes within 3.0 s",
                    "actual": "the agent `hanger` was still running after 3.0 s; it was stopped \
                        with everything it started"}]}),
        ]
    );
    // The page carries the records (its script shows them as text).
    let page = std::fs::read_to_string(dir.path().join("out/index.html")).unwrap();
    assert!(page.contains("function agentPart"));
}

#[test]
fn each_agent_named_is_a_lane_headed_as_an_agent() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    suite(dir.path());
    let out = harness(
        dir.path(),
        tmp.path(),
        &[
            "run",
            "scenarios/a.yaml",
            "--agent",
            "fake",
            "--agent",
            "quitter",
            "--quiet",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    // A scenario written for `fake` is skipped for `quitter`.
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let heads: Vec<&str> = stdout.lines().filter(|l| l.starts_with("== ")).collect();
    assert_eq!(
        heads,
        vec![
            "== agent fake (--agent fake) ==",
            "== agent quitter (--agent quitter) =="
        ]
    );
}

#[test]
fn servers_for_an_agent_without_a_known_mcp_config_are_skipped_or_refused_where_written() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let agent = fake_agent(dir.path());
    // The suite's servers reach every scenario below it: the fake agent,
    // not a built-in one, is skipped with the reason.
    std::fs::write(
        dir.path().join("harness.yaml"),
        format!(
            "agents:\n  fake: {{ command: [\"{}\", \"${{model_url}}\", ok, \"${{prompt}}\"], api: \
             openai-chat }}\nservers:\n  h: {{ command: [\"${{harness}}\", mcp] }}\n",
            agent.display()
        ),
    )
    .unwrap();
    let scenarios = dir.path().join("scenarios");
    std::fs::create_dir(&scenarios).unwrap();
    std::fs::write(scenarios.join("a.yaml"), OK).unwrap();
    let out = harness(
        dir.path(),
        tmp.path(),
        &["run", "scenarios", "--report", "out"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/run.json")).unwrap())
            .unwrap();
    assert_eq!(
        (
            &run["scenarios"][0]["status"],
            &run["scenarios"][0]["skip_reason"]
        ),
        (
            &json!("skipped"),
            &json!(
                "the agent `fake` is not a built-in one, so harness knows no way to register the \
                 scenario's MCP servers with it (claude-code, codex and gemini-cli take them)"
            )
        )
    );
    // A scenario's own servers for pi are a load error at `servers`.
    std::fs::write(
        scenarios.join("a.yaml"),
        "agent: pi\nservers:\n  fs: { command: [mcp-server-filesystem] }\nmodel:\n  - say: Hi.\n",
    )
    .unwrap();
    let out = harness(dir.path(), tmp.path(), &["check", "scenarios"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "scenarios/a.yaml:2:1: servers: the agent `pi` has no MCP client (pi 0.73.1 leaves MCP \
         out by design), so MCP servers cannot be given to it; remove `servers`\n1 problem found \
         (0 valid scenarios)\n"
    );
}
