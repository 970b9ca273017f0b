//! Issue 25 item 10: the docs (README.md and docs/*.md) name the keys and
//! flags the program has, and only those. The keys come from the JSON
//! Schemas `harness schema` prints (of a scenario, of `harness.yaml`, of
//! `run.json`), the flags and subcommands from the clap command of
//! `src/cli/`, and both directions are checked: a key or flag the docs name
//! that the program lacks, and one the program has that the docs never
//! name.
//!
//! How the docs mark what they name:
//!
//! - **Keys of scenarios and `harness.yaml`** are the keys of the
//!   ```` ```yaml ```` blocks, and of the first column of tables whose first
//!   header is `key` (each code span there that starts the cell or follows a
//!   `, ` is read as YAML: `` `contains: S` ``, `` `fixture` ``, `` `image: {
//!   width, height }` ``; spans after `or` or `/` are values). Each is
//!   walked along the schema from where it stands, so a key is checked
//!   where it is written (`expect.contians` is not a key, `timeout` under
//!   `servers.NAME` is the server's), and maps of free keys (`files`,
//!   `args`, `details`, `env`) are not looked into. A fragment (`-
//!   call: …`, `limits: …`) starts at every object of the schemas that has
//!   all its keys. `…` stands for whatever the reader fills in. Every
//!   property of every object of the two schemas must be met this way.
//! - **Fields of run.json** are the first column of tables whose first
//!   header is `field`: each must be a property of `harness schema
//!   --report`; and every property of it must be named in a code span or
//!   block of docs/reports.md (sub-fields are often listed in the meaning
//!   column: `{spec, suite_scenarios, …}`).
//! - **Flags** are every `--flag` and `-f` in code (spans and blocks). On a
//!   command line of harness (`harness run … --jobs 2`), each must be a flag
//!   of that subcommand; anywhere else, of some command; after a bare `--`
//!   they are another program's arguments, and a command line of another
//!   program (FOREIGN_PROGRAMS) is not harness's. Every flag name the
//!   program has (long, short and aliases, `--help` and `--version`
//!   included) must be named, and every subcommand that is not hidden
//!   must be named as `harness SUBCOMMAND`.
//! - YAML blocks of other formats carry the format's name after `yaml` in
//!   the fence (FOREIGN_YAML) and are not walked.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::path::Path;

use insta::assert_snapshot;
use pretty_assertions::assert_eq;
use pulldown_cmark::CodeBlockKind;
use pulldown_cmark::Event;
use pulldown_cmark::Options;
use pulldown_cmark::Parser;
use pulldown_cmark::Tag;
use pulldown_cmark::TagEnd;
use serde_json::Value;
use serde_yaml::Value as Yaml;

/// Fence words after `yaml` for YAML that is not a scenario, `harness.yaml`
/// or a limits file, so not walked along their schemas.
const FOREIGN_YAML: [(&str, &str); 3] = [
    ("github-actions", "a GitHub Actions workflow (docs/ci.md)"),
    ("kubernetes", "a Kubernetes Job (docs/ci.md)"),
    (
        "snapshot",
        "a snapshot file (scenarios.md), which has no JSON Schema",
    ),
];

/// Programs whose command lines the docs show: their flags are theirs.
const FOREIGN_PROGRAMS: [&str; 13] = [
    "cargo",
    "maturin",
    "npm",
    "pip",
    "git",
    "kubectl",
    "npx",
    "gemini",
    "check_report.py",
    "env",
    "pi",
    "claude",
    "codex",
];

/// Flags of other programs named in prose, with the reason.
const FOREIGN_FLAGS: [(&str, &str); 2] = [
    (
        "--hidden",
        "ripgrep's, in tools.md's D7 (how grep differs from ripgrep)",
    ),
    (
        "--strict",
        "the MCP Inspector's (`tools/list --strict`), in mcp.md's table of clients",
    ),
];

/// Keys the docs name on purpose although the program lacks them.
const WRONG_ON_PURPOSE: [(&str, &str, &str); 1] = [(
    "docs/scenarios.md",
    "contians",
    "the misspelt key of the example of load errors",
)];

/// A page of the docs.
struct Doc {
    name: String,
    text: String,
}

/// What a page's markdown holds, each with its line.
#[derive(Default)]
struct Scan {
    /// Fenced code blocks: info string and text.
    blocks: Vec<(usize, String, String)>,
    /// Code spans outside blocks.
    spans: Vec<(usize, String)>,
    /// Table rows: the table's first header, the first cell's pieces.
    rows: Vec<(usize, String, Vec<Piece>)>,
}

/// A piece of a table cell.
#[derive(Clone, Debug)]
enum Piece {
    Code(String),
    Text(String),
}

fn scan(text: &str) -> Scan {
    let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
    let mut out = Scan::default();
    let mut block: Option<(usize, String, String)> = None;
    let mut header = String::new();
    let mut in_head = false;
    let mut cell: Option<usize> = None;
    let mut pieces: Vec<Piece> = Vec::new();
    let mut row_line = 0;
    for (event, range) in Parser::new_ext(text, Options::ENABLE_TABLES).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let info = match kind {
                    CodeBlockKind::Fenced(info) => info.into_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                block = Some((line_of(range.start), info, String::new()));
            }
            Event::End(TagEnd::CodeBlock) => out.blocks.extend(block.take()),
            Event::Text(t) if block.is_some() => {
                if let Some((_, _, body)) = &mut block {
                    body.push_str(&t);
                }
            }
            Event::Start(Tag::Table(_)) => header.clear(),
            Event::Start(Tag::TableHead) => {
                in_head = true;
                cell = Some(0);
            }
            Event::End(TagEnd::TableHead) => in_head = false,
            Event::Start(Tag::TableRow) => {
                cell = Some(0);
                row_line = line_of(range.start);
            }
            Event::End(TagEnd::TableCell) => {
                if cell == Some(0) && !in_head {
                    out.rows
                        .push((row_line, header.clone(), std::mem::take(&mut pieces)));
                }
                pieces.clear();
                cell = cell.map(|c| c + 1);
            }
            Event::Code(code) => {
                out.spans.push((line_of(range.start), code.to_string()));
                if cell == Some(0) {
                    if in_head {
                        header.push_str(&code);
                    } else {
                        pieces.push(Piece::Code(code.to_string()));
                    }
                }
            }
            Event::Text(t) if cell == Some(0) => {
                if in_head {
                    header.push_str(&t);
                } else {
                    pieces.push(Piece::Text(t.to_string()));
                }
            }
            _ => {}
        }
    }
    out
}

/// The code spans of a table's first cell that name a key: the first one,
/// and each that follows a `, `.
fn key_spans(pieces: &[Piece]) -> Vec<String> {
    let mut out = Vec::new();
    let mut takes = true;
    for piece in pieces {
        match piece {
            Piece::Code(code) => {
                if takes {
                    out.push(code.clone());
                }
                takes = false;
            }
            Piece::Text(text) => takes = out.is_empty() || text.trim() == ",",
        }
    }
    out
}

// ---------------------------------------------------------------------------
// The schemas

/// An object of a schema: its properties, and what other keys it takes.
struct Object<'a> {
    /// Where it is in its schema (`/$defs/ServerSpec`, `/properties/…`).
    at: String,
    properties: Option<&'a serde_json::Map<String, Value>>,
    /// Other keys: `None` refused, `Some(None)` anything, `Some(schema)`
    /// their values' schema.
    other: Option<Option<&'a Value>>,
}

/// The scenario and suite schemas, walked.
struct Schemas<'a> {
    roots: Vec<(&'a str, &'a Value)>,
    /// Every object with properties, in every root.
    objects: Vec<(usize, String, &'a Value)>,
}

impl<'a> Schemas<'a> {
    fn new(roots: Vec<(&'a str, &'a Value)>) -> Self {
        fn collect<'v>(
            root: usize,
            at: String,
            value: &'v Value,
            out: &mut Vec<(usize, String, &'v Value)>,
        ) {
            match value {
                Value::Object(map) => {
                    if map.contains_key("properties") {
                        out.push((root, at.clone(), value));
                    }
                    for (k, v) in map {
                        collect(root, format!("{at}/{k}"), v, out);
                    }
                }
                Value::Array(items) => {
                    for (i, v) in items.iter().enumerate() {
                        collect(root, format!("{at}/{i}"), v, out);
                    }
                }
                _ => {}
            }
        }
        let mut objects = Vec::new();
        for (i, (_, root)) in roots.iter().enumerate() {
            collect(i, String::new(), root, &mut objects);
        }
        Self { roots, objects }
    }

    /// The node `node` of root `root` with its `$ref`s followed, and where
    /// it is.
    fn resolve(&self, root: usize, at: String, node: &'a Value) -> (String, &'a Value) {
        let mut at = at;
        let mut node = node;
        while let Some(reference) = node.get("$ref").and_then(Value::as_str) {
            let pointer = reference.trim_start_matches('#');
            match self.roots[root].1.pointer(pointer) {
                Some(target) => {
                    at = pointer.to_owned();
                    node = target;
                }
                None => break,
            }
        }
        (at, node)
    }

    /// Every alternative of a node (`anyOf`, `oneOf`, `allOf` opened).
    fn alternatives(&self, root: usize, at: String, node: &'a Value) -> Vec<(String, &'a Value)> {
        let (at, node) = self.resolve(root, at, node);
        let mut out = vec![(at.clone(), node)];
        for word in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(alts)) = node.get(word) {
                for (i, alt) in alts.iter().enumerate() {
                    out.extend(self.alternatives(root, format!("{at}/{word}/{i}"), alt));
                }
            }
        }
        out
    }

    /// The objects a node can be.
    fn objects_of(&self, root: usize, at: String, node: &'a Value) -> Vec<Object<'a>> {
        let constraining = [
            "type",
            "properties",
            "anyOf",
            "oneOf",
            "allOf",
            "$ref",
            "enum",
            "const",
            "items",
        ];
        let mut out = Vec::new();
        for (at, alt) in self.alternatives(root, at, node) {
            let Value::Object(map) = alt else {
                if alt == &Value::Bool(true) {
                    out.push(Object {
                        at,
                        properties: None,
                        other: Some(None),
                    });
                }
                continue;
            };
            let object_type = match map.get("type") {
                Some(Value::String(t)) => t == "object",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
                _ => false,
            };
            let properties = map.get("properties").and_then(Value::as_object);
            let additional = map.get("additionalProperties");
            if !constraining.iter().any(|k| map.contains_key(*k)) {
                out.push(Object {
                    at,
                    properties: None,
                    other: Some(None),
                });
            } else if properties.is_some() || additional.is_some() || object_type {
                let other = match additional {
                    Some(Value::Bool(false)) => None,
                    Some(Value::Bool(true)) => Some(None),
                    Some(schema) => Some(Some(schema)),
                    None if properties.is_some() => None,
                    None => Some(None),
                };
                out.push(Object {
                    at,
                    properties,
                    other,
                });
            }
        }
        out
    }

    /// What the items of a list at a node can be.
    fn items_of(&self, root: usize, at: String, node: &'a Value) -> Vec<(String, &'a Value)> {
        self.alternatives(root, at, node)
            .into_iter()
            .filter_map(|(at, alt)| alt.get("items").map(|items| (format!("{at}/items"), items)))
            .collect()
    }

    /// Whether a node takes anything at all (no type said).
    fn free(&self, root: usize, at: String, node: &'a Value) -> bool {
        self.objects_of(root, at, node)
            .iter()
            .any(|o| o.properties.is_none() && o.other == Some(None))
    }
}

/// A place in a schema: its root, where, and the node.
type Place<'a> = (usize, String, &'a Value);

/// What walking the docs' YAML found.
#[derive(Default)]
struct Walk {
    /// Properties met, by the object's root name and place.
    met: BTreeSet<(String, String)>,
    problems: Vec<String>,
}

impl Walk {
    fn value(
        &mut self,
        s: &Schemas<'_>,
        value: &Yaml,
        places: Option<Vec<Place<'_>>>,
        at: &str,
        origin: &str,
    ) {
        match value {
            Yaml::Mapping(map) => self.mapping(s, map, places, at, origin),
            Yaml::Sequence(items) => {
                let inner = places.map(|places| {
                    places
                        .iter()
                        .flat_map(|(root, p, node)| {
                            s.items_of(*root, p.clone(), node)
                                .into_iter()
                                .map(move |(p, n)| (*root, p, n))
                        })
                        .collect::<Vec<_>>()
                });
                if let Some(inner) = &inner
                    && inner.is_empty()
                {
                    self.problems.push(format!(
                        "{origin}: {} is a list, which is not allowed there",
                        at.trim_end_matches('.')
                    ));
                    return;
                }
                for (i, item) in items.iter().enumerate() {
                    let here = format!("{}[{i}].", at.trim_end_matches('.'));
                    self.value(s, item, inner.clone(), &here, origin);
                }
            }
            Yaml::Tagged(tagged) => self.value(s, &tagged.value, places, at, origin),
            _ => {}
        }
    }

    fn mapping<'a>(
        &mut self,
        s: &Schemas<'a>,
        map: &serde_yaml::Mapping,
        places: Option<Vec<Place<'a>>>,
        at: &str,
        origin: &str,
    ) {
        let key_text = |k: &Yaml| match k {
            Yaml::String(k) => k.clone(),
            other => serde_yaml::to_string(other)
                .unwrap_or_default()
                .trim()
                .to_owned(),
        };
        let keys: Vec<String> = map.keys().map(key_text).filter(|k| k != "…").collect();
        let places = match places {
            Some(places) => places,
            None => {
                // A fragment: every object that has all its keys.
                let fits = |obj: &Value| {
                    let props = obj.get("properties").and_then(Value::as_object);
                    keys.iter()
                        .filter(|k| {
                            props
                                .and_then(|p| p.get(*k))
                                .is_some_and(|v| v != &Value::Bool(false))
                        })
                        .count()
                };
                let best = s.objects.iter().map(|(_, _, o)| fits(o)).max().unwrap_or(0);
                if best < keys.len() {
                    let known: BTreeSet<&str> = s
                        .objects
                        .iter()
                        .flat_map(|(_, _, o)| {
                            o["properties"]
                                .as_object()
                                .into_iter()
                                .flat_map(|p| p.keys())
                        })
                        .map(String::as_str)
                        .collect();
                    let unknown: Vec<&String> = keys
                        .iter()
                        .filter(|k| !known.contains(k.as_str()))
                        .collect();
                    if unknown.is_empty() {
                        self.problems.push(format!(
                            "{origin}: no object of the schemas has all of {} together",
                            keys.join(", ")
                        ));
                    } else {
                        for k in unknown {
                            self.problems
                                .push(format!("{origin}: {at}{k}: no such key in the schemas"));
                        }
                    }
                    return;
                }
                s.objects
                    .iter()
                    .filter(|(_, _, o)| fits(o) == keys.len())
                    .map(|(root, p, o)| (*root, p.clone(), *o))
                    .collect()
            }
        };
        let objects: Vec<(usize, Object<'a>)> = places
            .iter()
            .flat_map(|(root, p, node)| {
                s.objects_of(*root, p.clone(), node)
                    .into_iter()
                    .map(move |o| (*root, o))
            })
            .collect();
        if objects.is_empty() {
            self.problems.push(format!(
                "{origin}: {} is a mapping, which is not allowed there",
                at.trim_end_matches('.')
            ));
            return;
        }
        for (key, value) in map {
            let key = key_text(key);
            if key == "…" {
                continue;
            }
            let mut inner: Vec<Place<'a>> = Vec::new();
            let mut known = false;
            let mut free = false;
            for (root, obj) in &objects {
                if let Some(prop) = obj
                    .properties
                    .and_then(|p| p.get(&key))
                    .filter(|v| **v != Value::Bool(false))
                {
                    known = true;
                    self.met
                        .insert((format!("{}{}", s.roots[*root].0, obj.at), key.clone()));
                    inner.push((*root, format!("{}/properties/{key}", obj.at), prop));
                } else if let Some(other) = obj.other {
                    free = true;
                    if let Some(schema) = other {
                        inner.push((*root, format!("{}/additionalProperties", obj.at), schema));
                    }
                }
            }
            let here = format!("{at}{key}");
            if !known && !free {
                let mut there: Vec<&str> = objects
                    .iter()
                    .flat_map(|(_, o)| o.properties.into_iter().flat_map(|p| p.keys()))
                    .map(String::as_str)
                    .collect();
                there.sort_unstable();
                there.dedup();
                self.problems.push(format!(
                    "{origin}: {here}: not a key there (the keys there: {})",
                    there.join(", ")
                ));
                continue;
            }
            // A map of free keys (or a value of any shape) is not looked into.
            if inner.is_empty() || inner.iter().any(|(root, p, n)| s.free(*root, p.clone(), n)) {
                continue;
            }
            self.value(s, value, Some(inner), &format!("{here}."), origin);
        }
    }
}

// ---------------------------------------------------------------------------
// The command line

/// A command of the program: its path (`import pi`), whether hidden, and
/// each argument's names (`--out`, `-o`, aliases).
struct CliCommand {
    path: String,
    hidden: bool,
    flags: Vec<Vec<String>>,
    children: bool,
}

fn commands(cmd: &clap::Command) -> Vec<CliCommand> {
    fn walk(cmd: &clap::Command, path: &str, hidden: bool, out: &mut Vec<CliCommand>) {
        let flags = cmd
            .get_arguments()
            .filter(|a| !a.is_positional() && !a.is_hide_set())
            .map(|a| {
                let mut names: Vec<String> = Vec::new();
                names.extend(a.get_long().map(|l| format!("--{l}")));
                names.extend(a.get_short().map(|s| format!("-{s}")));
                names.extend(
                    a.get_all_aliases()
                        .into_iter()
                        .flatten()
                        .map(|l| format!("--{l}")),
                );
                names.extend(
                    a.get_all_short_aliases()
                        .into_iter()
                        .flatten()
                        .map(|s| format!("-{s}")),
                );
                names
            })
            .collect();
        out.push(CliCommand {
            path: path.to_owned(),
            hidden,
            flags,
            children: cmd.has_subcommands(),
        });
        for sub in cmd.get_subcommands() {
            if sub.get_name() == "help" {
                continue;
            }
            let path = format!("{path} {}", sub.get_name()).trim().to_owned();
            walk(sub, &path, hidden || sub.is_hide_set(), out);
        }
    }
    let mut cmd = cmd.clone();
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, "", false, &mut out);
    out
}

/// The flag tokens of a command line: `--long` and `-s` standing as words.
fn flag_tokens(line: &str) -> Vec<(usize, String)> {
    let token = regex::Regex::new(
        r"(?:^|[\s`(\[,=])(--?[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)(?:$|[\s`)\],.;:=])",
    )
    .unwrap();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(m) = token.captures_at(line, at) {
        let flag = m.get(1).unwrap();
        let text = flag.as_str();
        // `-x` flags are one letter; longer single-dash words are not flags.
        if text.starts_with("--") || text.len() == 2 {
            out.push((flag.start(), text.to_owned()));
        }
        at = flag.end();
    }
    out
}

/// A program word of a command line: `harness` for the harness (any path
/// to it, `${harness}`), the name of another program, or `None`.
fn program_word(word: &str) -> Option<&str> {
    let word = word.trim_matches(|c: char| "\"'`[](),;".contains(c));
    let base = word.rsplit('/').next().unwrap_or(word);
    if base == "harness" || base == "${harness}" {
        return Some("harness");
    }
    FOREIGN_PROGRAMS.iter().copied().find(|p| *p == base)
}

// ---------------------------------------------------------------------------
// The audit

/// Whose a word of a command line is.
#[derive(PartialEq)]
enum Owner {
    Nobody,
    /// A harness command's, by its subcommand path (empty: none named).
    Harness(String),
    /// Another program's.
    Other,
}

/// What the program has: the scenario and suite schemas, the run.json
/// schema, the clap command.
struct Program {
    scenario: Value,
    suite: Value,
    report: Value,
    cli: clap::Command,
}

/// Every property name of a schema.
fn property_names(schema: &Value, out: &mut BTreeSet<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get("properties") {
                out.extend(props.keys().cloned());
            }
            map.values().for_each(|v| property_names(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| property_names(v, out)),
        _ => {}
    }
}

fn audit(docs: &[Doc], program: &Program) -> Vec<String> {
    let mut problems = Vec::new();
    let schemas = Schemas::new(vec![
        ("scenario", &program.scenario),
        ("suite", &program.suite),
    ]);
    let mut walk = Walk::default();
    let mut report_fields: BTreeSet<String> = BTreeSet::new();
    let mut report_code: BTreeSet<String> = BTreeSet::new();
    let mut report_props = BTreeSet::new();
    property_names(&program.report, &mut report_props);
    let cli = commands(&program.cli);
    let all_flags: BTreeSet<&str> = cli
        .iter()
        .flat_map(|c| c.flags.iter().flatten())
        .map(String::as_str)
        .collect();
    let mut flags_named: BTreeSet<String> = BTreeSet::new();
    let mut commands_named: BTreeSet<String> = BTreeSet::new();
    let identifier = regex::Regex::new(r"[A-Za-z_][A-Za-z0-9_]*").unwrap();
    for doc in docs {
        let scan = scan(&doc.text);
        let mut lines: Vec<(usize, String)> = scan.spans.clone();
        for (line, info, body) in &scan.blocks {
            let mut words = info.split_whitespace();
            let language = words.next().unwrap_or("");
            let rest: Vec<&str> = words.collect();
            if language == "yaml" {
                match rest.as_slice() {
                    [] => {
                        let origin = format!("{}:{line}", doc.name);
                        for document in serde_yaml::Deserializer::from_str(body) {
                            match <Yaml as serde::Deserialize>::deserialize(document) {
                                Ok(value) => walk.value(&schemas, &value, None, "", &origin),
                                Err(err) => problems.push(format!("{origin}: not YAML: {err}")),
                            }
                        }
                    }
                    [format] if FOREIGN_YAML.iter().any(|(f, _)| f == format) => {}
                    other => problems.push(format!(
                        "{}:{line}: ```yaml {}: not a format this test knows (FOREIGN_YAML)",
                        doc.name,
                        other.join(" ")
                    )),
                }
            }
            // Lines of a block, a shell line continued with `\` joined.
            let mut pending = String::new();
            for (i, text) in body.lines().enumerate() {
                pending.push_str(text.trim_end_matches('\\'));
                pending.push(' ');
                if !text.ends_with('\\') {
                    lines.push((line + 1 + i, std::mem::take(&mut pending)));
                }
            }
            if doc.name == "docs/reports.md" {
                report_code.extend(identifier.find_iter(body).map(|m| m.as_str().to_owned()));
            }
        }
        for (line, header, pieces) in &scan.rows {
            let origin = format!("{}:{line}", doc.name);
            for span in key_spans(pieces) {
                match header.as_str() {
                    "key" => match serde_yaml::from_str::<Yaml>(&span) {
                        Ok(Yaml::Mapping(map)) => {
                            walk.mapping(&schemas, &map, None, "", &origin);
                        }
                        Ok(Yaml::String(key)) => {
                            let mut map = serde_yaml::Mapping::new();
                            map.insert(Yaml::String(key), Yaml::Null);
                            walk.mapping(&schemas, &map, None, "", &origin);
                        }
                        _ => {
                            problems.push(format!("{origin}: `{span}` in a key table is not a key"))
                        }
                    },
                    "field" => {
                        for name in identifier.find_iter(&span) {
                            if report_props.contains(name.as_str()) {
                                report_fields.insert(name.as_str().to_owned());
                            } else {
                                problems.push(format!(
                                    "{origin}: `{}` is not a field of run.json (harness schema --report)",
                                    name.as_str()
                                ));
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        if doc.name == "docs/reports.md" {
            for (_, span) in &scan.spans {
                report_code.extend(identifier.find_iter(span).map(|m| m.as_str().to_owned()));
            }
        }
        for (line, text) in &lines {
            let origin = format!("{}:{line}", doc.name);
            let words: Vec<&str> = text.split_whitespace().collect();
            // Whose the words are: nobody's, a harness command's (its
            // subcommand path), or another program's (after its name, or
            // after a bare `--`), until a shell operator.
            let mut owner = Owner::Nobody;
            for (i, word) in words.iter().enumerate() {
                if ["|", "||", "&&", ";", "&"].contains(word) {
                    owner = Owner::Nobody;
                    continue;
                }
                if owner == Owner::Other {
                    continue;
                }
                match program_word(word) {
                    Some("harness") if owner == Owner::Nobody => {
                        let leads = i == 0
                            || (i == 1 && words[0] == "$")
                            || ["|", "||", "&&", ";", "&"].contains(&words[i - 1]);
                        let mut path = String::new();
                        for next in &words[i + 1..] {
                            let next = next.trim_matches(|c: char| "\"'`[](),;".contains(c));
                            let candidate = format!("{path} {next}").trim().to_owned();
                            if cli.iter().any(|c| c.path == candidate) {
                                path = candidate;
                                continue;
                            }
                            let plain = !next.is_empty()
                                && next.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                                && !next.starts_with('-');
                            if path.is_empty() && plain && leads {
                                problems.push(format!(
                                    "{origin}: `harness {next}`: no such subcommand"
                                ));
                            }
                            break;
                        }
                        commands_named.insert(path.clone());
                        owner = Owner::Harness(path);
                        continue;
                    }
                    Some("harness") => continue,
                    Some(_) => {
                        owner = Owner::Other;
                        continue;
                    }
                    None if *word == "--" => {
                        owner = Owner::Other;
                        continue;
                    }
                    None => {}
                }
                for (_, flag) in flag_tokens(word) {
                    if FOREIGN_FLAGS.iter().any(|(f, _)| *f == flag) {
                        continue;
                    }
                    // A command line of harness with its subcommand named
                    // checks against that subcommand; the rest against all.
                    let path = match &owner {
                        Owner::Harness(path) if !path.is_empty() => Some(path.as_str()),
                        _ => None,
                    };
                    // Single-letter flags outside a harness command line
                    // are too often another program's (`sed -i`, Grep's
                    // `-C`) to be checked.
                    if !flag.starts_with("--") && path.is_none() {
                        if all_flags.contains(flag.as_str()) {
                            flags_named.insert(flag);
                        }
                        continue;
                    }
                    let known = match path {
                        Some(path) => cli
                            .iter()
                            .filter(|c| {
                                c.path.is_empty()
                                    || c.path == path
                                    || c.path.starts_with(&format!("{path} "))
                            })
                            .any(|c| c.flags.iter().flatten().any(|f| *f == flag)),
                        None => all_flags.contains(flag.as_str()),
                    };
                    if known {
                        flags_named.insert(flag);
                    } else {
                        problems.push(match path {
                            Some(path) => format!("{origin}: `harness {path}` has no flag {flag}"),
                            None => {
                                format!("{origin}: {flag}: no command of harness has this flag")
                            }
                        });
                    }
                }
            }
        }
    }
    for (file, key, _) in WRONG_ON_PURPOSE {
        if !docs.iter().any(|d| d.name == file) {
            continue;
        }
        let before = walk.problems.len();
        walk.problems.retain(|p| {
            !(p.starts_with(&format!("{file}:")) && p.contains(&format!(".{key}: not a key there")))
        });
        assert_ne!(
            before,
            walk.problems.len(),
            "{file}: `{key}` is no longer written there"
        );
    }
    problems.extend(walk.problems);
    // The program's side: every property, field, flag and subcommand named.
    for (root, at, object) in &schemas.objects {
        // A property whose schema is `false` is one the object refuses.
        let properties = object["properties"].as_object().into_iter().flatten();
        for key in properties
            .filter(|(_, v)| **v != Value::Bool(false))
            .map(|(k, _)| k)
        {
            let name = format!("{}{at}", schemas.roots[*root].0);
            if !walk.met.contains(&(name.clone(), key.clone())) {
                problems.push(format!(
                    "harness schema{}: `{key}` (in {}) is in no YAML block or key table of the docs",
                    if *root == 1 { " --suite" } else { "" },
                    if at.is_empty() { "the document" } else { at.as_str() }
                ));
            }
        }
    }
    for field in &report_props {
        if !report_fields.contains(field) && !report_code.contains(field) {
            problems.push(format!(
                "harness schema --report: `{field}` is named nowhere in docs/reports.md"
            ));
        }
    }
    let mut unnamed: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for command in cli.iter().filter(|c| !c.hidden) {
        if !command.path.is_empty() && !command.children && !commands_named.contains(&command.path)
        {
            problems.push(format!(
                "`harness {}` is named nowhere in the docs",
                command.path
            ));
        }
        for name in command.flags.iter().flatten() {
            if !flags_named.contains(name) {
                let shown = format!("harness {}", command.path).trim().to_owned();
                unnamed.entry(name).or_default().push(shown);
            }
        }
    }
    for (name, commands) in unnamed {
        problems.push(format!(
            "{name} (of {}) is named nowhere in the docs",
            commands.join(", ")
        ));
    }
    problems.sort();
    problems.dedup();
    problems
}

fn schema(args: &[&str]) -> Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn the_docs() -> Vec<Doc> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut names = vec!["README.md".to_owned()];
    let mut pages: Vec<String> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    pages.sort();
    names.extend(pages);
    names
        .into_iter()
        .map(|name| Doc {
            text: std::fs::read_to_string(root.join(&name)).unwrap(),
            name,
        })
        .collect()
}

#[test]
fn the_docs_name_every_key_and_flag_of_the_program_and_no_other() {
    let program = Program {
        scenario: schema(&["schema"]),
        suite: schema(&["schema", "--suite"]),
        report: schema(&["schema", "--report"]),
        cli: harness::cli::command(),
    };
    assert_eq!(audit(&the_docs(), &program), Vec::<String>::new());
}

/// The audit itself, on a made-up program and page: each kind of
/// difference, in both directions, and what it does not count.
#[test]
fn the_audit_names_each_difference_in_both_directions() {
    let scenario = serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "name": {"type": "string"},
            "limits": {"$ref": "#/$defs/Limits"},
            "files": {"type": "object", "additionalProperties": {"type": "string"}},
            "model": {"type": "array", "items": {"$ref": "#/$defs/Step"}}
        },
        "$defs": {
            "Limits": {"type": "object", "additionalProperties": false,
                "properties": {"max_lines": {"type": "integer"}, "timeout": {"type": "number"}}},
            "Step": {"type": "object", "additionalProperties": false,
                "properties": {"call": {"type": "string"}, "args": {"description": "any"}}}
        }
    });
    let suite = serde_json::json!({
        "type": "object", "additionalProperties": false,
        "properties": {"jobs": {"type": "integer"}}
    });
    let report = serde_json::json!({
        "type": "object", "properties": {"calls": {"type": "integer"}, "tokens": {"type": "integer"}}
    });
    let cli = clap::Command::new("harness")
        .version("1")
        .subcommand(
            clap::Command::new("run")
                .arg(clap::Arg::new("jobs").long("jobs").short('j'))
                .arg(clap::Arg::new("exclude").long("exclude").alias("skip")),
        )
        .subcommand(clap::Command::new("list"))
        .subcommand(clap::Command::new("init"))
        .subcommand(
            clap::Command::new("fixture")
                .hide(true)
                .arg(clap::Arg::new("mode").long("mode")),
        );
    let page = r#"# A page

```yaml
name: { a: 1 }
limits: { max_lines: 3, timout: 4 }
files: { any/path: text }
model:
  - call: read
    args: { path: a, anything: [1] }
    expect: { ok: true }
```

```yaml github-actions
jobs: { a: 1 }
```

| key | meaning |
| --- | --- |
| `jobs` | at most N at once |
| `max_lines: N` or `[S, …]` | lines |
| `colour: red` | none such |

| field | meaning |
| --- | --- |
| `calls`, `turns` | counts |

`harness run --jobs 2 --skip x --colour`, `harness runs`, `harness list -j 1`,
`cargo build --release`, `npx inspector --cli harness run -- --method x`, and `--fast`.
"#;
    let docs = [Doc {
        name: "page.md".to_owned(),
        text: page.to_owned(),
    }];
    let program = Program {
        scenario,
        suite,
        report,
        cli,
    };
    assert_snapshot!(audit(&docs, &program).join("\n"));
}

#[test]
fn only_the_yaml_formats_named_here_are_left_unwalked() {
    // The allow-lists are small and each entry says why; this keeps them
    // honest: every entry is used by the docs.
    let docs = the_docs();
    let all: String = docs.iter().map(|d| d.text.as_str()).collect();
    let unused: Vec<&str> = FOREIGN_YAML
        .iter()
        .map(|(f, _)| *f)
        .filter(|f| !all.contains(&format!("```yaml {f}\n")))
        .chain(
            FOREIGN_FLAGS
                .iter()
                .map(|(f, _)| *f)
                .filter(|f| !all.contains(&format!("{f}`"))),
        )
        .collect();
    assert_eq!(unused, Vec::<&str>::new());
}
