use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Mutex;

use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::tools::ops::LocalFs;
use crate::tools::ops::MemoryFs;
use crate::tools::testutil::disk;

/// A walk whose every entry is a result.
fn walk_all(fs: &dyn FsOps, root: &Path, options: &WalkOptions) -> io::Result<Walk<()>> {
    walk(fs, root, options, None, None, &|| {
        Box::new(|_: &Entry<'_>| Some(((), 1)))
    })
}

/// The walk's entries relative to `root`, directories with a `/`.
fn listed(fs: &dyn FsOps, root: &str, options: &WalkOptions) -> Vec<String> {
    let walk = walk_all(fs, Path::new(root), options).unwrap();
    walk.results
        .into_vec()
        .into_iter()
        .map(|e| match e.kind {
            FileKind::Dir => format!("{}/", e.rel),
            FileKind::Symlink => format!("{}@", e.rel),
            _ => e.rel,
        })
        .collect()
}

fn with_dirs() -> WalkOptions {
    WalkOptions {
        include_dirs: true,
        ..WalkOptions::default()
    }
}

fn tree(files: &[(&str, &str)]) -> MemoryFs {
    let fs = MemoryFs::new();
    fs.add_dir("/ws");
    for (path, data) in files {
        fs.add_file(Path::new("/ws").join(path), *data);
    }
    fs
}

#[test]
fn gitignore_applies_outside_a_repository_and_hidden_files_are_kept() {
    let fs = tree(&[
        (".gitignore", "*.log\nbuild/\n"),
        (".env", "x"),
        ("a.log", "x"),
        ("build/out.txt", "x"),
        ("src/build", "a file named build is not a directory"),
        ("src/main.rs", "x"),
    ]);
    assert_eq!(
        listed(&fs, "/ws", &with_dirs()),
        vec![".env", ".gitignore", "src/", "src/build", "src/main.rs"]
    );
}

#[test]
fn git_directory_and_git_files_are_never_entered_or_listed() {
    let fs = tree(&[
        (".git/config", "x"),
        (".git/HEAD", "x"),
        ("sub/.git", "gitdir: ../.git/modules/sub"),
        ("sub/a.txt", "x"),
        (".github/workflow.yml", "x"),
    ]);
    assert_eq!(
        listed(&fs, "/ws", &with_dirs()),
        vec![".github/", ".github/workflow.yml", "sub/", "sub/a.txt"]
    );
}

#[test]
fn nested_rules_apply_only_below_their_directory() {
    let fs = tree(&[
        ("a/.gitignore", "x.txt\n/anchored.txt\n"),
        ("a/x.txt", "x"),
        ("a/deep/x.txt", "x"),
        ("a/deep/anchored.txt", "x"),
        ("a/anchored.txt", "x"),
        ("b/x.txt", "x"),
        ("b/anchored.txt", "x"),
    ]);
    assert_eq!(
        listed(&fs, "/ws", &WalkOptions::default()),
        vec![
            "a/.gitignore",
            "a/deep/anchored.txt",
            "b/anchored.txt",
            "b/x.txt"
        ]
    );
}

#[test]
fn negation_and_deeper_rules_win() {
    let fs = tree(&[
        (".gitignore", "*.log\n!keep.log\n*.txt\n"),
        ("drop.log", "x"),
        ("keep.log", "x"),
        ("top.txt", "x"),
        ("docs/.gitignore", "!*.txt\n"),
        ("docs/read.txt", "x"),
    ]);
    assert_eq!(
        listed(&fs, "/ws", &WalkOptions::default()),
        vec![".gitignore", "docs/.gitignore", "docs/read.txt", "keep.log"]
    );
}

#[test]
fn dot_ignore_wins_over_gitignore_and_exclude_applies() {
    let fs = tree(&[
        (".gitignore", "*.gen\n"),
        (".ignore", "!keep.gen\nsecret/\n"),
        (".git/info/exclude", "local-notes.md\n"),
        ("a.gen", "x"),
        ("keep.gen", "x"),
        ("local-notes.md", "x"),
        ("secret/key", "x"),
        ("sub/local-notes.md", "x"),
    ]);
    assert_eq!(
        listed(&fs, "/ws", &WalkOptions::default()),
        vec![".gitignore", ".ignore", "keep.gen"]
    );
}

#[test]
fn a_nested_repository_does_not_inherit_outer_git_rules() {
    let fs = tree(&[
        (".gitignore", "*.log\n"),
        (".ignore", "*.tmp\n"),
        ("a.log", "x"),
        ("vendor/lib/.git/HEAD", "x"),
        ("vendor/lib/b.log", "x"),
        ("vendor/lib/c.tmp", "x"),
    ]);
    assert_eq!(
        listed(&fs, "/ws", &WalkOptions::default()),
        vec![".gitignore", ".ignore", "vendor/lib/b.log"]
    );
}

#[test]
fn worktree_git_file_leads_to_the_shared_exclude_file() {
    let fs = tree(&[
        (".git", "gitdir: /repo/.git/worktrees/ws\n"),
        ("excluded.txt", "x"),
        ("kept.txt", "x"),
    ]);
    fs.add_file("/repo/.git/worktrees/ws/commondir", "../..\n");
    fs.add_file("/repo/.git/info/exclude", "excluded.txt\n");
    assert_eq!(
        listed(&fs, "/ws", &WalkOptions::default()),
        vec!["kept.txt"]
    );
}

#[test]
fn rules_from_the_base_apply_to_a_subdirectory_walk_and_the_root_is_never_filtered() {
    let fs = tree(&[
        (".gitignore", "*.log\nbuild/\n"),
        ("src/a.log", "x"),
        ("src/a.rs", "x"),
        ("build/out.rs", "x"),
    ]);
    let base = WalkOptions {
        ignore_base: Some(PathBuf::from("/ws")),
        ..WalkOptions::default()
    };
    assert_eq!(listed(&fs, "/ws/src", &base), vec!["a.rs"]);
    // Without a base only the root's own rules apply.
    assert_eq!(
        listed(&fs, "/ws/src", &WalkOptions::default()),
        vec!["a.log", "a.rs"]
    );
    // A directory named explicitly is walked even though it is ignored.
    assert_eq!(listed(&fs, "/ws/build", &base), vec!["out.rs"]);
}

#[test]
fn ignore_files_can_be_switched_off() {
    let fs = tree(&[(".gitignore", "*.log\n"), ("a.log", "x"), (".git/x", "x")]);
    let options = WalkOptions {
        respect_ignore_files: false,
        ..WalkOptions::default()
    };
    assert_eq!(listed(&fs, "/ws", &options), vec![".gitignore", "a.log"]);
}

#[test]
fn symlinks_are_reported_and_not_followed() {
    let fs = tree(&[("real/a.txt", "x")]);
    fs.add_symlink("/ws/link", "real");
    fs.add_symlink("/ws/file-link", "real/a.txt");
    assert_eq!(
        listed(&fs, "/ws", &with_dirs()),
        vec!["file-link@", "link@", "real/", "real/a.txt"]
    );
}

#[test]
fn entries_are_sorted_component_by_component_with_depth_limit() {
    let fs = tree(&[
        ("a.txt", "x"),
        ("a-b", "x"),
        ("a/b", "x"),
        ("a/c/d", "x"),
        ("B", "x"),
    ]);
    assert_eq!(
        listed(&fs, "/ws", &with_dirs()),
        vec!["B", "a/", "a/b", "a/c/", "a/c/d", "a-b", "a.txt"]
    );
    let shallow = WalkOptions {
        max_depth: Some(1),
        ..with_dirs()
    };
    assert_eq!(
        listed(&fs, "/ws", &shallow),
        vec!["B", "a/", "a-b", "a.txt"]
    );
}

#[test]
fn unreadable_ignore_files_are_reported() {
    let fs = tree(&[("a.txt", "x")]);
    fs.add_file_with_mode("/ws/.gitignore", "a.txt\n", 0o200);
    let walk = walk_all(&fs, Path::new("/ws"), &WalkOptions::default()).unwrap();
    assert_eq!(walk.results.into_vec().len(), 2);
    assert_eq!(walk.errors.len(), 1);
    assert_eq!(walk.errors[0].0, PathBuf::from("/ws/.gitignore"));
}

#[test]
fn a_cancelled_walk_fails_with_interrupted() {
    let fs = tree(&[("a.txt", "x")]);
    let cancel = CancellationToken::new();
    cancel.cancel();
    let options = WalkOptions {
        cancel: Some(cancel),
        ..WalkOptions::default()
    };
    let err = walk_all(&fs, Path::new("/ws"), &options).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::Interrupted);
}

#[test]
fn the_root_must_be_a_directory() {
    let fs = tree(&[("a.txt", "x")]);
    let err = walk_all(&fs, Path::new("/ws/a.txt"), &WalkOptions::default()).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotADirectory);
    let err = walk_all(&fs, Path::new("/ws/missing"), &WalkOptions::default()).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
}

#[test]
fn local_disk_follows_the_same_rules_in_parallel() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path();
    let write = |rel: &str, data: &str| {
        let path = root.join(rel);
        disk::create_dir_all(path.parent().unwrap());
        disk::write(path, data);
    };
    write(".gitignore", "target/\n*.o\n");
    write(".git/info/exclude", "scratch.md\n");
    write(".git/objects/x", "no");
    write("scratch.md", "x");
    write("target/debug/app", "x");
    write("a/.gitignore", "only-a.txt\n");
    write("a/only-a.txt", "x");
    write("b/only-a.txt", "x");
    write("c.o", "x");
    for i in 0..50 {
        write(&format!("many/d{}/f{i}.rs", i % 7), "x");
    }
    std::os::unix::fs::symlink(root.join("b"), root.join("link-to-b")).unwrap();
    let got = listed(&LocalFs, root.to_str().unwrap(), &with_dirs());
    let mut expected = vec![
        ".gitignore".to_owned(),
        "a/".to_owned(),
        "a/.gitignore".to_owned(),
        "b/".to_owned(),
        "b/only-a.txt".to_owned(),
        "link-to-b@".to_owned(),
        "many/".to_owned(),
    ];
    let mut many: Vec<String> = (0..7).map(|d| format!("many/d{d}/")).collect();
    many.extend((0..50).map(|i| format!("many/d{}/f{i}.rs", i % 7)));
    many.sort_by(|a, b| Path::new(a).cmp(Path::new(b)));
    expected.extend(many);
    assert_eq!(got, expected);
}

#[test]
fn visitors_see_every_reported_entry_once_and_say_what_is_a_result() {
    let mut files: Vec<(String, &str)> = (0..60)
        .map(|i| (format!("d{}/f{i:02}.txt", i % 5), "x"))
        .collect();
    files.push((".gitignore".to_owned(), "skip.txt\n"));
    files.push(("d1/skip.txt".to_owned(), "x"));
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, d)| (p.as_str(), *d)).collect();
    let fs = tree(&refs);
    let seen = Mutex::new(Vec::new());
    let visitor = || -> Visitor<'_, String> {
        let seen = &seen;
        Box::new(move |entry: &Entry<'_>| {
            let rel = String::from_utf8(entry.rel.to_vec()).unwrap();
            assert_eq!(entry.path, Path::new("/ws").join(&rel));
            assert_eq!(entry.dir.path().join(entry.name), entry.path);
            seen.lock().unwrap().push(rel.clone());
            // Every third file is a result.
            (entry.kind == FileKind::File && entry.key.last().unwrap().is_multiple_of(3))
                .then_some((rel, 1))
        })
    };
    let walk = walk(&fs, Path::new("/ws"), &with_dirs(), None, None, &visitor).unwrap();
    let mut seen = seen.into_inner().unwrap();
    seen.sort();
    let mut all = listed(&fs, "/ws", &with_dirs());
    for entry in &mut all {
        if let Some(dir) = entry.strip_suffix('/') {
            *entry = dir.to_owned();
        }
    }
    all.sort();
    assert_eq!(seen, all);
    assert_eq!(seen.len(), 60 + 5 + 1);
    // The results come sorted, each with what its visitor said.
    let found = walk.results.into_vec();
    let results: Vec<&String> = found.iter().map(|found| &found.value).collect();
    let rels: Vec<&String> = found.iter().map(|found| &found.rel).collect();
    assert_eq!(results, rels);
    let mut sorted = rels.clone();
    sorted.sort_by(|a, b| Path::new(a.as_str()).cmp(Path::new(b.as_str())));
    assert_eq!(rels, sorted);
    assert!(!rels.is_empty());
}

#[test]
fn keep_file_sees_files_before_the_rules_and_the_visitor_only_what_it_kept() {
    let fs = tree(&[
        (".gitignore", "*.log\nout/\n!keep.log\n"),
        ("a.rs", "x"),
        ("a.log", "x"),
        ("keep.log", "x"),
        ("b.txt", "x"),
        ("out/c.rs", "x"),
        ("src/d.rs", "x"),
        ("src/e.log", "x"),
        ("src/.gitignore", "d.rs\n"),
    ]);
    let asked = Mutex::new(Vec::new());
    let keep = |entry: &Entry<'_>| {
        let rel = String::from_utf8(entry.rel.to_vec()).unwrap();
        let kept = rel.ends_with(".rs") || rel.ends_with(".log");
        asked.lock().unwrap().push(rel);
        kept
    };
    let visited = Mutex::new(Vec::new());
    let visitor = || -> Visitor<'_, ()> {
        let visited = &visited;
        Box::new(move |entry: &Entry<'_>| {
            let rel = String::from_utf8(entry.rel.to_vec()).unwrap();
            visited.lock().unwrap().push(rel);
            Some(((), 1))
        })
    };
    let walk = walk(
        &fs,
        Path::new("/ws"),
        &with_dirs(),
        None,
        Some(&keep),
        &visitor,
    )
    .unwrap();
    let found = walk.results.into_vec();
    let rels: Vec<&str> = found.iter().map(|found| found.rel.as_str()).collect();
    // What a walk without the test gives, less the files it rejects.
    assert_eq!(rels, vec!["a.rs", "keep.log", "src"]);
    let mut asked = asked.into_inner().unwrap();
    asked.sort();
    // Every file outside ignored directories, ignored ones too; never a
    // directory.
    assert_eq!(
        asked,
        vec![
            ".gitignore",
            "a.log",
            "a.rs",
            "b.txt",
            "keep.log",
            "src/.gitignore",
            "src/d.rs",
            "src/e.log"
        ]
    );
    let mut visited = visited.into_inner().unwrap();
    visited.sort();
    assert_eq!(visited, vec!["a.rs", "keep.log", "src"]);
}

#[test]
fn a_bound_cuts_the_results_after_the_entry_that_reaches_its_cap() {
    // Weights by name: each file weighs its number.
    let fs = tree(&[
        ("a/1", ""),
        ("a/b/2", ""),
        ("a/c", ""),
        ("b/3", ""),
        ("c/4", ""),
    ]);
    let weigh = || -> Visitor<'_, ()> {
        Box::new(|entry: &Entry<'_>| {
            let name = entry.name.to_str().unwrap();
            name.parse::<usize>().ok().map(|weight| ((), weight))
        })
    };
    let rels = |cap: usize| -> Vec<String> {
        let bound = Bound::new(cap);
        let walk = walk(
            &fs,
            Path::new("/ws"),
            &WalkOptions::default(),
            Some(&bound),
            None,
            &weigh,
        );
        walk.unwrap()
            .results
            .into_vec()
            .into_iter()
            .map(|found| found.rel)
            .collect()
    };
    assert_eq!(rels(1), ["a/1"]);
    assert_eq!(rels(3), ["a/1", "a/b/2"]);
    assert_eq!(rels(4), ["a/1", "a/b/2", "b/3"]);
    assert_eq!(rels(100), ["a/1", "a/b/2", "b/3", "c/4"]);
}

/// Child directories whose open by name the faulty file system fails with
/// `EMFILE`: every name starting with `x`. Counted, to show the fault
/// struck.
static EMFILE_FAULTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn out_of_descriptors_for_x(name: &OsStr) -> bool {
    let hit = name.as_bytes().starts_with(b"x");
    if hit {
        EMFILE_FAULTS.fetch_add(1, Ordering::Relaxed);
    }
    hit
}

/// Issue 27: when a child directory cannot be opened by name because the
/// process is out of descriptors (`EMFILE`), the confined walk reaches it
/// by its path from the root handle instead (its files too; its
/// subdirectories get descriptors again): the results, the files'
/// contents, and the ignore rules read on the way are exactly those of the
/// walk without the fault.
#[test]
fn a_confined_walk_out_of_descriptors_falls_back_to_paths_with_identical_output() {
    use crate::tools::ops::ConfinedFs;
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().canonicalize().unwrap();
    let write = |rel: &str, data: &str| {
        let path = root.join(rel);
        disk::create_dir_all(path.parent().unwrap());
        disk::write(path, data);
    };
    write(".gitignore", "*.log\n");
    write("a.txt", "top");
    // A faulted directory with an ignore file, files, and below it a
    // directory opened by name again, holding another faulted one.
    write("x1/.gitignore", "hidden.txt\n");
    write("x1/hidden.txt", "ignored by x1/.gitignore");
    write("x1/one.txt", "one");
    write("x1/skip.log", "ignored by the root's rules");
    write("x1/sub/two.txt", "two");
    write("x1/sub/x2/three.txt", "three");
    write("x1/sub/x2/.ignore", "*.tmp\n");
    write("x1/sub/x2/drop.tmp", "ignored by x1/sub/x2/.ignore");
    for i in 0..20 {
        write(&format!("x3/d{}/f{i}.txt", i % 4), &format!("file {i}"));
    }
    write("y/x4/z/four.txt", "four");
    std::os::unix::fs::symlink("x1", root.join("xlink")).unwrap();
    let normal = ConfinedFs::new(&root).unwrap();
    let faulty = ConfinedFs::new(&root)
        .unwrap()
        .with_child_dir_fault(out_of_descriptors_for_x);
    // Each file's contents, read through its directory's handle; and the
    // directories whose handle is only a path.
    let run = |fs: &ConfinedFs| {
        let by_path = Mutex::new(std::collections::BTreeSet::new());
        let visitor = || -> Visitor<'_, String> {
            let (by_path, root) = (&by_path, &root);
            Box::new(move |entry: &Entry<'_>| {
                if entry.dir.fd().is_none() {
                    let dir = entry.dir.path().strip_prefix(root).unwrap();
                    by_path
                        .lock()
                        .unwrap()
                        .insert(dir.to_str().unwrap().to_owned());
                }
                let mut text = String::new();
                if entry.kind == FileKind::File {
                    fs.open_child_file(entry.dir, entry.name)
                        .unwrap()
                        .read_to_string(&mut text)
                        .unwrap();
                }
                Some((text, 1))
            })
        };
        let walk = walk(fs, &root, &with_dirs(), None, None, &visitor).unwrap();
        let walk = (walk.results.into_vec(), walk.errors);
        (walk, by_path.into_inner().unwrap())
    };
    let (expected, by_path) = run(&normal);
    assert_eq!(EMFILE_FAULTS.load(Ordering::Relaxed), 0);
    assert!(by_path.is_empty(), "{by_path:?}");
    let (got, by_path) = run(&faulty);
    // x1, x2, x3, x4 (xlink is a symlink: never opened).
    assert_eq!(EMFILE_FAULTS.load(Ordering::Relaxed), 4);
    assert_eq!(
        by_path.into_iter().collect::<Vec<_>>(),
        ["x1", "x1/sub/x2", "x3", "y/x4"]
    );
    assert_eq!(got, expected);
    let shown: Vec<(String, String)> = got
        .0
        .iter()
        .map(|found| (found.rel.clone(), found.value.clone()))
        .collect();
    let mut want: Vec<(String, String)> = [
        (".gitignore", "*.log\n"),
        ("a.txt", "top"),
        ("x1", ""),
        ("x1/.gitignore", "hidden.txt\n"),
        ("x1/one.txt", "one"),
        ("x1/sub", ""),
        ("x1/sub/two.txt", "two"),
        ("x1/sub/x2", ""),
        ("x1/sub/x2/.ignore", "*.tmp\n"),
        ("x1/sub/x2/three.txt", "three"),
        ("x3", ""),
    ]
    .map(|(rel, text)| (rel.to_owned(), text.to_owned()))
    .to_vec();
    for d in 0..4 {
        want.push((format!("x3/d{d}"), String::new()));
        let mut files: Vec<usize> = (0..20).filter(|i| i % 4 == d).collect();
        files.sort_by_key(|i| format!("f{i}.txt"));
        want.extend(
            files
                .into_iter()
                .map(|i| (format!("x3/d{d}/f{i}.txt"), format!("file {i}"))),
        );
    }
    want.extend(
        [
            ("xlink", ""),
            ("y", ""),
            ("y/x4", ""),
            ("y/x4/z", ""),
            ("y/x4/z/four.txt", "four"),
        ]
        .map(|(rel, text)| (rel.to_owned(), text.to_owned())),
    );
    assert_eq!(shown, want);
}

/// How many walk threads a walk of `files` under `/ws` ran on (each makes
/// one visitor).
fn walk_threads(files: &[(&str, &str)]) -> usize {
    let fs = tree(files);
    let made = std::sync::atomic::AtomicUsize::new(0);
    let visitor = || -> Visitor<'_, ()> {
        made.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Box::new(|_: &Entry<'_>| Some(((), 1)))
    };
    walk(
        &fs,
        Path::new("/ws"),
        &WalkOptions::default(),
        None,
        None,
        &visitor,
    )
    .unwrap();
    made.into_inner()
}

#[test]
fn a_small_tree_is_walked_by_the_calling_thread_alone() {
    let small = [
        ("package.json", "x"),
        ("src/index.ts", "x"),
        ("src/user.ts", "x"),
        ("src/utils/math.ts", "x"),
        ("src/utils/strings.ts", "x"),
        ("test/math.test.ts", "x"),
    ];
    assert_eq!(walk_threads(&small), 1);
    let threads = cores().clamp(1, MAX_WALK_THREADS);
    // Enough directories waiting at once…
    let wide: Vec<(String, &str)> = (0..SHARE_DIRS)
        .map(|d| (format!("d{d}/f.txt"), "x"))
        .collect();
    let wide: Vec<(&str, &str)> = wide.iter().map(|(p, d)| (p.as_str(), *d)).collect();
    assert_eq!(walk_threads(&wide), threads);
    // …or one directory waiting after enough entries.
    // (The root's entries, `sub` among them, are SHARE_ENTRIES.)
    let mut deep: Vec<(String, &str)> = (1..SHARE_ENTRIES)
        .map(|i| (format!("f{i:03}.txt"), "x"))
        .collect();
    deep.push(("sub/g.txt".to_owned(), "x"));
    let deep: Vec<(&str, &str)> = deep.iter().map(|(p, d)| (p.as_str(), *d)).collect();
    assert_eq!(walk_threads(&deep), threads);
    // One directory fewer, or one entry fewer, and no thread starts.
    assert_eq!(walk_threads(&wide[1..]), 1);
    assert_eq!(walk_threads(&deep[1..]), 1);
}
