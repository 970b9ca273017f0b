use std::io::Read;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::scenario::setup::MAX_FAULT_DELAY;
use crate::tools::ops::MemoryFs;

fn fs_with(rules: Vec<FaultRule>) -> (FaultFs, Arc<FaultPlan>) {
    let memory = MemoryFs::new();
    memory.add_file("/ws/src/a.rs", "fn a() {}\n");
    memory.add_file("/ws/src/deep/b.rs", "fn b() {}\n");
    memory.add_file("/ws/notes.txt", "0123456789");
    memory.add_dir("/tmp");
    let plan = FaultPlan::new("/ws", rules);
    (FaultFs::new(Arc::new(memory), Arc::clone(&plan)), plan)
}

/// What an error says about itself: kind, errno, text.
fn facts(err: &io::Error) -> (io::ErrorKind, Option<i32>, String) {
    (err.kind(), err.raw_os_error(), err.to_string())
}

#[test]
fn an_os_error_is_the_real_one_and_only_matching_paths_fail() {
    let rule = FaultRule::new(FaultOp::Read)
        .with_path("src/*.rs")
        .unwrap()
        .with_error(FaultError::errno("EACCES").unwrap());
    let (fs, _) = fs_with(vec![rule]);
    let err = fs.read(Path::new("/ws/src/a.rs")).unwrap_err();
    let real = io::Error::from_raw_os_error(libc::EACCES);
    assert_eq!(facts(&err), facts(&real));
    assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
    // `*` stays in one directory; other paths and other operations are untouched.
    assert_eq!(
        fs.read(Path::new("/ws/src/deep/b.rs")).unwrap(),
        b"fn b() {}\n"
    );
    assert_eq!(fs.read(Path::new("/ws/notes.txt")).unwrap(), b"0123456789");
    assert!(fs.metadata(Path::new("/ws/src/a.rs")).unwrap().is_file());
}

#[test]
fn each_named_errno_has_its_io_kind() {
    let kinds: Vec<(&str, io::ErrorKind)> = ["ENOENT", "ENOSPC", "EROFS", "EISDIR"]
        .into_iter()
        .map(|name| (name, FaultError::errno(name).unwrap().to_io().kind()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("ENOENT", io::ErrorKind::NotFound),
            ("ENOSPC", io::ErrorKind::StorageFull),
            ("EROFS", io::ErrorKind::ReadOnlyFilesystem),
            ("EISDIR", io::ErrorKind::IsADirectory),
        ]
    );
    assert_eq!(FaultError::errno("EWHAT"), None);
    let message = FaultError::Message("the disk is on fire".to_owned()).to_io();
    assert_eq!(
        facts(&message),
        (io::ErrorKind::Other, None, "the disk is on fire".to_owned())
    );
}

#[test]
fn times_limits_how_many_operations_fail() {
    let rule = FaultRule::new(FaultOp::Write)
        .with_error(FaultError::errno("ENOSPC").unwrap())
        .with_times(1);
    let (fs, _) = fs_with(vec![rule]);
    let first = fs.write(Path::new("/ws/new.txt"), b"x").unwrap_err();
    assert_eq!(first.raw_os_error(), Some(libc::ENOSPC));
    fs.write(Path::new("/ws/new.txt"), b"y").unwrap();
    assert_eq!(fs.read(Path::new("/ws/new.txt")).unwrap(), b"y");
}

#[test]
fn a_failed_rename_leaves_the_old_contents() {
    let rule = FaultRule::new(FaultOp::Rename)
        .with_path("notes.txt")
        .unwrap()
        .with_error(FaultError::errno("EXDEV").unwrap());
    let (fs, _) = fs_with(vec![rule]);
    let err = fs.write(Path::new("/ws/notes.txt"), b"new").unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EXDEV));
    assert_eq!(fs.read(Path::new("/ws/notes.txt")).unwrap(), b"0123456789");
}

#[test]
fn a_read_stops_after_the_given_bytes() {
    let rule = FaultRule::new(FaultOp::Read)
        .with_path("notes.txt")
        .unwrap()
        .with_after_bytes(4);
    let (fs, _) = fs_with(vec![rule]);
    let mut file = fs.open(Path::new("/ws/notes.txt")).unwrap();
    let mut got = Vec::new();
    let err = file.read_to_end(&mut got).unwrap_err();
    assert_eq!(got, b"0123");
    assert_eq!(err.raw_os_error(), Some(libc::EIO));
}

#[test]
fn a_created_file_takes_the_given_bytes_then_fails() {
    let rule = FaultRule::new(FaultOp::Create)
        .with_after_bytes(3)
        .with_error(FaultError::errno("ENOSPC").unwrap());
    let memory = Arc::new(MemoryFs::new());
    memory.add_dir("/tmp");
    let plan = FaultPlan::new("/ws", vec![rule]);
    let fs = FaultFs::new(Arc::clone(&memory) as Arc<dyn FsOps>, plan);
    // A rule without a path matches outside the workspace too.
    let (path, mut file) = fs
        .create_numbered(Path::new("/tmp"), "log", ".txt")
        .unwrap();
    let err = file.write_all(b"abcdef").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::StorageFull);
    drop(file);
    assert_eq!(path, Path::new("/tmp/log.txt"));
    assert_eq!(memory.contents("/tmp/log.txt").unwrap(), b"abc");
}

#[test]
fn a_glob_never_matches_outside_the_workspace_and_dot_is_the_root() {
    let outside = FaultRule::new(FaultOp::List)
        .with_path("**")
        .unwrap()
        .with_error(FaultError::errno("EIO").unwrap());
    let (fs, _) = fs_with(vec![outside]);
    assert!(fs.read_dir(Path::new("/tmp")).is_ok());
    assert_eq!(
        fs.read_dir(Path::new("/ws/src"))
            .unwrap_err()
            .raw_os_error(),
        Some(libc::EIO)
    );
    let root = FaultRule::new(FaultOp::List)
        .with_path(".")
        .unwrap()
        .with_error(FaultError::errno("EACCES").unwrap());
    let (fs, _) = fs_with(vec![root]);
    assert!(fs.read_dir(Path::new("/ws/src")).is_ok());
    assert_eq!(
        fs.read_dir(Path::new("/ws")).unwrap_err().raw_os_error(),
        Some(libc::EACCES)
    );
}

#[test]
fn the_first_matching_rule_with_uses_left_applies() {
    let rules = vec![
        FaultRule::new(FaultOp::Metadata)
            .with_error(FaultError::errno("EACCES").unwrap())
            .with_times(1),
        FaultRule::new(FaultOp::Metadata).with_error(FaultError::errno("EIO").unwrap()),
    ];
    let (fs, _) = fs_with(rules);
    let errnos: Vec<Option<i32>> = (0..3)
        .map(|_| {
            fs.metadata(Path::new("/ws/notes.txt"))
                .unwrap_err()
                .raw_os_error()
        })
        .collect();
    assert_eq!(
        errnos,
        vec![Some(libc::EACCES), Some(libc::EIO), Some(libc::EIO)]
    );
}

#[test]
fn an_interrupted_stall_goes_on_as_after_the_full_stall() {
    let rule = FaultRule::new(FaultOp::Metadata)
        .with_delay(MAX_FAULT_DELAY)
        .with_error(FaultError::errno("EACCES").unwrap());
    let (fs, plan) = fs_with(vec![rule]);
    let stalled = std::thread::spawn(move || fs.metadata(Path::new("/ws/notes.txt")));
    plan.interrupt();
    // Without the interrupt this join would wait ten minutes.
    let err = stalled.join().unwrap().unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EACCES));
}

#[test]
fn a_stall_without_an_error_changes_nothing_else() {
    let rule = FaultRule::new(FaultOp::Read).with_delay(Duration::from_millis(1));
    let (fs, _) = fs_with(vec![rule]);
    assert_eq!(fs.read(Path::new("/ws/notes.txt")).unwrap(), b"0123456789");
}

#[tokio::test]
async fn exec_fails_or_is_cancelled_during_its_stall() {
    let request = ExecRequest {
        command: "echo hi".to_owned(),
        cwd: std::env::temp_dir(),
        timeout: None,
        env: Vec::new(),
    };
    let failing = FaultPlan::new(
        "/ws",
        vec![FaultRule::new(FaultOp::Exec).with_error(FaultError::errno("EMFILE").unwrap())],
    );
    let process = FaultProcess::new(
        Arc::new(crate::tools::ops::LocalProcess::default()),
        failing,
    );
    let err = process
        .exec(request.clone(), Box::new(|_| {}), CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EMFILE));

    let stalling = FaultPlan::new(
        "/ws",
        vec![FaultRule::new(FaultOp::Exec).with_delay(MAX_FAULT_DELAY)],
    );
    let process = FaultProcess::new(
        Arc::new(crate::tools::ops::LocalProcess::default()),
        stalling,
    );
    let cancel = CancellationToken::new();
    cancel.cancel();
    let end = process
        .exec(request, Box::new(|_| {}), cancel)
        .await
        .unwrap();
    assert_eq!(end, ExecEnd::Cancelled);
}

#[test]
fn a_stall_ends_by_the_plan_s_deadline() {
    let rule = FaultRule::new(FaultOp::List)
        .with_delay(MAX_FAULT_DELAY)
        .with_error(FaultError::errno("EIO").unwrap());
    let (fs, plan) = fs_with(vec![rule]);
    plan.set_deadline(std::time::Instant::now());
    // Without the deadline this would wait ten minutes.
    let err = fs.read_dir(Path::new("/ws/src")).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EIO));
}

// ------------------------------------------------ the steps of a real write

/// A workspace on the disk holding `notes.txt` ("old notes\n"), and the
/// confined operations over it with `rules`.
fn disk_with(rules: Vec<FaultRule>) -> (tempfile::TempDir, FaultFs) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "old notes\n").unwrap();
    let confined = crate::tools::ops::ConfinedFs::new(dir.path()).unwrap();
    let plan = FaultPlan::new(confined.root().to_path_buf(), rules);
    (dir, FaultFs::new(Arc::new(confined), plan))
}

/// The names in the workspace and the contents of `notes.txt`.
fn on_disk(dir: &tempfile::TempDir) -> (Vec<String>, String) {
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let notes = std::fs::read_to_string(dir.path().join("notes.txt")).unwrap();
    (names, notes)
}

fn rule(op: FaultOp, errno: &str) -> FaultRule {
    FaultRule::new(op)
        .with_path("notes.txt")
        .unwrap()
        .with_error(FaultError::errno(errno).unwrap())
}

fn notes_path(dir: &tempfile::TempDir) -> std::path::PathBuf {
    std::fs::canonicalize(dir.path()).unwrap().join("notes.txt")
}

#[test]
fn each_step_of_a_write_fails_on_its_own_rule_and_nothing_is_lost() {
    for (op, errno) in [
        (FaultOp::Create, "ENOSPC"),
        (FaultOp::Write, "EIO"),
        (FaultOp::Rename, "EXDEV"),
    ] {
        let (dir, fs) = disk_with(vec![rule(op, errno)]);
        let err = fs.write(&notes_path(&dir), b"new notes\n").unwrap_err();
        assert_eq!(
            (err.raw_os_error(), on_disk(&dir)),
            (
                FaultError::errno(errno).map(|e| e.to_io().raw_os_error().unwrap()),
                (vec!["notes.txt".to_owned()], "old notes\n".to_owned())
            ),
            "{op}"
        );
    }
}

#[test]
fn a_disk_that_fills_part_way_writes_only_the_first_bytes_of_the_new_file() {
    // The temporary file is kept (its removal fails too), to show what
    // reached the disk before the error: the first four bytes, and the old
    // file untouched.
    let partial = rule(FaultOp::Write, "ENOSPC").with_after_bytes(4);
    let (dir, fs) = disk_with(vec![partial, rule(FaultOp::Remove, "EIO")]);
    let err = fs.write(&notes_path(&dir), b"new notes\n").unwrap_err();
    let (names, notes) = on_disk(&dir);
    let temp = names.iter().find(|n| n.starts_with(".harness-")).unwrap();
    assert_eq!(
        (
            err.kind(),
            names.len(),
            notes,
            std::fs::read(dir.path().join(temp)).unwrap()
        ),
        (
            io::ErrorKind::StorageFull,
            2,
            "old notes\n".to_owned(),
            b"new ".to_vec()
        )
    );
    assert_eq!(
        crate::tools::fs_error::describe_io_error("write", "notes.txt", &err),
        format!(
            "Cannot write notes.txt: no space left on the device. Free some space (bash: df -h \
             shows which file system is full) or tell the user, then try again. Its temporary \
             file {temp} could not be removed; remove it with bash (rm)."
        )
    );
    // Without the remove fault, the partial file goes.
    let (dir, fs) = disk_with(vec![rule(FaultOp::Write, "ENOSPC").with_after_bytes(4)]);
    fs.write(&notes_path(&dir), b"new notes\n").unwrap_err();
    assert_eq!(
        on_disk(&dir),
        (vec!["notes.txt".to_owned()], "old notes\n".to_owned())
    );
}

#[test]
fn contents_shorter_than_after_bytes_are_written_whole() {
    let (dir, fs) = disk_with(vec![rule(FaultOp::Write, "ENOSPC").with_after_bytes(100)]);
    fs.write(&notes_path(&dir), b"short\n").unwrap();
    assert_eq!(
        on_disk(&dir),
        (vec!["notes.txt".to_owned()], "short\n".to_owned())
    );
}

#[test]
fn a_directory_that_allows_no_new_file_overwrites_in_place_unless_hard_linked() {
    // EACCES at the create step is what a read-only directory gives; it
    // is injected, so that the test means the same when run as root.
    let (dir, fs) = disk_with(vec![rule(FaultOp::Create, "EACCES")]);
    fs.write(&notes_path(&dir), b"in place\n").unwrap();
    assert_eq!(
        on_disk(&dir),
        (vec!["notes.txt".to_owned()], "in place\n".to_owned())
    );

    // The same file with a second name outside the workspace: writing in
    // place would change the outside file, so the write is refused.
    let (dir, fs) = disk_with(vec![rule(FaultOp::Create, "EACCES")]);
    let outside = tempfile::tempdir().unwrap();
    let other = outside.path().join("secret.txt");
    std::fs::hard_link(dir.path().join("notes.txt"), &other).unwrap();
    let err = fs.write(&notes_path(&dir), b"pwned\n").unwrap_err();
    assert_eq!(
        (
            crate::tools::fs_error::describe_io_error("write", "notes.txt", &err),
            std::fs::read_to_string(&other).unwrap(),
            on_disk(&dir),
        ),
        (
            "Cannot write notes.txt: its directory does not allow a new file to be created, so \
             the file would have to be overwritten in place, and it has other hard links that \
             would change with it (one may be outside the workspace). Nothing was written. Make \
             the directory writable (bash: chmod u+w), or write to a new file."
                .to_owned(),
            "old notes\n".to_owned(),
            (vec!["notes.txt".to_owned()], "old notes\n".to_owned())
        )
    );
    // With the directory writable, the write replaces the workspace's name
    // and the outside file keeps its contents.
    let (dir, fs) = disk_with(Vec::new());
    std::fs::hard_link(dir.path().join("notes.txt"), outside.path().join("b.txt")).unwrap();
    fs.write(&notes_path(&dir), b"replaced\n").unwrap();
    assert_eq!(
        (
            std::fs::read_to_string(outside.path().join("b.txt")).unwrap(),
            on_disk(&dir).1
        ),
        ("old notes\n".to_owned(), "replaced\n".to_owned())
    );
}

#[test]
fn times_counts_the_steps_a_write_reaches() {
    // The rename fails once; the second write goes through. The remove
    // rule is met only when a step failed.
    let remove = rule(FaultOp::Remove, "EIO").with_times(1);
    let (dir, fs) = disk_with(vec![rule(FaultOp::Rename, "EBUSY").with_times(1), remove]);
    let first = fs.write(&notes_path(&dir), b"one\n").unwrap_err();
    assert_eq!(first.kind(), io::ErrorKind::ResourceBusy);
    let temps = on_disk(&dir).0.len();
    fs.write(&notes_path(&dir), b"two\n").unwrap();
    assert_eq!(
        (temps, on_disk(&dir).0.len(), on_disk(&dir).1),
        (2, 2, "two\n".to_owned())
    );
}

/// Each error a rule may name is one the tool layer words in plain words
/// with its class (tools' `fs_error` tests show those words for each).
#[test]
fn every_injectable_error_number_is_one_the_tools_word() {
    let unworded: Vec<&str> = FaultError::errno_names()
        .filter(|name| {
            let error = FaultError::errno(name).map(|e| e.to_io());
            let found = error.as_ref().map(crate::tools::fs_error::cause);
            found.and_then(|c| c.errno) != Some(*name)
        })
        .collect();
    assert_eq!(unworded, Vec::<&str>::new());
    assert_eq!(FaultError::errno_names().count(), 16);
}
