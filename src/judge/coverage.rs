//! What a suite exercises (`harness run --coverage`, docs/reports.md
//! "Coverage"): for each tool, and for the agent loop, the behaviours the
//! run's calls showed (result kinds, error kinds, truncation kinds, edit
//! paths, bash outcomes, batches, retries), and the known behaviours no
//! call showed.
//!
//! Each call is classified from what it sent and from the typed facts of
//! what came back (`tools::facts_of`: the kind of an error, the tool's
//! details struct), never from `details` keys or the words of a message,
//! so the figures are the same on every run and machine. The tools declare
//! what they can show next to their code (`tools::TOOL_BEHAVIOURS`); the
//! catalogue is those declarations and the loop's. A scenario records its
//! behaviours in its outcome; the run's coverage is the sum over the
//! scenarios, so merged partitions have the coverage of the whole run.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::agent::CallRecord;
use crate::agent::FauxReport;
use crate::tools::BashDetails;
use crate::tools::CallArguments;
use crate::tools::EditDetails;
use crate::tools::EditRule;
use crate::tools::ErrorClass;
use crate::tools::ErrorKind;
use crate::tools::Facts;
use crate::tools::FindDetails;
use crate::tools::GrepDetails;
use crate::tools::LsDetails;
use crate::tools::OmittedReason;
use crate::tools::ReadDetails;
use crate::tools::TOOL_BEHAVIOURS;
use crate::tools::WriteDetails;
use crate::tools::edit::LineEnding;
use crate::tools::facts_of;
use crate::tools::truncate::TruncatedBy;
use crate::tools::truncate::Truncation;

/// One scenario's behaviours: calls that showed each behaviour, by area
/// (a tool, or `loop`) and behaviour.
pub(crate) type ScenarioCoverage = BTreeMap<String, BTreeMap<String, u64>>;

/// The area of what the agent loop does with calls, beside the tools.
pub(crate) const LOOP: &str = "loop";

/// What the agent loop can show of a suite's calls (the tools declare
/// their own, next to their code: `tools::TOOL_BEHAVIOURS`).
pub(crate) const LOOP_BEHAVIOURS: &[&str] = &[
    "one call in a message",
    "parallel batch",
    "sequential batch",
    "retry sent",
    "retry that succeeded",
    "retry avoided",
    "unknown or inactive tool",
    "arguments cut off",
];

/// The behaviours a suite can show, by area, in the order reports list
/// them: each tool's declaration in prompt order, then the loop's. A
/// behaviour seen that is not listed here is still reported.
pub(crate) fn catalogue() -> impl Iterator<Item = (&'static str, &'static [&'static str])> {
    TOOL_BEHAVIOURS.into_iter().chain([(LOOP, LOOP_BEHAVIOURS)])
}

/// The behaviours of one run's calls, seen one call at a time in the
/// order sent (in the run's judging pass), then completed with what the
/// faux model reported.
#[derive(Debug)]
pub(crate) struct Observer<'a> {
    /// Each MCP server of the scenario with its active tools (as the
    /// model calls them).
    servers: &'a [(String, Vec<String>)],
    out: ScenarioCoverage,
    /// The batch being seen: its turn, its calls so far, whether one of
    /// them is bash.
    batch: Option<(usize, usize, bool)>,
    /// Calls by tool name, for the servers' areas.
    by_tool: BTreeMap<String, u64>,
}

impl<'a> Observer<'a> {
    /// An observer of a scenario with these MCP `servers`, none seen yet.
    pub(crate) fn new(servers: &'a [(String, Vec<String>)]) -> Self {
        Self {
            servers,
            out: ScenarioCoverage::new(),
            batch: None,
            by_tool: BTreeMap::new(),
        }
    }

    fn add(&mut self, area: &str, behaviour: &str) {
        *self
            .out
            .entry(area.to_owned())
            .or_default()
            .entry(behaviour.to_owned())
            .or_default() += 1;
    }

    /// One answered call; `retry`: it was sent as a retry.
    pub(crate) fn call(&mut self, record: &CallRecord, retry: bool) {
        let (area, behaviours) = classify(record);
        for behaviour in behaviours {
            self.add(area, &behaviour);
        }
        if retry {
            self.add(LOOP, "retry sent");
            if !record.result.is_error {
                self.add(LOOP, "retry that succeeded");
            }
        }
        // Batches: the calls of one message, which come together.
        let bash = record.call.name == "bash";
        match &mut self.batch {
            Some((turn, calls, any_bash)) if *turn == record.turn => {
                *calls += 1;
                *any_bash |= bash;
            }
            _ => {
                self.end_batch();
                self.batch = Some((record.turn, 1, bash));
            }
        }
        if !self.servers.is_empty() {
            *self.by_tool.entry(record.call.name.clone()).or_default() += 1;
        }
    }

    fn end_batch(&mut self) {
        if let Some((_, calls, bash)) = self.batch.take() {
            let kind = match calls {
                1 => "one call in a message",
                _ if bash => "sequential batch",
                _ => "parallel batch",
            };
            self.add(LOOP, kind);
        }
    }

    /// The behaviours seen, with the retries the faux model did not need
    /// to send, and each server's calls (see [`server_area`]). A call to a
    /// server tool with a built-in tool's name (`harness mcp`'s `read`)
    /// keeps that tool's behaviours too; the others are counted only in
    /// their server's area.
    pub(crate) fn finish(mut self, report: &FauxReport) -> ScenarioCoverage {
        self.end_batch();
        for _ in 0..report.retries_avoided {
            self.add(LOOP, "retry avoided");
        }
        let mut coverage = self.out;
        for (server, tools) in self.servers {
            let area = coverage.entry(server_area(server)).or_default();
            for (tool, calls) in &self.by_tool {
                if tools.contains(tool) {
                    *area.entry(tool.clone()).or_default() += calls;
                }
            }
            if area.is_empty() {
                coverage.remove(&server_area(server));
            }
            for tool in tools {
                if !catalogue().any(|(known, _)| known == tool) {
                    coverage.remove(tool);
                }
            }
        }
        coverage
    }
}

/// Marks each of the scenario's `active` tools that has an area of its
/// own (a built-in tool's name) in its coverage, with no behaviour when
/// none was seen, so a summary can tell a tool no scenario activated (not
/// shown) from one activated but never called (shown, at 0).
pub(crate) fn mark_active(coverage: &mut ScenarioCoverage, active: &[&str]) {
    for name in active {
        if TOOL_BEHAVIOURS.iter().any(|(tool, _)| tool == name) {
            coverage.entry((*name).to_owned()).or_default();
        }
    }
}

/// The area of a scenario's MCP server `name` (`server fs`), whose
/// behaviours are its active tools, each called or not.
pub(crate) fn server_area(name: &str) -> String {
    format!("server {name}")
}

/// The area and behaviours of one call: from the result's typed facts,
/// and from the arguments as the model sent them.
fn classify(record: &CallRecord) -> (&str, Vec<String>) {
    let tool = record.call.name.as_str();
    let result = &record.result;
    let facts = facts_of(tool, result);
    let args = match &record.call.arguments {
        CallArguments::Json(value) => value.clone(),
        CallArguments::Text(text) => serde_json::from_str(text).unwrap_or(Value::Null),
    };
    match facts.error {
        Some(ErrorKind::UnknownTool) => return (LOOP, vec!["unknown or inactive tool".to_owned()]),
        Some(ErrorKind::ArgumentsCutOff) => return (LOOP, vec!["arguments cut off".to_owned()]),
        _ => {}
    }
    let mut out: Vec<String> = Vec::new();
    let arg = |key: &str| {
        args.get(key)
            .is_some_and(|v| !v.is_null() && v != &Value::Bool(false))
    };
    if facts.normalised {
        out.push("arguments normalised".to_owned());
    }
    truncation(facts.truncation(), &mut out);
    if result.is_error {
        out.extend(error_kind(tool, facts.error));
    } else {
        success(tool, &facts, &arg, &mut out);
    }
    if tool == "bash"
        && let Some(details) = facts.details::<BashDetails>()
    {
        bash(details, &mut out);
    }
    if tool == "edit" {
        let edits = args
            .get("edits")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        if edits > 1 {
            out.push("several edits".to_owned());
        }
        if args.get("oldText").is_some() || args.get("old_text").is_some() {
            out.push("legacy oldText/newText".to_owned());
        }
    }
    (tool, out)
}

/// Truncation kinds of the tool's output.
fn truncation(t: Option<&Truncation>, out: &mut Vec<String>) {
    let Some(t) = t else {
        return;
    };
    if t.truncated {
        match t.truncated_by {
            Some(TruncatedBy::Lines) => out.push("truncated by lines".to_owned()),
            Some(TruncatedBy::Bytes) => out.push("truncated by bytes".to_owned()),
            None => {}
        }
    }
    if t.first_line_exceeds_limit {
        out.push("first line over the byte cap".to_owned());
    }
    if t.last_line_partial {
        out.push("last line cut".to_owned());
    }
}

/// What a successful result of `tool` shows.
fn success(tool: &str, facts: &Facts, arg: &dyn Fn(&str) -> bool, out: &mut Vec<String>) {
    let mut push = |b: &str| out.push(b.to_owned());
    match tool {
        "read" => {
            match facts.details::<ReadDetails>() {
                Some(ReadDetails::Image(image)) if image.omitted => {
                    push(match image.omitted_reason {
                        Some(OmittedReason::NotConverted) => "image omitted (not converted)",
                        Some(OmittedReason::NotResized) => "image omitted (not resized)",
                        Some(OmittedReason::TooLarge) | None => "image omitted (file too large)",
                    });
                }
                Some(ReadDetails::Image(image)) => {
                    push("image");
                    if image.converted_from.is_some() {
                        push("image converted (BMP to PNG)");
                    }
                    if image.resized_to.is_some() {
                        push("image resized");
                    }
                }
                Some(ReadDetails::Page { .. }) | None => push("text"),
            }
            if arg("offset") {
                push("offset");
            }
            if arg("limit") {
                push("limit");
            }
        }
        "edit" => {
            let details = facts.details::<EditDetails>();
            push(if details.is_some_and(|d| d.fuzzy) {
                "fuzzy match"
            } else {
                "exact match"
            });
            if details.and_then(|d| d.line_ending) == Some(LineEnding::CrLf) {
                push("CRLF file");
            }
        }
        "write" => push(
            if facts.details::<WriteDetails>().is_some_and(|d| d.created) {
                "created"
            } else {
                "overwritten"
            },
        ),
        "grep" => {
            let details = facts.details::<GrepDetails>();
            push(if details.map(|d| d.matches) == Some(0) {
                "no matches"
            } else {
                "matches"
            });
            if details.is_some_and(|d| d.match_limit_reached.is_some()) {
                push("match limit reached");
            }
            if details.is_some_and(|d| d.lines_truncated) {
                push("long lines cut");
            }
            if arg("context") {
                push("context lines");
            }
            for key in ["glob", "literal"] {
                if arg(key) {
                    push(key);
                }
            }
            if arg("ignoreCase") || arg("ignore_case") {
                push("ignore case");
            }
        }
        "find" => {
            let details = facts.details::<FindDetails>();
            push(if details.map(|d| d.results) == Some(0) {
                "no results"
            } else {
                "results"
            });
            if details.is_some_and(|d| d.result_limit_reached.is_some()) {
                push("result limit reached");
            }
        }
        "ls" => {
            let details = facts.details::<LsDetails>();
            push(if details.map(|d| d.entries) == Some(0) {
                "empty directory"
            } else {
                "entries"
            });
            if details.is_some_and(|d| d.entry_limit_reached.is_some()) {
                push("entry limit reached");
            }
        }
        _ => {}
    }
}

/// bash's outcome, on success and error alike.
fn bash(details: &BashDetails, out: &mut Vec<String>) {
    match details.exit_code {
        Some(0) => out.push("exit code 0".to_owned()),
        Some(_) => out.push("exit code non-zero".to_owned()),
        None => {}
    }
    if details.signal.is_some() && !details.timed_out && !details.cancelled {
        out.push("killed by a signal".to_owned());
    }
    for (shown, name) in [
        (details.timed_out, "timeout"),
        (details.cancelled, "cancelled"),
        (details.cleaned == Some(true), "output cleaned"),
        (details.full_output_truncated, "full output log capped"),
    ] {
        if shown {
            out.push(name.to_owned());
        }
    }
}

/// The behaviour name of an error class (`details.error_class`).
fn class_name(class: ErrorClass) -> &'static str {
    match class {
        ErrorClass::PermissionDenied => "permission denied",
        ErrorClass::NotFound => "path not found",
        ErrorClass::IsADirectory => "a directory",
        ErrorClass::NotADirectory => "not a directory",
        ErrorClass::DiskFull => "disk full",
        ErrorClass::ReadOnly => "read-only file system",
        ErrorClass::IoError => "I/O error",
        ErrorClass::Busy => "busy",
        ErrorClass::AlreadyExists => "already exists",
        ErrorClass::TooManyOpenFiles => "too many open files",
        ErrorClass::NameTooLong => "name too long",
        ErrorClass::InvalidName => "invalid file name",
        ErrorClass::TemporarilyUnavailable => "temporarily unavailable",
        ErrorClass::Interrupted => "interrupted",
        ErrorClass::CrossDevice => "across file systems",
        ErrorClass::SymlinkLoop => "symlink loop",
        ErrorClass::TooLarge => "too large",
        ErrorClass::OutOfMemory => "out of memory",
        ErrorClass::StaleHandle => "stale file handle",
        ErrorClass::NoDevice => "no device",
        ErrorClass::Invalid => "invalid request",
        ErrorClass::NotExecutable => "not executable",
        ErrorClass::TimedOut => "timed out",
        ErrorClass::Connection => "connection lost",
        ErrorClass::NotRegular => "not a regular file",
        ErrorClass::OutsideWorkspace => "outside the workspace",
        ErrorClass::HardLinked => "hard-linked file in place",
        ErrorClass::Other => "other I/O error",
    }
}

/// The behaviour name of the rule a failed edit broke (`details.error`).
fn edit_rule_name(rule: EditRule) -> &'static str {
    match rule {
        EditRule::NotFound => "old text not found",
        EditRule::Duplicate => "old text found more than once",
        EditRule::Overlap => "edits overlap",
        EditRule::NoChange => "no change",
        EditRule::EmptyOldText => "empty old text",
        EditRule::WhitespaceOnlyOldText => "whitespace-only old text",
    }
}

/// The behaviour of an error result, from its kind. bash's errors are
/// told by their outcome (see [`bash`]), except a command that could not
/// start. Kinds without a behaviour of their own are `error: other`: a
/// cancellation, a broken invariant, a result the loop made, a grep
/// pattern with a line break or too large, grep's `glob` that is not a
/// glob, an edit of a binary or UTF-16 file (so they have always been
/// counted).
fn error_kind(tool: &str, kind: Option<ErrorKind>) -> Option<String> {
    let named = |k: &str| Some(format!("error: {k}"));
    if kind == Some(ErrorKind::InvalidArguments) {
        return named("invalid arguments");
    }
    if tool == "bash" {
        return matches!(kind, Some(ErrorKind::Io(_)))
            .then(|| "error: command could not start".to_owned());
    }
    named(match kind {
        Some(ErrorKind::Edit(rule)) => edit_rule_name(rule),
        Some(ErrorKind::Io(class)) => class_name(class),
        Some(ErrorKind::Binary) => "binary file",
        Some(ErrorKind::SearchTimedOut) => "timeout",
        Some(ErrorKind::OffsetBeyondEnd) => "offset beyond the end",
        Some(ErrorKind::InvalidRegex) => "invalid regex",
        Some(ErrorKind::InvalidGlob) if tool == "find" => "invalid glob",
        Some(ErrorKind::NotUtf8) => "not UTF-8",
        Some(ErrorKind::NoEdits) => "no edits",
        _ => "other",
    })
}

#[cfg(test)]
#[path = "coverage_tests.rs"]
mod tests;
