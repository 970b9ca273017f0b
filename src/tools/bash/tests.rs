//! The bash tool's tests: helpers and the spec here, the rest by topic.

use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::tools::ToolCall;
use crate::tools::ToolResult;
use crate::tools::Workspace;
use crate::tools::ops::LocalFs;
use crate::tools::ops::LocalProcess;
use crate::tools::ops::ProcessOps;
use crate::tools::registry::Registry;
use crate::tools::testutil::Harness;
use crate::tools::testutil::disk;
use crate::tools::testutil::recording_sink;

mod cancel;
mod config;
mod notices;
mod results;
mod sandbox;
mod timeout;
mod updates;

// ---------------------------------------------------------------- helpers

async fn bash(h: &Harness, command: &str) -> ToolResult {
    h.call("bash", json!({ "command": command })).await
}

fn details(result: &ToolResult) -> &Value {
    result.details.as_ref().expect("details")
}

/// The full-output file of a result; the file is removed when the guard
/// goes, so tests leave nothing in the temp dir.
struct FullOutput(PathBuf);

impl FullOutput {
    fn of(result: &ToolResult) -> Self {
        let path = details(result)["full_output_path"]
            .as_str()
            .expect("full_output_path");
        Self(PathBuf::from(path))
    }

    fn bytes(&self) -> Vec<u8> {
        disk::read(&self.0)
    }

    fn display(&self) -> String {
        self.0.display().to_string()
    }
}

impl Drop for FullOutput {
    fn drop(&mut self) {
        disk::remove_file(&self.0);
    }
}

/// State and process group of a process, from `/proc/<pid>/stat`.
fn proc_stat(pid: i32) -> Option<(u8, i32)> {
    let text = disk::try_read_string(format!("/proc/{pid}/stat"))?;
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.as_bytes()[0];
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, pgrp))
}

/// Dead: gone, or a zombie waiting for its parent.
fn is_dead(pid: i32) -> bool {
    proc_stat(pid).is_none_or(|(state, _)| matches!(state, b'Z' | b'X'))
}

/// Running processes whose process group is `pgid`.
fn running_in_group(pgid: i32) -> Vec<i32> {
    disk::names("/proc")
        .into_iter()
        .filter_map(|name| name.parse::<i32>().ok())
        .filter(|&pid| {
            proc_stat(pid)
                .is_some_and(|(state, pgrp)| pgrp == pgid && !matches!(state, b'Z' | b'X'))
        })
        .collect()
}

/// Waits for a process to exit on a pidfd (a kernel notification, not a
/// clock); `false` if it is still alive after `bound`.
fn wait_for_exit(pid: i32, bound: Duration) -> bool {
    // SAFETY: plain syscalls on integers and a local pollfd.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as i32;
    if fd < 0 {
        return true; // already gone
    }
    let deadline = std::time::Instant::now() + bound;
    let exited = loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let mut pollfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut pollfd, 1, left.as_millis() as i32) };
        // A signal (SIGCHLD for the runtime) interrupts poll: poll again.
        if ready < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        break ready == 1;
    };
    // SAFETY: closing the fd opened above.
    unsafe { libc::close(fd) };
    exited
}

fn read_pid(dir: &Path, name: &str) -> i32 {
    disk::read_string(dir.join(name)).trim().parse().unwrap()
}

fn text_of(update: &ToolUpdate) -> String {
    match update.content.as_slice() {
        [] => String::new(),
        [Content::Text { text }] => text.clone(),
        other => panic!("unexpected update content {other:?}"),
    }
}

/// Lines `from..=to` as `seq` prints them, without the final newline.
fn seq(from: usize, to: usize) -> String {
    (from..=to)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

// ---------------------------------------------------------------- spec

#[test]
fn spec_is_sequential_and_its_numbers_are_the_runtimes() {
    let spec = BashTool.spec(&Limits::default());
    assert_eq!(spec.name, "bash");
    assert_eq!(spec.execution_mode, ExecutionMode::Sequential);
    assert!(
        spec.description
            .contains("last 2000 lines or 50.0KB, whichever is hit first"),
        "{}",
        spec.description
    );
    assert!(spec.description.contains("there is no timeout by default"));
    assert_eq!(
        spec.parameters["properties"]["timeout"]["description"],
        "Timeout in seconds, more than 0 and at most 2147483.647 (optional; there is no timeout \
         by default)"
    );
    let custom = BashTool.spec(&Limits {
        max_lines: 10,
        max_bytes: 2048,
        bash_timeout: Some(30.0),
        ..Limits::default()
    });
    assert!(custom.description.contains("last 10 lines or 2.0KB"));
    assert!(custom.description.contains("the default is 30 seconds"));
}

#[test]
fn a_batch_with_bash_runs_sequentially() {
    let h = Harness::local();
    assert_eq!(h.registry.execution_mode("bash"), ExecutionMode::Sequential);
    let call = h.prepare("bash", json!({"command": "true"}));
    assert_eq!(call.execution_mode(), ExecutionMode::Sequential);
}
