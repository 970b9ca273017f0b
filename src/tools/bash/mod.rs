//! The `bash` tool (§bash, D12–D16, D18, D20).
//!
//! Runs one command in a fresh shell in the workspace root through
//! [`ProcessOps`](super::ops::ProcessOps), streams its output into an
//! [`OutputAccumulator`] (bounded memory, a 0600 full-output file once the
//! output outgrows the limits), sends throttled partial results while it
//! runs, and ends in one result:
//!
//! ```text
//! mod.rs      the tool: timeout, streaming, throttled updates, the result
//! output/     the bounded accumulator (accumulator.rs), the private
//!             full-output file (full_log.rs), the tail window (tail.rs)
//!             and the streaming UTF-8 decoder (utf8.rs)
//! ansi.rs     cleaning escape sequences and redraws for the model (D12)
//! ```
//!
//! - exit code 0: the cleaned tail (or `(no output)`) and, when cut, a
//!   notice saying which lines are shown, of how many, and where the full
//!   output is;
//! - non-zero exit, a killing signal, a timeout, a cancellation: an error
//!   result with the same text followed by what happened, and `details`
//!   kept (D14).
//!
//! Differences from pi: the model reads cleaned text (D12), notices are right
//! in every case (D13), errors keep `details` (D14), the tool is sequential
//! (D15), the full-output file is private (D18), stdout and stderr share one
//! pipe (D20), a command killed by a signal is reported as such instead
//! of as success, and the first command run in a sandbox says what the
//! sandbox allows (D21).
//!
//! Facts in notices and in `details.truncation` describe the cleaned text
//! the model reads; see [`output`] for why line numbers also hold
//! for the raw file.

pub(crate) mod ansi;
mod output;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::MutexGuard;
use std::sync::PoisonError;
use std::time::Duration;

use serde::Deserialize;
use serde::Serialize;
use serde_json::json;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::args::Problem;
use super::args::ValidationDetails;
use super::contract::Content;
use super::contract::ExecutionMode;
use super::contract::Limits;
use super::contract::Tool;
use super::contract::ToolContext;
use super::contract::ToolOutput;
use super::contract::ToolSpec;
use super::contract::ToolUpdate;
use super::contract::UpdateSink;
use super::contract::object_schema;
use super::error::ToolError;
use super::error::facts_value;
use super::facts::ErrorClass;
use super::facts::ErrorKind;
use super::facts::Facts;
use super::facts::ToolDetails;
use super::facts::same_details;
use super::fs_error::ErrorDetails;
use super::fs_error::exec_failure;
use super::ops::BoxFuture;
use super::ops::DataSink;
use super::ops::ExecEnd;
use super::ops::ExecRequest;
use super::ops::process::sleep_until;
use super::path::PathError;
use super::truncate::TruncatedBy;
use super::truncate::Truncation;
use super::truncate::format_number;
use super::truncate::format_size;
use output::BASH_FILE_PREFIX;
use output::OutputAccumulator;
use output::Snapshot;

/// At most one partial result per this interval (`BASH_UPDATE_THROTTLE_MS`).
pub(super) const UPDATE_THROTTLE: Duration = Duration::from_millis(100);

/// The largest timeout accepted, in seconds (pi's limit: 2^31 - 1 ms).
pub(super) const MAX_TIMEOUT_SECS: f64 = 2_147_483.647;

/// The text of a finished command that printed nothing.
pub(super) const NO_OUTPUT: &str = "(no output)";

/// The text of a cancelled command.
pub(super) const ABORTED: &str = "Command aborted";

/// The `bash` tool.
#[derive(Clone, Copy, Debug, Default)]
pub struct BashTool;

/// Arguments of `bash`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BashArgs {
    /// The command, run with `bash -c`.
    pub command: String,
    /// Seconds after which the command is killed.
    pub timeout: Option<f64>,
}

impl Tool for BashTool {
    type Args = BashArgs;

    fn spec(&self, limits: &Limits) -> ToolSpec {
        let max_lines = limits.max_lines;
        let max_bytes = format_size(limits.max_bytes);
        let default_timeout = match limits.bash_timeout {
            Some(secs) => format!("the default is {secs} seconds"),
            None => "there is no timeout by default".to_owned(),
        };
        ToolSpec {
            name: "bash".into(),
            label: "Bash".into(),
            description: format!(
                "Execute a bash command in the workspace root directory. Returns stdout and \
                 stderr together, in the order they were written. Output is cut to its last \
                 {max_lines} lines or {max_bytes}, whichever is hit first; when it is cut, the \
                 full output is saved to a file named in the notice. Colour codes and progress \
                 redraws are removed. Each call runs in a fresh shell: cd, variables and \
                 functions do not carry over. Optionally set timeout in seconds; \
                 {default_timeout}."
            ),
            prompt_snippet: "Execute bash commands (ls, grep, find, etc.)".to_owned(),
            prompt_guidelines: vec![
                "Each bash call starts a fresh shell in the workspace root; chain dependent \
                 steps in one command with &&."
                    .to_owned(),
                "Start servers and watchers in the background with their output redirected to \
                 a file (cmd > /tmp/out.log 2>&1 &), or set a timeout, so a call cannot hang."
                    .to_owned(),
                "When bash output is cut, search the saved full output with grep, tail or sed \
                 -n instead of running the command again."
                    .to_owned(),
            ],
            parameters: object_schema(
                json!({
                    "command": {
                        "type": "string",
                        "description": "Bash command to execute"
                    },
                    "timeout": {
                        "type": "number",
                        "description": format!(
                            "Timeout in seconds, more than 0 and at most {MAX_TIMEOUT_SECS} \
                             (optional; {default_timeout})"
                        )
                    }
                }),
                &["command"],
            ),
            execution_mode: ExecutionMode::Sequential,
        }
    }

    async fn execute(&self, args: BashArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let timeout = resolve_timeout(args.timeout, ctx.limits.bash_timeout)?;
        if ctx.cancel.is_cancelled() {
            let details = BashDetails {
                cancelled: true,
                ..BashDetails::default()
            };
            return Err(ToolError::Cancelled {
                message: ABORTED.to_owned(),
                details: Some(facts_value(&details)?),
                facts: Some(Facts::error(ErrorKind::Cancelled).with_details(details)),
            });
        }
        ctx.updates.emit(ToolUpdate {
            content: Vec::new(),
            details: None,
        });
        let live = Arc::new(Mutex::new(Live {
            output: OutputAccumulator::new(
                ctx.limits.truncation(),
                BASH_FILE_PREFIX,
                Arc::clone(ctx.workspace.scratch().fs()),
            )
            .in_dir(ctx.workspace.scratch().dir())
            .named(ctx.workspace.scratch().file_stem("bash", &ctx.call_id))
            .with_log_cap(ctx.limits.max_log_bytes),
            sink: ctx.updates.clone(),
            last_emit: None,
            dirty: false,
        }));
        let wake = Arc::new(Notify::new());
        let on_data: DataSink = {
            let live = Arc::clone(&live);
            let wake = Arc::clone(&wake);
            Box::new(move |chunk| {
                if lock(&live).on_data(chunk) {
                    wake.notify_one();
                }
            })
        };
        let request = request(&ctx, args.command, timeout)?;
        let exec = ctx
            .workspace
            .process()
            .exec(request, on_data, ctx.cancel.clone());
        // Said once per sandbox, on the first command that ran in it (D21).
        let notice = ctx
            .workspace
            .process()
            .sandbox()
            .filter(|sandbox| sandbox.first_notice())
            .and_then(|sandbox| sandbox.describe(ctx.workspace.root()));
        let end = drive(exec, &live, &wake).await;
        let snapshot = lock(&live).finish();
        let end = end.map_err(|err| exec_failure(&err))?;
        with_notice(outcome(end, snapshot, timeout), notice)
    }
}

/// The result with `notice` (what the sandbox allows, D21) after its text,
/// a blank line between.
fn with_notice(
    result: Result<ToolOutput, ToolError>,
    notice: Option<String>,
) -> Result<ToolOutput, ToolError> {
    let Some(notice) = notice else {
        return result;
    };
    let append = |text: &mut String| {
        text.push_str("\n\n");
        text.push_str(&notice);
    };
    match result {
        Ok(mut output) => {
            match output.content.last_mut() {
                Some(Content::Text { text }) => append(text),
                _ => output.content.push(Content::text(notice.clone())),
            }
            Ok(output)
        }
        Err(ToolError::Failed {
            mut message,
            details,
            facts,
        }) => {
            append(&mut message);
            Err(ToolError::Failed {
                message,
                details,
                facts,
            })
        }
        Err(ToolError::Cancelled {
            mut message,
            details,
            facts,
        }) => {
            append(&mut message);
            Err(ToolError::Cancelled {
                message,
                details,
                facts,
            })
        }
        Err(other) => Err(other),
    }
}

/// The command as the workspace's [`BashConfig`](super::BashConfig) says
/// to run it: after the prefix (pi's `commandPrefix`, §bash.2), in the
/// configured directory (resolved like a path argument, so confined), with
/// the configured variables.
fn request(
    ctx: &ToolContext,
    command: String,
    timeout: Option<f64>,
) -> Result<ExecRequest, ToolError> {
    let config = ctx.workspace.bash();
    let cwd = ctx.workspace.bash_cwd().map_err(cwd_failure)?;
    let command = match &config.command_prefix {
        Some(prefix) => format!("{prefix}\n{command}"),
        None => command,
    };
    Ok(ExecRequest {
        command,
        cwd,
        timeout: timeout.map(Duration::from_secs_f64),
        env: config
            .env
            .iter()
            .map(|(key, value)| (key.into(), value.into()))
            .collect(),
    })
}

/// The configured working directory cannot be used. It came from the
/// configuration (a scenario's `bash.cwd`), not from the call, so the
/// model is not told to change a path it never gave.
fn cwd_failure(err: PathError) -> ToolError {
    match err {
        PathError::Outside { raw, via, .. } => ToolError::failure_with(
            ErrorKind::Io(ErrorClass::OutsideWorkspace),
            format!(
                "Cannot run the command: the working directory configured for bash, {raw}, leads \
                 outside the workspace{via}, and commands may only start inside it. No call can \
                 change that setting: tell the user that the bash configuration must name a \
                 directory inside the workspace."
            ),
            &ErrorDetails {
                error_class: ErrorClass::OutsideWorkspace.name(),
                errno: None,
            },
        ),
        PathError::Unresolvable {
            raw,
            message,
            class,
            errno,
        } => ToolError::failure_with(
            ErrorKind::Io(class),
            format!(
                "Cannot run the command: the working directory configured for bash, {raw}, \
                 cannot be used. {message}"
            ),
            &ErrorDetails {
                error_class: class.name(),
                errno,
            },
        ),
    }
}

/// Checks the call's timeout, or takes the configured default (§bash.3.1).
fn resolve_timeout(given: Option<f64>, default: Option<f64>) -> Result<Option<f64>, ToolError> {
    let Some(secs) = given else {
        return match default {
            Some(secs) if timeout_problem(secs).is_some() => Err(ToolError::fatal(format!(
                "the configured default bash timeout {secs} is not a number of seconds more than \
                 0 and at most {MAX_TIMEOUT_SECS}"
            ))),
            _ => Ok(default),
        };
    };
    let Some(problem) = timeout_problem(secs) else {
        return Ok(Some(secs));
    };
    let fallback = match default {
        Some(default) => format!("use the default of {default} seconds"),
        None => "run without a time limit".to_owned(),
    };
    let listed = Problem {
        path: "/timeout".to_owned(),
        expected: format!("a number of seconds > 0 and <= {MAX_TIMEOUT_SECS}"),
        received: format!("number {}", format_number(secs)),
    };
    Err(ToolError::InvalidArgs {
        message: format!(
            "Invalid timeout: {problem}. Send timeout as a number of seconds more than 0 and at \
             most {MAX_TIMEOUT_SECS} (for example 60), or leave it out to {fallback}."
        ),
        details: Some(facts_value(&ValidationDetails {
            validation_errors: &[listed],
        })?),
        facts: Some(Facts::error(ErrorKind::InvalidArguments)),
    })
}

/// What is wrong with a timeout, if anything.
fn timeout_problem(secs: f64) -> Option<String> {
    if !secs.is_finite() || secs <= 0.0 {
        Some(format!(
            "{} is not a positive number of seconds",
            format_number(secs)
        ))
    } else if secs > MAX_TIMEOUT_SECS {
        Some(format!(
            "{} seconds is more than the maximum of {MAX_TIMEOUT_SECS} seconds",
            format_number(secs)
        ))
    } else {
        None
    }
}

fn lock(live: &Mutex<Live>) -> MutexGuard<'_, Live> {
    live.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The output of a running command and the throttle of its partial results
/// (§bash.5).
struct Live {
    output: OutputAccumulator,
    sink: UpdateSink,
    /// When the last partial result with output was sent.
    last_emit: Option<Instant>,
    /// Output arrived since then.
    dirty: bool,
}

impl Live {
    /// Takes a chunk; sends a partial result at once when the throttle
    /// allows. Returns whether a flush timer must be armed: the chunk made
    /// output pending that was not pending before.
    fn on_data(&mut self, chunk: &[u8]) -> bool {
        self.output.append(chunk);
        let was_dirty = std::mem::replace(&mut self.dirty, true);
        self.flush_if_due();
        self.dirty && !was_dirty
    }

    /// When the pending output may be sent; `None` when nothing is pending.
    fn flush_due(&self) -> Option<Instant> {
        if !self.dirty {
            return None;
        }
        Some(match self.last_emit {
            Some(at) => at + UPDATE_THROTTLE,
            None => Instant::now(),
        })
    }

    fn flush_if_due(&mut self) {
        if self.flush_due().is_some_and(|at| at <= Instant::now()) {
            self.emit();
        }
    }

    fn emit(&mut self) {
        let snapshot = self.output.snapshot();
        self.sink.emit(partial_result(&snapshot));
        self.last_emit = Some(Instant::now());
        self.dirty = false;
    }

    /// Ends the stream, sends a last partial result if anything changed
    /// since the previous one, and returns the final snapshot.
    fn finish(&mut self) -> Snapshot {
        let changed = self.output.finish() || self.dirty;
        let snapshot = self.output.snapshot();
        if changed {
            self.sink.emit(partial_result(&snapshot));
            self.dirty = false;
        }
        snapshot
    }
}

/// Runs the command to its end while sending throttled partial results: the
/// data callback sends when it may, and a timer sends what is left once the
/// throttle allows.
async fn drive(
    mut exec: BoxFuture<'static, std::io::Result<ExecEnd>>,
    live: &Mutex<Live>,
    wake: &Notify,
) -> std::io::Result<ExecEnd> {
    loop {
        let due = lock(live).flush_due();
        tokio::select! {
            biased;
            end = &mut exec => return end,
            () = wake.notified() => {}
            () = sleep_until(due) => lock(live).flush_if_due(),
        }
    }
}

/// What a call of `bash` can show, as `harness run --coverage` counts it
/// (docs/reports.md, "Coverage").
pub(super) const BEHAVIOURS: &[&str] = &[
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
];

/// `details` of a command: how it ended, then its output's facts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BashDetails {
    /// The exit code, when the command exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that killed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// It ran out of its time.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
    /// The timeout in force, in seconds, when it ran out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<f64>,
    /// The call was cancelled.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
    /// Cleaning removed or collapsed something (D12). Present on final
    /// results, absent on partial ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleaned: Option<bool>,
    /// What the tail kept, when the output was cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncation: Option<Truncation>,
    /// The file with the full output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<PathBuf>,
    /// Why the full output could not be saved (completely).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_error: Option<String>,
    /// The full-output file stopped at `max_log_bytes`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub full_output_truncated: bool,
}

impl ToolDetails for BashDetails {
    fn truncation(&self) -> Option<&Truncation> {
        self.truncation.as_ref()
    }

    fn same(&self, other: &dyn ToolDetails) -> bool {
        same_details(self, other)
    }
}

impl BashDetails {
    /// The facts of a (partial or final) output: a truncation only when
    /// the text was cut.
    fn output(snapshot: &Snapshot) -> Self {
        Self {
            truncation: snapshot
                .truncation
                .truncated
                .then(|| snapshot.truncation.clone()),
            full_output_path: snapshot.full_output_path.clone(),
            full_output_truncated: snapshot.full_output_truncated,
            ..Self::default()
        }
    }
}

/// A partial result: the cleaned tail, no notice (§bash.5).
fn partial_result(snapshot: &Snapshot) -> ToolUpdate {
    let details = BashDetails::output(snapshot);
    let any = details.truncation.is_some()
        || details.full_output_path.is_some()
        || details.full_output_truncated;
    ToolUpdate {
        content: vec![Content::text(snapshot.content.clone())],
        // Always serialisable; a failure would only drop a partial result's
        // facts, which the final result repeats.
        details: any.then(|| facts_value(&details).ok()).flatten(),
    }
}

/// Maps how the command ended to the tool's result (§bash.6, §bash.7).
fn outcome(
    end: ExecEnd,
    snapshot: Snapshot,
    timeout: Option<f64>,
) -> Result<ToolOutput, ToolError> {
    let mut details = BashDetails {
        cleaned: Some(snapshot.cleaned),
        full_output_error: snapshot.full_output_error.clone(),
        ..BashDetails::output(&snapshot)
    };
    // What to say after the output, and the text when there was none.
    let failure = match end {
        ExecEnd::Exited {
            code: Some(code), ..
        } => {
            details.exit_code = Some(code);
            (code != 0).then(|| (format!("Command exited with code {code}"), NO_OUTPUT))
        }
        ExecEnd::Exited { code: None, signal } => {
            let signal = signal.unwrap_or(0);
            details.signal = Some(signal);
            let status = format!("Command was killed by signal {}", signal_label(signal));
            Some((status, NO_OUTPUT))
        }
        ExecEnd::TimedOut => {
            let secs = timeout.unwrap_or(0.0);
            details.timed_out = true;
            details.timeout = Some(secs);
            let status = format!(
                "Command timed out after {} seconds. Its process group and every process \
                 still descended from it were killed. If it needs more time, call bash again \
                 with a larger timeout; run a server or watcher in the background with its \
                 output redirected to a file (cmd > /tmp/out.log 2>&1 &).",
                format_number(secs)
            );
            Some((status, ""))
        }
        ExecEnd::Cancelled => {
            details.cancelled = true;
            Some((ABORTED.to_owned(), ""))
        }
    };
    let json = Some(facts_value(&details)?);
    let Some((status, empty)) = failure else {
        return Ok(ToolOutput {
            content: vec![Content::text(shown_text(&snapshot, NO_OUTPUT))],
            details: json,
            facts: Some(Facts::of(details)),
        });
    };
    let message = with_status(&shown_text(&snapshot, empty), &status);
    Err(match end {
        ExecEnd::Cancelled => ToolError::Cancelled {
            message,
            details: json,
            facts: Some(Facts::error(ErrorKind::Cancelled).with_details(details)),
        },
        _ => ToolError::Failed {
            message,
            details: json,
            facts: Some(Facts::error(ErrorKind::Command).with_details(details)),
        },
    })
}

/// `first`, a blank line, then `second` (a final newline of `first` is
/// part of that separation); or whichever of the two is not empty.
fn join(first: &str, second: &str) -> String {
    let first_line_done = first.strip_suffix('\n').unwrap_or(first);
    match (first.is_empty(), second.is_empty()) {
        (true, _) => second.to_owned(),
        (false, true) => first.to_owned(),
        (false, false) => format!("{first_line_done}\n\n{second}"),
    }
}

/// The shown output, then a blank line and how the command ended
/// (§bash.7): the output's own final newline is kept, so output that ends
/// with a newline is followed by an empty line before the blank one, as pi
/// writes it; or the status alone when there was no output.
fn with_status(shown: &str, status: &str) -> String {
    if shown.is_empty() {
        status.to_owned()
    } else {
        format!("{shown}\n\n{status}")
    }
}

/// The tail followed by its truncation notice; `empty` when there was no
/// output at all.
fn shown_text(snapshot: &Snapshot, empty: &str) -> String {
    match truncation_notice(snapshot) {
        Some(notice) => join(&snapshot.content, &notice),
        None if snapshot.content.is_empty() => empty.to_owned(),
        None => snapshot.content.clone(),
    }
}

/// The notice for a cut output (§bash.6), with true facts in every case
/// (D13); `None` when nothing was cut.
fn truncation_notice(snapshot: &Snapshot) -> Option<String> {
    let t = &snapshot.truncation;
    if !t.truncated {
        return None;
    }
    let full = match (&snapshot.full_output_path, &snapshot.full_output_error) {
        (Some(path), None) if snapshot.full_output_truncated => format!(
            "Full output (only its first {}, the log limit): {}",
            format_size(usize::try_from(snapshot.full_output_bytes).unwrap_or(usize::MAX)),
            path.display()
        ),
        (Some(path), None) => format!("Full output: {}", path.display()),
        (Some(path), Some(error)) => {
            format!("Full output (incomplete: {error}): {}", path.display())
        }
        (None, Some(error)) => format!("The full output could not be saved: {error}"),
        (None, None) if snapshot.full_output_truncated => {
            "The full output was not saved (the log limit is 0)".to_owned()
        }
        (None, None) => "The full output was not saved".to_owned(),
    };
    let end = t.total_lines;
    let notice = if t.last_line_partial {
        let line = format_size(snapshot.last_line_bytes);
        if t.output_bytes == 0 {
            format!(
                "[Line {end} is {line}; not even one character of its end fits in the {} \
                 limit. {full}]",
                format_size(t.max_bytes)
            )
        } else {
            format!(
                "[Showing last {} of line {end} (line is {line}). {full}]",
                format_size(t.output_bytes)
            )
        }
    } else if t.output_lines == 0 {
        format!("[Showing none of the {end} lines. {full}]")
    } else {
        let start = end - t.output_lines + 1;
        match t.truncated_by {
            Some(TruncatedBy::Bytes) => format!(
                "[Showing lines {start}-{end} of {end} ({} limit). {full}]",
                format_size(t.max_bytes)
            ),
            _ => format!("[Showing lines {start}-{end} of {end}. {full}]"),
        }
    };
    Some(notice)
}

/// `9 (SIGKILL)`, or the bare number for an unusual signal.
fn signal_label(signal: i32) -> String {
    let name = match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        _ => return signal.to_string(),
    };
    format!("{signal} ({name})")
}

#[cfg(test)]
mod tests;
