//! Claude Code's JSONL transcripts, as the client writes them today: lines
//! of `type` `user` or `assistant` linked by `uuid`/`parentUuid`, each with
//! `cwd` and a `message` whose content blocks are `text`, `thinking`,
//! `tool_use {id, name, input}` (assistant) or `tool_result {tool_use_id,
//! content, is_error}` (user), a result's structured form beside it in
//! `toolUseResult`.
//!
//! How the tree is followed (docs/replay.md):
//!
//! - Each block of one model message is an entry of its own, chained, all
//!   with the message's `message.id`: the calls of one message form one
//!   batch, also those whose entries sit on a side branch of the chain.
//! - A result's entry is parented on the entry that made its call, so the
//!   results of one batch sit on branches: a result is taken wherever it
//!   is in the file, and a call is "never answered" only when no result
//!   for it is anywhere.
//! - A compaction boundary names the entry before it in
//!   `logicalParentUuid`, often one the file does not hold: the chain then
//!   goes on through the entry written before the boundary (`lines`).
//! - Side chains (`isSidechain`, Task sub-agents) are chains of their own:
//!   counted, and with `--sidechains` imported as scenarios of their own.

pub(crate) mod results;
pub(crate) mod tools;

use std::collections::HashMap;
use std::collections::HashSet;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::lines::Branch;
use super::lines::Line;
use super::lines::for_each_line;
use super::lines::too_long;
use super::lines::unreadable;
use super::paths::PathMap;
use super::paths::subdir_of;
use super::session::CLAUDE_ENTRY_TYPES;
use super::session::Call;
use super::session::Elsewhere;
use super::session::Foreign;
use super::session::PI_ENTRY_TYPES;
use super::session::Recording;
use super::session::SideChains;
use super::session::Sidecars;
use super::session::content_text;
use super::shell::Shell;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    #[serde(rename = "type")]
    kind: Option<String>,
    uuid: Option<String>,
    cwd: Option<String>,
    timestamp: Option<String>,
    git_branch: Option<String>,
    #[serde(default)]
    is_sidechain: bool,
    message: Option<Message>,
    tool_use_result: Option<Value>,
}

#[derive(Deserialize)]
struct Message {
    id: Option<String>,
    #[serde(default)]
    content: Value,
}

/// How to read a transcript.
pub(crate) struct Options<'a> {
    /// The branch of the main chain to follow.
    pub main: Branch,
    /// The side chains to import (empty: none is imported).
    pub sides: Vec<Branch>,
    /// The side chains there are, imported or not.
    pub side_count: usize,
    /// Seconds given to bash calls recorded without a timeout.
    pub bash_timeout: f64,
    /// Where chain `n`'s large texts go (0: the main chain).
    pub sidecars: &'a dyn Fn(usize) -> Sidecars,
    /// The repository's top when the session began in a subdirectory of
    /// it ([`crate::run::env::git::session_root`]): the workspace, with
    /// the shell starting in the subdirectory.
    pub top: Option<&'a str>,
}

/// One chain being read.
struct Chain {
    branch: Branch,
    rec: Recording,
    map: PathMap,
    shell: Shell,
}

impl Chain {
    fn new(branch: Branch, sidecars: Sidecars) -> Self {
        Self {
            branch,
            rec: Recording::new("claude", Some(sidecars)),
            map: PathMap::default(),
            shell: Shell::default(),
        }
    }
}

/// Reads the transcript at `path`: its main chain, then its side chains
/// (as many as `options.sides` names), each a recording.
pub(crate) fn read(path: &Path, options: Options<'_>) -> Result<Vec<Recording>, String> {
    let mut chains: Vec<Chain> = Vec::with_capacity(1 + options.sides.len());
    chains.push(Chain::new(options.main, (options.sidecars)(0)));
    for (n, side) in options.sides.into_iter().enumerate() {
        chains.push(Chain::new(side, (options.sidecars)(n + 1)));
    }
    let importing_sides = chains.len() > 1;
    let mut reader = Reader {
        chains,
        owner: HashMap::new(),
        seen: HashSet::new(),
        foreign: Foreign::default(),
        bash_timeout: options.bash_timeout,
        side_calls: 0,
        first_side: None,
        importing_sides,
        top: options.top.map(str::to_owned),
    };
    for_each_line(path, |number, line| {
        reader.chains[0].rec.lines = number;
        match line {
            Line::TooLong => reader.chains[0].rec.note(number, too_long()),
            Line::Text {
                bytes,
                last_unterminated,
            } => match serde_json::from_slice::<Entry>(bytes) {
                Ok(entry) => reader.entry(number, entry),
                Err(err) => {
                    let rec = &mut reader.chains[0].rec;
                    rec.unread.push(number);
                    rec.note(number, unreadable(&err, last_unterminated));
                }
            },
        }
    })
    .map_err(|err| format!("cannot read {}: {err}", path.display()))?;
    let lines = reader.chains[0].rec.lines;
    let mut out = Vec::new();
    let sides = SideChains {
        chains: options.side_count,
        calls: reader.side_calls,
        line: reader.first_side.unwrap_or(1),
        imported: importing_sides,
    };
    let foreign = std::mem::take(&mut reader.foreign);
    for (n, mut chain) in reader.chains.into_iter().enumerate() {
        let rec = &mut chain.rec;
        rec.lines = lines;
        for (line, message) in chain.branch.notes() {
            rec.note(*line, message.clone());
        }
        if n > 0 {
            rec.side = Some((n, chain.branch.first_line().unwrap_or(1)));
        }
        if n == 0 {
            if rec.cwd.is_none() && rec.calls().next().is_some() {
                rec.note(
                    1,
                    "no line has a `cwd`: the session's working directory is unknown, so no path \
                     becomes `${workspace}/…` and absolute paths are replayed as recorded",
                );
            }
            if sides.chains > 0 {
                rec.sidechains = Some(sides.clone());
            }
        }
        rec.finish();
        rec.split_around_changes();
        out.push(chain.rec);
    }
    if let Some(main) = out.first_mut() {
        foreign.finish(
            main,
            path,
            "pi session (entries of type `session` and `message`); import it with `harness \
             import pi`",
        )?;
        main.notes.sort_by_key(|n| n.line);
    }
    Ok(out)
}

/// What reading one transcript keeps between lines.
struct Reader {
    chains: Vec<Chain>,
    /// The chain of each call made, by call id.
    owner: HashMap<String, usize>,
    /// The entries read, by uuid (a copy of one is passed over).
    seen: HashSet<String>,
    foreign: Foreign,
    bash_timeout: f64,
    /// Calls met in side chains that are not imported.
    side_calls: usize,
    /// The first side-chain entry's line.
    first_side: Option<usize>,
    importing_sides: bool,
    /// [`Options::top`].
    top: Option<String>,
}

impl Reader {
    /// The chain entry `uuid` (read on `line`, a block of `message`)
    /// belongs to, if any.
    fn chain_of(
        &self,
        uuid: Option<&str>,
        line: usize,
        message: Option<&str>,
        assistant: bool,
    ) -> Option<usize> {
        self.chains
            .iter()
            .position(|c| c.branch.contains(uuid, line))
            .or_else(|| {
                assistant
                    .then(|| {
                        self.chains
                            .iter()
                            .position(|c| c.branch.has_message(message))
                    })
                    .flatten()
            })
    }

    fn entry(&mut self, number: usize, entry: Entry) {
        let kind = entry.kind.as_deref().unwrap_or("");
        if let Some(uuid) = &entry.uuid
            && !self.seen.insert(uuid.clone())
        {
            return; // a copy of an entry read before (noted by the first pass)
        }
        let message_id = entry.message.as_ref().and_then(|m| m.id.as_deref());
        let chain = self.chain_of(
            entry.uuid.as_deref(),
            number,
            message_id,
            kind == "assistant",
        );
        if entry.is_sidechain && chain != Some(0) {
            self.first_side.get_or_insert(number);
            if chain.is_none() && !self.importing_sides {
                self.side_calls += count_calls(entry.message.as_ref());
            }
        }
        if chain.is_none() {
            // Calls on no branch followed are counted where they were.
            let whence = if entry.is_sidechain {
                Elsewhere::SideChain
            } else {
                Elsewhere::OtherBranch
            };
            for id in call_ids(entry.message.as_ref()) {
                self.chains[0].rec.elsewhere(number, id, whence);
            }
        }
        if kind != "user" && kind != "assistant" {
            if chain == Some(0) || entry.uuid.is_none() {
                if PI_ENTRY_TYPES.contains(&kind) {
                    self.foreign.see(number, kind);
                } else if !CLAUDE_ENTRY_TYPES.contains(&kind) {
                    self.chains[0]
                        .rec
                        .note(number, format!("unknown entry type `{kind}`; skipped"));
                }
            }
            return;
        }
        if let Some(c) = chain {
            let chain = &mut self.chains[c];
            if chain.rec.started.is_none() {
                chain.rec.started.clone_from(&entry.timestamp);
            }
            if chain.rec.git_branch.is_none() {
                chain.rec.git_branch = entry
                    .git_branch
                    .clone()
                    .filter(|b| !b.is_empty() && b != "HEAD");
            }
            if let Some(cwd) = &entry.cwd {
                if chain.rec.cwd.is_none() {
                    chain.rec.cwd = Some(cwd.clone());
                    // A session begun in a subdirectory of the repository:
                    // the workspace is the repository's top, and the shell
                    // starts in the subdirectory (told below).
                    let top = self
                        .top
                        .as_deref()
                        .filter(|top| subdir_of(cwd, top).is_some());
                    chain.map = PathMap::new(Some(top.unwrap_or(cwd)));
                    chain.shell = Shell::new(Some(top.unwrap_or(cwd)));
                }
                chain.shell.told(cwd);
            }
        }
        let Some(message) = entry.message else {
            return;
        };
        let Value::Array(blocks) = &message.content else {
            return;
        };
        if kind == "assistant" {
            if let Some(c) = chain {
                self.calls(c, number, blocks, message.id.as_deref());
            }
            return;
        }
        let results: Vec<&Value> = blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            .collect();
        // `toolUseResult` belongs to the entry's one result.
        let recorded = entry
            .tool_use_result
            .as_ref()
            .filter(|_| results.len() == 1);
        for block in results {
            self.result(number, chain, block, recorded);
        }
    }

    /// The calls of an assistant entry of chain `c`.
    fn calls(&mut self, c: usize, number: usize, blocks: &[Value], message: Option<&str>) {
        let timeout = self.bash_timeout;
        let chain = &mut self.chains[c];
        let mut batch: Vec<Call> = Vec::new();
        for block in blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        {
            let Some(raw) = chain.rec.take_call_of(number, block, "input", message) else {
                continue;
            };
            self.owner.insert(raw.id.clone(), c);
            match tools::map_call(&raw.name, &raw.args, timeout) {
                Ok(mut mapped) => {
                    if mapped.tool == "bash"
                        && let Some(command) = mapped.args.get("command").and_then(Value::as_str)
                    {
                        let command = chain.shell.command(command);
                        mapped.args["command"] = Value::from(command);
                    }
                    // Grep, Glob and LS search where the shell stands.
                    if matches!(mapped.tool, "grep" | "find" | "ls")
                        && let Value::Object(args) = &mut mapped.args
                    {
                        match args.get("path").and_then(Value::as_str) {
                            Some(p) => {
                                let resolved = chain.shell.resolve(p);
                                args.insert("path".into(), Value::from(resolved));
                            }
                            None => {
                                if let Some(dir) = chain.shell.moved() {
                                    args.insert("path".into(), Value::from(dir));
                                }
                            }
                        }
                    }
                    let mut call =
                        raw.replayed_as(mapped.tool, chain.map.args(&mapped.args), mapped.note);
                    // Whether a read's text is the whole file is told by
                    // its structured result (`whole`).
                    call.syncable = mapped.tool == "read";
                    if mapped.refine {
                        call.refine = Some(raw.args.clone());
                    }
                    batch.push(call);
                }
                Err(reason) => {
                    chain
                        .rec
                        .skip(&raw, format!("{reason}; its call is skipped"), reason);
                }
            }
        }
        chain.rec.push_batch(batch, message);
    }

    /// One `tool_result` block read on `number` (an entry of `chain`, or of
    /// no chain: a side branch), with the entry's `toolUseResult`.
    fn result(
        &mut self,
        number: usize,
        chain: Option<usize>,
        block: &Value,
        recorded: Option<&Value>,
    ) {
        let id = block
            .get("tool_use_id")
            .and_then(Value::as_str)
            .unwrap_or("");
        let Some(&c) = self.owner.get(id) else {
            if let Some(c) = chain {
                self.chains[c].rec.note(
                    number,
                    format!("a result for call `{id}`, which no call on this branch made; skipped"),
                );
            }
            return;
        };
        let chain = &mut self.chains[c];
        let content = content_text(block.get("content").unwrap_or(&Value::Null));
        if let Some(why) = results::not_an_answer(&content.0) {
            chain.rec.unanswered(number, id, why);
            return;
        }
        let is_error = block
            .get("is_error")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let Some(call) = chain.rec.find(id) else {
            // The call was left out (its tool has no counterpart): its
            // result is passed over.
            return;
        };
        if call.result.is_some() || call.unanswered.is_some() {
            if chain.rec.was_copied(id) {
                return; // the copy's result (the call was written again)
            }
            chain.rec.note(
                number,
                format!("a second result for call `{id}`; the first is kept"),
            );
            return;
        }
        let tool = call.recorded_tool.clone();
        if tool == "Bash" {
            chain.shell.result(&content.0);
            if let Some(stderr) = recorded
                .and_then(|r| r.get("stderr"))
                .and_then(Value::as_str)
            {
                chain.shell.result(stderr);
            }
        }
        // A Grep's answer is read with its `path`; the large texts of
        // the arguments are in the spool by now.
        let args = if tool == "Grep" {
            let args = call.args.clone();
            chain.rec.restored(&args)
        } else {
            Value::Null
        };
        let outcome = results::outcome(&tool, &args, content, is_error, recorded, &chain.map);
        let Some(call) = chain.rec.find(id) else {
            return;
        };
        if let (Some(input), Some(original)) = (call.refine.take(), outcome.original.as_deref())
            && let Some((edits, note)) = tools::refine(&tool, &input, original)
        {
            call.args["edits"] = chain.map.args(&edits);
            call.note = note;
        }
        call.refine = None;
        chain.rec.answer(number, id, outcome);
    }
}

/// The tool calls of a message.
fn count_calls(message: Option<&Message>) -> usize {
    call_ids(message).count()
}

/// The ids of the tool calls of a message (empty for a call without one).
fn call_ids(message: Option<&Message>) -> impl Iterator<Item = &str> {
    let blocks = match message.map(|m| &m.content) {
        Some(Value::Array(blocks)) => blocks.as_slice(),
        _ => &[],
    };
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        .map(|b| b.get("id").and_then(Value::as_str).unwrap_or(""))
}
