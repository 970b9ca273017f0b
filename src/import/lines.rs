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
pub(crate) const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// The problem of a line longer than [`MAX_LINE_BYTES`].
pub(crate) fn too_long() -> String {
    format!(
        "longer than {} MiB, the most a line may hold; skipped",
        MAX_LINE_BYTES >> 20
    )
}

/// The problem of a line that is not a JSON object; `last_unterminated`:
/// it is the file's last line, cut off.
pub(crate) fn unreadable(err: &serde_json::Error, last_unterminated: bool) -> String {
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
pub(crate) enum Line<'a> {
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
pub(crate) fn for_each_line(path: &Path, each: impl FnMut(usize, Line<'_>)) -> io::Result<()> {
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
    /// Claude Code's `message.id`: the model message an entry is a block of.
    #[serde(default)]
    message: MessageId,
}

/// The `id` of an entry's `message`, whatever else the message holds (and
/// nothing when it is not an object or has no string `id`).
#[derive(Default)]
struct MessageId(Option<String>);

impl<'de> Deserialize<'de> for MessageId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = MessageId;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("anything")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<MessageId, A::Error> {
                let mut id = None;
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if key == "id" {
                        id = map
                            .next_value::<serde_json::Value>()?
                            .as_str()
                            .map(str::to_owned);
                    } else {
                        map.next_value::<serde::de::IgnoredAny>()?;
                    }
                }
                Ok(MessageId(id))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<MessageId, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(MessageId(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<MessageId, E> {
                Ok(MessageId(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<MessageId, E> {
                Ok(MessageId(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<MessageId, E> {
                Ok(MessageId(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<MessageId, E> {
                Ok(MessageId(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<MessageId, E> {
                Ok(MessageId(None))
            }
            fn visit_unit<E>(self) -> Result<MessageId, E> {
                Ok(MessageId(None))
            }
        }
        deserializer.deserialize_any(Visit)
    }
}

/// The entries of one branch to follow, by id with the line each was read
/// on, and the model messages (`message.id`) its entries are blocks of;
/// `None` when the session has no tree links (every entry is followed).
#[derive(Debug, Default)]
pub(crate) struct Branch {
    ids: Option<HashMap<String, usize>>,
    messages: HashSet<String>,
    notes: Vec<(usize, String)>,
}

impl Branch {
    /// Whether the entry `id`, read on `line`, is on the branch (entries
    /// without an id are; a second line with an id already read is not).
    pub(crate) fn contains(&self, id: Option<&str>, line: usize) -> bool {
        match (&self.ids, id) {
            (Some(ids), Some(id)) => ids.get(id) == Some(&line),
            _ => true,
        }
    }

    /// Whether `id` is the id of a model message some entry of the branch
    /// is a block of (Claude Code writes each block of one message as an
    /// entry of its own, and they need not all be on one chain).
    pub(crate) fn has_message(&self, id: Option<&str>) -> bool {
        id.is_some_and(|id| self.messages.contains(id))
    }

    /// The line of the branch's first entry.
    pub(crate) fn first_line(&self) -> Option<usize> {
        self.ids.as_ref()?.values().min().copied()
    }

    /// What finding the branch had to assume, by line.
    pub(crate) fn notes(&self) -> &[(usize, String)] {
        &self.notes
    }
}

/// One entry of the first pass.
struct Node {
    parent: Option<String>,
    line: usize,
    sidechain: bool,
    message: Option<String>,
}

/// The first pass over a session: every entry's links, kept by id, and
/// what reading them had to assume.
#[derive(Default)]
pub(crate) struct Tree {
    nodes: HashMap<String, Node>,
    /// Readable entries with an id, in file order: (line, id).
    order: Vec<(usize, String)>,
    /// Lines that could not be read (not JSON, too long).
    unreadable: Vec<usize>,
    /// The last entry with an id that is not a side chain.
    last_main: Option<String>,
    /// Assumptions and repeats, by line.
    notes: Vec<(usize, String)>,
    /// The file's name, for errors.
    name: String,
}

/// First pass: the links of every entry of `path`.
pub(crate) fn tree(path: &Path) -> Result<Tree, String> {
    let file = File::open(path).map_err(|err| format!("cannot read {}: {err}", path.display()))?;
    tree_of(
        BufReader::with_capacity(1 << 16, file),
        MAX_LINE_BYTES,
        &path.display().to_string(),
    )
}

/// [`tree`] over the lines of `reader` (at most `max` bytes each) of the
/// file called `name`.
fn tree_of(reader: impl BufRead, max: usize, name: &str) -> Result<Tree, String> {
    let mut tree = Tree {
        nodes: HashMap::new(),
        order: Vec::new(),
        unreadable: Vec::new(),
        last_main: None,
        notes: Vec::new(),
        name: name.to_owned(),
    };
    each_line_of(reader, max, |number, line| {
        let Line::Text { bytes, .. } = line else {
            tree.unreadable.push(number);
            return;
        };
        let Ok(links) = serde_json::from_slice::<Links>(bytes) else {
            tree.unreadable.push(number);
            return;
        };
        tree.add(number, links);
    })
    .map_err(|err| format!("cannot read {name}: {err}"))?;
    Ok(tree)
}

impl Tree {
    fn add(&mut self, number: usize, links: Links) {
        let Some(id) = links.id else {
            return;
        };
        if let Some(first) = self.nodes.get(&id) {
            self.notes.push((
                number,
                format!(
                    "entry `{id}` was written before, on line {}; this copy is skipped",
                    first.line
                ),
            ));
            return;
        }
        let parent = match (links.parent, links.logical_parent) {
            (Some(parent), _) => Some(parent),
            (None, Some(logical)) if self.nodes.contains_key(&logical) => Some(logical),
            (None, Some(logical)) => {
                // Claude Code's compaction boundary names the entry before
                // it, which most real files do not hold: the chain goes on
                // through the entry written before the boundary.
                let before = self.last_main.clone();
                let said = match &before {
                    Some(before) => format!(
                        "the compaction boundary names `{logical}` as the entry before it, which \
                         is not in the file; the branch is assumed to go on through the entry \
                         written before it (`{before}`, line {})",
                        self.nodes.get(before).map_or(0, |n| n.line)
                    ),
                    None => format!(
                        "the compaction boundary names `{logical}` as the entry before it, which \
                         is not in the file, and no entry comes before it; the branch starts here"
                    ),
                };
                self.notes.push((number, said));
                before
            }
            (None, None) => None,
        };
        if !links.sidechain {
            self.last_main = Some(id.clone());
        }
        self.order.push((number, id.clone()));
        self.nodes.insert(
            id,
            Node {
                parent,
                line: number,
                sidechain: links.sidechain,
                message: links.message.0,
            },
        );
    }

    /// The branch that ends at `leaf` (default: the last entry with an id
    /// that is not a side chain; when every entry is one, a sub-agent's own
    /// transcript, the last entry).
    pub(crate) fn branch(&self, leaf: Option<&str>) -> Result<Branch, String> {
        if self.nodes.is_empty() {
            return Ok(Branch::default());
        }
        let start = match leaf {
            Some(id) if self.nodes.contains_key(id) => id.to_owned(),
            Some(id) => {
                return Err(format!(
                    "--branch {id}: no entry of {} has that id",
                    self.name
                ));
            }
            None => match self.last_main.clone().or_else(|| self.last_side()) {
                Some(id) => id,
                None => return Ok(Branch::default()),
            },
        };
        let sidechain = self.nodes.get(&start).is_some_and(|n| n.sidechain);
        let mut branch = self.walk(&start, |_| true);
        if sidechain && self.last_main.is_none() && leaf.is_none() {
            let line = self.order.first().map_or(1, |(l, _)| *l);
            branch.notes.push((
                line,
                "every entry is marked `isSidechain` (a sub-agent's own transcript): its chain \
                 is imported"
                    .to_owned(),
            ));
        }
        let tree_notes = self
            .notes
            .iter()
            .filter(|(line, _)| branch.ids.as_ref().is_none_or(|ids| self.on(ids, *line)));
        branch.notes.extend(tree_notes.cloned());
        branch.notes.sort();
        Ok(branch)
    }

    /// The side chains (Claude Code's sub-agents), each as the branch that
    /// ends at its last entry, in the order they begin; empty when the
    /// main branch is itself a side chain.
    pub(crate) fn sidechains(&self) -> Vec<Branch> {
        if self.last_main.is_none() {
            return Vec::new();
        }
        // Each side-chain entry's first entry (the sub-agent's prompt),
        // and the last entry of each, in the order they begin.
        let mut root_of: HashMap<&str, &str> = HashMap::new();
        let mut roots: Vec<&str> = Vec::new();
        let mut last: HashMap<&str, &str> = HashMap::new();
        for (_, id) in &self.order {
            let Some(node) = self.nodes.get(id) else {
                continue;
            };
            if !node.sidechain {
                continue;
            }
            let root = match node
                .parent
                .as_deref()
                .filter(|p| self.nodes.get(*p).is_some_and(|n| n.sidechain))
                .and_then(|p| root_of.get(p).copied())
            {
                Some(root) => root,
                None => {
                    roots.push(id);
                    id
                }
            };
            root_of.insert(id, root);
            last.insert(root, id);
        }
        roots
            .iter()
            .filter_map(|root| last.get(root))
            .map(|leaf| self.walk(leaf, |n| n.sidechain))
            .collect()
    }

    /// Whether the entry read on `line` is one of `ids` (or was a copy
    /// of one).
    fn on(&self, ids: &HashMap<String, usize>, line: usize) -> bool {
        let at = self.order.partition_point(|(l, _)| *l < line);
        match self.order.get(at) {
            Some((l, id)) if *l == line => ids.contains_key(id),
            _ => true,
        }
    }

    fn last_side(&self) -> Option<String> {
        self.order.last().map(|(_, id)| id.clone())
    }

    /// The entries from `start` up through its parents while `keep` holds.
    fn walk(&self, start: &str, keep: impl Fn(&Node) -> bool) -> Branch {
        let mut ids = HashMap::new();
        let mut messages = HashSet::new();
        let mut notes = Vec::new();
        let mut at = Some(start.to_owned());
        while let Some(id) = at {
            if ids.contains_key(&id) {
                break; // a loop in the links: stop rather than spin
            }
            let Some(node) = self.nodes.get(&id).filter(|n| keep(n)) else {
                break;
            };
            ids.insert(id.clone(), node.line);
            if let Some(message) = &node.message {
                messages.insert(message.clone());
            }
            at = match &node.parent {
                Some(parent) if !self.nodes.contains_key(parent) => {
                    let assumed = through_unreadable(&self.order, &self.unreadable, node.line);
                    if let Some((bad, (line, before))) = assumed {
                        notes.push((
                            node.line,
                            format!(
                                "this entry's parent `{parent}` is on no readable line; line \
                                 {bad} could not be read, so the branch is assumed to go on \
                                 through the entry before it (`{before}`, line {line})"
                            ),
                        ));
                    }
                    assumed.map(|(_, (_, before))| before.clone())
                }
                parent => parent.clone(),
            };
        }
        Branch {
            ids: Some(ids),
            messages,
            notes,
        }
    }
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
        let b = tree_of(text.as_bytes(), max, "s.jsonl")
            .unwrap()
            .branch(None)
            .unwrap();
        let mut ids: Vec<String> = b.ids.clone().unwrap().into_keys().collect();
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
