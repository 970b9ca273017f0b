//! Writes the sandbox refused an MCP server: a server that keeps its data
//! outside its workspace (in its own package folder, in the user's home)
//! gets the kernel's `EACCES` there, and says so in an error result or on
//! stderr in its own words. The paths such lines name outside the places
//! the sandbox lets it write are listed with the server in the reports,
//! so a failure says why rather than leaving the author to read the
//! server's message.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

/// At most this many paths are listed per server.
const MAX_LISTED: usize = 5;

/// A line that says a write was refused.
static REFUSED: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(EACCES|EROFS|EPERM)\b|permission denied|read-only file system|operation not permitted",
    )
    .ok()
});

/// An absolute path in such a line: quoted, or up to a space or quote.
static PATH: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"'(/[^']+)'|"(/[^"]+)"|(?:^|[\s(=:])(/[^\s'",;()]+)"#).ok());

/// The paths `texts` say could not be written that lie outside every one
/// of `writable` (the sandbox's places, real and as the model reads them,
/// `/workspace`), in the order first named, each once, at most
/// [`MAX_LISTED`].
pub(super) fn refused_paths<'a>(
    texts: impl IntoIterator<Item = &'a str>,
    writable: &[&Path],
) -> Vec<String> {
    let (Some(refused), Some(path)) = (REFUSED.as_ref(), PATH.as_ref()) else {
        return Vec::new();
    };
    let mut found: Vec<String> = Vec::new();
    for line in texts.into_iter().flat_map(str::lines) {
        let Some(keyword) = refused.find(line) else {
            continue;
        };
        // Quoted paths are what the refusal names (`open '/x'`); else the
        // unquoted one nearest to the words of the refusal (`sh: cannot
        // create /x: Permission denied` names the shell first).
        let candidates: Vec<(bool, regex::Match<'_>)> = path
            .captures_iter(line)
            .filter_map(|c| {
                let quoted = c.get(1).or_else(|| c.get(2));
                quoted
                    .map(|m| (true, m))
                    .or_else(|| c.get(3).map(|m| (false, m)))
            })
            .collect();
        let distance = |m: &regex::Match<'_>| {
            if m.end() <= keyword.start() {
                keyword.start() - m.end()
            } else {
                m.start().saturating_sub(keyword.end())
            }
        };
        let named: Vec<&str> = if candidates.iter().any(|(quoted, _)| *quoted) {
            candidates
                .iter()
                .filter(|(quoted, _)| *quoted)
                .map(|(_, m)| m.as_str())
                .collect()
        } else {
            candidates
                .iter()
                .min_by_key(|(_, m)| distance(m))
                .map(|(_, m)| m.as_str())
                .into_iter()
                .collect()
        };
        for named in named {
            let named = named.trim_end_matches(['.', ':']);
            let inside = writable.iter().any(|dir| Path::new(named).starts_with(dir));
            let named = crate::mcp::client::visible_text(named);
            if !inside && !found.contains(&named) && found.len() < MAX_LISTED {
                found.push(named);
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn refused_writes_outside_the_writable_places_are_named_once() {
        let writable = [Path::new("/workspace"), Path::new("/tmp/harness-sandbox-1")];
        let texts = [
            // server-memory's answer under the sandbox.
            "EACCES: permission denied, open '/opt/node_modules/server-memory/dist/memory.jsonl.1.tmp'",
            "Error: EROFS: read-only file system, mkdir \"/home/u/.cache/srv\"",
            "open /var/lib/srv/db: permission denied\nsecond line without a refusal /etc/x",
            // The shell names itself first; the refused path is the one
            // beside the refusal.
            "/usr/bin/sh: 1: cannot create /srv/out/data.json: Permission denied",
            // Inside the writable places, or no refusal: not listed.
            "EACCES: permission denied, open '/workspace/data.json'",
            "EACCES: permission denied, open '/tmp/harness-sandbox-1/x'",
            "wrote /opt/elsewhere/ok.txt",
            // Named twice: listed once.
            "EACCES: permission denied, open '/opt/node_modules/server-memory/dist/memory.jsonl.1.tmp'",
        ];
        assert_eq!(
            refused_paths(texts, &writable),
            [
                "/opt/node_modules/server-memory/dist/memory.jsonl.1.tmp",
                "/home/u/.cache/srv",
                "/var/lib/srv/db",
                "/srv/out/data.json"
            ]
        );
        let many: Vec<String> = (0..9)
            .map(|n| format!("EACCES: permission denied, open '/x/{n}'"))
            .collect();
        assert_eq!(
            refused_paths(many.iter().map(String::as_str), &writable).len(),
            MAX_LISTED
        );
        assert_eq!(
            refused_paths(["nothing refused"], &writable),
            Vec::<String>::new()
        );
        // What reaches a terminal has no control characters.
        assert_eq!(
            refused_paths(["EACCES: open '/x/\x1b[2Jy'"], &writable),
            ["/x/\u{241b}[2Jy"]
        );
    }
}
