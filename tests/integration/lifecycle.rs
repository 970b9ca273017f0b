//! A run that always cleans up and never crashes on its surroundings:
//! SIGTERM and SIGHUP stop a run like Ctrl-C (reports written, workspaces
//! removed, no command left running, exit 1); a closed stdout is a quiet
//! end for every command; a FIFO or socket named `*.yaml` is a located
//! load error, not a hang; numbers on the command line are checked where
//! they enter.

use std::ffi::CString;
use std::io::Read as _;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use insta::assert_snapshot;
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::cli_support::bash_scenario;
use super::cli_support::harness;
use super::cli_support::output_within;
use super::cli_support::texts;
use super::cli_support::write_files;
use super::test_helpers::printed;
use super::test_helpers::redacting;

const LIMIT: Duration = Duration::from_secs(120);

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

/// The state letter of a process (`R`, `S`, `Z`…), or `None` when it is
/// gone, and its process group.
fn process(pid: i32) -> Option<(char, i32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 2..];
    let mut fields = rest.split(' ');
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, pgrp))
}

/// Every live (not zombie) process of group `pgid`.
fn live_members(pgid: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| matches!(process(pid), Some((state, group)) if group == pgid && state != 'Z' && state != 'X'))
        .collect()
}

/// Reads `count` lines from the FIFO `ready`, written by the scenarios as
/// they start; a watchdog unblocks the read after [`LIMIT`] so that a run
/// that never starts fails the test instead of hanging it.
fn wait_for_lines(ready: &Path, count: usize) -> Vec<String> {
    let watchdog = ready.to_path_buf();
    let (done, finished) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if finished.recv_timeout(LIMIT).is_err() {
            let _ = std::fs::write(&watchdog, "timeout\n");
        }
    });
    let mut lines = Vec::new();
    while lines.len() < count {
        let mut text = String::new();
        std::fs::File::open(ready)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        lines.extend(text.lines().map(str::to_owned));
        assert!(
            !lines.iter().any(|l| l == "timeout"),
            "the run never started"
        );
    }
    let _ = done.send(());
    lines
}

#[test]
fn sigterm_and_sighup_stop_the_run_clean_up_and_write_the_reports() {
    for (signal, name) in [(libc::SIGTERM, "SIGTERM"), (libc::SIGHUP, "SIGHUP")] {
        let suite = tempfile::tempdir().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let ready = suite.path().join("ready");
        mkfifo(&ready);
        // Each command starts a background sleep in its group and one in
        // a session of its own (out of the group), says so (its group and
        // the two sleeps' pids) and waits for them.
        let command = "sleep 1000 & a=$!; setsid sleep 1000 & b=$!; \
                       echo \"$$ $a $b\" > \"$HARNESS_TEST_READY\"; wait";
        let files: Vec<(String, String)> = (1..=4)
            .map(|n| {
                (
                    format!("s{n}.yaml"),
                    // Without the sandbox: the command writes to a FIFO
                    // outside its workspace, and its pids are the
                    // machine's (the sandbox's own end is in sandbox_run.rs).
                    format!(
                        "sandbox: off\n{}",
                        bash_scenario(&format!("sleeper {n}"), command)
                    ),
                )
            })
            .collect();
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        write_files(suite.path(), &files);
        let mut cmd = harness(suite.path(), tmp.path(), state.path());
        cmd.args([
            "run",
            ".",
            "--jobs",
            "2",
            "--tokenizer",
            "chars4",
            "--report",
            "rep",
        ])
        .env("HARNESS_TEST_READY", &ready)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let child = cmd.spawn().unwrap();
        let started = wait_for_lines(&ready, 2);
        // SAFETY: signalling our own child process.
        unsafe { libc::kill(child.id() as i32, signal) };
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        let out = rx
            .recv_timeout(LIMIT)
            .expect("harness did not end after the signal")
            .unwrap();
        let (stdout, stderr) = texts(&out);
        assert_eq!(out.status.code(), Some(1), "{name}: {stdout}\n{stderr}");
        assert_eq!(
            stderr,
            format!("{name} received: stopping the running scenarios and starting no more\n")
        );
        // The reports of what finished are written.
        let report: Value = serde_json::from_str(
            &std::fs::read_to_string(suite.path().join("rep/run.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(report["interrupted"], true, "{name}");
        let outcomes: Vec<(String, String, String)> = report["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["name"].as_str().unwrap().to_owned(),
                    s["status"].as_str().unwrap().to_owned(),
                    s["skip_reason"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect();
        let expected: Vec<(String, String, String)> = [
            ("sleeper 1", "failed", ""),
            ("sleeper 2", "failed", ""),
            ("sleeper 3", "skipped", "the run was interrupted"),
            ("sleeper 4", "skipped", "the run was interrupted"),
        ]
        .iter()
        .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
        .collect();
        assert_eq!(outcomes, expected, "{name}");
        // No workspace (nor anything else) is left in the temp dir.
        let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert!(left.is_empty(), "{name}: left behind: {left:?}");
        // No process of the commands is alive: neither the shells, nor
        // their background sleeps (in the group or out of it), nor
        // anything else in their groups.
        assert_eq!(started.len(), 2, "{started:?}");
        for line in &started {
            let pids: Vec<i32> = line.split(' ').map(|p| p.parse().unwrap()).collect();
            assert_eq!(pids.len(), 3, "{line}");
            let group = pids[0];
            assert_eq!(
                live_members(group),
                Vec::<i32>::new(),
                "{name}: group {group}"
            );
            for &pid in &pids {
                let state = process(pid).map(|(s, _)| s);
                assert!(
                    matches!(state, None | Some('Z' | 'X')),
                    "{name}: process {pid} is still running ({state:?})"
                );
            }
        }
    }
}

/// `harness ARGS` with a stdout whose reader is already gone.
fn with_closed_stdout(
    dir: &Path,
    tmp: &Path,
    args: &[&str],
    stdin: Option<&Path>,
) -> std::process::Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut cmd = harness(dir, tmp, tmp);
    cmd.args(args).stdout(writer).stderr(Stdio::piped());
    if let Some(file) = stdin {
        cmd.stdin(std::fs::File::open(file).unwrap());
    }
    output_within(cmd, LIMIT)
}

#[test]
fn a_closed_stdout_is_a_quiet_end_for_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let passing = bash_scenario("echoes", "echo hello");
    let long: String = (0..300).map(|n| format!("{n}\n")).collect();
    write_files(dir.path(), &[("s/a.yaml", &passing), ("long.txt", &long)]);
    let cases: [(&[&str], Option<&str>, i32); 10] = [
        (&["schema"], None, 0),
        (&["schema", "--suite"], None, 0),
        (&["tools"], None, 0),
        (&["tools", "--json"], None, 0),
        (&["list", "s"], None, 0),
        (&["check", "s"], None, 0),
        (
            &["call", "read", r#"{"path": "long.txt"}"#, "--cwd", "."],
            None,
            0,
        ),
        (&["tokens"], Some("long.txt"), 0),
        (&["completions", "bash"], None, 0),
        (
            &["run", "s", "--report", "rep", "--tokenizer", "chars4"],
            None,
            0,
        ),
    ];
    for (args, stdin, code) in cases {
        let stdin = stdin.map(|f| dir.path().join(f));
        let out = with_closed_stdout(dir.path(), tmp.path(), args, stdin.as_deref());
        let (_, stderr) = texts(&out);
        assert_eq!(
            (out.status.code(), stderr.as_str()),
            (Some(code), ""),
            "{args:?}"
        );
    }
    // The run wrote every report although nobody read its output, and
    // merging them (again to a closed stdout) works too.
    for file in [
        "run.json",
        "junit.xml",
        "scenarios.csv",
        "calls.csv",
        "summary.md",
    ] {
        assert!(dir.path().join("rep").join(file).is_file(), "{file}");
    }
    let out = with_closed_stdout(
        dir.path(),
        tmp.path(),
        &["report", "merge", "rep/run.json", "--report", "merged"],
        None,
    );
    assert_eq!((out.status.code(), texts(&out).1.as_str()), (Some(0), ""));
    assert!(dir.path().join("merged/run.json").is_file());
}

#[test]
fn fifos_and_sockets_named_yaml_are_located_errors_and_the_rest_runs() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[("s/a.yaml", &bash_scenario("echoes", "echo hello"))],
    );
    mkfifo(&dir.path().join("s/fifo.yaml"));
    let _socket = std::os::unix::net::UnixListener::bind(dir.path().join("s/socket.yaml")).unwrap();
    mkfifo(&dir.path().join("named.yaml"));
    let _guard = redacting(&[tmp.path(), dir.path()]).bind_to_scope();
    let mut cmd = harness(dir.path(), tmp.path(), tmp.path());
    cmd.args(["run", "s", "named.yaml", "--tokenizer", "chars4"]);
    let out = output_within(cmd, LIMIT);
    assert_eq!(out.status.code(), Some(2), "{}", printed(&out));
    assert_snapshot!("run_fifo_and_socket", printed(&out));
    let mut cmd = harness(dir.path(), tmp.path(), tmp.path());
    cmd.args(["check", "s"]);
    let out = output_within(cmd, LIMIT);
    assert_eq!(out.status.code(), Some(2), "{}", printed(&out));
    assert_snapshot!("check_fifo_and_socket", printed(&out));
}

/// A `harness.yaml` that is a FIFO, a device or a dangling link is a
/// problem of its suite, not a file to pass by (its gates and limits would
/// be dropped without a word, or a parent's suite file used instead).
#[test]
fn a_suite_file_that_is_not_a_regular_file_is_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            ("harness.yaml", "timeout: 5\n"),
            ("fifo/a.yaml", &bash_scenario("in the fifo suite", "echo a")),
            (
                "dev/a.yaml",
                &bash_scenario("in the device suite", "echo b"),
            ),
            (
                "gone/a.yaml",
                &bash_scenario("in the dangling suite", "echo c"),
            ),
            (
                "ok/a.yaml",
                &bash_scenario("in no suite of its own", "echo d"),
            ),
        ],
    );
    mkfifo(&dir.path().join("fifo/harness.yaml"));
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("dev/harness.yaml")).unwrap();
    std::os::unix::fs::symlink("nowhere.yaml", dir.path().join("gone/harness.yaml")).unwrap();
    let _guard = redacting(&[tmp.path(), dir.path()]).bind_to_scope();
    let mut cmd = harness(dir.path(), tmp.path(), tmp.path());
    cmd.args(["check", "."]);
    let out = output_within(cmd, LIMIT);
    assert_eq!(out.status.code(), Some(2), "{}", printed(&out));
    assert_snapshot!("check_suite_file_not_regular", printed(&out));
}

#[test]
fn numbers_on_the_command_line_are_checked_where_they_enter() {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[("s/a.yaml", &bash_scenario("echoes", "echo hello"))],
    );
    let cases: [&[&str]; 11] = [
        &["--jobs", "0"],
        &["--jobs", "1025"],
        &["--jobs", "18446744073709551616"],
        &["--jobs=-1"],
        &["--timeout", "1e308"],
        &["--timeout", "0"],
        &["--timeout=-1"],
        &["--timeout", "NaN"],
        &["--timeout", "inf"],
        &["--timeout", "86401"],
        &["--timeout", "soon"],
    ];
    let mut shown = String::new();
    for flags in cases {
        let mut cmd = harness(dir.path(), dir.path(), dir.path());
        cmd.args(["run", "s"]).args(flags);
        let out = output_within(cmd, LIMIT);
        let (stdout, stderr) = texts(&out);
        assert_eq!(
            (out.status.code(), stdout.as_str()),
            (Some(2), ""),
            "{flags:?}"
        );
        shown.push_str(&format!("$ harness run s {}\n{stderr}", flags.join(" ")));
    }
    assert_snapshot!("run_bad_numbers", shown);
    // The edges of the ranges are accepted.
    let mut cmd = harness(dir.path(), dir.path(), dir.path());
    cmd.args([
        "run",
        "s",
        "--jobs",
        "1024",
        "--timeout",
        "86400",
        "--tokenizer",
        "chars4",
    ]);
    let out = output_within(cmd, LIMIT);
    assert_eq!(out.status.code(), Some(0), "{}", printed(&out));
}
