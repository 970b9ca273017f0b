//! What an importer makes of a recorded session, whatever its format: the
//! calls to replay in their batches, each with its recorded result, the
//! calls left out, and the problems met, each at its line.

use std::collections::HashMap;
use std::collections::HashSet;
use std::hash::DefaultHasher;
use std::hash::Hash;
use std::hash::Hasher;
use std::path::Path;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::lines::Branch;
use super::lines::FileCalls;
use super::lines::Line;
use super::lines::for_each_line;
use super::lines::too_long;
use super::lines::unreadable;
use super::out::OutDir;
use super::spool::Spool;
use crate::scenario::replay::AnswerForm;

/// The longest bash timeout a replayed call gets (a day), in seconds.
pub(crate) const MAX_BASH_SECS: f64 = crate::base::bounds::ONE_DAY;

/// Recorded texts longer than this (bytes) go to a sidecar file as soon
/// as they are read, so a session's large results are not held in memory.
pub(crate) const MAX_INLINE_TEXT: usize = 4096;

/// Where a recorded text is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Text {
    /// In memory (short).
    Inline(String),
    /// In a sidecar file, by its path relative to the output directory.
    Sidecar(String),
}

/// A recorded tool's answer without the client's presentation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Answer {
    /// Its form.
    pub form: AnswerForm,
    /// Its text (lines joined by newlines for the list forms); `None`
    /// when it is the recorded text itself.
    pub text: Option<Text>,
}

/// What a client recorded as the result of one call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Outcome {
    /// Whether it was an error.
    pub is_error: bool,
    /// Its text blocks joined by newlines, as the model saw them.
    pub text: String,
    /// Its image blocks.
    pub images: usize,
    /// The tool's answer without the client's presentation, when known.
    pub answer: Option<(AnswerForm, String)>,
    /// The file's whole text before the call (an edit's `originalFile`),
    /// when recorded.
    pub original: Option<String>,
    /// The client's reading of the command's non-zero exit, which it did
    /// not count as an error (Claude Code's `returnCodeInterpretation`).
    pub nonzero_exit: Option<String>,
    /// The answer is a whole file's text that `--sync-reads` may write
    /// back (`Err`: why not), for a client whose recorded text is not the
    /// file's; `None` leaves the decision to the text.
    pub whole: Option<Result<(), &'static str>>,
}

/// A recorded result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RecordedResult {
    /// Whether it was an error.
    pub is_error: bool,
    /// Its text blocks joined by newlines.
    pub text: Text,
    /// How many image blocks it held.
    pub images: usize,
    /// Why the text, read as a read's result, is not a whole file's (a
    /// truncation or continuation notice, an image's text), for
    /// `--sync-reads`; `None` when it may be.
    pub notice: Option<&'static str>,
    /// The tool's answer without the client's presentation.
    pub answer: Option<Answer>,
    /// The file's whole text before the call, when recorded.
    pub original: Option<Text>,
    /// The client's reading of a non-zero exit it did not count as an
    /// error.
    pub nonzero_exit: Option<String>,
}

/// Where large recorded texts are written while a session is read.
#[derive(Debug)]
pub(crate) struct Sidecars {
    /// The output directory.
    pub out: Arc<OutDir>,
    /// The sidecar directory's name inside it (`<stem>.recorded`).
    pub dir: String,
    /// The sidecar directory, once made.
    made: Option<OutDir>,
    /// Files written so far.
    pub written: usize,
    /// Keep the file texts recorded before edits (for `--sync-reads`).
    pub originals: bool,
    /// Where the calls' large argument texts are kept, once one was met.
    pub spool: Option<Spool>,
}

impl Sidecars {
    /// Sidecars in `out`/`dir`, made when the first is written.
    pub(crate) fn new(out: Arc<OutDir>, dir: String) -> Self {
        Self {
            out,
            dir,
            made: None,
            written: 0,
            originals: false,
            spool: None,
        }
    }

    /// Moves the large texts of `args` into the spool (made when first
    /// needed).
    fn spool_args(&mut self, args: &mut Value) -> Result<(), String> {
        if self.spool.is_none() {
            if !has_long_string(args) {
                return Ok(());
            }
            self.spool = Some(Spool::new(&self.out).map_err(|err| {
                format!(
                    "cannot keep large arguments in {}: {err}",
                    self.out.show("").display()
                )
            })?);
        }
        let Some(spool) = self.spool.as_mut() else {
            return Ok(());
        };
        spool.take(args).map_err(|err| {
            format!(
                "cannot keep large arguments in {}: {err}",
                self.out.show("").display()
            )
        })
    }

    /// Writes `text` as the next sidecar file; its path relative to the
    /// output directory.
    fn write(&mut self, text: &str) -> Result<String, String> {
        let name = format!("{}.txt", self.written + 1);
        let rel = format!("{}/{name}", self.dir);
        if self.made.is_none() {
            self.made = Some(self.out.subdir(&self.dir).map_err(|err| {
                format!("cannot make {}: {err}", self.out.show(&self.dir).display())
            })?);
        }
        let Some(dir) = &self.made else {
            return Err("no sidecar directory".to_owned());
        };
        dir.write(&name, text.as_bytes())
            .map_err(|err| format!("cannot write {}: {err}", self.out.show(&rel).display()))?;
        self.written += 1;
        Ok(rel)
    }
}

/// One call to replay.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Call {
    /// The call id as recorded.
    pub id: String,
    /// Our tool's name.
    pub tool: String,
    /// The arguments, paths already mapped to `${workspace}`.
    pub args: Value,
    /// The line of the session that made the call (1-based).
    pub line: usize,
    /// Its result, once seen.
    pub result: Option<RecordedResult>,
    /// A whole-file read whose result can be written back (`--sync-reads`).
    pub syncable: bool,
    /// What the mapping could not keep (Claude's `replace_all` …).
    pub note: Option<String>,
    /// Why the recorded result does not count as an answer (the user
    /// rejected or interrupted the call), when it does not.
    pub unanswered: Option<String>,
    /// The tool as recorded (Claude's `Bash`, pi's `bash`), for comments.
    pub recorded_tool: String,
    /// The arguments as recorded, shortened, for comments (without what
    /// the import added, such as a bash `timeout`).
    pub recorded_args: String,
    /// The arguments as recorded, kept while the mapping waits for the
    /// result (an edit with `replace_all` needs the recorded original).
    pub refine: Option<Value>,
}

/// A tool-call block as recorded: its id, tool name and arguments.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RawCall {
    /// The call id.
    pub id: String,
    /// The tool's name as recorded.
    pub name: String,
    /// The arguments as recorded.
    pub args: Value,
    /// The line that made the call.
    pub line: usize,
}

impl RawCall {
    /// The call to replay: our `tool` with `args` (already mapped), and
    /// what the mapping could not keep.
    pub(crate) fn replayed_as(&self, tool: &str, args: Value, note: Option<String>) -> Call {
        Call {
            id: self.id.clone(),
            tool: tool.to_owned(),
            args,
            line: self.line,
            result: None,
            syncable: false,
            note,
            unanswered: None,
            recorded_tool: self.name.clone(),
            recorded_args: short_json(&self.args),
            refine: None,
        }
    }
}

/// A call left out of the replay, and why.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Skipped {
    /// The call's id, as recorded.
    pub id: String,
    /// The line of the call.
    pub line: usize,
    /// Its tool, as recorded.
    pub tool: String,
    /// Why it is not replayed.
    pub reason: String,
    /// The arguments as recorded, shortened, for the comment.
    pub args: String,
}

/// A problem in a session file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Note {
    /// The line (1-based).
    pub line: usize,
    /// What is wrong, and what was skipped.
    pub message: String,
}

/// The side chains (sub-agents) of a transcript.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SideChains {
    /// How many there are.
    pub chains: usize,
    /// Calls in them (counted when they are not imported).
    pub calls: usize,
    /// The line the first begins on.
    pub line: usize,
    /// They are imported as scenarios of their own.
    pub imported: bool,
}

/// A session read into calls.
#[derive(Debug, Default)]
pub(crate) struct Recording {
    /// `pi` or `claude`.
    pub format: &'static str,
    /// The working directory of the session.
    pub cwd: Option<String>,
    /// When the session began: the time of its first entry, as recorded
    /// (RFC 3339), if it recorded one.
    pub started: Option<String>,
    /// The git branch the client recorded the session on (Claude Code's
    /// `gitBranch`), if any.
    pub git_branch: Option<String>,
    /// Batches of calls, in the order they were sent.
    pub batches: Vec<Vec<Call>>,
    /// Calls not replayed.
    pub skipped: Vec<Skipped>,
    /// Problems met, by line: what, and what was skipped.
    pub notes: Vec<Note>,
    /// Lines read.
    pub lines: usize,
    /// Where large texts go (none: every text stays in memory).
    pub sidecars: Option<Sidecars>,
    /// The transcript's side chains, on the main chain's recording.
    pub sidechains: Option<SideChains>,
    /// This recording is side chain N of its transcript, from line L.
    pub side: Option<(usize, usize)>,
    /// Where each call is, by id: (batch, position).
    index: HashMap<String, (usize, usize)>,
    /// Every call id met, replayed or not, with its line and a fingerprint
    /// of its tool and arguments.
    made: HashMap<String, (usize, Option<u64>)>,
    /// Calls written again: the same id, tool and arguments as a call
    /// before them (the lines of the copies).
    copies: Vec<usize>,
    /// The ids of the calls that were copied.
    copied: HashSet<String>,
    /// The batch of each model message (Claude Code's `message.id`).
    groups: HashMap<String, usize>,
    /// Calls met on entries this recording does not follow, by id: the
    /// line each was first met on, and where it was.
    elsewhere: HashMap<String, (usize, Elsewhere)>,
    /// Every call in the file, counted as it is read, before anything is
    /// made of it, by a reader that has no first pass to count them.
    pub in_file: FileCalls,
    /// Lines that could not be read as an entry (each noted).
    pub unread: Vec<usize>,
}

/// Where a call that is neither replayed nor listed was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Elsewhere {
    /// In a side chain (a sub-agent) not imported.
    SideChain,
    /// On a branch the session left (a conversation rewound or edited,
    /// an entry cut from the session's root).
    OtherBranch,
}

impl Recording {
    /// An empty recording of `format`, large texts going to `sidecars`.
    pub(crate) fn new(format: &'static str, sidecars: Option<Sidecars>) -> Self {
        Self {
            format,
            sidecars,
            ..Self::default()
        }
    }

    /// Adds a problem at `line`.
    pub(crate) fn note(&mut self, line: usize, message: impl Into<String>) {
        self.notes.push(Note {
            line,
            message: message.into(),
        });
    }

    /// The call of a tool-call block (`args_key`: where its arguments
    /// are, `arguments` in pi, `input` in Claude Code) read on `line`;
    /// `None` when its id was used before (noted, and listed as skipped).
    pub(crate) fn take_call(
        &mut self,
        line: usize,
        block: &Value,
        args_key: &str,
    ) -> Option<RawCall> {
        self.take_call_of(line, block, args_key, None)
    }

    /// [`Self::take_call`] for a block of the model message `group`
    /// (Claude Code's `message.id`): a call whose id a call of the same
    /// message, tool and arguments used before is a copy of it (as Claude
    /// Code writes the conversation again when a session is resumed):
    /// counted, said once, and the call is replayed once.
    pub(crate) fn take_call_of(
        &mut self,
        line: usize,
        block: &Value,
        args_key: &str,
        group: Option<&str>,
    ) -> Option<RawCall> {
        let text = |key: &str| {
            block
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let call = RawCall {
            id: text("id"),
            name: text("name"),
            args: block.get(args_key).cloned().unwrap_or(Value::Null),
            line,
        };
        let print = group.map(|g| fingerprint(g, &call.name, &call.args));
        if let Some(&(first, earlier)) = self.made.get(&call.id) {
            if print.is_some() && earlier == print {
                self.copies.push(line);
                self.copied.insert(call.id);
                return None;
            }
            self.skip(
                &call,
                format!(
                    "call id `{}` was already used on line {first}; this call is skipped",
                    call.id
                ),
                format!("its id `{}` was used before", call.id),
            );
            return None;
        }
        self.made.insert(call.id.clone(), (line, print));
        Some(call)
    }

    /// Whether call `id` was written again, with its tool and arguments
    /// (a second result for it is then the copy's, passed over quietly).
    pub(crate) fn was_copied(&self, id: &str) -> bool {
        self.copied.contains(id)
    }

    /// Leaves `call` out of the replay: `problem` is noted at its line,
    /// `reason` listed with it.
    pub(crate) fn skip(&mut self, call: &RawCall, problem: String, reason: String) {
        self.note(call.line, problem);
        self.skipped.push(Skipped {
            id: call.id.clone(),
            line: call.line,
            tool: call.name.clone(),
            reason,
            args: short_json(&call.args),
        });
    }

    /// Whether a call with this id was met (replayed or left out).
    pub(crate) fn was_made(&self, id: &str) -> bool {
        self.made.contains_key(id)
    }

    /// A call with id `id`, read on `line` in an entry this recording does
    /// not follow (`whence`): neither replayed nor listed, but counted.
    pub(crate) fn elsewhere(&mut self, line: usize, id: &str, whence: Elsewhere) {
        self.elsewhere
            .entry(id.to_owned())
            .or_insert((line, whence));
    }

    /// The ids of the calls met: replayed or listed, and those only seen
    /// elsewhere with where.
    pub(crate) fn met(
        &self,
    ) -> (
        impl Iterator<Item = &str>,
        impl Iterator<Item = (&str, Elsewhere)>,
    ) {
        (
            self.made.keys().map(String::as_str),
            self.elsewhere
                .iter()
                .filter(|(id, _)| !self.made.contains_key(*id))
                .map(|(id, (_, whence))| (id.as_str(), *whence)),
        )
    }

    /// The ids of the calls replayed.
    pub(crate) fn replayed_ids(&self) -> impl Iterator<Item = &str> {
        self.batches.iter().flatten().map(|c| c.id.as_str())
    }

    /// A result of call `id` that does not answer it (`reason`: the user
    /// rejected or interrupted it): the call is not replayed.
    pub(crate) fn unanswered(&mut self, line: usize, id: &str, reason: &str) {
        let copied = self.was_copied(id);
        match self.find(id) {
            Some(call) if call.result.is_none() && call.unanswered.is_none() => {
                call.unanswered = Some(reason.to_owned());
            }
            Some(_) if copied => {}
            Some(_) => self.note(
                line,
                format!("a second result for call `{id}`; the first is kept"),
            ),
            None => {}
        }
    }

    /// Where the call `id` is, if it was made.
    pub(crate) fn find(&mut self, id: &str) -> Option<&mut Call> {
        let &(batch, at) = self.index.get(id)?;
        self.batches.get_mut(batch)?.get_mut(at)
    }

    /// Adds a batch of calls; calls of a model message (`group`) whose
    /// batch exists join it.
    pub(crate) fn push_batch(&mut self, calls: Vec<Call>, group: Option<&str>) {
        if calls.is_empty() {
            return;
        }
        let b = match group.and_then(|g| self.groups.get(g)) {
            Some(&b) => b,
            None => {
                self.batches.push(Vec::new());
                let b = self.batches.len() - 1;
                if let Some(g) = group {
                    self.groups.insert(g.to_owned(), b);
                }
                b
            }
        };
        for mut call in calls {
            self.spool_args(&mut call);
            if let Some(batch) = self.batches.get_mut(b) {
                self.index.insert(call.id.clone(), (b, batch.len()));
                batch.push(call);
            }
        }
    }

    /// Moves the large texts of `call`'s arguments to the spool, when there
    /// are sidecars (a problem is noted, and they stay in memory, when the
    /// spool cannot be written).
    fn spool_args(&mut self, call: &mut Call) {
        let Some(sidecars) = &mut self.sidecars else {
            return;
        };
        if let Err(err) = sidecars.spool_args(&mut call.args) {
            self.note(
                call.line,
                format!("{err}; the call's arguments are kept in memory"),
            );
        }
    }

    /// `args` with the large texts the spool keeps put back (for the
    /// importers that read an argument again when the result comes).
    pub(crate) fn restored(&self, args: &Value) -> Value {
        match self.sidecars.as_ref().and_then(|s| s.spool.as_ref()) {
            Some(spool) => spool.restored(args).unwrap_or_else(|_| args.clone()),
            None => args.clone(),
        }
    }

    /// Where the calls' large argument texts are, if any are spooled.
    pub(crate) fn spool(&self) -> Option<&Spool> {
        self.sidecars.as_ref().and_then(|s| s.spool.as_ref())
    }

    /// The result of call `id`, read on `line`: kept with its call (a large
    /// text written to a sidecar at once), or a problem noted. `skipped`:
    /// A result for a call that was left out is passed over quietly (the
    /// call was reported).
    pub(crate) fn answer(&mut self, line: usize, id: &str, outcome: Outcome) {
        let skipped = self.was_made(id);
        match self
            .find(id)
            .map(|c| c.result.is_some() || c.unanswered.is_some())
        {
            None if skipped => {}
            None => self.note(
                line,
                format!("a result for call `{id}`, which no call on this branch made; skipped"),
            ),
            Some(true) if self.was_copied(id) => {}
            Some(true) => self.note(
                line,
                format!("a second result for call `{id}`; the first is kept"),
            ),
            Some(false) => {
                let notice = match outcome.whole {
                    Some(Ok(())) => None,
                    Some(Err(why)) => Some(why),
                    None => read_notice(&outcome.text),
                };
                let answer = outcome.answer.map(|(form, answer)| Answer {
                    form,
                    text: (form != AnswerForm::Done && answer != outcome.text)
                        .then(|| self.store(line, answer)),
                });
                let text = self.store(line, outcome.text);
                let keep = self.sidecars.as_ref().is_some_and(|s| s.originals);
                let original = outcome
                    .original
                    .filter(|_| keep)
                    .map(|text| self.store(line, text));
                let mut args = self
                    .find(id)
                    .map(|call| std::mem::take(&mut call.args))
                    .unwrap_or_default();
                if let Some(sidecars) = &mut self.sidecars
                    && let Err(err) = sidecars.spool_args(&mut args)
                {
                    self.note(
                        line,
                        format!("{err}; the call's arguments are kept in memory"),
                    );
                }
                if let Some(call) = self.find(id) {
                    call.args = args;
                    call.result = Some(RecordedResult {
                        is_error: outcome.is_error,
                        text,
                        images: outcome.images,
                        notice,
                        answer,
                        original,
                        nonzero_exit: outcome.nonzero_exit,
                    });
                }
            }
        }
    }

    /// A text kept in memory, or written to the next sidecar file.
    fn store(&mut self, line: usize, text: String) -> Text {
        let Some(sidecars) = &mut self.sidecars else {
            return Text::Inline(text);
        };
        if text.len() <= MAX_INLINE_TEXT {
            return Text::Inline(text);
        }
        match sidecars.write(&text) {
            Ok(rel) => Text::Sidecar(rel),
            Err(err) => {
                self.note(line, format!("{err}; the recorded text is kept inline"));
                Text::Inline(text)
            }
        }
    }

    /// Moves calls that never got a result to `skipped`, drops empty
    /// batches, and puts the problems in line order.
    pub(crate) fn finish(&mut self) {
        let mut skipped = Vec::new();
        for batch in &mut self.batches {
            batch.retain(|call| {
                if call.result.is_some() {
                    return true;
                }
                skipped.push(Skipped {
                    id: call.id.clone(),
                    line: call.line,
                    tool: call.recorded_tool.clone(),
                    reason: call
                        .unanswered
                        .clone()
                        .unwrap_or_else(|| "never answered (aborted or terminated)".to_owned()),
                    args: call.recorded_args.clone(),
                });
                false
            });
        }
        self.batches.retain(|b| !b.is_empty());
        self.skipped.extend(skipped);
        if let (Some(&from), Some(&to)) = (self.copies.first(), self.copies.last()) {
            let n = self.copies.len();
            self.note(
                from,
                format!(
                    "{n} call{} from line {from} to line {to} {} written again, with the id, tool \
                     and arguments of a call before {} (a copy of the conversation, as Claude \
                     Code writes one when a session is resumed); each call is replayed once, \
                     and a copy's result is passed over",
                    if n == 1 { "" } else { "s" },
                    if n == 1 { "is" } else { "are" },
                    if n == 1 { "it" } else { "them" },
                ),
            );
            self.copies.clear();
        }
        self.skipped.sort_by_key(|s| s.line);
        self.notes.sort_by_key(|n| n.line);
    }

    /// Takes back every batch after the first `keep` (a conversation
    /// rewound): their calls were made on a branch the session left.
    /// Returns how many calls were taken back.
    pub(crate) fn rewind(&mut self, keep: usize) -> usize {
        let mut dropped = 0;
        for batch in self.batches.drain(keep.min(self.batches.len())..) {
            for call in batch {
                self.index.remove(&call.id);
                self.made.remove(&call.id);
                self.elsewhere
                    .entry(call.id.clone())
                    .or_insert((call.line, Elsewhere::OtherBranch));
                dropped += 1;
            }
        }
        self.groups.retain(|_, b| *b < keep);
        dropped
    }

    /// Batches cut as a client that runs a message's changes one at a time
    /// ran them (Claude Code: read-only calls side by side, each edit or
    /// write alone, in the order sent): a batch with an edit or write and
    /// other calls becomes consecutive steps, so each call sees the files
    /// as it saw them (this harness runs edits and reads of one batch side
    /// by side). After [`Recording::finish`].
    pub(crate) fn split_around_changes(&mut self) {
        let batches = std::mem::take(&mut self.batches);
        for batch in batches {
            if batch.len() < 2
                || !batch
                    .iter()
                    .any(|c| matches!(c.tool.as_str(), "edit" | "write"))
            {
                self.batches.push(batch);
                continue;
            }
            let mut group: Vec<Call> = Vec::new();
            for call in batch {
                if matches!(call.tool.as_str(), "edit" | "write") {
                    if !group.is_empty() {
                        self.batches.push(std::mem::take(&mut group));
                    }
                    self.batches.push(vec![call]);
                } else {
                    group.push(call);
                }
            }
            if !group.is_empty() {
                self.batches.push(group);
            }
        }
        self.index.clear();
    }

    /// Every call, in order.
    pub(crate) fn calls(&self) -> impl Iterator<Item = &Call> {
        self.batches.iter().flatten()
    }
}

/// Reads the session at `path` into `rec`, streaming: every line that
/// reads as an entry `T` is handed to `each` with its line number, every
/// other line is a problem at its line; then what finding `branch` had to
/// assume is added to the problems.
pub(crate) fn read_entries<T: DeserializeOwned>(
    path: &Path,
    rec: &mut Recording,
    branch: &Branch,
    mut each: impl FnMut(&mut Recording, usize, T),
) -> Result<(), String> {
    for_each_line(path, |number, line| {
        rec.lines = number;
        match line {
            Line::TooLong => rec.note(number, too_long()),
            Line::Text {
                bytes,
                last_unterminated,
            } => match serde_json::from_slice::<T>(bytes) {
                Ok(entry) => each(rec, number, entry),
                Err(err) => {
                    rec.unread.push(number);
                    rec.note(number, unreadable(&err, last_unterminated));
                }
            },
        }
    })
    .map_err(|err| format!("cannot read {}: {err}", path.display()))?;
    for (line, message) in branch.notes() {
        rec.note(*line, message.clone());
    }
    Ok(())
}

/// Words of a notice that a read's text is not the whole file (pi's and
/// this harness's: `[Showing lines 1-2000 of 5000. Use offset=2001 to
/// continue.]`, `[120 more lines in file. Use offset=81 to continue.]`,
/// `[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: …]`, an image's
/// `[Image omitted: …]`).
const NOTICE_WORDS: [&str; 9] = [
    "offset=",
    "Showing lines",
    "more lines",
    "exceeds",
    "limit",
    "Use bash",
    "truncated",
    "omitted",
    "continue",
];

/// Why a read's recorded text is not the file's whole text, if it is not:
/// its last line is a bracketed notice of the kinds above, or it is an
/// image's (`Read image file [image/png]`). Meant to err on the side of
/// "not whole": a file wrongly left unsynced only drifts, a notice
/// written into a file would be wrong.
pub(crate) fn read_notice(text: &str) -> Option<&'static str> {
    if text.starts_with("Read image file [") {
        return Some("its recorded result is an image");
    }
    let tail = text.lines().last().unwrap_or("").trim();
    // A notice is a sentence in brackets (a `[limits]` section is not).
    let bracketed = tail.starts_with('[') && tail.ends_with(']') && tail.contains(' ');
    // Older pi versions: `... (12 more lines not shown. Use offset=30 to
    // continue reading)`.
    let older = tail.starts_with("... (") && tail.ends_with(')');
    ((bracketed || older) && NOTICE_WORDS.iter().any(|w| tail.contains(w)))
        .then_some("its recorded text ends with a truncation or continuation notice")
}

/// Whether a string of `value` is long enough to be spooled.
fn has_long_string(value: &Value) -> bool {
    match value {
        Value::String(s) => s.len() > super::spool::MAX_INLINE_ARG,
        Value::Array(items) => items.iter().any(has_long_string),
        Value::Object(map) => map.values().any(has_long_string),
        _ => false,
    }
}

/// Characters of recorded arguments kept in a comment.
pub(crate) const MAX_COMMENT_CHARS: usize = 200;

/// `value` as one line of JSON, cut to [`MAX_COMMENT_CHARS`].
/// A fingerprint of a call's message, tool and arguments, to tell a copy of
/// a call (the same id, message, tool and arguments) from another call that
/// reuses its id.
fn fingerprint(group: &str, name: &str, args: &Value) -> u64 {
    let mut hasher = DefaultHasher::new();
    group.hash(&mut hasher);
    name.hash(&mut hasher);
    args.to_string().hash(&mut hasher);
    hasher.finish()
}

pub(crate) fn short_json(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(MAX_COMMENT_CHARS) {
        None => text,
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

/// A result's content blocks (`[{type: text, text}, {type: image}]`, or a
/// plain string) as text and an image count.
pub(crate) fn content_text(content: &Value) -> (String, usize) {
    match content {
        Value::String(s) => (s.clone(), 0),
        Value::Array(blocks) => {
            let mut texts = Vec::new();
            let mut images = 0;
            for block in blocks {
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        if let Some(t) = block.get("text").and_then(Value::as_str) {
                            texts.push(t);
                        }
                    }
                    Some("image") => images += 1,
                    _ => {}
                }
            }
            (texts.join("\n"), images)
        }
        _ => (String::new(), 0),
    }
}

/// The entry types of pi's sessions.
pub(crate) const PI_ENTRY_TYPES: [&str; 10] = [
    "session",
    "message",
    "compaction",
    "model_change",
    "thinking_level_change",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
];

/// The entry types of Claude Code's transcripts.
pub(crate) const CLAUDE_ENTRY_TYPES: [&str; 7] = [
    "user",
    "assistant",
    "summary",
    "system",
    "file-history-snapshot",
    "queue-operation",
    "progress",
];

/// Entries of the other format met while reading a session (a Claude Code
/// transcript given as `pi`, or the other way round).
#[derive(Debug, Default)]
pub(crate) struct Foreign {
    /// Their lines and entry types.
    lines: Vec<(usize, String)>,
}

impl Foreign {
    /// An entry of type `kind`, on `line`, that belongs to the other format.
    pub(crate) fn see(&mut self, line: usize, kind: &str) {
        self.lines.push((line, kind.to_owned()));
    }

    /// When the session gave no call at all, the error that the file at
    /// `path` looks like `what` (the other format, and how to import it):
    /// nothing is imported from it. Otherwise each entry is an unknown
    /// entry type, as any other, and a problem of its own.
    pub(crate) fn finish(self, rec: &mut Recording, path: &Path, what: &str) -> Result<(), String> {
        if self.lines.is_empty() {
            return Ok(());
        }
        if rec.batches.is_empty() && rec.skipped.is_empty() {
            let n = self.lines.len();
            return Err(format!(
                "{}: no call was found, and {n} {} like a {what}",
                path.display(),
                if n == 1 { "line looks" } else { "lines look" }
            ));
        }
        for (line, kind) in self.lines {
            rec.note(line, format!("unknown entry type `{kind}`; skipped"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_notices_are_told_from_file_text() {
        let cases = [
            ("a\nb\n", None),
            ("[package]\nname = \"x\"\n\n[limits]\n", None),
            ("", None),
            (
                "[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '1p' a | head -c 51200]",
                Some("its recorded text ends with a truncation or continuation notice"),
            ),
            (
                "a\n\n[3 more lines in file. Use offset=2 to continue.]",
                Some("its recorded text ends with a truncation or continuation notice"),
            ),
            (
                "a\n\n... (3 more lines not shown. Use offset=2 to continue reading)",
                Some("its recorded text ends with a truncation or continuation notice"),
            ),
            (
                "a\n\n[Showing lines 1-1 of 3 (50.0KB limit). Use offset=2 to continue.]",
                Some("its recorded text ends with a truncation or continuation notice"),
            ),
            (
                "Read image file [image/png]",
                Some("its recorded result is an image"),
            ),
        ];
        let got: Vec<_> = cases.iter().map(|(text, _)| read_notice(text)).collect();
        let want: Vec<_> = cases.iter().map(|(_, why)| *why).collect();
        assert_eq!(got, want);
    }
}
