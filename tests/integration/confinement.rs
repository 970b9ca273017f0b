//! Confinement (D1) as an attacker tries it: symlinks that climb through
//! other symlinks, a directory swapped for a symlink while the tools run,
//! scenario workspaces and file checks that point outside, and where bash's
//! full-output logs go (D18).

use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;

use harness::tools::Registry;
use harness::tools::ToolCall;
use harness::tools::ToolResult;
use harness::tools::UpdateSink;
use harness::tools::Workspace;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

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
