//! Every figure of a run except a duration is the same on every run,
//! whatever `TMPDIR` is (short, long, reached through a symlink) and
//! whatever `--jobs` is: the model sees the workspace as `/workspace` and
//! bash's full-output files under `/scratch`, so no temp path reaches a
//! priced text (docs/reports.md, "What varies between runs").

use std::path::Path;
use std::path::PathBuf;
use std::process::Child;
use std::process::Command;
use std::process::Output;
use std::process::Stdio;

use pretty_assertions::assert_eq;
use serde_json::Value;

/// The shipped scenarios that put paths in what the model reads.
const PATH_SUITE: [&str; 3] = ["scenarios/bash", "scenarios/paths", "scenarios/chains"];

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `harness ARGS` in the repository, with `tmp` as its `TMPDIR`.
fn harness(tmp: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_harness"));
    command
        .args(args)
        .current_dir(repo())
        .env("TMPDIR", tmp)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

fn finished(child: Child) -> Output {
    child.wait_with_output().unwrap()
}

fn assert_exit(out: &Output, code: i32, what: &str) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{what}\n--- stdout\n{}--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// run.json without what may differ between runs: every `duration_ms`,
/// and when each MCP server started and how long that took.
fn figures(run_json: &Path) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for key in ["duration_ms", "started_at_ms", "startup_ms"] {
                    map.remove(key);
                }
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut value: Value =
        serde_json::from_str(&std::fs::read_to_string(run_json).unwrap()).unwrap();
    strip(&mut value);
    value
}

/// Temp dirs for the runs: a short one, a long one in the shape of a
/// macOS temp dir, and a short name that is a symlink to a long one.
struct TempDirs {
    _base: tempfile::TempDir,
    short: PathBuf,
    long: PathBuf,
    linked: PathBuf,
}

fn temp_dirs() -> TempDirs {
    let base = tempfile::tempdir().unwrap();
    let short = base.path().join("a");
    let long = base
        .path()
        .join("a-much-longer-directory-name/nested/deeper/var/folders/zz/2xq9k1_n4v8bd0000gn/T");
    let target = base.path().join("elsewhere/with/another/length/T");
    let linked = base.path().join("link");
    for dir in [&short, &long, &target] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::os::unix::fs::symlink(&target, &linked).unwrap();
    TempDirs {
        _base: base,
        short,
        long,
        linked,
    }
}

fn left_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect()
}

#[test]
fn the_shipped_suite_has_the_same_figures_under_any_tmpdir_and_any_jobs() {
    let dirs = temp_dirs();
    let reports = tempfile::tempdir().unwrap();
    let runs = [
        ("short TMPDIR, --jobs 1", &dirs.short, "1"),
        ("long TMPDIR, --jobs 1", &dirs.long, "1"),
        ("TMPDIR through a symlink, --jobs 4", &dirs.linked, "4"),
    ];
    let mut all = Vec::new();
    for (i, (what, tmp, jobs)) in runs.iter().enumerate() {
        let json = reports.path().join(format!("run{i}.json"));
        let json_arg = json.to_str().unwrap();
        let out = finished(
            harness(
                tmp,
                &["run", "scenarios/", "--jobs", jobs, "--json", json_arg],
            )
            .spawn()
            .unwrap(),
        );
        assert_exit(&out, 0, what);
        // Workspaces, scratch directories and bash's logs are all gone.
        assert_eq!(left_in(tmp), Vec::<PathBuf>::new(), "{what}");
        all.push((*what, figures(&json)));
    }
    let (_, first) = &all[0];
    assert!(
        first["totals"]["result_tokens"].as_u64().unwrap() > 0,
        "{first}"
    );
    for (what, figures) in &all[1..] {
        assert_eq!(figures, first, "{what} differs from {}", all[0].0);
    }
}

#[test]
fn a_baseline_saved_a_moment_before_holds_at_plus_zero_20_times_out_of_20() {
    let dirs = temp_dirs();
    let reports = tempfile::tempdir().unwrap();
    let baseline = reports.path().join("baseline.json");
    let first = reports.path().join("first.json");
    let mut args: Vec<&str> = vec!["run"];
    args.extend(PATH_SUITE);
    let mut save = args.clone();
    save.extend([
        "--save-baseline",
        baseline.to_str().unwrap(),
        "--json",
        first.to_str().unwrap(),
    ]);
    assert_exit(
        &finished(harness(&dirs.short, &save).spawn().unwrap()),
        0,
        "saving the baseline",
    );
    let mut expected = figures(&first);
    assert_eq!(
        expected.as_object_mut().unwrap().remove("comparison"),
        Some(Value::Null)
    );
    let tmps = [&dirs.short, &dirs.long, &dirs.linked];
    let mut held = 0;
    // Two runs at a time, each in its own TMPDIR, with --jobs 1 or 4.
    for pair in (0..20).collect::<Vec<usize>>().chunks(2) {
        let started: Vec<(usize, PathBuf, Child)> = pair
            .iter()
            .map(|&i| {
                let tmp = tmps[i % tmps.len()].join(format!("run{i}"));
                std::fs::create_dir_all(&tmp).unwrap();
                let json = reports.path().join(format!("run{i}.json"));
                let mut gated = args.clone();
                gated.extend([
                    "--jobs",
                    if i % 2 == 0 { "1" } else { "4" },
                    "--baseline",
                    baseline.to_str().unwrap(),
                    "--gate",
                    "tokens=+0",
                    "--gate",
                    "output_tokens=+0",
                    "--json",
                    json.to_str().unwrap(),
                ]);
                let child = harness(&tmp, &gated).spawn().unwrap();
                (i, json, child)
            })
            .collect();
        for (i, json, child) in started {
            let out = finished(child);
            assert_exit(&out, 0, &format!("run {i} against the baseline"));
            let mut got = figures(&json);
            let comparison = got.as_object_mut().unwrap().remove("comparison").unwrap();
            assert_eq!(comparison["passed"], Value::Bool(true), "run {i}");
            // Not only within the gates: equal, figure for figure, apart
            // from the gates the run was given.
            got["gates"] = expected["gates"].clone();
            assert_eq!(got, expected, "run {i}");
            held += 1;
        }
    }
    assert_eq!(held, 20);
}
