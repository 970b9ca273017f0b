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

// ---------------------------------------------------------------- results

#[tokio::test]
async fn output_is_returned_with_exit_code_details() {
    let h = Harness::local();
    let r = bash(&h, "echo hello").await;
    assert!(!r.is_error);
    assert_eq!(r.text(), "hello\n");
    assert_eq!(r.details, Some(json!({"exit_code": 0, "cleaned": false})));
}

#[tokio::test]
async fn no_output_says_so() {
    let h = Harness::local();
    let r = bash(&h, "true").await;
    assert!(!r.is_error);
    assert_eq!(r.text(), "(no output)");
}

#[tokio::test]
async fn non_zero_exit_is_an_error_that_keeps_its_details() {
    let h = Harness::local();
    let r = bash(&h, "echo out; echo err >&2; exit 3").await;
    assert!(r.is_error);
    assert_eq!(r.text(), "out\nerr\n\n\nCommand exited with code 3");
    assert_eq!(r.details, Some(json!({"exit_code": 3, "cleaned": false})));

    let r = bash(&h, "exit 7").await;
    assert_eq!(r.text(), "(no output)\n\nCommand exited with code 7");

    // D14: a truncated failing command keeps truncation and the file.
    let r = bash(&h, "seq 3000; exit 2").await;
    let file = FullOutput::of(&r);
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        format!(
            "{}\n\n[Showing lines 1001-3000 of 3000. Full output: {}]\n\nCommand exited with \
             code 2",
            seq(1001, 3000),
            file.display()
        )
    );
    let d = details(&r);
    assert_eq!(d["exit_code"], 2);
    assert_eq!(d["truncation"]["total_lines"], 3000);
    assert_eq!(d["cleaned"], false);
}

#[tokio::test]
async fn a_command_killed_by_a_signal_says_which() {
    let h = Harness::local();
    let r = bash(&h, "echo before; kill -9 $$").await;
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        "before\n\n\nCommand was killed by signal 9 (SIGKILL)"
    );
    assert_eq!(r.details, Some(json!({"signal": 9, "cleaned": false})));
}

#[tokio::test]
async fn seq_3000_shows_the_last_2000_lines_and_saves_the_rest() {
    let h = Harness::local();
    let r = bash(&h, "seq 3000").await;
    let file = FullOutput::of(&r);
    assert!(!r.is_error);
    assert_eq!(
        r.text(),
        format!(
            "{}\n\n[Showing lines 1001-3000 of 3000. Full output: {}]",
            seq(1001, 3000),
            file.display()
        )
    );
    let all = format!("{}\n", seq(1, 3000));
    assert_eq!(
        details(&r)["truncation"],
        json!({
            "truncated": true,
            "truncated_by": "lines",
            "total_lines": 3000,
            "total_bytes": all.len(),
            "output_lines": 2000,
            "output_bytes": seq(1001, 3000).len(),
            "last_line_partial": false,
            "first_line_exceeds_limit": false,
            "max_lines": 2000,
            "max_bytes": 51200
        })
    );
    // D18: private, in the temp dir, findable by name, every raw byte.
    assert_eq!(file.bytes(), all.as_bytes());
    assert_eq!(disk::metadata(&file.0).mode & 0o777, 0o600);
    assert_eq!(file.0.parent().unwrap(), std::env::temp_dir());
    let name = file.0.file_name().unwrap().to_str().unwrap();
    let hex = name
        .strip_prefix("harness-bash-")
        .and_then(|n| n.strip_suffix(".log"))
        .unwrap();
    assert_eq!(hex.len(), 16);
    assert!(
        hex.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
}

#[tokio::test]
async fn an_endless_command_leaves_a_log_no_larger_than_the_cap_and_says_so() {
    let h = Harness::local_with(Limits {
        max_log_bytes: 1024 * 1024,
        ..Limits::default()
    });
    let r = h
        .call("bash", json!({"command": "yes", "timeout": 1}))
        .await;
    let file = FullOutput::of(&r);
    assert_eq!(file.bytes(), "y\n".repeat(512 * 1024).as_bytes());
    assert_eq!(details(&r)["full_output_truncated"], json!(true));
    let total = details(&r)["truncation"]["total_lines"].as_u64().unwrap();
    assert!(total > 512 * 1024, "yes wrote only {total} lines");
    let text = r.text();
    let notice = text.lines().nth(2001).unwrap();
    assert_eq!(
        notice,
        format!(
            "[Showing lines {}-{total} of {total}. Full output (only its first 1.0MB, the log \
             limit): {}]",
            total - 1999,
            file.display()
        )
    );
}

#[tokio::test]
async fn a_log_cap_of_zero_saves_nothing_and_says_so() {
    let h = Harness::local_with(Limits {
        max_log_bytes: 0,
        ..Limits::default()
    });
    let r = bash(&h, "seq 3000").await;
    assert_eq!(
        r.text(),
        format!(
            "{}\n\n[Showing lines 1001-3000 of 3000. The full output was not saved (the log limit \
             is 0)]",
            seq(1001, 3000)
        )
    );
    assert_eq!(details(&r)["full_output_truncated"], json!(true));
    assert_eq!(details(&r).get("full_output_path"), None);
}

#[tokio::test]
async fn a_final_newline_is_not_an_extra_line() {
    let h = Harness::local();
    let r = bash(&h, "seq -f 'line-%04g' 4000").await;
    let file = FullOutput::of(&r);
    let shown: Vec<String> = (2001..=4000).map(|i| format!("line-{i:04}")).collect();
    assert_eq!(
        r.text(),
        format!(
            "{}\n\n[Showing lines 2001-4000 of 4000. Full output: {}]",
            shown.join("\n"),
            file.display()
        )
    );
    assert_eq!(details(&r)["truncation"]["total_lines"], 4000);
}

#[tokio::test]
async fn output_cut_by_bytes_names_the_limit() {
    let h = Harness::local();
    // 2000 lines of 100 bytes: under the line cap, over the byte cap.
    let r = bash(&h, "for i in $(seq 1000); do printf '%099d\\n' $i; done").await;
    let file = FullOutput::of(&r);
    let t = &details(&r)["truncation"];
    assert_eq!(t["truncated_by"], "bytes");
    // 512 lines of 100 bytes (99 + newline) fit in 51200 bytes minus one.
    assert_eq!(t["output_lines"], 512);
    let text = r.text();
    assert!(
        text.ends_with(&format!(
            "\n\n[Showing lines 489-1000 of 1000 (50.0KB limit). Full output: {}]",
            file.display()
        )),
        "{}",
        &text[text.len() - 200..]
    );
    assert!(text.starts_with(&format!("{:099}\n", 489)));
}

#[tokio::test]
async fn one_long_line_without_newline_shows_its_end() {
    let h = Harness::local();
    let r = bash(&h, "head -c 60000 /dev/zero | tr '\\0' 0").await;
    let file = FullOutput::of(&r);
    assert_eq!(
        r.text(),
        format!(
            "{}\n\n[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: {}]",
            "0".repeat(51_200),
            file.display()
        )
    );
    assert_eq!(file.bytes(), vec![b'0'; 60_000]);
}

#[tokio::test]
async fn one_long_line_with_newline_reports_its_true_size() {
    // D13: pi prints "(line is 0B)" here.
    let h = Harness::local();
    let r = bash(&h, "head -c 60000 /dev/zero | tr '\\0' 0; echo").await;
    let file = FullOutput::of(&r);
    assert_eq!(
        r.text(),
        format!(
            "{}\n\n[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: {}]",
            "0".repeat(51_200),
            file.display()
        )
    );
    let t = &details(&r)["truncation"];
    assert_eq!(t["last_line_partial"], true);
    assert_eq!(t["total_lines"], 1);
    assert_eq!(t["total_bytes"], 60_001);
}

#[tokio::test]
async fn a_line_longer_than_the_window_still_shows_its_end() {
    // D13: pi shows "(no output)" and "[Showing lines 2-1 of 1 …]" here.
    let h = Harness::local();
    let r = bash(&h, "head -c 300000 /dev/zero | tr '\\0' X; echo").await;
    let file = FullOutput::of(&r);
    assert_eq!(
        r.text(),
        format!(
            "{}\n\n[Showing last 50.0KB of line 1 (line is 293.0KB). Full output: {}]",
            "X".repeat(51_200),
            file.display()
        )
    );
    assert_eq!(file.bytes().len(), 300_001);
}

#[tokio::test]
async fn crlf_output_is_kept_as_written() {
    let h = Harness::local();
    let r = bash(&h, "printf 'a\\r\\nb\\r\\n'").await;
    assert_eq!(r.text(), "a\r\nb\r\n");
    assert_eq!(details(&r)["cleaned"], false);
}

#[tokio::test]
async fn invalid_utf8_becomes_replacement_characters_and_stays_raw_in_the_file() {
    let h = Harness::local();
    let r = bash(&h, "printf '\\377\\376A\\n'").await;
    assert_eq!(r.text(), "\u{FFFD}\u{FFFD}A\n");

    let h = Harness::local_with(Limits {
        max_lines: 1,
        ..Limits::default()
    });
    let r = bash(&h, "printf '\\377\\376A\\nB\\n'").await;
    let file = FullOutput::of(&r);
    assert_eq!(
        r.text(),
        format!(
            "B\n\n[Showing lines 2-2 of 2. Full output: {}]",
            file.display()
        )
    );
    assert_eq!(file.bytes(), b"\xff\xfeA\nB\n");
}

#[tokio::test]
async fn stdout_and_stderr_keep_their_order() {
    // D20: one pipe, so the order is the order of the writes.
    let h = Harness::local();
    let r = bash(&h, "echo a; echo b >&2; echo c").await;
    assert_eq!(r.text(), "a\nb\nc\n");
    let r = bash(
        &h,
        "for i in $(seq 300); do echo out$i; echo err$i >&2; done",
    )
    .await;
    let want: String = (1..=300).map(|i| format!("out{i}\nerr{i}\n")).collect();
    assert_eq!(r.text(), want);
}

#[tokio::test]
async fn escape_codes_and_redraws_are_cleaned_and_the_file_keeps_them() {
    // D12.
    let h = Harness::local();
    let r = bash(
        &h,
        "printf '\\033[1;31mred\\033[0m\\n10%%\\r50%%\\r100%%\\n\\033]0;title\\007done\\n'",
    )
    .await;
    assert_eq!(r.text(), "red\n100%\ndone\n");
    assert_eq!(r.details, Some(json!({"exit_code": 0, "cleaned": true})));

    let h = Harness::local_with(Limits {
        max_lines: 1,
        ..Limits::default()
    });
    let r = bash(&h, "printf '\\033[32mok\\033[0m\\n1\\r2\\n'").await;
    let file = FullOutput::of(&r);
    assert_eq!(
        r.text(),
        format!(
            "2\n\n[Showing lines 2-2 of 2. Full output: {}]",
            file.display()
        )
    );
    assert_eq!(file.bytes(), b"\x1b[32mok\x1b[0m\n1\r2\n");
    let d = details(&r);
    assert_eq!(d["cleaned"], true);
    // The facts describe the cleaned text.
    assert_eq!(d["truncation"]["total_bytes"], "ok\n2\n".len());
}

#[tokio::test]
async fn control_characters_reach_the_model_as_visible_pictures() {
    let h = Harness::local();
    let r = bash(&h, "printf 'bell\\a nul\\0 bs\\b del\\177\\ttab\\n'").await;
    assert_eq!(r.text(), "bell␇ nul␀ bs␈ del␡\ttab\n");
    assert_eq!(r.details, Some(json!({"exit_code": 0, "cleaned": true})));
}

#[tokio::test]
async fn an_unterminated_osc_string_cannot_hide_a_long_line() {
    // 10 MB without a newline after an OSC that never ends: the string
    // ends at its bound and the end of the line is shown.
    let h = Harness::local();
    let r = bash(
        &h,
        "printf '\\033]0;title'; head -c 10000000 /dev/zero | tr '\\0' x",
    )
    .await;
    let file = FullOutput::of(&r);
    let shown = 10_000_000 + "]0;title".len() - ansi::MAX_SEQUENCE_BYTES;
    assert_eq!(
        r.text(),
        format!(
            "{}\n\n[Showing last 50.0KB of line 1 (line is {}). Full output: {}]",
            "x".repeat(51_200),
            format_size(shown),
            file.display()
        )
    );
    assert_eq!(details(&r)["truncation"]["total_bytes"], json!(shown));
}

#[tokio::test]
async fn the_command_runs_in_the_workspace_root_with_stdin_closed() {
    let h = Harness::local();
    let r = bash(&h, "pwd").await;
    assert_eq!(r.text(), format!("{}\n", h.root().display()));
    // `cat` would wait forever on an open stdin.
    let r = bash(&h, "cat").await;
    assert_eq!(r.text(), "(no output)");
    let r = bash(&h, "read -r line; echo \"status=$?\"").await;
    assert_eq!(r.text(), "status=1\n");
}

#[tokio::test]
async fn each_call_is_a_fresh_shell() {
    let h = Harness::local();
    h.add_dir("sub");
    bash(&h, "cd sub; export X=1").await;
    let r = bash(&h, "pwd; echo \"x=$X\"").await;
    assert_eq!(r.text(), format!("{}\nx=\n", h.root().display()));
}

// ---------------------------------------------------------------- timeout

#[tokio::test]
async fn timeout_validation_says_what_to_send() {
    let h = Harness::local();
    for (timeout, problem) in [
        (json!(0), "0 is not a positive number of seconds"),
        (json!(-1), "-1 is not a positive number of seconds"),
        (json!(-0.5), "-0.5 is not a positive number of seconds"),
        (
            json!(3_000_000),
            "3000000 seconds is more than the maximum of 2147483.647 seconds",
        ),
    ] {
        let r = h
            .call("bash", json!({"command": "echo no", "timeout": timeout}))
            .await;
        assert!(r.is_error);
        assert_eq!(
            r.text(),
            format!(
                "Invalid timeout: {problem}. Send timeout as a number of seconds more than 0 and \
                 at most 2147483.647 (for example 60), or leave it out to run without a time \
                 limit."
            )
        );
        assert_eq!(
            details(&r)["validation_errors"][0]["path"],
            "/timeout",
            "{timeout}"
        );
    }
    let r = h
        .call("bash", json!({"command": "echo no", "timeout": "abc"}))
        .await;
    assert!(r.is_error);
    assert!(
        r.text().starts_with(
            "Validation failed for tool \"bash\":\n  - /timeout: expected a number, received \
             string \"abc\"\n"
        ),
        "{}",
        r.text()
    );
    // A numeric string is a number.
    let r = h
        .call("bash", json!({"command": "echo yes", "timeout": "5"}))
        .await;
    assert_eq!(r.text(), "yes\n");
    // The largest timeout is accepted.
    let r = h
        .call(
            "bash",
            json!({"command": "echo max", "timeout": MAX_TIMEOUT_SECS}),
        )
        .await;
    assert_eq!(r.text(), "max\n");
}

#[tokio::test]
async fn invalid_timeout_mentions_the_configured_default() {
    let h = Harness::local_with(Limits {
        bash_timeout: Some(30.0),
        ..Limits::default()
    });
    let r = h
        .call("bash", json!({"command": "true", "timeout": 0}))
        .await;
    assert!(
        r.text()
            .ends_with("or leave it out to use the default of 30 seconds."),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn timeout_kills_every_process_the_command_started() {
    let h = Harness::local();
    // A child, a grandchild in a subshell, and a child that left the group
    // with setsid; the shell waits until every pid file is written.
    let command = "sleep 1000 & echo $! > child.pid
        (sleep 1000 & echo $! > grandchild.pid; wait) &
        setsid sleep 1000 & echo $! > escaped.pid
        echo $$ > shell.pid
        while [ ! -s grandchild.pid ]; do :; done
        echo ready
        wait";
    let r = h
        .call("bash", json!({"command": command, "timeout": 1}))
        .await;
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        "ready\n\n\nCommand timed out after 1 seconds. Its process group and every process still \
         descended from it were killed. If it needs more time, call bash again with a larger \
         timeout; run a server or watcher in the background with its output redirected to a \
         file (cmd > /tmp/out.log 2>&1 &)."
    );
    assert_eq!(
        r.details,
        Some(json!({"timed_out": true, "timeout": 1.0, "cleaned": false}))
    );
    let shell = read_pid(h.root(), "shell.pid");
    for name in ["child.pid", "grandchild.pid", "escaped.pid", "shell.pid"] {
        let pid = read_pid(h.root(), name);
        assert!(
            is_dead(pid),
            "{name} ({pid}) survived: {:?}",
            proc_stat(pid)
        );
    }
    assert_eq!(running_in_group(shell), Vec::<i32>::new());
}

#[tokio::test]
async fn a_daemon_that_detached_before_the_timeout_survives_and_the_text_does_not_deny_it() {
    let h = Harness::local();
    // A double fork: the subshell exits, so its child is re-parented to
    // init in a session of its own, outside the group and the tree.
    let command = "(setsid sleep 1000 & echo $! > daemon.pid) ; while [ ! -s daemon.pid ]; do :; \
                   done; echo ready; sleep 1000";
    let r = h
        .call("bash", json!({"command": command, "timeout": 1}))
        .await;
    let daemon = read_pid(h.root(), "daemon.pid");
    let survived = !is_dead(daemon);
    // SAFETY: a plain kill of the pid the test started.
    unsafe { libc::kill(daemon, libc::SIGKILL) };
    assert!(
        survived,
        "the documented limit no longer holds: update docs/tools.md"
    );
    assert_eq!(
        r.text().lines().nth(3),
        Some(
            "Command timed out after 1 seconds. Its process group and every process still \
             descended from it were killed. If it needs more time, call bash again with a larger \
             timeout; run a server or watcher in the background with its output redirected to a \
             file (cmd > /tmp/out.log 2>&1 &)."
        )
    );
}

#[tokio::test]
async fn timeout_without_output_is_the_notice_alone_and_the_default_applies() {
    let h = Harness::local_with(Limits {
        bash_timeout: Some(0.2),
        ..Limits::default()
    });
    let r = bash(&h, "sleep 5").await;
    assert!(r.is_error);
    assert!(
        r.text()
            .starts_with("Command timed out after 0.2 seconds. Its process group"),
        "{}",
        r.text()
    );
    // A timeout given in the call wins over the default.
    let r = h
        .call(
            "bash",
            json!({"command": "sleep 0.3; echo slow", "timeout": 10}),
        )
        .await;
    assert_eq!(r.text(), "slow\n");
}

// ---------------------------------------------------------------- cancellation

/// Dispatches `command` and cancels the call once its output contains
/// `ready`.
async fn cancel_when_ready(h: &Harness, command: &str) -> (ToolResult, Vec<ToolUpdate>) {
    let token = CancellationToken::new();
    let updates = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let token = token.clone();
        let updates = Arc::clone(&updates);
        UpdateSink::new(move |update: ToolUpdate| {
            if text_of(&update).contains("ready") {
                token.cancel();
            }
            updates.lock().unwrap().push(update);
        })
    };
    let r = h
        .registry
        .dispatch(
            &ToolCall::new("c1", "bash", json!({ "command": command })),
            token,
            sink,
        )
        .await;
    let updates = updates.lock().unwrap().clone();
    (r, updates)
}

#[tokio::test]
async fn cancellation_kills_the_group_and_keeps_the_output() {
    let h = Harness::local();
    let command = "sleep 1000 & echo $! > child.pid; echo $$ > shell.pid; echo ready; wait";
    let (r, _) = cancel_when_ready(&h, command).await;
    assert!(r.is_error);
    assert_eq!(r.text(), "ready\n\n\nCommand aborted");
    assert_eq!(
        r.details,
        Some(json!({"cancelled": true, "cleaned": false}))
    );
    let shell = read_pid(h.root(), "shell.pid");
    let child = read_pid(h.root(), "child.pid");
    assert!(is_dead(child), "{:?}", proc_stat(child));
    assert!(is_dead(shell));
    assert_eq!(running_in_group(shell), Vec::<i32>::new());
}

#[tokio::test]
async fn output_still_in_the_pipe_at_the_kill_is_kept() {
    let h = Harness::local();
    let go = h.root().join("go");
    let written = h.root().join("written");
    let token = CancellationToken::new();
    let sink = {
        let token = token.clone();
        UpdateSink::new(move |update: ToolUpdate| {
            if text_of(&update) != "first\n" {
                return;
            }
            // The first chunk has been read: cancel, let the command write
            // the rest, and hold the reader until it has. The rest is then
            // in the pipe, unread, when the group is killed.
            token.cancel();
            disk::write(&go, "");
            let bound = std::time::Instant::now() + Duration::from_secs(10);
            while !written.exists() && std::time::Instant::now() < bound {
                std::thread::yield_now();
            }
        })
    };
    let command = "echo first; while [ ! -e go ]; do :; done; seq 2 5; touch written; sleep 1000";
    let r = h
        .registry
        .dispatch(
            &ToolCall::new("c1", "bash", json!({ "command": command })),
            token,
            sink,
        )
        .await;
    assert!(h.exists("written"));
    assert_eq!(r.text(), "first\n2\n3\n4\n5\n\n\nCommand aborted");
}

#[tokio::test]
async fn cancelled_before_start_runs_nothing() {
    let h = Harness::local();
    let token = CancellationToken::new();
    token.cancel();
    let ctx = ToolContext {
        call_id: "c1".to_owned(),
        workspace: h.registry.workspace().clone(),
        limits: Limits::default(),
        cancel: token,
        updates: UpdateSink::discard(),
    };
    let args = BashArgs {
        command: "touch ran".to_owned(),
        timeout: None,
    };
    let err = BashTool.execute(args, ctx).await.unwrap_err();
    assert_eq!(
        err,
        ToolError::Cancelled {
            message: "Command aborted".to_owned(),
            details: Some(json!({"cancelled": true})),
        }
    );
    assert!(!h.exists("ran"));
}

#[tokio::test]
async fn dropping_the_call_kills_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let process = LocalProcess::default();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    let request = ExecRequest {
        command: "sleep 1000 & echo $! > child.pid; echo $$ > shell.pid; echo ready; wait"
            .to_owned(),
        cwd: dir.path().to_path_buf(),
        timeout: None,
        env: Vec::new(),
    };
    let exec = process.exec(
        request,
        Box::new(move |chunk| {
            let _ = tx.send(chunk.to_vec());
        }),
        CancellationToken::new(),
    );
    let task = tokio::spawn(exec);
    let mut seen = Vec::new();
    while !seen.ends_with(b"ready\n") {
        seen.extend(rx.recv().await.unwrap());
    }
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    let shell = read_pid(dir.path(), "shell.pid");
    let child = read_pid(dir.path(), "child.pid");
    // Dropping signals without waiting; the kernel says when they are gone.
    assert!(wait_for_exit(child, Duration::from_secs(10)));
    assert!(wait_for_exit(shell, Duration::from_secs(10)));
}

// ---------------------------------------------------------------- background

#[tokio::test]
async fn a_background_child_holding_the_pipe_does_not_hang_the_call() {
    let h = Harness::local();
    let r = bash(&h, "sleep 1000 & echo $! > bg.pid; echo done").await;
    assert!(!r.is_error);
    assert_eq!(r.text(), "done\n");
    let bg = read_pid(h.root(), "bg.pid");
    assert!(
        !is_dead(bg),
        "the background child lives on until the session ends"
    );
    // Ending the session (dropping the process operations) kills it.
    let root = h.root().to_path_buf();
    drop(h);
    assert!(wait_for_exit(bg, Duration::from_secs(10)), "{root:?}");
}

#[tokio::test]
async fn output_written_after_the_shell_exits_is_still_read() {
    let h = Harness::local();
    let r = bash(&h, "(echo late) & echo early").await;
    let text = r.text();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["early", "late"]);
}

// ---------------------------------------------------------------- failures

#[tokio::test]
async fn a_missing_working_directory_is_a_clear_error() {
    let mut h = Harness::local();
    let root = h.root().to_path_buf();
    h.remove_root();
    let r = bash(&h, "echo hi").await;
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        format!(
            "Working directory does not exist: {}\nCannot execute bash commands.",
            root.display()
        )
    );
}

fn registry_with_shell(dir: &Path, shell: &Path) -> Registry {
    let workspace = Workspace::new(
        Arc::new(LocalFs),
        Arc::new(LocalProcess::with_shell(shell)),
        dir,
        true,
    )
    .unwrap();
    Registry::builder(workspace).build().unwrap()
}

#[tokio::test]
async fn a_shell_that_cannot_start_is_named_with_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let call = ToolCall::new("c1", "bash", json!({"command": "echo hi"}));

    let registry = registry_with_shell(dir.path(), Path::new("/no/such/shell"));
    let r = registry
        .dispatch(&call, CancellationToken::new(), UpdateSink::discard())
        .await;
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        "Custom shell path not found: /no/such/shell\nCould not start the command: the shell \
         configured for bash does not exist. Tell the user; commands cannot run until it is \
         fixed."
    );

    let not_executable = dir.path().join("shell.txt");
    disk::write(&not_executable, "not a program");
    let registry = registry_with_shell(dir.path(), &not_executable);
    let r = registry
        .dispatch(&call, CancellationToken::new(), UpdateSink::discard())
        .await;
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        format!(
            "Could not start the command: the shell {} could not be started: permission denied. \
             The shell or the working directory cannot be used: tell the user; commands cannot \
             run until it is fixed.",
            not_executable.display()
        )
    );
}

fn registry_with_bash(dir: &Path, config: crate::tools::BashConfig) -> Registry {
    let workspace = Workspace::local(dir).unwrap().with_bash(config);
    Registry::builder(workspace).build().unwrap()
}

async fn run_bash(registry: &Registry, command: &str) -> ToolResult {
    let call = ToolCall::new("c1", "bash", json!({ "command": command }));
    registry
        .dispatch(&call, CancellationToken::new(), UpdateSink::discard())
        .await
}

#[tokio::test]
async fn the_configured_prefix_env_and_directory_apply_to_every_command() {
    let dir = tempfile::tempdir().unwrap();
    disk::create_dir_all(dir.path().join("sub/dir"));
    let config = crate::tools::BashConfig {
        env: vec![("GREETING".to_owned(), "hello there".to_owned())],
        command_prefix: Some("echo prefixed; shopt -s expand_aliases".to_owned()),
        cwd: Some("sub/dir".to_owned()),
    };
    let registry = registry_with_bash(dir.path(), config);
    let r = run_bash(&registry, "echo \"$GREETING\"; basename \"$PWD\"").await;
    assert!(!r.is_error, "{}", r.text());
    assert_eq!(r.text(), "prefixed\nhello there\ndir\n");
}

#[tokio::test]
async fn a_configured_directory_cannot_lead_out_of_a_confined_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
    let config = crate::tools::BashConfig {
        cwd: Some("out".to_owned()),
        ..crate::tools::BashConfig::default()
    };
    let registry = registry_with_bash(dir.path(), config);
    let r = run_bash(&registry, "pwd").await;
    // The path came from the configuration: the model is not told to use
    // another path, and nothing names the machine's directories.
    assert_eq!(
        (r.is_error, r.text(), r.details),
        (
            true,
            "Cannot run the command: the working directory configured for bash, out, leads \
             outside the workspace through a symlink, and commands may only start inside it. No \
             call can change that setting: tell the user that the bash configuration must name \
             a directory inside the workspace."
                .to_owned(),
            Some(json!({ "error_class": "outside_workspace" }))
        )
    );
    let missing = crate::tools::BashConfig {
        cwd: Some("nowhere".to_owned()),
        ..crate::tools::BashConfig::default()
    };
    let r = run_bash(&registry_with_bash(dir.path(), missing), "pwd").await;
    let root = disk::canonicalize(dir.path());
    assert_eq!(
        (r.is_error, r.text()),
        (
            true,
            format!(
                "Working directory does not exist: {}\nCannot execute bash commands.",
                root.join("nowhere").display()
            )
        )
    );
}

// ---------------------------------------------------------------- updates

#[tokio::test]
async fn updates_start_empty_are_throttled_and_end_with_the_final_tail() {
    let h = Harness::local();
    let (r, updates) = h
        .call_recording(
            "bash",
            json!({"command": "for i in $(seq 5000); do echo $i; done"}),
        )
        .await;
    assert_eq!(
        updates[0],
        ToolUpdate {
            content: Vec::new(),
            details: None
        }
    );
    assert!(updates.len() >= 2);
    assert!(updates.len() < 60, "{} updates", updates.len());
    let last = updates.last().unwrap();
    let file = FullOutput::of(&r);
    assert_eq!(text_of(last), seq(3001, 5000));
    assert_eq!(
        last.details.as_ref().unwrap()["full_output_path"],
        file.display()
    );
    assert_eq!(
        last.details.as_ref().unwrap()["truncation"]["total_lines"],
        5000
    );
    // Every partial text is a tail of the final output.
    let all = format!("{}\n", seq(1, 5000));
    for update in &updates[1..] {
        let text = text_of(update);
        assert!(all.contains(text.as_str()), "not a piece of the output");
    }
}

/// A process double that writes scripted chunks, with pauses on the
/// (paused) tokio clock.
#[derive(Debug)]
struct Scripted {
    steps: Vec<Step>,
    end: ExecEnd,
}

#[derive(Clone, Debug)]
enum Step {
    Data(&'static str),
    Wait(u64),
}

impl ProcessOps for Scripted {
    fn exec(
        &self,
        _request: ExecRequest,
        mut on_data: DataSink,
        _cancel: CancellationToken,
    ) -> BoxFuture<'static, std::io::Result<ExecEnd>> {
        let steps = self.steps.clone();
        let end = self.end;
        Box::pin(async move {
            for step in steps {
                match step {
                    Step::Data(text) => on_data(text.as_bytes()),
                    Step::Wait(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
                }
            }
            Ok(end)
        })
    }
}

async fn run_scripted(steps: Vec<Step>, end: ExecEnd) -> (ToolResult, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let workspace = Workspace::new(
        Arc::new(LocalFs),
        Arc::new(Scripted { steps, end }),
        dir.path(),
        true,
    )
    .unwrap();
    let registry = Registry::builder(workspace).build().unwrap();
    let (sink, updates) = recording_sink();
    let r = registry
        .dispatch(
            &ToolCall::new("c1", "bash", json!({"command": "scripted"})),
            CancellationToken::new(),
            sink,
        )
        .await;
    let texts = updates.lock().unwrap().iter().map(text_of).collect();
    (r, texts)
}

const EXIT_0: ExecEnd = ExecEnd::Exited {
    code: Some(0),
    signal: None,
};

#[tokio::test(start_paused = true)]
async fn first_data_is_sent_at_once_and_the_rest_after_the_throttle() {
    let (r, texts) = run_scripted(
        vec![
            Step::Data("a"),
            Step::Data("b"),
            Step::Wait(250),
            Step::Data("c"),
            Step::Wait(10),
            Step::Data("d"),
        ],
        EXIT_0,
    )
    .await;
    // "a" at once; "b" by the timer at 100 ms while the command still runs;
    // "c" at once (the throttle has passed); "d" as the final update.
    assert_eq!(texts, ["", "a", "ab", "abc", "abcd"]);
    assert_eq!(r.text(), "abcd");
}

#[tokio::test(start_paused = true)]
async fn a_burst_of_chunks_gives_three_updates() {
    let mut steps = Vec::new();
    for _ in 0..5000 {
        steps.push(Step::Data("x\n"));
    }
    let (r, texts) = run_scripted(steps, EXIT_0).await;
    assert_eq!(texts.len(), 3, "{:?}", &texts[..3]);
    assert_eq!(texts[..2], ["", "x\n"]);
    assert_eq!(texts[2], "x\n".repeat(2000).trim_end());
    let _file = FullOutput::of(&r);
}

#[tokio::test(start_paused = true)]
async fn a_steady_stream_gives_one_update_per_interval() {
    let mut steps = Vec::new();
    for _ in 0..100 {
        steps.push(Step::Data("x"));
        steps.push(Step::Wait(10));
    }
    steps.pop();
    let (_, texts) = run_scripted(steps, EXIT_0).await;
    // Start, t = 0, one per 100 ms up to 900 ms, and the final one at 990.
    assert_eq!(texts.len(), 12, "{texts:?}");
    assert_eq!(texts.last().unwrap(), &"x".repeat(100));
}

#[tokio::test(start_paused = true)]
async fn nothing_new_at_the_end_means_no_final_update() {
    let (_, texts) = run_scripted(vec![Step::Data("a"), Step::Wait(500)], EXIT_0).await;
    assert_eq!(texts, ["", "a"]);
}

#[tokio::test(start_paused = true)]
async fn scripted_ends_map_to_results() {
    let (r, _) = run_scripted(vec![Step::Data("partial")], ExecEnd::Cancelled).await;
    assert_eq!(r.text(), "partial\n\nCommand aborted");
    let (r, _) = run_scripted(Vec::new(), ExecEnd::Cancelled).await;
    assert_eq!(r.text(), "Command aborted");
    let (r, _) = run_scripted(
        Vec::new(),
        ExecEnd::Exited {
            code: None,
            signal: Some(libc::SIGSEGV),
        },
    )
    .await;
    assert_eq!(
        r.text(),
        "(no output)\n\nCommand was killed by signal 11 (SIGSEGV)"
    );
}

// ---------------------------------------------------------------- memory

#[tokio::test]
async fn huge_output_keeps_memory_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let process = LocalProcess::default();
    let limits = Limits::default();
    let output = Arc::new(Mutex::new(
        OutputAccumulator::new(limits.truncation(), BASH_FILE_PREFIX, Arc::new(LocalFs))
            .in_dir(dir.path()),
    ));
    let peak = Arc::new(Mutex::new(0usize));
    let request = ExecRequest {
        command: "yes | head -c 200000000".to_owned(),
        cwd: dir.path().to_path_buf(),
        timeout: None,
        env: Vec::new(),
    };
    let sink = {
        let output = Arc::clone(&output);
        let peak = Arc::clone(&peak);
        Box::new(move |chunk: &[u8]| {
            let mut output = output.lock().unwrap();
            output.append(chunk);
            let mut peak = peak.lock().unwrap();
            *peak = (*peak).max(output.retained_bytes());
        })
    };
    let end = process
        .exec(request, sink, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(end, EXIT_0);
    let mut output = output.lock().unwrap();
    output.finish();
    let snapshot = output.snapshot();
    assert_eq!(output.raw_bytes(), 200_000_000);
    assert_eq!(snapshot.truncation.total_lines, 100_000_000);
    assert_eq!(snapshot.content, "y\n".repeat(2000).trim_end());
    let file = snapshot.full_output_path.unwrap();
    assert_eq!(disk::metadata(&file).len, 200_000_000);
    // Bounded by the limits (a few windows of 2 × 50 KB plus buffers), not
    // by the 200 MB that went through.
    let peak = *peak.lock().unwrap();
    assert!(peak < 1024 * 1024, "peak {peak} bytes");
}

// ---------------------------------------------------------------- notices (D13)

mod notice_props {
    use proptest::collection::vec;
    use proptest::prelude::*;

    use super::super::*;
    use crate::tools::truncate::TruncationLimits;

    /// Lines of `a` and `é` of any length (some far over the limits), with
    /// or without a final newline.
    fn text() -> impl Strategy<Value = String> {
        (vec((0usize..2500, any::<bool>()), 0..40), any::<bool>()).prop_map(
            |(lines, final_newline)| {
                let lines: Vec<String> = lines
                    .into_iter()
                    .map(|(n, wide)| {
                        if wide {
                            "é".repeat(n / 2)
                        } else {
                            "a".repeat(n)
                        }
                    })
                    .collect();
                let mut text = lines.join("\n");
                if final_newline && !text.is_empty() {
                    text.push('\n');
                }
                text
            },
        )
    }

    proptest! {
        #![proptest_config(crate::tools::testutil::cases(128))]

        /// The notice states true facts about the text shown, derived here
        /// from the plain text without the truncation code: which lines,
        /// of how many, how big the cut line is, which limit cut.
        #[test]
        fn every_notice_states_true_facts(
            text in text(),
            chunk in 1usize..7000,
            max_lines in 1usize..30,
            max_bytes in 1usize..2000,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let limits = TruncationLimits { max_lines, max_bytes };
            let mut output = OutputAccumulator::new(limits, "p", Arc::new(crate::tools::ops::LocalFs)).in_dir(dir.path());
            for piece in text.as_bytes().chunks(chunk) {
                output.append(piece);
            }
            output.finish();
            let snapshot = output.snapshot();
            let shown = snapshot.content.clone();
            let notice = truncation_notice(&snapshot);

            let body = text.strip_suffix('\n').unwrap_or(&text);
            let lines: Vec<&str> = if text.is_empty() { Vec::new() } else { body.split('\n').collect() };
            let total = lines.len();
            prop_assert!(shown.len() <= max_bytes || shown == text);
            if shown == text || shown == body {
                // Everything is shown: no notice.
                prop_assert_eq!(notice, None);
                return Ok(());
            }
            let file = snapshot.full_output_path.unwrap();
            prop_assert_eq!(crate::tools::testutil::disk::read(&file), text.as_bytes());
            let full = format!("Full output: {}", file.display());
            let last = lines[total - 1];
            let expected = if !shown.contains('\n') && last.len() > max_bytes && last.ends_with(shown.as_str()) {
                // Only the end of the last line fits.
                prop_assert!(shown.len() + 4 > max_bytes.min(last.len()));
                if shown.is_empty() {
                    format!(
                        "[Line {total} is {}; not even one character of its end fits in the {} limit. {full}]",
                        format_size(last.len()),
                        format_size(max_bytes)
                    )
                } else {
                    format!(
                        "[Showing last {} of line {total} (line is {}). {full}]",
                        format_size(shown.len()),
                        format_size(last.len())
                    )
                }
            } else {
                // Whole lines: exactly the last k, and one more would not fit.
                let k = shown.split('\n').count();
                let start = total - k + 1;
                prop_assert_eq!(&shown, &lines[start - 1..].join("\n"));
                prop_assert!(k <= max_lines);
                let by_lines = k == max_lines;
                prop_assert!(by_lines || shown.len() + 1 + lines[start - 2].len() > max_bytes);
                if by_lines {
                    format!("[Showing lines {start}-{total} of {total}. {full}]")
                } else {
                    format!(
                        "[Showing lines {start}-{total} of {total} ({} limit). {full}]",
                        format_size(max_bytes)
                    )
                }
            };
            prop_assert_eq!(notice, Some(expected));
        }
    }
}

/// §bash.7, found by replaying recorded sessions: the output's final
/// newline stays before the blank line and the exit notice, as pi wrote it.
#[tokio::test]
async fn failing_output_keeps_its_final_newline_before_the_notice() {
    let h = Harness::local();
    let r = bash(&h, "printf 'a\\nb\\n'; exit 1").await;
    assert_eq!(r.text(), "a\nb\n\n\nCommand exited with code 1");
    let r = bash(&h, "printf 'a\\nb'; exit 1").await;
    assert_eq!(r.text(), "a\nb\n\nCommand exited with code 1");
}
