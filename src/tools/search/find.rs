//! The `find` tool (§find, D7, D9, D11).
//!
//! Finds files and directories by glob over the shared walker
//! ([`super::walk`]):
//! the same ignore rules as grep (D7), hidden entries included, `.git/`
//! never listed, symlinks listed but not followed. Patterns follow fd's
//! `--glob` (§find.4) on paths relative to the search directory: without
//! `/` a pattern matches names at any depth; with `/` it matches relative
//! paths at any depth (`src/**/*.ts` finds `pkg/src/a.ts` too); a leading
//! `/` anchors it (at the search directory, or as an absolute path); a
//! trailing `/` selects directories. Matching is case-insensitive unless
//! the pattern has an uppercase letter (fd's smart case).
//!
//! Differences from pi: output is sorted by path (D9); paths are correct
//! for every search root, `/` included (D11); the limit notice appears only
//! when more results exist, and says how many were found (D11); `limit`
//! must be at least 1, like every limit; a missing path is an error with "did you mean" (D6).

use serde::Deserialize;
use serde::Serialize;
use serde_json::json;

use super::effective_limit;
use super::glob::NamePattern;
use super::search_walk;
use super::shown_path;
use super::unreadable_notice;
use super::walk::Entry;
use super::with_notices;
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
use crate::tools::ops::FileKind;
use crate::tools::task::run_blocking;
use crate::tools::truncate::HeadJoin;
use crate::tools::truncate::Truncation;
use crate::tools::truncate::format_size;
use crate::tools::visible::show_name;
use crate::tools::workspace::Lookup;

/// The text of a search without results.
pub(crate) const NO_FILES: &str = "No files found matching pattern";

/// The `find` tool.
#[derive(Clone, Copy, Debug, Default)]
pub struct FindTool;

/// Arguments of `find`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindArgs {
    /// The glob to match.
    pub pattern: String,
    /// The directory to search (default: the workspace root).
    pub path: Option<String>,
    /// Maximum number of results (at least 1: the schema says so).
    pub limit: Option<f64>,
}

impl Tool for FindTool {
    type Args = FindArgs;

    fn spec(&self, limits: &Limits) -> ToolSpec {
        let limit = limits.find_limit;
        let max_bytes = format_size(limits.max_bytes);
        ToolSpec {
            name: "find".into(),
            label: "Find".into(),
            description: format!(
                "Find files and directories by glob pattern. A pattern without / matches names \
                 at any depth ('*.ts'); a pattern with / matches paths relative to the search \
                 directory, at any depth ('src/**/*.spec.ts'). Case-insensitive unless the \
                 pattern has an uppercase letter. Returns paths relative to the search \
                 directory, sorted, directories ending in /. Entries ignored by .gitignore, \
                 .ignore or .git/info/exclude are skipped (also outside git repositories), \
                 hidden entries are included, .git/ is not. Stops at {limit} results (change \
                 with limit) or {max_bytes} of output, whichever comes first."
            ),
            prompt_snippet: "Find files by glob pattern (respects .gitignore)".to_owned(),
            prompt_guidelines: Vec::new(),
            parameters: object_schema(
                json!({
                    "pattern": {
                        "type": "string",
                        "description": "Glob to match, e.g. '*.ts', '**/*.json' or 'src/**/*.spec.ts'"
                    },
                    "path": {
                        "type": "string",
                        "description": "Directory to search, relative to the workspace root (default: the workspace root)"
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "description": format!("Maximum number of results (default: {limit})")
                    }
                }),
                &["pattern"],
            ),
            execution_mode: ExecutionMode::Parallel,
        }
    }

    async fn execute(&self, args: FindArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        run_blocking("find", args, ctx, find_blocking).await
    }
}

/// How `find` looks up its path.
const LOOKUP: Lookup = Lookup::new("Path", "search");

/// What a call of `find` can show, as `harness run --coverage` counts it
/// (docs/reports.md, "Coverage").
pub(crate) const BEHAVIOURS: &[&str] = &[
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
];

/// `details` of a search.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindDetails {
    /// Paths that matched.
    pub results: usize,
    /// The limit, when more paths than it matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_limit_reached: Option<usize>,
    /// What the byte cap cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncation: Option<Truncation>,
    /// Directories that could not be read, as shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable_paths: Option<Vec<String>>,
}

impl ToolDetails for FindDetails {
    fn truncation(&self) -> Option<&Truncation> {
        self.truncation.as_ref()
    }

    fn same(&self, other: &dyn ToolDetails) -> bool {
        same_details(self, other)
    }
}

fn find_blocking(args: &FindArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let raw = args.path.as_deref().unwrap_or(".");
    let (resolved, meta) = ctx.workspace.resolve_existing(raw, LOOKUP)?;
    let display = resolved.display.clone();
    if !meta.is_dir() {
        return Err(ToolError::failure(
            ErrorKind::Io(ErrorClass::NotADirectory),
            format!(
                "Not a directory: {display}. find searches directories; use ls or read on a \
             file, or give its parent directory as path."
            ),
        ));
    }
    let pattern = NamePattern::new(&args.pattern).map_err(|err| {
        ToolError::failure(
            ErrorKind::InvalidGlob,
            format!(
                "Invalid glob pattern {:?}: {err}. Use *, ?, [abc], {{a,b}} and **, e.g. \"*.rs\" \
             or \"src/**/*.ts\"; put a special character in brackets to match it literally \
             (\"[[]\").",
                args.pattern
            ),
        )
    })?;
    let limit = effective_limit(args.limit, ctx.limits.find_limit);
    // The walk threads match the entries as they find them; only the
    // results are kept, and they come out sorted.
    let root = &resolved.real;
    let names_only = pattern.names_only();
    let matches = |entry: &Entry<'_>| {
        !pattern.surely_misses(entry.name.as_encoded_bytes())
            && pattern.matches(
                entry.path,
                &entry.shown(names_only),
                entry.kind == FileKind::Dir,
            )
    };
    // Files are matched before the ignore rules, which then only see the
    // files that match; the visitor gets those, and every directory.
    let walk = search_walk(ctx, root, true, &display, None, Some(&matches), &|| {
        Box::new(|entry: &Entry<'_>| {
            (entry.kind != FileKind::Dir || matches(entry)).then_some(((), 1))
        })
    })?;
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::cancelled());
    }
    // The shown results, one a line, directories ending in `/`, up to the
    // byte cap; the rest are only counted.
    let mut join = HeadJoin::new(ctx.limits.bytes_only());
    let mut total = 0usize;
    walk.results.each(|rel, kind, ()| {
        total += 1;
        if total <= limit {
            let slash = if kind == FileKind::Dir { "/" } else { "" };
            join.push(&[&show_name(rel), slash]);
        }
    });
    let (shown, cut) = join.finish();
    let unreadable: Vec<(String, String)> = walk
        .errors
        .iter()
        .map(|(path, why)| {
            (
                shown_path(&ctx.workspace, &resolved.real, path),
                why.clone(),
            )
        })
        .collect();

    let mut details = FindDetails {
        results: total,
        result_limit_reached: None,
        truncation: None,
        unreadable_paths: None,
    };
    let mut notices = Vec::new();
    let body = if total == 0 {
        NO_FILES.to_owned()
    } else {
        if total > limit {
            details.result_limit_reached = Some(limit);
            notices.push(format!(
                "{limit} results limit reached ({total} found). Use limit={} for more, or \
                 refine pattern",
                limit.saturating_mul(2)
            ));
        }
        if cut.truncated {
            notices.push(format!(
                "{} output limit reached: showing {} of {} results. Refine the pattern or search \
                 a narrower path to see the rest",
                format_size(ctx.limits.max_bytes),
                cut.output_lines,
                cut.total_lines
            ));
            details.truncation = Some(cut);
        }
        shown
    };
    if !unreadable.is_empty() {
        notices.push(unreadable_notice(&unreadable));
        details.unreadable_paths = Some(unreadable.into_iter().map(|(path, _)| path).collect());
    }
    ToolOutput::text(with_notices(body, &notices)).with_facts(details)
}

#[cfg(test)]
#[path = "find_tests.rs"]
mod tests;
