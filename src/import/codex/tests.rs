//! The rollout reader on rollouts written here line by line: the oldest
//! layout, commands Codex kept running, refused patches, time budgets,
//! and bad input.

use std::sync::Arc;

use serde_json::Value;
use serde_json::json;

use super::*;
use crate::import::out::OutDir;
use crate::import::session::Text;

/// Reads the rollout made of `lines`.
fn read_lines(lines: &[Value]) -> Rollout {
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("rollout.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    let out = Arc::new(OutDir::open(&root.path().join("out")).unwrap());
    read(&path, 30.0, Sidecars::new(out, "r.recorded".to_owned())).unwrap()
}

/// Each replayed call: its id, tool, arguments, and recorded error flag
/// and answer.
fn replayed(rec: &Recording) -> Vec<(String, String, Value, bool, Option<String>)> {
    rec.calls()
        .map(|c| {
            let result = c.result.as_ref().unwrap();
            let answer = result.answer.as_ref().map(|a| match &a.text {
                Some(Text::Inline(t)) => format!("{:?}: {t}", a.form),
                Some(Text::Sidecar(f)) => format!("{:?}: file {f}", a.form),
                None => format!("{:?}", a.form),
            });
            (
                c.id.clone(),
                c.tool.clone(),
                c.args.clone(),
                result.is_error,
                answer,
            )
        })
        .collect()
}

/// Each listed call: its line, tool and reason.
fn listed(rec: &Recording) -> Vec<(usize, String, String)> {
    rec.skipped
        .iter()
        .map(|s| (s.line, s.tool.clone(), s.reason.clone()))
        .collect()
}

fn item(payload: Value) -> Value {
    json!({"timestamp": "2026-01-02T03:04:05.000Z", "type": "response_item", "payload": payload})
}

fn exec(id: &str, args: &Value) -> Value {
    item(
        json!({"type": "function_call", "name": "exec_command", "arguments": args.to_string(), "call_id": id}),
    )
}

fn output(id: &str, text: &str) -> Value {
    item(json!({"type": "function_call_output", "call_id": id, "output": text}))
}

fn meta() -> Value {
    json!({"timestamp": "2026-01-02T03:04:05.000Z", "type": "session_meta",
           "payload": {"id": "s", "timestamp": "2026-01-02T03:04:04.000Z", "cwd": "/p",
                       "git": {"commit_hash": "abc", "branch": "feature"}}})
}

#[test]
fn the_oldest_layout_is_read_with_its_environment_s_directory() {
    let rollout = read_lines(&[
        json!({"id": "s", "timestamp": "2025-05-01T10:00:00.000Z", "instructions": null}),
        json!({"record_type": "state"}),
        json!({"type": "message", "role": "user", "content": [{"type": "input_text",
               "text": "<environment_context>\n  <cwd>/home/me/p</cwd>\n</environment_context>"}]}),
        json!({"type": "function_call", "name": "shell", "call_id": "c1",
               "arguments": "{\"command\":[\"bash\",\"-lc\",\"cat /home/me/p/a.txt\"],\"timeout_ms\":120000}"}),
        json!({"type": "function_call_output", "call_id": "c1",
               "output": "{\"output\":\"hi\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.1}}"}),
        json!({"type": "function_call", "name": "shell", "call_id": "c2",
               "arguments": "{\"command\":[\"apply_patch\",\"*** Begin Patch\\n*** Delete File: a.txt\\n*** End Patch\"],\"workdir\":\"/home/me/p\"}"}),
        json!({"type": "function_call_output", "call_id": "c2",
               "output": "{\"output\":\"Success. Updated the following files:\\nD a.txt\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.0}}"}),
        json!({"type": "local_shell_call", "call_id": "c3", "status": "completed",
               "action": {"type": "exec", "command": ["ls", "-la"], "working_directory": "/home/me/p/src"}}),
        json!({"type": "function_call_output", "call_id": "c3",
               "output": "{\"output\":\"\",\"metadata\":{\"exit_code\":1,\"duration_seconds\":0.0}}"}),
    ]);
    let rec = &rollout.recording;
    assert_eq!(
        (rec.cwd.as_deref(), rec.started.as_deref(), &rec.notes),
        (
            Some("/home/me/p"),
            Some("2025-05-01T10:00:00.000Z"),
            &vec![]
        )
    );
    assert_eq!(
        replayed(rec),
        [
            (
                "c1".into(),
                "bash".into(),
                json!({"command": "cat ${workspace}/a.txt", "timeout": 120.0}),
                false,
                Some("Text: hi\n".into())
            ),
            (
                "c2".into(),
                "bash".into(),
                json!({"command": "rm ${workspace}/a.txt", "timeout": 30.0}),
                false,
                Some("Text: ".into())
            ),
            (
                "c3".into(),
                "bash".into(),
                json!({"command": "cd ${workspace}/src && ls -la", "timeout": 30.0}),
                true,
                Some("Text: ".into())
            ),
        ]
    );
    assert_eq!(
        rollout.calls,
        [
            (4, "c1".to_owned(), "shell".to_owned()),
            (6, "c2".to_owned(), "shell".to_owned()),
            (8, "c3".to_owned(), "local_shell".to_owned()),
        ]
    );
}

#[test]
fn a_command_codex_kept_running_is_answered_when_a_poll_sees_it_end() {
    let running = |id: &str, session: u64, wall: &str, out: &str| {
        output(
            id,
            &format!(
                "Chunk ID: a\nWall time: {wall} seconds\nProcess running with session ID \
                 {session}\nOriginal token count: 1\nOutput:\n{out}"
            ),
        )
    };
    let poll = |id: &str, session: Value, chars: &str| {
        item(
            json!({"type": "function_call", "name": "write_stdin", "call_id": id,
                    "arguments": json!({"session_id": session, "chars": chars}).to_string()}),
        )
    };
    let rollout = read_lines(&[
        meta(),
        exec("build", &json!({"cmd": "make"})),
        running("build", 7, "10.0", "compiling\n"),
        poll("p1", json!(7), ""),
        running("p1", 7, "20.0", "linking\n"),
        poll("p2", json!("7"), ""),
        output(
            "p2",
            "Chunk ID: b\nWall time: 5.5 seconds\nProcess exited with code 2\nOutput:\nerror\n",
        ),
        exec("repl", &json!({"cmd": "python3", "tty": true})),
        running("repl", 8, "1.0", ">>> "),
        poll("p3", json!(8), "print(1)\n"),
        output(
            "p3",
            "Chunk ID: c\nWall time: 0.1 seconds\nProcess running with session ID 8\nOutput:\n1\n",
        ),
        exec("server", &json!({"cmd": "npm start"})),
        running("server", 9, "1.0", ""),
        poll("p4", json!(1e300), ""),
        output("p4", "write_stdin failed: Unknown process id"),
    ]);
    let rec = &rollout.recording;
    assert_eq!(
        replayed(rec),
        [(
            "build".into(),
            "bash".into(),
            json!({"command": "make", "timeout": 71.0}),
            true,
            Some("Text: compiling\nlinking\nerror\n".into())
        )]
    );
    assert_eq!(
        listed(rec),
        [
            (
                4,
                "write_stdin".into(),
                "Codex's `write_stdin` polls a command it kept running (session 7); the command \
                 is replayed to its end, and this output is part of its answer"
                    .into()
            ),
            (
                6,
                "write_stdin".into(),
                "Codex's `write_stdin` polls a command it kept running (session 7); the command \
                 is replayed to its end, and this output is part of its answer"
                    .into()
            ),
            (
                8,
                "exec_command".into(),
                "Codex kept it running and wrote to its input later (`write_stdin`), which a \
                 replay cannot give it"
                    .into()
            ),
            (
                10,
                "write_stdin".into(),
                "Codex's `write_stdin` polls or writes to a command it kept running (session 8), \
                 which this harness's bash does not keep"
                    .into()
            ),
            (
                12,
                "exec_command".into(),
                "Codex kept it running, and no later poll (`write_stdin`) saw it end".into()
            ),
            (
                14,
                "write_stdin".into(),
                "Codex's `write_stdin` polls or writes to a command it kept running (a session), \
                 which this harness's bash does not keep"
                    .into()
            ),
        ]
    );
}

#[test]
fn a_refused_patch_replays_the_operation_codex_refused_and_nothing_else() {
    let patch = |id: &str, text: &str| {
        item(
            json!({"type": "custom_tool_call", "name": "apply_patch", "call_id": id, "input": text}),
        )
    };
    let patch_output = |id: &str, text: &str| {
        item(json!({"type": "custom_tool_call_output", "call_id": id, "output": text}))
    };
    let three = "*** Begin Patch\n*** Add File: a\n+1\n*** Update File: b\n*** Move to: c\n@@\n-x\n+y\n\
                 *** Delete File: d\n*** End Patch";
    let rollout = read_lines(&[
        meta(),
        patch("refused", three),
        patch_output(
            "refused",
            "apply_patch verification failed: Failed to find expected lines in /p/b:\nx",
        ),
        patch("unnamed", three),
        patch_output(
            "unnamed",
            "apply_patch verification failed: invalid hunk at line 3",
        ),
        patch("rejected", three),
        patch_output("rejected", "patch rejected by user"),
        patch("partly", three),
        patch_output(
            "partly",
            "Exit code: 1\nWall time: 0 seconds\nOutput:\nerror: disk full\n",
        ),
        patch("open", three),
    ]);
    let rec = &rollout.recording;
    let edit = json!({"path": "${workspace}/b", "edits": [{"oldText": "x\n", "newText": "y\n"}]});
    assert_eq!(
        replayed(rec),
        [
            (
                "refused".into(),
                "edit".into(),
                edit.clone(),
                true,
                Some("Failure: text not found".into())
            ),
            (
                "partly".into(),
                "write".into(),
                json!({"path": "${workspace}/a", "content": "1\n"}),
                true,
                None
            ),
            ("partly#2".into(), "edit".into(), edit, true, None),
            (
                "partly#3".into(),
                "bash".into(),
                json!({"command": "mv ${workspace}/b ${workspace}/c", "timeout": 30.0}),
                true,
                None
            ),
            (
                "partly#4".into(),
                "bash".into(),
                json!({"command": "rm ${workspace}/d", "timeout": 30.0}),
                true,
                None
            ),
        ]
    );
    assert_eq!(
        rec.calls().next().and_then(|c| c.note.clone()).as_deref(),
        Some(
            "Codex refused the patch and changed no file: only its operation on `b`, which Codex \
             refused, is replayed; its 2 other file operations are left out"
        )
    );
    assert_eq!(
        listed(rec),
        [
            (
                4,
                "apply_patch".into(),
                "Codex refused its patch without naming one of its files, and wrote nothing".into()
            ),
            (6, "apply_patch".into(), "the user rejected it".into()),
            (
                10,
                "apply_patch".into(),
                "never answered (aborted or terminated)".into()
            ),
        ]
    );
}

#[test]
fn bad_lines_and_unknown_calls_are_problems_and_the_rest_is_read() {
    let rollout = read_lines(&[
        meta(),
        json!({"type": "turn_context", "payload": {"cwd": "/p/sub"}}),
        exec("a", &json!({"cmd": "ls", "workdir": "/p"})),
        output(
            "a",
            "Chunk ID: 1\nWall time: 100000000 seconds\nProcess exited with code 0\nOutput:\nx\n",
        ),
        item(
            json!({"type": "function_call", "name": "exec_command", "call_id": "b", "arguments": "{not json"}),
        ),
        exec("a", &json!({"cmd": "pwd"})),
        exec("c", &json!({"cmd": 5})),
        output("c", "failed to parse function arguments: invalid type"),
        output("nobody", "x"),
        item(
            json!({"type": "web_search_call", "id": "ws_1", "status": "completed",
                    "action": {"type": "search", "query": "rust"}}),
        ),
        json!({"type": "mystery", "payload": {}}),
        json!({"type": "mystery", "payload": {}}),
        exec("d", &json!({"cmd": "true", "shell": "/bin/zsh"})),
        output(
            "d",
            "exec_command failed: CreateProcess { message: \"No such file\" }",
        ),
        exec("e", &json!({"cmd": "ls"})),
        output("e", "aborted"),
    ]);
    let rec = &rollout.recording;
    assert_eq!(
        replayed(rec),
        [
            (
                "a".into(),
                "bash".into(),
                json!({"command": "ls", "timeout": 86400.0}),
                false,
                Some("Text: x\n".into())
            ),
            (
                "d".into(),
                "bash".into(),
                json!({"command": "cd ${workspace}/sub && true", "timeout": 30.0}),
                true,
                None
            ),
        ]
    );
    assert_eq!(
        rec.calls().nth(1).and_then(|c| c.note.clone()).as_deref(),
        Some("it ran in `/bin/zsh`; replayed in bash")
    );
    assert_eq!(
        listed(rec),
        [
            (
                5,
                "exec_command".into(),
                "its arguments are not JSON (key must be a string at line 1 column 2)".into()
            ),
            (
                6,
                "exec_command".into(),
                "its id `a` was used before".into()
            ),
            (
                7,
                "exec_command".into(),
                "it has no command (`cmd` is missing or not a string)".into()
            ),
            (
                10,
                "web_search_call".into(),
                "Codex's `web_search_call` reaches the web".into()
            ),
            (
                15,
                "exec_command".into(),
                "Codex recorded it as aborted: the turn was interrupted".into()
            ),
        ]
    );
    let notes: Vec<(usize, &str)> = rec
        .notes
        .iter()
        .map(|n| (n.line, n.message.as_str()))
        .collect();
    assert_eq!(
        notes,
        [
            (
                5,
                "its arguments are not JSON (key must be a string at line 1 column 2); its call \
                 is skipped"
            ),
            (
                6,
                "call id `a` was already used on line 3; this call is skipped"
            ),
            (
                7,
                "it has no command (`cmd` is missing or not a string); its call is skipped"
            ),
            (
                9,
                "a result for call `nobody`, which no call on this branch made; skipped"
            ),
            (
                10,
                "Codex's `web_search_call` reaches the web; its call is skipped"
            ),
            (
                11,
                "unknown entry type `mystery` (2 lines, the first here); skipped"
            ),
        ]
    );
    assert_eq!(rec.git_branch.as_deref(), Some("feature"));
    assert_eq!(rollout.calls.len(), 7);
}

#[test]
fn lines_that_are_no_entries_are_problems_at_their_line() {
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("rollout.jsonl");
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let call = exec("a", &json!({"cmd": "rm 'it'\\''s' \"${HOME}\""}));
    let patch = item(
        json!({"type": "custom_tool_call", "name": "apply_patch", "call_id": "b",
        "input": "*** Begin Patch\n*** Delete File: it's here.txt\n*** Add File: ../../etc/x\n+y\n*** End Patch"}),
    );
    let text = format!(
        "{}\nnot json\n{{\"type\": \"response_item\", \"payload\": {deep}}}\n{call}\n{patch}\n{{\"type\": \"resp",
        meta()
    );
    std::fs::write(&path, text).unwrap();
    let out = Arc::new(OutDir::open(&root.path().join("out")).unwrap());
    let rollout = read(&path, 30.0, Sidecars::new(out, "r.recorded".to_owned())).unwrap();
    let rec = &rollout.recording;
    let notes: Vec<(usize, &str)> = rec
        .notes
        .iter()
        .map(|n| (n.line, n.message.as_str()))
        .collect();
    assert_eq!(
        notes,
        [
            (
                2,
                "not a JSON object (expected ident at line 1 column 2); skipped"
            ),
            (
                3,
                "not a JSON object (recursion limit exceeded at line 1 column 164); skipped"
            ),
            (
                6,
                "the last line is cut off (EOF while parsing a string at line 1 column 14); it \
                 was skipped — the session was probably still being written"
            ),
        ]
    );
    // Never answered, both: listed; what they would have run is written
    // as recorded, `${` escaped and quotes kept.
    assert_eq!((listed(rec).len(), rec.calls().count()), (2, 0));
    let raw = |line: usize| {
        rec.skipped
            .iter()
            .find(|s| s.line == line)
            .map(|s| s.args.clone())
    };
    assert_eq!(
        raw(4).as_deref(),
        Some("{\"cmd\":\"rm 'it'\\\\''s' \\\"${HOME}\\\"\"}")
    );
    let place = Place {
        home: Some("/p"),
        cwd: Some("/p"),
        bash_timeout: 30.0,
    };
    let mapped = tools::map_call(
        "apply_patch",
        &json!("*** Begin Patch\n*** Delete File: it's here.txt\n*** Add File: ../../etc/x\n+y\n*** End Patch"),
        &place,
    )
    .unwrap();
    let map = PathMap::new(Some("/p"));
    let args: Vec<Value> = mapped.steps.iter().map(|s| map.args(&s.args)).collect();
    assert_eq!(
        args,
        [
            json!({"command": "rm '${workspace}/it'\\''s here.txt'", "timeout": 30.0}),
            json!({"path": "/etc/x", "content": "y\n"}),
        ]
    );
}

#[test]
fn past_sixty_four_commands_kept_running_each_is_compared_by_its_first_result() {
    let mut lines = vec![meta()];
    for n in 0..65 {
        let id = format!("r{n}");
        lines.push(exec(&id, &json!({"cmd": format!("sleep {n}")})));
        lines.push(output(
            &id,
            &format!(
                "Chunk ID: a\nWall time: 10.0 seconds\nProcess running with session ID {n}\nOutput:\nstarted\n"
            ),
        ));
    }
    let rollout = read_lines(&lines);
    let rec = &rollout.recording;
    // The 65th is answered by its first result; the others wait for a
    // poll that never comes.
    assert_eq!(
        (
            replayed(rec),
            listed(rec).len(),
            listed(rec).iter().all(|(_, _, why)| why
                == "Codex kept it running, and no later poll (`write_stdin`) saw it end")
        ),
        (
            vec![(
                "r64".into(),
                "bash".into(),
                json!({"command": "sleep 64", "timeout": 30.0}),
                false,
                None
            )],
            64,
            true
        )
    );
}
