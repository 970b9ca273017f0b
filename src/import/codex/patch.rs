//! Codex's patch text (`apply_patch`, freeform): between `*** Begin
//! Patch` and `*** End Patch`, file operations — `*** Add File: P` with
//! `+` lines, `*** Delete File: P`, `*** Update File: P` with an optional
//! `*** Move to: Q` and hunks (`@@` or `@@ TEXT`, then ` ` context, `-`
//! removed and `+` added lines, an optional `*** End of File`). Read as
//! leniently as Codex reads it: marker lines may carry spaces around them,
//! an empty line inside a hunk is an empty context line, the first hunk of
//! a file may leave out its `@@`, and a heredoc around the patch
//! (`<<'EOF'` … `EOF`) is taken off.

/// One file operation of a patch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FileOp {
    /// A file written whole (an existing one is replaced).
    Add {
        /// The path as written in the patch.
        path: String,
        /// Its text: the `+` lines, each ended by a newline.
        content: String,
    },
    /// A file removed.
    Delete {
        /// The path as written in the patch.
        path: String,
    },
    /// A file changed by hunks, and perhaps moved.
    Update {
        /// The path as written in the patch.
        path: String,
        /// Where the changed file goes (`*** Move to:`).
        move_to: Option<String>,
        /// The hunks, in order.
        chunks: Vec<Chunk>,
    },
}

impl FileOp {
    /// The path the operation names first.
    pub(crate) fn path(&self) -> &str {
        match self {
            Self::Add { path, .. } | Self::Delete { path } | Self::Update { path, .. } => path,
        }
    }
}

/// One hunk of an update.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Chunk {
    /// The text after `@@ `, which Codex looks for before the hunk.
    pub context: Option<String>,
    /// The lines the hunk replaces: context and removed lines.
    pub old: Vec<String>,
    /// The lines it puts there: context and added lines.
    pub new: Vec<String>,
    /// The hunk is anchored at the end of the file (`*** End of File`).
    pub end_of_file: bool,
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";

/// The file operations of a patch text, or why it is not one (in words
/// that name the patch's own line, counted from 1).
pub(crate) fn parse(text: &str) -> Result<Vec<FileOp>, String> {
    let mut lines: Vec<&str> = text.trim().lines().collect();
    strip_heredoc(&mut lines);
    match (lines.first(), lines.last()) {
        (Some(first), _) if first.trim() != BEGIN => {
            return Err(format!("its first line is not `{BEGIN}`"));
        }
        (_, Some(last)) if last.trim() != END || lines.len() < 2 => {
            return Err(format!("its last line is not `{END}`"));
        }
        (None, _) | (_, None) => return Err("it is empty".to_owned()),
        _ => {}
    }
    let body = &lines[1..lines.len() - 1];
    let mut ops = Vec::new();
    let mut at = 0;
    while at < body.len() {
        let line = body[at].trim();
        let number = at + 2;
        at += 1;
        if line.is_empty() {
            continue;
        }
        if let Some(path) = line.strip_prefix(ADD.trim_end()).map(str::trim) {
            let path = named(path, number)?;
            let mut content = String::new();
            while let Some(added) = body.get(at).and_then(|l| l.strip_prefix('+')) {
                content.push_str(added);
                content.push('\n');
                at += 1;
            }
            ops.push(FileOp::Add { path, content });
        } else if let Some(path) = line.strip_prefix(DELETE.trim_end()).map(str::trim) {
            ops.push(FileOp::Delete {
                path: named(path, number)?,
            });
        } else if let Some(path) = line.strip_prefix(UPDATE.trim_end()).map(str::trim) {
            let path = named(path, number)?;
            let mut move_to = None;
            if let Some(to) = body
                .get(at)
                .and_then(|l| l.trim().strip_prefix(MOVE.trim_end()))
            {
                move_to = Some(named(to.trim(), at + 2)?);
                at += 1;
            }
            let chunks = hunks(body, &mut at)?;
            if chunks.is_empty() {
                return Err(format!("line {number}: the update of `{path}` has no hunk"));
            }
            ops.push(FileOp::Update {
                path,
                move_to,
                chunks,
            });
        } else {
            return Err(format!(
                "line {number}: `{}` is not a file operation (`{ADD}`, `{DELETE}` or `{UPDATE}`)",
                cut(line)
            ));
        }
    }
    if ops.is_empty() {
        return Err("it names no file".to_owned());
    }
    Ok(ops)
}

/// A path after a marker, which must not be empty.
fn named(path: &str, number: usize) -> Result<String, String> {
    if path.is_empty() {
        Err(format!("line {number}: a file operation without a path"))
    } else {
        Ok(path.to_owned())
    }
}

/// The hunks of an update, from `body[*at]` up to the next file
/// operation.
fn hunks(body: &[&str], at: &mut usize) -> Result<Vec<Chunk>, String> {
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut open = false;
    while let Some(&raw) = body.get(*at) {
        let number = *at + 2;
        let trimmed = raw.trim();
        if trimmed == END_OF_FILE {
            *at += 1;
            if let Some(chunk) = chunks.last_mut().filter(|_| open) {
                chunk.end_of_file = true;
            }
            open = false;
            continue;
        }
        if [ADD, DELETE, UPDATE]
            .iter()
            .any(|m| trimmed.starts_with(m.trim_end()))
        {
            break;
        }
        let line = raw.trim_end();
        if line == "@@" || line.starts_with("@@ ") {
            let context = line
                .strip_prefix("@@ ")
                .map(|c| c.trim_start().to_owned())
                .filter(|c| !c.is_empty());
            chunks.push(Chunk {
                context,
                ..Chunk::default()
            });
            open = true;
            *at += 1;
            continue;
        }
        let (kind, text) = match raw.chars().next() {
            None => (' ', ""),
            Some(c @ (' ' | '-' | '+')) => (c, &raw[1..]),
            Some(_) => {
                return Err(format!(
                    "line {number}: `{}` is not a line of a hunk (` `, `-` or `+` first)",
                    cut(raw)
                ));
            }
        };
        if !open {
            if !chunks.is_empty() {
                return Err(format!(
                    "line {number}: a hunk line after `{END_OF_FILE}` without a new `@@`"
                ));
            }
            chunks.push(Chunk::default());
            open = true;
        }
        let Some(chunk) = chunks.last_mut() else {
            break;
        };
        if kind != '+' {
            chunk.old.push(text.to_owned());
        }
        if kind != '-' {
            chunk.new.push(text.to_owned());
        }
        *at += 1;
    }
    if let Some(empty) = chunks
        .iter()
        .position(|c| c.old.is_empty() && c.new.is_empty())
    {
        return Err(format!("hunk {} of an update has no line", empty + 1));
    }
    Ok(chunks)
}

/// Takes off a heredoc around the patch (`<<'EOF'`, `<<"EOF"`, `<<EOF`
/// on the first line, its delimiter on the last).
fn strip_heredoc(lines: &mut Vec<&str>) {
    let Some(first) = lines.first().map(|l| l.trim()) else {
        return;
    };
    let Some(word) = first.strip_prefix("<<") else {
        return;
    };
    let word = word.trim().trim_matches(['\'', '"']);
    if lines.len() >= 2 && lines.last().map(|l| l.trim()) == Some(word) {
        lines.pop();
        lines.remove(0);
    }
}

/// A line of the patch as it may stand in a message: at most 80
/// characters.
fn cut(line: &str) -> String {
    match line.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    }
}

/// The patch of a command that pipes one into `apply_patch` (Codex
/// applies such a command itself instead of running it): `apply_patch
/// <<'EOF'` then the patch then `EOF`, perhaps after `cd DIR && `; the
/// directory, and the patch text.
pub(crate) fn in_command(command: &str) -> Option<(Option<String>, String)> {
    let command = command.trim();
    let (dir, rest) = match command.strip_prefix("cd ") {
        Some(rest) => {
            let (dir, tail) = rest.split_once("&&")?;
            (Some(unquote(dir.trim())?), tail.trim_start())
        }
        None => (None, command),
    };
    let rest = rest
        .strip_prefix("apply_patch")
        .or_else(|| rest.strip_prefix("applypatch"))?;
    let rest = rest.trim_start_matches([' ', '\t']).strip_prefix("<<")?;
    let (head, body) = rest.split_once('\n')?;
    let word = head
        .trim()
        .trim_start_matches('-')
        .trim_matches(['\'', '"']);
    if word.is_empty() || word.contains(char::is_whitespace) {
        return None;
    }
    let end = body
        .lines()
        .position(|l| l.trim() == word)
        .unwrap_or(usize::MAX);
    let lines: Vec<&str> = body.lines().collect();
    if end == usize::MAX || lines[end + 1..].iter().any(|l| !l.trim().is_empty()) {
        return None;
    }
    let mut patch = lines[..end].join("\n");
    patch.push('\n');
    Some((dir, patch))
}

/// A directory word of `cd`: bare, or in single or double quotes without
/// anything the shell would expand.
fn unquote(word: &str) -> Option<String> {
    let inner = if let Some(q) = word.strip_prefix('\'').and_then(|w| w.strip_suffix('\'')) {
        q
    } else if let Some(q) = word.strip_prefix('"').and_then(|w| w.strip_suffix('"')) {
        if q.contains(['$', '`', '\\', '"']) {
            return None;
        }
        q
    } else {
        if word.contains([' ', '$', '`', '\\', '\'', '"', '~', '*', '?', ';', '|', '&']) {
            return None;
        }
        word
    };
    (!inner.is_empty()).then(|| inner.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_operations_of_a_patch_are_read() {
        let patch = "*** Begin Patch\n*** Add File: new.txt\n+first\n+\n*** Update File: src/lib.rs\n\
                     *** Move to: src/main.rs\n@@ fn greet() {\n-    old();\n+    new();\n@@\n \
                     fn other() {\n-    1\n+    2\n }\n\n*** End of File\n*** Delete File: old.txt\n\
                     *** End Patch\n";
        assert_eq!(
            parse(patch),
            Ok(vec![
                FileOp::Add {
                    path: "new.txt".into(),
                    content: "first\n\n".into()
                },
                FileOp::Update {
                    path: "src/lib.rs".into(),
                    move_to: Some("src/main.rs".into()),
                    chunks: vec![
                        Chunk {
                            context: Some("fn greet() {".into()),
                            old: vec!["    old();".into()],
                            new: vec!["    new();".into()],
                            end_of_file: false,
                        },
                        Chunk {
                            context: None,
                            old: vec![
                                "fn other() {".into(),
                                "    1".into(),
                                "}".into(),
                                String::new()
                            ],
                            new: vec![
                                "fn other() {".into(),
                                "    2".into(),
                                "}".into(),
                                String::new()
                            ],
                            end_of_file: true,
                        },
                    ],
                },
                FileOp::Delete {
                    path: "old.txt".into()
                },
            ])
        );
    }

    #[test]
    fn a_first_hunk_may_leave_out_its_marker_and_a_heredoc_is_taken_off() {
        assert_eq!(
            parse("<<'EOF'\n  *** Begin Patch\n*** Update File: a\n-x\n+y\n *** End Patch \nEOF\n"),
            Ok(vec![FileOp::Update {
                path: "a".into(),
                move_to: None,
                chunks: vec![Chunk {
                    context: None,
                    old: vec!["x".into()],
                    new: vec!["y".into()],
                    end_of_file: false
                }],
            }])
        );
    }

    #[test]
    fn what_is_not_a_patch_says_why() {
        let cases = [
            "not a patch at all",
            "*** Begin Patch\n*** Add File: a\n+x\n",
            "*** Begin Patch\n*** End Patch",
            "*** Begin Patch\n*** Copy File: a\n*** End Patch",
            "*** Begin Patch\n*** Update File: a\n*** End Patch",
            "*** Begin Patch\n*** Update File: a\n@@\nx\n*** End Patch",
            "*** Begin Patch\n*** Update File: a\n@@\n@@\n-x\n*** End Patch",
            "*** Begin Patch\n*** Delete File:   \n*** End Patch",
            "",
        ];
        let got: Vec<String> = cases.iter().map(|c| parse(c).unwrap_err()).collect();
        assert_eq!(
            got,
            [
                "its first line is not `*** Begin Patch`",
                "its last line is not `*** End Patch`",
                "it names no file",
                "line 2: `*** Copy File: a` is not a file operation (`*** Add File: `, `*** \
                 Delete File: ` or `*** Update File: `)",
                "line 2: the update of `a` has no hunk",
                "line 4: `x` is not a line of a hunk (` `, `-` or `+` first)",
                "hunk 1 of an update has no line",
                "line 2: a file operation without a path",
                "it is empty",
            ]
        );
    }

    #[test]
    fn a_patch_piped_into_apply_patch_is_found_in_a_command() {
        assert_eq!(
            in_command(
                "apply_patch <<'PATCH'\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nPATCH"
            ),
            Some((
                None,
                "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n".to_owned()
            ))
        );
        assert_eq!(
            in_command("cd 'sub dir' && apply_patch <<EOF\n*** Begin Patch\n*** End Patch\nEOF\n"),
            Some((
                Some("sub dir".to_owned()),
                "*** Begin Patch\n*** End Patch\n".to_owned()
            ))
        );
        for not in [
            "apply_patch",
            "apply_patch <<'EOF'\n*** Begin Patch\n",
            "apply_patch <<'EOF'\nx\nEOF\nrm -rf a",
            "cd $HOME && apply_patch <<EOF\nx\nEOF",
            "echo apply_patch <<EOF\nx\nEOF",
        ] {
            assert_eq!(in_command(not), None, "{not}");
        }
    }
}
