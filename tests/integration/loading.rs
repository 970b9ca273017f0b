//! Loading scenario and suite files end to end (`harness check`, `run`,
//! `schema`): every problem of a file, each at the node it concerns; the
//! JSON Schema and the loader agreeing; limits on numbers, sizes and
//! nesting; variables in expectations.

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Output;

use insta::assert_snapshot;
use pretty_assertions::assert_eq;
use serde::Deserialize;
use serde_json::Value;

fn loading() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/loading")
}

fn harness_in(dir: &Path, args: &[&str]) -> Output {
    let tmp = tempfile::tempdir().unwrap();
    Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .current_dir(dir)
        .env("TMPDIR", tmp.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `harness check FILE` in the loading fixtures: its exit code and lines.
fn check(file: &str) -> (Option<i32>, Vec<String>) {
    let out = harness_in(&loading(), &["check", file]);
    (
        out.status.code(),
        stdout(&out).lines().map(str::to_owned).collect(),
    )
}

/// The `FILE:LINE:COL: PATH` of each problem line.
fn places(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l.starts_with("broken/") || l.starts_with("valid/") || l.starts_with('/'))
        .map(|l| {
            let mut parts = l.splitn(5, ':');
            let place: Vec<&str> = parts.by_ref().take(4).collect();
            place.join(":")
        })
        .collect()
}

#[test]
fn problems_in_the_middle_of_a_file_are_placed_at_their_nodes() {
    let (code, lines) = check("broken/middle.yaml");
    assert_eq!(code, Some(2));
    assert_eq!(
        places(&lines),
        [
            // missing fixture: the fixture's name
            "broken/middle.yaml:4:12: workspace.fixture",
            // duplicate key: the second key
            "broken/middle.yaml:7:5: workspace.files",
            // wrong type (`lines: -1`): the value
            "broken/middle.yaml:11:22: model[0].expect.lines",
            // unknown key: the key
            "broken/middle.yaml:13:5: model[1]",
            // `parallel: []`: the empty list
            "broken/middle.yaml:14:15: model[2].parallel",
            // `${var}` before its capture, in args: the string
            "broken/middle.yaml:16:19: model[3].args.path",
            // bad regex: the pattern
            "broken/middle.yaml:17:24: model[3].expect.matches",
            // `${var}` before its capture, in an expectation: the string
            "broken/middle.yaml:17:39: model[3].expect.contains",
            // a checked file outside the workspace: its path
            "broken/middle.yaml:24:5: expect.files[\"/etc/hostname\"]",
        ]
    );
    assert_snapshot!("check_middle", lines.join("\n"));
}

#[test]
fn check_lists_every_problem_of_every_document() {
    let (code, lines) = check("broken/every_problem.yaml");
    assert_eq!(code, Some(2));
    assert_snapshot!("check_every_problem", lines.join("\n"));
}

#[test]
fn an_empty_file_is_a_problem() {
    assert_eq!(
        check("broken/empty.yaml"),
        (
            Some(2),
            vec![
                "broken/empty.yaml:1:1: the file holds no scenario (it is empty or only \
                 comments); write one, or remove the file"
                    .to_owned(),
                "1 problem found (0 valid scenarios)".to_owned()
            ]
        )
    );
}

#[test]
fn workspace_and_checked_file_problems_are_load_errors() {
    let cases = [
        (
            "broken/duplicate_file.yaml",
            vec!["broken/duplicate_file.yaml:5:5: workspace.files"],
        ),
        (
            "broken/symlink_parent.yaml",
            vec!["broken/symlink_parent.yaml:4:5: workspace.files[\"l/existing.txt\"]"],
        ),
        (
            "broken/setuid_mode.yaml",
            vec!["broken/setuid_mode.yaml:3:43: workspace.files[\"tool.sh\"].mode"],
        ),
        (
            "broken/checked_file_outside.yaml",
            vec![
                "broken/checked_file_outside.yaml:5:5: expect.files[\"/etc/hostname\"]",
                "broken/checked_file_outside.yaml:6:5: expect.files[\"../../../../etc/passwd\"]",
                "broken/checked_file_outside.yaml:7:5: expect.files[\"/dev/zero\"]",
            ],
        ),
        (
            "broken/huge_repeat.yaml",
            vec![
                "broken/huge_repeat.yaml:3:36: workspace.files[\"big.txt\"].times",
                "broken/huge_repeat.yaml:4:41: workspace.files[\"bigger.txt\"].times",
                // Only the type error: not also "`repeat` needs `times`".
                "broken/huge_repeat.yaml:5:38: workspace.files[\"float.txt\"].times",
            ],
        ),
        (
            "broken/retry_in_retry.yaml",
            vec!["broken/retry_in_retry.yaml:7:7: model[0].retry.retry"],
        ),
    ];
    for (file, want) in cases {
        let (code, lines) = check(file);
        assert_eq!(
            (code, places(&lines)),
            (Some(2), want.iter().map(ToString::to_string).collect()),
            "{lines:#?}"
        );
    }
    let (_, lines) = check("broken/huge_repeat.yaml");
    assert_snapshot!("check_huge_repeat", lines.join("\n"));
}

#[test]
fn valid_scenarios_with_variables_a_bom_and_raw_args_pass() {
    let out = harness_in(&loading(), &["run", "valid"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let summary = text.lines().last().unwrap_or_default();
    assert_eq!(
        summary.split(" in ").next(),
        Some("3 scenarios: 3 passed, 0 failed, 0 skipped"),
        "{text}"
    );
}

#[test]
fn an_expectation_sees_the_variables_of_its_call() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("wrong.yaml");
    std::fs::write(
        &file,
        "name: wrong\nworkspace:\n  files:\n    a.txt: \"alpha\\n\"\nmodel:\n  - call: read\n    \
         args: { path: a.txt }\n    capture: { word: '(\\w+)' }\n  - call: read\n    \
         args: { path: a.txt }\n    expect: { contains: \"${word}-${workspace}\" }\n",
    )
    .unwrap();
    let out = harness_in(dir.path(), &["run", "wrong.yaml"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    // The failure shows the expectation expanded: the captured word, and
    // a workspace path (not the literal `${workspace}`).
    let expected = text
        .lines()
        .find(|l| l.trim_start().starts_with("expected:"))
        .unwrap_or_default()
        .to_owned();
    assert_eq!(
        expected.trim(),
        "expected: text containing \"alpha-/workspace\"",
        "{text}"
    );
}

#[test]
fn deeply_nested_yaml_is_refused_at_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let depth = 100_000;
    // Flow brackets: the scanner stops at its own bound, past 128 levels.
    std::fs::write(
        dir.path().join("flow.yaml"),
        format!("model: {}{}\n", "[".repeat(depth), "]".repeat(depth)),
    )
    .unwrap();
    // Block mappings: the 129th level is refused where it starts.
    let block: String = (0..depth)
        .map(|i| format!("{}k{i}:\n", " ".repeat(i.min(200))))
        .take(300)
        .collect();
    std::fs::write(dir.path().join("block.yaml"), block).unwrap();
    let out = harness_in(dir.path(), &["check", "flow.yaml", "block.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    let message = "the YAML nests deeper than 128 levels; a scenario never needs that much";
    let path: String = (0..127)
        .map(|i| format!("k{i}"))
        .collect::<Vec<_>>()
        .join(".");
    assert_eq!(
        lines[..2],
        [
            format!("block.yaml:129:129: {path}: {message}"),
            format!("flow.yaml:1:263: {message}"),
        ]
    );
}

#[test]
fn numbers_in_the_suite_file_are_checked_where_they_are_written() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("harness.yaml"),
        "tokenizer: o200k\ntimeout: 1e300\njobs: 0\nmax_generated_bytes: 0\nlimits:\n  \
         max_lines: 0\n  bash_timeout: .inf\n  max_log_bytes: 5000000000\n  \
         grep_timeout: 0\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("a.yaml"), "model:\n  - call: ls\n").unwrap();
    for command in ["check", "run"] {
        let out = harness_in(dir.path(), &[command, "."]);
        let all = format!("{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(2), "{all}");
        assert!(
            all.contains(
                "harness.yaml:2:10: timeout: must be a positive number of seconds, at most 86400 \
                 (one day); it is 1e300"
            ),
            "{all}"
        );
    }
    // `check` lists every problem of the suite file, not only the first.
    let out = harness_in(dir.path(), &["check", "."]);
    let found: Vec<String> = stdout(&out)
        .lines()
        .chain(String::from_utf8_lossy(&out.stderr).lines())
        .filter_map(|line| line.split_once("harness.yaml:"))
        .map(|(_, rest)| rest.to_owned())
        .collect();
    assert_eq!(
        found,
        [
            "2:10: timeout: must be a positive number of seconds, at most 86400 (one day); it is \
             1e300",
            "3:7: jobs: must be a whole number from 1 to 1024 (it is 0)",
            "4:22: max_generated_bytes: must be a whole number of bytes from 1 to 4294967296 (4 GiB)",
            "6:14: limits.max_lines: must be a whole number from 1 to 4294967295 (it is 0)",
            "7:17: limits.bash_timeout: must be a positive number of seconds, at most 86400 (one \
             day); it is inf",
            "8:18: limits.max_log_bytes: must be a whole number of bytes from 0 to 4294967296 (4 \
             GiB); it is 5000000000",
            "9:17: limits.grep_timeout: must be a positive number of seconds, at most 86400 (one \
             day); it is 0",
        ]
    );
}

#[test]
fn the_generated_size_limit_comes_from_the_suite_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("harness.yaml"), "max_generated_bytes: 10\n").unwrap();
    std::fs::write(
        dir.path().join("a.yaml"),
        "workspace:\n  files:\n    a.txt: { repeat: \"{n}\", times: 5 }\n    b.txt: \"123456\"\nmodel:\n  - call: ls\n",
    )
    .unwrap();
    let out = harness_in(dir.path(), &["check", "a.yaml"]);
    assert_eq!(
        stdout(&out).lines().next().unwrap_or_default(),
        "a.yaml:4:12: workspace.files[\"b.txt\"]: the inline files of this scenario come to more \
         than 10 bytes (this one: 6); make them smaller, or raise `max_generated_bytes` in \
         harness.yaml"
    );
}

// ---------------------------------------------------------------------------
// The JSON Schema and the loader

fn schema(args: &[&str]) -> jsonschema::Validator {
    let out = harness_in(&loading(), args);
    assert_eq!(out.status.code(), Some(0));
    let schema: Value = serde_json::from_slice(&out.stdout).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

/// The documents of a file as JSON, read by serde_yaml (not the loader),
/// empty documents left out; `None` when it is not YAML at all.
fn documents(file: &Path) -> Option<Vec<Value>> {
    let text = std::fs::read_to_string(file).unwrap();
    // A byte-order mark at the start is not part of the YAML.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut docs = Vec::new();
    for doc in serde_yaml::Deserializer::from_str(text) {
        let value = Value::deserialize(doc).ok()?;
        if !value.is_null() {
            docs.push(value);
        }
    }
    Some(docs)
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "fixtures" {
                yaml_files(&path, out);
            }
        } else if name.ends_with(".yaml") && name != "harness.yaml" && !name.ends_with(".snap.yaml")
        {
            out.push(path);
        }
    }
    out.sort();
}

fn schema_errors(validator: &jsonschema::Validator, file: &Path) -> Vec<String> {
    let Some(docs) = documents(file) else {
        return vec!["not YAML".to_owned()];
    };
    docs.iter()
        .enumerate()
        .flat_map(|(i, doc)| {
            validator
                .iter_errors(doc)
                .map(move |e| format!("document {}: {}: {e}", i + 1, e.instance_path()))
        })
        .collect()
}

#[test]
fn every_valid_scenario_validates_against_the_schema_document_by_document() {
    let validator = schema(&["schema"]);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    yaml_files(&root.join("scenarios"), &mut files);
    for suite in ["passing", "failing", "slow", "snapshots"] {
        yaml_files(&root.join("tests/fixtures/suites").join(suite), &mut files);
    }
    files.push(root.join("tests/fixtures/suites/broken/valid.yaml"));
    yaml_files(&loading().join("valid"), &mut files);
    assert!(files.len() > 80, "{}", files.len());
    for file in &files {
        assert_eq!(
            schema_errors(&validator, file),
            Vec::<String>::new(),
            "{}",
            file.display()
        );
        let out = harness_in(root, &["check", file.to_str().unwrap()]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            file.display(),
            stdout(&out)
        );
    }
    let suite = schema(&["schema", "--suite"]);
    let shipped = documents(&root.join("scenarios/harness.yaml")).unwrap();
    assert!(suite.is_valid(&shipped[0]));
}

#[test]
fn every_broken_fixture_is_refused_by_the_loader_and_structural_ones_by_the_schema() {
    let validator = schema(&["schema"]);
    // Problems the schema cannot state: a missing fixture, a name used
    // before it is captured, a duplicate key (JSON has none), sizes,
    // symlinks, unknown tools, an empty file.
    let semantic_only = [
        "duplicate_file.yaml",
        "empty.yaml",
        "huge_repeat.yaml",
        "symlink_parent.yaml",
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    yaml_files(&loading().join("broken"), &mut files);
    for name in ["semantic.yaml", "syntax.yaml", "unknown_key.yaml"] {
        files.push(root.join("tests/fixtures/suites/broken").join(name));
    }
    for file in &files {
        let out = harness_in(root, &["check", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{}", file.display());
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let errors = schema_errors(&validator, file);
        if semantic_only.contains(&name.as_str()) {
            assert_eq!(errors, Vec::<String>::new(), "{name}");
        } else {
            assert!(!errors.is_empty(), "the schema accepts {name}");
        }
    }
}

#[test]
fn the_schema_states_the_step_rules_the_loader_applies() {
    let validator = schema(&["schema"]);
    let dir = tempfile::tempdir().unwrap();
    // (document, accepted): the schema and the loader must say the same.
    let cases = [
        ("model: [{call: read}]", true),
        ("tools: read-only\nmodel: [{say: hi}]", true),
        (
            "model: [{parallel: [{call: ls}, {call: read, retry: {call: read}}]}]",
            true,
        ),
        (
            "model: [{call: read, expect: {ok: true, error: false}}]",
            true,
        ),
        (
            "model: [{call: read, expect: {ok: false, error: true}}]",
            true,
        ),
        ("model: [{call: read, say: hi}]", false),
        ("model: [{call: read, args: {path: a}, say: hi}]", false),
        ("model: [{call: read, expect: {ok: true}, say: hi}]", false),
        (
            "model: [{call: read, args: {path: a}, parallel: [{call: ls}]}]",
            false,
        ),
        ("model: [{parallel: []}]", false),
        ("model: []", false),
        ("model: [{say: hi, args: {}}]", false),
        ("model: [{parallel: [{call: ls}], id: x}]", false),
        (
            "model: [{call: read, retry: {call: read, retry: {call: ls}}}]",
            false,
        ),
        ("model: [{call: read, args: {}, raw_args: '{}'}]", false),
        (
            "model: [{call: read, expect: {ok: true, error: true}}]",
            false,
        ),
        (
            "model: [{call: read, expect: {ok: true, error: 'x'}}]",
            false,
        ),
        (
            "workspace: {files: {a: {text: x, base64: eA==}}}\nmodel: [{call: ls}]",
            false,
        ),
        (
            "workspace: {files: {a: {repeat: x}}}\nmodel: [{call: ls}]",
            false,
        ),
        ("limits: {max_lines: 0}\nmodel: [{call: ls}]", false),
        ("servers: {fx: {command: [x]}}\nmodel: [{fuzz: fx}]", true),
        (
            "servers: {fx: {command: [x]}}\nmodel: [{fuzz: {server: fx, tools: [a], cases: 5, seed: 1, timeout: 0.5}, id: f, expect: {error: true}}]",
            true,
        ),
        (
            "servers: {fx: {command: [x]}}\nmodel: [{fuzz: fx, call: ls}]",
            false,
        ),
        (
            "servers: {fx: {command: [x]}}\nmodel: [{fuzz: fx, args: {}}]",
            false,
        ),
        (
            "servers: {fx: {command: [x]}}\nmodel: [{fuzz: fx, server: fx}]",
            false,
        ),
        (
            "servers: {fx: {command: [x]}}\nmodel: [{fuzz: {server: fx, cases: 0}}]",
            false,
        ),
        (
            "servers: {fx: {command: [x]}}\nmodel: [{fuzz: {server: fx, timeout: 0}}]",
            false,
        ),
        (
            "servers: {fx: {command: [x]}}\nmodel: [{fuzz: {server: fx, tools: []}}]",
            false,
        ),
    ];
    let mut verdicts = Vec::new();
    for (i, (yaml, _)) in cases.iter().enumerate() {
        let doc: Value = serde_yaml::from_str(yaml).unwrap();
        let file = dir.path().join(format!("case{i}.yaml"));
        std::fs::write(&file, yaml).unwrap();
        let loaded = harness_in(dir.path(), &["check", file.to_str().unwrap()])
            .status
            .success();
        verdicts.push((*yaml, validator.is_valid(&doc), loaded));
    }
    let want: Vec<(&str, bool, bool)> = cases.iter().map(|(y, ok)| (*y, *ok, *ok)).collect();
    assert_eq!(verdicts, want);
}
