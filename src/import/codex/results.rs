//! What Codex's results say, read from their text (Codex records no error
//! flag): a command's header (`Chunk ID`, `Wall time`, `Process exited
//! with code N` or `Process running with session ID N`, `Original token
//! count`, then `Output:` and the output; older versions `Exit code: N`,
//! or the JSON `{output, metadata: {exit_code, duration_seconds}}`), and a
//! patch's (`Exit code: 0` … `Success. Updated the following files:`, or
//! `apply_patch verification failed: …`).

use serde_json::Value;

use crate::scenario::replay::FailureKind;

/// A command's result, as its header tells it.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Exec {
    /// The exit code, when the command ended.
    pub code: Option<i64>,
    /// The session Codex kept the command running in, when it had not
    /// ended (`Process running with session ID N`).
    pub running: Option<u64>,
    /// Seconds the command ran (or was waited for), as recorded.
    pub wall: Option<f64>,
    /// The output after `Output:`.
    pub output: String,
    /// Codex cut the output (its `Warning: truncated output`, `…N tokens
    /// truncated…`, `Total output lines`).
    pub truncated: bool,
}

/// The longest time a recorded wall time is taken for (a day).
const MAX_WALL: f64 = crate::base::bounds::ONE_DAY;

/// A command's result text read, or `None` when it is not one (Codex's
/// own error: `exec_command failed: …`, `failed to parse function
/// arguments: …`).
pub(crate) fn exec(text: &str) -> Option<Exec> {
    if let Some(json) = legacy_json(text) {
        return Some(json);
    }
    let mut out = Exec::default();
    let mut known = false;
    let mut rest = text;
    loop {
        let (line, after) = match rest.split_once('\n') {
            Some((line, after)) => (line, Some(after)),
            None => (rest, None),
        };
        let line = line.trim_end_matches('\r');
        if line == "Output:" {
            out.output = after.unwrap_or("").to_owned();
            break;
        }
        if let Some(n) = line.strip_prefix("Process exited with code ") {
            out.code = Some(n.trim().parse().ok()?);
        } else if let Some(n) = line.strip_prefix("Exit code: ") {
            out.code = Some(n.trim().parse().ok()?);
        } else if let Some(n) = line.strip_prefix("Process running with session ID ") {
            out.running = Some(n.trim().parse().ok()?);
        } else if let Some(secs) = line
            .strip_prefix("Wall time: ")
            .and_then(|t| t.strip_suffix(" seconds"))
        {
            out.wall = secs
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s >= 0.0)
                .map(|s| s.min(MAX_WALL));
        } else if line.starts_with("Total output lines: ") {
            out.truncated = true;
        } else if !(line.starts_with("Chunk ID: ") || line.starts_with("Original token count: ")) {
            return None;
        }
        known = true;
        match after {
            Some(after) => rest = after,
            None => break,
        }
    }
    if !known {
        return None;
    }
    // A patch that Codex applied itself for a command (`apply_patch
    // <<'EOF' …`) is answered with the patch's own header inside the
    // command's output.
    if out.code.is_none()
        && out.running.is_none()
        && let Some(inner) = exec(&out.output).filter(|i| i.code.is_some())
    {
        return Some(Exec {
            wall: out.wall.or(inner.wall),
            ..inner
        });
    }
    out.truncated = out.truncated
        || out.output.starts_with("Warning: truncated output")
        || out.output.contains(" tokens truncated…")
        || out.output.contains(" chars truncated…");
    Some(out)
}

/// The JSON result of older versions: `{"output": …, "metadata":
/// {"exit_code": N, "duration_seconds": S}}`.
fn legacy_json(text: &str) -> Option<Exec> {
    if !text.trim_start().starts_with('{') {
        return None;
    }
    let value: Value = serde_json::from_str(text).ok()?;
    let output = value.get("output")?.as_str()?.to_owned();
    let meta = value.get("metadata")?;
    let code = meta.get("exit_code").and_then(Value::as_i64);
    let wall = meta
        .get("duration_seconds")
        .and_then(Value::as_f64)
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(|s| s.min(MAX_WALL));
    let truncated = output.contains("tokens truncated…")
        || output.contains("chars truncated…")
        || output.starts_with("Total output lines: ");
    Some(Exec {
        code,
        running: None,
        wall,
        output,
        truncated,
    })
}

/// What a patch's result says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Patched {
    /// Applied (exit code 0, or Codex's success words).
    Applied,
    /// Applied in part or not at all after it was checked (a non-zero
    /// exit code): the text.
    Failed,
    /// Refused before anything was written (`apply_patch verification
    /// failed: …`): the reason after the prefix.
    Refused(String),
}

/// The prefix of a patch Codex refused.
const REFUSED: &str = "apply_patch verification failed: ";

/// A patch's result text read.
pub(crate) fn patch(text: &str) -> Patched {
    if let Some(why) = text.trim_start().strip_prefix(REFUSED) {
        return Patched::Refused(why.to_owned());
    }
    if let Some(exec) = exec(text)
        && let Some(code) = exec.code
    {
        if let Some(why) = exec.output.trim_start().strip_prefix(REFUSED) {
            return Patched::Refused(why.to_owned());
        }
        return if code == 0 {
            Patched::Applied
        } else {
            Patched::Failed
        };
    }
    if text
        .trim_start()
        .starts_with("Success. Updated the following files:")
    {
        Patched::Applied
    } else {
        Patched::Failed
    }
}

/// The kind of a refused patch's failure, told from Codex's words.
pub(crate) fn refusal_kind(why: &str) -> Option<FailureKind> {
    if why.starts_with("Failed to find expected lines in ")
        || why.starts_with("Failed to find context ")
    {
        return Some(FailureKind::TextNotFound);
    }
    if why.contains("No such file or directory") {
        return Some(FailureKind::NoSuchFile);
    }
    why.contains("Is a directory")
        .then_some(FailureKind::IsADirectory)
}

/// Why a result is no answer of the tool, when it is not: the user
/// refused the call, or Codex cut the turn short.
pub(crate) fn not_an_answer(text: &str) -> Option<&'static str> {
    let t = text.trim();
    if t.ends_with("rejected by user") {
        return Some("the user rejected it");
    }
    (t == "aborted" || t.starts_with("aborted by user"))
        .then_some("Codex recorded it as aborted: the turn was interrupted")
}

/// A result's output (a string; in newer versions also a list of content
/// items, `input_text` and `input_image`; in some, `{content, success}`):
/// its text, its image count, and whether Codex flagged it as failed.
pub(crate) fn output_text(output: &Value) -> (String, usize, bool) {
    match output {
        Value::String(s) => (s.clone(), 0, false),
        Value::Array(items) => {
            let mut texts = Vec::new();
            let mut images = 0;
            for item in items {
                match item.get("type").and_then(Value::as_str) {
                    Some("input_text" | "output_text" | "text") => {
                        if let Some(t) = item.get("text").and_then(Value::as_str) {
                            texts.push(t);
                        }
                    }
                    Some("input_image" | "image") => images += 1,
                    _ => {}
                }
            }
            (texts.join("\n"), images, false)
        }
        Value::Object(map) => {
            let (text, images, _) = output_text(map.get("content").unwrap_or(&Value::Null));
            let failed = map.get("success").and_then(Value::as_bool) == Some(false);
            (text, images, failed)
        }
        _ => (String::new(), 0, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_s_header_is_read_in_each_version_s_words() {
        let cases = [
            "Chunk ID: 1bc646\nWall time: 0.0000 seconds\nProcess exited with code 2\nOriginal \
             token count: 15\nOutput:\nls: cannot access 'x'\n",
            "Chunk ID: 0992ca\nWall time: 0.2509 seconds\nProcess running with session ID \
             51043\nOriginal token count: 0\nOutput:\n",
            "Exit code: 1\nWall time: 3.5 seconds\nTotal output lines: 900\nOutput:\nfail\n",
            "{\"output\":\"a\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.5}}",
            "Wall time: 0.0000 seconds\nOutput:\nExit code: 0\nWall time: 0 seconds\nOutput:\n\
             Success. Updated the following files:\nA x\n",
            "Chunk ID: 5\nWall time: 0.0000 seconds\nProcess exited with code 0\nOutput:\n\
             Warning: truncated output (original token count: 9)\n1\n…5 tokens truncated…\n9\n",
            "Process exited with code 0",
        ];
        let got: Vec<Option<Exec>> = cases.iter().map(|c| exec(c)).collect();
        let exec = |code: Option<i64>, running, wall, output: &str, truncated| {
            Some(Exec {
                code,
                running,
                wall,
                output: output.to_owned(),
                truncated,
            })
        };
        assert_eq!(
            got,
            [
                exec(Some(2), None, Some(0.0), "ls: cannot access 'x'\n", false),
                exec(None, Some(51043), Some(0.2509), "", false),
                exec(Some(1), None, Some(3.5), "fail\n", true),
                exec(Some(0), None, Some(0.5), "a\n", false),
                exec(
                    Some(0),
                    None,
                    Some(0.0),
                    "Success. Updated the following files:\nA x\n",
                    false
                ),
                exec(
                    Some(0),
                    None,
                    Some(0.0),
                    "Warning: truncated output (original token count: 9)\n1\n…5 tokens \
                     truncated…\n9\n",
                    true
                ),
                exec(Some(0), None, None, "", false),
            ]
        );
        let not: Vec<Option<Exec>> = [
            "exec_command failed: No such file or directory",
            "failed to parse function arguments: missing field `cmd`",
            "Process exited with code two\nOutput:\n",
            "",
        ]
        .iter()
        .map(|c| super::exec(c))
        .collect();
        assert_eq!(not, [None, None, None, None]);
        // A wall time no clock gives is no wall time.
        assert_eq!(
            super::exec("Wall time: -1 seconds\nProcess exited with code 0\nOutput:\n"),
            exec(Some(0), None, None, "", false)
        );
    }

    #[test]
    fn a_patch_s_result_is_applied_failed_or_refused() {
        let cases = [
            "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nA new.txt\n",
            "Success. Updated the following files:\nM a\n",
            "apply_patch verification failed: Failed to find expected lines in /p/hello.txt:\nno such line",
            "Exit code: 1\nWall time: 0 seconds\nOutput:\nerror: permission denied\n",
            "patch rejected by user",
        ];
        assert_eq!(
            cases.iter().map(|c| patch(c)).collect::<Vec<_>>(),
            [
                Patched::Applied,
                Patched::Applied,
                Patched::Refused(
                    "Failed to find expected lines in /p/hello.txt:\nno such line".into()
                ),
                Patched::Failed,
                Patched::Failed,
            ]
        );
        assert_eq!(
            [
                "Failed to find expected lines in /p/a:\nx",
                "Failed to find context 'fn a' in /p/a",
                "Failed to read file to update /p/m: No such file or directory (os error 2)",
                "invalid patch: The first line of the patch must be '*** Begin Patch'",
            ]
            .map(refusal_kind),
            [
                Some(FailureKind::TextNotFound),
                Some(FailureKind::TextNotFound),
                Some(FailureKind::NoSuchFile),
                None
            ]
        );
        assert_eq!(
            ["exec command rejected by user", "aborted", "Exit code: 0"].map(not_an_answer),
            [
                Some("the user rejected it"),
                Some("Codex recorded it as aborted: the turn was interrupted"),
                None
            ]
        );
    }
}
