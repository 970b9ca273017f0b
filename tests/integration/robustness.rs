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
            "content": [{"type": "text", "text": "cat: /dev/tty: No such device or address\nnot a tty\n\nCommand exited with code 1"}],
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
