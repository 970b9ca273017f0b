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
//! | [`accounting`] | every call of the file replayed, listed or on another branch |
//! | [`lines`] | the streaming line reader and the branch to follow |
//! | [`paths`] | the working directory as `${workspace}` |
//! | [`pi`] | pi's session format |
//! | [`claude`] | Claude Code's transcripts |
//! | [`codex`] | Codex CLI's rollouts |
//! | [`write`](mod@write) | scenario files, sidecars and comments |
//! | [`spool`] | large argument texts kept on disk while a session is read |
//! | [`server_suite`] | a suite made from an MCP server's tools/list (`harness init --mcp`) |
//! | [`traffic`] | the traffic `harness record` relayed, as a scenario |

pub(crate) mod accounting;
pub(crate) mod claude;
pub(crate) mod codex;
pub(crate) mod detect;
pub(crate) mod edits;
pub(crate) mod gemini;
pub(crate) mod lines;
pub(crate) mod out;
pub(crate) mod paths;
pub(crate) mod pi;
pub(crate) mod rerun;
pub(crate) mod server_suite;
pub(crate) mod session;
pub(crate) mod shell;
pub(crate) mod spool;
pub(crate) mod traffic;
pub(crate) mod write;
pub(crate) mod yaml;

use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;

use out::OutDir;
pub(crate) use session::Recording;
use session::Sidecars;

use crate::run::env::git::StartCommit;
pub(crate) use write::Imported;

/// A session format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// pi's session files.
    Pi,
    /// Claude Code's transcripts.
    Claude,
    /// Gemini CLI's session files.
    Gemini,
    /// Codex CLI's rollout files.
    Codex,
}

/// What to import and how.
#[derive(Clone, Debug)]
pub(crate) struct ImportOptions {
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
    /// A repository and revision checked out as the workspace; no
    /// revision: the last commit before the session began
    /// ([`crate::run::env::git::commit_before`]).
    pub git: Option<(PathBuf, Option<String>)>,
    /// Mark whole-file reads to write their recorded text first.
    pub sync_reads: bool,
    /// Seconds given to bash calls recorded without a timeout.
    pub bash_timeout: f64,
    /// Import Claude Code's side chains (sub-agents) as scenarios of their
    /// own.
    pub sidechains: bool,
    /// Replace what an earlier import left in the output directory instead
    /// of refusing to overwrite it.
    pub force: bool,
}

/// What an import did.
#[derive(Debug)]
pub(crate) struct ImportReport {
    /// The session as read (its main chain).
    pub recording: Recording,
    /// The commit chosen for `--git` without `--rev`.
    pub start_commit: Option<StartCommit>,
    /// The files written.
    pub written: Imported,
    /// The side chains imported: each one's recording and files.
    pub sides: Vec<(Recording, Imported)>,
    /// What was in the output directory and was replaced (with `force`),
    /// relative to it; folders end in `/`.
    pub replaced: Vec<String>,
    /// Of those, the earlier import's scenario files this one did not
    /// write again, removed.
    pub removed: Vec<String>,
    /// What became of every call in the file.
    pub accounting: accounting::Accounting,
    /// The session began in a subdirectory of the `--git` repository: the
    /// repository's top as recorded, and the subdirectory below it.
    pub started_in: Option<(String, String)>,
}

/// Imports one session.
pub(crate) fn import(options: &ImportOptions) -> Result<ImportReport, String> {
    let path = &options.session;
    session_file(path)?;
    if let Some(dir) = &options.workspace {
        check_workspace_dir(dir, &options.out)?;
    }
    match &options.git {
        // What the run would find out at every replay, said now.
        Some((repo, Some(rev))) => {
            crate::run::env::git::resolve_rev(repo, rev)
                .map_err(|err| format!("--git {} --rev {rev}: {err}", repo.display()))?;
        }
        Some((repo, None)) => {
            crate::run::env::git::resolve_rev(repo, "HEAD")
                .map_err(|err| format!("--git {}: {err}", repo.display()))?;
        }
        None => {}
    }
    detect::check(
        path,
        match options.format {
            Format::Pi => detect::Looks::Pi,
            Format::Claude => detect::Looks::Claude,
            Format::Gemini => detect::Looks::Gemini,
            Format::Codex => detect::Looks::Codex,
        },
    )?;
    let tree = match options.format {
        Format::Gemini | Format::Codex => lines::Tree::default(),
        _ => lines::tree(path)?,
    };
    let branch = tree.branch(options.branch.as_deref())?;
    let all_sides = match options.format {
        Format::Claude => tree.sidechains(),
        _ => Vec::new(),
    };
    let stem = stem_of(path);
    let source = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let plan = rerun::Plan {
        stem: &stem,
        source: &source,
        sides: if options.sidechains {
            all_sides.len()
        } else {
            0
        },
        fixture: options.workspace.is_some(),
    };
    let earlier = rerun::survey(&options.out, &plan)?;
    if !options.force && !earlier.is_empty() {
        return Err(rerun::refusal(&options.out, &earlier.names()));
    }
    let made = options.out.symlink_metadata().is_err();
    let out = Arc::new(
        OutDir::open(&options.out)
            .map_err(|err| format!("cannot create {}: {err}", options.out.display()))?,
    );
    let aside = rerun::Aside::set(&out, &earlier.sidecars)?;
    // A session begun in a subdirectory of the `--git` repository.
    let top = match (&options.git, tree.first_cwd()) {
        (Some((repo, rev)), Some(cwd)) => {
            crate::run::env::git::session_root(repo, rev.as_deref(), cwd)
        }
        _ => None,
    };
    let read =
        read_session(options, branch, all_sides, &out, &plan, top.as_deref()).and_then(|read| {
            // The scenario files are known once the session is read: one of
            // them may be in the way although no earlier import wrote it.
            let in_the_way =
                rerun::in_the_way(&out, &scenario_files(&read, &plan, options), &earlier);
            if options.force || in_the_way.is_empty() {
                Ok(read)
            } else {
                Err(rerun::refusal(&options.out, &in_the_way))
            }
        });
    let read = read.and_then(|(recording, sides)| {
        let start = match &options.git {
            Some((repo, None)) => Some(start_commit(repo, &recording)?),
            _ => None,
        };
        Ok((recording, sides, start))
    });
    let (recording, side_recordings, start_commit) = match read {
        Ok(read) => read,
        Err(err) => {
            rerun::undo(&out, &plan, aside, made.then_some(options.out.as_path()));
            return Err(err);
        }
    };
    aside.discard(&out)?;
    let started_in = top.and_then(|top| {
        let sub = paths::subdir_of(recording.cwd.as_deref()?, &top)?.to_owned();
        Some((top, sub))
    });
    let accounting = {
        let in_file = match options.format {
            Format::Gemini | Format::Codex => recording.in_file.calls(),
            _ => tree.calls(),
        };
        let mut recordings = vec![&recording];
        recordings.extend(side_recordings.iter());
        accounting::account(in_file, &recordings)
    };
    let workspace = if let Some(dir) = &options.workspace {
        let target = format!("fixtures/{stem}");
        let shown = out.show(&target);
        if earlier.fixture.is_some() {
            out.remove(&target)
                .map_err(|err| format!("cannot remove {}: {err}", shown.display()))?;
        }
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
        let rev = match (rev, &start_commit) {
            (Some(rev), _) => rev.as_str(),
            (None, Some(start)) => start.commit.as_str(),
            (None, None) => unreachable!("a start commit is chosen when --rev is not given"),
        };
        json!({ "git_checkout": { "repo": repo.display().to_string(), "rev": rev } })
    } else {
        serde_json::Value::Null
    };
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
        let written = write::write(&rec, &out, &write_options(plan.chain(n + 1)))?;
        sides.push((rec, written));
    }
    // The earlier import's scenarios this one did not write again.
    let mut removed = Vec::new();
    for name in &earlier.scenarios {
        let rewritten = written.scenarios.contains(name)
            || sides.iter().any(|(_, w)| w.scenarios.contains(name));
        if !rewritten {
            out.remove(name)
                .map_err(|err| format!("cannot remove {}: {err}", out.show(name).display()))?;
            removed.push(name.clone());
        }
    }
    Ok(ImportReport {
        recording,
        start_commit,
        written,
        sides,
        replaced: earlier.names(),
        removed,
        accounting,
        started_in,
    })
}

/// The commit `--git REPO` without `--rev` checks out: the last one before
/// the session's first recorded time, on the branch it recorded if `REPO`
/// has it.
fn start_commit(repo: &Path, recording: &Recording) -> Result<StartCommit, String> {
    let started = recording.started.as_deref().ok_or_else(|| {
        format!(
            "--git {}: the session records no time, so its start commit is unknown; give --rev",
            repo.display()
        )
    })?;
    crate::run::env::git::commit_before(repo, recording.git_branch.as_deref(), started)
        .map_err(|err| format!("--git {}: {err}", repo.display()))
}

/// The session file must be a regular file (symlinks followed).
fn session_file(path: &Path) -> Result<(), String> {
    match std::fs::metadata(path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("{}: no such file", path.display()))
        }
        Err(err) => Err(format!("cannot read {}: {err}", path.display())),
        Ok(meta) => match crate::scenario::text_file::not_regular(meta.file_type()) {
            None => Ok(()),
            Some(what) => Err(format!("{} is {what}, not a session file", path.display())),
        },
    }
}

/// A session read: its main chain, and the side chains imported.
type Read = (Recording, Vec<Recording>);

/// Reads the session of `options` along `branch` (large texts into
/// sidecars in `out` as they are read).
fn read_session(
    options: &ImportOptions,
    branch: lines::Branch,
    all_sides: Vec<lines::Branch>,
    out: &Arc<OutDir>,
    plan: &rerun::Plan<'_>,
    top: Option<&str>,
) -> Result<Read, String> {
    let path = &options.session;
    let sidecars = |n: usize| {
        let mut sidecars = Sidecars::new(Arc::clone(out), format!("{}.recorded", plan.chain(n)));
        sidecars.originals = options.sync_reads;
        sidecars
    };
    Ok(match options.format {
        Format::Pi => (
            pi::read(path, &branch, options.bash_timeout, sidecars(0), top)?,
            Vec::new(),
        ),
        Format::Gemini => (
            gemini::read(path, options.bash_timeout, sidecars(0))?,
            Vec::new(),
        ),
        Format::Codex => {
            let rollout = codex::read(path, options.bash_timeout, sidecars(0))?;
            let mut recording = rollout.recording;
            for (line, id, tool) in &rollout.calls {
                recording.in_file.add(*line, id, tool);
            }
            (recording, Vec::new())
        }
        Format::Claude => {
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
                    top,
                },
            )?;
            let main = recs.remove(0);
            (main, recs)
        }
    })
}

/// The scenario files an import of `read` writes.
fn scenario_files(read: &Read, plan: &rerun::Plan<'_>, options: &ImportOptions) -> Vec<String> {
    let names = |rec: &Recording, n: usize| {
        write::files(
            rec,
            &write::WriteOptions {
                stem: plan.chain(n),
                split: options.split,
                ..write::WriteOptions::default()
            },
        )
    };
    let (main, sides) = read;
    let mut files = names(main, 0);
    for (n, rec) in sides.iter().enumerate() {
        files.extend(names(rec, n + 1));
    }
    files
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
