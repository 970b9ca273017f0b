//! Issue 41 through `harness run` (and the commands that start a
//! scenario's kind of server: `tools --mcp`, `tools --check`, `init
//! --mcp`, `record`): a scenario's bash, its stdio MCP servers and a
//! replayed session run in a sandbox by default (writes in the workspace
//! and a private TMPDIR, no network, nothing left running), `sandbox: off`
//! restores the old behaviour, and `sandbox.write` paths are checked where
//! they are written. Issue 42 item 1: a server that ignores the end of its
//! input and SIGTERM and starts a `setsid` child leaves nothing behind.
//!
//! Each test fails without a sandbox: [`super::sandbox::require`] fails
//! first where the kernel has none.

use std::io::BufRead;
use std::io::BufReader;
use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Output;
use std::process::Stdio;
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::Value;
use serde_json::json;

use super::sandbox::LIMIT;
use super::sandbox::arrived;
use super::sandbox::daemons_command;
use super::sandbox::find_daemons;
use super::sandbox::require;
use super::sandbox::setsid_daemons_command;
use super::sandbox::sleeping;
use super::sandbox::still_running;
use super::test_helpers::mcp_fixture;

const HARNESS: &str = env!("CARGO_BIN_EXE_harness");

/// A test's directories: `suite/` (the scenarios), `out/` (a directory
/// outside every workspace), `home/` (`$HOME` of the run) and `tmp/`
/// (`TMPDIR` of the run: the workspaces are made there, so `../` of a
/// workspace is `tmp/`).
struct Place {
    _dir: tempfile::TempDir,
    base: PathBuf,
}

impl Place {
    fn new() -> Self {
        require();
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        for sub in ["suite", "out", "home", "tmp"] {
            std::fs::create_dir(base.join(sub)).unwrap();
        }
        Self { _dir: dir, base }
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.base.join(sub)
    }

    /// Writes `suite/NAME` with `text`, `@OUT@`, `@HARNESS@` and `@FIXTURE@`
    /// (the tests' MCP server) replaced.
    fn scenario(&self, name: &str, text: &str) {
        let text = text
            .replace("@OUT@", &self.path("out").display().to_string())
            .replace("@HARNESS@", HARNESS)
            .replace("@FIXTURE@", &mcp_fixture());
        std::fs::write(self.path("suite").join(name), text).unwrap();
    }

    /// The names in `sub`, sorted.
    fn names(&self, sub: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path(sub))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// `harness ARGS…` with this place's `HOME` and `TMPDIR`.
    fn harness(&self, args: &[&str]) -> Command {
        let mut command = Command::new(HARNESS);
        command
            .args(args)
            .env("LC_ALL", "C")
            .env("HOME", self.path("home"))
            .env("TMPDIR", self.path("tmp"))
            .stdin(Stdio::null());
        command
    }

    /// `harness run suite/ --json run.json -j 1`: its output and report.
    fn run(&self, flags: &[&str]) -> (Output, Value) {
        let suite = self.path("suite");
        let report = self.path("run.json");
        let out = self
            .harness(&["run", "-j", "1", "--json"])
            .arg(&report)
            .arg(&suite)
            .args(flags)
            .output()
            .unwrap();
        let report = std::fs::read(&report)
            .map(|bytes| serde_json::from_slice(&bytes).unwrap())
            .unwrap_or(Value::Null);
        (out, report)
    }
}

/// Each scenario's name and status in a report.
fn statuses(report: &Value) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    all.sort();
    all
}

/// The scenario named `name` of a report.
fn scenario<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == json!(name))
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The sandbox of a scenario on this machine, as run.json says it.
fn full_sandbox() -> Value {
    let abi = harness::tools::ops::sandbox::support()
        .landlock
        .clone()
        .unwrap();
    json!({
        "fs": {"by": "landlock", "abi": abi},
        "network": {"by": "namespace", "ports": []},
        "processes": {"by": "pid_namespace"}
    })
}

/// The command of the writes scenario: outside writes (absolute, `$HOME`,
/// `../`), inside ones (the workspace, `mktemp`), and a connection to
/// `port`, each reported as a `name=status` line.
fn probe(tag: &str, port: u16) -> String {
    format!(
        "touch @OUT@/abs-{tag}.txt 2>/dev/null; echo abs=$?; touch \"$HOME/home-{tag}.txt\" \
         2>/dev/null; echo home=$?; touch ../up-{tag}.txt 2>/dev/null; echo up=$?; echo in > \
         in.txt; echo ws=$?; t=$(mktemp) && echo x > \"$t\" && cat \"$t\"; echo tmp=$?; (exec \
         3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo net=connected || echo net=refused"
    )
}

#[test]
fn scenario_bash_writes_only_inside_and_reaches_no_network_unless_off() {
    let place = Place::new();
    let sandboxed = TcpListener::bind("127.0.0.1:0").unwrap();
    let open = TcpListener::bind("127.0.0.1:0").unwrap();
    let doc = |name: &str, key: &str, tag: &str, port: u16, expected: &str| {
        format!(
            "name: {name}\n{key}model:\n  - call: bash\n    args:\n      command: {}\n    \
             expect:\n      equals: {}\nexpect:\n  files:\n    in.txt: \"in\\n\"\n",
            serde_json::to_string(&probe(tag, port)).unwrap(),
            serde_json::to_string(expected).unwrap(),
        )
    };
    place.scenario(
        "sandboxed.yaml",
        &doc(
            "sandboxed",
            "",
            "a",
            sandboxed.local_addr().unwrap().port(),
            "abs=1\nhome=1\nup=1\nws=0\nx\ntmp=0\nnet=refused\n",
        ),
    );
    place.scenario(
        "off.yaml",
        &doc(
            "off",
            "sandbox: off\n",
            "b",
            open.local_addr().unwrap().port(),
            "abs=0\nhome=0\nup=0\nws=0\nx\ntmp=0\nnet=connected\n",
        ),
    );
    let (out, report) = place.run(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        statuses(&report),
        [
            ("off".to_owned(), "passed".to_owned()),
            ("sandboxed".to_owned(), "passed".to_owned())
        ]
    );
    // Nothing of the sandboxed scenario is left outside; the other's
    // writes are where it made them.
    // (Its `mktemp` file is left in the run's TMPDIR, as before; the
    // sandboxed one's went with its private TMPDIR.)
    let tmp: Vec<String> = place
        .names("tmp")
        .into_iter()
        .map(|name| {
            if name.starts_with("tmp.") {
                "tmp.*".to_owned()
            } else {
                name
            }
        })
        .collect();
    assert_eq!(
        (place.names("out"), place.names("home"), tmp),
        (
            vec!["abs-b.txt".to_owned()],
            vec!["home-b.txt".to_owned()],
            vec!["tmp.*".to_owned(), "up-b.txt".to_owned()]
        )
    );
    assert_eq!(arrived(&sandboxed, Duration::ZERO), None);
    assert_eq!(arrived(&open, Duration::ZERO).as_deref(), Some(""));
    assert_eq!(
        (
            &scenario(&report, "sandboxed")["sandbox"],
            &scenario(&report, "off")["sandbox"]
        ),
        (
            &full_sandbox(),
            &json!({"none": "`sandbox: off` in the scenario"})
        )
    );
}

#[test]
fn network_true_and_write_paths_open_what_they_name() {
    let place = Place::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    place.scenario(
        "open.yaml",
        &format!(
            "name: open\nsandbox:\n  network: true\n  write: [\"@OUT@\"]\nmodel:\n  - call: \
             bash\n    args:\n      command: \"touch @OUT@/w.txt && (exec \
             3<>/dev/tcp/127.0.0.1/{port}) && echo ok; touch \\\"$HOME/h.txt\\\" 2>/dev/null \
             || echo refused\"\n    expect:\n      equals: \"ok\\nrefused\\n\"\n"
        ),
    );
    let (out, report) = place.run(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(place.names("out"), ["w.txt"]);
    assert_eq!(place.names("home"), Vec::<String>::new());
    assert_eq!(arrived(&listener, Duration::ZERO).as_deref(), Some(""));
    let mut expected = full_sandbox();
    expected["network"] = json!({"by": "open"});
    assert_eq!(scenario(&report, "open")["sandbox"], expected);
}

#[test]
fn daemons_of_a_scenarios_bash_are_gone_when_it_ends() {
    let place = Place::new();
    let sandboxed = ["4001.25", "4002.25", "4003.25"];
    let off = ["4011.25", "4012.25"];
    for (name, command, key) in [
        ("kept", daemons_command(&sandboxed), ""),
        ("off", setsid_daemons_command(&off), "sandbox: off\n"),
    ] {
        place.scenario(
            &format!("{name}.yaml"),
            &format!(
                "name: {name}\n{key}model:\n  - call: bash\n    args:\n      command: {}\n    \
                 expect:\n      equals: \"started\\n\"\n",
                serde_json::to_string(&command).unwrap()
            ),
        );
    }
    let (out, _) = place.run(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        sandboxed
            .iter()
            .flat_map(|m| sleeping(m))
            .collect::<Vec<_>>(),
        Vec::<i32>::new()
    );
    // Without the sandbox those that left the process group (`setsid`)
    // outlive the run (the test kills them).
    let outlived = find_daemons(&off);
    assert_eq!(still_running(&outlived).len(), 2);
}

#[test]
fn a_scenarios_server_that_writes_outside_at_start_is_refused_and_still_serves() {
    let place = Place::new();
    place.scenario(
        "server.yaml",
        "name: server\nservers:\n  fx:\n    command: [sh, -c, \"if echo leaked > \
         @OUT@/leak.txt; then echo wrote > started.txt; else echo refused > started.txt; fi 2> \
         /dev/null; exec @FIXTURE@\"]\ntools: [fx]\nmodel:\n  - call: echo\n    \
         args: {text: still here}\n    expect:\n      equals: still here\nexpect:\n  files:\n    \
         started.txt: \"refused\\n\"\n",
    );
    let (out, report) = place.run(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        statuses(&report),
        [("server".to_owned(), "passed".to_owned())]
    );
    assert_eq!(place.names("out"), Vec::<String>::new());
}

/// A server that writes outside its workspace has the write refused, and
/// the report names the path under the server (issue 45, item 3): in
/// run.json's `refused_writes` and on the console of the failed scenario.
#[test]
fn a_servers_refused_write_outside_is_named_in_the_report() {
    let place = Place::new();
    place.scenario(
        "server.yaml",
        "name: keeps data elsewhere\nservers:\n  fx:\n    command: [sh, -c, \"echo state > \
         @OUT@/data.json; exec @FIXTURE@\"]\ntools: [fx]\nmodel:\n  - call: echo\n    \
         args: {text: stored}\n    expect:\n      equals: not what it says\n",
    );
    let (out, report) = place.run(&[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let refused = place.path("out").join("data.json").display().to_string();
    assert_eq!(
        scenario(&report, "keeps data elsewhere")["servers"][0]["refused_writes"],
        json!([refused])
    );
    let console = text(&out);
    let lines: Vec<&str> = console
        .lines()
        .skip_while(|l| !l.contains("it could not write outside its workspace"))
        .take(2)
        .collect();
    assert_eq!(
        lines,
        [
            "    it could not write outside its workspace (the sandbox lets it write only there \
             and in its TMPDIR; give it a data path under ${workspace}, or add the place to \
             `sandbox.write`):",
            &format!("      {refused}")
        ]
    );
    assert_eq!(place.names("out"), Vec::<String>::new());
}

/// A server script that starts a daemon (`sleep MARK`, in a session of
/// its own), waits until it runs, then serves ignoring the end of its
/// input and SIGTERM (issue 42 item 1).
const STUBBORN: &str = "#!/bin/sh\nsetsid sleep \"$1\" > /dev/null 2>&1 &\nd=$!\nuntil [ \"$(tr '\\0' ' ' < /proc/$d/cmdline 2> /dev/null)\" = \"sleep $1 \" ]; do :; done\nexec \"$2\" ignore-sigterm\n";

fn stubborn_script(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let script = dir.join("stubborn.sh");
    std::fs::write(&script, STUBBORN).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

#[test]
fn a_stubborn_servers_setsid_child_is_gone_after_its_scenario_shared_or_not() {
    let place = Place::new();
    stubborn_script(&place.path("suite"));
    for (name, mark, share) in [
        ("own", "4101.25", ""),
        ("shared", "4102.25", "    share: run\n"),
    ] {
        place.scenario(
            &format!("{name}.yaml"),
            &format!(
                "name: {name}\nservers:\n  fx:\n    command: [\"${{dir}}/stubborn.sh\", \
                 \"{mark}\", \"{fixture}\"]\n{share}tools: [fx]\nmodel:\n  - call: echo\n    \
                 args: {{text: hi}}\n    expect:\n      equals: hi\n",
                fixture = mcp_fixture()
            ),
        );
    }
    let (out, report) = place.run(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        statuses(&report),
        [
            ("own".to_owned(), "passed".to_owned()),
            ("shared".to_owned(), "passed".to_owned())
        ]
    );
    assert_eq!(
        ["4101.25", "4102.25"]
            .iter()
            .flat_map(|m| sleeping(m))
            .collect::<Vec<_>>(),
        Vec::<i32>::new()
    );
}

#[test]
fn a_stubborn_servers_setsid_child_is_gone_after_tools_and_init() {
    let place = Place::new();
    let script = stubborn_script(&place.base);
    let script = script.to_str().unwrap();
    let runs: [(&str, Vec<&str>, &str); 3] = [
        ("4201.25", vec!["tools", "--mcp"], "echo"),
        ("4202.25", vec!["tools", "--check", "--mcp"], "echo"),
        ("4203.25", vec!["init", "made", "--mcp"], "wrote a suite"),
    ];
    for (mark, args, said) in &runs {
        let out = place
            .harness(args)
            .args([script, mark, &mcp_fixture()])
            .current_dir(place.path("out"))
            .output()
            .unwrap();
        // The listing worked (a finding of --check may exit 1), and the
        // daemon the server started is gone with it.
        assert!(
            matches!(out.status.code(), Some(0 | 1)) && text(&out).contains(said),
            "{args:?}: {}",
            text(&out)
        );
        assert_eq!(sleeping(mark), Vec::<i32>::new(), "{args:?}");
    }
}

#[test]
fn a_stubborn_servers_setsid_child_is_gone_after_record() {
    let place = Place::new();
    let script = stubborn_script(&place.base);
    let mark = "4301.25";
    let mut child = place
        .harness(&["record", "-o"])
        .arg(place.path("out"))
        .args(["--", script.to_str().unwrap(), mark, &mcp_fixture()])
        .current_dir(place.path("home"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    writeln!(
        input,
        "{}",
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}})
    )
    .unwrap();
    // The server answered: its daemon runs.
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("\"id\":1"), "{line}");
    assert_eq!(find_daemons(&[mark]).len(), 1);
    drop(input);
    let deadline = std::time::Instant::now() + LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(std::time::Instant::now() < deadline, "record did not end");
        std::thread::yield_now();
    };
    assert_eq!(status.code(), Some(0));
    assert_eq!(sleeping(mark), Vec::<i32>::new());
}

#[test]
fn a_replayed_sessions_recorded_bash_cannot_write_outside() {
    let place = Place::new();
    for (name, key) in [("replayed", ""), ("replayed off", "sandbox: off\n")] {
        let file = name.replace(' ', "_");
        place.scenario(
            &format!("{file}.yaml"),
            &format!(
                "name: {name}\n{key}replay:\n  cwd: /home/dev/proj\n  source: s.jsonl\nmodel:\n- \
                 call: bash\n  id: c1\n  args:\n    command: touch @OUT@/{file}.txt && echo \
                 done\n  recorded:\n    is_error: false\n    text: |\n      done\n"
            ),
        );
    }
    let (out, report) = place.run(&[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    // The recorded command ran only where the sandbox was off.
    assert_eq!(
        (statuses(&report), place.names("out")),
        (
            vec![
                ("replayed".to_owned(), "failed".to_owned()),
                ("replayed off".to_owned(), "passed".to_owned())
            ],
            vec!["replayed_off.txt".to_owned()]
        )
    );
}

#[test]
fn hostile_write_paths_are_located_load_errors() {
    let place = Place::new();
    std::os::unix::fs::symlink(place.path("home"), place.path("suite").join("link")).unwrap();
    place.scenario(
        "hostile.yaml",
        "name: hostile\nsandbox:\n  write:\n    - relative/dir\n    - /tmp/../etc\n    - \
         ${dir}/link\n    - ${dir}/missing\nmodel:\n  - say: hi\n",
    );
    let (out, _) = place.run(&[]);
    let suite = place.path("suite");
    let file = suite.join("hostile.yaml");
    let (f, s) = (file.display(), suite.display());
    let home = place.path("home");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("error: "))
        .collect();
    assert_eq!(
        (out.status.code(), errors),
        (
            Some(2),
            vec![
                format!(
                    "error: {f}:4:7: sandbox.write[0]: `relative/dir` is not an absolute path; \
                     write one from `/` (or `${{dir}}/…` for a path beside this file)"
                )
                .as_str(),
                format!(
                    "error: {f}:5:7: sandbox.write[1]: `/tmp/../etc` holds `..`; write the \
                     directory it means without `..`"
                )
                .as_str(),
                format!(
                    "error: {f}:6:7: sandbox.write[2]: `{s}/link` leads through a symlink to \
                     `{}`; name the real path (the sandbox lets programs write exactly where \
                     this says)",
                    home.display()
                )
                .as_str(),
                format!(
                    "error: {f}:7:7: sandbox.write[3]: `{s}/missing` does not exist; create it \
                     before the run, or leave it out"
                )
                .as_str(),
            ]
        )
    );
}
