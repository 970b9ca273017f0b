//! Codex's tools mapped onto this harness's (docs/replay.md, "Codex's
//! tools"): a command (`exec_command`, and the older `shell`,
//! `shell_command` and `local_shell_call`) is one `bash` call run in the
//! directory Codex ran it in; a patch (`apply_patch`, or a command that
//! pipes one into it) becomes one call per file operation — `write` for
//! an added file, `edit` for an updated one (a replacement per hunk),
//! `bash` for a deleted or moved one; every other tool is listed with the
//! reason it has no counterpart.

use serde_json::Value;
use serde_json::json;

use super::patch::Chunk;
use super::patch::FileOp;
use crate::import::session::MAX_BASH_SECS;
use crate::import::shell::normalize;
use crate::import::shell::quote;

/// Where the calls of a turn run.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Place<'a> {
    /// The session's working directory: the workspace.
    pub home: Option<&'a str>,
    /// The turn's working directory (where a command without `workdir`
    /// runs, and a patch's relative paths are).
    pub cwd: Option<&'a str>,
    /// Seconds a command recorded without a timeout is given.
    pub bash_timeout: f64,
}

impl Place<'_> {
    /// `path` as Codex resolved it: a relative one below the turn's
    /// directory (below `base` when given).
    fn resolve(&self, path: &str, base: Option<&str>) -> String {
        if path.starts_with('/') {
            return path.to_owned();
        }
        match base.or(self.cwd) {
            Some(dir) if dir.starts_with('/') => normalize(&format!("{dir}/{path}")),
            Some(dir) => format!("{dir}/{path}"),
            None => path.to_owned(),
        }
    }

    /// `command` run in `workdir` (default: the turn's directory): with
    /// `cd DIR && ` in front when that is not the workspace.
    fn command_in(&self, workdir: Option<&str>, command: &str) -> String {
        let dir = match workdir.filter(|w| !w.is_empty()) {
            Some(w) => Some(self.resolve(w, None)),
            None => self.cwd.map(str::to_owned),
        };
        match dir {
            Some(dir) if Some(dir.trim_end_matches('/')) != self.home => {
                format!("cd {} && {command}", quote(&dir))
            }
            _ => command.to_owned(),
        }
    }
}

/// One call of ours a recorded call becomes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Step {
    /// Our tool.
    pub tool: &'static str,
    /// Its arguments, paths as Codex resolved them (mapped to
    /// `${workspace}` afterwards).
    pub args: Value,
    /// The file operation of the patch it carries out (its index), and
    /// that file's path as resolved; `None` for a command.
    pub op: Option<(usize, String)>,
}

/// A Codex call as ours.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Mapped {
    /// The calls, in order: one for a command, one or more for a patch.
    pub steps: Vec<Step>,
    /// The number of file operations (0: a command).
    pub ops: usize,
    /// What the mapping could not keep.
    pub note: Option<String>,
}

/// A Codex call mapped onto ours, or why it is not replayed.
pub(crate) fn map_call(name: &str, args: &Value, place: &Place<'_>) -> Result<Mapped, String> {
    match name {
        "exec_command" => {
            let cmd = args
                .get("cmd")
                .and_then(Value::as_str)
                .ok_or("it has no command (`cmd` is missing or not a string)")?;
            let workdir = args.get("workdir").and_then(Value::as_str);
            if let Some((dir, patch)) = super::patch::in_command(cmd) {
                let base = dir.map(|d| place.resolve(&d, workdir));
                let base = base.or_else(|| workdir.map(|w| place.resolve(w, None)));
                return patch_steps(&patch, place, base.as_deref()).map(|mut m| {
                    m.note = Some(
                        "its command pipes a patch into `apply_patch`, which Codex applied \
                         itself: replayed as the patch"
                            .to_owned(),
                    );
                    m
                });
            }
            let mut notes = Vec::new();
            if let Some(shell) = args.get("shell").and_then(Value::as_str)
                && !is_bash(shell)
            {
                notes.push(format!("it ran in `{shell}`; replayed in bash"));
            }
            let command = place.command_in(workdir, cmd);
            Ok(command_step(command, place.bash_timeout, notes))
        }
        "shell" | "container.exec" | "local_shell" => {
            let argv = args.get("command").and_then(Value::as_array);
            let argv: Option<Vec<&str>> =
                argv.and_then(|a| a.iter().map(Value::as_str).collect::<Option<Vec<_>>>());
            let argv = argv
                .filter(|a| !a.is_empty())
                .ok_or("its `command` is not a list of words")?;
            let workdir = args
                .get("workdir")
                .or_else(|| args.get("working_directory"))
                .and_then(Value::as_str);
            if let [program, patch] = argv.as_slice()
                && matches!(*program, "apply_patch" | "applypatch")
            {
                let base = workdir.map(|w| place.resolve(w, None));
                return patch_steps(patch, place, base.as_deref());
            }
            let mut notes = Vec::new();
            let (command, shell) = argv_command(&argv);
            if let Some(shell) = shell.filter(|s| !is_bash(s)) {
                notes.push(format!("it ran in `{shell}`; replayed in bash"));
            }
            let timeout = recorded_timeout(args, place.bash_timeout, &mut notes);
            let mut mapped = command_step(place.command_in(workdir, &command), timeout, notes);
            if let Some(patch) = super::patch::in_command(&command).map(|(_, p)| p) {
                let base = workdir.map(|w| place.resolve(w, None));
                mapped = patch_steps(&patch, place, base.as_deref())?;
            }
            Ok(mapped)
        }
        "shell_command" => {
            let cmd = args
                .get("command")
                .and_then(Value::as_str)
                .ok_or("it has no command (`command` is missing or not a string)")?;
            let workdir = args.get("workdir").and_then(Value::as_str);
            let mut notes = Vec::new();
            let timeout = recorded_timeout(args, place.bash_timeout, &mut notes);
            Ok(command_step(place.command_in(workdir, cmd), timeout, notes))
        }
        "apply_patch" => {
            let patch = match args {
                Value::String(s) => Some(s.as_str()),
                other => other.get("input").and_then(Value::as_str),
            };
            let patch = patch.ok_or("its patch is not a text")?;
            patch_steps(patch, place, None)
        }
        other => Err(no_counterpart(other)),
    }
}

/// Whether a shell program is bash (or sh, which bash runs alike here).
fn is_bash(shell: &str) -> bool {
    matches!(
        shell.rsplit('/').next().unwrap_or(shell),
        "bash" | "sh" | ""
    )
}

/// The bash call of a command.
fn command_step(command: String, timeout: f64, notes: Vec<String>) -> Mapped {
    Mapped {
        steps: vec![Step {
            tool: "bash",
            args: json!({ "command": command, "timeout": timeout }),
            op: None,
        }],
        ops: 0,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}

/// A command given as words (`["bash", "-lc", "cmd"]` is `cmd`, other
/// words are quoted and joined), and the shell that ran it when one did.
fn argv_command<'a>(argv: &[&'a str]) -> (String, Option<&'a str>) {
    if let [shell, flag, command] = argv
        && matches!(
            shell.rsplit('/').next().unwrap_or(shell),
            "bash" | "sh" | "zsh" | "dash" | "ksh"
        )
        && matches!(*flag, "-lc" | "-c" | "-cl")
    {
        return ((*command).to_owned(), Some(shell));
    }
    let words: Vec<String> = argv.iter().map(|w| quote(w)).collect();
    (words.join(" "), None)
}

/// A recorded timeout (`timeout_ms`, milliseconds) in seconds, at most a
/// day; the default when there is none, and said when it is none a call
/// can have.
fn recorded_timeout(args: &Value, default: f64, notes: &mut Vec<String>) -> f64 {
    let Some(value) = args.get("timeout_ms").filter(|v| !v.is_null()) else {
        return default;
    };
    match value.as_f64() {
        Some(ms) if ms.is_finite() && ms > 0.0 => (ms / 1000.0).min(MAX_BASH_SECS),
        _ => {
            notes.push(format!(
                "its recorded timeout_ms {value} is not a positive number of milliseconds; given \
                 {default} seconds"
            ));
            default
        }
    }
}

/// The calls of a patch: one per file operation (two for a move), paths
/// resolved against `base` (default: the turn's directory).
fn patch_steps(patch: &str, place: &Place<'_>, base: Option<&str>) -> Result<Mapped, String> {
    let ops =
        super::patch::parse(patch).map_err(|why| format!("its patch cannot be read: {why}"))?;
    let timeout = place.bash_timeout;
    let mut steps = Vec::new();
    for (n, op) in ops.iter().enumerate() {
        let file = place.resolve(op.path(), base);
        let step = |tool, args| Step {
            tool,
            args,
            op: Some((n, file.clone())),
        };
        match op {
            FileOp::Add { content, .. } => {
                steps.push(step("write", json!({ "path": file, "content": content })));
            }
            FileOp::Delete { .. } => {
                let command = format!("rm {}", quote(&file));
                steps.push(step(
                    "bash",
                    json!({ "command": command, "timeout": timeout }),
                ));
            }
            FileOp::Update {
                path,
                move_to,
                chunks,
            } => {
                let edits = replacements(path, chunks)?;
                if !edits.is_empty() {
                    steps.push(step("edit", json!({ "path": file, "edits": edits })));
                }
                if let Some(to) = move_to {
                    let to = place.resolve(to, base);
                    let parent = |p: &str| p.rsplit_once('/').map(|(d, _)| d.to_owned());
                    let mut command = String::new();
                    if let Some(dir) = parent(&to).filter(|d| Some(d) != parent(&file).as_ref())
                        && !dir.is_empty()
                    {
                        command.push_str(&format!("mkdir -p {} && ", quote(&dir)));
                    }
                    command.push_str(&format!("mv {} {}", quote(&file), quote(&to)));
                    steps.push(step(
                        "bash",
                        json!({ "command": command, "timeout": timeout }),
                    ));
                }
            }
        }
    }
    if steps.is_empty() {
        return Err("its patch changes no file's text".to_owned());
    }
    let count = ops.len();
    let note = (steps.len() > 1).then(|| {
        format!(
            "a patch of {count} file operation{} replayed as {} calls, one after the other; the \
             patch's recorded result is on the first",
            if count == 1 { "" } else { "s" },
            steps.len()
        )
    });
    Ok(Mapped {
        steps,
        ops: count,
        note,
    })
}

/// The hunks of an update as `edit` replacements (`oldText`: the hunk's
/// context and removed lines, `newText`: its context and added lines,
/// each line ended by a newline). A hunk that changes nothing is left
/// out; one with no line to replace cannot be said.
fn replacements(path: &str, chunks: &[Chunk]) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    for (n, chunk) in chunks.iter().enumerate() {
        if chunk.old.is_empty() {
            return Err(format!(
                "hunk {} of `{path}` only adds lines, with no context or removed line: Codex puts \
                 them at the end of the file, which a replacement of a text cannot say",
                n + 1
            ));
        }
        if chunk.old == chunk.new {
            continue;
        }
        let text = |lines: &[String]| lines.iter().map(|l| format!("{l}\n")).collect::<String>();
        out.push(json!({ "oldText": text(&chunk.old), "newText": text(&chunk.new) }));
    }
    Ok(out)
}

/// Why a tool Codex has and this harness has not is not replayed.
pub(crate) fn no_counterpart(name: &str) -> String {
    let why = match name {
        "update_plan" => "keeps the client's plan",
        "view_image" => "shows the model an image, through Codex's own viewer",
        "web_search" | "web_search_call" | "web_search_preview" => "reaches the web",
        "request_user_input" => "asks the user",
        "get_goal" | "create_goal" | "update_goal" => "keeps the client's goal",
        "tool_search" | "tool_search_call" => "searches the client's catalogue of tools",
        "spawn_agent" | "send_input" | "wait" | "close_agent" | "resume_agent" => {
            "starts or talks to a sub-agent"
        }
        "image_generation_call" | "image_generation" => "generates an image",
        "list_mcp_resources" | "list_mcp_resource_templates" | "read_mcp_resource" => {
            "reads an MCP server the client had"
        }
        // Codex names an MCP server's tool `mcp__SERVER__TOOL` (its
        // namespace and name).
        _ if name.contains("__") => "is a tool of an MCP server the client had",
        _ => "has no counterpart among this harness's tools",
    };
    format!("Codex's `{name}` {why}")
}

/// The reason a `write_stdin` call is not replayed: it polls (or writes
/// to) a command Codex kept running in `session`; `carried`: that command
/// is replayed, to its end.
pub(crate) fn poll_reason(session: Option<u64>, carried: bool) -> String {
    let session = session.map_or_else(|| "a session".to_owned(), |s| format!("session {s}"));
    if carried {
        format!(
            "Codex's `write_stdin` polls a command it kept running ({session}); the command is \
             replayed to its end, and this output is part of its answer"
        )
    } else {
        format!(
            "Codex's `write_stdin` polls or writes to a command it kept running ({session}), \
             which this harness's bash does not keep"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place() -> Place<'static> {
        Place {
            home: Some("/p"),
            cwd: Some("/p"),
            bash_timeout: 30.0,
        }
    }

    fn commands(mapped: &Mapped) -> Vec<(&'static str, Value)> {
        mapped
            .steps
            .iter()
            .map(|s| (s.tool, s.args.clone()))
            .collect()
    }

    #[test]
    fn commands_run_where_codex_ran_them() {
        let cases = [
            ("exec_command", json!({"cmd": "cat a"})),
            ("exec_command", json!({"cmd": "ls", "workdir": "/p/src"})),
            ("exec_command", json!({"cmd": "ls", "workdir": "src"})),
            ("exec_command", json!({"cmd": "ls", "workdir": "/p"})),
            (
                "shell",
                json!({"command": ["bash", "-lc", "make"], "timeout_ms": 120000}),
            ),
            (
                "shell",
                json!({"command": ["rg", "-n", "a b"], "workdir": "/q"}),
            ),
            ("shell_command", json!({"command": "pwd", "timeout_ms": -5})),
        ];
        type Got = (Vec<(&'static str, Value)>, Option<String>);
        let got: Vec<Got> = cases
            .iter()
            .map(|(name, args)| {
                let m = map_call(name, args, &place()).unwrap();
                (commands(&m), m.note)
            })
            .collect();
        let bash = |c: &str, t: f64| vec![("bash", json!({"command": c, "timeout": t}))];
        assert_eq!(
            got,
            [
                (bash("cat a", 30.0), None),
                (bash("cd /p/src && ls", 30.0), None),
                (bash("cd /p/src && ls", 30.0), None),
                (bash("ls", 30.0), None),
                (bash("make", 120.0), None),
                (bash("cd /q && rg -n 'a b'", 30.0), None),
                (
                    bash("pwd", 30.0),
                    Some(
                        "its recorded timeout_ms -5 is not a positive number of milliseconds; \
                         given 30 seconds"
                            .to_owned()
                    )
                ),
            ]
        );
    }

    #[test]
    fn a_patch_becomes_one_call_per_file_operation() {
        let patch = "*** Begin Patch\n*** Add File: new.txt\n+a\n*** Update File: src/lib.rs\n@@ \
                     fn f() {\n-    1\n+    2\n@@\n x\n-y\n*** Delete File: /p/old.txt\n*** \
                     Update File: docs/a.md\n*** Move to: notes/b.md\n@@\n-# A\n+# B\n*** End \
                     Patch";
        let m = map_call("apply_patch", &json!(patch), &place()).unwrap();
        assert_eq!(
            commands(&m),
            [
                ("write", json!({"path": "/p/new.txt", "content": "a\n"})),
                (
                    "edit",
                    json!({"path": "/p/src/lib.rs", "edits": [
                        {"oldText": "    1\n", "newText": "    2\n"},
                        {"oldText": "x\ny\n", "newText": "x\n"}
                    ]})
                ),
                ("bash", json!({"command": "rm /p/old.txt", "timeout": 30.0})),
                (
                    "edit",
                    json!({"path": "/p/docs/a.md", "edits": [{"oldText": "# A\n", "newText": "# B\n"}]})
                ),
                (
                    "bash",
                    json!({"command": "mkdir -p /p/notes && mv /p/docs/a.md /p/notes/b.md", "timeout": 30.0})
                ),
            ]
        );
        assert_eq!(
            (
                m.ops,
                m.steps
                    .iter()
                    .map(|s| s.op.clone().unwrap().0)
                    .collect::<Vec<_>>(),
                m.note.as_deref()
            ),
            (
                4,
                vec![0, 1, 2, 3, 3],
                Some(
                    "a patch of 4 file operations replayed as 5 calls, one after the other; the \
                     patch's recorded result is on the first"
                )
            )
        );
        // Piped into apply_patch by a command, in a directory of its own.
        let cmd = "cd sub && apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: x\n+1\n*** End \
                   Patch\nEOF";
        let m = map_call("exec_command", &json!({"cmd": cmd}), &place()).unwrap();
        assert_eq!(
            commands(&m),
            [("write", json!({"path": "/p/sub/x", "content": "1\n"}))]
        );
    }

    #[test]
    fn what_cannot_be_said_is_listed_with_its_reason() {
        let cases = [
            (
                "apply_patch",
                json!("*** Begin Patch\n*** Update File: a\n@@\n+x\n*** End Patch"),
            ),
            ("apply_patch", json!("oops")),
            (
                "apply_patch",
                json!("*** Begin Patch\n*** Update File: a\n@@\n x\n*** End Patch"),
            ),
            ("exec_command", json!({"command": "ls"})),
            ("shell", json!({"command": "ls"})),
            ("update_plan", json!({})),
            ("view_image", json!({"path": "a.png"})),
            ("fs__read", json!({})),
            ("mcp__fs__read", json!({})),
            ("frobnicate", json!({})),
        ];
        let got: Vec<String> = cases
            .iter()
            .map(|(n, a)| map_call(n, a, &place()).unwrap_err())
            .collect();
        assert_eq!(
            got,
            [
                "hunk 1 of `a` only adds lines, with no context or removed line: Codex puts them \
                 at the end of the file, which a replacement of a text cannot say",
                "its patch cannot be read: its first line is not `*** Begin Patch`",
                "its patch changes no file's text",
                "it has no command (`cmd` is missing or not a string)",
                "its `command` is not a list of words",
                "Codex's `update_plan` keeps the client's plan",
                "Codex's `view_image` shows the model an image, through Codex's own viewer",
                "Codex's `fs__read` is a tool of an MCP server the client had",
                "Codex's `mcp__fs__read` is a tool of an MCP server the client had",
                "Codex's `frobnicate` has no counterpart among this harness's tools",
            ]
        );
    }
}
