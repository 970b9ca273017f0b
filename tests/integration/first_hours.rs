//! A new user's path (issue 25): what the harness says when snapshots
//! change, what it says about itself when asked, and that `check` refuses
//! what `run` refuses, with both places of a name used twice.

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

/// The lines `harness check` prints for problems, and those `harness run`
/// prints (after `error: `) for the same files.
fn problems(dir: &Path) -> (Option<i32>, Vec<String>, Option<i32>, Vec<String>) {
    let (check_code, stdout, _) = run_in(dir, &["check", "s"]);
    let (run_code, _, stderr) = run_in(dir, &["run", "s"]);
    let checked = stdout
        .lines()
        .filter(|l| l.starts_with("s/") || l.contains("harness.yaml:"))
        .map(str::to_owned)
        .collect();
    let refused = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("error: "))
        .map(str::to_owned)
        .collect();
    (check_code, checked, run_code, refused)
}

#[test]
fn check_refuses_what_run_refuses() {
    // Issue 25: an invalid gate passed `check` and failed `run` with no
    // line:col; so did a call to a tool that `tools` leaves out.
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            (
                "s/harness.yaml",
                "tokenizer: o200k\ngates:\n  tokens: \"+5%\"\n  retries: \"-1\"\n  latency: \"+1\"\n",
            ),
            ("s/a.yaml", "name: a\nmodel:\n  - say: done\n"),
        ],
    );
    let (check_code, checked, run_code, refused) = problems(dir.path());
    assert_eq!((check_code, run_code), (Some(2), Some(2)));
    assert_eq!(checked, refused);
    let shown = checked
        .join("\n")
        .replace(&dir.path().display().to_string(), "[tmp]");
    insta::assert_snapshot!("check_suite_gates", shown);

    write_files(
        dir.path(),
        &[
            ("s/harness.yaml", "gates: { tokens: \"+5%\" }\n"),
            (
                "s/a.yaml",
                "name: a\ntools: readonly\nmodel:\n  - call: bash\n    args: { command: ls }\n    expect: { ok: true }\n  - say: done\n",
            ),
        ],
    );
    let (check_code, checked, run_code, refused) = problems(dir.path());
    assert_eq!((check_code, run_code), (Some(2), Some(2)));
    assert_eq!(checked, refused);
    insta::assert_snapshot!("check_inactive_tool", checked.join("\n"));

    // Calling it on purpose is what the scenario is about: it runs.
    write_files(
        dir.path(),
        &[(
            "s/a.yaml",
            "name: a\ntools: readonly\nmodel:\n  - call: bash\n    args: { command: ls }\n    expect: { error: \"is not active\" }\n  - say: done\n",
        )],
    );
    let (code, stdout, _) = run_in(dir.path(), &["check", "s"]);
    assert_eq!((code, stdout.as_str()), (Some(0), "1 scenario OK\n"));
    let (code, stdout, _) = run_in(dir.path(), &["run", "s"]);
    assert_eq!(code, Some(0), "{stdout}");
}

#[test]
fn a_name_used_twice_names_both_places() {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            (
                "s/a.yaml",
                "name: reads\nmodel:\n  - say: a\n---\n# the second one\nname: reads\nmodel:\n  - say: b\n",
            ),
            ("s/b.yaml", "model:\n  - say: c\nname: reads\n"),
        ],
    );
    let (code, stdout, _) = run_in(dir.path(), &["check", "s"]);
    assert_eq!(code, Some(2));
    insta::assert_snapshot!("check_duplicate_names", stdout);
}
