//! Sends each tool's cases to the server one at a time, each followed by
//! a `ping`, and sorts the answers: a result (`isError` false or true), a
//! JSON-RPC error (invalid params, internal error, another code), no
//! answer within the timeout, the server's exit, an answer that cannot be
//! read, or a server that stopped answering `ping`. After an exit, a
//! timeout that `ping` does not outlive, or a server gone deaf, [`run`]
//! (`harness fuzz`) restarts the server (at most
//! [`Options::max_restarts`] times) and goes on; [`run_on`] (a scenario's
//! `fuzz` step, on a server the scenario's other steps use) stops it and
//! ends there.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;
use std::time::Instant;

use rmcp::model::Tool;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::generate::Case;
use super::generate::cases;
use super::generate::tool_seed;
use crate::mcp::client::McpClient;
use crate::mcp::client::RawAnswer;

/// JSON-RPC's code for invalid params.
pub const INVALID_PARAMS: i32 = -32602;
/// JSON-RPC's code for an internal error.
pub const INTERNAL_ERROR: i32 = -32603;

/// Calls per tool unless asked otherwise.
pub const DEFAULT_CASES: usize = 30;

/// Seconds each call (and the ping after it) may take unless asked
/// otherwise.
pub const DEFAULT_TIMEOUT_SECS: u64 = 10;

/// The most seconds a call (and the ping after it) may be given.
pub const MAX_TIMEOUT_SECS: u64 = 3600;

/// What a fuzz run does.
#[derive(Clone, Debug)]
pub struct Options {
    /// The seed of the generator.
    pub seed: u64,
    /// Cases per tool.
    pub cases: usize,
    /// How long each call (and each ping) may take.
    pub timeout: Duration,
    /// Only these tools (empty: all).
    pub tools: Vec<String>,
    /// The most restarts after the server went down; past them the run
    /// stops.
    pub max_restarts: usize,
}

/// How one call was answered.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// A result with `isError` false (or absent).
    ResultOk,
    /// A result with `isError` true.
    ResultIsError,
    /// JSON-RPC error -32602.
    InvalidParams,
    /// JSON-RPC error -32603.
    InternalError,
    /// Another JSON-RPC error code.
    OtherError,
    /// No answer within the timeout.
    Timeout,
    /// The server exited.
    Crash,
    /// An answer that is not a tool result or cannot be read.
    Malformed,
    /// The call was answered, but the server did not answer `ping` after
    /// it.
    Unresponsive,
}

impl Answer {
    /// Every answer class, in report order.
    pub const ALL: [Answer; 9] = [
        Answer::ResultOk,
        Answer::ResultIsError,
        Answer::InvalidParams,
        Answer::InternalError,
        Answer::OtherError,
        Answer::Timeout,
        Answer::Crash,
        Answer::Malformed,
        Answer::Unresponsive,
    ];

    /// Its name in reports.
    pub fn name(&self) -> &'static str {
        match self {
            Answer::ResultOk => "result_ok",
            Answer::ResultIsError => "result_is_error",
            Answer::InvalidParams => "invalid_params",
            Answer::InternalError => "internal_error",
            Answer::OtherError => "other_error",
            Answer::Timeout => "timeout",
            Answer::Crash => "crash",
            Answer::Malformed => "malformed",
            Answer::Unresponsive => "unresponsive",
        }
    }
}

/// Why a call fails the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// No answer within the timeout.
    Timeout,
    /// The server exited.
    Crash,
    /// The answer was not a tool result, or could not be read.
    Malformed,
    /// The server stopped answering `ping` after the call.
    Unresponsive,
    /// JSON-RPC internal error (-32603) on arguments the schema refuses:
    /// the server did not check its input (it should answer invalid
    /// params, or a result with `isError`).
    InternalErrorOnInvalidInput,
}

impl FailureKind {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            FailureKind::Timeout => "timeout",
            FailureKind::Crash => "crash",
            FailureKind::Malformed => "malformed",
            FailureKind::Unresponsive => "unresponsive",
            FailureKind::InternalErrorOnInvalidInput => "internal error on invalid input",
        }
    }
}

/// One failing call.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Failure {
    /// The tool called.
    pub tool: String,
    /// The case's index among the tool's cases (the seed gives it again).
    pub index: usize,
    /// The case.
    pub case: Case,
    /// Why it fails.
    pub kind: FailureKind,
    /// What the server said or did (an error message, an exit status and
    /// its last stderr lines).
    pub detail: String,
}

/// One tool's tally.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ToolTally {
    /// The tool.
    pub name: String,
    /// Calls sent.
    pub calls: usize,
    /// Answers by class name.
    pub answers: BTreeMap<&'static str, usize>,
}

/// What a fuzz run found.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Report {
    /// Each tool's tally, in the server's order.
    pub tools: Vec<ToolTally>,
    /// Every failing call, in the order sent.
    pub failures: Vec<Failure>,
    /// Internal errors on arguments the schema may accept: listed, not
    /// failures.
    pub internal_errors_on_plausible_input: Vec<Failure>,
    /// Times the server was restarted.
    pub restarts: usize,
    /// Set when the run stopped early: why.
    pub stopped_early: Option<String>,
    /// Tool calls sent.
    pub calls: usize,
    /// Pings sent.
    pub pings: usize,
    /// Wall time of the calls and pings, in milliseconds (not
    /// deterministic).
    pub elapsed_ms: u64,
}

impl Report {
    /// Whether the server passed: no failure, and the run went to its end.
    pub fn passed(&self) -> bool {
        self.failures.is_empty() && self.stopped_early.is_none()
    }
}

/// The tools the run calls, in the server's order, or the names `--tool`
/// gave that the server lacks.
pub fn selected<'a>(tools: &'a [Tool], only: &[String]) -> Result<Vec<&'a Tool>, Vec<String>> {
    let missing: Vec<String> = only
        .iter()
        .filter(|name| !tools.iter().any(|t| t.name.as_ref() == name.as_str()))
        .cloned()
        .collect();
    if !missing.is_empty() {
        return Err(missing);
    }
    Ok(tools
        .iter()
        .filter(|t| only.is_empty() || only.iter().any(|n| n.as_str() == t.name.as_ref()))
        .collect())
}

/// Sorts the answer to a `tools/call`.
fn sort(answer: &RawAnswer) -> (Answer, String) {
    match answer {
        RawAnswer::Result(value) => match value.get("content") {
            Some(Value::Array(_)) => {
                if value.get("isError") == Some(&Value::Bool(true)) {
                    (Answer::ResultIsError, String::new())
                } else {
                    (Answer::ResultOk, String::new())
                }
            }
            _ => (
                Answer::Malformed,
                "the answer's result has no `content` list, so it is not a tool result".to_owned(),
            ),
        },
        RawAnswer::Error { code, message } => {
            let class = match *code {
                INVALID_PARAMS => Answer::InvalidParams,
                INTERNAL_ERROR => Answer::InternalError,
                _ => Answer::OtherError,
            };
            (class, format!("JSON-RPC error {code}: {message}"))
        }
        RawAnswer::Unreadable(why) => (Answer::Malformed, why.clone()),
        RawAnswer::Timeout => (Answer::Timeout, String::new()),
        RawAnswer::Exited {
            status,
            stderr_tail,
        } => {
            let tail = if stderr_tail.is_empty() {
                " (nothing on stderr)".to_owned()
            } else {
                format!("; its last stderr lines:\n{stderr_tail}")
            };
            (Answer::Crash, format!("the server ended ({status}){tail}"))
        }
        RawAnswer::Transport(why) => (Answer::Malformed, why.clone()),
    }
}

/// A fuzz run under way: the tool and the case sent next, and what was
/// found so far. It sends cases until they are all sent, the server goes
/// down, or the run is cancelled; whoever drives it decides what follows
/// a server that went down ([`run`] restarts it, [`run_on`] does not).
struct Progress<'a> {
    tools: &'a [&'a Tool],
    options: &'a Options,
    /// The index of the tool whose cases are being sent.
    tool: usize,
    /// Its cases, made when its first case is sent.
    cases: Vec<Case>,
    /// The index of its case sent next.
    case: usize,
    report: Report,
}

/// Why [`Progress::send`] returned.
enum Pause {
    /// Every case was sent.
    Finished,
    /// The server went down after the last case sent (it exited, or a
    /// ping after the call went unanswered).
    Down,
    /// The run was cancelled.
    Cancelled,
}

impl<'a> Progress<'a> {
    fn new(tools: &'a [&'a Tool], options: &'a Options) -> Self {
        Self {
            tools,
            options,
            tool: 0,
            cases: Vec::new(),
            case: 0,
            report: Report::default(),
        }
    }

    /// Whether a case is left to send.
    fn more(&self) -> bool {
        self.case < self.cases.len() || self.tool + 1 < self.tools.len()
    }

    /// Sends the cases left to `server`, one at a time.
    async fn send(&mut self, server: &McpClient, cancel: &CancellationToken) -> Pause {
        loop {
            let Some(tool) = self.tools.get(self.tool).copied() else {
                return Pause::Finished;
            };
            let name = tool.name.as_ref();
            if self.case == 0 {
                let mut tally = ToolTally {
                    name: name.to_owned(),
                    ..ToolTally::default()
                };
                for answer in Answer::ALL {
                    tally.answers.insert(answer.name(), 0);
                }
                self.report.tools.push(tally);
                self.cases = cases(
                    &tool.input_schema,
                    tool_seed(self.options.seed, name),
                    self.options.cases,
                );
            }
            let Some(case) = self.cases.get(self.case).cloned() else {
                self.tool += 1;
                self.case = 0;
                self.cases = Vec::new();
                continue;
            };
            let index = self.case;
            let down = tokio::select! {
                biased;
                () = cancel.cancelled() => return Pause::Cancelled,
                down = self.one(server, name, index, case) => down,
            };
            self.case += 1;
            if down {
                return Pause::Down;
            }
        }
    }

    /// Sends one case and a ping after it, and notes the answer; whether
    /// the server went down.
    async fn one(&mut self, server: &McpClient, name: &str, index: usize, case: Case) -> bool {
        let timeout = self.options.timeout;
        let params = json!({ "name": name, "arguments": case.arguments });
        let raw = server
            .request_as_written("tools/call", Some(params), timeout)
            .await;
        self.report.calls += 1;
        let (mut answer, mut detail) = sort(&raw);
        let mut down = answer == Answer::Crash;
        if !down {
            self.report.pings += 1;
            if !server.answers_ping(timeout).await {
                down = true;
                if answer != Answer::Timeout {
                    answer = Answer::Unresponsive;
                    detail = format!(
                        "the server did not answer a ping within {} ms after this call",
                        timeout.as_millis()
                    );
                }
            }
        }
        if answer == Answer::Timeout {
            detail = format!("no answer within {} ms", timeout.as_millis());
        }
        if let Some(tally) = self.report.tools.last_mut() {
            tally.calls += 1;
            *tally.answers.entry(answer.name()).or_default() += 1;
        }
        let kind = match answer {
            Answer::Timeout => Some(FailureKind::Timeout),
            Answer::Crash => Some(FailureKind::Crash),
            Answer::Malformed => Some(FailureKind::Malformed),
            Answer::Unresponsive => Some(FailureKind::Unresponsive),
            Answer::InternalError if case.invalid => Some(FailureKind::InternalErrorOnInvalidInput),
            _ => None,
        };
        let internal = answer == Answer::InternalError;
        let failure = |kind| Failure {
            tool: name.to_owned(),
            index,
            case,
            kind,
            detail,
        };
        match kind {
            Some(kind) => self.report.failures.push(failure(kind)),
            None if internal => self
                .report
                .internal_errors_on_plausible_input
                .push(failure(FailureKind::InternalErrorOnInvalidInput)),
            None => {}
        }
        down
    }
}

/// Runs the fuzz against the server `start` starts (called again after
/// the server went down, at most [`Options::max_restarts`] times), whose
/// tools are `tools`; `first` is the server already started. Every server
/// started is stopped by the end.
pub async fn run<F, Fut>(
    tools: &[&Tool],
    options: &Options,
    mut start: F,
    first: McpClient,
) -> Report
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<McpClient, String>>,
{
    let began = Instant::now();
    let mut progress = Progress::new(tools, options);
    let never = CancellationToken::new();
    let mut server = first;
    loop {
        let pause = progress.send(&server, &never).await;
        server.stop().await;
        if !matches!(pause, Pause::Down) || !progress.more() {
            break;
        }
        let report = &mut progress.report;
        if report.restarts >= options.max_restarts {
            report.stopped_early = Some(format!(
                "the server went down {} times; the run stopped there",
                report.restarts + 1
            ));
            break;
        }
        report.restarts += 1;
        match start().await {
            Ok(next) => server = next,
            Err(why) => {
                report.stopped_early = Some(format!("the server did not start again: {why}"));
                break;
            }
        }
    }
    let mut report = progress.report;
    report.elapsed_ms = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
    report
}

/// Runs the fuzz against `server`, a server that others use too (a
/// scenario's): it is not restarted, and it is stopped only when it went
/// down (it exited, or stopped answering), so that whoever calls it next
/// finds it ended. Cancelling `cancel` ends the run at once, with
/// `stopped_early` set.
pub async fn run_on(
    tools: &[&Tool],
    options: &Options,
    server: &McpClient,
    cancel: &CancellationToken,
) -> Report {
    let began = Instant::now();
    let mut progress = Progress::new(tools, options);
    match progress.send(server, cancel).await {
        Pause::Finished => {}
        Pause::Down => {
            server.stop().await;
            if progress.more() {
                progress.report.stopped_early = Some(
                    "the server went down, so the calls after that one were not sent".to_owned(),
                );
            }
        }
        Pause::Cancelled => {
            progress.report.stopped_early = Some("the run was cancelled".to_owned());
        }
    }
    let mut report = progress.report;
    report.elapsed_ms = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
    report
}
