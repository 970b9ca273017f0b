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
    /// Claude Code's compaction boundary has no `parentUuid`; this names
    /// the entry before the compaction.
    #[serde(default, rename = "logicalParentUuid")]
    logical_parent: Option<String>,
    #[serde(default, rename = "isSidechain")]
    sidechain: bool,
}

/// The entries of the branch to follow, by id; `None` when the session
/// has no tree links (every entry is followed).
pub struct Branch {
    ids: Option<HashSet<String>>,
    notes: Vec<(usize, String)>,
}

impl Branch {
    /// Whether the entry `id` is on the branch (entries without an id are).
    pub fn contains(&self, id: Option<&str>) -> bool {
        match (&self.ids, id) {
            (Some(ids), Some(id)) => ids.contains(id),
            _ => true,
        }
    }

    /// What finding the branch had to assume, by line.
    pub fn notes(&self) -> &[(usize, String)] {
        &self.notes
    }
}

/// One entry of the first pass: its parent and its line.
struct Node {
    parent: Option<String>,
    line: usize,
}

/// First pass: the branch that ends at `leaf` (default: the last entry
/// with an id that is not a side chain).
///
/// A line that cannot be read (not JSON, too long) hides its id, so the
/// entry after it names a parent no readable line has. The chain then
/// goes on through the last readable entry before the unreadable line
/// (sessions are appended in order, so that entry is most likely its
/// parent), and the assumption is noted at the entry's line.
pub fn branch(path: &Path, leaf: Option<&str>) -> Result<Branch, String> {
    let file = File::open(path).map_err(|err| format!("cannot read {}: {err}", path.display()))?;
    branch_of(
        BufReader::with_capacity(1 << 16, file),
        MAX_LINE_BYTES,
        leaf,
        &path.display().to_string(),
    )
}

/// [`branch`] over the lines of `reader` (at most `max` bytes each) of
/// the file called `name`.
fn branch_of(
    reader: impl BufRead,
    max: usize,
    leaf: Option<&str>,
    name: &str,
) -> Result<Branch, String> {
    let mut nodes: HashMap<String, Node> = HashMap::new();
    // Readable entries with an id, in file order: (line, id).
    let mut order: Vec<(usize, String)> = Vec::new();
    let mut unreadable: Vec<usize> = Vec::new();
    let mut last: Option<String> = None;
    each_line_of(reader, max, |number, line| {
        let Line::Text { bytes, .. } = line else {
            unreadable.push(number);
            return;
        };
        let Ok(links) = serde_json::from_slice::<Links>(bytes) else {
            unreadable.push(number);
            return;
        };
        if let Some(id) = links.id {
            if !links.sidechain {
                last = Some(id.clone());
            }
            if let std::collections::hash_map::Entry::Vacant(slot) = nodes.entry(id) {
                order.push((number, slot.key().clone()));
                slot.insert(Node {
                    parent: links.parent.or(links.logical_parent),
                    line: number,
                });
            }
        }
    })
    .map_err(|err| format!("cannot read {name}: {err}"))?;
    if nodes.is_empty() {
        return Ok(Branch {
            ids: None,
            notes: Vec::new(),
        });
    }
    let start = match leaf {
        Some(id) if nodes.contains_key(id) => id.to_owned(),
        Some(id) => {
            return Err(format!("--branch {id}: no entry of {name} has that id"));
        }
        None => match last {
            Some(id) => id,
            None => {
                return Ok(Branch {
                    ids: None,
                    notes: Vec::new(),
                });
            }
        },
    };
    let mut ids = HashSet::new();
    let mut notes = Vec::new();
    let mut at = Some(start);
    while let Some(id) = at {
        if !ids.insert(id.clone()) {
            break; // a loop in the links: stop rather than spin
        }
        let Some(node) = nodes.get(&id) else {
            break;
        };
        at = match &node.parent {
            Some(parent) if !nodes.contains_key(parent) => {
                let assumed = through_unreadable(&order, &unreadable, node.line);
                if let Some((bad, (line, before))) = assumed {
                    notes.push((
                        node.line,
                        format!(
                            "this entry's parent `{parent}` is on no readable line; line {bad} \
                             could not be read, so the branch is assumed to go on through the \
                             entry before it (`{before}`, line {line})"
                        ),
                    ));
                }
                assumed.map(|(_, (_, before))| before.clone())
            }
            parent => parent.clone(),
        };
    }
    Ok(Branch {
        ids: Some(ids),
        notes,
    })
}

/// For an entry on line `line` whose parent is unknown: the nearest
/// unreadable line before it, and the last readable entry before that.
fn through_unreadable<'a>(
    order: &'a [(usize, String)],
    unreadable: &[usize],
    line: usize,
) -> Option<(usize, &'a (usize, String))> {
    let bad = *unreadable.get(unreadable.partition_point(|&l| l < line).checked_sub(1)?)?;
    let before = order.get(order.partition_point(|(l, _)| *l < bad).checked_sub(1)?)?;
    Some((bad, before))
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

    /// The ids on the branch, sorted, and the notes.
    fn branch_in(text: &str, max: usize) -> (Vec<String>, Vec<(usize, String)>) {
        let b = branch_of(text.as_bytes(), max, None, "s.jsonl").unwrap();
        let mut ids: Vec<String> = b.ids.clone().unwrap().into_iter().collect();
        ids.sort();
        (ids, b.notes)
    }

    /// Issue 14 audit: an unreadable line in the middle hid its id, so
    /// the chain stopped at the entry after it and every call before it
    /// was dropped.
    #[test]
    fn the_branch_goes_on_through_an_unreadable_or_too_long_line() {
        let entry = |id: &str, parent: &str| format!("{{\"id\":\"{id}\",\"parentId\":{parent}}}\n");
        let head = format!("{}{}", entry("a", "null"), entry("b", "\"a\""));
        let tail = format!("{}{}", entry("d", "\"c\""), entry("e", "\"d\""));
        let note = (
            4,
            "this entry's parent `c` is on no readable line; line 3 could not be read, so the \
             branch is assumed to go on through the entry before it (`b`, line 2)"
                .to_owned(),
        );
        let all = ["a", "b", "d", "e"].map(str::to_owned).to_vec();
        // Not JSON.
        let broken = format!("{head}{{\"id\":\"c\",\"parentId\":\"b\" \\x}}\n{tail}");
        assert_eq!(branch_in(&broken, 1000), (all.clone(), vec![note.clone()]));
        // Longer than a line may be.
        let long = format!(
            "{head}{{\"id\":\"c\",\"parentId\":\"b\",\"x\":\"{}\"}}\n{tail}",
            "x".repeat(200)
        );
        assert_eq!(branch_in(&long, 100), (all, vec![note]));
        // A parent that is simply not in the file (no line was lost): the
        // branch starts there, and nothing is assumed.
        assert_eq!(
            branch_in(&tail, 1000),
            (["d", "e"].map(str::to_owned).to_vec(), Vec::new())
        );
    }

    /// Claude Code's compaction boundary has `parentUuid: null` and names
    /// the entry before it in `logicalParentUuid`.
    #[test]
    fn a_compaction_boundary_links_to_its_logical_parent() {
        let text = "{\"uuid\":\"a\",\"parentUuid\":null}\n\
                    {\"uuid\":\"b\",\"parentUuid\":null,\"logicalParentUuid\":\"a\"}\n\
                    {\"uuid\":\"c\",\"parentUuid\":\"b\"}\n";
        assert_eq!(
            branch_in(text, 1000),
            (["a", "b", "c"].map(str::to_owned).to_vec(), Vec::new())
        );
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
