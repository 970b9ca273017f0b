//! The recipes of docs/ci.md work as written: the Kubernetes wait script
//! is taken from the document and run against a stand-in `kubectl` (and
//! `harness`) on PATH, for a Job that completes, one that fails and one
//! that does neither in time.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Command;

use pretty_assertions::assert_eq;

/// The ```bash block of docs/ci.md that runs `kubectl wait`.
fn wait_script() -> String {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ci.md")).unwrap();
    doc.split("```bash\n")
        .skip(1)
        .filter_map(|rest| rest.split_once("\n```").map(|(block, _)| block))
        .find(|block| block.contains("kubectl wait"))
        .expect("docs/ci.md has a bash block with kubectl wait")
        .to_owned()
}

fn executable(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn the_kubernetes_wait_ends_on_complete_on_failed_and_on_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    // `kubectl wait … --for=condition=C`: returns at once when C is the
    // Job's condition ($JOB_ENDS), fails at once when $JOB_ENDS is
    // `timeout` (kubectl's exit after --timeout), and otherwise waits,
    // as the real one does, until it is killed.
    executable(
        &bin.join("kubectl"),
        "#!/bin/sh\n\
         case \"$*\" in *\"--for=condition=$JOB_ENDS \"*) echo \"condition met: $JOB_ENDS\"; exit 0;; esac\n\
         [ \"$JOB_ENDS\" = timeout ] && { echo 'error: timed out waiting for the condition' >&2; exit 1; }\n\
         exec sleep 600\n",
    );
    executable(&bin.join("harness"), "#!/bin/sh\necho \"harness $*\"\n");
    let script = dir.path().join("wait.sh");
    std::fs::write(&script, wait_script()).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let mut seen = Vec::new();
    for ends in ["complete", "failed", "timeout"] {
        let out = Command::new("bash")
            .arg(&script)
            .env("PATH", &path)
            .env("JOB_ENDS", ends)
            .output()
            .unwrap();
        seen.push((
            ends,
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        ));
    }
    let merge = "harness report merge /reports/part-*/run.json --report /reports/merged \
                 --baseline reports/baseline.json\n";
    assert_eq!(
        seen,
        [
            (
                "complete",
                Some(0),
                format!("condition met: complete\n{merge}")
            ),
            ("failed", Some(0), format!("condition met: failed\n{merge}")),
            ("timeout", Some(1), String::new()),
        ]
    );
}
