//! `harness` where users and models can hurt it: a controlling terminal,
//! signals, endless input, bad flags. Each test runs the real binary.

use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::process::Output;
use std::process::Stdio;

use insta::assert_snapshot;
use serde_json::Value;
use serde_json::json;

use super::test_helpers::printed;
use super::test_helpers::redacting;

fn harness() -> Command {
    Command::new(env!("CARGO_BIN_EXE_harness"))
}

/// The one JSON line `harness call` printed.
fn result_of(out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A new pseudo-terminal: its controller, and the path of its terminal.
fn pty() -> (std::os::fd::OwnedFd, std::path::PathBuf) {
    use rustix::pty::OpenptFlags;
    let controller =
        rustix::pty::openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)
            .unwrap();
    rustix::pty::grantpt(&controller).unwrap();
    rustix::pty::unlockpt(&controller).unwrap();
    let name = rustix::pty::ptsname(&controller, Vec::new()).unwrap();
    let path = std::path::PathBuf::from(<std::ffi::OsString as OsStringExt>::from_vec(
        name.into_bytes(),
    ));
    (controller, path)
}

/// `harness call` with `tty` as stdin and controlling terminal, as when a
/// person runs it in a terminal (harness is the foreground process group).
fn call_on_terminal(tty: &Path, dir: &Path, tool: &str, args: &Value) -> Output {
    let terminal = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(tty)
        .unwrap();
    let mut command = harness();
    command
        .args(["call", tool, &args.to_string(), "--cwd"])
        .arg(dir)
        .stdin(Stdio::from(terminal))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: between fork and exec the closure makes two system calls on
    // an integer descriptor; it allocates nothing.
    unsafe {
        command.pre_exec(|| {
            rustix::process::setsid()?;
            rustix::process::ioctl_tiocsctty(BorrowedFd::borrow_raw(0))?;
            Ok(())
        });
    }
    command.output().unwrap()
}

#[test]
fn a_command_that_reads_the_terminal_fails_at_once_instead_of_stopping() {
    let (_controller, tty) = pty();
    let dir = tempfile::tempdir().unwrap();
    // With the terminal as the command's controlling terminal, `cat` would
    // be stopped by SIGTTIN until the timeout; without one it fails.
    let out = call_on_terminal(
        &tty,
        dir.path(),
        "bash",
        &json!({"command": "cat /dev/tty; tty", "timeout": 10}),
    );
    assert_eq!(
        result_of(&out),
        json!({
            "is_error": true,
            "content": [{"type": "text", "text": "cat: /dev/tty: No such device or address\nnot a tty\n\n\nCommand exited with code 1\n\n[Sandboxed: commands may write only in the workspace and $TMPDIR; a write anywhere else fails with \"Permission denied\".]"}],
            "details": {"exit_code": 1, "cleaned": false}
        })
    );
}

#[test]
fn tools_blames_the_unknown_name_and_refuses_presets_among_names() {
    let _guard = redacting(&[]).bind_to_scope();
    let mut all = String::new();
    for spec in [
        "readonly,bogus",
        "readonly,grep",
        "coding,all,x,y",
        "read,bogus",
    ] {
        for command in ["tools", "call"] {
            let mut cmd = harness();
            cmd.args([command, "--tools", spec]);
            if command == "call" {
                cmd.args(["read", "{}"]);
            }
            let out = cmd.output().unwrap();
            assert_eq!(out.status.code(), Some(2), "{command} --tools {spec}");
            all.push_str(&format!(
                "$ harness {command} --tools {spec}\n{}",
                printed(&out)
            ));
        }
    }
    assert_snapshot!("tools_with_presets_mixed_with_names", all);
}

/// Runs `command` to its end, or kills it and fails after `bound`.
fn output_within(mut command: Command, bound: std::time::Duration) -> Output {
    let child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = rustix::process::Pid::from_child(&child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(bound) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            panic!("{command:?} did not end within {bound:?}");
        }
    }
}

#[test]
fn endless_and_special_inputs_end_in_a_clear_error() {
    let _guard = redacting(&[]).bind_to_scope();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    let bound = std::time::Duration::from_secs(120);
    let mut all = String::new();
    let cases: [(&str, &[&str], Option<&str>); 5] = [
        ("harness tokens /dev/zero", &["tokens", "/dev/zero"], None),
        ("harness tokens FIFO", &["tokens", "FIFO"], None),
        ("harness tokens /", &["tokens", "/"], None),
        ("harness tokens < /dev/zero", &["tokens"], Some("/dev/zero")),
        (
            "harness call read < /dev/zero",
            &["call", "read"],
            Some("/dev/zero"),
        ),
    ];
    for (title, args, stdin) in cases {
        let mut command = harness();
        for arg in args {
            if *arg == "FIFO" {
                command.arg(&fifo);
            } else {
                command.arg(arg);
            }
        }
        let stdin = match stdin {
            Some(path) => Stdio::from(std::fs::File::open(path).unwrap()),
            None => Stdio::null(),
        };
        command.stdin(stdin);
        let out = output_within(command, bound);
        assert_eq!(out.status.code(), Some(2), "{title}");
        let text = printed(&out).replace(&fifo.display().to_string(), "FIFO");
        all.push_str(&format!("$ {title}\n{text}"));
    }
    assert_snapshot!("endless_and_special_inputs", all);
}

/// Whether a process is gone or a zombie (dead, waiting to be reaped).
fn is_dead(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return true;
    };
    let state = stat[stat.rfind(')').unwrap() + 1..].trim_start().as_bytes()[0];
    matches!(state, b'Z' | b'X')
}

#[test]
fn call_killed_by_sigterm_or_sighup_kills_its_command_group_and_exits() {
    for signal in [rustix::process::Signal::TERM, rustix::process::Signal::HUP] {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pids");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        let mut command = harness();
        // Without the sandbox: the test follows the command by the pids
        // it prints, which a sandbox's PID namespace would number its own
        // way (tests/integration/sandbox.rs covers the sandbox).
        command
            .args([
                "call",
                "bash",
                r#"{"command": "sleep 1000 & echo $$ $! > pids; sleep 1000"}"#,
                "--no-sandbox",
                "--cwd",
            ])
            .arg(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = command.spawn().unwrap();
        let harness_pid = rustix::process::Pid::from_child(&child);
        // The command writes its pids once both sleeps are started; reading
        // the FIFO waits for that, with a bound.
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = fifo.clone();
        std::thread::spawn(move || {
            let _ = tx.send(std::fs::read_to_string(reader));
        });
        let pids = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the command started")
            .unwrap();
        let pids: Vec<i32> = pids
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect();
        rustix::process::kill_process(harness_pid, signal).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        let out = rx.recv_timeout(std::time::Duration::from_secs(60));
        let survivors: Vec<i32> = pids.iter().copied().filter(|&p| !is_dead(p)).collect();
        // Leave nothing behind, whatever happened.
        let _ = rustix::process::kill_process_group(
            rustix::process::Pid::from_raw(pids[0]).unwrap(),
            rustix::process::Signal::KILL,
        );
        let out = out.expect("harness ended").unwrap();
        assert_eq!(survivors, Vec::<i32>::new(), "{signal:?}");
        assert_eq!(
            result_of(&out),
            json!({
                "is_error": true,
                "content": [{"type": "text", "text": "Command aborted"}],
                "details": {"cancelled": true, "cleaned": false}
            }),
            "{signal:?}"
        );
    }
}
