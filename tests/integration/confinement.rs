//! Confinement (D1) as an attacker tries it: symlinks that climb through
//! other symlinks, a directory swapped for a symlink while the tools run,
//! scenario workspaces and file checks that point outside, and where bash's
//! full-output logs go (D18).

use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Output;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::time::Duration;

use harness::tools::Registry;
use harness::tools::ToolCall;
use harness::tools::ToolResult;
use harness::tools::UpdateSink;
use harness::tools::Workspace;
use insta::assert_snapshot;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::test_helpers::printed_run;
use super::test_helpers::redacting;

/// Everything below `dir`: each path with its bytes (files), link target
/// (symlinks) or nothing (directories), its inode, mode and change time.
/// Two equal states mean nothing there was created, removed, written or
/// chmod'ed.
fn state(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, u64, u32, i64, i64)> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(path) = todo.pop() {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let data = if meta.file_type().is_symlink() {
            std::fs::read_link(&path)
                .unwrap()
                .as_os_str()
                .as_bytes()
                .to_vec()
        } else if meta.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap() {
                todo.push(entry.unwrap().path());
            }
            Vec::new()
        } else {
            std::fs::read(&path).unwrap()
        };
        out.insert(
            path,
            (
                data,
                meta.ino(),
                meta.mode(),
                meta.ctime(),
                meta.ctime_nsec(),
            ),
        );
    }
    out
}

/// A registry with every tool over the confined workspace `root`.
fn registry(root: &Path) -> Registry {
    Registry::builder(Workspace::local(root).unwrap())
        .build()
        .unwrap()
}

fn call(
    runtime: &tokio::runtime::Runtime,
    registry: &Registry,
    tool: &str,
    args: Value,
) -> ToolResult {
    runtime.block_on(registry.dispatch(
        &ToolCall::new("c", tool, args),
        CancellationToken::new(),
        UpdateSink::discard(),
    ))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Exchanges two names atomically (`renameat2(RENAME_EXCHANGE)`).
fn exchange(a: &CString, b: &CString) -> bool {
    // SAFETY: two valid NUL-terminated paths relative to the current
    // directory's descriptor; the call only renames.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    rc == 0
}

fn c_path(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).unwrap()
}

/// Issue 10, item 2: one thread swaps the directory `ws/d` with a symlink
/// to a look-alike directory outside, as fast as it can, while write,
/// edit, read, grep, ls and find run against paths under `d`. Whatever the
/// timing, nothing outside may change and no result may show outside
/// content.
#[test]
fn a_directory_swapped_for_a_symlink_never_leads_a_tool_outside() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let ws = base.join("ws");
    let outside = base.join("outside");
    for dir in [&ws.join("d"), &outside.join("d")] {
        std::fs::create_dir_all(dir).unwrap();
        // The same text on both sides, so an edit that lands outside
        // succeeds (and is seen) instead of failing to match.
        std::fs::write(dir.join("e.txt"), "edit me\n").unwrap();
        std::fs::write(dir.join("w.txt"), "old\n").unwrap();
    }
    std::fs::write(ws.join("d/r.txt"), "inside\n").unwrap();
    std::fs::write(outside.join("d/r.txt"), "OUTSIDE-CONTENT\n").unwrap();
    std::fs::write(outside.join("d/outside-only-name.txt"), "x\n").unwrap();
    // One relative and one absolute link: both kinds must be refused.
    std::os::unix::fs::symlink("../outside/d", ws.join("rel")).unwrap();
    std::os::unix::fs::symlink(outside.join("d"), ws.join("abs")).unwrap();
    let before = state(&outside);

    let registry = registry(&ws);
    let runtime = runtime();
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swapper = {
        let stop = Arc::clone(&stop);
        let swaps = Arc::clone(&swaps);
        let d = c_path(&ws.join("d"));
        let links = [c_path(&ws.join("rel")), c_path(&ws.join("abs"))];
        std::thread::spawn(move || {
            let mut round = 0usize;
            while !stop.load(Ordering::Relaxed) {
                // Swap in a link, then swap it back: `d` is a directory
                // half of the time.
                let link = &links[round % 2];
                if exchange(&d, link) {
                    swaps.fetch_add(1, Ordering::Relaxed);
                    assert!(exchange(&d, link), "swapping back failed");
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
                round += 1;
            }
        })
    };

    // Per tool: results that showed outside content, and successes.
    let mut leaked: BTreeMap<&str, usize> = BTreeMap::new();
    let mut succeeded: BTreeMap<&str, usize> = BTreeMap::new();
    let mut example = None;
    let rounds = 250;
    for round in 0..rounds {
        let calls = [
            (
                "write",
                json!({"path": "d/w.txt", "content": format!("w{round}\n")}),
            ),
            (
                "write",
                json!({"path": format!("d/new{round}.txt"), "content": "n\n"}),
            ),
            (
                "write",
                json!({"path": format!("d/sub{round}/n.txt"), "content": "n\n"}),
            ),
            (
                "edit",
                json!({"path": "d/e.txt", "edits": [{"oldText": "edit me", "newText": "edit me!"}]}),
            ),
            ("read", json!({"path": "d/r.txt"})),
            ("grep", json!({"pattern": "OUTSIDE|inside", "path": "d"})),
            ("ls", json!({"path": "d"})),
            ("find", json!({"pattern": "*.txt", "path": "d"})),
        ];
        for (tool, args) in calls {
            let result = call(&runtime, &registry, tool, args);
            if !result.is_error {
                *succeeded.entry(tool).or_default() += 1;
            }
            let text = result.text();
            if text.contains("OUTSIDE-CONTENT") || text.contains("outside-only-name") {
                *leaked.entry(tool).or_default() += 1;
                example.get_or_insert(text);
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    let swaps = swaps.load(Ordering::Relaxed);
    assert!(
        std::fs::symlink_metadata(ws.join("d")).unwrap().is_dir(),
        "the swapper left `d` swapped"
    );
    // The stress must have been real: many swaps during the calls, and
    // every tool worked while `d` was a directory.
    assert!(swaps >= 2000, "only {swaps} swaps happened");
    assert_eq!(
        succeeded.keys().copied().collect::<Vec<_>>(),
        ["edit", "find", "grep", "ls", "read", "write"],
        "tools that succeeded at least once"
    );
    let after = state(&outside);
    let changed: Vec<&PathBuf> = after
        .iter()
        .filter(|(path, now)| before.get(*path) != Some(now))
        .map(|(path, _)| path)
        .chain(before.keys().filter(|path| !after.contains_key(*path)))
        .collect();
    assert!(
        changed.is_empty() && leaked.is_empty(),
        "after {swaps} swaps in {rounds} rounds, {} outside paths changed (e.g. {:?}); results \
         that showed outside content, per tool: {leaked:?} (e.g. {example:?})",
        changed.len(),
        changed.iter().take(3).collect::<Vec<_>>(),
    );
}

fn harness() -> Command {
    Command::new(env!("CARGO_BIN_EXE_harness"))
}

/// `harness call TOOL ARGS --cwd DIR`: its one JSON result.
fn harness_call(dir: &Path, tool: &str, args: Value) -> Value {
    let out = harness()
        .args(["call", tool, &args.to_string(), "--cwd"])
        .arg(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A refusal of confinement as `harness call` prints it.
fn error_result(text: &str) -> Value {
    json!({
        "is_error": true,
        "content": [{"type": "text", "text": text}],
        "details": {"error_class": "outside_workspace"}
    })
}

/// Runs `harness ARGS` in `dir` with `tmp` as its temp directory; a run
/// that has not ended after a minute is killed and fails the test (it
/// hung).
fn harness_run(dir: &Path, tmp: &Path, args: &[&str]) -> Output {
    let child = harness()
        .args(args)
        .current_dir(dir)
        .env("TMPDIR", tmp)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (done, ended) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let out = child.wait_with_output();
        let _ = done.send(());
        out
    });
    if ended.recv_timeout(Duration::from_secs(60)).is_err() {
        // SAFETY: signalling our own child process.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        let out = waiter.join().unwrap().unwrap();
        panic!(
            "harness {args:?} hung; killed it. stdout:\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    waiter.join().unwrap().unwrap()
}

fn mode_of(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().mode() & 0o7777
}

/// Issue 10, item 1, exactly as reported: `trick` is a dangling symlink to
/// `dlink/../pwned.txt`, and `dlink` leads to a directory outside. The
/// kernel follows `dlink` before it climbs, so `trick` names
/// `outside/pwned.txt`; the check once cleaned `dlink/..` away as text and
/// let write create it.
#[test]
fn a_dangling_symlink_that_climbs_through_another_symlink_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let ws = base.join("ws");
    std::fs::create_dir_all(base.join("outside/odir")).unwrap();
    std::fs::create_dir(&ws).unwrap();
    std::os::unix::fs::symlink("../outside/odir", ws.join("dlink")).unwrap();
    std::os::unix::fs::symlink("dlink/../pwned.txt", ws.join("trick")).unwrap();
    let before = state(&base.join("outside"));
    let refusal = error_result(&format!(
        "Path \"trick\" is outside the workspace: it resolves to a path outside the workspace \
         root through a symlink, but tools may only touch files under the workspace root {}. Use \
         a path relative to the workspace root.",
        ws.display()
    ));
    let calls = [
        ("write", json!({"path": "trick", "content": "x"})),
        (
            "edit",
            json!({"path": "trick", "edits": [{"oldText": "a", "newText": "b"}]}),
        ),
        ("read", json!({"path": "trick"})),
    ];
    for (tool, args) in calls {
        assert_eq!(harness_call(&ws, tool, args), refusal, "{tool}");
    }
    assert_eq!(state(&base.join("outside")), before);
}

/// Issue 10, item 5: a hard link to an outside file is that file, so it
/// can be read by path (the documented limit of path confinement); but
/// write and edit replace the workspace's name with a new file, so the
/// outside file is never changed through it.
#[test]
fn a_hard_link_to_an_outside_file_is_readable_but_never_written_through() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let ws = base.join("ws");
    std::fs::create_dir_all(base.join("outside")).unwrap();
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(base.join("outside/f.txt"), "outside text\n").unwrap();
    std::fs::hard_link(base.join("outside/f.txt"), ws.join("h.txt")).unwrap();
    std::fs::hard_link(base.join("outside/f.txt"), ws.join("e.txt")).unwrap();
    let before = std::fs::symlink_metadata(base.join("outside/f.txt")).unwrap();

    assert_eq!(
        harness_call(&ws, "read", json!({"path": "h.txt"})),
        json!({"is_error": false, "content": [{"type": "text", "text": "outside text\n"}], "details": null})
    );
    let written = harness_call(&ws, "write", json!({"path": "h.txt", "content": "new\n"}));
    assert_eq!(
        written["content"][0]["text"],
        "Successfully wrote 4 bytes to h.txt"
    );
    let edited = harness_call(
        &ws,
        "edit",
        json!({"path": "e.txt", "edits": [{"oldText": "outside", "newText": "edited"}]}),
    );
    assert_eq!(edited["is_error"], false, "{edited}");

    assert_eq!(std::fs::read_to_string(ws.join("h.txt")).unwrap(), "new\n");
    assert_eq!(
        std::fs::read_to_string(ws.join("e.txt")).unwrap(),
        "edited text\n"
    );
    let after = std::fs::symlink_metadata(base.join("outside/f.txt")).unwrap();
    assert_eq!(
        std::fs::read_to_string(base.join("outside/f.txt")).unwrap(),
        "outside text\n"
    );
    // Same inode, same modification time; only its link count fell when
    // the workspace's names were replaced.
    assert_eq!(
        (
            after.ino(),
            after.nlink(),
            after.mtime(),
            after.mtime_nsec()
        ),
        (before.ino(), 1, before.mtime(), before.mtime_nsec()),
    );
}

/// Issue 10, item 3: a scenario's `workspace.files` entry below a declared
/// symlink that leads outside must not write or chmod where the link
/// points. (The loader may refuse such a scenario before it runs; either
/// way it does not pass and nothing outside changes.)
#[test]
fn scenario_files_below_a_symlink_to_outside_are_not_written() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let outside = base.join("outside");
    let suite = base.join("suite");
    let run_tmp = base.join("tmp");
    for dir in [&outside, &suite, &run_tmp] {
        std::fs::create_dir(dir).unwrap();
    }
    std::fs::write(outside.join("existing.txt"), "original\n").unwrap();
    std::fs::set_permissions(
        outside.join("existing.txt"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    std::fs::write(
        suite.join("escape.yaml"),
        format!(
            "name: workspace files through a symlink\n\
             workspace:\n  files:\n    l: {{ symlink: {} }}\n    \
             l/existing.txt: {{ text: \"overwritten\\n\", mode: \"4755\" }}\n    \
             l/new.txt: \"created\\n\"\n\
             model:\n  - call: ls\n    args: {{ path: . }}\n",
            outside.display()
        ),
    )
    .unwrap();
    let before = state(&outside);
    let out = harness_run(&suite, &run_tmp, &["run", "."]);
    assert_ne!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(state(&outside), before);
    assert_eq!(mode_of(&outside.join("existing.txt")), 0o644);
}

/// Issue 10, item 4 (reading side): file checks read through the
/// workspace's handle, regular files only, never blocking. A symlink in the
/// workspace to an outside file cannot be read (its content never appears
/// in the output), and a FIFO fails its check at once instead of hanging
/// the run.
#[test]
fn file_checks_read_neither_outside_files_nor_fifos() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let suite = base.join("suite");
    let run_tmp = base.join("tmp");
    for dir in [&suite, &run_tmp] {
        std::fs::create_dir(dir).unwrap();
    }
    // Next to the workspaces, which are created in `run_tmp`.
    std::fs::write(run_tmp.join("secret.txt"), "TOP-SECRET\n").unwrap();
    std::fs::write(
        suite.join("checks.yaml"),
        format!(
            "name: file checks that try to read outside\n\
             workspace:\n  files:\n    \
             abs_leak: {{ symlink: {} }}\n    \
             rel_leak: {{ symlink: ../secret.txt }}\n\
             model:\n  - call: bash\n    args: {{ command: mkfifo fifo }}\n\
             expect:\n  files:\n    \
             abs_leak: \"nothing\"\n    \
             rel_leak: {{ contains: nothing }}\n    \
             fifo: {{ equals: nothing }}\n",
            run_tmp.join("secret.txt").display()
        ),
    )
    .unwrap();
    let out = harness_run(&suite, &run_tmp, &["run", ".", "--report", "out"]);
    assert_eq!(out.status.code(), Some(1));
    let reports: String = std::fs::read_dir(suite.join("out"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    let printed = format!(
        "{}{}{reports}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!printed.contains("TOP-SECRET"), "{printed}");
    redacting(&[&base])
        .bind(|| assert_snapshot!("file_checks_outside_and_fifo", printed_run(&out)));
}

/// Issue 10, item 7 (where logs live) and D18: inside `harness run`, bash's
/// full-output log is `bash-{call id}.log` in `{workspace}-logs`, next to
/// the workspace, mode 0600; it goes with the workspace, and stays with it
/// under `--keep-workspaces`. Nothing is left in the temp directory.
#[test]
fn bash_logs_of_a_run_live_next_to_the_workspace_and_go_with_it() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let suite = base.join("suite");
    let run_tmp = base.join("tmp");
    for dir in [&suite, &run_tmp] {
        std::fs::create_dir(dir).unwrap();
    }
    std::fs::write(
        suite.join("log.yaml"),
        "name: a long output\n\
         limits: { max_lines: 5 }\n\
         model:\n  - call: bash\n    id: big\n    args: { command: seq 3000 }\n    \
         expect: { truncated: true }\n",
    )
    .unwrap();
    let out = harness_run(&suite, &run_tmp, &["run", "."]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let left: Vec<_> = std::fs::read_dir(&run_tmp).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");

    let out = harness_run(&suite, &run_tmp, &["run", ".", "--keep-workspaces"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let mut kept: Vec<PathBuf> = std::fs::read_dir(&run_tmp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    kept.sort();
    assert_eq!(kept.len(), 2, "{kept:?}");
    let logs = PathBuf::from(format!("{}-logs", kept[0].display()));
    assert_eq!(kept[1], logs);
    let mut names: Vec<String> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // `tmp` is the sandbox's private TMPDIR, kept with the workspace.
    assert_eq!(names, ["bash-big.log", "tmp"]);
    let log = logs.join("bash-big.log");
    assert_eq!(mode_of(&log), 0o600);
    let expected: String = (1..=3000).map(|n| format!("{n}\n")).collect();
    assert_eq!(std::fs::read_to_string(&log).unwrap(), expected);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let kept_line = stdout
        .lines()
        .find(|l| l.starts_with("workspace of "))
        .unwrap_or_default();
    assert_eq!(
        kept_line,
        format!("workspace of a long output: {}", kept[0].display()),
        "{stdout}"
    );
}

/// Symlinks that stay inside work with every file tool, absolute ones
/// included: the check resolves them, and the tool opens the real path.
#[test]
fn symlinks_that_stay_inside_work_with_every_file_tool() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().canonicalize().unwrap();
    std::fs::create_dir(ws.join("dir")).unwrap();
    std::fs::write(ws.join("dir/a.txt"), "alpha\n").unwrap();
    std::os::unix::fs::symlink(ws.join("dir"), ws.join("abs_dir")).unwrap();
    std::os::unix::fs::symlink(ws.join("dir/a.txt"), ws.join("abs_file")).unwrap();
    std::os::unix::fs::symlink("dir", ws.join("rel_dir")).unwrap();
    let text = |result: Value| {
        assert_eq!(result["is_error"], false, "{result}");
        result["content"][0]["text"].as_str().unwrap().to_owned()
    };
    assert_eq!(
        text(harness_call(&ws, "read", json!({"path": "abs_file"}))),
        "alpha\n"
    );
    assert_eq!(
        text(harness_call(&ws, "read", json!({"path": "abs_dir/a.txt"}))),
        "alpha\n"
    );
    assert_eq!(
        text(harness_call(
            &ws,
            "edit",
            json!({"path": "abs_file", "edits": [{"oldText": "alpha", "newText": "beta"}]})
        )),
        "Successfully replaced 1 block(s) in abs_file."
    );
    assert_eq!(
        text(harness_call(
            &ws,
            "write",
            json!({"path": "abs_dir/new/b.txt", "content": "b\n"})
        )),
        "Successfully wrote 2 bytes to abs_dir/new/b.txt"
    );
    assert_eq!(
        text(harness_call(&ws, "ls", json!({"path": "abs_dir"}))),
        "a.txt\nnew/"
    );
    assert_eq!(
        text(harness_call(
            &ws,
            "grep",
            json!({"pattern": "beta", "path": "rel_dir"})
        )),
        "a.txt:1: beta"
    );
    assert_eq!(
        text(harness_call(
            &ws,
            "find",
            json!({"pattern": "*.txt", "path": "abs_dir"})
        )),
        "a.txt\nnew/b.txt"
    );
    // The links are still links; the files behind them changed.
    assert!(
        std::fs::symlink_metadata(ws.join("abs_file"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("dir/a.txt")).unwrap(),
        "beta\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("dir/new/b.txt")).unwrap(),
        "b\n"
    );
}

/// Issue 10 (found again by the issue 14 audit): with `git: true`, a
/// `.git` that is a symlink to an outside directory made `git init`
/// initialise a repository there, and the scenario passed. A `.git` the
/// scenario declares as a symlink or a file, or a symlink it declares
/// inside `.git`, is a load error at its key; a fixture's `.git` symlink
/// fails the build before git runs. Nothing outside changes.
#[test]
fn a_git_dir_that_leads_outside_is_refused_before_git_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let outside = base.join("outside");
    let suite = base.join("suite");
    let run_tmp = base.join("tmp");
    for dir in [&outside, &suite, &run_tmp, &suite.join("fixtures/linked")] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::os::unix::fs::symlink(&outside, suite.join("fixtures/linked/.git")).unwrap();
    let scenario = |name: &str, workspace: &str| {
        std::fs::write(
            suite.join(format!("{name}.yaml")),
            format!(
                "name: {name}\nworkspace:\n{workspace}model:\n  - call: ls\n    args: {{ path: . }}\n"
            ),
        )
        .unwrap();
    };
    let out = outside.display();
    scenario(
        "declared",
        &format!("  git: true\n  files:\n    .git: {{ symlink: {out} }}\n    a.txt: \"a\\n\"\n"),
    );
    scenario(
        "gitdir",
        &format!("  git: true\n  files:\n    .git: \"gitdir: {out}\\n\"\n"),
    );
    scenario(
        "inside",
        &format!(
            "  git: true\n  files:\n    .git/info/exclude: \"x/\\n\"\n    .git/refs: {{ symlink: {out} }}\n"
        ),
    );
    let before = state(&outside);
    let output = harness_run(&suite, &run_tmp, &["check", "."]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "./declared.yaml:5:5: workspace.files[\".git\"]: `.git` is declared as a symlink, but this \
         workspace runs git, which would then work where it points, outside the workspace; \
         declare `.git: { dir: true }` or leave it out\n\
         ./gitdir.yaml:5:5: workspace.files[\".git\"]: `.git` is declared as a file, but this \
         workspace runs git, which would then work where it points, outside the workspace; \
         declare `.git: { dir: true }` or leave it out\n\
         ./inside.yaml:6:5: workspace.files[\".git/refs\"]: a symlink inside `.git`, but this \
         workspace runs git, which would follow it, maybe outside the workspace; declare a file \
         or a directory here, or leave it out\n\
         3 problems found (0 valid scenarios)\n"
    );
    for name in ["declared", "gitdir", "inside"] {
        std::fs::remove_file(suite.join(format!("{name}.yaml"))).unwrap();
    }
    scenario("fixture", "  fixture: linked\n  git: true\n");
    let output = harness_run(&suite, &run_tmp, &["run", ".", "--report", "out"]);
    assert_eq!(output.status.code(), Some(1));
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(suite.join("out/run.json")).unwrap())
            .unwrap();
    assert_eq!(
        run["scenarios"][0]["failures"],
        json!([{
            "step": null,
            "check": "workspace",
            "expected": "the workspace is built",
            "actual": "the workspace's `.git` (from the fixture or the scenario's files) is a \
                       symlink, not a directory: `git: true` would make git work where it \
                       points, outside the workspace; make `.git` a plain directory, or leave \
                       it out"
        }])
    );
    assert_eq!(state(&outside), before);
}
