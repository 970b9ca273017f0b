//! Commands in a sandbox (D21): writes outside refused, the private
//! temporary directory, the network cut or let through, daemons gone
//! with the sandbox, the notice said once.
//!
//! These need Landlock and user namespaces; [`require`] fails a test with
//! what is missing rather than letting it pass without a sandbox.

use std::io::Read;
use std::net::TcpListener;

use pretty_assertions::assert_eq;

use super::*;
use crate::tools::BashConfig;
use crate::tools::ops::sandbox::Network;
use crate::tools::ops::sandbox::Sandbox;
use crate::tools::ops::sandbox::SandboxPolicy;
use crate::tools::ops::sandbox::support;

/// Fails the test, saying what is missing, when the kernel cannot
/// sandbox: these tests must not pass without one.
fn require() {
    let support = support();
    if let Err(reason) = &support.landlock {
        panic!("this test needs Landlock, which is unavailable: {reason}");
    }
    if let Err(reason) = &support.namespaces {
        panic!("this test needs user namespaces, which are unavailable: {reason}");
    }
}

/// A base directory with the workspace `ws/`, a `home/` and an
/// `outside/` next to it.
struct Layout {
    _base: tempfile::TempDir,
    base: PathBuf,
    ws: PathBuf,
}

impl Layout {
    fn new() -> Self {
        let base_dir = tempfile::tempdir().unwrap();
        let base = disk::canonicalize(base_dir.path());
        for dir in ["ws", "home", "outside"] {
            disk::create_dir_all(base.join(dir));
        }
        Self {
            ws: base.join("ws"),
            base,
            _base: base_dir,
        }
    }

    /// A registry whose bash runs in a sandbox of `network` over the
    /// workspace, with `HOME` in `home/`.
    fn registry(&self, network: Network) -> (Registry, Arc<Sandbox>) {
        require();
        let sandbox = Arc::new(
            Sandbox::new(SandboxPolicy::workspace(&self.ws).with_network(network)).unwrap(),
        );
        let process = LocalProcess::default().with_sandbox(Arc::clone(&sandbox));
        let workspace = Workspace::local(&self.ws)
            .unwrap()
            .with_process(Arc::new(process))
            .with_bash(BashConfig {
                env: vec![
                    (
                        "HOME".to_owned(),
                        self.base.join("home").display().to_string(),
                    ),
                    ("LC_ALL".to_owned(), "C".to_owned()),
                ],
                ..BashConfig::default()
            });
        (Registry::builder(workspace).build().unwrap(), sandbox)
    }
}

async fn run(registry: &Registry, command: &str) -> ToolResult {
    let call = ToolCall::new("c1", "bash", json!({ "command": command }));
    registry
        .dispatch(&call, CancellationToken::new(), UpdateSink::discard())
        .await
}

const NOTICE: &str = "[Sandboxed: commands may write only in the workspace and $TMPDIR; a write \
                      anywhere else fails with \"Permission denied\"; they have no network.]";

#[tokio::test]
async fn writes_outside_the_workspace_are_refused_and_leave_nothing() {
    let layout = Layout::new();
    let (registry, _sandbox) = layout.registry(Network::None);
    let outside = layout.base.join("outside/a.txt");
    let r = run(
        &registry,
        &format!(
            "echo a > {}; echo b > \"$HOME/b.txt\"; echo c > ../c.txt; mkdir ../d; touch ../e",
            outside.display()
        ),
    )
    .await;
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        format!(
            "/bin/bash: line 1: {}: Permission denied\n/bin/bash: line 1: {}/home/b.txt: \
             Permission denied\n/bin/bash: line 1: ../c.txt: Permission denied\nmkdir: cannot \
             create directory '../d': Permission denied\ntouch: cannot touch '../e': Permission \
             denied\n\n\nCommand exited with code 1\n\n{NOTICE}",
            outside.display(),
            layout.base.display()
        )
    );
    let mut left: Vec<String> = ["outside", "home", ""]
        .iter()
        .flat_map(|dir| disk::names(layout.base.join(dir)))
        .collect();
    left.sort();
    assert_eq!(left, ["home", "outside", "ws"]);
}

#[tokio::test]
async fn writes_in_the_workspace_and_the_private_tmpdir_work_and_it_is_said_once() {
    let layout = Layout::new();
    let (registry, sandbox) = layout.registry(Network::None);
    let r = run(
        &registry,
        "echo a > in.txt && mkdir -p sub && echo b > sub/b.txt && f=$(mktemp) && echo t > \"$f\" \
         && cat in.txt sub/b.txt \"$f\" && dirname \"$f\"",
    )
    .await;
    let tmpdir = sandbox.tmpdir().unwrap().display().to_string();
    assert_eq!(r.text(), format!("a\nb\nt\n{tmpdir}\n\n\n{NOTICE}"));
    assert!(!r.is_error);
    assert_eq!(disk::read_string(layout.ws.join("sub/b.txt")), "b\n");
    // The second command's result says nothing more.
    let r = run(&registry, "echo \"$TMPDIR\"; ls \"$TMPDIR\" | wc -l").await;
    assert_eq!(r.text(), format!("{tmpdir}\n1\n"));
    // The directory made for the sandbox goes with it.
    drop(registry);
    drop(sandbox);
    assert!(disk::symlink_metadata(&tmpdir).is_err(), "{tmpdir} is left");
}

/// Connects from inside to `port` and writes `hello`, with bash's
/// `/dev/tcp`; prints `connected` or the error.
fn connect_command(port: u16) -> String {
    format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo hello >&3 && exec 3>&- && echo connected")
}

/// What arrives at `listener` (non-blocking) now: `None` when nothing
/// has connected.
fn arrived_now(listener: &TcpListener) -> Option<String> {
    listener.set_nonblocking(true).unwrap();
    match listener.accept() {
        Ok((mut stream, _)) => {
            stream.set_nonblocking(false).unwrap();
            let mut text = String::new();
            stream.read_to_string(&mut text).unwrap();
            Some(text)
        }
        Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => None,
        Err(err) => panic!("accept: {err}"),
    }
}

/// What arrives at `listener`, waiting at most 10 s for a connection.
fn arrived_within(listener: &TcpListener) -> Option<String> {
    listener.set_nonblocking(false).unwrap();
    let fd = std::os::fd::AsRawFd::as_raw_fd(listener);
    let mut poll = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    let ready = unsafe { libc::poll(&mut poll, 1, 10_000) };
    if ready != 1 {
        return None;
    }
    arrived_now(listener)
}

#[tokio::test]
async fn a_loopback_listener_outside_is_unreachable_when_the_network_is_cut() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let layout = Layout::new();
    let (registry, _sandbox) = layout.registry(Network::None);
    let r = run(&registry, &connect_command(port)).await;
    assert_eq!(
        r.text(),
        format!(
            "/bin/bash: connect: Connection refused\n/bin/bash: line 1: \
             /dev/tcp/127.0.0.1/{port}: Connection refused\n\n\nCommand exited with code 1\n\n\
             {NOTICE}"
        )
    );
    // The command has ended: a connection would be queued by now.
    assert_eq!(arrived_now(&listener), None);
    // Nothing beyond loopback is routed (a documentation address, which
    // would otherwise wait for an answer that never comes).
    let r = h_call(
        &registry,
        "exec 3<>/dev/tcp/192.0.2.1/80 || echo refused",
        10.0,
    )
    .await;
    assert_eq!(
        r.text(),
        "/bin/bash: connect: Network is unreachable\n/bin/bash: line 1: \
         /dev/tcp/192.0.2.1/80: Network is unreachable\nrefused\n"
    );
}

async fn h_call(registry: &Registry, command: &str, timeout: f64) -> ToolResult {
    let call = ToolCall::new(
        "c2",
        "bash",
        json!({ "command": command, "timeout": timeout }),
    );
    registry
        .dispatch(&call, CancellationToken::new(), UpdateSink::discard())
        .await
}

#[tokio::test]
async fn a_command_in_a_sandbox_holds_no_descriptor_of_the_harness() {
    let layout = Layout::new();
    let (registry, _sandbox) = layout.registry(Network::None);
    // Its standard streams, and the directory being listed; not the
    // init's control socket, its pidfd or the Landlock ruleset.
    let r = run(&registry, "cd /proc/self/fd && echo *").await;
    assert_eq!(r.text(), format!("0 1 2 3\n\n\n{NOTICE}"));
}

// The relay runs on the runtime: a worker of its own, while this test
// waits for what arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loopback_port_let_through_is_reached_and_others_are_not() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    let other_port = other.local_addr().unwrap().port();
    let layout = Layout::new();
    let (registry, _sandbox) = layout.registry(Network::Loopback(vec![port]));
    let r = run(&registry, &connect_command(port)).await;
    assert_eq!(
        r.text(),
        format!(
            "connected\n\n\n[Sandboxed: commands may write only in the workspace and $TMPDIR; a \
             write anywhere else fails with \"Permission denied\"; their only network is \
             127.0.0.1 port {port}.]"
        )
    );
    assert_eq!(arrived_within(&listener).as_deref(), Some("hello\n"));
    let r = run(&registry, &connect_command(other_port)).await;
    assert!(r.is_error);
    assert_eq!(arrived_now(&other), None);
}

#[tokio::test]
async fn with_the_network_open_a_loopback_listener_is_reached() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let layout = Layout::new();
    let (registry, _sandbox) = layout.registry(Network::Full);
    let r = run(&registry, &connect_command(port)).await;
    assert_eq!(
        r.text(),
        "connected\n\n\n[Sandboxed: commands may write only in the workspace and $TMPDIR; a write \
         anywhere else fails with \"Permission denied\".]"
    );
    assert_eq!(arrived_within(&listener).as_deref(), Some("hello\n"));
}

/// The host pids of running processes whose command line is exactly
/// `args` (NUL-separated in /proc).
fn pids_running(args: &[&str]) -> Vec<i32> {
    let wanted: Vec<u8> = args
        .iter()
        .flat_map(|arg| [arg.as_bytes(), b"\0"].concat())
        .collect();
    disk::names("/proc")
        .into_iter()
        .filter_map(|name| name.parse::<i32>().ok())
        .filter(|&pid| {
            disk::try_read_string(format!("/proc/{pid}/cmdline"))
                .is_some_and(|line| line.as_bytes() == wanted)
                && !is_dead(pid)
        })
        .collect()
}

#[tokio::test]
async fn daemons_that_leave_the_group_are_gone_when_the_sandbox_ends() {
    let layout = Layout::new();
    let (registry, sandbox) = layout.registry(Network::None);
    // Durations no other process uses, to find them by.
    let marks = ["1001.25", "1002.25", "1003.25"];
    let r = run(
        &registry,
        &format!(
            "setsid sleep {} > /dev/null 2>&1 & (setsid sleep {} > /dev/null 2>&1 & ) ; nohup \
             sleep {} > /dev/null 2>&1 & disown; echo started",
            marks[0], marks[1], marks[2]
        ),
    )
    .await;
    assert!(r.text().starts_with("started\n"), "{}", r.text());
    // They outlive the call (a server started in the background is there
    // for the next call) …
    // (a background child may not have executed `sleep` yet when the
    // shell is done: wait, bounded, for each to show up).
    let pids: Vec<i32> = marks
        .iter()
        .flat_map(|mark| {
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            let mut found = pids_running(&["sleep", mark]);
            while found.is_empty() && std::time::Instant::now() < deadline {
                std::thread::yield_now();
                found = pids_running(&["sleep", mark]);
            }
            assert_eq!(found.len(), 1, "sleep {mark}: {found:?}");
            found
        })
        .collect();
    // … and not the sandbox.
    drop(registry);
    drop(sandbox);
    let left: Vec<i32> = pids
        .iter()
        .copied()
        .filter(|&pid| !wait_for_exit(pid, Duration::from_secs(5)))
        .collect();
    for &pid in &left {
        // SAFETY: cleaning up what the test found.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    assert_eq!(left, Vec::<i32>::new());
}
