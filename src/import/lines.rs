//! Reading a JSONL session as a stream, never whole: one line at a time,
//! each at most [`MAX_LINE_BYTES`], in two passes over the file. The first
//! keeps only each entry's id and parent id, to find the branch to follow
//! (the last entry's ancestors, or those of a chosen entry); the second
//! hands each line on that branch to the format's reader.

use std::collections::HashMap;
use std::collections::HashSet;
use std::fs::File;
use std::io;
use std::io::BufRead;
use std::io::BufReader;
use std::path::Path;

use serde::Deserialize;

/// The longest line read (64 MiB); a longer one is skipped and reported.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// The problem of a line longer than [`MAX_LINE_BYTES`].
pub fn too_long() -> String {
    format!(
        "longer than {} MiB, the most a line may hold; skipped",
        MAX_LINE_BYTES >> 20
    )
}

/// The problem of a line that is not a JSON object; `last_unterminated`:
/// it is the file's last line, cut off.
pub fn unreadable(err: &serde_json::Error, last_unterminated: bool) -> String {
    if last_unterminated {
        format!(
            "the last line is cut off ({err}); it was skipped — the session was probably still \
             being written"
        )
    } else {
        format!("not a JSON object ({err}); skipped")
    }
}

/// One line of the file.
pub enum Line<'a> {
    /// Its bytes, without the newline; `last_unterminated`: the file ends
    /// inside it (a session cut off mid-write).
    Text {
        /// The bytes.
        bytes: &'a [u8],
        /// The file ends without a newline after it.
        last_unterminated: bool,
    },
    /// Longer than [`MAX_LINE_BYTES`]; its bytes were skipped.
    TooLong,
}

/// Calls `each(line_number, line)` for every line of `path`, streaming.
pub fn for_each_line(path: &Path, each: impl FnMut(usize, Line<'_>)) -> io::Result<()> {
    each_line_of(
        BufReader::with_capacity(1 << 16, File::open(path)?),
        MAX_LINE_BYTES,
        each,
    )
}

/// Calls `each` for every line of `reader`; lines longer than `max` bytes
/// are skipped as [`Line::TooLong`] without being held.
fn each_line_of(
    mut reader: impl BufRead,
    max: usize,
    mut each: impl FnMut(usize, Line<'_>),
) -> io::Result<()> {
    let mut buf: Vec<u8> = Vec::new();
    let mut number = 0;
    loop {
        buf.clear();
        let mut too_long = false;
        let mut terminated = false;
        let mut any = false;
        loop {
            let chunk = reader.fill_buf()?;
            if chunk.is_empty() {
                break;
            }
            any = true;
            let (take, done) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (i, true),
                None => (chunk.len(), false),
            };
            if !too_long {
                if buf.len() + take > max {
                    too_long = true;
                    buf.clear();
                } else {
                    buf.extend_from_slice(&chunk[..take]);
                }
            }
            reader.consume(if done { take + 1 } else { take });
            if done {
                terminated = true;
                break;
            }
        }
        if !any {
            return Ok(());
        }
        number += 1;
        if too_long {
            each(number, Line::TooLong);
        } else if !buf.iter().all(u8::is_ascii_whitespace) {
            each(
                number,
                Line::Text {
                    bytes: &buf,
                    last_unterminated: !terminated,
                },
            );
        }
        if !terminated {
            return Ok(());
        }
    }
}

/// The tree links of one entry, whatever the format calls them.
#[derive(Deserialize)]
struct Links {
    #[serde(default, alias = "uuid")]
    id: Option<String>,
    #[serde(default, alias = "parentUuid")]
    #[serde(rename = "parentId")]
    parent: Option<String>,
    #[serde(default, rename = "isSidechain")]
    sidechain: bool,
}

/// The entries of the branch to follow, by id; `None` when the session
/// has no tree links (every entry is followed).
pub struct Branch {
    ids: Option<HashSet<String>>,
}

impl Branch {
    /// Whether the entry `id` is on the branch (entries without an id are).
    pub fn contains(&self, id: Option<&str>) -> bool {
        match (&self.ids, id) {
            (Some(ids), Some(id)) => ids.contains(id),
            _ => true,
        }
    }
}

/// First pass: the branch that ends at `leaf` (default: the last entry
/// with an id that is not a side chain).
pub fn branch(path: &Path, leaf: Option<&str>) -> Result<Branch, String> {
    let mut parents: HashMap<String, Option<String>> = HashMap::new();
    let mut last: Option<String> = None;
    for_each_line(path, |_, line| {
        let Line::Text { bytes, .. } = line else {
            return;
        };
        let Ok(links) = serde_json::from_slice::<Links>(bytes) else {
            return;
        };
        if let Some(id) = links.id {
            if !links.sidechain {
                last = Some(id.clone());
            }
            parents.entry(id).or_insert(links.parent);
        }
    })
    .map_err(|err| format!("cannot read {}: {err}", path.display()))?;
    if parents.is_empty() {
        return Ok(Branch { ids: None });
    }
    let start = match leaf {
        Some(id) if parents.contains_key(id) => id.to_owned(),
        Some(id) => {
            return Err(format!(
                "--branch {id}: no entry of {} has that id",
                path.display()
            ));
        }
        None => match last {
            Some(id) => id,
            None => return Ok(Branch { ids: None }),
        },
    };
    let mut ids = HashSet::new();
    let mut at = Some(start);
    while let Some(id) = at {
        if !ids.insert(id.clone()) {
            break; // a loop in the links: stop rather than spin
        }
        at = parents.get(&id).cloned().flatten();
    }
    Ok(Branch { ids: Some(ids) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str, max: usize) -> Vec<String> {
        let mut out = Vec::new();
        each_line_of(text.as_bytes(), max, |n, line| {
            out.push(match line {
                Line::Text {
                    bytes,
                    last_unterminated,
                } => format!(
                    "{n}:{}{}",
                    String::from_utf8_lossy(bytes),
                    if last_unterminated { " (cut)" } else { "" }
                ),
                Line::TooLong => format!("{n}: too long"),
            });
        })
        .unwrap();
        out
    }

    #[test]
    fn long_lines_are_skipped_without_being_held_and_a_cut_last_line_is_named() {
        assert_eq!(
            lines("ab\n\n0123456789\ncd\nef", 5),
            ["1:ab", "3: too long", "4:cd", "5:ef (cut)"]
        );
        assert_eq!(lines("", 5), Vec::<String>::new());
        assert_eq!(lines("ab\n", 5), ["1:ab"]);
    }
}
