use std::path::Path;
use std::time::Duration;

use pretty_assertions::assert_eq;

use super::fixture::repeat_len;
use super::scenario::OpenCall;
use super::*;
use crate::agent::FauxArgs;
use crate::agent::FauxStep;

/// The scenarios of `text` (as `s/x.yaml`, no suite) and each problem as
/// it is printed; for the other test files of the loader too.
pub(super) fn load(text: &str) -> (Vec<Scenario>, Vec<String>) {
    let (scenarios, errors) = load_text(Path::new("s/x.yaml"), text, &Suite::default());
    (scenarios, errors.iter().map(ToString::to_string).collect())
}

/// Every call of `s`'s script in order, as `(id, tool, arguments)`.
pub(super) fn script_calls(s: &Scenario) -> Vec<(String, String, FauxArgs)> {
    s.script
        .steps
        .iter()
        .flat_map(|step| match step {
            FauxStep::Calls(calls) => calls.clone(),
            FauxStep::Say(_) => Vec::new(),
        })
        .map(|c| (c.id, c.name, c.args))
        .collect()
}

#[test]
fn a_complete_scenario_becomes_a_script_and_checks() {
    let (scenarios, errors) = load(
        "name: chain\ntags: [a]\ntools: readonly\nlimits: { max_lines: 10 }\nworkspace:\n  files:\n    a.txt: hi\n    b.bin: { base64: \"aGk=\" }\n    c.log: { repeat: \"l{n}\\n\", times: 3 }\n    d.txt: { text: \"x\", bom: true, mode: \"600\" }\nmodel:\n  - call: grep\n    args: { pattern: hi }\n    capture: { file: '^(\\S+?):' }\n    expect: { ok: true, contains: [hi, a.txt] }\n  - parallel:\n      - call: read\n        args: { path: \"${file}\" }\n      - call: ls\n        id: listing\n  - say: done\n",
    );
    assert_eq!(errors, Vec::<String>::new());
    let s = &scenarios[0];
    assert_eq!(s.name, "chain");
    assert_eq!(builtins(s), vec!["read", "grep", "find", "ls"]);
    assert_eq!(s.limits.max_lines, 10);
    assert_eq!(s.limits.max_bytes, 51200);
    assert_eq!(s.script.steps.len(), 3);
    match &s.script.steps[1] {
        FauxStep::Calls(calls) => {
            assert_eq!(calls[0].id, "call_2_1");
            assert_eq!(calls[1].id, "listing");
            assert_eq!(
                calls[0].args,
                FauxArgs::Json(serde_json::json!({"path": "${file}"}))
            );
        }
        other => panic!("{other:?}"),
    }
    let files: Vec<(&str, &FileContent)> = s
        .workspace
        .files
        .iter()
        .map(|(p, c)| (p.as_str(), c))
        .collect();
    assert_eq!(
        files[1],
        (
            "b.bin",
            &FileContent::Bytes {
                data: b"hi".to_vec(),
                mode: None
            }
        )
    );
    // A generated file is made when the workspace is built.
    assert_eq!(files[2].0, "c.log");
    assert!(matches!(
        files[2].1,
        FileContent::Generated { times: 3, .. }
    ));
    assert_eq!(files[2].1.bytes().as_deref(), Some(&b"l1\nl2\nl3\n"[..]));
    assert_eq!(
        files[3],
        (
            "d.txt",
            &FileContent::Bytes {
                data: b"\xEF\xBB\xBFx".to_vec(),
                mode: Some(0o600)
            }
        )
    );
    assert_eq!(s.call_checks["call_1_1"].label, "step 1 (grep)");
    assert_eq!(s.snapshot_file, Path::new("s/x.snap.yaml"));
}

#[test]
fn defaults_name_tools_ids_and_timeout() {
    let (scenarios, errors) = load("model:\n  - call: read\n    args: { path: a }\n");
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(scenarios[0].name, "s/x");
    assert_eq!(builtins(&scenarios[0]).len(), 7);
    assert!(scenarios[0].confine);
    assert_eq!(scenarios[0].timeout, Duration::from_secs(60));
    assert_eq!(scenarios[0].system, crate::agent::DEFAULT_SYSTEM_PROMPT);
}

#[test]
fn unknown_keys_are_located_with_a_hint() {
    let (_, errors) = load("name: x\nmodel:\n  - call: read\n    agrs: { path: a }\n");
    assert_eq!(
        errors,
        vec![
            "s/x.yaml:4:5: model[0]: unknown field `agrs`, expected one of `call`, `parallel`, \
             `say`, `list_resources`, `read_resource`, `server`, `list_prompts`, `get_prompt`, \
             `fuzz`, `id`, `args`, `raw_args`, `expect`, `capture`, `retry`, `recorded`, \
             `cancel_after_ms`; did you mean `args`?"
        ]
    );
}

#[test]
fn wrong_types_and_syntax_errors_are_located() {
    let (_, errors) = load("model:\n  - call: read\n    expect: { lines: many }\n");
    assert_eq!(
        errors,
        vec![
            "s/x.yaml:3:22: model[0].expect.lines: must be a whole number ≥ 0 (it is the string `many`)"
        ]
    );
    let (_, errors) = load("model: [\n  - call: read\n");
    assert_eq!(errors.len(), 1);
    assert!(errors[0].starts_with("s/x.yaml:"), "{}", errors[0]);
    assert!(errors[0].contains("YAML syntax error"), "{}", errors[0]);
}

#[test]
fn unknown_tools_are_errors_unless_the_call_expects_an_error() {
    let (_, errors) = load("model:\n  - call: grpe\n    args: { pattern: x }\n");
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].starts_with("s/x.yaml:2:11: model[0].call: unknown tool `grpe`"),
        "{}",
        errors[0]
    );
    assert!(errors[0].contains("did you mean `grep`?"), "{}", errors[0]);
    let (scenarios, errors) =
        load("model:\n  - call: grpe\n    expect: { error: \"not found\" }\n");
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(scenarios.len(), 1);
    let (_, errors) = load("tools: [read, grpe]\nmodel:\n  - call: read\n");
    assert!(errors[0].contains("unknown tool `grpe`"), "{errors:?}");
    let (_, errors) = load("tools: codng\nmodel:\n  - call: read\n");
    assert!(errors[0].contains("did you mean `coding`?"), "{errors:?}");
}

#[test]
fn variables_must_be_captured_before_use() {
    let (_, errors) = load(
        "model:\n  - call: read\n    args: { path: \"${file}\" }\n  - call: grep\n    args: { pattern: x }\n    capture: { file: '(.*)' }\n",
    );
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0]
            .starts_with("s/x.yaml:3:19: model[0].args.path: step 1 (read): `${file}` is used before it is captured"),
        "{}",
        errors[0]
    );
    // Captures of a call are visible to its retries and to later steps.
    let (_, errors) = load(
        "model:\n  - call: grep\n    args: { pattern: x }\n    capture: { f: '(.*)' }\n    retry: { call: read, args: { path: \"${f}\" } }\n  - call: read\n    args: { path: \"${f}/${workspace}\" }\n",
    );
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn workspace_paths_fixtures_and_file_objects_are_checked() {
    let (_, errors) = load("workspace:\n  files:\n    ../evil: x\nmodel:\n  - call: read\n");
    assert_eq!(
        errors,
        vec![
            "s/x.yaml:3:5: workspace.files[\"../evil\"]: paths must be relative and may not contain `..`"
        ]
    );
    // Issue 21: a NUL in a path failed the scenario later, the NUL
    // printed raw.
    let (_, errors) = load(
        "workspace:\n  files:\n    \"a\\0b.txt\": x\nmodel:\n  - call: read\nexpect:\n  files:\n    \"c\\0\": x\n",
    );
    assert_eq!(
        errors,
        vec![
            "s/x.yaml:3:5: workspace.files[\"a\\0b.txt\"]: a path cannot contain a NUL character (`\\0`): no file name can",
            "s/x.yaml:8:5: expect.files[\"c\\0\"]: a path cannot contain a NUL character (`\\0`): no file name can"
        ]
    );
    let (_, errors) =
        load("workspace:\n  files:\n    a: { text: x, base64: eA== }\nmodel:\n  - call: read\n");
    assert!(errors[0].contains("give exactly one of"), "{errors:?}");
    let (_, errors) = load("workspace:\n  files:\n    a: { repeat: x }\nmodel:\n  - call: read\n");
    assert!(errors[0].contains("`repeat` needs `times`"), "{errors:?}");
    let (_, errors) = load("workspace:\n  fixture: nowhere\nmodel:\n  - call: read\n");
    assert!(
        errors[0]
            .contains("fixture `nowhere` not found: looked for the directory fixtures/nowhere"),
        "{errors:?}"
    );
}

#[test]
fn steps_need_exactly_one_kind_and_say_is_last() {
    let (_, errors) = load("model:\n  - call: read\n    say: hi\n");
    assert!(
        errors[0]
            .contains("step 1 must have exactly one of `call`, `parallel`, `say`, `list_resources`, `read_resource`, `list_prompts`, `get_prompt` or `fuzz` (it has 2)"),
        "{errors:?}"
    );
    let (_, errors) = load("model:\n  - say: hi\n  - call: read\n");
    assert!(errors[0].contains("the run ends after `say`"), "{errors:?}");
    let (_, errors) = load("model:\n  - parallel: [ { call: read } ]\n    args: {}\n");
    assert!(
        errors[0].contains("belong to each call inside `parallel`"),
        "{errors:?}"
    );
    let (_, errors) = load("model: []\n");
    assert_eq!(
        errors,
        ["s/x.yaml:1:8: model: has no steps; give at least one `call`, `parallel` or `say` step"]
    );
}

#[test]
fn bad_regexes_and_duplicate_ids() {
    let (_, errors) = load("model:\n  - call: read\n    expect: { matches: \"(\" }\n");
    assert!(
        errors[0]
            == "s/x.yaml:3:24: model[0].expect.matches: invalid regex `(`: unclosed group; \
                      regexes use Rust's regex syntax",
        "{errors:?}"
    );
    let (_, errors) = load("model:\n  - call: read\n    id: a\n  - call: read\n    id: a\n");
    assert!(
        errors[0].contains("call id `a` is used twice"),
        "{errors:?}"
    );
}

#[test]
fn multi_document_files_keep_valid_documents() {
    let (scenarios, errors) = load(
        "model:\n  - call: read\n---\nmodel:\n  - call: read\n    nope: 1\n---\nname: third\nmodel:\n  - call: ls\n",
    );
    assert_eq!(
        scenarios
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>(),
        vec!["s/x#1", "third"]
    );
    assert_eq!(errors.len(), 1);
    assert!(errors[0].starts_with("s/x.yaml:6:5:"), "{errors:?}");
    assert_eq!(scenarios[1].snapshot_prefix.as_deref(), Some("third"));
}

#[test]
fn a_broken_stream_keeps_the_documents_before_the_break() {
    let (_, errors) = load("name: a\n  model: [\n");
    assert_eq!(errors.len(), 1, "{errors:?}");
    let (scenarios, errors) = load("model:\n  - call: read\n---\n: : :\n---\nmodel: [1, 2\n");
    assert_eq!(scenarios.len(), 1);
    assert_eq!(
        errors,
        [
            "s/x.yaml:4:1: unknown field ``, expected one of `name`, `description`, `tags`, \
             `tools`, `servers`, `limits`, `confine`, `system`, `workspace`, `model`, `expect`, `skip`, `replay`, `faults`, `bash`, `max_turns`, `agent`, `prompt`, `sandbox`, `sampling`, `elicitation`, `roots`",
            "s/x.yaml:4:1: missing field `model`; give the faux model's script, `model:` with at \
             least one step",
            "s/x.yaml:7:1: YAML syntax error: while parsing a flow sequence, expected ',' or ']'; \
             check the brackets, quotes and indentation around here"
        ]
    );
}

#[test]
fn a_retry_is_marked_on_its_check() {
    let (scenarios, errors) = load(
        "model:\n  - call: read\n    args: { path: a }\n    expect: { ok: true }\n    retry:\n      - call: read\n        args: { path: b }\n        expect: { ok: true }\n",
    );
    assert_eq!(errors, Vec::<String>::new());
    let checks: Vec<(&str, &str, bool)> = scenarios[0]
        .call_checks
        .iter()
        .map(|(id, c)| (id.as_str(), c.label.as_str(), c.retry))
        .collect();
    assert_eq!(
        checks,
        [
            ("call_1_1", "step 1 (read)", false),
            ("call_1_1_retry1", "step 1 (read), retry 1", true)
        ]
    );
}

#[test]
fn repeat_sizes_are_counted_without_making_the_text() {
    for template in ["", "x", "{n}", "line {n} of {n}\n"] {
        for times in [0u64, 1, 9, 10, 11, 99, 100, 1234] {
            let made: usize = (1..=times)
                .map(|n| template.replace("{n}", &n.to_string()).len())
                .sum();
            assert_eq!(
                repeat_len(template, times),
                Some(made as u64),
                "{template:?} × {times}"
            );
        }
    }
    assert_eq!(repeat_len("x", u64::MAX), Some(u64::MAX));
    assert_eq!(repeat_len("xx", u64::MAX), None);
    assert_eq!(repeat_len("{n}", u64::MAX), None);
}

#[test]
fn variables_in_expectations_must_be_bound_when_the_call_is_sent() {
    let (_, errors) = load(
        "model:\n  - call: read\n    args: { path: a }\n    capture: { own: '(.*)' }\n    expect: { contains: \"${own}\" }\n  - call: read\n    args: { path: a }\n    expect: { details: { path: \"${own}\" }, equals: \"$${literal}\" }\nexpect:\n  files:\n    a: { contains: \"${own} ${later}\" }\n",
    );
    assert_eq!(
        errors,
        [
            "s/x.yaml:5:25: model[0].expect.contains: step 1 (read): `${own}` is used before it \
             is captured; capture it in an earlier step with `capture: { own: REGEX }` (known \
             here: ${workspace})",
            "s/x.yaml:11:20: expect.files.a.contains: `${later}` is used before it is captured; \
             capture it in a step with `capture: { later: REGEX }` (known here: ${own}, \
             ${workspace})"
        ]
    );
}

#[test]
fn the_log_cap_and_the_grep_budget_come_from_limits() {
    let (s, errors) = load(
        "model:\n  - call: ls\nlimits: { max_log_bytes: 0, grep_timeout: 2.5, bash_timeout: 9 }\n",
    );
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(
        (
            s[0].limits.max_log_bytes,
            s[0].limits.grep_timeout,
            s[0].limits.bash_timeout
        ),
        (0, Some(2.5), Some(9.0))
    );
    // Unset, the tools' defaults stay.
    let (s, _) = load("model:\n  - call: ls\n");
    assert_eq!(
        (s[0].limits.max_log_bytes, s[0].limits.grep_timeout),
        (64 * 1024 * 1024, Some(30.0))
    );
}

/// The keys of `limits:` are the tool layer's limits, each under its own
/// name: every one can be set, and sets its own field (the suite's, then
/// the scenario's over it).
#[test]
fn every_tool_limit_is_a_key_of_limits_and_sets_its_own_field() {
    let fields = serde_json::to_value(crate::tools::Limits::default()).unwrap();
    let mut fields: Vec<&str> = fields
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut keys = crate::scenario::model::LimitsSpec::KEYS.to_vec();
    fields.sort_unstable();
    keys.sort_unstable();
    assert_eq!(keys, fields);
    let suite = Suite::from_text(
        Path::new("harness.yaml"),
        "limits: { max_lines: 1, max_bytes: 2, grep_max_line: 3, grep_limit: 4, find_limit: 5, \
         ls_limit: 6, bash_timeout: 7, max_log_bytes: 8, grep_timeout: 9 }\n",
        &|_| Vec::new(),
    )
    .unwrap();
    let (s, errors) = load_text(
        Path::new("s/x.yaml"),
        "model:\n  - call: ls\nlimits: { ls_limit: 60, grep_timeout: 0.5 }\n",
        &suite,
    );
    assert_eq!(errors, []);
    assert_eq!(
        s[0].limits,
        crate::tools::Limits {
            max_lines: 1,
            max_bytes: 2,
            grep_max_line: 3,
            grep_limit: 4,
            find_limit: 5,
            ls_limit: 60,
            bash_timeout: Some(7.0),
            max_log_bytes: 8,
            grep_timeout: Some(0.5),
        }
    );
}

#[test]
fn servers_become_plans_and_tools_entries_in_order() {
    let (scenarios, errors) = load(
        "servers:\n  fs:\n    command: [mcp-server-filesystem, \"${workspace}\", \"${dir}/data\"]\n    env: { LOG_LEVEL: warn }\n    startup_timeout: 5\n    call_timeout: 2.5\n    prefix: fs_\n  web:\n    url: http://127.0.0.1:3001/mcp\n    headers: { Authorization: Bearer x }\n  unused:\n    command: [nothing]\ntools: [read, fs, web/echo]\nmodel:\n  - call: fs_read_text_file\n  - call: echo\n  - call: read\n    args: { path: a }\n",
    );
    assert_eq!(errors, Vec::<String>::new());
    let s = &scenarios[0];
    assert_eq!(builtins(s), ["read"]);
    assert_eq!(
        s.tool_entries,
        [
            ToolEntry::Builtin("read".to_owned()),
            ToolEntry::Server("fs".to_owned()),
            ToolEntry::ServerTool {
                server: "web".to_owned(),
                tool: "echo".to_owned()
            }
        ]
    );
    let dir = std::path::absolute("s").unwrap();
    assert_eq!(
        s.servers,
        [
            ServerPlan {
                name: "fs".to_owned(),
                launch: ServerLaunch::Command {
                    argv: vec![
                        "mcp-server-filesystem".to_owned(),
                        "${workspace}".to_owned(),
                        format!("{}/data", dir.display())
                    ],
                    env: vec![("LOG_LEVEL".to_owned(), "warn".to_owned())],
                },
                startup_timeout: Duration::from_secs(5),
                call_timeout: Some(Duration::from_millis(2500)),
                prefix: "fs_".to_owned(),
                share: false,
                dir: dir.clone(),
                auth: None,
            },
            ServerPlan {
                name: "web".to_owned(),
                launch: ServerLaunch::Url {
                    url: "http://127.0.0.1:3001/mcp".to_owned(),
                    headers: vec![("Authorization".to_owned(), "Bearer x".to_owned())],
                },
                startup_timeout: Duration::from_secs(10),
                call_timeout: None,
                prefix: String::new(),
                share: false,
                dir,
                auth: None,
            },
        ]
    );
    // `echo` is web's one tool; fs_read_text_file waits for fs's list.
    assert_eq!(
        s.open_calls,
        [OpenCall {
            id: "call_1_1".to_owned(),
            label: "step 1 (fs_read_text_file)".to_owned(),
            name: "fs_read_text_file".to_owned()
        }]
    );
}

#[test]
fn bad_servers_and_entries_are_located_with_a_did_you_mean() {
    let (_, errors) = load(
        "servers:\n  fs:\n    env: { A: b }\n  t:\n    command: [x, \"${workspac}\"]\n    startup_timeout: 0\n    call_timeout: -1\n    share: rn\n  both:\n    command: [x]\n    url: http://h/mcp\n  s:\n    command: [x, \"${workspace}\"]\n    share: run\n  \"bad name\":\n    url: https://h/mcp\ntools: [read, fz, fz/x, t/, tt]\nmodel:\n  - call: read\n    args: { path: a }\n",
    );
    assert_eq!(
        errors,
        [
            "s/x.yaml:3:5: servers.fs: server `fs` needs `command` (the program and its \
             arguments, e.g. `command: [mcp-server-time]`) or `url` (http://HOST:PORT/PATH of a \
             running server)",
            "s/x.yaml:5:18: servers.t.command[1]: unknown variable `${workspac}`: a server's \
             command and env know `${workspace}`, `${dir}` and `${harness}`; did you mean \
             `${workspace}`?",
            "s/x.yaml:6:22: servers.t.startup_timeout: must be a positive number of seconds, at \
             most 86400 (one day); it is 0",
            "s/x.yaml:7:19: servers.t.call_timeout: must be a positive number of seconds, at \
             most 86400 (one day); it is -1",
            "s/x.yaml:8:12: servers.t.share: unknown share `rn`: `run` (one process per worker, \
             reused) or `scenario` (one per scenario, the default); did you mean `run`?",
            "s/x.yaml:11:5: servers.both.url: give `command` (a server to start) or `url` (one \
             already running), not both",
            "s/x.yaml:13:18: servers.s.command[1]: a server with `share: run` outlives each \
             scenario's workspace, so its command and env cannot use `${workspace}`; drop \
             `share: run` to start one per scenario",
            "s/x.yaml:15:3: servers[\"bad name\"]: `bad name` cannot name a server: use \
             letters, digits, `_` and `-` (a tool of it is `bad name/TOOL` in `tools`)",
            "s/x.yaml:16:10: servers[\"bad name\"].url: `https://h/mcp` is not an http:// URL: \
             write http://HOST:PORT/PATH (the Streamable HTTP endpoint; https is not built in)",
            "s/x.yaml:17:15: tools[1]: unknown tool `fz` (the tools are read, bash, edit, write, \
             grep, find, ls; the servers are bad name, both, fs, s, t); did you mean `fs`?",
            "s/x.yaml:17:19: tools[2]: unknown server `fz` in `fz/x` (the servers are bad name, \
             both, fs, s, t); did you mean `fs`?",
            "s/x.yaml:17:25: tools[3]: `t/` names no tool: write `t` for all its tools, or \
             `t/TOOL` for one",
            "s/x.yaml:17:29: tools[4]: unknown tool `tt` (the tools are read, bash, edit, write, \
             grep, find, ls; the servers are bad name, both, fs, s, t); did you mean `t`?",
        ]
    );
}

#[test]
fn calls_to_server_tools_are_known_from_their_entries_or_left_to_the_start() {
    let servers = "servers:\n  fs:\n    command: [x]\n    prefix: fs_\n";
    let (_, errors) = load(&format!(
        "{servers}tools: [read, fs/read_text_file]\nmodel:\n  - call: fs_read_text_fil\n"
    ));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with(
            "s/x.yaml:7:11: model[0].call: unknown tool `fs_read_text_fil` (the tools are read, \
             bash, edit, write, grep, find, ls, fs_read_text_file); did you mean \
             `fs_read_text_file`?"
        ),
        "{}",
        errors[0]
    );
    let (scenarios, errors) = load(&format!(
        "{servers}tools: [fs]\nmodel:\n  - call: anything\n  - call: other\n    expect: {{ error: true }}\nexpect:\n  order: [anything, other]\n"
    ));
    assert_eq!(errors, Vec::<String>::new());
    let names: Vec<&str> = scenarios[0]
        .open_calls
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["anything"]);
}

#[test]
fn a_suite_files_servers_serve_its_scenarios_and_a_scenario_replaces_one() {
    let suite = Suite::from_text(
        Path::new("suite/harness.yaml"),
        "servers:\n  time:\n    command: [mcp-server-time]\n    share: run\n  fs:\n    command: [a]\ntools: [read, time]\n", &|_| Vec::new())
    .unwrap();
    let (scenarios, errors) = load_text(
        Path::new("suite/x.yaml"),
        "servers:\n  fs:\n    command: [b, \"${dir}\"]\nmodel:\n  - call: get_current_time\n",
        &suite,
    );
    assert_eq!(errors, Vec::<ScenarioError>::new());
    let s = &scenarios[0];
    assert_eq!(
        (
            s.servers.len(),
            s.servers[0].name.as_str(),
            s.servers[0].share
        ),
        (1, "time", true)
    );
    assert_eq!(
        suite.servers["fs"].launch,
        ServerLaunch::Command {
            argv: vec!["a".to_owned()],
            env: vec![],
        }
    );
    let (scenarios, _) = load_text(
        Path::new("suite/x.yaml"),
        "servers:\n  fs:\n    command: [b, \"${dir}\"]\ntools: [fs]\nmodel:\n  - call: x\n",
        &suite,
    );
    let dir = std::path::absolute("suite").unwrap();
    assert_eq!(
        scenarios[0].servers[0].launch,
        ServerLaunch::Command {
            argv: vec!["b".to_owned(), dir.display().to_string()],
            env: vec![],
        }
    );
    let bad = Suite::from_text(
        Path::new("suite/harness.yaml"),
        "servers:\n  fs:\n    url: ftp://x\ntools: [fz]\n",
        &|_| Vec::new(),
    )
    .unwrap_err();
    let bad: Vec<String> = bad.iter().map(ToString::to_string).collect();
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(bad[1].contains("did you mean `fs`?"), "{bad:?}");
}

/// Every problem of each document, a line each, after a line naming the
/// case.
fn problems_of(cases: &[(&str, &str)]) -> String {
    let mut out = Vec::new();
    for (name, text) in cases {
        out.push(format!("# {name}"));
        let (_, errors) = load(text);
        out.extend(errors);
    }
    out.join("\n")
}

#[test]
fn numbers_and_booleans_are_said_in_the_files_words() {
    // Issue 25: `expected u64`, `expected usize`, "invalid value: integer
    // `-5`, expected u64", and `ok: yes` without a word about YAML 1.2.
    insta::assert_snapshot!(
        "numbers_and_booleans",
        problems_of(&[
            (
                "negative",
                "max_turns: -5\nlimits: { max_lines: -5 }\nmodel:\n  - call: read\n    expect: { lines: -1 }\n"
            ),
            (
                "not a number",
                "limits: { max_bytes: abc }\nmodel:\n  - call: read\n    expect: { max_tokens: 1.5, lines: [1] }\n"
            ),
            (
                "quoted",
                "max_turns: \"5\"\nmodel:\n  - call: read\n    expect: { ok: \"true\", lines: \"-1\" }\n"
            ),
            (
                "yes and off",
                "model:\n  - call: read\n    expect: { ok: yes }\n  - call: read\n    expect: { ok: Off }\n"
            ),
            (
                "too large",
                "model:\n  - call: read\n    expect: { image: { width: 5000000000 } }\n"
            ),
            (
                "milliseconds",
                "faults:\n  - { op: read, delay_ms: -1 }\nmodel:\n  - call: read\n"
            ),
        ])
    );
}

#[test]
fn a_key_one_level_too_far_out_says_where_it_goes() {
    insta::assert_snapshot!(
        "misplaced_keys",
        problems_of(&[
            (
                "under an empty expect",
                "model:\n  - call: read\n    args: { path: a }\n    expect:\n    contains: hello\n"
            ),
            (
                "beside expect",
                "model:\n  - call: read\n    expect:\n      ok: true\n    contains: hello\n"
            ),
            (
                "in a parallel call",
                "model:\n  - parallel:\n      - call: read\n        lines: 3\n"
            ),
            (
                "at the top",
                "files: { a.txt: x }\nmax_lines: 5\nmodel:\n  - call: read\n"
            ),
            (
                "under an empty key it is no key of",
                "model:\n  - call: read\n    capture:\n    contain: x\n"
            ),
        ])
    );
}

#[test]
fn only_the_first_problem_of_a_node_is_said() {
    insta::assert_snapshot!(
        "first_problem_only",
        problems_of(&[
            ("a map for model", "name: a\nmodel: {call: ls}\n"),
            ("model misspelt", "name: a\nmodle:\n  - say: hi\n"),
            (
                "call misspelt",
                "model:\n  - calls: read\n    args: { path: a }\n"
            ),
            ("parallel not a list", "model:\n  - parallel: read\n"),
            (
                "a server's command of the wrong type",
                "servers:\n  fs: { command: 5 }\ntools: [fs]\nmodel:\n  - call: x\n"
            ),
            (
                "a misspelt preset",
                "tools: codng\nmodel:\n  - call: read\n  - call: bash\n"
            ),
            // Still said: what is missing on its own.
            ("no model at all", "name: a\n"),
        ])
    );
}

#[test]
fn calls_to_tools_that_are_not_active_are_load_errors_unless_expected_to_fail() {
    let suite = Suite::from_text(Path::new("s/harness.yaml"), "tools: [read, ls]\n", &|_| {
        Vec::new()
    })
    .unwrap();
    let mut out = Vec::new();
    for (name, text, suite) in [
        (
            "readonly, bash",
            "tools: readonly\nmodel:\n  - call: bash\n    args: { command: ls }\n  - call: read\n    retry: { call: edit }\n",
            &Suite::default(),
        ),
        (
            "from the suite file",
            "model:\n  - parallel:\n      - call: grep\n      - call: ls\n",
            &suite,
        ),
        (
            "expected to fail",
            "tools: readonly\nmodel:\n  - call: bash\n    expect: { error: true }\n  - call: write\n    expect: { error: \"not active\" }\n  - call: edit\n    expect: { ok: false }\n",
            &Suite::default(),
        ),
    ] {
        out.push(format!("# {name}"));
        let (scenarios, errors) = load_text(Path::new("s/x.yaml"), text, suite);
        out.extend(errors.iter().map(ToString::to_string));
        out.push(format!("({} loaded)", scenarios.len()));
    }
    insta::assert_snapshot!("inactive_tools", out.join("\n"));
    // A whole server active: the name may be its tool, checked at the start.
    let (scenarios, errors) =
        load("servers:\n  fs: { command: [x] }\ntools: [read, fs]\nmodel:\n  - call: bash\n");
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(
        scenarios[0]
            .open_calls
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>(),
        ["bash"]
    );
}

#[test]
fn a_call_with_servers_declared_but_none_active_says_how_to_activate_them() {
    let suite = Suite::from_text(
        Path::new("s/harness.yaml"),
        "servers:\n  memory: { command: [mcp-server-memory] }\n",
        &|_| Vec::new(),
    )
    .unwrap();
    let (_, errors) = load_text(
        Path::new("s/x.yaml"),
        "model:\n  - call: read_graph\nexpect:\n  order: [read_graph]\n",
        &suite,
    );
    let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        errors,
        [
            "s/x.yaml:2:11: model[0].call: unknown tool `read_graph`: no MCP server is active in \
             this scenario, and the built-in tools are read, bash, edit, write, grep, find, ls; if \
             `read_graph` is a tool of the server `memory`, activate it in `tools:` (`tools: \
             [memory]`, or `tools: [memory/read_graph]` for that tool alone), here or in \
             harness.yaml for every scenario (to test the error for an unknown tool on purpose, \
             add `expect: { error: true }` to the call)",
            "s/x.yaml:4:11: expect.order[0]: unknown tool `read_graph`: no MCP server is active \
             in this scenario, and the built-in tools are read, bash, edit, write, grep, find, \
             ls; if `read_graph` is a tool of the server `memory`, activate it in `tools:` \
             (`tools: [memory]`, or `tools: [memory/read_graph]` for that tool alone), here or \
             in harness.yaml for every scenario",
        ]
    );
}

#[test]
fn a_suite_files_system_and_bash_serve_scenarios_that_set_none_and_a_scenario_wins() {
    let suite = Suite::from_text(
        Path::new("s/harness.yaml"),
        "system: the suite's prompt\nbash:\n  env: { A: suite }\n  command_prefix: set -e\n  cwd: src\n", &|_| Vec::new())
    .unwrap();
    let settings = |text: &str| {
        let (s, errors) = load_text(Path::new("s/x.yaml"), text, &suite);
        assert_eq!(errors, Vec::<ScenarioError>::new());
        let bash = &s[0].conditions.bash;
        (
            s[0].system.clone(),
            bash.env.clone(),
            bash.command_prefix.clone(),
            bash.cwd.clone(),
        )
    };
    let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    };
    // Neither set: the suite file's.
    assert_eq!(
        settings("model:\n  - call: ls\n"),
        (
            "the suite's prompt".to_owned(),
            pairs(&[("A", "suite")]),
            Some("set -e".to_owned()),
            Some("src".to_owned())
        )
    );
    // The scenario's own win: `system` as written, `bash` whole (no key
    // of the suite's `bash` is kept).
    assert_eq!(
        settings("system: mine\nbash: { env: { B: scenario } }\nmodel:\n  - call: ls\n"),
        ("mine".to_owned(), pairs(&[("B", "scenario")]), None, None)
    );
    // Without a suite file's: the built-in prompt and bash's defaults.
    let (s, _) = load("model:\n  - call: ls\n");
    assert_eq!(s[0].system, crate::agent::DEFAULT_SYSTEM_PROMPT);
    assert_eq!(s[0].conditions.bash, crate::tools::BashConfig::default());
    // A suite file's `bash` is checked where it is written.
    let bad = Suite::from_text(
        Path::new("s/harness.yaml"),
        "system: ok\nbash:\n  cwd: ../up\n  env: { 1X: y }\n",
        &|_| Vec::new(),
    )
    .unwrap_err();
    let bad: Vec<String> = bad.iter().map(ToString::to_string).collect();
    assert_eq!(
        bad,
        [
            "s/harness.yaml:3:8: bash.cwd: `../up` must be a directory inside the workspace: a \
             relative path without `..`",
            "s/harness.yaml:4:14: bash.env.1X: `1X` is not a variable name: use letters, digits \
             and `_`, not starting with a digit",
        ]
    );
}

/// Issue 42 item 4: a scenario named without a directory (`harness run
/// dir.yaml`) had an empty `${dir}`, so `${dir}/x` became the root's `/x`.
#[test]
fn dir_of_a_file_named_without_a_directory_is_the_current_one() {
    let text = "servers:\n  s:\n    command: [\"${dir}/srv\", \"--in=${dir}\"]\ntools: [s]\nmodel:\n  - call: x\n";
    let (scenarios, errors) = load_text(Path::new("dir.yaml"), text, &Suite::default());
    let cwd = std::env::current_dir().unwrap();
    assert_eq!(errors, Vec::<ScenarioError>::new());
    assert_eq!(
        scenarios[0].servers[0].launch,
        ServerLaunch::Command {
            argv: vec![
                format!("{}/srv", cwd.display()),
                format!("--in={}", cwd.display())
            ],
            env: vec![],
        }
    );
}

/// The built-in tools a scenario activates, in `tools` order.
fn builtins(s: &Scenario) -> Vec<&str> {
    s.tool_entries
        .iter()
        .filter_map(|entry| match entry {
            super::ToolEntry::Builtin(name) => Some(name.as_str()),
            _ => None,
        })
        .collect()
}

/// `call: SERVER/NAME` of a declared server is accepted whatever `tools`
/// says, and starts that server; of an undeclared one it is an unknown
/// tool, unless the call expects an error.
#[test]
fn server_slash_name_calls_start_their_server() {
    let servers = "servers:\n  mem: { command: [mem] }\n  time: { command: [time] }\n";
    let (scenarios, errors) = load(&format!(
        "{servers}tools: [read]\nmodel:\n  - call: mem/nope\n  - call: read\n    args: {{ path: a }}\nexpect:\n  order: [mem/nope, read]\n"
    ));
    assert_eq!(errors, Vec::<String>::new());
    let started: Vec<&str> = scenarios[0]
        .servers
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(started, ["mem"]);
    let (_, errors) = load(&format!(
        "{servers}tools: [read]\nmodel:\n  - call: tme/nope\n"
    ));
    assert_eq!(
        errors,
        [
            "s/x.yaml:6:11: model[0].call: unknown tool `tme/nope`: `tme` is no MCP server of \
          this scenario, so the call cannot be sent to it (`SERVER/NAME` calls a declared \
          server's tool; the scenario declares mem, time); did you mean `time`? (to test the \
          error for an unknown tool on purpose, add `expect: { error: true }` to the call)"
        ]
    );
}
