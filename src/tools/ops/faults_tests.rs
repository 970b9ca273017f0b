use std::io::Read;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

use super::super::MemoryFs;
use super::*;

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
    let process = FaultProcess::new(Arc::new(super::super::LocalProcess::default()), failing);
    let err = process
        .exec(request.clone(), Box::new(|_| {}), CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EMFILE));

    let stalling = FaultPlan::new(
        "/ws",
        vec![FaultRule::new(FaultOp::Exec).with_delay(MAX_FAULT_DELAY)],
    );
    let process = FaultProcess::new(Arc::new(super::super::LocalProcess::default()), stalling);
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
