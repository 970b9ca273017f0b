//! Which importer a session file belongs to, told from its first bytes:
//! pi and Claude Code write JSON lines (pi's first is a `session` header,
//! Claude Code's carry `uuid` and `sessionId`), Gemini CLI one JSON
//! object with `messages`, Codex CLI JSON lines of `{timestamp, type,
//! payload}` (the oldest rollouts: a first line `{id, timestamp,
//! instructions}`). A file given to the importer of another kind
//! of file is refused before anything is written, with the importer it
//! belongs to.

use std::fs::File;
use std::io::Read as _;
use std::path::Path;

use serde_json::Value;

use super::session::CLAUDE_ENTRY_TYPES;
use super::session::PI_ENTRY_TYPES;

/// The entry types of Codex CLI's rollouts.
const CODEX_ENTRY_TYPES: [&str; 7] = [
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "compacted",
    "world_state",
    "token_usage_record",
];

/// The bytes looked at.
const SNIFF_BYTES: u64 = 1 << 20;

/// What a session file looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Looks {
    /// pi's JSON lines.
    Pi,
    /// Claude Code's JSON lines.
    Claude,
    /// Gemini CLI's JSON document.
    Gemini,
    /// Gemini CLI's `--output-format stream-json` output: JSON lines, but
    /// no session file.
    GeminiStream,
    /// Codex CLI's rollout.
    Codex,
    /// Codex CLI's `exec --json` output: JSON lines, but no rollout.
    CodexExec,
}

impl Looks {
    /// What the file is, and the command that imports it.
    fn said(self) -> &'static str {
        match self {
            Self::Pi => "a pi session (JSON lines); import it with `harness import pi`",
            Self::Claude => {
                "a Claude Code transcript (JSON lines); import it with `harness import claude`"
            }
            Self::Gemini => {
                "a Gemini CLI session (one JSON object with `messages`, or its JSON lines: \
                 metadata, then messages); import it with `harness import gemini`"
            }
            Self::GeminiStream => {
                "Gemini CLI's stream-json output (`gemini --output-format stream-json`), not a \
                 session file; `harness import gemini` reads the session files in \
                 ~/.gemini/tmp/<project hash>/chats/"
            }
            Self::Codex => {
                "a Codex CLI rollout (JSON lines of `session_meta`, `response_item`, …); import \
                 it with `harness import codex`"
            }
            Self::CodexExec => {
                "Codex CLI's `codex exec --json` output, not a rollout; `harness import codex` \
                 reads the rollout files in ~/.codex/sessions/YYYY/MM/DD/"
            }
        }
    }
}

/// What the file at `path` looks like, when it is clear.
pub(crate) fn sniff(path: &Path) -> Option<Looks> {
    let mut head = Vec::new();
    File::open(path)
        .ok()?
        .take(SNIFF_BYTES)
        .read_to_end(&mut head)
        .ok()?;
    let text = String::from_utf8_lossy(&head);
    let body = text.trim_start();
    let first = body.lines().next()?;
    if let Ok(Value::Object(entry)) = serde_json::from_str::<Value>(first) {
        // The document on one line, or the first line of the JSON-lines
        // layout (the session's metadata).
        if entry.contains_key("sessionId")
            && (entry.contains_key("messages") || entry.contains_key("projectHash"))
        {
            return Some(Looks::Gemini);
        }
        // stream-json: `{type: init, session_id}`, `{type: message, role}`,
        // `{type: tool_use, tool_name}` at the top of each line.
        let stream = |e: &serde_json::Map<String, Value>| {
            matches!(
                e.get("type").and_then(Value::as_str),
                Some("init" | "message" | "tool_use" | "tool_result")
            ) && (e.contains_key("session_id")
                || e.contains_key("tool_name")
                || (e.contains_key("role") && !e.contains_key("message")))
        };
        let kind = entry.get("type").and_then(Value::as_str).unwrap_or("");
        if CODEX_ENTRY_TYPES.contains(&kind) && entry.contains_key("payload") {
            return Some(Looks::Codex);
        }
        // The oldest rollouts begin with the session's own line.
        if kind.is_empty()
            && entry.contains_key("id")
            && entry.contains_key("timestamp")
            && (entry.contains_key("instructions") || entry.contains_key("git"))
        {
            return Some(Looks::Codex);
        }
        if ["thread.", "turn.", "item."]
            .iter()
            .any(|p| kind.starts_with(p))
        {
            return Some(Looks::CodexExec);
        }
        if stream(&entry) {
            return Some(Looks::GeminiStream);
        }
        if PI_ENTRY_TYPES.contains(&kind) && !entry.contains_key("uuid") {
            return Some(Looks::Pi);
        }
        if CLAUDE_ENTRY_TYPES.contains(&kind) || entry.contains_key("uuid") {
            return Some(Looks::Claude);
        }
        return None;
    }
    let pretty = body.starts_with('{')
        && (body.contains("\"messages\"") || body.contains("\"projectHash\""));
    pretty.then_some(Looks::Gemini)
}

/// Refuses a file that plainly belongs to another importer than
/// `wanted`'s (pi and Claude Code files given to each other's importer
/// are imported, with a problem that says so: both are JSON lines), and
/// an agent's output that is no session file.
pub(crate) fn check(path: &Path, wanted: Looks) -> Result<(), String> {
    let Some(looks) = sniff(path) else {
        return Ok(());
    };
    let wrong = matches!(looks, Looks::GeminiStream | Looks::CodexExec)
        || (wanted == Looks::Gemini) != (looks == Looks::Gemini)
        || (wanted == Looks::Codex) != (looks == Looks::Codex);
    if wrong {
        return Err(format!("{} looks like {}", path.display(), looks.said()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_file_is_told_from_its_first_line() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            (
                "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"cwd\":\"/p\"}\n",
                Some(Looks::Pi),
            ),
            (
                "{\"type\":\"summary\",\"summary\":\"x\",\"leafUuid\":\"u\"}\n",
                Some(Looks::Claude),
            ),
            (
                "{\"parentUuid\":null,\"type\":\"user\",\"uuid\":\"u\"}\n",
                Some(Looks::Claude),
            ),
            (
                "{\n  \"sessionId\": \"s\",\n  \"projectHash\": \"h\",\n  \"messages\": []\n}\n",
                Some(Looks::Gemini),
            ),
            (
                "{\"type\": \"message\", \"role\": \"user\", \"content\": \"x\"}\n",
                Some(Looks::GeminiStream),
            ),
            (
                "{\"type\": \"init\", \"session_id\": \"s\"}\n",
                Some(Looks::GeminiStream),
            ),
            (
                "{\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":{\"cwd\":\"/p\"}}\n",
                Some(Looks::Codex),
            ),
            (
                "{\"id\":\"s\",\"timestamp\":\"t\",\"instructions\":null}\n",
                Some(Looks::Codex),
            ),
            (
                "{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n",
                Some(Looks::CodexExec),
            ),
            ("not json\n", None),
        ];
        let got: Vec<Option<Looks>> = cases
            .iter()
            .enumerate()
            .map(|(n, (text, _))| {
                let path = dir.path().join(format!("{n}"));
                std::fs::write(&path, text).unwrap();
                sniff(&path)
            })
            .collect();
        let want: Vec<Option<Looks>> = cases.iter().map(|(_, w)| *w).collect();
        assert_eq!(got, want);
    }
}
