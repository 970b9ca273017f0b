//! `harness init` (a starter suite that passes on its first run, and never
//! overwrites) and `harness completions SHELL`.

use std::path::Path;
use std::time::Duration;

use insta::assert_snapshot;
use pretty_assertions::assert_eq;

use super::cli_support::harness;
use super::cli_support::output_within;
use super::cli_support::texts;
use super::test_helpers::mcp_fixture;
use super::test_helpers::printed;
use super::test_helpers::redacting;

const LIMIT: Duration = Duration::from_secs(120);

fn run(dir: &Path, state: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = harness(dir, state, state);
    cmd.args(args);
    output_within(cmd, LIMIT)
}

/// Every file under `dir`, relative, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(path.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    found.sort();
    found
}

#[test]
fn init_writes_a_suite_that_passes_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let _guard = redacting(&[dir.path(), state.path()]).bind_to_scope();
    let out = run(dir.path(), state.path(), &["init", "project"]);
    assert_eq!(out.status.code(), Some(0), "{}", printed(&out));
    assert_snapshot!("init", printed(&out));
    let project = dir.path().join("project");
    assert_eq!(
        files_under(&project),
        [
            "scenarios/bash.yaml",
            "scenarios/edit.yaml",
            "scenarios/find.yaml",
            "scenarios/fixtures/starter/README.md",
            "scenarios/fixtures/starter/notes.txt",
            "scenarios/fixtures/starter/src/greet.py",
            "scenarios/grep.yaml",
            "scenarios/harness.yaml",
            "scenarios/ls.yaml",
            "scenarios/read.yaml",
            "scenarios/write.yaml",
        ]
    );
    // It passes on the first run, one scenario per tool, and checks clean.
    let out = run(&project, state.path(), &["check"]);
    assert_eq!(
        (out.status.code(), texts(&out).0.as_str()),
        (Some(0), "7 scenarios OK\n")
    );
    let out = run(&project, state.path(), &["run", "--jobs", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", printed(&out));
    assert_snapshot!("init_then_run", printed(&out));
    // A second init refuses and changes nothing; so does one into a
    // directory where only one of the files exists.
    std::fs::write(project.join("scenarios/read.yaml"), "mine\n").unwrap();
    let out = run(dir.path(), state.path(), &["init", "project"]);
    assert_eq!(out.status.code(), Some(2), "{}", printed(&out));
    assert_snapshot!("init_refuses_to_overwrite", printed(&out));
    assert_eq!(
        std::fs::read_to_string(project.join("scenarios/read.yaml")).unwrap(),
        "mine\n"
    );
    let other = dir.path().join("other");
    std::fs::create_dir_all(other.join("scenarios")).unwrap();
    std::fs::write(other.join("scenarios/ls.yaml"), "mine\n").unwrap();
    let out = run(&other, state.path(), &["init"]);
    assert_eq!(out.status.code(), Some(2), "{}", printed(&out));
    assert_eq!(files_under(&other), ["scenarios/ls.yaml"]);
}

#[test]
fn completions_are_printed_for_each_shell() {
    let dir = tempfile::tempdir().unwrap();
    for (shell, marker) in [
        ("bash", "_harness()"),
        ("zsh", "#compdef harness"),
        ("fish", "complete -c harness"),
        ("elvish", "edit:completion:arg-completer[harness]"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let out = run(dir.path(), dir.path(), &["completions", shell]);
        let (stdout, stderr) = texts(&out);
        assert_eq!(
            (out.status.code(), stderr.as_str()),
            (Some(0), ""),
            "{shell}"
        );
        assert!(stdout.contains(marker), "{shell}: no {marker}");
        // The script knows the commands and the flags of this version.
        for word in ["init", "completions", "last-failed", "exclude", "exact"] {
            assert!(stdout.contains(word), "{shell}: no {word}");
        }
    }
    let out = run(dir.path(), dir.path(), &["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
}

/// Issue 42 item 5: a server's hostile tools (`${HOME}` in an example, a
/// name with a line break, a name of 10 KB) made `init --mcp` write a
/// suite that did not load, or half of one (file name too long after some
/// files were written, and a rerun was then refused). The suite is
/// written whole and loads.
#[test]
fn init_mcp_writes_a_suite_that_loads_from_hostile_tools() {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let out = run(
        dir.path(),
        state.path(),
        &["init", "proj", "--mcp", &mcp_fixture(), "hostile-tools"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", printed(&out));
    let project = dir.path().join("proj");
    assert_eq!(
        files_under(&project),
        [
            "scenarios/harness.yaml".to_owned(),
            "scenarios/line_break.yaml".to_owned(),
            format!("scenarios/{}.yaml", "t".repeat(64)),
            "scenarios/vars.yaml".to_owned(),
        ]
    );
    let out = run(&project, state.path(), &["check"]);
    assert_eq!(
        (out.status.code(), texts(&out).0.as_str()),
        (Some(0), "3 scenarios OK\n"),
        "{}",
        printed(&out)
    );
    // A command the suite's harness.yaml could not hold is refused before
    // the server starts.
    let out = run(
        dir.path(),
        state.path(),
        &["init", "other", "--mcp", "sh", "-c", "cat ${HOME}/x"],
    );
    assert_eq!(
        (out.status.code(), texts(&out).1.as_str()),
        (
            Some(2),
            "error: the command holds `${HOME}`, which the suite's `harness.yaml` cannot: a \
             server's command knows only `${workspace}`, `${dir}` and `${harness}` \
             (docs/scenarios.md); use the value itself, or a variable of the shell (`$HOME`)\n"
        )
    );
    assert!(!dir.path().join("other").exists());
}

/// Issue 42 item 10: `harness init` wrote through a `DIR/scenarios` that
/// is a symlink, so the files landed outside `DIR`. It refuses, and
/// writes nothing anywhere.
#[test]
fn init_never_writes_through_a_symlinked_scenarios_folder() {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(dir.path().join("proj")).unwrap();
    std::os::unix::fs::symlink("../outside", dir.path().join("proj/scenarios")).unwrap();
    let out = run(dir.path(), state.path(), &["init", "proj"]);
    assert_eq!(
        (out.status.code(), texts(&out).1),
        (
            Some(2),
            "error: proj/scenarios is a symlink; harness init does not write through links \
             (remove it, or choose another directory)\n"
                .to_owned()
        )
    );
    assert_eq!(files_under(&outside), Vec::<String>::new());
    assert_eq!(
        std::fs::read_dir(dir.path().join("proj"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect::<Vec<_>>(),
        ["scenarios"]
    );
}
