//! The positioned YAML tree every scenario and suite file is read into
//! (docs/scenarios.md, "Errors in scenario files").
//!
//! A file is parsed once, by `saphyr-parser`'s event stream, into one
//! [`Node`] tree per document, each node with the line and column where it
//! is written. The serde model is deserialised from that tree
//! ([`super::de`]), and every later problem is located by looking its path
//! up in the same tree, so an error points at the node it concerns.
//!
//! What the tree accepts is the YAML of serde_yaml 0.9, which the loader
//! used before: YAML 1.2 core-schema scalars (`yes`, `no`, `on` are
//! strings), several documents separated by `---`, anchors and aliases
//! (an alias is a copy of what it names), no merge keys (`<<` is an
//! ordinary key), and the core tags `!!str`, `!!int`, `!!float`, `!!bool`,
//! `!!null`, `!!seq`, `!!map`. It refuses, with a located problem:
//! nesting deeper than [`MAX_DEPTH`], aliases that expand beyond
//! [`MAX_ALIAS_NODES`] nodes, a key written twice in one mapping, and any
//! other tag. A UTF-8 byte-order mark at the start of the text is skipped.

use std::collections::HashMap;
use std::fmt;

use saphyr_parser::Event;
use saphyr_parser::Parser;
use saphyr_parser::ScalarStyle;
use saphyr_parser::Span;
use saphyr_parser::Tag;

/// Mappings and sequences nest at most this deep; deeper is refused as
/// soon as the parser reaches it.
pub(crate) const MAX_DEPTH: usize = 128;
/// Aliases may add at most this many nodes to a document in all.
pub(crate) const MAX_ALIAS_NODES: usize = 100_000;

/// Where a node is written: 1-based line and column (in characters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Pos {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

impl Pos {
    /// The start of a file.
    pub(crate) const START: Pos = Pos { line: 1, column: 1 };

    fn of(span: &Span) -> Self {
        Self {
            line: span.start.line(),
            column: span.start.col() + 1,
        }
    }
}

/// A scalar's core-schema tag, when one is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CoreTag {
    /// `!!str`
    Str,
    /// `!!int`
    Int,
    /// `!!float`
    Float,
    /// `!!bool`
    Bool,
    /// `!!null`
    Null,
}

/// A scalar as written.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Scalar {
    /// The text, after YAML's escapes and folding.
    pub text: String,
    /// Written without quotes or block indicators: only plain scalars are
    /// read as null, booleans and numbers.
    pub plain: bool,
    /// A core tag, if written.
    pub tag: Option<CoreTag>,
}

/// What a node holds.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Kind {
    /// A scalar.
    Scalar(Scalar),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping: key and value nodes, in the order written.
    Map(Vec<(Node, Node)>),
}

/// One node of a document, with where it is written.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Node {
    /// Its position.
    pub pos: Pos,
    /// Its content.
    pub kind: Kind,
}

impl Node {
    /// Whether the node is a null scalar (empty, `~`, `null`), as a whole
    /// document that holds nothing is.
    pub(crate) fn is_null(&self) -> bool {
        match &self.kind {
            Kind::Scalar(s) => match s.tag {
                Some(CoreTag::Null) => true,
                Some(_) => false,
                None => s.plain && is_null_text(&s.text),
            },
            _ => false,
        }
    }

    /// The scalar text, if the node is a scalar.
    pub(crate) fn text(&self) -> Option<&str> {
        match &self.kind {
            Kind::Scalar(s) => Some(&s.text),
            _ => None,
        }
    }

    /// The value of `key`, when the node is a mapping that has it.
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|(_, v)| v)
    }

    /// The key and value nodes of `key`.
    pub(crate) fn entry(&self, key: &str) -> Option<(&Node, &Node)> {
        match &self.kind {
            Kind::Map(entries) => entries
                .iter()
                .find(|(k, _)| k.text() == Some(key))
                .map(|(k, v)| (k, v)),
            _ => None,
        }
    }

    /// The `index`-th item, when the node is a sequence.
    pub(crate) fn item(&self, index: usize) -> Option<&Node> {
        match &self.kind {
            Kind::Seq(items) => items.get(index),
            _ => None,
        }
    }

    /// Where the node at `path` is written (its key for [`Seg::Key`] when
    /// `key` is set), or the deepest ancestor of it that exists.
    pub(crate) fn locate(&self, path: &[Seg], key: bool) -> Pos {
        let mut node = self;
        let mut pos = self.pos;
        for (i, seg) in path.iter().enumerate() {
            let last = i + 1 == path.len();
            match seg {
                Seg::Key(name) => match node.entry(name) {
                    Some((k, v)) => {
                        pos = if last && key { k.pos } else { v.pos };
                        node = v;
                    }
                    None => return pos,
                },
                Seg::Index(index) => match node.item(*index) {
                    Some(item) => {
                        pos = item.pos;
                        node = item;
                    }
                    None => return pos,
                },
            }
        }
        pos
    }

    /// Removes the map entry or sequence item at `steps` (indices into
    /// each level); false when there is none (or `steps` is empty).
    pub(crate) fn remove(&mut self, steps: &[usize]) -> bool {
        let Some((last, parents)) = steps.split_last() else {
            return false;
        };
        let mut node = self;
        for &step in parents {
            node = match &mut node.kind {
                Kind::Seq(items) => match items.get_mut(step) {
                    Some(item) => item,
                    None => return false,
                },
                Kind::Map(entries) => match entries.get_mut(step) {
                    Some((_, value)) => value,
                    None => return false,
                },
                Kind::Scalar(_) => return false,
            };
        }
        match &mut node.kind {
            Kind::Seq(items) if *last < items.len() => {
                items.remove(*last);
                true
            }
            Kind::Map(entries) if *last < entries.len() => {
                entries.remove(*last);
                true
            }
            _ => false,
        }
    }

    /// The number of nodes in the tree, keys included.
    fn count(&self) -> usize {
        1 + match &self.kind {
            Kind::Scalar(_) => 0,
            Kind::Seq(items) => items.iter().map(Node::count).sum(),
            Kind::Map(entries) => entries.iter().map(|(k, v)| k.count() + v.count()).sum(),
        }
    }

    /// The tree as JSON (keys as their text), for validating a document
    /// against the JSON Schema.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match &self.kind {
            Kind::Scalar(s) => match resolve(s) {
                Resolved::Null => Value::Null,
                Resolved::Bool(b) => Value::Bool(b),
                Resolved::Unsigned(n) => Value::from(n),
                Resolved::Signed(n) => Value::from(n),
                Resolved::Float(f) => {
                    serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
                }
                Resolved::Str => Value::String(s.text.clone()),
                Resolved::Invalid => Value::String(s.text.clone()),
            },
            Kind::Seq(items) => Value::Array(items.iter().map(Node::to_json).collect()),
            Kind::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.text().unwrap_or_default().to_owned(), v.to_json()))
                    .collect(),
            ),
        }
    }
}

/// One step of a path in a document: a mapping key or a sequence index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Seg {
    /// A mapping key.
    Key(String),
    /// A sequence index (0-based).
    Index(usize),
}

/// A path written the way errors show it: `model[3].expect.contains`.
pub(crate) struct PathText<'a>(pub &'a [Seg]);

impl fmt::Display for PathText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                Seg::Key(key)
                    if key.is_empty()
                        || !key
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') =>
                {
                    write!(f, "[{key:?}]")?;
                }
                Seg::Key(key) if i == 0 => f.write_str(key)?,
                Seg::Key(key) => write!(f, ".{key}")?,
                Seg::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// What a plain scalar means under the YAML 1.2 core schema, as
/// serde_yaml 0.9 read it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Resolved {
    /// Null.
    Null,
    /// A boolean.
    Bool(bool),
    /// A non-negative integer.
    Unsigned(u64),
    /// A negative integer.
    Signed(i64),
    /// A floating-point number.
    Float(f64),
    /// A string (the scalar's text).
    Str,
    /// A tagged scalar whose text does not fit its tag.
    Invalid,
}

fn is_null_text(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

/// The meaning of a scalar: quoted and block scalars are strings; plain
/// ones are null, booleans, integers (decimal, `0x`, `0o`, `0b`) or
/// floats when they read as one, else strings; a core tag forces its type.
pub(crate) fn resolve(scalar: &Scalar) -> Resolved {
    let text = scalar.text.as_str();
    match scalar.tag {
        Some(CoreTag::Str) => return Resolved::Str,
        Some(CoreTag::Null) => {
            return if is_null_text(text) {
                Resolved::Null
            } else {
                Resolved::Invalid
            };
        }
        Some(CoreTag::Bool) => return parse_bool(text).map_or(Resolved::Invalid, Resolved::Bool),
        Some(CoreTag::Int) => return parse_int(text).unwrap_or(Resolved::Invalid),
        Some(CoreTag::Float) => {
            return match parse_int(text) {
                Some(Resolved::Unsigned(n)) => Resolved::Float(n as f64),
                Some(Resolved::Signed(n)) => Resolved::Float(n as f64),
                _ => parse_float(text).map_or(Resolved::Invalid, Resolved::Float),
            };
        }
        None => {}
    }
    if !scalar.plain {
        return Resolved::Str;
    }
    if is_null_text(text) {
        return Resolved::Null;
    }
    if let Some(b) = parse_bool(text) {
        return Resolved::Bool(b);
    }
    if let Some(int) = parse_int(text) {
        return int;
    }
    if !leading_zero_digits(text)
        && let Some(f) = parse_float(text)
    {
        return Resolved::Float(f);
    }
    Resolved::Str
}

fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// `0123` is a string in YAML 1.2, not an octal or decimal number.
fn leading_zero_digits(text: &str) -> bool {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    digits.len() > 1 && digits.starts_with('0') && digits[1..].bytes().all(|b| b.is_ascii_digit())
}

fn parse_int(text: &str) -> Option<Resolved> {
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if unsigned.starts_with(['+', '-']) || unsigned.is_empty() {
        return None;
    }
    let (digits, radix) = if let Some(rest) = unsigned.strip_prefix("0x") {
        (rest, 16)
    } else if let Some(rest) = unsigned.strip_prefix("0o") {
        (rest, 8)
    } else if let Some(rest) = unsigned.strip_prefix("0b") {
        (rest, 2)
    } else {
        if leading_zero_digits(unsigned) {
            return None;
        }
        (unsigned, 10)
    };
    if digits.is_empty() || digits.starts_with(['+', '-']) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    if !negative {
        return Some(Resolved::Unsigned(magnitude));
    }
    if magnitude == 0 {
        return Some(Resolved::Unsigned(0));
    }
    0i64.checked_sub_unsigned(magnitude).map(Resolved::Signed)
}

fn parse_float(text: &str) -> Option<f64> {
    let unsigned = match text.strip_prefix('+') {
        Some(rest) if rest.starts_with(['+', '-']) => return None,
        Some(rest) => rest,
        None => text,
    };
    match unsigned {
        ".inf" | ".Inf" | ".INF" => return Some(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => return Some(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Some(f64::NAN),
        _ => {}
    }
    // Rust also reads `inf`, `nan` and `infinity`; YAML does not.
    if unsigned
        .bytes()
        .any(|b| !(b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-')))
    {
        return None;
    }
    unsigned.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// One document of a file.
#[derive(Clone, Debug)]
pub(crate) struct Document {
    /// Its place in the file, from 0 (empty documents counted).
    pub index: usize,
    /// Where it starts.
    pub pos: Pos,
    /// Its root node.
    pub root: Node,
    /// Problems found while building it (duplicate keys); the tree no
    /// longer holds what they concern.
    pub problems: Vec<TreeProblem>,
}

/// A problem found while building the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TreeProblem {
    /// Where.
    pub pos: Pos,
    /// The path of the node concerned, written as errors show it.
    pub path: String,
    /// What is wrong and what to do.
    pub message: String,
}

/// The documents of a file, and the problem that stopped reading it, if
/// any (the documents before it are whole).
#[derive(Clone, Debug, Default)]
pub(crate) struct Stream {
    /// Every complete document.
    pub documents: Vec<Document>,
    /// A syntax error, a nesting or alias limit, an unsupported tag: the
    /// rest of the file is not read.
    pub fatal: Option<TreeProblem>,
}

/// A collection being built.
enum Frame {
    Seq {
        pos: Pos,
        anchor: usize,
        items: Vec<Node>,
    },
    Map {
        pos: Pos,
        anchor: usize,
        entries: Vec<(Node, Node)>,
        key: Option<Node>,
        /// First position of each scalar key.
        seen: HashMap<String, Pos>,
        /// Keys written twice: their entries are dropped.
        skip_next_value: bool,
    },
}

/// Builds the trees of one stream.
struct Builder {
    frames: Vec<Frame>,
    /// The keys or indices of the open frames, for problem paths.
    path: Vec<Seg>,
    /// Whether each open frame added a segment to `path` (the root adds
    /// none).
    pushed: Vec<bool>,
    anchors: HashMap<usize, Node>,
    alias_nodes: usize,
    problems: Vec<TreeProblem>,
}

impl Builder {
    fn new() -> Self {
        Self {
            frames: Vec::new(),
            path: Vec::new(),
            pushed: Vec::new(),
            anchors: HashMap::new(),
            alias_nodes: 0,
            problems: Vec::new(),
        }
    }

    /// The path segment the next node will have inside the innermost frame.
    fn next_seg(&self) -> Option<Seg> {
        match self.frames.last()? {
            Frame::Seq { items, .. } => Some(Seg::Index(items.len())),
            Frame::Map { key: Some(k), .. } => Some(Seg::Key(k.text().unwrap_or("?").to_owned())),
            Frame::Map { key: None, .. } => None,
        }
    }

    /// The path of the node the next event makes.
    fn node_path(&self) -> String {
        let mut path = self.path.clone();
        path.extend(self.next_seg());
        PathText(&path).to_string()
    }

    fn open(&mut self, frame: Frame, pos: Pos) -> Result<(), TreeProblem> {
        if self.frames.len() >= MAX_DEPTH {
            return Err(TreeProblem {
                pos,
                path: PathText(&self.path).to_string(),
                message: format!(
                    "the YAML nests deeper than {MAX_DEPTH} levels; a scenario never needs that much"
                ),
            });
        }
        let seg = if self.frames.is_empty() {
            None
        } else {
            // A collection used as a mapping key shows as `?`.
            Some(self.next_seg().unwrap_or(Seg::Key("?".to_owned())))
        };
        self.pushed.push(seg.is_some());
        self.path.extend(seg);
        self.frames.push(frame);
        Ok(())
    }

    /// Adds a finished node to the innermost frame; returns the node when
    /// there is no frame (it is the document's root).
    fn push(&mut self, node: Node) -> Option<Node> {
        let Some(frame) = self.frames.last_mut() else {
            return Some(node);
        };
        match frame {
            Frame::Seq { items, .. } => items.push(node),
            Frame::Map {
                entries,
                key,
                seen,
                skip_next_value,
                ..
            } => match key.take() {
                None => {
                    if let Some(text) = node.text() {
                        if let Some(first) = seen.get(text) {
                            self.problems.push(TreeProblem {
                                pos: node.pos,
                                path: PathText(&self.path).to_string(),
                                message: format!(
                                    "the key `{text}` is written twice in this mapping (first at \
                                     line {}, column {}); keep one",
                                    first.line, first.column
                                ),
                            });
                            *skip_next_value = true;
                        } else {
                            seen.insert(text.to_owned(), node.pos);
                        }
                    }
                    *key = Some(node);
                }
                Some(k) => {
                    if std::mem::take(skip_next_value) {
                        return None;
                    }
                    entries.push((k, node));
                }
            },
        }
        None
    }

    fn close(&mut self) -> Option<(Node, usize)> {
        let frame = self.frames.pop()?;
        if self.pushed.pop() == Some(true) {
            self.path.pop();
        }
        Some(match frame {
            Frame::Seq { pos, anchor, items } => (
                Node {
                    pos,
                    kind: Kind::Seq(items),
                },
                anchor,
            ),
            Frame::Map {
                pos,
                anchor,
                entries,
                ..
            } => (
                Node {
                    pos,
                    kind: Kind::Map(entries),
                },
                anchor,
            ),
        })
    }

    fn remember(&mut self, anchor: usize, node: &Node) {
        if anchor != 0 {
            self.anchors.insert(anchor, node.clone());
        }
    }

    fn alias(&mut self, id: usize, pos: Pos) -> Result<Node, TreeProblem> {
        let path = self.node_path();
        let problem = |message: String| TreeProblem { pos, path, message };
        let Some(node) = self.anchors.get(&id) else {
            return Err(problem("this alias names no anchor".to_owned()));
        };
        self.alias_nodes = self.alias_nodes.saturating_add(node.count());
        if self.alias_nodes > MAX_ALIAS_NODES {
            return Err(problem(format!(
                "aliases expand to more than {MAX_ALIAS_NODES} nodes in this document; write the \
                 values out or use fewer aliases"
            )));
        }
        Ok(node.clone())
    }
}

fn core_tag(tag: Option<&Tag>) -> Result<Option<CoreTag>, String> {
    let Some(tag) = tag else {
        return Ok(None);
    };
    if tag.handle == "tag:yaml.org,2002:" {
        return match tag.suffix.as_str() {
            "str" => Ok(Some(CoreTag::Str)),
            "int" => Ok(Some(CoreTag::Int)),
            "float" => Ok(Some(CoreTag::Float)),
            "bool" => Ok(Some(CoreTag::Bool)),
            "null" => Ok(Some(CoreTag::Null)),
            "seq" | "map" => Ok(None),
            other => Err(format!("!!{other}")),
        };
    }
    Err(format!("{}{}", tag.handle, tag.suffix))
}

fn unsupported_tag(written: &str) -> String {
    format!(
        "the YAML tag `{written}` is not supported; remove it (only the core tags !!str, !!int, \
         !!float, !!bool and !!null are read)"
    )
}

/// Parses every document of `text`.
pub(crate) fn parse(text: &str) -> Stream {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut parser = Parser::new_from_str(text);
    let mut stream = Stream::default();
    let mut builder = Builder::new();
    let mut doc_start = Pos::START;
    // Where the last document was found complete.
    let mut doc_end = Pos::START;
    let mut index = 0;
    while let Some(event) = parser.next_event() {
        let (event, span) = match event {
            Ok(pair) => pair,
            Err(err) => {
                let problem = syntax_problem(text, &err);
                // A tab before the end of the last document made the parser
                // close it early: what it holds is not what was written.
                if problem.pos < doc_end && problem.message.contains("a tab") {
                    stream.documents.pop();
                }
                stream.fatal = Some(problem);
                return stream;
            }
        };
        let pos = Pos::of(&span);
        let step = if let Event::DocumentStart(_) = event {
            doc_start = pos;
            builder = Builder::new();
            Ok(None)
        } else {
            builder.event(event, pos)
        };
        match step {
            Ok(Some(root)) => {
                doc_end = pos;
                stream.documents.push(Document {
                    index,
                    pos: doc_start,
                    root,
                    problems: std::mem::take(&mut builder.problems),
                });
                index += 1;
            }
            Ok(None) => {}
            Err(problem) => {
                stream.fatal = Some(problem);
                return stream;
            }
        }
    }
    stream
}

/// What the parser's error means for the person who wrote the file. A
/// tab is where YAML most often trips a newcomer, and the parser notices
/// it late (at the scalar it was reading, at the line after a blank line
/// holding it): a tab near where it stopped is what is reported, where
/// the tab is.
fn syntax_problem(text: &str, err: &saphyr_parser::ScanError) -> TreeProblem {
    let marker = err.marker();
    let info = err.info();
    let stopped = Pos {
        line: marker.line(),
        column: marker.col() + 1,
    };
    let message = if info.contains("recursion limit") {
        format!("the YAML nests deeper than {MAX_DEPTH} levels; a scenario never needs that much")
    } else if let Some((tab, indenting)) = tab_near(text, stopped, info) {
        let what = if indenting {
            "a tab in the indentation: YAML indents with spaces only, so replace it with spaces"
        } else {
            "a tab where YAML wants a space: replace it with a space"
        };
        let at = if tab.line == stopped.line {
            " on this line".to_owned()
        } else {
            format!(" at line {}, column {}", stopped.line, stopped.column)
        };
        return TreeProblem {
            pos: tab,
            path: String::new(),
            message: format!("YAML syntax error: {what} (the parser stopped{at}: {info})"),
        };
    } else {
        format!("YAML syntax error: {info}; check the brackets, quotes and indentation around here")
    };
    TreeProblem {
        pos: stopped,
        path: String::new(),
        message,
    }
}

/// Lines before the parser's stop that a tab it tripped on may be on.
const TAB_LINES_BEFORE: usize = 2;
/// Lines after the parser's stop that a tab it names may be on.
const TAB_LINES_AFTER: usize = 3;

/// The tab the parser tripped on, when one is near where it stopped, and
/// whether it is in a line's indentation: one the parser names, at or
/// after where it stopped (or in the indentation of that line); else one
/// in the indentation of that line or of the lines just before it, or
/// right at the stop.
fn tab_near(text: &str, stopped: Pos, info: &str) -> Option<(Pos, bool)> {
    let lines: Vec<&str> = text.split('\n').collect();
    let index = stopped.line.checked_sub(1)?;
    let line = lines.get(index)?;
    // In the indentation of line `i`: its column and line.
    let indent_tab = |i: usize| -> Option<(Pos, bool)> {
        let line = lines.get(i)?;
        let indent: String = line
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        let column = indent.chars().position(|c| c == '\t')?;
        Some((
            Pos {
                line: i + 1,
                column: column + 1,
            },
            true,
        ))
    };
    if info.contains("tab") {
        if let Some(found) = indent_tab(index) {
            return Some(found);
        }
        let column = stopped.column.saturating_sub(1);
        for (i, text) in lines
            .iter()
            .enumerate()
            .skip(index)
            .take(TAB_LINES_AFTER + 1)
        {
            let skip = if i == index { column } else { 0 };
            if let Some(at) = text.chars().skip(skip).position(|c| c == '\t') {
                let column_at = skip + at;
                let indenting = text.chars().take(column_at).all(|c| c == ' ' || c == '\t');
                return Some((
                    Pos {
                        line: i + 1,
                        column: column_at + 1,
                    },
                    indenting,
                ));
            }
        }
        return None;
    }
    let column = stopped.column.saturating_sub(1);
    for at in [column, column.saturating_sub(1)] {
        if line.chars().nth(at) == Some('\t') {
            let indenting = line.chars().take(at).all(|c| c == ' ' || c == '\t');
            return Some((
                Pos {
                    line: stopped.line,
                    column: at + 1,
                },
                indenting,
            ));
        }
    }
    (index.saturating_sub(TAB_LINES_BEFORE)..=index)
        .rev()
        .find_map(indent_tab)
}

impl Builder {
    /// Takes one event of a document (not its start): the document's root
    /// when the event completes it.
    fn event(&mut self, event: Event<'_>, pos: Pos) -> Result<Option<Node>, TreeProblem> {
        match event {
            Event::Scalar(value, style, anchor, tag) => match core_tag(tag.as_deref()) {
                Ok(tag) => {
                    let node = Node {
                        pos,
                        kind: Kind::Scalar(Scalar {
                            text: value.into_owned(),
                            plain: style == ScalarStyle::Plain,
                            tag,
                        }),
                    };
                    self.remember(anchor, &node);
                    Ok(self.push(node))
                }
                Err(written) => Err(TreeProblem {
                    pos,
                    path: self.node_path(),
                    message: unsupported_tag(&written),
                }),
            },
            Event::SequenceStart(_, tag) | Event::MappingStart(_, tag)
                if core_tag(tag.as_deref()).is_err() =>
            {
                let written = core_tag(tag.as_deref()).err().unwrap_or_default();
                Err(TreeProblem {
                    pos,
                    path: self.node_path(),
                    message: unsupported_tag(&written),
                })
            }
            Event::SequenceStart(anchor, _) => self
                .open(
                    Frame::Seq {
                        pos,
                        anchor,
                        items: Vec::new(),
                    },
                    pos,
                )
                .map(|()| None),
            Event::MappingStart(anchor, _) => self
                .open(
                    Frame::Map {
                        pos,
                        anchor,
                        entries: Vec::new(),
                        key: None,
                        seen: HashMap::new(),
                        skip_next_value: false,
                    },
                    pos,
                )
                .map(|()| None),
            Event::SequenceEnd | Event::MappingEnd => match self.close() {
                Some((node, anchor)) => {
                    self.remember(anchor, &node);
                    Ok(self.push(node))
                }
                None => Ok(None),
            },
            Event::Alias(id) => self.alias(id, pos).map(|node| self.push(node)),
            Event::DocumentStart(_)
            | Event::DocumentEnd
            | Event::StreamStart
            | Event::StreamEnd
            | Event::Nothing => Ok(None),
        }
    }
}

#[cfg(test)]
#[path = "yaml_tests.rs"]
mod tests;
