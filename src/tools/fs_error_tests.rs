use std::ffi::OsString;
use std::path::PathBuf;

use pretty_assertions::assert_eq;

use super::*;
/// Every error number worded here (a scenario's faults inject some of
/// them: `scenario::faults` checks that each of those is among these), and
/// an error with a message of its own.
fn injectable() -> Vec<(String, io::Error)> {
    let mut all: Vec<(String, io::Error)> = ERRNOS
        .iter()
        .map(|(number, name, ..)| ((*name).to_owned(), io::Error::from_raw_os_error(*number)))
        .collect();
    all.push((
        "a message".to_owned(),
        io::Error::other("the network drive went away"),
    ));
    all
}

#[test]
fn every_injectable_error_has_a_class_and_plain_words_for_files() {
    let table: Vec<String> = injectable()
        .iter()
        .map(|(name, err)| {
            let found = cause(err);
            format!(
                "{name} [{}]\n  {}\n  {}",
                found.class.name(),
                describe_io_error("read", "a.txt", err),
                describe_io_error("list", ".", err)
            )
        })
        .collect();
    insta::assert_snapshot!("file_errors", table.join("\n"));
    for (name, err) in injectable() {
        let found = cause(&err);
        if name != "a message" {
            assert_ne!(found.class, ErrorClass::Other, "{name}");
            assert_eq!(found.errno, Some(name.as_str()));
        }
        for action in ["read", "write", "list", "search", "create the directory"] {
            let text = describe_io_error(action, "d/a.txt", &err);
            assert!(!text.contains("os error"), "{text}");
        }
    }
}

#[test]
fn every_injectable_error_says_the_command_could_not_start_and_what_next() {
    let table: Vec<String> = injectable()
        .iter()
        .map(|(name, err)| format!("{name}\n  {}", describe_exec_error(err)))
        .collect();
    insta::assert_snapshot!("exec_errors", table.join("\n"));
}

#[test]
fn the_steps_of_starting_a_command_are_named() {
    let eacces = || io::Error::from_raw_os_error(libc::EACCES);
    let texts: Vec<String> = [
        ExecSetup::ShellMissing(PathBuf::from("/no/shell")),
        ExecSetup::Spawn(PathBuf::from("/bin/bash")),
        ExecSetup::Pipe,
        ExecSetup::WorkingDir(PathBuf::from("/workspace/sub")),
        ExecSetup::Sandbox,
    ]
    .into_iter()
    .map(|step| describe_exec_error(&ExecSetupError::to_io(step, eacces())))
    .collect();
    assert_eq!(
        texts,
        vec![
            "Custom shell path not found: /no/shell\nCould not start the command: the shell \
             configured for bash does not exist. Tell the user; commands cannot run until it is \
             fixed."
                .to_owned(),
            "Could not start the command: the shell /bin/bash could not be started: permission \
             denied. The shell or the working directory cannot be used: tell the user; commands \
             cannot run until it is fixed."
                .to_owned(),
            "Could not start the command: its output pipe could not be made: permission denied. \
             The shell or the working directory cannot be used: tell the user; commands cannot \
             run until it is fixed."
                .to_owned(),
            "Working directory cannot be used (permission denied): /workspace/sub\nCannot \
             execute bash commands. The shell or the working directory cannot be used: tell the \
             user; commands cannot run until it is fixed."
                .to_owned(),
            "Could not start the command: its sandbox could not be set up (Permission denied \
             (os error 13)). Tell the user; commands cannot run until the sandbox works or is \
             turned off."
                .to_owned(),
        ]
    );
}

#[test]
fn wording_names_the_action_the_path_and_a_next_step() {
    let err = io::Error::from(io::ErrorKind::PermissionDenied);
    assert_eq!(
        describe_io_error("read", "secret.txt", &err),
        "Permission denied: cannot read secret.txt. Check its permissions with bash (ls -l) \
         or use another file."
    );
    let err = io::Error::from(io::ErrorKind::IsADirectory);
    assert_eq!(
        describe_io_error("write", "src", &err),
        "Cannot write src: it is a directory. Give the path of a file inside it."
    );
    // An error number outside the table: the system's words, no number.
    let err = io::Error::from_raw_os_error(libc::ECONNREFUSED);
    assert_eq!(
        describe_io_error("read", "x", &err),
        "Cannot read x: connection refused. Try again; if it fails the same way, tell the user."
    );
}

#[test]
fn a_kernel_refusal_is_worded_like_the_outside_check() {
    let err = crate::tools::ops::outside_workspace();
    assert_eq!(
        describe_io_error("read", "d/r.txt", &err),
        "Path \"d/r.txt\" is outside the workspace: a symlink on the way leads out of the \
         workspace root, and tools may only touch files under it. Use a path relative to the \
         workspace root."
    );
    assert_eq!(cause(&err).class, ErrorClass::OutsideWorkspace);
}

#[test]
fn the_refusals_of_the_operations_layer_are_worded() {
    assert_eq!(
        describe_io_error("write", "d/a.txt", &Refusal::HardLinkedInPlace.to_io()),
        "Cannot write d/a.txt: its directory does not allow a new file to be created, so the \
         file would have to be overwritten in place, and it has other hard links that would \
         change with it (one may be outside the workspace). Nothing was written. Make the \
         directory writable (bash: chmod u+w), or write to a new file."
    );
    assert_eq!(
        describe_io_error("read", "fifo", &Refusal::NotRegular.to_io()),
        "Cannot read fifo: it is not a regular file (a pipe, socket or device). Use a regular \
         file."
    );
}

#[test]
fn a_temporary_file_left_behind_is_named_beside_the_file() {
    let left = |name: &str| {
        io::Error::new(
            io::ErrorKind::StorageFull,
            TempLeftBehind {
                name: OsString::from(name),
                cause: io::Error::from_raw_os_error(libc::ENOSPC),
            },
        )
    };
    assert_eq!(
        describe_io_error("write", "d/a.txt", &left(".harness-0123.tmp")),
        "Cannot write d/a.txt: no space left on the device. Free some space (bash: df -h shows \
         which file system is full) or tell the user, then try again. Its temporary file \
         d/.harness-0123.tmp could not be removed; remove it with bash (rm)."
    );
    assert_eq!(cause(&left("t")).errno, Some("ENOSPC"));
    assert!(describe_io_error("write", "a.txt", &left("t")).contains(" temporary file t could"));
}

#[test]
fn failures_carry_the_class_and_number_in_details() {
    let err = io::Error::from_raw_os_error(libc::EROFS);
    let ToolError::Failed {
        message,
        details,
        facts,
    } = io_failure("write", "a.txt", &err)
    else {
        panic!("not a failure");
    };
    assert_eq!(
        facts,
        Some(crate::tools::facts::Facts::error(ErrorKind::Io(
            ErrorClass::ReadOnly
        )))
    );
    assert_eq!(
        (message.as_str(), details),
        (
            "Cannot write a.txt: the file system is read-only. Nothing can be changed there: \
             write somewhere else, or tell the user.",
            Some(serde_json::json!({ "error_class": "read_only", "errno": "EROFS" }))
        )
    );
    let err = io::Error::other("gone");
    let ToolError::Failed { details, .. } = exec_failure(&err) else {
        panic!("not a failure");
    };
    assert_eq!(details, Some(serde_json::json!({ "error_class": "other" })));
}
