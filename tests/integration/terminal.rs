//! Nothing that came from a scenario, a file or a tool reaches the terminal
//! raw (issue: a file's content set the terminal title, wrote the
//! clipboard with OSC 52 and erased lines to fake a `PASS`). Each test runs
//! the real binary on hostile text and asserts that every control
//! character it printed, but newline and tab, is shown instead.

use std::path::Path;
use std::time::Duration;

use super::cli_support::harness;
use super::cli_support::output_within;
use super::cli_support::texts;
use super::cli_support::write_files;

/// OSC 0 (title), OSC 52 (clipboard), CSI 2K (erase line), CR, BEL,
/// backspace, DEL and a C1 CSI.
const HOSTILE: &str = "\u{1b}]0;owned\u{7}\u{1b}]52;c;aGk=\u{7}\r\u{1b}[2KPASS\u{8}\u{7f}\u{9b}1m";
/// How [`HOSTILE`] is shown.
const SHOWN: &str = "\u{241b}]0;owned\u{2407}\u{241b}]52;c;aGk=\u{2407}\u{240d}\u{241b}[2KPASS\u{2408}\u{2421}\\u{9b}1m";

/// The control characters in `text` other than newline and tab.
fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| c.is_control() && c != '\n' && c != '\t')
        .collect()
}

fn run_in(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut cmd = harness(dir, tmp.path(), &state.path().join("state"));
    cmd.args(args).env("NO_COLOR", "1");
    let out = output_within(cmd, Duration::from_secs(60));
    let (stdout, stderr) = texts(&out);
    (out.status.code(), stdout, stderr)
}

/// A suite whose scenario name, file content and tool output are hostile.
fn hostile_suite(dir: &Path) {
    let name = serde_json::to_string(&format!("evil {HOSTILE}")).unwrap();
    let content = serde_json::to_string(&format!("{HOSTILE}\n")).unwrap();
    write_files(
        dir,
        &[(
            "suite/evil.yaml",
            &format!(
                "name: {name}\nworkspace:\n  files:\n    notes.txt: {content}\nmodel:\n  - call: read\n    args: {{ path: notes.txt }}\n    expect: {{ contains: absent }}\n"
            ),
        )],
    );
}

#[test]
fn run_shows_hostile_names_and_actuals() {
    let dir = tempfile::tempdir().unwrap();
    hostile_suite(dir.path());
    let (code, stdout, stderr) = run_in(dir.path(), &["run", "suite", "--jobs", "1"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert_eq!(raw_controls(&stdout), Vec::<char>::new(), "{stdout}");
    assert_eq!(raw_controls(&stderr), Vec::<char>::new(), "{stderr}");
    let fail_lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert_eq!(fail_lines.len(), 2, "{stdout}");
    assert!(
        fail_lines
            .iter()
            .all(|l| l.contains(&format!("evil {SHOWN}"))),
        "{stdout}"
    );
    let actual: Vec<&str> = stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("actual:"))
        .collect();
    assert_eq!(actual, vec![format!("    actual:   {SHOWN}")], "{stdout}");
}

#[test]
fn list_and_check_show_hostile_names_and_keys() {
    let dir = tempfile::tempdir().unwrap();
    hostile_suite(dir.path());
    let (code, stdout, stderr) = run_in(dir.path(), &["list", "suite"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(raw_controls(&stdout), Vec::<char>::new(), "{stdout}");
    assert!(stdout.contains(&format!("evil {SHOWN}")), "{stdout}");

    let key = serde_json::to_string(&format!("k{HOSTILE}")).unwrap();
    write_files(
        dir.path(),
        &[("bad/bad.yaml", &format!("name: bad\n{key}: 1\nmodel: []\n"))],
    );
    let (code, stdout, stderr) = run_in(dir.path(), &["check", "bad"]);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    let printed = format!("{stdout}{stderr}");
    assert_eq!(raw_controls(&printed), Vec::<char>::new(), "{printed}");
    assert!(printed.contains(&format!("k{SHOWN}")), "{printed}");
}

#[test]
fn call_prints_json_that_means_the_same_with_nothing_raw() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), format!("{HOSTILE}\n")).unwrap();
    let (code, stdout, stderr) = run_in(dir.path(), &["call", "read", r#"{"path":"notes.txt"}"#]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(raw_controls(&stdout), Vec::<char>::new(), "{stdout}");
    let result: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(result["content"][0]["text"], format!("{HOSTILE}\n"));
}
