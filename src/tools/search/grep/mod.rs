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
//!    it finds (those the glob selects), each opened by its name in its
//!    directory and read once by the searcher, which also supplies the
//!    context lines. A file stops after `limit + 1` matching lines, which
//!    is enough to know whether more exist. The walk keeps a bound: the
//!    fewest files, smallest in path order, whose matching lines reach
//!    `limit + 1`. Once it is set, nothing that sorts after its last file
//!    is listed, opened or searched further (a file being searched stops
//!    mid-way), and the walk's results end with that file, so the result
//!    does not depend on which files were searched first.
//! 3. The kept files come out of the walk in path order (D9); their lines
//!    are assembled in path and line order, cut to `grep_max_line`
//!    characters each and to `max_bytes` as a whole. Unreadable files,
//!    binary files and unreadable directories that sort after the bound
//!    count for nothing, as the matches there do.
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
//!
//! ```text
//! mod.rs    the tool: arguments, the matcher, the time budget, the result
//!           (text, notices, GrepDetails)
//! files.rs  steps 2 and 3: the walk threads' search of each file, its
//!           lines, their assembly
//! ```

mod files;

use std::path::Path;
use std::time::Duration;

use grep_regex::RegexMatcher;
use grep_regex::RegexMatcherBuilder;
use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;
use serde_json::json;

use super::bound::Bound;
use super::effective_limit;
use super::glob::FileFilter;
use super::search_walk;
use super::shown_path;
use super::unreadable_notice;
use super::walk::Entry;
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
use crate::tools::task::run_blocking;
use crate::tools::truncate::Truncation;
use crate::tools::truncate::format_size;
use crate::tools::visible::show_path;
use crate::tools::workspace::Lookup;
use files::FileHits;
use files::Found;
use files::Plan;
use files::assemble;
use files::search_reader;
use files::selects;
use files::visitor;

/// The text of a search without results.
pub(crate) const NO_MATCHES: &str = "No matches found";

/// The largest compiled pattern (grep-regex's default is 100 MiB): one
/// regex call on one line cannot be interrupted, and its time grows with
/// the compiled size, so `a{65536}` is refused instead of running for
/// minutes on a long line.
pub(crate) const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// The lazy DFA's cache per search thread (grep-regex's default is
/// 1000 MiB): past it the engine clears its cache or falls back to a
/// slower one, instead of growing.
pub(crate) const REGEX_DFA_SIZE_LIMIT: usize = 10 << 20;

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
pub(crate) const BEHAVIOURS: &[&str] = &[
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
    let files: Vec<(String, FileHits)> = if meta.is_dir() {
        let root = &resolved.real;
        // The walk keeps the smallest files whose matching lines reach
        // limit + 1, and never lists or searches what sorts after them.
        let bound = Bound::new(limit.saturating_add(1));
        // The glob rejects files before their ignore rules are matched.
        let selected = |entry: &Entry<'_>| selects(filter.as_ref(), entry);
        let walk = search_walk(
            ctx,
            root,
            false,
            &display,
            Some(&bound),
            Some(&selected),
            &|| visitor(fs, &plan, &bound),
        )?;
        for (path, why) in &walk.errors {
            unreadable.push((shown_path(workspace, root, path), why.clone()));
        }
        walk.results
            .into_vec()
            .into_iter()
            .map(|found| (found.rel, found.value))
            .collect()
    } else if meta.is_file() {
        // A file named explicitly is searched even when ignored or outside
        // the glob, as ripgrep does; it is shown by its name (§grep.6).
        let name = resolved
            .abs
            .file_name()
            .map_or_else(|| display.clone(), |n| show_path(Path::new(n)).into_owned());
        let stop = || ctx.cancel.is_cancelled();
        let hits = search_reader(fs.open(&resolved.real), &mut plan.searcher(), &plan, &stop);
        vec![(name, hits)]
    } else {
        return Err(ToolError::failure(
            ErrorKind::Io(ErrorClass::NotRegular),
            format!(
                "Cannot search {display}: it is not a regular file or a directory. Give a file or a \
             directory path."
            ),
        ));
    };

    if ctx.cancel.is_cancelled() {
        return Err(ToolError::cancelled());
    }
    if single_file
        && let Some((
            _,
            FileHits {
                error: Some(err), ..
            },
        )) = files.first()
    {
        return Err(io_failure("read", &display, err));
    }
    let single = single_file
        .then(|| files.first().map(|(name, _)| name.clone()))
        .flatten();
    let found = assemble(files, &plan, ctx.limits.bytes_only(), &mut unreadable);
    render(found, &plan, ctx, single.as_deref(), unreadable)
}

/// The result text, notices and details.
fn render(
    found: Found,
    plan: &Plan<'_>,
    ctx: &ToolContext,
    single: Option<&str>,
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
        if let (Some(file), Some(offset)) = (single, found.binary_offset) {
            notices.push(format!(
                "{file} is a binary file (NUL byte at offset {offset}), so the search stopped \
                 there. Use bash (e.g. strings) to look inside binary files"
            ));
        }
    }
    ToolOutput::text(with_notices(&body, &notices)).with_facts(details)
}

#[cfg(test)]
mod tests;
