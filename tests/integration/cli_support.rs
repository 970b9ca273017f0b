//! What the end-to-end tests of the command line share (lifecycle.rs,
//! selection.rs, starter.rs): a `harness` command with a private temp dir
//! and state directory, suites written into temporary directories, and a
//! bound on how long a command may take, so that a hang fails a test
//! instead of stalling the test run.

use std::path::Path;
use std::process::Command;
use std::process::Output;
use std::process::Stdio;
use std::time::Duration;

/// A `harness` process in `dir` whose temporary files go to `tmp` and whose
/// last run is recorded in `state`; stdin is empty.
pub(crate) fn harness(dir: &Path, tmp: &Path, state: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness"));
    cmd.current_dir(dir)
        .env("TMPDIR", tmp)
        .env("HARNESS_STATE_DIR", state)
        .env_remove("NO_COLOR")
        .stdin(Stdio::null());
    cmd
}

/// Writes `files` (path, text) under `dir`, creating directories.
pub(crate) fn write_files(dir: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let target = dir.join(path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(target, text).unwrap();
    }
}

/// A scenario named `name` that runs one bash `command` and expects an
/// `ok` result (a command that exits non-zero fails it).
pub(crate) fn bash_scenario(name: &str, command: &str) -> String {
    format!(
        "name: {name}\nmodel:\n  - call: bash\n    args: {{ command: {} }}\n    expect: {{ ok: true }}\n",
        serde_json::to_string(command).unwrap()
    )
}

/// Waits for the command's output, at most `limit`; a command still running
/// then is killed and the test fails. The wait is a channel receive with a
/// deadline, not a sleep.
pub(crate) fn output_within(mut cmd: Command, limit: Duration) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            // SAFETY: signalling our own child, which has not been reaped
            // (its waiting thread is still blocked on it).
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("harness did not finish within {limit:?}");
        }
    }
}

/// stdout and stderr as text.
pub(crate) fn texts(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
