//! Cancellation, and commands that leave children behind.

use pretty_assertions::assert_eq;

use super::*;

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
            facts: Some(
                crate::tools::facts::Facts::error(crate::tools::ErrorKind::Cancelled).with_details(
                    BashDetails {
                        cancelled: true,
                        ..BashDetails::default()
                    }
                )
            ),
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
