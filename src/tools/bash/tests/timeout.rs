//! Timeouts: validation, the default, killing what the command started.

use pretty_assertions::assert_eq;

use super::*;

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
