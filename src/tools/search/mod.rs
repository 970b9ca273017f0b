//! The search tools and what they share: `grep` and `find` walk the
//! workspace with one walker and one set of ignore rules (D7, D9); `ls`
//! shares their limit and notice helpers.
//!
//! ```text
//! ignore.rs   the ignore-rule hierarchy: .ignore, .gitignore, info/exclude
//! walk.rs     the parallel walker over FsOps's directory handles, sorted
//!             by construction
//! bound.rs    the bound of a limited search, past which the walk prunes
//! glob.rs     grep's glob filter (ripgrep) and find's pattern (fd)
//! grep.rs     the grep tool
//! find.rs     the find tool
//! mod.rs      limits, the walk of a search call, notices after the output
//! ```

mod bound;
pub(crate) mod find;
mod glob;
pub(crate) mod grep;
mod ignore;
mod walk;

use std::path::Path;
use std::path::PathBuf;

use super::contract::ToolContext;
use super::error::ToolError;
use super::fs_error::io_failure;
use super::fs_error::shown;
use super::visible::show_path;
use super::workspace::Workspace;
use walk::Visitor;
use walk::Walk;
use walk::WalkOptions;

/// How many unreadable paths a notice names.
const NAMED_UNREADABLE: usize = 3;

/// A limit argument as a count: absent → `default`. The schemas refuse
/// values below 1; should one arrive anyway (a tool called without the
/// registry), it counts as 1.
pub(crate) fn effective_limit(arg: Option<f64>, default: usize) -> usize {
    match arg {
        None => default.max(1),
        // `as` saturates: NaN → 0, huge → usize::MAX.
        Some(value) => (value as usize).max(1),
    }
}

/// Walks `root` (a search tool's resolved directory) with the workspace's
/// ignore rules, stopping when the call is cancelled; errors are worded for
/// the model. Each entry goes to a per-thread visitor as it is found
/// ([`walk::walk`]), which says what is a result; `keep_file`, a name
/// glob, rejects files before their ignore rules are matched.
fn search_walk<'v, T: Send>(
    ctx: &ToolContext,
    root: &Path,
    include_dirs: bool,
    display: &str,
    bound: Option<&bound::Bound>,
    keep_file: Option<walk::KeepFile<'_>>,
    visitor: &(dyn Fn() -> Visitor<'v, T> + Sync),
) -> Result<Walk<T>, ToolError> {
    let options = WalkOptions {
        respect_ignore_files: true,
        include_dirs,
        max_depth: None,
        ignore_base: ignore_base(ctx.workspace.root(), root),
        cancel: Some(ctx.cancel.clone()),
    };
    walk::walk(
        ctx.workspace.fs().as_ref(),
        root,
        &options,
        bound,
        keep_file,
        visitor,
    )
    .map_err(|err| {
        if ctx.cancel.is_cancelled() {
            ToolError::cancelled()
        } else {
            io_failure("search", display, &err)
        }
    })
}

/// The directory whose ignore files apply above `root`: the workspace root
/// when `root` is inside it.
fn ignore_base(workspace_root: &Path, root: &Path) -> Option<PathBuf> {
    root.starts_with(workspace_root)
        .then(|| workspace_root.to_path_buf())
}

/// How a notice names a path the walk could not read: relative to the
/// search directory when below it, else as the workspace shows it.
fn shown_path(workspace: &Workspace, search_root: &Path, path: &Path) -> String {
    match path.strip_prefix(search_root) {
        Ok(rel) if !rel.as_os_str().is_empty() => show_path(rel).into_owned(),
        _ => workspace.display(path),
    }
}

/// `body`, then the notices in brackets after a blank line, joined by
/// `. `; just `body` when there are none.
pub(crate) fn with_notices(body: impl Into<String>, notices: &[String]) -> String {
    let mut body = body.into();
    if !notices.is_empty() {
        body.push_str("\n\n[");
        body.push_str(&notices.join(". "));
        body.push(']');
    }
    body
}

/// The notice for paths that could not be read (D8): each `(path, why)`
/// with its reason in plain words, the workspace root by name.
fn unreadable_notice(paths: &[(String, String)]) -> String {
    let named: Vec<String> = paths
        .iter()
        .take(NAMED_UNREADABLE)
        .map(|(path, why)| format!("{} ({why})", shown(path)))
        .collect();
    let more = paths.len().saturating_sub(NAMED_UNREADABLE);
    let list = if more > 0 {
        format!("{} and {more} more", named.join(", "))
    } else {
        named.join(", ")
    };
    let (count, verb, next) = match paths.len() {
        1 => (
            "1 path".to_owned(),
            "was",
            "If it matters, look at it with bash (ls -l)",
        ),
        n => (
            format!("{n} paths"),
            "were",
            "If they matter, look at them with bash (ls -l)",
        ),
    };
    format!("{count} could not be read and {verb} skipped: {list}. {next}")
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn effective_limits_and_unreadable_notices() {
        assert_eq!(effective_limit(None, 100), 100);
        assert_eq!(effective_limit(Some(0.0), 100), 1);
        assert_eq!(effective_limit(Some(-5.0), 100), 1);
        assert_eq!(effective_limit(Some(7.0), 100), 7);
        assert_eq!(effective_limit(Some(1e30), 100), usize::MAX);
        let denied = |path: &str| (path.to_owned(), "permission denied".to_owned());
        assert_eq!(
            unreadable_notice(&[denied("a")]),
            "1 path could not be read and was skipped: a (permission denied). If it matters, look \
             at it with bash (ls -l)"
        );
        assert_eq!(
            unreadable_notice(&[denied(".")]),
            "1 path could not be read and was skipped: the workspace root (permission denied). If \
             it matters, look at it with bash (ls -l)"
        );
        let five: Vec<(String, String)> = ["a", "b", "c", "d", "e"].map(denied).to_vec();
        assert_eq!(
            unreadable_notice(&five),
            "5 paths could not be read and were skipped: a (permission denied), b (permission \
             denied), c (permission denied) and 2 more. If they matter, look at them with bash \
             (ls -l)"
        );
    }
}
