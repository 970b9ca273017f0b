//! The importers: recorded agent sessions turned into scenario files
//! (docs/replay.md). A session is read as a stream, line by line
//! ([`lines`]), along one branch of its tree; its tool calls are mapped
//! onto this harness's tools with the session's working directory as the
//! workspace ([`paths`]); and each call is written with the result
//! recorded for it ([`write`](mod@write)), so that a run can measure how today's
//! results differ.
//!
//! | module | holds |
//! | --- | --- |
//! | [`session`] | what any importer makes of a session |
//! | [`lines`] | the streaming line reader and the branch to follow |
//! | [`paths`] | the working directory as `${workspace}` |
//! | [`pi`] | pi's session format |
//! | [`claude`] | Claude Code's transcripts |
//! | [`write`](mod@write) | scenario files, sidecars and comments |

pub mod claude;
pub mod detect;
pub mod edits;
pub mod gemini;
pub mod lines;
pub mod out;
pub mod paths;
pub mod pi;
pub mod session;
pub mod shell;
pub mod write;
pub mod yaml;

use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;

use out::OutDir;
pub use session::Recording;
use session::Sidecars;
pub use write::Imported;

/// A session format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// pi's session files.
    Pi,
    /// Claude Code's transcripts.
    Claude,
    /// Gemini CLI's session files.
    Gemini,
}

/// What to import and how.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// The format.
    pub format: Format,
    /// The session file.
    pub session: PathBuf,
    /// The directory the scenarios are written into.
    pub out: PathBuf,
    /// The entry whose branch to follow (default: the last entry's).
    pub branch: Option<String>,
    /// Calls per scenario.
    pub split: Option<usize>,
    /// A directory copied as the workspace's fixture.
    pub workspace: Option<PathBuf>,
    /// A repository and revision checked out as the workspace.
    pub git: Option<(PathBuf, String)>,
    /// Mark whole-file reads to write their recorded text first.
    pub sync_reads: bool,
    /// Seconds given to bash calls recorded without a timeout.
    pub bash_timeout: f64,
    /// Import Claude Code's side chains (sub-agents) as scenarios of their
    /// own.
    pub sidechains: bool,
}

/// What an import did.
#[derive(Debug)]
pub struct ImportReport {
    /// The session as read (its main chain).
    pub recording: Recording,
    /// The files written.
    pub written: Imported,
    /// The side chains imported: each one's recording and files.
    pub sides: Vec<(Recording, Imported)>,
}

/// Imports one session.
pub fn import(options: &ImportOptions) -> Result<ImportReport, String> {
    let path = &options.session;
    if !path.is_file() {
        return Err(format!("{} is not a session file", path.display()));
    }
    if let Some(dir) = &options.workspace {
        check_workspace_dir(dir, &options.out)?;
    }
    if let Some((repo, rev)) = &options.git {
        // What the run would find out at every replay, said now.
        crate::scenario::workspace::resolve_rev(repo, rev)
            .map_err(|err| format!("--git {} --rev {rev}: {err}", repo.display()))?;
    }
    detect::check(
        path,
        match options.format {
            Format::Pi => detect::Looks::Pi,
            Format::Claude => detect::Looks::Claude,
            Format::Gemini => detect::Looks::Gemini,
        },
    )?;
    let tree = match options.format {
        Format::Gemini => lines::Tree::default(),
        _ => lines::tree(path)?,
    };
    let branch = tree.branch(options.branch.as_deref())?;
    let out = Arc::new(
        OutDir::open(&options.out)
            .map_err(|err| format!("cannot create {}: {err}", options.out.display()))?,
    );
    let stem = stem_of(path);
    let side_stem = |n: usize| format!("{stem}-side-{n}");
    let sidecars = |n: usize| {
        let name = if n == 0 { stem.clone() } else { side_stem(n) };
        let mut sidecars = Sidecars::new(Arc::clone(&out), format!("{name}.recorded"));
        sidecars.originals = options.sync_reads;
        sidecars
    };
    let (recording, side_recordings) = match options.format {
        Format::Pi => (
            pi::read(path, &branch, options.bash_timeout, sidecars(0))?,
            Vec::new(),
        ),
        Format::Gemini => (
            gemini::read(path, options.bash_timeout, sidecars(0))?,
            Vec::new(),
        ),
        Format::Claude => {
            let all_sides = tree.sidechains();
            let side_count = all_sides.len();
            let mut recs = claude::read(
                path,
                claude::Options {
                    main: branch,
                    sides: if options.sidechains {
                        all_sides
                    } else {
                        Vec::new()
                    },
                    side_count,
                    bash_timeout: options.bash_timeout,
                    sidecars: &sidecars,
                },
            )?;
            let main = recs.remove(0);
            (main, recs)
        }
    };
    let workspace = if let Some(dir) = &options.workspace {
        let target = format!("fixtures/{stem}");
        let shown = out.show(&target);
        out.subdir(&target)
            .and_then(|to| copy_tree(dir, &to))
            .map_err(|err| {
                format!(
                    "cannot copy {} to {}: {err}",
                    dir.display(),
                    shown.display()
                )
            })?;
        out.write_new(
            "harness.yaml",
            b"# Imported sessions (docs/replay.md).\nfixtures: fixtures\n",
        )
        .map_err(|err| format!("cannot write {}: {err}", out.show("harness.yaml").display()))?;
        json!({ "fixture": stem })
    } else if let Some((repo, rev)) = &options.git {
        let repo = repo
            .canonicalize()
            .map_err(|err| format!("--git {}: {err}", repo.display()))?;
        json!({ "git_checkout": { "repo": repo.display().to_string(), "rev": rev } })
    } else {
        serde_json::Value::Null
    };
    let source = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let write_options = |stem: String| write::WriteOptions {
        stem,
        source: source.clone(),
        split: options.split,
        workspace: workspace.clone(),
        sync_reads: options.sync_reads,
    };
    let written = write::write(&recording, &out, &write_options(stem.clone()))?;
    let mut sides = Vec::new();
    for (n, rec) in side_recordings.into_iter().enumerate() {
        let written = write::write(&rec, &out, &write_options(side_stem(n + 1)))?;
        sides.push((rec, written));
    }
    Ok(ImportReport {
        recording,
        written,
        sides,
    })
}

/// `--workspace DIR` must be a directory that does not hold the output
/// directory (copying it into itself would never end).
fn check_workspace_dir(dir: &Path, out: &Path) -> Result<(), String> {
    let dir = dir
        .canonicalize()
        .map_err(|err| format!("--workspace {}: {err}", dir.display()))?;
    if !dir.is_dir() {
        return Err(format!("--workspace {}: not a directory", dir.display()));
    }
    // The output directory may not exist yet: its nearest existing
    // ancestor decides where it is.
    let mut probe = out.to_path_buf();
    let out_real = loop {
        match probe.canonicalize() {
            Ok(real) => break real,
            Err(_) => match probe.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => probe = parent.to_path_buf(),
                _ => break std::env::current_dir().unwrap_or_default(),
            },
        }
    };
    if out_real.starts_with(&dir) {
        return Err(format!(
            "-o {} is inside --workspace {}; write the scenarios somewhere else",
            out.display(),
            dir.display()
        ));
    }
    Ok(())
}

/// The session file's stem, in letters, digits, `-` and `_`.
fn stem_of(path: &Path) -> String {
    let stem: String = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if stem.is_empty() {
        "session".to_owned()
    } else {
        stem
    }
}

/// Copies a directory tree into `to` (below the output directory's
/// handle: no link there is followed); symlinks are copied as symlinks,
/// never followed.
fn copy_tree(from: &Path, to: &OutDir) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let name = PathBuf::from(entry.file_name());
        if kind.is_symlink() {
            to.symlink(&std::fs::read_link(entry.path())?, &name)?;
        } else if kind.is_dir() {
            copy_tree(&entry.path(), &to.subdir(&name)?)?;
        } else if kind.is_file() {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = entry.metadata()?.permissions().mode() & 0o777;
            to.write_mode(&name, &std::fs::read(entry.path())?, mode)?;
        }
    }
    Ok(())
}
