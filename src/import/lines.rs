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
    /// The working directory the entry records (Claude Code's entries,
    /// pi's header).
    #[serde(default)]
    cwd: Option<serde_json::Value>,
    /// Claude Code's `message.id` (the model message an entry is a block
    /// of), and the tool calls in the message's content.
    #[serde(default)]
    message: MessageLinks,
}

/// What the first pass keeps of an entry's `message`: its `id` (when it
/// is a string) and the tool calls of its `content` (blocks of type
/// `tool_use`, Claude Code's, or `toolCall`, pi's); nothing of anything
/// else, and nothing when it is not an object.
#[derive(Default)]
struct MessageLinks {
    id: Option<String>,
    calls: Vec<(String, String)>,
}

/// A content block's type, id and name, or nothing (any other value).
#[derive(Default)]
struct BlockLinks {
    kind: Option<String>,
    id: Option<String>,
    name: Option<String>,
}

/// The calls of a message's `content` (any other value: none).
#[derive(Default)]
struct ContentLinks(Vec<(String, String)>);

/// Deserializes any JSON value as `T::default()` but for what
/// `map` reads of an object and `seq` of an array.
macro_rules! lenient {
    ($ty:ty, map($m:ident) $map:block, seq($s:ident) $seq:block) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Visit;
                impl<'de> serde::de::Visitor<'de> for Visit {
                    type Value = $ty;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str("anything")
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(
                        self,
                        mut $m: A,
                    ) -> Result<$ty, A::Error> {
                        $map
                    }
                    fn visit_seq<A: serde::de::SeqAccess<'de>>(
                        self,
                        mut $s: A,
                    ) -> Result<$ty, A::Error> {
                        $seq
                    }
                    fn visit_str<E>(self, _: &str) -> Result<$ty, E> {
                        Ok(<$ty>::default())
                    }
                    fn visit_bool<E>(self, _: bool) -> Result<$ty, E> {
                        Ok(<$ty>::default())
                    }
                    fn visit_i64<E>(self, _: i64) -> Result<$ty, E> {
                        Ok(<$ty>::default())
                    }
                    fn visit_u64<E>(self, _: u64) -> Result<$ty, E> {
                        Ok(<$ty>::default())
                    }
                    fn visit_f64<E>(self, _: f64) -> Result<$ty, E> {
                        Ok(<$ty>::default())
                    }
                    fn visit_unit<E>(self) -> Result<$ty, E> {
                        Ok(<$ty>::default())
                    }
                }
                deserializer.deserialize_any(Visit)
            }
        }
    };
}

/// Skips every element of a sequence.
fn skip_seq<'de, A: serde::de::SeqAccess<'de>>(seq: &mut A) -> Result<(), A::Error> {
    while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
    Ok(())
}

lenient!(MessageLinks, map(map) {
    let mut links = MessageLinks::default();
    while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
        match &*key {
            "id" => links.id = map.next_value::<serde_json::Value>()?.as_str().map(str::to_owned),
            "content" => links.calls = map.next_value::<ContentLinks>()?.0,
            _ => {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
    }
    Ok(links)
}, seq(seq) {
    skip_seq(&mut seq)?;
    Ok(MessageLinks::default())
});

lenient!(ContentLinks, map(map) {
    while map.next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?.is_some() {}
    Ok(ContentLinks::default())
}, seq(seq) {
    let mut calls = Vec::new();
    while let Some(block) = seq.next_element::<BlockLinks>()? {
        if matches!(block.kind.as_deref(), Some("tool_use" | "toolCall")) {
            calls.push((block.id.unwrap_or_default(), block.name.unwrap_or_default()));
        }
    }
    Ok(ContentLinks(calls))
});

lenient!(BlockLinks, map(map) {
    let mut block = BlockLinks::default();
    while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
        let slot = match &*key {
            "type" => &mut block.kind,
            "id" => &mut block.id,
            "name" => &mut block.name,
            _ => {
                map.next_value::<serde::de::IgnoredAny>()?;
                continue;
            }
        };
        *slot = map.next_value::<serde_json::Value>()?.as_str().map(str::to_owned);
    }
    Ok(block)
}, seq(seq) {
    skip_seq(&mut seq)?;
    Ok(BlockLinks::default())
});

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
    /// Its chain of parents reaches an entry without a parent (the
    /// session's root), not one whose parent is missing.
    rooted: bool,
    /// Entries on its chain, itself included.
    depth: usize,
}

/// A tool call as the first pass counts it: the line of the entry it is
/// in, its id and its tool's name, as recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FileCall {
    /// The line.
    pub line: usize,
    /// The call's id (empty when it has none).
    pub id: String,
    /// The tool's name.
    pub tool: String,
}

/// The tool calls of a file, counted once for each id, in file order.
#[derive(Debug, Default)]
pub(crate) struct FileCalls {
    calls: Vec<FileCall>,
    ids: HashSet<String>,
}

impl FileCalls {
    /// Counts the call `id` of `tool`, met on `line`, unless a call with
    /// that id was counted before.
    pub(crate) fn add(&mut self, line: usize, id: &str, tool: &str) {
        if self.ids.insert(id.to_owned()) {
            self.calls.push(FileCall {
                line,
                id: id.to_owned(),
                tool: tool.to_owned(),
            });
        }
    }

    /// The calls counted.
    pub(crate) fn calls(&self) -> &[FileCall] {
        &self.calls
    }
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
    /// The last entry that is not a side chain and reaches the root.
    last_rooted_main: Option<String>,
    /// The entry that is not a side chain with the longest chain (the
    /// later of two as long).
    longest_main: Option<(usize, String)>,
    /// Every tool call of the file, once for each id, in file order.
    calls: FileCalls,
    /// The first working directory an entry records.
    first_cwd: Option<String>,
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
        last_rooted_main: None,
        longest_main: None,
        calls: FileCalls::default(),
        first_cwd: None,
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
        if self.first_cwd.is_none() {
            self.first_cwd = links
                .cwd
                .as_ref()
                .and_then(|c| c.as_str())
                .map(str::to_owned);
        }
        // Every call is counted, whatever entry it is in (a copy of a
        // call, by its id, once).
        for (id, tool) in &links.message.calls {
            self.calls.add(number, id, tool);
        }
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
                // through the last entry written before the boundary that
                // reaches the session's root (the entry written just
                // before it may itself hang from a missing parent), else
                // through the end of the longest chain before it.
                let (before, how) = match (&self.last_rooted_main, &self.longest_main) {
                    (Some(rooted), _) => (
                        Some(rooted.clone()),
                        "the last entry before it that reaches the session's first entry",
                    ),
                    (None, Some((_, longest))) => (
                        Some(longest.clone()),
                        "the end of the longest chain before it (no entry before it reaches \
                         the session's first entry)",
                    ),
                    (None, None) => (None, ""),
                };
                let said = match &before {
                    Some(before) => format!(
                        "the compaction boundary names `{logical}` as the entry before it, which \
                         is not in the file; the branch is assumed to go on through {how} \
                         (`{before}`, line {})",
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
        let (rooted, depth) = match &parent {
            None => (true, 1),
            Some(parent) => {
                let above = self.nodes.get(parent).or_else(|| {
                    // Across an unreadable line, as the walk goes.
                    through_unreadable(&self.order, &self.unreadable, number)
                        .and_then(|(_, (_, before))| self.nodes.get(before))
                });
                above.map_or((false, 1), |n| (n.rooted, n.depth.saturating_add(1)))
            }
        };
        if !links.sidechain {
            self.last_main = Some(id.clone());
            if rooted {
                self.last_rooted_main = Some(id.clone());
            }
            if self.longest_main.as_ref().is_none_or(|(d, _)| depth >= *d) {
                self.longest_main = Some((depth, id.clone()));
            }
        }
        self.order.push((number, id.clone()));
        self.nodes.insert(
            id,
            Node {
                parent,
                line: number,
                sidechain: links.sidechain,
                message: links.message.id,
                rooted,
                depth,
            },
        );
    }

    /// The first working directory an entry of the file records.
    pub(crate) fn first_cwd(&self) -> Option<&str> {
        self.first_cwd.as_deref()
    }

    /// Every tool call of the file, once for each id, in file order,
    /// whatever branch it is on.
    pub(crate) fn calls(&self) -> &[FileCall] {
        self.calls.calls()
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
        // The last entry may hang from a missing parent: the branch then
        // ends at the last entry that reaches the session's root.
        let mut cut = None;
        let start = match (&self.last_rooted_main, self.nodes.get(&start)) {
            (Some(rooted), Some(node)) if leaf.is_none() && !node.rooted && !node.sidechain => {
                cut = Some((node.line, start));
                rooted.clone()
            }
            _ => start,
        };
        let sidechain = self.nodes.get(&start).is_some_and(|n| n.sidechain);
        let mut branch = self.walk(&start, |_| true);
        if let Some((line, last)) = cut {
            let end = self.nodes.get(&start).map_or(0, |n| n.line);
            branch.notes.push((
                line,
                format!(
                    "the last entry (`{last}`) hangs from a parent that is not in the file; the \
                     branch followed ends at the last entry that reaches the session's first \
                     entry (`{start}`, line {end})"
                ),
            ));
        }
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

    /// Issue 43: a real session lost 144 of its 221 calls: its compaction
    /// boundary's logical parent is not in the file, the entry written
    /// just before the boundary hangs from a parent that is not in the
    /// file either, and the chain went on through that entry and stopped
    /// at its missing parent. It goes on through the last entry before
    /// the boundary that reaches the session's root.
    #[test]
    fn a_compaction_boundary_goes_on_through_the_last_entry_that_reaches_the_root() {
        let text = "{\"uuid\":\"a\",\"parentUuid\":null}\n\
                    {\"uuid\":\"b\",\"parentUuid\":\"a\"}\n\
                    {\"uuid\":\"c\",\"parentUuid\":\"b\"}\n\
                    {\"uuid\":\"x\",\"parentUuid\":\"not-here\"}\n\
                    {\"uuid\":\"k\",\"parentUuid\":null,\"logicalParentUuid\":\"gone\"}\n\
                    {\"uuid\":\"d\",\"parentUuid\":\"k\"}\n";
        assert_eq!(
            branch_in(text, 1000),
            (
                ["a", "b", "c", "d", "k"].map(str::to_owned).to_vec(),
                vec![(
                    5,
                    "the compaction boundary names `gone` as the entry before it, which is not \
                     in the file; the branch is assumed to go on through the last entry before \
                     it that reaches the session's first entry (`c`, line 3)"
                        .to_owned()
                )]
            )
        );
        // A file that starts mid-conversation: no entry reaches a root, and
        // the boundary goes on through the end of the longest chain.
        let text = "{\"uuid\":\"a\",\"parentUuid\":\"earlier\"}\n\
                    {\"uuid\":\"b\",\"parentUuid\":\"a\"}\n\
                    {\"uuid\":\"x\",\"parentUuid\":\"not-here\"}\n\
                    {\"uuid\":\"k\",\"parentUuid\":null,\"logicalParentUuid\":\"gone\"}\n";
        assert_eq!(
            branch_in(text, 1000),
            (
                ["a", "b", "k"].map(str::to_owned).to_vec(),
                vec![(
                    4,
                    "the compaction boundary names `gone` as the entry before it, which is not \
                     in the file; the branch is assumed to go on through the end of the longest \
                     chain before it (no entry before it reaches the session's first entry) \
                     (`b`, line 2)"
                        .to_owned()
                )]
            )
        );
    }

    /// The last entry hanging from a parent not in the file would make a
    /// branch of one entry: the branch ends at the last entry that reaches
    /// the root instead.
    #[test]
    fn a_last_entry_cut_from_the_root_is_not_the_leaf() {
        let text = "{\"uuid\":\"a\",\"parentUuid\":null}\n\
                    {\"uuid\":\"b\",\"parentUuid\":\"a\"}\n\
                    {\"uuid\":\"z\",\"parentUuid\":\"not-here\"}\n";
        assert_eq!(
            branch_in(text, 1000),
            (
                ["a", "b"].map(str::to_owned).to_vec(),
                vec![(
                    3,
                    "the last entry (`z`) hangs from a parent that is not in the file; the \
                     branch followed ends at the last entry that reaches the session's first \
                     entry (`b`, line 2)"
                        .to_owned()
                )]
            )
        );
    }

    /// The first pass counts every call of the file, on any branch, once
    /// for each id, whatever else the lines hold.
    #[test]
    fn every_call_of_the_file_is_counted_once() {
        let text = "{\"uuid\":\"a\",\"message\":{\"id\":\"m\",\"content\":[\
                    {\"type\":\"text\",\"text\":\"hi\"},\
                    {\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Read\",\"input\":{}},\
                    {\"type\":\"tool_use\",\"id\":\"t2\",\"name\":\"Bash\",\"input\":{\"x\":[1]}}]}}\n\
                    {\"uuid\":\"b\",\"parentUuid\":\"zz\",\"message\":{\"content\":\"a string\"}}\n\
                    {\"uuid\":\"c\",\"message\":{\"content\":[\
                    {\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Read\"},7,\"x\",null,\
                    {\"type\":\"toolCall\",\"id\":\"p1\",\"name\":\"read\"},\
                    {\"type\":\"tool_use\",\"id\":{\"n\":1}}]}}\n\
                    {\"id\":\"d\",\"message\":[1,2]}\n";
        let tree = tree_of(text.as_bytes(), 1000, "s.jsonl").unwrap();
        let call = |line, id: &str, tool: &str| FileCall {
            line,
            id: id.to_owned(),
            tool: tool.to_owned(),
        };
        assert_eq!(
            tree.calls(),
            [
                call(1, "t1", "Read"),
                call(1, "t2", "Bash"),
                call(3, "p1", "read"),
                call(3, "", "")
            ]
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
