//! Loading scenario files: YAML parsing with file, line and column, and
//! the validation that turns a [`ScenarioDoc`] into a runnable [`Scenario`]
//! (a faux script plus checks).
//!
//! Every problem is collected, not just the first, each with where it is
//! and what to change: YAML syntax, unknown keys (with a "did you mean"),
//! wrong types, unknown tools, `${var}` used before it is captured, bad
//! regexes, missing fixtures, workspace paths that escape.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

use base64::Engine;
use regex::Regex;
use serde::Deserialize;

use crate::agent::DEFAULT_SYSTEM_PROMPT;
use crate::agent::FauxArgs;
use crate::agent::FauxCall;
use crate::agent::FauxScript;
use crate::agent::FauxStep;
use crate::agent::faux::Capture;
use crate::tools::ALL_TOOL_NAMES;
use crate::tools::Limits;
use crate::tools::Preset;

use super::model::CallExpect;
use super::model::CallSpec;
use super::model::ErrorExpect;
use super::model::FileExpect;
use super::model::FileObject;
use super::model::FileSpec;
use super::model::LimitsSpec;
use super::model::RunExpect;
use super::model::ScenarioDoc;
use super::model::StepSpec;
use super::model::SuiteDoc;
use super::model::ToolsSpec;
use super::model::WorkspaceSpec;

/// The name of the suite file.
pub const SUITE_FILE: &str = "harness.yaml";
/// Seconds a scenario may run when nothing else is configured.
pub const DEFAULT_TIMEOUT_SECS: f64 = 60.0;

/// A problem in a scenario or suite file, with where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong and what to change.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.path.display(),
            self.line,
            self.column,
            self.message
        )
    }
}

impl std::error::Error for ScenarioError {}

impl ScenarioError {
    /// A problem with a whole file (or path), placed at its start.
    pub fn at_start(path: &Path, message: impl Into<String>) -> Self {
        Self {
            path: path.to_path_buf(),
            line: 1,
            column: 1,
            message: message.into(),
        }
    }
}

/// A loaded `harness.yaml`.
#[derive(Clone, Debug, Default)]
pub struct Suite {
    /// The directory holding the suite file (`None`: no suite file).
    pub dir: Option<PathBuf>,
    /// Its contents.
    pub doc: SuiteDoc,
}

impl Suite {
    /// Loads a suite file.
    pub fn load(path: &Path) -> Result<Self, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|err| {
            ScenarioError::at_start(path, format!("cannot read the suite file: {err}"))
        })?;
        let doc: Option<SuiteDoc> =
            serde_yaml::from_str(&text).map_err(|err| yaml_error(path, &err))?;
        let suite = Self {
            dir: path.parent().map(Path::to_path_buf),
            doc: doc.unwrap_or_default(),
        };
        let locator = Locator::new(&text, 0..text.len());
        let mut problems = Vec::new();
        if let Some(tools) = &suite.doc.tools {
            check_tools(tools, &locator, &mut problems);
        }
        if let Some(limits) = &suite.doc.limits {
            check_limits(limits, &locator, &mut problems);
        }
        if let Some(timeout) = suite.doc.timeout
            && !(timeout.is_finite() && timeout > 0.0)
        {
            problems
                .push(locator.problem("timeout", "timeout must be a positive number of seconds"));
        }
        if let Some(problem) = problems.into_iter().next() {
            return Err(problem.into_error(path));
        }
        Ok(suite)
    }

    /// The fixtures root: the suite's `fixtures` key (relative to the suite
    /// file), else `fixtures/` beside the suite file, else `fixtures/` in
    /// the current directory.
    pub fn fixtures_root(&self) -> PathBuf {
        match (&self.dir, &self.doc.fixtures) {
            (Some(dir), Some(rel)) => dir.join(rel),
            (Some(dir), None) => dir.join("fixtures"),
            (None, Some(rel)) => PathBuf::from(rel),
            (None, None) => PathBuf::from("fixtures"),
        }
    }
}

/// What the temporary workspace is built from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkspacePlan {
    /// A fixture directory to copy first.
    pub fixture: Option<PathBuf>,
    /// Files to create, by relative path.
    pub files: Vec<(String, FileContent)>,
    /// Run `git init`.
    pub git: bool,
}

/// One file to create.
#[derive(Clone, Debug, PartialEq)]
pub enum FileContent {
    /// Bytes (BOM already added), with an optional mode.
    Bytes {
        /// The bytes.
        data: Vec<u8>,
        /// Permission bits.
        mode: Option<u32>,
    },
    /// A symlink.
    Symlink(String),
    /// An empty directory, with an optional mode.
    Dir(Option<u32>),
}

/// The checks of one call, with compiled regexes.
#[derive(Clone, Debug)]
pub struct CallCheck {
    /// Where the call is, for messages: `step 2 (grep)` or
    /// `step 2 (grep), retry 1`.
    pub label: String,
    /// Whether the call is a `retry:` of another, sent only when the call
    /// before it failed; a retry that was never sent is not a failure.
    pub retry: bool,
    /// The checks as written.
    pub expect: CallExpect,
    /// `error: REGEX`, compiled.
    pub error_regex: Option<Regex>,
    /// `matches`, compiled.
    pub matches: Option<Regex>,
}

/// The run checks, with compiled regexes.
#[derive(Clone, Debug, Default)]
pub struct RunCheck {
    /// As written.
    pub expect: RunExpect,
    /// Compiled `matches` of `files`, by path.
    pub file_regexes: BTreeMap<String, Regex>,
}

/// A validated scenario, ready to run.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Unique name.
    pub name: String,
    /// The file it came from.
    pub file: PathBuf,
    /// Which document of the file (0-based).
    pub document: usize,
    /// Free text.
    pub description: Option<String>,
    /// Tags.
    pub tags: Vec<String>,
    /// Active tool names, in order.
    pub tools: Vec<String>,
    /// Limits in force.
    pub limits: Limits,
    /// Confinement.
    pub confine: bool,
    /// The system prompt text before the tool section.
    pub system: String,
    /// What the workspace holds.
    pub workspace: WorkspacePlan,
    /// The faux model's script.
    pub script: FauxScript,
    /// Checks by call id.
    pub call_checks: BTreeMap<String, CallCheck>,
    /// Labels by call id (every scripted call, checked or not).
    pub call_labels: BTreeMap<String, String>,
    /// Run checks.
    pub run_check: RunCheck,
    /// Why it is skipped.
    pub skip: Option<String>,
    /// The snapshot file beside the scenario.
    pub snapshot_file: PathBuf,
    /// Snapshot key prefix (files with several scenarios).
    pub snapshot_prefix: Option<String>,
    /// Time budget.
    pub timeout: Duration,
    /// The suite's tokenizer, if set.
    pub tokenizer: Option<String>,
}

/// Loads every scenario of a file: the valid ones, and every problem of
/// the others, each located. A valid document still runs when another
/// document of the same file is broken.
pub fn load_file(path: &Path, suite: &Suite) -> (Vec<Scenario>, Vec<ScenarioError>) {
    match std::fs::read_to_string(path) {
        Ok(text) => load_text(path, &text, suite),
        Err(err) => (
            Vec::new(),
            vec![ScenarioError::at_start(
                path,
                format!("cannot read the scenario file: {err}"),
            )],
        ),
    }
}

/// Loads the scenarios of `text` as if read from `path`.
pub fn load_text(path: &Path, text: &str, suite: &Suite) -> (Vec<Scenario>, Vec<ScenarioError>) {
    let ranges = document_ranges(text);
    let mut docs = Vec::new();
    let mut errors = Vec::new();
    let mut last_error: Option<(usize, usize, String)> = None;
    for (index, document) in serde_yaml::Deserializer::from_str(text).enumerate() {
        match Option::<ScenarioDoc>::deserialize(document) {
            Ok(Some(doc)) => docs.push((index, doc)),
            Ok(None) => {}
            Err(err) => {
                let located = yaml_error(path, &err);
                // After a syntax error the stream repeats that error for ever:
                // stop at a syntax error, or at the same error twice.
                let key = (located.line, located.column, located.message.clone());
                let repeated = last_error.as_ref() == Some(&key);
                if !repeated {
                    errors.push(located);
                }
                if repeated || is_syntax_error(&err) {
                    break;
                }
                last_error = Some(key);
            }
        }
    }
    let multi = docs.len() + errors.len() > 1;
    let mut scenarios = Vec::new();
    for (index, doc) in docs {
        let range = ranges.get(index).cloned().unwrap_or(0..text.len());
        let locator = Locator::new(text, range);
        match validate(path, index, multi, doc, suite, &locator) {
            Ok(scenario) => scenarios.push(scenario),
            Err(problems) => errors.extend(problems.into_iter().map(|p| p.into_error(path))),
        }
    }
    (scenarios, errors)
}

fn is_syntax_error(err: &serde_yaml::Error) -> bool {
    let text = err.to_string();
    text.contains("while parsing")
        || text.contains("while scanning")
        || text.contains("did not find expected")
}

/// Byte ranges of the documents of a multi-document file.
fn document_ranges(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut starts = vec![0];
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\r', '\n']);
        if offset > 0 && (bare == "---" || bare.starts_with("--- ")) {
            starts.push(offset);
        }
        offset += line.len();
    }
    let mut ranges = Vec::new();
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(text.len());
        ranges.push(start..end);
    }
    ranges
}

/// Turns a serde_yaml error into a located error with a hint.
fn yaml_error(path: &Path, err: &serde_yaml::Error) -> ScenarioError {
    let (line, column) = err.location().map_or((1, 1), |l| (l.line(), l.column()));
    let full = err.to_string();
    // serde_yaml appends " at line L column C"; we print the location first
    // and keep what follows it (", while parsing a flow mapping at …").
    let mut message = match full.find(" at line ") {
        Some(cut) => {
            let rest = &full[cut + 9..];
            let after = rest.find(", ").map(|i| &rest[i..]).unwrap_or("");
            format!("{}{after}", &full[..cut])
        }
        None => full.clone(),
    };
    if is_syntax_error(err) {
        message = format!(
            "YAML syntax error: {message}; check the brackets, quotes and indentation around here"
        );
    }
    if let Some(hint) = unknown_key_hint(&message) {
        message.push_str(&hint);
    }
    ScenarioError {
        path: path.to_path_buf(),
        line,
        column,
        message,
    }
}

/// For `unknown field `x`, expected one of `a`, `b``: ", did you mean `a`?".
fn unknown_key_hint(message: &str) -> Option<String> {
    let rest = message
        .split_once("unknown field `")
        .or_else(|| message.split_once("unknown variant `"))?
        .1;
    let (unknown, expected) = rest.split_once('`')?;
    let candidates: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    closest(unknown, candidates.iter().copied()).map(|best| format!("; did you mean `{best}`?"))
}

/// The candidate closest to `wanted`, if any is close.
pub fn closest<'a>(wanted: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let mut best: Option<(f64, &str)> = None;
    for candidate in candidates {
        let distance = strsim::damerau_levenshtein(wanted, candidate);
        let score = strsim::jaro_winkler(wanted, candidate);
        let close = distance <= 2.max(wanted.len() / 3) || score >= 0.85;
        if close && best.is_none_or(|(s, _)| score > s) {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// A problem found by validation, located by searching the document text.
struct Problem {
    line: usize,
    column: usize,
    message: String,
}

impl Problem {
    fn into_error(self, path: &Path) -> ScenarioError {
        ScenarioError {
            path: path.to_path_buf(),
            line: self.line,
            column: self.column,
            message: self.message,
        }
    }
}

/// Finds where a key or value is written inside one document, to locate
/// problems that serde cannot (it reports no positions for valid YAML).
struct Locator<'a> {
    text: &'a str,
    range: std::ops::Range<usize>,
}

impl<'a> Locator<'a> {
    fn new(text: &'a str, range: std::ops::Range<usize>) -> Self {
        Self { text, range }
    }

    fn position(&self, offset: usize) -> (usize, usize) {
        let before = &self.text[..offset];
        let line = before.matches('\n').count() + 1;
        let column = before.rfind('\n').map_or(offset, |nl| offset - nl - 1) + 1;
        (line, column)
    }

    /// The first occurrence of `needle` in the document (or its start).
    fn find(&self, needle: &str) -> (usize, usize) {
        self.find_after(needle, 0)
            .unwrap_or_else(|| self.position(self.range.start))
    }

    fn find_after(&self, needle: &str, from: usize) -> Option<(usize, usize)> {
        let doc = &self.text[self.range.clone()];
        let found = doc.get(from..)?.find(needle)?;
        Some(self.position(self.range.start + from + found))
    }

    fn problem(&self, needle: &str, message: impl Into<String>) -> Problem {
        let (line, column) = self.find(needle);
        Problem {
            line,
            column,
            message: message.into(),
        }
    }
}

fn check_tools(tools: &ToolsSpec, locator: &Locator<'_>, problems: &mut Vec<Problem>) {
    match tools {
        ToolsSpec::Preset(name) => {
            if Preset::parse(name).is_none() {
                let hint = closest(name, ["coding", "readonly", "all"].into_iter())
                    .map(|c| format!("; did you mean `{c}`?"))
                    .unwrap_or_default();
                problems.push(locator.problem(
                    name,
                    format!(
                        "unknown tool preset `{name}`: use coding, readonly, all or a list of tool \
                         names{hint}"
                    ),
                ));
            }
        }
        ToolsSpec::List(names) => {
            for name in names {
                if !ALL_TOOL_NAMES.contains(&name.as_str()) {
                    problems.push(locator.problem(name, unknown_tool_message(name)));
                }
            }
        }
    }
}

fn unknown_tool_message(name: &str) -> String {
    let hint = closest(name, ALL_TOOL_NAMES.into_iter())
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default();
    format!(
        "unknown tool `{name}` (the tools are {}){hint}",
        ALL_TOOL_NAMES.join(", ")
    )
}

fn tool_names(tools: &ToolsSpec) -> Vec<String> {
    match tools {
        ToolsSpec::Preset(name) => Preset::parse(name)
            .unwrap_or(Preset::All)
            .names()
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
        ToolsSpec::List(names) => names.clone(),
    }
}

fn check_limits(limits: &LimitsSpec, locator: &Locator<'_>, problems: &mut Vec<Problem>) {
    let positive = [
        ("max_lines", limits.max_lines),
        ("max_bytes", limits.max_bytes),
        ("grep_max_line", limits.grep_max_line),
        ("grep_limit", limits.grep_limit),
        ("find_limit", limits.find_limit),
        ("ls_limit", limits.ls_limit),
    ];
    for (key, value) in positive {
        if value == Some(0) {
            problems.push(locator.problem(key, format!("limits.{key} must be at least 1")));
        }
    }
    if let Some(t) = limits.bash_timeout
        && !(t.is_finite() && t > 0.0)
    {
        problems.push(locator.problem(
            "bash_timeout",
            "limits.bash_timeout must be a positive number of seconds",
        ));
    }
}

fn apply_limits(limits: &mut Limits, spec: &LimitsSpec) {
    let pairs = [
        (&mut limits.max_lines, spec.max_lines),
        (&mut limits.max_bytes, spec.max_bytes),
        (&mut limits.grep_max_line, spec.grep_max_line),
        (&mut limits.grep_limit, spec.grep_limit),
        (&mut limits.find_limit, spec.find_limit),
        (&mut limits.ls_limit, spec.ls_limit),
    ];
    for (slot, value) in pairs {
        if let Some(value) = value {
            *slot = value;
        }
    }
    if spec.bash_timeout.is_some() {
        limits.bash_timeout = spec.bash_timeout;
    }
}

/// `${name}` references in a string.
fn var_refs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        match after.find('}') {
            Some(end) => {
                out.push(after[..end].to_owned());
                rest = &after[end + 1..];
            }
            None => break,
        }
    }
    out
}

fn value_refs(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) => out.extend(var_refs(s)),
        serde_json::Value::Array(items) => items.iter().for_each(|v| value_refs(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| value_refs(v, out)),
        _ => {}
    }
}

fn parse_mode(text: &str) -> Option<u32> {
    if text.is_empty() || text.len() > 4 {
        return None;
    }
    u32::from_str_radix(text, 8).ok()
}

/// The state of validating one document.
struct Validator<'a> {
    locator: &'a Locator<'a>,
    problems: Vec<Problem>,
    known_vars: BTreeSet<String>,
    ids: BTreeSet<String>,
    call_checks: BTreeMap<String, CallCheck>,
    call_labels: BTreeMap<String, String>,
}

impl<'a> Validator<'a> {
    fn new(locator: &'a Locator<'a>) -> Self {
        Self {
            locator,
            problems: Vec::new(),
            known_vars: BTreeSet::from(["workspace".to_owned()]),
            ids: BTreeSet::new(),
            call_checks: BTreeMap::new(),
            call_labels: BTreeMap::new(),
        }
    }

    fn problem(&mut self, needle: &str, message: impl Into<String>) {
        let problem = self.locator.problem(needle, message);
        self.problems.push(problem);
    }

    fn compile(&mut self, needle: &str, what: &str, pattern: &str) -> Option<Regex> {
        match Regex::new(pattern) {
            Ok(regex) => Some(regex),
            Err(err) => {
                self.problem(needle, format!("invalid regex in {what}: {err}"));
                None
            }
        }
    }

    /// The active tools and the limits in force: the document's, else the
    /// suite's, else the defaults.
    fn tools_and_limits(&mut self, doc: &ScenarioDoc, suite: &Suite) -> (Vec<String>, Limits) {
        if let Some(tools) = &doc.tools {
            check_tools(tools, self.locator, &mut self.problems);
        }
        let tools_spec = doc
            .tools
            .clone()
            .or_else(|| suite.doc.tools.clone())
            .unwrap_or(ToolsSpec::Preset("all".to_owned()));
        let mut limits = Limits::default();
        if let Some(spec) = &suite.doc.limits {
            apply_limits(&mut limits, spec);
        }
        if let Some(spec) = &doc.limits {
            check_limits(spec, self.locator, &mut self.problems);
            apply_limits(&mut limits, spec);
        }
        (tool_names(&tools_spec), limits)
    }

    /// The faux model's script, step by step.
    fn script(&mut self, model: &[StepSpec]) -> Vec<FauxStep> {
        if model.is_empty() {
            self.problem(
                "model",
                "`model` has no steps; give at least one `call`, `parallel` or `say` step",
            );
        }
        let mut steps = Vec::new();
        for (i, step) in model.iter().enumerate() {
            let n = i + 1;
            let kinds = [
                step.call.is_some(),
                step.parallel.is_some(),
                step.say.is_some(),
            ]
            .iter()
            .filter(|k| **k)
            .count();
            if kinds != 1 {
                self.problem(
                    "model",
                    format!(
                        "step {n} must have exactly one of `call`, `parallel` or `say` (it has {kinds})"
                    ),
                );
                continue;
            }
            if let Some(tool) = &step.call {
                steps.push(self.call_step(n, step, tool));
            } else if let Some(calls) = &step.parallel {
                steps.push(self.parallel_step(n, step, calls));
            } else if let Some(text) = &step.say {
                steps.push(self.say_step(n, step, text, n == model.len()));
            }
        }
        steps
    }

    /// `call: TOOL`: a message with one call.
    fn call_step(&mut self, n: usize, step: &StepSpec, tool: &str) -> FauxStep {
        let spec = CallSpec {
            call: tool.to_owned(),
            id: step.id.clone(),
            args: step.args.clone(),
            raw_args: step.raw_args.clone(),
            expect: step.expect.clone(),
            capture: step.capture.clone(),
            retry: step.retry.clone(),
        };
        let call = self.call(
            &spec,
            format!("call_{n}_1"),
            format!("step {n} ({tool})"),
            &BTreeSet::new(),
            false,
        );
        captured_names(&call, &mut self.known_vars);
        FauxStep::Calls(vec![call])
    }

    /// `parallel: [...]`: a message with several calls, none of which may
    /// use what another captures.
    fn parallel_step(&mut self, n: usize, step: &StepSpec, calls: &[CallSpec]) -> FauxStep {
        let stray = step.id.is_some()
            || step.args.is_some()
            || step.raw_args.is_some()
            || step.expect.is_some()
            || step.capture.is_some()
            || step.retry.is_some();
        if stray {
            self.problem(
                "parallel",
                format!(
                    "step {n}: `id`, `args`, `raw_args`, `expect`, `capture` and `retry` belong \
                     to each call inside `parallel`, not to the step"
                ),
            );
        }
        if calls.is_empty() {
            self.problem("parallel", format!("step {n}: `parallel` has no calls"));
        }
        let batch: Vec<FauxCall> = calls
            .iter()
            .enumerate()
            .map(|(j, spec)| {
                self.call(
                    spec,
                    format!("call_{n}_{}", j + 1),
                    format!("step {n}, call {} ({})", j + 1, spec.call),
                    &BTreeSet::new(),
                    false,
                )
            })
            .collect();
        for call in &batch {
            captured_names(call, &mut self.known_vars);
        }
        FauxStep::Calls(batch)
    }

    /// `say: TEXT`: the final message.
    fn say_step(&mut self, n: usize, step: &StepSpec, text: &str, last: bool) -> FauxStep {
        if step.args.is_some() || step.expect.is_some() || step.retry.is_some() {
            self.problem(
                "say",
                format!("step {n}: a `say` step takes no `args`, `expect` or `retry`"),
            );
        }
        if !last {
            self.problem(
                "say",
                format!(
                    "step {n}: the run ends after `say`, so the steps after it would never run"
                ),
            );
        }
        FauxStep::Say(text.to_owned())
    }

    /// Validates one call and returns its faux form; `retry`: it is a
    /// `retry:` of another call.
    fn call(
        &mut self,
        spec: &CallSpec,
        default_id: String,
        label: String,
        extra_vars: &BTreeSet<String>,
        retry: bool,
    ) -> FauxCall {
        let id = spec.id.clone().unwrap_or(default_id);
        if !self.ids.insert(id.clone()) {
            self.problem(
                &id,
                format!("call id `{id}` is used twice; give each call its own `id`"),
            );
        }
        let deliberate_error = spec.expect.as_ref().is_some_and(|e| {
            matches!(
                e.error,
                Some(ErrorExpect::Flag(true) | ErrorExpect::Matches(_))
            )
        });
        if !ALL_TOOL_NAMES.contains(&spec.call.as_str()) && !deliberate_error {
            self.problem(
                &format!("call: {}", spec.call),
                format!(
                    "{} (to test the error for an unknown tool on purpose, add `expect: {{ error: \
                     true }}` to the call)",
                    unknown_tool_message(&spec.call)
                ),
            );
        }
        let args = self.arguments(spec, &label, extra_vars);
        let captures = self.captures(spec);
        if let Some(expect) = &spec.expect {
            let check = self.call_check(expect, &label, retry);
            self.call_checks.insert(id.clone(), check);
        }
        self.call_labels.insert(id.clone(), label.clone());
        let retries = self.retries(spec, &id, &label, extra_vars, &captures);
        FauxCall {
            id,
            name: spec.call.clone(),
            args,
            captures,
            retry: retries,
        }
    }

    /// `args` or `raw_args`, every `${var}` in them known by now.
    fn arguments(
        &mut self,
        spec: &CallSpec,
        label: &str,
        extra_vars: &BTreeSet<String>,
    ) -> FauxArgs {
        let args = match (&spec.args, &spec.raw_args) {
            (Some(_), Some(_)) => {
                self.problem(
                    "raw_args",
                    format!("{label}: give either `args` or `raw_args`, not both"),
                );
                FauxArgs::Json(serde_json::json!({}))
            }
            (_, Some(raw)) => FauxArgs::Raw(raw.clone()),
            (Some(args), None) => FauxArgs::Json(args.clone()),
            (None, None) => FauxArgs::Json(serde_json::json!({})),
        };
        let mut refs = Vec::new();
        match &args {
            FauxArgs::Json(v) => value_refs(v, &mut refs),
            FauxArgs::Raw(t) => refs.extend(var_refs(t)),
        }
        for name in refs {
            if !self.known_vars.contains(&name) && !extra_vars.contains(&name) {
                let known = self
                    .known_vars
                    .iter()
                    .chain(extra_vars)
                    .map(|v| format!("${{{v}}}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                self.problem(
                    &format!("${{{name}}}"),
                    format!(
                        "{label}: `${{{name}}}` is used before it is captured; capture it in an \
                         earlier step with `capture: {{ {name}: REGEX }}` (known here: {known})"
                    ),
                );
            }
        }
        args
    }

    /// `capture: { NAME: REGEX }`, compiled.
    fn captures(&mut self, spec: &CallSpec) -> Vec<Capture> {
        let mut captures = Vec::new();
        for (name, pattern) in spec.capture.iter().flatten() {
            if let Some(regex) = self.compile(pattern, &format!("capture `{name}`"), pattern) {
                captures.push(Capture {
                    name: name.clone(),
                    regex,
                });
            }
        }
        captures
    }

    /// The checks of one call, with their regexes compiled.
    fn call_check(&mut self, expect: &CallExpect, label: &str, retry: bool) -> CallCheck {
        let error_regex = match &expect.error {
            Some(ErrorExpect::Matches(p)) => self.compile(p, "expect.error", p),
            _ => None,
        };
        let matches = match &expect.matches {
            Some(p) => self.compile(p, "expect.matches", p),
            None => None,
        };
        if expect.ok == Some(true)
            && matches!(
                expect.error,
                Some(ErrorExpect::Flag(true) | ErrorExpect::Matches(_))
            )
        {
            self.problem(
                "ok: true",
                format!("{label}: `ok: true` and `error` contradict each other; keep one"),
            );
        }
        CallCheck {
            label: label.to_owned(),
            retry,
            expect: expect.clone(),
            error_regex,
            matches,
        }
    }

    /// The `retry:` calls of call `id`; each may use what the calls before
    /// it captured.
    fn retries(
        &mut self,
        spec: &CallSpec,
        id: &str,
        label: &str,
        extra_vars: &BTreeSet<String>,
        captures: &[Capture],
    ) -> Vec<FauxCall> {
        let mut retry_vars = extra_vars.clone();
        retry_vars.extend(captures.iter().map(|c| c.name.clone()));
        let mut retries = Vec::new();
        for (k, retry_spec) in spec.retry.iter().flat_map(|r| r.0.iter()).enumerate() {
            let call = self.call(
                retry_spec,
                format!("{id}_retry{}", k + 1),
                format!("{label}, retry {}", k + 1),
                &retry_vars,
                true,
            );
            retry_vars.extend(call.captures.iter().map(|c| c.name.clone()));
            retries.push(call);
        }
        retries
    }

    /// What the workspace is built from: a fixture and files.
    fn workspace(&mut self, spec: &WorkspaceSpec, suite: &Suite) -> WorkspacePlan {
        let fixture = spec
            .fixture
            .as_ref()
            .and_then(|name| self.fixture(name, suite));
        let mut files = Vec::new();
        for (rel, file) in &spec.files {
            let p = Path::new(rel);
            let bad = rel.is_empty()
                || p.is_absolute()
                || p.components().any(|c| {
                    !matches!(
                        c,
                        std::path::Component::Normal(_) | std::path::Component::CurDir
                    )
                });
            if bad {
                self.problem(
                    rel,
                    format!(
                        "workspace file `{rel}`: paths must be relative and may not contain `..`"
                    ),
                );
                continue;
            }
            match file_content(file) {
                Ok(content) => files.push((rel.clone(), content)),
                Err(message) => self.problem(rel, format!("workspace file `{rel}`: {message}")),
            }
        }
        WorkspacePlan {
            fixture,
            files,
            git: spec.git,
        }
    }

    /// The fixture directory `name` under the suite's fixtures root.
    fn fixture(&mut self, name: &str, suite: &Suite) -> Option<PathBuf> {
        if name.is_empty()
            || Path::new(name)
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            self.problem(
                name,
                format!("fixture `{name}` must be a plain name or relative path without `..`"),
            );
            return None;
        }
        let dir = suite.fixtures_root().join(name);
        if dir.is_dir() {
            return Some(dir);
        }
        self.problem(
            &format!("fixture: {name}"),
            format!(
                "fixture `{name}` not found: looked for the directory {}; set `fixtures:` in \
                 harness.yaml or create it",
                dir.display()
            ),
        );
        None
    }

    /// The run checks, with their regexes compiled.
    fn run_check(&mut self, expect: &RunExpect) -> RunCheck {
        let mut run_check = RunCheck {
            expect: expect.clone(),
            file_regexes: BTreeMap::new(),
        };
        for (rel, file) in &expect.files {
            let FileExpect::Checks(checks) = file else {
                continue;
            };
            if let Some(pattern) = &checks.matches
                && let Some(regex) =
                    self.compile(pattern, &format!("expect.files.{rel}.matches"), pattern)
            {
                run_check.file_regexes.insert(rel.clone(), regex);
            }
            if let Some(mode) = &checks.mode
                && parse_mode(mode).is_none()
            {
                self.problem(
                    mode,
                    format!("expect.files.{rel}.mode `{mode}` is not an octal mode like \"644\""),
                );
            }
        }
        for name in expect.order.iter().flatten() {
            if !ALL_TOOL_NAMES.contains(&name.as_str()) {
                self.problem(
                    name,
                    format!("expect.order: {}", unknown_tool_message(name)),
                );
            }
        }
        run_check
    }
}

fn captured_names(call: &FauxCall, out: &mut BTreeSet<String>) {
    out.extend(call.captures.iter().map(|c| c.name.clone()));
    for retry in &call.retry {
        captured_names(retry, out);
    }
}

fn validate(
    path: &Path,
    index: usize,
    multi: bool,
    doc: ScenarioDoc,
    suite: &Suite,
    locator: &Locator<'_>,
) -> Result<Scenario, Vec<Problem>> {
    let name = doc.name.clone().unwrap_or_else(|| {
        let stem = path.with_extension("");
        if multi {
            format!("{}#{}", stem.display(), index + 1)
        } else {
            stem.display().to_string()
        }
    });
    let mut v = Validator::new(locator);
    if name.contains('\n') {
        v.problem("name", "`name` must be one line");
    }
    let (tools, limits) = v.tools_and_limits(&doc, suite);
    let steps = v.script(&doc.model);
    let workspace = v.workspace(&doc.workspace, suite);
    let run_check = v.run_check(&doc.expect);
    if !v.problems.is_empty() {
        return Err(v.problems);
    }
    let timeout = suite.doc.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS);
    Ok(Scenario {
        snapshot_file: snapshot_path(path),
        snapshot_prefix: multi.then(|| name.clone()),
        name,
        file: path.to_path_buf(),
        document: index,
        description: doc.description,
        tags: doc.tags,
        tools,
        limits,
        confine: doc.confine.unwrap_or(true),
        system: doc
            .system
            .unwrap_or_else(|| DEFAULT_SYSTEM_PROMPT.to_owned()),
        workspace,
        script: FauxScript { steps },
        call_checks: v.call_checks,
        call_labels: v.call_labels,
        run_check,
        skip: doc.skip,
        timeout: Duration::from_secs_f64(timeout),
        tokenizer: suite.doc.tokenizer.clone(),
    })
}

/// `dir/name.yaml` → `dir/name.snap.yaml`.
pub fn snapshot_path(path: &Path) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!("{stem}.snap.yaml"))
}

fn file_content(spec: &FileSpec) -> Result<FileContent, String> {
    let object = match spec {
        FileSpec::Text(text) => {
            return Ok(FileContent::Bytes {
                data: text.clone().into_bytes(),
                mode: None,
            });
        }
        FileSpec::Object(object) => object,
    };
    let FileObject {
        text,
        base64,
        repeat,
        times,
        symlink,
        dir,
        bom,
        mode,
    } = object;
    let kinds = [
        text.is_some(),
        base64.is_some(),
        repeat.is_some(),
        symlink.is_some(),
        dir == &Some(true),
    ];
    if kinds.iter().filter(|k| **k).count() != 1 {
        return Err(
            "give exactly one of `text`, `base64`, `repeat` (+ `times`), `symlink` or `dir: true`"
                .to_owned(),
        );
    }
    let mode = match mode {
        Some(m) => Some(
            parse_mode(m).ok_or_else(|| format!("mode `{m}` is not an octal mode like \"755\""))?,
        ),
        None => None,
    };
    if times.is_some() && repeat.is_none() {
        return Err("`times` only goes with `repeat`".to_owned());
    }
    if bom.is_some() && symlink.is_some() | (dir == &Some(true)) {
        return Err("`bom` only goes with file content".to_owned());
    }
    let prefix: &[u8] = if bom == &Some(true) {
        b"\xEF\xBB\xBF"
    } else {
        b""
    };
    if let Some(target) = symlink {
        if mode.is_some() {
            return Err("a symlink has no `mode`".to_owned());
        }
        return Ok(FileContent::Symlink(target.clone()));
    }
    if dir == &Some(true) {
        return Ok(FileContent::Dir(mode));
    }
    let body = if let Some(text) = text {
        text.clone().into_bytes()
    } else if let Some(encoded) = base64 {
        let cleaned: String = encoded.split_whitespace().collect();
        base64::engine::general_purpose::STANDARD
            .decode(cleaned)
            .map_err(|err| format!("`base64` is not valid base64: {err}"))?
    } else if let Some(template) = repeat {
        let times = times.ok_or("`repeat` needs `times`")?;
        let mut out = String::with_capacity(template.len() * times);
        for n in 1..=times {
            out.push_str(&template.replace("{n}", &n.to_string()));
        }
        out.into_bytes()
    } else {
        Vec::new()
    };
    let mut data = prefix.to_vec();
    data.extend_from_slice(&body);
    Ok(FileContent::Bytes { data, mode })
}

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;
