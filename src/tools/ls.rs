//! The `ls` tool (§ls, D19).
//!
//! Lists one directory: every entry, dotfiles included, directories (and
//! symlinks to directories) suffixed with `/`. Sorted case-insensitively
//! with ties broken by byte order (D19), so `A.txt` comes right before
//! `a.txt` on every machine and locale.
//!
//! Differences from pi: the order is D19's, not the locale's collation; an
//! entry whose symlink target cannot be resolved (a broken symlink, or one
//! into a directory we may not enter) is **listed** plainly, without `/`,
//! and counted in `details.unresolved_symlinks` (pi drops it silently,
//! §quirks 14); `limit` must be at least 1, like every limit (pi returns
//! `(empty directory)` for `limit: 0`); the limit notice says how many entries there are; a missing
//! path is an error with "did you mean" (D6).

use serde::Deserialize;
use serde::Serialize;
use serde_json::json;

use super::contract::ExecutionMode;
use super::contract::Limits;
use super::contract::Tool;
use super::contract::ToolContext;
use super::contract::ToolOutput;
use super::contract::ToolSpec;
use super::contract::object_schema;
use super::error::ToolError;
use super::facts::ErrorClass;
use super::facts::ErrorKind;
use super::facts::ToolDetails;
use super::facts::same_details;
use super::fs_error::io_failure;
use super::ops::FileKind;
use super::search::effective_limit;
use super::search::with_notices;
use super::task::run_blocking;
use super::truncate::Truncation;
use super::truncate::format_size;
use super::truncate::truncate_head;
use super::visible::show_name;
use super::workspace::Lookup;

/// The text for a directory without entries.
pub(super) const EMPTY_DIRECTORY: &str = "(empty directory)";

/// The `ls` tool.
#[derive(Clone, Copy, Debug, Default)]
pub struct LsTool;

/// Arguments of `ls`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LsArgs {
    /// The directory to list (default: the workspace root).
    pub path: Option<String>,
    /// Maximum number of entries (at least 1: the schema says so).
    pub limit: Option<f64>,
}

impl Tool for LsTool {
    type Args = LsArgs;

    fn spec(&self, limits: &Limits) -> ToolSpec {
        let limit = limits.ls_limit;
        let max_bytes = format_size(limits.max_bytes);
        ToolSpec {
            name: "ls".into(),
            label: "List".into(),
            description: format!(
                "List the entries of one directory, sorted alphabetically (case-insensitive), \
                 with / after directory names; dotfiles are included. Stops at {limit} entries \
                 (change with limit) or {max_bytes} of output, whichever comes first."
            ),
            prompt_snippet: "List directory contents".to_owned(),
            prompt_guidelines: Vec::new(),
            parameters: object_schema(
                json!({
                    "path": {
                        "type": "string",
                        "description": "Directory to list, relative to the workspace root (default: the workspace root)"
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "description": format!("Maximum number of entries to return (default: {limit})")
                    }
                }),
                &[],
            ),
            execution_mode: ExecutionMode::Parallel,
        }
    }

    async fn execute(&self, args: LsArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        run_blocking("ls", args, ctx, ls_blocking).await
    }
}

/// What a call of `ls` can show, as `harness run --coverage` counts it
/// (docs/reports.md, "Coverage").
pub(super) const BEHAVIOURS: &[&str] = &[
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
];

/// `details` of a listing.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LsDetails {
    /// Entries in the directory.
    pub entries: usize,
    /// The limit, when more entries than it were there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_limit_reached: Option<usize>,
    /// What the byte cap cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncation: Option<Truncation>,
    /// Symlinks listed whose target could not be looked up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unresolved_symlinks: Option<usize>,
}

impl ToolDetails for LsDetails {
    fn truncation(&self) -> Option<&Truncation> {
        self.truncation.as_ref()
    }

    fn same(&self, other: &dyn ToolDetails) -> bool {
        same_details(self, other)
    }
}

/// D19's order: case-insensitive, ties broken by the names' bytes.
#[cfg(test)]
fn compare_names(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    sort_key(a).cmp(&sort_key(b))
}

/// The key behind [`compare_names`]: the lower-cased name, then its bytes.
fn sort_key(name: &[u8]) -> (String, Vec<u8>) {
    (String::from_utf8_lossy(name).to_lowercase(), name.to_vec())
}

fn ls_blocking(args: &LsArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let raw = args.path.as_deref().unwrap_or(".");
    let (resolved, meta) = ctx
        .workspace
        .resolve_existing(raw, Lookup::new("Path", "list"))?;
    let fs = ctx.workspace.fs().as_ref();
    let display = resolved.display.clone();
    if !meta.is_dir() {
        return Err(ToolError::failure(
            ErrorKind::Io(ErrorClass::NotADirectory),
            format!("Not a directory: {display}. Use read to view a file; ls lists directories."),
        ));
    }
    let mut entries = fs
        .read_dir(&resolved.real)
        .map_err(|err| io_failure("list", &display, &err))?;
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::cancelled());
    }
    let limit = effective_limit(args.limit, ctx.limits.ls_limit);
    let total = entries.len();
    if total == 0 {
        return ToolOutput::text(EMPTY_DIRECTORY).with_facts(LsDetails::default());
    }
    entries.sort_by_cached_key(|entry| sort_key(entry.name.as_encoded_bytes()));
    entries.truncate(limit);

    let mut unresolved = 0usize;
    let mut lines = Vec::with_capacity(entries.len());
    for entry in &entries {
        // One line is one entry: controls as pictures, other bytes `\xNN`.
        let name = show_name(entry.name.as_encoded_bytes());
        let is_dir = match entry.kind {
            FileKind::Dir => true,
            FileKind::File => false,
            // Symlinks (and entries whose kind the listing did not say)
            // are followed to decide on the `/`.
            FileKind::Symlink | FileKind::Other => {
                match fs.metadata(&resolved.real.join(&entry.name)) {
                    Ok(meta) => meta.is_dir(),
                    Err(_) => {
                        unresolved += usize::from(entry.kind == FileKind::Symlink);
                        false
                    }
                }
            }
        };
        lines.push(if is_dir {
            format!("{name}/")
        } else {
            name.into_owned()
        });
    }
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::cancelled());
    }

    let mut details = LsDetails {
        entries: total,
        ..LsDetails::default()
    };
    let mut notices = Vec::new();
    let joined = lines.join("\n");
    let cut = truncate_head(&joined, ctx.limits.bytes_only());
    if total > limit {
        details.entry_limit_reached = Some(limit);
        notices.push(format!(
            "{limit} entries limit reached ({total} entries). Use limit={} for more",
            limit.saturating_mul(2)
        ));
    }
    if cut.facts.truncated {
        notices.push(format!(
            "{} output limit reached: showing {} of {} entries. Use find with a pattern, or \
             ls a subdirectory, to see the rest",
            format_size(ctx.limits.max_bytes),
            cut.facts.output_lines,
            cut.facts.total_lines
        ));
        details.truncation = Some(cut.facts.clone());
    }
    details.unresolved_symlinks = (unresolved > 0).then_some(unresolved);
    ToolOutput::text(with_notices(cut.content, &notices)).with_facts(details)
}

#[cfg(test)]
#[path = "ls_tests.rs"]
mod tests;
