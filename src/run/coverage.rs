//! What a suite exercises (`harness run --coverage`, docs/reports.md
//! "Coverage"): for each tool, and for the agent loop, the behaviours the
//! run's calls showed (result kinds, error kinds, truncation kinds, edit
//! paths, bash outcomes, batches, retries), and the known behaviours no
//! call showed.
//!
//! Each call is classified from what it sent and what came back (the
//! result's `details` first, its text where details say nothing), so the
//! figures are the same on every run and machine. A scenario records its
//! behaviours in its outcome; the run's coverage is the sum over the
//! scenarios, so merged partitions have the coverage of the whole run.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;

use crate::agent::CallRecord;
use crate::agent::FauxReport;
use crate::agent::Transcript;
use crate::tools::CallArguments;

use super::outcome::RunSummary;

/// One scenario's behaviours: calls that showed each behaviour, by area
/// (a tool, or `loop`) and behaviour.
pub type ScenarioCoverage = BTreeMap<String, BTreeMap<String, u64>>;

/// The area of what the agent loop does with calls, beside the tools.
pub const LOOP: &str = "loop";

/// The behaviours a suite can show, by area, in the order reports list
/// them. A behaviour seen that is not listed here is still reported.
pub const CATALOGUE: &[(&str, &[&str])] = &[
    (
        "read",
        &[
            "text",
            "offset",
            "limit",
            "image",
            "image converted (BMP to PNG)",
            "image resized",
            "image omitted (file too large)",
            "image omitted (not converted)",
            "image omitted (not resized)",
            "truncated by lines",
            "truncated by bytes",
            "first line over the byte cap",
            "arguments normalised",
            "error: path not found",
            "error: a directory",
            "error: not a regular file",
            "error: binary file",
            "error: offset beyond the end",
            "error: outside the workspace",
            "error: permission denied",
            "error: I/O error",
            "error: invalid arguments",
        ],
    ),
    (
        "bash",
        &[
            "exit code 0",
            "exit code non-zero",
            "killed by a signal",
            "timeout",
            "cancelled",
            "truncated by lines",
            "truncated by bytes",
            "last line cut",
            "output cleaned",
            "full output log capped",
            "arguments normalised",
            "error: command could not start",
            "error: invalid arguments",
        ],
    ),
    (
        "edit",
        &[
            "exact match",
            "fuzzy match",
            "several edits",
            "legacy oldText/newText",
            "CRLF file",
            "arguments normalised",
            "error: old text not found",
            "error: old text found more than once",
            "error: edits overlap",
            "error: no change",
            "error: empty old text",
            "error: whitespace-only old text",
            "error: no edits",
            "error: path not found",
            "error: not UTF-8",
            "error: a directory",
            "error: outside the workspace",
            "error: permission denied",
            "error: disk full",
            "error: read-only file system",
            "error: I/O error",
            "error: hard-linked file in place",
            "error: invalid arguments",
        ],
    ),
    (
        "write",
        &[
            "created",
            "overwritten",
            "arguments normalised",
            "error: a directory",
            "error: outside the workspace",
            "error: permission denied",
            "error: disk full",
            "error: read-only file system",
            "error: I/O error",
            "error: hard-linked file in place",
            "error: invalid arguments",
        ],
    ),
    (
        "grep",
        &[
            "matches",
            "no matches",
            "match limit reached",
            "long lines cut",
            "truncated by bytes",
            "context lines",
            "glob",
            "literal",
            "ignore case",
            "arguments normalised",
            "error: invalid regex",
            "error: path not found",
            "error: timeout",
            "error: outside the workspace",
            "error: permission denied",
            "error: I/O error",
            "error: invalid arguments",
        ],
    ),
    (
        "find",
        &[
            "results",
            "no results",
            "result limit reached",
            "truncated by bytes",
            "arguments normalised",
            "error: invalid glob",
            "error: path not found",
            "error: not a directory",
            "error: outside the workspace",
            "error: permission denied",
            "error: I/O error",
            "error: invalid arguments",
        ],
    ),
    (
        "ls",
        &[
            "entries",
            "empty directory",
            "entry limit reached",
            "truncated by bytes",
            "arguments normalised",
            "error: path not found",
            "error: not a directory",
            "error: outside the workspace",
            "error: permission denied",
            "error: I/O error",
            "error: invalid arguments",
        ],
    ),
    (
        LOOP,
        &[
            "one call in a message",
            "parallel batch",
            "sequential batch",
            "retry sent",
            "retry that succeeded",
            "retry avoided",
            "unknown or inactive tool",
            "arguments cut off",
        ],
    ),
];

/// The behaviours of one run's calls.
pub fn observe(transcript: &Transcript, report: &FauxReport) -> ScenarioCoverage {
    let retries = report.retry_ids();
    let mut out = ScenarioCoverage::new();
    let mut add = |area: &str, behaviour: &str| {
        *out.entry(area.to_owned())
            .or_default()
            .entry(behaviour.to_owned())
            .or_default() += 1;
    };
    for record in &transcript.calls {
        let (area, behaviours) = classify(record);
        for behaviour in behaviours {
            add(area, &behaviour);
        }
        if retries.contains(record.call.id.as_str()) {
            add(LOOP, "retry sent");
            if !record.result.is_error {
                add(LOOP, "retry that succeeded");
            }
        }
    }
    // Batches: the calls of one message.
    let mut turns: BTreeMap<usize, Vec<&CallRecord>> = BTreeMap::new();
    for record in &transcript.calls {
        turns.entry(record.turn).or_default().push(record);
    }
    for calls in turns.values() {
        let kind = match calls.len() {
            1 => "one call in a message",
            _ if calls.iter().any(|c| c.call.name == "bash") => "sequential batch",
            _ => "parallel batch",
        };
        add(LOOP, kind);
    }
    for _ in 0..report.retries_avoided {
        add(LOOP, "retry avoided");
    }
    out
}

/// The area of a scenario's MCP server `name` (`server fs`), whose
/// behaviours are its active tools, each called or not.
pub fn server_area(name: &str) -> String {
    format!("server {name}")
}

/// The calls of a scenario to its MCP servers' tools, into `coverage`:
/// `servers` holds each server's active tools (as the model calls them).
/// A call to a server tool with a built-in tool's name (`harness mcp`'s
/// `read`) keeps that tool's behaviours too; the others are counted only
/// in their server's area.
pub fn observe_servers(
    transcript: &Transcript,
    servers: &[(String, Vec<String>)],
    coverage: &mut ScenarioCoverage,
) {
    for (server, tools) in servers {
        let area = coverage.entry(server_area(server)).or_default();
        for record in &transcript.calls {
            if tools.contains(&record.call.name) {
                *area.entry(record.call.name.clone()).or_default() += 1;
            }
        }
        if area.is_empty() {
            coverage.remove(&server_area(server));
        }
        for tool in tools {
            if !CATALOGUE.iter().any(|(known, _)| known == tool) {
                coverage.remove(tool);
            }
        }
    }
}

/// The area and behaviours of one call.
fn classify(record: &CallRecord) -> (&str, Vec<String>) {
    let tool = record.call.name.as_str();
    let result = &record.result;
    let details = result.details.as_ref().unwrap_or(&Value::Null);
    let args = match &record.call.arguments {
        CallArguments::Json(value) => value.clone(),
        CallArguments::Text(text) => serde_json::from_str(text).unwrap_or(Value::Null),
    };
    if details.get("available_tools").is_some() {
        return (LOOP, vec!["unknown or inactive tool".to_owned()]);
    }
    if details.get("raw_arguments").is_some() {
        return (LOOP, vec!["arguments cut off".to_owned()]);
    }
    let mut out: Vec<String> = Vec::new();
    let has = |key: &str| details.get(key).is_some_and(|v| !v.is_null());
    let flag = |key: &str| details.get(key).and_then(Value::as_bool) == Some(true);
    let arg = |key: &str| {
        args.get(key)
            .is_some_and(|v| !v.is_null() && v != &Value::Bool(false))
    };
    let normalised = ["coerced_fields", "ignored_fields"].iter().any(|k| {
        details
            .get(*k)
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
    });
    if normalised {
        out.push("arguments normalised".to_owned());
    }
    truncation(details, &mut out);
    if result.is_error {
        out.extend(error_kind(tool, details, &result.text()));
    } else {
        success(tool, details, &arg, &flag, &has, &mut out);
    }
    if tool == "bash" {
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

/// Truncation kinds from `details.truncation`.
fn truncation(details: &Value, out: &mut Vec<String>) {
    let Some(t) = details.get("truncation") else {
        return;
    };
    let yes = |key: &str| t.get(key).and_then(Value::as_bool) == Some(true);
    if yes("truncated") {
        match t.get("truncated_by").and_then(Value::as_str) {
            Some("lines") => out.push("truncated by lines".to_owned()),
            Some("bytes") => out.push("truncated by bytes".to_owned()),
            _ => {}
        }
    }
    if yes("first_line_exceeds_limit") {
        out.push("first line over the byte cap".to_owned());
    }
    if yes("last_line_partial") {
        out.push("last line cut".to_owned());
    }
}

/// What a successful result of `tool` shows.
fn success(
    tool: &str,
    details: &Value,
    arg: &dyn Fn(&str) -> bool,
    flag: &dyn Fn(&str) -> bool,
    has: &dyn Fn(&str) -> bool,
    out: &mut Vec<String>,
) {
    let count = |key: &str| details.get(key).and_then(Value::as_u64);
    let mut push = |b: &str| out.push(b.to_owned());
    match tool {
        "read" => {
            if flag("omitted") {
                push(
                    match details.get("omitted_reason").and_then(Value::as_str) {
                        Some("not_converted") => "image omitted (not converted)",
                        Some("not_resized") => "image omitted (not resized)",
                        _ => "image omitted (file too large)",
                    },
                );
            } else if has("mime_type") {
                push("image");
                if has("converted_from") {
                    push("image converted (BMP to PNG)");
                }
                if has("resized_to") {
                    push("image resized");
                }
            } else {
                push("text");
            }
            if arg("offset") {
                push("offset");
            }
            if arg("limit") {
                push("limit");
            }
        }
        "edit" => push(if flag("fuzzy") {
            "fuzzy match"
        } else {
            "exact match"
        }),
        "write" => push(if flag("created") {
            "created"
        } else {
            "overwritten"
        }),
        "grep" => {
            push(if count("matches") == Some(0) {
                "no matches"
            } else {
                "matches"
            });
            if has("match_limit_reached") {
                push("match limit reached");
            }
            if flag("lines_truncated") {
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
            push(if count("results") == Some(0) {
                "no results"
            } else {
                "results"
            });
            if has("result_limit_reached") {
                push("result limit reached");
            }
        }
        "ls" => {
            push(if count("entries") == Some(0) {
                "empty directory"
            } else {
                "entries"
            });
            if has("entry_limit_reached") {
                push("entry limit reached");
            }
        }
        _ => {}
    }
    if tool == "edit" && details.get("line_ending").and_then(Value::as_str) == Some("crlf") {
        out.push("CRLF file".to_owned());
    }
}

/// bash's outcome, on success and error alike.
fn bash(details: &Value, out: &mut Vec<String>) {
    let yes = |key: &str| details.get(key).and_then(Value::as_bool) == Some(true);
    match details.get("exit_code").and_then(Value::as_i64) {
        Some(0) => out.push("exit code 0".to_owned()),
        Some(_) => out.push("exit code non-zero".to_owned()),
        None => {}
    }
    if details.get("signal").is_some_and(|v| !v.is_null()) && !yes("timed_out") && !yes("cancelled")
    {
        out.push("killed by a signal".to_owned());
    }
    for (key, name) in [
        ("timed_out", "timeout"),
        ("cancelled", "cancelled"),
        ("cleaned", "output cleaned"),
        ("full_output_truncated", "full output log capped"),
    ] {
        if yes(key) {
            out.push(name.to_owned());
        }
    }
}

/// Whether an error text is of one kind.
type TextTest = fn(&str) -> bool;

/// The behaviour names of `details.error_class` (the tool layer's
/// classes of file-system and process errors).
const ERROR_CLASSES: &[(&str, &str)] = &[
    ("permission_denied", "permission denied"),
    ("not_found", "path not found"),
    ("is_a_directory", "a directory"),
    ("not_a_directory", "not a directory"),
    ("disk_full", "disk full"),
    ("read_only", "read-only file system"),
    ("io_error", "I/O error"),
    ("busy", "busy"),
    ("already_exists", "already exists"),
    ("too_many_open_files", "too many open files"),
    ("name_too_long", "name too long"),
    ("invalid_name", "invalid file name"),
    ("temporarily_unavailable", "temporarily unavailable"),
    ("interrupted", "interrupted"),
    ("cross_device", "across file systems"),
    ("symlink_loop", "symlink loop"),
    ("too_large", "too large"),
    ("out_of_memory", "out of memory"),
    ("stale_handle", "stale file handle"),
    ("no_device", "no device"),
    ("invalid", "invalid request"),
    ("not_executable", "not executable"),
    ("timed_out", "timed out"),
    ("connection", "connection lost"),
    ("not_regular", "not a regular file"),
    ("outside_workspace", "outside the workspace"),
    ("hard_linked", "hard-linked file in place"),
    ("other", "other I/O error"),
];

/// The behaviour names of edit's `details.error`.
const EDIT_ERRORS: &[(&str, &str)] = &[
    ("not_found", "old text not found"),
    ("duplicate", "old text found more than once"),
    ("overlap", "edits overlap"),
    ("no_change", "no change"),
    ("empty_old_text", "empty old text"),
    ("whitespace_only_old_text", "whitespace-only old text"),
];

fn named<'a>(table: &[(&str, &'a str)], key: &str) -> Option<&'a str> {
    table.iter().find(|(k, _)| *k == key).map(|(_, name)| *name)
}

/// The kind of an error result: from `details` where they say (the
/// error's class, edit's match error), else from the first words of the
/// text (docs/tools.md words every error). bash's errors are told by their
/// outcome (see [`bash`]), except a command that could not start.
fn error_kind(tool: &str, details: &Value, text: &str) -> Option<String> {
    let kind = |k: &str| Some(format!("error: {k}"));
    if details.get("validation_errors").is_some() {
        return kind("invalid arguments");
    }
    let class = details.get("error_class").and_then(Value::as_str);
    if tool == "bash" {
        return class.and_then(|_| kind("command could not start"));
    }
    if tool == "edit"
        && let Some(k) = details.get("error").and_then(Value::as_str)
    {
        return kind(named(EDIT_ERRORS, k).unwrap_or(k));
    }
    if let Some(class) = class {
        return kind(named(ERROR_CLASSES, class).unwrap_or(class));
    }
    if details.get("binary").is_some() {
        return kind("binary file");
    }
    if details.get("timed_out").and_then(Value::as_bool) == Some(true) {
        return kind("timeout");
    }
    let kinds: [(TextTest, &str); 10] = [
        (
            |t| t.contains("is outside the workspace"),
            "outside the workspace",
        ),
        (
            |t| t.starts_with("File not found") || t.starts_with("Path not found"),
            "path not found",
        ),
        (|t| t.contains(": it is a directory"), "a directory"),
        (
            |t| t.contains("it is not a regular file"),
            "not a regular file",
        ),
        (|t| t.starts_with("Not a directory"), "not a directory"),
        (
            |t| t.contains("is beyond the end of"),
            "offset beyond the end",
        ),
        (
            |t| t.starts_with("Invalid regular expression"),
            "invalid regex",
        ),
        (|t| t.starts_with("Invalid glob pattern"), "invalid glob"),
        (|t| t.contains("not valid UTF-8"), "not UTF-8"),
        (|t| t.starts_with("Edit tool input is invalid"), "no edits"),
    ];
    let found = kinds.iter().find(|(test, _)| test(text));
    kind(found.map_or("other", |(_, k)| k))
}

/// How one behaviour fared over a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BehaviourCoverage {
    /// The behaviour (`truncated by lines`, `error: old text not found` …).
    pub behaviour: String,
    /// Calls that showed it.
    pub calls: u64,
    /// Scenarios with at least one such call.
    pub scenarios: u64,
    /// Whether it is in the catalogue (`false`: seen, but not a behaviour
    /// the harness lists, such as `error: other`).
    pub known: bool,
}

/// One area's coverage: a tool, or `loop`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AreaCoverage {
    /// The tool's name, or `loop`.
    pub area: String,
    /// Behaviours in the catalogue.
    pub known: usize,
    /// Of those, how many some call showed.
    pub exercised: usize,
    /// Every catalogued behaviour in catalogue order (`calls: 0` when
    /// none showed it), then the others seen, by name.
    pub behaviours: Vec<BehaviourCoverage>,
    /// The catalogued behaviours no call showed, in catalogue order.
    pub not_exercised: Vec<String>,
}

/// The coverage of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Coverage {
    /// Scenarios whose calls were classified (those that ran with
    /// `--coverage`).
    pub scenarios: usize,
    /// Catalogued behaviours, over every area.
    pub known: usize,
    /// Of those, how many some call showed.
    pub exercised: usize,
    /// Each area, tools in prompt order (read, bash, edit, write, grep,
    /// find, ls), then `loop`, then any other tool name called.
    pub areas: Vec<AreaCoverage>,
}

/// The coverage of a run; `None` when no scenario recorded any (the run
/// was not asked for it).
pub fn summarize(summary: &RunSummary) -> Option<Coverage> {
    let recorded: Vec<&ScenarioCoverage> = summary
        .scenarios
        .iter()
        .filter_map(|s| s.coverage.as_ref())
        .collect();
    if recorded.is_empty() {
        return None;
    }
    // (calls, scenarios) by area and behaviour.
    let mut seen: BTreeMap<&str, BTreeMap<&str, (u64, u64)>> = BTreeMap::new();
    for scenario in &recorded {
        for (area, behaviours) in *scenario {
            for (behaviour, calls) in behaviours {
                let entry = seen
                    .entry(area.as_str())
                    .or_default()
                    .entry(behaviour.as_str())
                    .or_default();
                entry.0 = entry.0.saturating_add(*calls);
                entry.1 += 1;
            }
        }
    }
    let mut areas = Vec::new();
    for (area, known) in CATALOGUE {
        areas.push(area_coverage(
            area,
            known,
            seen.remove(area).unwrap_or_default(),
        ));
    }
    // Each MCP server's active tools, in the order the scenarios list them.
    let mut servers: Vec<(String, Vec<&str>)> = Vec::new();
    for scenario in summary.scenarios.iter().filter(|s| s.coverage.is_some()) {
        for server in &scenario.servers {
            let area = server_area(&server.name);
            let at = match servers.iter().position(|(a, _)| *a == area) {
                Some(at) => at,
                None => {
                    servers.push((area, Vec::new()));
                    servers.len() - 1
                }
            };
            for tool in &server.tools {
                if !servers[at].1.contains(&tool.as_str()) {
                    servers[at].1.push(tool);
                }
            }
        }
    }
    for (area, tools) in &servers {
        let seen_here = seen.remove(area.as_str()).unwrap_or_default();
        areas.push(area_coverage(area, tools, seen_here));
    }
    for (area, rest) in seen {
        areas.push(area_coverage(area, &[], rest));
    }
    Some(Coverage {
        scenarios: recorded.len(),
        known: areas.iter().map(|a| a.known).sum(),
        exercised: areas.iter().map(|a| a.exercised).sum(),
        areas,
    })
}

fn area_coverage(area: &str, known: &[&str], mut seen: BTreeMap<&str, (u64, u64)>) -> AreaCoverage {
    let mut behaviours = Vec::new();
    let mut not_exercised = Vec::new();
    for name in known {
        let (calls, scenarios) = seen.remove(*name).unwrap_or_default();
        if calls == 0 {
            not_exercised.push((*name).to_owned());
        }
        behaviours.push(BehaviourCoverage {
            behaviour: (*name).to_owned(),
            calls,
            scenarios,
            known: true,
        });
    }
    for (name, (calls, scenarios)) in seen {
        behaviours.push(BehaviourCoverage {
            behaviour: name.to_owned(),
            calls,
            scenarios,
            known: false,
        });
    }
    AreaCoverage {
        area: area.to_owned(),
        known: known.len(),
        exercised: known.len() - not_exercised.len(),
        behaviours,
        not_exercised,
    }
}

#[cfg(test)]
#[path = "coverage_tests.rs"]
mod tests;
