use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

use pretty_assertions::assert_eq;

use crate::scenario::expect::CallExpectation;
use crate::scenario::load::Scenario;
use crate::scenario::load::Suite;
use crate::scenario::load::load_text;
use crate::scenario::setup::FaultError;
use crate::scenario::setup::FaultOp;
use crate::scenario::setup::FaultRule;
use crate::tools::BashConfig;

fn load(text: &str) -> (Vec<Scenario>, Vec<String>) {
    let (scenarios, errors) = load_text(Path::new("s/x.yaml"), text, &Suite::default());
    (scenarios, errors.iter().map(ToString::to_string).collect())
}

const CALL: &str = "model:\n  - call: read\n    args: { path: a }\n";

#[test]
fn faults_bash_and_cancellations_are_loaded() {
    let (scenarios, errors) = load(
        "faults:\n  - { op: write, path: \"src/**\", error: ENOSPC, times: 2 }\n  - { op: read, after_bytes: 10, error: \"gone away\", delay_ms: 5 }\n  - { op: exec, delay_ms: 100 }\nbash:\n  env: { A_1: \"x y\" }\n  command_prefix: \"set -e\"\n  shell: /bin/sh\n  cwd: sub/dir\nmodel:\n  - call: read\n    args: { path: a }\n  - parallel:\n      - call: bash\n        args: { command: \"sleep 9\" }\n        cancel_after_ms: 250\n        expect: { cancelled: true }\n      - call: ls\n",
    );
    assert_eq!(errors, Vec::<String>::new());
    let c = &scenarios[0].conditions;
    assert_eq!(
        c.faults,
        vec![
            FaultRule::new(FaultOp::Write)
                .with_path("src/**")
                .unwrap()
                .with_error(FaultError::Os(libc::ENOSPC))
                .with_times(2),
            FaultRule::new(FaultOp::Read)
                .with_after_bytes(10)
                .with_error(FaultError::Message("gone away".to_owned()))
                .with_delay(Duration::from_millis(5)),
            FaultRule::new(FaultOp::Exec).with_delay(Duration::from_millis(100)),
        ]
    );
    assert_eq!(
        c.bash,
        BashConfig {
            env: vec![("A_1".to_owned(), "x y".to_owned())],
            command_prefix: Some("set -e".to_owned()),
            cwd: Some("sub/dir".to_owned()),
        }
    );
    assert_eq!(c.shell, Some(PathBuf::from("/bin/sh")));
    assert_eq!(
        c.cancel_after.iter().collect::<Vec<_>>(),
        vec![(&"call_2_1".to_owned(), &Duration::from_millis(250))]
    );
    assert_eq!(
        scenarios[0].call_checks["call_2_1"].checks,
        [CallExpectation::Cancelled(true)]
    );
}

#[test]
fn bad_faults_are_located_and_explained() {
    let (_, errors) = load(&format!(
        "faults:\n  - {{ op: wirte, error: EIO }}\n  - {{ op: rmeove, error: EIO }}\n  - {{ op: read, error: EACCESS }}\n  - {{ op: read, path: \"src/[\", error: EIO }}\n  - {{ op: exec, path: a, error: EIO }}\n  - {{ op: rename, after_bytes: 5, error: EIO }}\n  - {{ op: read, delay_ms: 600001 }}\n  - {{ op: read, error: EIO, times: 0 }}\n  - {{ op: list }}\n  - {{ op: read, path: ../up, error: EIO }}\n  - {{ op: read, after_bytes: 3 }}\n  - {{ op: read, delay_ms: -1 }}\n{CALL}"
    ));
    assert_eq!(
        errors,
        vec![
            "s/x.yaml:2:11: faults[0].op: unknown fault operation `wirte`: use one of read, write, create, rename, remove, list, metadata, exec; did you mean `write`?",
            "s/x.yaml:3:11: faults[1].op: unknown fault operation `rmeove`: use one of read, write, create, rename, remove, list, metadata, exec; did you mean `remove`?",
            "s/x.yaml:4:24: faults[2].error: unknown error name `EACCESS`: did you mean `EACCES`? known names are EACCES, EPERM, ENOENT, ENOSPC, EDQUOT, EIO, EROFS, EISDIR, ENOTDIR, EEXIST, EBUSY, ETXTBSY, EMFILE, ENAMETOOLONG, EAGAIN, EXDEV; any other text (with a space or lower-case letters) is used as the error's message",
            "s/x.yaml:5:23: faults[3].path: `src/[` is not a valid glob: unclosed character class; missing ']'",
            "s/x.yaml:6:23: faults[4].path: an `exec` fault has no path: it applies to every command (limit it with `times`)",
            "s/x.yaml:7:32: faults[5].after_bytes: only `read`, `create` and `write` faults stop part way; a `rename` either happens or fails",
            "s/x.yaml:8:27: faults[6].delay_ms: must be at most 600000 milliseconds (ten minutes); it is 600001",
            "s/x.yaml:9:36: faults[7].times: must be a whole number from 1 to 1000000000; it is 0",
            "s/x.yaml:10:5: faults[8]: a fault needs `error`, `delay_ms` or both: what happens to the operation",
            "s/x.yaml:11:23: faults[9].path: `../up` must be a glob relative to the workspace (no leading `/`, no `..`)",
            "s/x.yaml:12:30: faults[10].after_bytes: give the `error` the stream stops with (e.g. `error: ENOSPC`)",
            // Only the first problem of faults[11]: without its delay it
            // has neither, but that follows from the delay's problem.
            "s/x.yaml:13:27: faults[11].delay_ms: must be a whole number ≥ 0 (it is `-1`)",
        ]
    );
}

#[test]
fn bad_bash_settings_are_located_and_explained() {
    let (_, errors) = load(&format!(
        "bash:\n  env: {{ \"1X\": a, \"OK\": b, \"A-B\": c }}\n  shell: /no/such/shell\n  cwd: ../outside\n{CALL}"
    ));
    assert_eq!(
        errors,
        vec![
            "s/x.yaml:2:16: bash.env.1X: `1X` is not a variable name: use letters, digits and `_`, not starting with a digit",
            "s/x.yaml:2:35: bash.env.A-B: `A-B` is not a variable name: use letters, digits and `_`, not starting with a digit",
            "s/x.yaml:3:10: bash.shell: the shell `/no/such/shell` cannot be used: No such file or directory (os error 2); give the absolute path of an installed shell (e.g. /bin/sh)",
            "s/x.yaml:4:8: bash.cwd: `../outside` must be a directory inside the workspace: a relative path without `..`",
        ]
    );
    let (_, errors) = load(&format!("bash:\n  shell: sh\n{CALL}"));
    assert_eq!(
        errors,
        vec!["s/x.yaml:2:10: bash.shell: `sh` must be the absolute path of a shell (e.g. /bin/sh)"]
    );
}

#[test]
fn a_cancelled_call_must_end_the_script() {
    let (_, errors) = load(
        "model:\n  - call: bash\n    args: { command: \"sleep 9\" }\n    cancel_after_ms: 100\n    retry: { call: ls }\n  - call: ls\n    cancel_after_ms: 0\n    retry:\n      call: ls\n      cancel_after_ms: 5\n  - parallel:\n      - call: ls\n    cancel_after_ms: 5\n",
    );
    assert_eq!(
        errors,
        vec![
            "s/x.yaml:4:5: model[0].cancel_after_ms: step 1: the run ends when this call is cancelled, so the steps after it would never run; make it the last step",
            "s/x.yaml:5:5: model[0].retry: step 1 (bash): the run ends when this call is cancelled, so its `retry` would never be sent",
            "s/x.yaml:7:22: model[1].cancel_after_ms: must be a whole number of milliseconds from 1 to 86400000 (one day); it is 0",
            "s/x.yaml:8:5: model[1].retry: step 2 (ls): the run ends when this call is cancelled, so its `retry` would never be sent",
            "s/x.yaml:10:7: model[1].retry.cancel_after_ms: step 2 (ls), retry 1: a retry cannot be cancelled; put `cancel_after_ms` on a call of the last step",
            "s/x.yaml:13:5: model[2].cancel_after_ms: step 3: `id`, `args`, `raw_args`, `expect`, `capture` and `retry` belong to each call inside `parallel`, not to the step",
        ]
    );
}
