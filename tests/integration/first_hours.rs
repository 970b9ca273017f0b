//! A new user's path (issue 25): what the harness says when snapshots
//! change, and what it says about itself when asked.

use std::path::Path;
use std::time::Duration;

use super::cli_support::harness;
use super::cli_support::output_within;
use super::cli_support::texts;
use super::cli_support::write_files;

fn run_in(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut cmd = harness(dir, tmp.path(), &state.path().join("state"));
    cmd.args(args).env("NO_COLOR", "1");
    let out = output_within(cmd, Duration::from_secs(60));
    let (stdout, stderr) = texts(&out);
    (out.status.code(), stdout, stderr)
}

fn scenario(text: &str) -> String {
    format!(
        "name: a\nworkspace: {{ files: {{ x.txt: \"{text}\\n\" }} }}\nmodel:\n  - call: read\n    id: r\n    args: {{ path: x.txt }}\n    expect: {{ snapshot: true }}\n"
    )
}

/// The lines that speak of snapshot files.
fn about_snapshots(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|l| l.contains(".snap.yaml"))
        .collect()
}

#[test]
fn snapshots_say_what_was_written_and_how_to_accept_it() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("s/a.yaml", &scenario("hi"))]);
    let (code, stdout, _) = run_in(dir.path(), &["run", "s", "--update-snapshots"]);
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(
        about_snapshots(&stdout),
        ["snapshots: wrote 1 new or changed snapshot into s/a.snap.yaml"]
    );
    write_files(dir.path(), &[("s/a.yaml", &scenario("ho"))]);
    let (code, stdout, _) = run_in(dir.path(), &["run", "s"]);
    assert_eq!(code, Some(1), "{stdout}");
    assert_eq!(
        about_snapshots(&stdout),
        [
            "    the new value is written to s/a.snap.yaml.new; accept it with --update-snapshots",
            "snapshots: 1 new or changed snapshot of s/a.snap.yaml written to s/a.snap.yaml.new \
             for review; accept with --update-snapshots",
        ]
    );
    assert!(dir.path().join("s/a.snap.yaml.new").is_file());
    let (code, stdout, _) = run_in(dir.path(), &["run", "s"]);
    assert_eq!(code, Some(1), "{stdout}");
    let (code, stdout, _) = run_in(dir.path(), &["run", "s", "--update-snapshots"]);
    assert_eq!(
        (code, about_snapshots(&stdout)),
        (
            Some(0),
            vec!["snapshots: wrote 1 new or changed snapshot into s/a.snap.yaml"]
        )
    );
    assert!(!dir.path().join("s/a.snap.yaml.new").exists());
    let (code, stdout, _) = run_in(dir.path(), &["run", "s"]);
    assert_eq!(
        (code, about_snapshots(&stdout)),
        (Some(0), Vec::<&str>::new())
    );
}
