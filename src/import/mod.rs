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
pub mod lines;
pub mod paths;
pub mod pi;
pub mod session;
pub mod write;

use std::path::Path;
use std::path::PathBuf;

use serde_json::json;

pub use session::Recording;
use session::Sidecars;
pub use write::Written;

/// A session format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// pi's session files.
    Pi,
    /// Claude Code's transcripts.
    Claude,
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
}

/// What an import did.
#[derive(Clone, Debug)]
pub struct ImportReport {
    /// The session as read.
    pub recording: Recording,
    /// The files written.
    pub written: Written,
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
    let branch = lines::branch(path, options.branch.as_deref())?;
    std::fs::create_dir_all(&options.out)
        .map_err(|err| format!("cannot create {}: {err}", options.out.display()))?;
    let stem = stem_of(path);
    let sidecars = Sidecars {
        out: options.out.clone(),
        dir: format!("{stem}.recorded"),
        written: 0,
    };
    let recording = match options.format {
        Format::Pi => pi::read(path, &branch, options.bash_timeout, sidecars)?,
        Format::Claude => claude::read(path, &branch, options.bash_timeout, sidecars)?,
    };
    let workspace = if let Some(dir) = &options.workspace {
        let target = options.out.join("fixtures").join(&stem);
        copy_tree(dir, &target).map_err(|err| {
            format!(
                "cannot copy {} to {}: {err}",
                dir.display(),
                target.display()
            )
        })?;
        let suite = options.out.join("harness.yaml");
        if !suite.exists() {
            std::fs::write(
                &suite,
                "# Imported sessions (docs/replay.md).\nfixtures: fixtures\n",
            )
            .map_err(|err| format!("cannot write {}: {err}", suite.display()))?;
        }
        json!({ "fixture": stem })
    } else if let Some((repo, rev)) = &options.git {
        let repo = repo
            .canonicalize()
            .map_err(|err| format!("--git {}: {err}", repo.display()))?;
        json!({ "git_checkout": { "repo": repo.display().to_string(), "rev": rev } })
    } else {
        serde_json::Value::Null
    };
    let written = write::write(
        &recording,
        &options.out,
        &write::WriteOptions {
            stem,
            source: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            split: options.split,
            workspace,
            sync_reads: options.sync_reads,
        },
    )?;
    Ok(ImportReport { recording, written })
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

/// Copies a directory tree; symlinks are copied as symlinks, never
/// followed.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_symlink() {
            let link = std::fs::read_link(entry.path())?;
            let _ = std::fs::remove_file(&target);
            std::os::unix::fs::symlink(link, &target)?;
        } else if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}
