//! The `grep` tool (§grep, D7–D10).
//!
//! Searches file contents in-process with `grep-searcher` and `grep-regex`
//! (no ripgrep binary, D10) over the shared walker ([`super::walk`], D7): the
//! ignore files apply inside and outside git repositories, hidden files are
//! searched, `.git/` never is, symlinks are not followed, binary files (a
//! NUL byte) are skipped as ripgrep skips them.
//!
//! How a call runs:
//!
//! 1. The path is resolved and confined (D1); a missing one gets a
//!    workspace-relative error with "did you mean" (D6). A file is searched
//!    alone and shown by its name (§grep.6); a directory is walked.
//! 2. While the directory is walked, each walk thread searches the files
//!    it finds (those the glob selects), so reading directories and
//!    searching files overlap. Once the files searched so far hold more
//!    than `limit` matching lines, this early search stops: the first
//!    `limit` lines in path order may lie in files not found yet.
//! 3. The files left are searched in parallel in sorted order: scoped
//!    worker threads take the next file from an atomic index and store
//!    what they found in that file's slot (the early search filled the
//!    others). Each file is read once, by the searcher, which also supplies
//!    the context lines. As slots complete in order, the matches of the
//!    completed prefix are counted; once that prefix holds more than
//!    `limit` matching lines, the first `limit` in sorted order are certain
//!    and the files after it are dropped (workers stop mid-file too), with
//!    whatever the early search found in them. Each file stops after
//!    `limit + 1` matching lines, which is enough to know whether more
//!    exist, so the result is the same whichever files were searched early.
//! 4. The kept lines are assembled in path and line order (D9), cut to
//!    `grep_max_line` characters each and to `max_bytes` as a whole.
//!
//! Differences from pi, besides D7–D10:
//!
//! - Context blocks of nearby matches are merged as ripgrep merges them:
//!   each line appears once, matches as `path:n: text` and context as
//!   `path-n- text`, with no separator between blocks (the line numbers
//!   show the gaps). pi repeats shared lines and marks a matching line
//!   inside another match's block as context.
//! - The after-context of the last shown match stops before the next
//!   matching line, so no matching line is ever shown as context.
//! - The limit notice appears only when more matching lines exist (pi also
//!   shows it when there are exactly `limit`), as D11 does for find.
//! - Unreadable files and directories are skipped, counted in `details`
//!   and named in a notice (D8).

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io;
use std::io::Read;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::time::Duration;

use grep_regex::RegexMatcher;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::BinaryDetection;
use grep_searcher::Searcher;
use grep_searcher::SearcherBuilder;
use grep_searcher::Sink;
use grep_searcher::SinkContext;
use grep_searcher::SinkMatch;
use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::effective_limit;
use super::glob::FileFilter;
use super::relative_display;
use super::search_walk_visiting;
use super::shown_path;
use super::unreadable_notice;
use super::walk::Visitor;
use super::walk::WalkEntry;
use super::walk::component_order;
use super::with_notices;
use crate::tools::args::shorten;
use crate::tools::contract::ExecutionMode;
use crate::tools::contract::Limits;
use crate::tools::contract::Tool;
use crate::tools::contract::ToolContext;
use crate::tools::contract::ToolOutput;
use crate::tools::contract::ToolSpec;
use crate::tools::contract::object_schema;
use crate::tools::error::ToolError;
use crate::tools::facts::ErrorClass;
use crate::tools::facts::ErrorKind;
use crate::tools::facts::ToolDetails;
use crate::tools::facts::same_details;
use crate::tools::fs_error::io_failure;
use crate::tools::fs_error::plain_reason;
use crate::tools::ops::FileKind;
use crate::tools::ops::FsOps;
use crate::tools::task::run_blocking;
use crate::tools::truncate::HeadTruncator;
use crate::tools::truncate::Truncation;
use crate::tools::truncate::TruncationLimits;
use crate::tools::truncate::format_size;
use crate::tools::truncate::truncate_line;
use crate::tools::visible::show_controls;
use crate::tools::visible::show_path;
use crate::tools::workspace::Lookup;

/// The text of a search without results.
pub const NO_MATCHES: &str = "No matches found";

/// Most worker threads one search uses.
const MAX_SEARCH_THREADS: usize = 16;

/// The largest compiled pattern (grep-regex's default is 100 MiB): one
/// regex call on one line cannot be interrupted, and its time grows with
/// the compiled size, so `a{65536}` is refused instead of running for
/// minutes on a long line.
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// The lazy DFA's cache per search thread (grep-regex's default is
/// 1000 MiB): past it the engine clears its cache or falls back to a
/// slower one, instead of growing.
pub const REGEX_DFA_SIZE_LIMIT: usize = 10 << 20;

/// The `grep` tool.
#[derive(Clone, Copy, Debug, Default)]
pub struct GrepTool;

/// Arguments of `grep`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// A regular expression, or literal text with `literal`.
    pub pattern: String,
    /// The directory or file to search (default: the workspace root).
    pub path: Option<String>,
    /// A glob that selects the files to search.
    pub glob: Option<String>,
    /// Case-insensitive matching.
    #[serde(rename = "ignoreCase")]
    pub ignore_case: Option<bool>,
    /// Treat `pattern` as literal text.
    pub literal: Option<bool>,
    /// Lines of context before and after each match (at least 0).
    pub context: Option<f64>,
    /// Maximum number of matching lines (at least 1: the schema says so).
    pub limit: Option<f64>,
}

impl Tool for GrepTool {
    type Args = GrepArgs;

    fn spec(&self, limits: &Limits) -> ToolSpec {
        let limit = limits.grep_limit;
        let max_bytes = format_size(limits.max_bytes);
        let max_line = limits.grep_max_line;
        ToolSpec {
            name: "grep".into(),
            label: "Grep".into(),
            description: format!(
                "Search file contents for a pattern: a regular expression, or plain text with \
                 literal: true. Returns matching lines as `path:line: text`, paths relative to \
                 the searched directory, sorted by path and line number; with context, \
                 surrounding lines appear as `path-line- text`. Files ignored by .gitignore, \
                 .ignore or .git/info/exclude are skipped (also outside git repositories), \
                 hidden files are searched, .git/ and binary files are not. Stops at {limit} \
                 matching lines (change with limit) or {max_bytes} of output, whichever comes \
                 first; lines longer than {max_line} characters are cut."
            ),
            prompt_snippet: "Search file contents for patterns (respects .gitignore)".to_owned(),
            prompt_guidelines: Vec::new(),
            parameters: object_schema(
                json!({
                    "pattern": {
                        "type": "string",
                        "description": "Regular expression to search for (Rust/ripgrep syntax), or plain text when literal is true"
                    },
                    "path": {
                        "type": "string",
                        "description": "Directory or file to search, relative to the workspace root (default: the workspace root)"
                    },
                    "glob": {
                        "type": "string",
                        "description": "Only search files matching this glob: without / it matches file names ('*.ts'), with / paths relative to the searched directory ('src/**/*.spec.ts'); a leading ! excludes instead"
                    },
                    "ignoreCase": {
                        "type": "boolean",
                        "description": "Match case-insensitively (default: false)"
                    },
                    "literal": {
                        "type": "boolean",
                        "description": "Treat the pattern as plain text, not a regular expression (default: false)"
                    },
                    "context": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "Lines to show before and after each match (default: 0)"
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "description": format!("Maximum number of matching lines to return (default: {limit})")
                    }
                }),
                &["pattern"],
            ),
            execution_mode: ExecutionMode::Parallel,
        }
    }

    fn prepare_arguments(&self, mut args: Value) -> Value {
        // Models trained on snake_case APIs send `ignore_case`.
        if let Value::Object(map) = &mut args
            && !map.contains_key("ignoreCase")
            && let Some(value) = map.remove("ignore_case")
        {
            map.insert("ignoreCase".to_owned(), value);
        }
        args
    }

    async fn execute(&self, args: GrepArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let budget = time_budget(ctx.limits.grep_timeout)?;
        // The search stops through its cancellation token, for the caller's
        // cancellation and for the time budget alike.
        let stop = ctx.cancel.child_token();
        // A caller that stops waiting (drops this future) stops the search.
        let _stop_on_drop = stop.clone().drop_guard();
        let caller = ctx.cancel.clone();
        let work = run_blocking(
            "grep",
            args,
            ToolContext {
                cancel: stop.clone(),
                ..ctx
            },
            grep_blocking,
        );
        tokio::pin!(work);
        // Resolves with the budget when it has passed; never without one.
        let out_of_time = async {
            match budget {
                Some(budget) => {
                    tokio::time::sleep(budget).await;
                    budget
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            result = &mut work => result,
            budget = out_of_time => {
                stop.cancel();
                match stop_briefly(work).await {
                    Some(result) if caller.is_cancelled() => result,
                    _ => Err(timed_out(budget)),
                }
            }
            () = caller.cancelled() => {
                stop.cancel();
                stop_briefly(work).await.unwrap_or_else(|| Err(ToolError::cancelled()))
            }
        }
    }
}

/// How long a stopped search may take to notice: workers look at their
/// token between lines, so this is ample unless a regex is stuck inside
/// one huge line.
const STOP_GRACE: Duration = Duration::from_millis(200);

/// Waits for a stopped search to end, at most [`STOP_GRACE`]: `None` when
/// it did not. A worker stuck inside one long line cannot be interrupted
/// (the regex engine has no way to stop part way); the call ends without
/// it, and the thread finishes that line on its own and then stops.
async fn stop_briefly(
    work: std::pin::Pin<&mut impl std::future::Future<Output = Result<ToolOutput, ToolError>>>,
) -> Option<Result<ToolOutput, ToolError>> {
    tokio::time::timeout(STOP_GRACE, work).await.ok()
}

/// The configured time budget, checked.
fn time_budget(secs: Option<f64>) -> Result<Option<Duration>, ToolError> {
    secs.map(|secs| {
        Duration::try_from_secs_f64(secs)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| {
                ToolError::fatal(format!(
                    "the configured grep timeout {secs} is not a positive number of seconds"
                ))
            })
    })
    .transpose()
}

/// `details` of a search stopped by its time budget.
#[derive(Debug, Serialize)]
struct TimedOutDetails {
    timed_out: bool,
    timeout: f64,
}

/// The error of a search that ran out of time. No partial result: files are
/// searched in parallel, so the matches found so far need not be the first
/// ones in path order, and showing them would mislead.
fn timed_out(budget: Duration) -> ToolError {
    let secs = budget.as_secs_f64();
    ToolError::failure_with(
        ErrorKind::SearchTimedOut,
        format!(
            "grep stopped after {secs} seconds, its time limit, before the search was done; \
             nothing is shown because the matches found so far need not be the first ones. \
             Narrow the search with path or glob, or use a simpler pattern."
        ),
        &TimedOutDetails {
            timed_out: true,
            timeout: secs,
        },
    )
}

/// How `grep` looks up its path.
const LOOKUP: Lookup = Lookup::new("Path", "search");

/// What a call of `grep` can show, as `harness run --coverage` counts it
/// (docs/reports.md, "Coverage").
pub const BEHAVIOURS: &[&str] = &[
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
];

/// `details` of a search.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrepDetails {
    /// Matching lines shown.
    pub matches: usize,
    /// Files with a matching line shown.
    pub files_with_matches: usize,
    /// The limit, when more lines than it matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_limit_reached: Option<usize>,
    /// What the byte cap cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncation: Option<Truncation>,
    /// Some lines were cut to the line limit.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lines_truncated: bool,
    /// Files that could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable_files: Option<usize>,
    /// Those files (and directories), as shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable_paths: Option<Vec<String>>,
    /// Binary files whose search stopped at a NUL byte.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary_files: Option<usize>,
}

impl ToolDetails for GrepDetails {
    fn truncation(&self) -> Option<&Truncation> {
        self.truncation.as_ref()
    }

    fn same(&self, other: &dyn ToolDetails) -> bool {
        same_details(self, other)
    }
}

/// One file to search.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// Where to read it.
    pub path: PathBuf,
    /// How the output names it.
    pub display: String,
}

/// One line of output from a file.
#[derive(Clone, Debug, PartialEq, Eq)]
struct HitLine {
    number: u64,
    is_match: bool,
    text: String,
    cut: bool,
}

/// What the search of one file found.
#[derive(Debug, Default)]
struct FileHits {
    lines: Vec<HitLine>,
    matches: usize,
    binary_offset: Option<u64>,
    error: Option<io::Error>,
}

/// Everything a search needs besides the files.
struct Plan<'a> {
    matcher: &'a RegexMatcher,
    context: usize,
    limit: usize,
    max_line: usize,
    cancel: &'a CancellationToken,
}

impl Plan<'_> {
    fn searcher(&self) -> Searcher {
        SearcherBuilder::new()
            .line_number(true)
            .before_context(self.context)
            .after_context(self.context)
            .binary_detection(BinaryDetection::quit(b'\x00'))
            .build()
    }
}

/// The matcher for the arguments, or the error a model can act on.
fn build_matcher(args: &GrepArgs) -> Result<RegexMatcher, ToolError> {
    if args.pattern.contains('\n') {
        return Err(ToolError::failure(
            ErrorKind::MultiLinePattern,
            "The pattern contains a newline, but grep matches one line at a time. Search for a \
             single line of the text (or use \\s to match any whitespace within a line).",
        ));
    }
    let literal = args.literal.unwrap_or(false);
    RegexMatcherBuilder::new()
        .case_insensitive(args.ignore_case.unwrap_or(false))
        .fixed_strings(literal)
        .line_terminator(Some(b'\n'))
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_DFA_SIZE_LIMIT)
        .build(&args.pattern)
        .map_err(|err| {
            let reason = err.to_string();
            if reason.contains("exceeds size limit") {
                return ToolError::failure(ErrorKind::PatternTooLarge, format!(
                    "The pattern {:?} is too large: compiled, it is over the {} limit that keeps a \
                     search fast and its memory bounded. Use smaller repetition counts (a{{1000}} \
                     rather than a{{100000}}), an ASCII class such as [A-Za-z0-9_] instead of \
                     the Unicode-aware \\w, or several shorter searches.",
                    shorten(&args.pattern, 80),
                    format_size(REGEX_SIZE_LIMIT)
                ));
            }
            // grep-regex reports the pattern wrapped in a group; the regex
            // crate's parser points into the pattern as the model wrote it.
            let reason = regex::RegexBuilder::new(&args.pattern)
                .size_limit(REGEX_SIZE_LIMIT)
                .build()
                .err()
                .map_or(reason, |e| e.to_string());
            ToolError::failure(ErrorKind::InvalidRegex, format!(
                "Invalid regular expression {:?}: {reason}\nFix the pattern, or set literal: true \
                 to search for the text exactly as written.",
                args.pattern
            ))
        })
}

fn grep_blocking(args: &GrepArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let workspace = &ctx.workspace;
    let fs = workspace.fs().as_ref();
    let raw = args.path.as_deref().unwrap_or(".");
    let (resolved, meta) = workspace.resolve_existing(raw, LOOKUP)?;
    let display = resolved.display.clone();
    let matcher = build_matcher(args)?;
    let filter = match args.glob.as_deref().filter(|g| !g.is_empty()) {
        Some(glob) => Some(FileFilter::new(glob).map_err(|err| {
            ToolError::failure(ErrorKind::InvalidGlob, format!(
                "Invalid glob {glob:?}: {err}. Use *, ?, [abc], {{a,b}} and **, e.g. \"*.rs\" or \
                 \"src/**/*.ts\"."
            ))
        })?),
        None => None,
    };
    let limit = effective_limit(args.limit, ctx.limits.grep_limit);
    let context = args.context.map_or(0, |c| c.max(0.0) as usize);
    let plan = Plan {
        matcher: &matcher,
        context,
        limit,
        max_line: ctx.limits.grep_max_line,
        cancel: &ctx.cancel,
    };

    let mut unreadable: Vec<(String, String)> = Vec::new();
    let single_file = !meta.is_dir();
    let (files, searched) = if meta.is_dir() {
        let root = &resolved.real;
        let early = EarlySearch::new();
        let walk = search_walk_visiting(ctx, root, false, &display, true, &|| {
            early.visitor(fs, root, filter.as_ref(), &plan)
        })?;
        for (path, why) in &walk.errors {
            unreadable.push((shown_path(workspace, root, path), why.clone()));
        }
        let files: Vec<Candidate> = walk
            .entries
            .into_iter()
            .filter(|entry| entry.kind == FileKind::File)
            .map(|entry| Candidate {
                display: relative_display(root, &entry.path),
                path: entry.path,
            })
            .filter(|c| filter.as_ref().is_none_or(|f| f.allows(&c.display)))
            .collect();
        let searched = early.into_slots(&files);
        (files, searched)
    } else if meta.is_file() {
        // A file named explicitly is searched even when ignored or outside
        // the glob, as ripgrep does; it is shown by its name (§grep.6).
        let name = resolved
            .abs
            .file_name()
            .map_or_else(|| display.clone(), |n| show_path(Path::new(n)).into_owned());
        let files = vec![Candidate {
            path: resolved.real,
            display: name,
        }];
        (files, vec![None])
    } else {
        return Err(ToolError::failure(
            ErrorKind::Io(ErrorClass::NotRegular),
            format!(
                "Cannot search {display}: it is not a regular file or a directory. Give a file or a \
             directory path."
            ),
        ));
    };

    let slots = search_all(fs, &files, searched, &plan);
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::cancelled());
    }
    if single_file
        && let Some(Some(FileHits {
            error: Some(err), ..
        })) = slots.first()
    {
        return Err(io_failure("read", &display, err));
    }
    let found = assemble(
        &files,
        slots,
        &plan,
        ctx.limits.bytes_only(),
        &mut unreadable,
    );
    render(
        found,
        &plan,
        ctx,
        single_file.then_some(&files[..]),
        unreadable,
    )
}

/// A reader that fails once the search no longer needs the file.
struct Stoppable<'a, R> {
    inner: R,
    stop: &'a dyn Fn() -> bool,
}

impl<R: Read> Read for Stoppable<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if (self.stop)() {
            return Err(io::Error::other("search stopped"));
        }
        self.inner.read(buf)
    }
}

/// Collects the lines of one file.
struct Collect<'a> {
    hits: &'a mut FileHits,
    /// Matching lines after which the file is no longer interesting.
    cap: usize,
    max_line: usize,
    stop: &'a dyn Fn() -> bool,
}

impl Collect<'_> {
    fn push(&mut self, number: Option<u64>, is_match: bool, bytes: &[u8]) {
        let (text, cut) = line_text(bytes, self.max_line);
        self.hits.lines.push(HitLine {
            number: number.unwrap_or(0),
            is_match,
            text,
            cut,
        });
    }
}

impl Sink for Collect<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.push(mat.line_number(), true, mat.bytes());
        self.hits.matches += 1;
        Ok(self.hits.matches < self.cap && !(self.stop)())
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, io::Error> {
        self.push(context.line_number(), false, context.bytes());
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, offset: u64) -> Result<bool, io::Error> {
        self.hits.binary_offset = Some(offset);
        Ok(false)
    }
}

/// The text of a line as shown: without its line terminator and without
/// `\r`, invalid UTF-8 replaced, cut to `max_chars` characters, other
/// control characters (but tab) shown as control pictures (`␀`, `␛`). Only
/// a bounded prefix of a huge line is decoded.
fn line_text(bytes: &[u8], max_chars: usize) -> (String, bool) {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    // Enough bytes for `max_chars + 1` characters, however they decode.
    let window = max_chars.saturating_add(1).saturating_mul(4);
    let text: Cow<'_, [u8]> = if memchr::memchr(b'\r', bytes).is_none() {
        Cow::Borrowed(&bytes[..bytes.len().min(window)])
    } else {
        Cow::Owned(
            bytes
                .iter()
                .copied()
                .filter(|&b| b != b'\r')
                .take(window)
                .collect(),
        )
    };
    let text = String::from_utf8_lossy(&text);
    let (shown, cut) = truncate_line(&text, max_chars);
    (show_controls(&shown).into_owned(), cut)
}

/// The files searched while the walk was still going on (step 2 of the
/// module docs): each walk thread searches the files it finds, until the
/// files searched so far hold more than `limit` matching lines. Past that
/// the first `limit` lines in path order may lie in files not found yet, so
/// the rest waits for the sorted list. A file is searched the same way
/// either way (capped at `limit + 1` matching lines), so the result does not
/// depend on which files were searched early.
struct EarlySearch {
    found: Mutex<Vec<(PathBuf, FileHits)>>,
    /// Matching lines in `found`.
    matches: AtomicUsize,
    /// Cleared once `matches` is over the limit.
    open: AtomicBool,
}

impl EarlySearch {
    fn new() -> Self {
        Self {
            found: Mutex::new(Vec::new()),
            matches: AtomicUsize::new(0),
            open: AtomicBool::new(true),
        }
    }

    /// The visitor of one walk thread: searches the files it is handed
    /// (those the glob selects) while the early search is open.
    fn visitor<'a>(
        &'a self,
        fs: &'a dyn FsOps,
        root: &'a Path,
        filter: Option<&'a FileFilter>,
        plan: &'a Plan<'a>,
    ) -> Visitor<'a> {
        let mut searcher = plan.searcher();
        Box::new(move |entry: &WalkEntry| {
            if entry.kind != FileKind::File
                || !self.open.load(Ordering::Relaxed)
                || plan.cancel.is_cancelled()
            {
                return;
            }
            let display = relative_display(root, &entry.path);
            if filter.is_some_and(|f| !f.allows(&display)) {
                return;
            }
            let file = Candidate {
                path: entry.path.clone(),
                display,
            };
            let stop = || plan.cancel.is_cancelled();
            let hits = search_file(fs, &mut searcher, &file, plan, &stop);
            let matches = self.matches.fetch_add(hits.matches, Ordering::Relaxed) + hits.matches;
            if matches > plan.limit {
                self.open.store(false, Ordering::Relaxed);
            }
            self.found
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((file.path, hits));
        })
    }

    /// One slot per file of the sorted list: what the early search found
    /// in it, `None` for the files it did not reach.
    fn into_slots(self, files: &[Candidate]) -> Vec<Option<FileHits>> {
        let mut found = self
            .found
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        // In the files' (the walk's) order, so one pass pairs them up.
        found.sort_unstable_by(|a, b| component_order(&a.0, &b.0));
        let mut found = found.into_iter().peekable();
        files
            .iter()
            .map(|file| {
                found
                    .next_if(|(path, _)| *path == file.path)
                    .map(|(_, hits)| hits)
            })
            .collect()
    }
}

/// The ordered search's state: the slots of the sorted files, and how far
/// they are complete.
struct Progress {
    slots: Vec<Option<FileHits>>,
    /// Slots `0..done` are filled.
    done: usize,
    /// Matching lines in slots `0..done`.
    matches: usize,
}

impl Progress {
    /// Moves `done` over the filled slots; once the prefix holds more than
    /// `limit` matching lines, the first `limit` (and the fact that there
    /// are more) are known: returns where the needed files end.
    fn advance(&mut self, limit: usize) -> Option<usize> {
        while let Some(Some(hits)) = self.slots.get(self.done) {
            self.matches += hits.matches;
            self.done += 1;
            if self.matches > limit {
                return Some(self.done);
            }
        }
        None
    }
}

/// Searches the `files` that `slots` does not hold yet, in parallel, and
/// returns what each needed file holds, in the files' order; `None` for
/// files the result cannot include.
fn search_all(
    fs: &dyn FsOps,
    files: &[Candidate],
    slots: Vec<Option<FileHits>>,
    plan: &Plan<'_>,
) -> Vec<Option<FileHits>> {
    let count = files.len();
    let known: Vec<bool> = slots.iter().map(Option::is_some).collect();
    let mut progress = Progress {
        slots,
        done: 0,
        matches: 0,
    };
    // Files at this index and later are not needed.
    let cutoff = AtomicUsize::new(progress.advance(plan.limit).unwrap_or(count));
    let left = known[..cutoff.load(Ordering::Relaxed)]
        .iter()
        .filter(|k| !**k)
        .count();
    let next = AtomicUsize::new(0);
    let progress = Mutex::new(progress);
    let worker = || {
        let mut searcher = plan.searcher();
        loop {
            if plan.cancel.is_cancelled() {
                return;
            }
            let index = next.fetch_add(1, Ordering::Relaxed);
            // Files are handed out in order: every later one is beyond too.
            if index >= cutoff.load(Ordering::Acquire) {
                return;
            }
            if known[index] {
                continue;
            }
            let stop = || plan.cancel.is_cancelled() || index >= cutoff.load(Ordering::Relaxed);
            let hits = search_file(fs, &mut searcher, &files[index], plan, &stop);
            let mut state = progress.lock().unwrap_or_else(PoisonError::into_inner);
            state.slots[index] = Some(hits);
            if let Some(end) = state.advance(plan.limit) {
                cutoff.fetch_min(end, Ordering::Release);
            }
        }
    };
    let threads = super::walk::cores().clamp(1, MAX_SEARCH_THREADS).min(left);
    // The calling thread is one of the workers.
    if threads > 0 {
        std::thread::scope(|scope| {
            for _ in 1..threads {
                scope.spawn(worker);
            }
            worker();
        });
    }
    let mut slots = progress
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
        .slots;
    slots.truncate(cutoff.into_inner());
    slots
}

/// Searches one file; I/O errors end up in the result.
fn search_file(
    fs: &dyn FsOps,
    searcher: &mut Searcher,
    file: &Candidate,
    plan: &Plan<'_>,
    stop: &dyn Fn() -> bool,
) -> FileHits {
    let mut hits = FileHits::default();
    let reader = match fs.open(&file.path) {
        Ok(reader) => reader,
        Err(err) => {
            hits.error = Some(err);
            return hits;
        }
    };
    let reader = Stoppable {
        inner: reader,
        stop,
    };
    let sink = Collect {
        hits: &mut hits,
        cap: plan.limit.saturating_add(1),
        max_line: plan.max_line,
        stop,
    };
    let result = searcher.search_reader(plan.matcher, reader, sink);
    if let Err(err) = result
        && !stop()
    {
        hits.error = Some(err);
    }
    hits
}

/// The text to show and the facts about it.
#[derive(Debug)]
struct Found {
    /// The kept output lines, joined by `\n`.
    text: String,
    /// Whether any line was selected (before the byte cap).
    any: bool,
    /// How the byte cap applied to the selected lines.
    head: HeadTruncator,
    matches: usize,
    files_with_matches: usize,
    more: bool,
    lines_truncated: bool,
    binary_files: usize,
    binary_offset: Option<u64>,
}

/// Decimal digits of `n`.
fn digits(mut n: u64) -> usize {
    let mut count = 1;
    while n >= 10 {
        n /= 10;
        count += 1;
    }
    count
}

/// Takes the first `limit` matching lines in file order, with their
/// context. The after-context of the last one ends before the next match.
fn assemble(
    files: &[Candidate],
    slots: Vec<Option<FileHits>>,
    plan: &Plan<'_>,
    limits: TruncationLimits,
    unreadable: &mut Vec<(String, String)>,
) -> Found {
    let mut found = Found {
        text: String::new(),
        any: false,
        head: HeadTruncator::new(limits),
        matches: 0,
        files_with_matches: 0,
        more: false,
        lines_truncated: false,
        binary_files: 0,
        binary_offset: None,
    };
    for (file, slot) in files.iter().zip(slots) {
        let Some(hits) = slot else { continue };
        if let Some(err) = &hits.error {
            unreadable.push((file.display.clone(), plain_reason(err)));
        }
        if hits.binary_offset.is_some() {
            found.binary_files += 1;
            found.binary_offset = hits.binary_offset;
        }
        if found.matches == plan.limit {
            found.more |= hits.matches > 0;
            continue;
        }
        let budget = plan.limit - found.matches;
        let mut taken = 0;
        let mut last_match = 0;
        for line in hits.lines {
            if line.is_match {
                if taken == budget {
                    break;
                }
                taken += 1;
                last_match = line.number;
            } else if taken == budget && line.number > last_match + plan.context as u64 {
                break;
            }
            // Only lines within the byte cap are formatted; the others are
            // only measured, for the truncation facts.
            let separator = if line.is_match { ':' } else { '-' };
            let len = file.display.len() + digits(line.number) + line.text.len() + 3;
            found.any = true;
            if found.head.push_line(len) {
                if found.head.output_lines() > 1 {
                    found.text.push('\n');
                }
                let _ = write!(
                    found.text,
                    "{}{separator}{}{separator} {}",
                    file.display, line.number, line.text
                );
            }
            found.lines_truncated |= line.cut;
        }
        found.more |= hits.matches > taken;
        found.matches += taken;
        if taken > 0 {
            found.files_with_matches += 1;
        }
    }
    found
}

/// The result text, notices and details.
fn render(
    found: Found,
    plan: &Plan<'_>,
    ctx: &ToolContext,
    single: Option<&[Candidate]>,
    unreadable: Vec<(String, String)>,
) -> Result<ToolOutput, ToolError> {
    let mut details = GrepDetails {
        matches: found.matches,
        files_with_matches: found.files_with_matches,
        ..GrepDetails::default()
    };
    let mut notices: Vec<String> = Vec::new();
    let body = if !found.any {
        NO_MATCHES.to_owned()
    } else {
        let facts = found.head.facts();
        if found.more {
            details.match_limit_reached = Some(plan.limit);
            notices.push(format!(
                "{} matches limit reached. Use limit={} for more, or refine pattern",
                plan.limit,
                plan.limit.saturating_mul(2)
            ));
        }
        if facts.truncated {
            notices.push(format!(
                "{} output limit reached: showing {} of {} lines. Refine the pattern, or narrow \
                 the search with path or glob, to see the rest",
                format_size(ctx.limits.max_bytes),
                facts.output_lines,
                facts.total_lines
            ));
            details.truncation = Some(facts);
        }
        if found.lines_truncated {
            details.lines_truncated = true;
            notices.push(format!(
                "Some lines truncated to {} chars. Use the read tool to see full lines",
                plan.max_line
            ));
        }
        found.text
    };
    if !unreadable.is_empty() {
        notices.push(unreadable_notice(&unreadable));
        details.unreadable_files = Some(unreadable.len());
        details.unreadable_paths = Some(unreadable.into_iter().map(|(path, _)| path).collect());
    }
    if found.binary_files > 0 {
        details.binary_files = Some(found.binary_files);
        if let (Some([file]), Some(offset)) = (single, found.binary_offset) {
            notices.push(format!(
                "{} is a binary file (NUL byte at offset {offset}), so the search stopped there. \
                 Use bash (e.g. strings) to look inside binary files",
                file.display
            ));
        }
    }
    ToolOutput::text(with_notices(&body, &notices)).with_facts(details)
}

#[cfg(test)]
#[path = "grep_tests.rs"]
mod tests;
