//! git for a scenario's workspace: a repository checked out at a revision
//! (`git_checkout`), `git init` (`git: true`), and for an import, the
//! commit a session started from. git runs only on the workspace: every
//! git started here has the variables that name another repository
//! (`GIT_DIR`, `GIT_WORK_TREE` …) removed, and before git runs in the
//! workspace its `.git`, if there is one, must be a plain directory with
//! no symlink in it (a `.git` symlink or `gitdir:` file would make git
//! work where it points, outside the workspace).

use std::io;
use std::path::Path;
use std::process::Command;

use crate::scenario::load::GitCheckout;
use crate::tools::ops::ConfinedFs;
use crate::tools::ops::FileKind;
use crate::tools::ops::FsOps;

/// The variables that tell git where a repository or its parts are: none
/// of them reaches a git the builder runs.
const GIT_LOCATION_VARS: [&str; 8] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
];

/// `git` that finds its repository only where it is told to, and never
/// asks for a password.
fn git_command() -> Command {
    let mut command = Command::new("git");
    for var in GIT_LOCATION_VARS {
        command.env_remove(var);
    }
    command.env("GIT_TERMINAL_PROMPT", "0");
    command
}

/// Runs `command` (git, doing `what`): its standard output, trimmed, or
/// what went wrong.
fn run_git(mut command: Command, what: &str) -> Result<String, String> {
    let output = command
        .output()
        .map_err(|err| format!("{what} needs git on PATH, but running it failed: {err}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).trim().to_owned())
    }
}

/// The commit that `rev` (a commit, tag or branch, or any revision git
/// reads) names in `repo`, which must itself be a git repository (not a
/// directory inside one): what `git_checkout` checks out, and what
/// `harness import --git REPO --rev REV` checks before it writes anything.
pub(crate) fn resolve_rev(repo: &Path, rev: &str) -> Result<String, String> {
    let git = Repo::open(repo)?;
    git.commit_of(rev).ok_or_else(|| {
        format!(
            "`{rev}` names no commit in {}; give a commit, tag or branch of that repository \
             (`git -C {} log --all --oneline` lists them)",
            repo.display(),
            repo.display()
        )
    })
}

/// The top of the repository as the machine that recorded a session saw
/// it, when the session's working directory `cwd` was a subdirectory of
/// it: `cwd` is below `repo` itself (the session was recorded here), or
/// `cwd` names `repo`'s directory followed by a directory `repo` has at
/// `rev` (default `HEAD`), the last time it names it
/// (`/home/u/proj/crates/cli` with `repo` a clone called `proj` that has
/// `crates/cli`). `None` when `cwd` is the top itself or neither holds.
pub(crate) fn session_root(repo: &Path, rev: Option<&str>, cwd: &str) -> Option<String> {
    let git = Repo::open(repo).ok()?;
    let cwd = cwd.trim_end_matches('/');
    if !cwd.starts_with('/') {
        return None;
    }
    let real = git.real.to_str()?;
    if let Some(rest) = cwd.strip_prefix(real)
        && rest.starts_with('/')
    {
        return Some(real.to_owned());
    }
    let name = git.real.file_name()?.to_str()?;
    let parts: Vec<&str> = cwd.split('/').filter(|p| !p.is_empty()).collect();
    let at = parts.iter().rposition(|p| *p == name)?;
    let sub = parts.get(at + 1..).filter(|s| !s.is_empty())?.join("/");
    let spec = format!("{}:{sub}", rev.unwrap_or("HEAD"));
    let kind = run_git(git.command(&["cat-file", "-t", &spec]), "`--git`").ok()?;
    (kind.trim() == "tree").then(|| format!("/{}", parts[..=at].join("/")))
}

/// The commit `harness import --git REPO` checks out when no `--rev` is
/// given: the last one before the session began.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StartCommit {
    /// The commit.
    pub commit: String,
    /// Where it was looked for: the session's branch (`refs/heads/B`, or
    /// `refs/remotes/origin/B`) or `HEAD`.
    pub searched: String,
    /// The branch the session recorded, when `repo` does not have it (then
    /// `HEAD` was searched).
    pub missing_branch: Option<String>,
}

/// The last commit of `branch` (else `HEAD`) in `repo` whose commit time is
/// before `started`, the session's first recorded time (RFC 3339, as
/// clients write it: `2026-01-10T03:45:54.863Z`).
pub(crate) fn commit_before(
    repo: &Path,
    branch: Option<&str>,
    started: &str,
) -> Result<StartCommit, String> {
    let git = Repo::open(repo)?;
    let before = git_time(started).ok_or_else(|| {
        format!(
            "the session's first time `{}` is not an RFC 3339 time (2026-01-10T03:45:54Z); give \
             --rev",
            started.escape_debug()
        )
    })?;
    let mut missing_branch = None;
    let mut searched = "HEAD".to_owned();
    if let Some(branch) = branch {
        let found = [
            format!("refs/heads/{branch}"),
            format!("refs/remotes/origin/{branch}"),
        ]
        .into_iter()
        .find(|r| git.commit_of(r).is_some());
        match found {
            Some(r) => searched = r,
            None => missing_branch = Some(branch.to_owned()),
        }
    }
    let commit = run_git(
        git.command(&[
            "rev-list",
            "-1",
            &format!("--before={before}"),
            "--end-of-options",
            &searched,
            "--",
        ]),
        "`--git`",
    )
    .ok()
    .filter(|c| !c.is_empty())
    .ok_or_else(|| {
        format!(
            "{} has no commit on {} older than the session ({before}); give --rev",
            repo.display(),
            searched.escape_debug()
        )
    })?;
    Ok(StartCommit {
        commit,
        searched,
        missing_branch,
    })
}

/// `started` as git reads a time without guessing (`2026-01-10 03:45:54
/// +0000`): RFC 3339 with whole seconds kept (`2026-01-10T03:45:54.863Z`,
/// `…+01:00`); `None` for anything else.
fn git_time(started: &str) -> Option<String> {
    let b = started.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        b.get(range.clone())
            .filter(|d| d.iter().all(u8::is_ascii_digit))
            .map(|_| &started[range])
    };
    let (year, month) = (digits(0..4)?, digits(5..7)?);
    let (day, hour, minute, second) = (
        digits(8..10)?,
        digits(11..13)?,
        digits(14..16)?,
        digits(17..19)?,
    );
    if b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let mut rest = &started[19..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let n = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        rest = &fraction[n..];
    }
    let zone = match rest.as_bytes() {
        [b'Z' | b'z'] => "+0000".to_owned(),
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2]
            if [h1, h2, m1, m2].iter().all(|d| d.is_ascii_digit()) =>
        {
            format!("{}{}{}", *sign as char, &rest[1..3], &rest[4..6])
        }
        _ => return None,
    };
    let in_range = |text: &str, low: u32, high: u32| {
        text.parse::<u32>().is_ok_and(|n| (low..=high).contains(&n))
    };
    (in_range(month, 1, 12)
        && in_range(day, 1, 31)
        && in_range(hour, 0, 23)
        && in_range(minute, 0, 59)
        && in_range(second, 0, 60))
    .then(|| format!("{year}-{month}-{day} {hour}:{minute}:{second} {zone}"))
}

/// A local repository git is run in.
struct Repo {
    real: std::path::PathBuf,
}

impl Repo {
    /// `repo`, which must itself be a git repository (not a directory
    /// inside one).
    fn open(repo: &Path) -> Result<Self, String> {
        let real = repo.canonicalize().map_err(|err| {
            format!(
                "the repository {} cannot be opened: {err}; give the path of a local git \
                 repository",
                repo.display()
            )
        })?;
        let git = Self { real };
        run_git(git.command(&["rev-parse", "--git-dir"]), "`git_checkout`").map_err(|err| {
            format!(
                "{} is not a git repository ({err}); give the path of a local clone",
                repo.display()
            )
        })?;
        Ok(git)
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = git_command();
        command.arg("-C").arg(&self.real).args(args);
        // Only `repo` itself, not a repository around it.
        if let Some(parent) = self.real.parent() {
            command.env("GIT_CEILING_DIRECTORIES", parent);
        }
        command
    }

    /// The commit `rev` names, if it names one.
    fn commit_of(&self, rev: &str) -> Option<String> {
        let commit = format!("{rev}^{{commit}}");
        run_git(
            self.command(&[
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                &commit,
            ]),
            "`git_checkout`",
        )
        .ok()
    }
}

/// Before git runs in the workspace (`why`): its `.git`, if any, is a
/// plain directory with no symlink anywhere below it.
pub(super) fn check_git_dir(fs: &ConfinedFs, why: &str) -> Result<(), String> {
    let git = fs.root().join(".git");
    let meta = match fs.symlink_metadata(&git) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(format!("cannot look at the workspace's `.git`: {err}")),
    };
    if meta.kind != FileKind::Dir {
        let what = match meta.kind {
            FileKind::Symlink => "a symlink",
            FileKind::File => "a file (a `gitdir:` file points git elsewhere)",
            _ => "a special file",
        };
        return Err(format!(
            "the workspace's `.git` (from the fixture or the scenario's files) is {what}, not a \
             directory: {why} would make git work where it points, outside the workspace; make \
             `.git` a plain directory, or leave it out"
        ));
    }
    let mut todo = vec![git];
    while let Some(dir) = todo.pop() {
        let entries = fs
            .read_dir(&dir)
            .map_err(|err| format!("cannot look inside the workspace's `.git`: {err}"))?;
        for entry in entries {
            let path = dir.join(&entry.name);
            match entry.kind {
                FileKind::Dir => todo.push(path),
                FileKind::Symlink => {
                    let rel = path.strip_prefix(fs.root()).unwrap_or(&path);
                    return Err(format!(
                        "`{}` (from the fixture or the scenario's files) is a symlink inside \
                         `.git`: {why} would make git follow it, maybe outside the workspace; \
                         remove it",
                        rel.display()
                    ));
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// A shared clone of the repository (its objects are borrowed, nothing is
/// copied) with the revision checked out, detached, in `dir`. The revision
/// is resolved in the repository first, so a branch that is not the
/// repository's default (the clone has it only as `origin/…`), a tag and a
/// commit all work.
pub(super) fn git_checkout(checkout: &GitCheckout, dir: &Path) -> Result<(), String> {
    let commit = resolve_rev(&checkout.repo, &checkout.rev)?;
    let mut clone = git_command();
    clone
        .args(["clone", "--quiet", "--shared", "--no-checkout", "--"])
        .arg(&checkout.repo)
        .arg(dir);
    run_git(clone, "`git_checkout`")
        .map_err(|err| format!("cloning {} failed: {err}", checkout.repo.display()))?;
    let fs = ConfinedFs::new(dir)
        .map_err(|err| format!("cannot open the workspace {}: {err}", dir.display()))?;
    check_git_dir(&fs, "`git_checkout`")?;
    let mut switch = git_command();
    switch.arg("-C").arg(dir).args([
        "-c",
        "advice.detachedHead=false",
        "checkout",
        "--quiet",
        "--detach",
        &commit,
        "--",
    ]);
    run_git(switch, "`git_checkout`")
        .map_err(|err| format!("checking out {} ({commit}) failed: {err}", checkout.rev))?;
    Ok(())
}

pub(super) fn git_init(dir: &Path) -> Result<(), String> {
    let mut init = git_command();
    init.args(["init", "--quiet"]).current_dir(dir);
    run_git(init, "`git: true`").map_err(|err| format!("git init failed: {err}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_s_time_is_given_to_git_only_as_rfc_3339() {
        assert_eq!(
            [
                "2026-01-10T03:45:54.863Z",
                "2025-12-08T22:41:05Z",
                "2025-12-09T01:23:06+01:00",
                "2025-12-09 01:23:06-07:30",
            ]
            .map(git_time),
            [
                Some("2026-01-10 03:45:54 +0000".to_owned()),
                Some("2025-12-08 22:41:05 +0000".to_owned()),
                Some("2025-12-09 01:23:06 +0100".to_owned()),
                Some("2025-12-09 01:23:06 -0730".to_owned()),
            ]
        );
        for bad in [
            "",
            "yesterday",
            "2026-01-10",
            "2026-01-10T03:45:54",
            "2026-13-10T03:45:54Z",
            "2026-01-10T24:00:00Z",
            "2026-01-10T03:45:54.Z",
            "2026-01-10T03:45:54Z; rm -rf",
            "2026-01-10T03:45:54+1:00",
        ] {
            assert_eq!(git_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_start_commit_is_the_last_one_before_the_session_on_its_branch() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        let git = |args: &[&str], date: &str| {
            let out = git_command()
                .arg("-C")
                .arg(repo)
                .args(args)
                .env("GIT_AUTHOR_DATE", date)
                .env("GIT_COMMITTER_DATE", date)
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@t")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@t")
                .output()
                .unwrap();
            assert!(out.status.success(), "{args:?}: {out:?}");
            String::from_utf8(out.stdout).unwrap().trim().to_owned()
        };
        let commit = |message: &str, date: &str| {
            git(&["commit", "-q", "--allow-empty", "-m", message], date);
            git(&["rev-parse", "HEAD"], date)
        };
        git(&["init", "-q", "-b", "main"], "2026-01-01T00:00:00Z");
        let first = commit("first", "2026-01-01T10:00:00Z");
        git(&["checkout", "-q", "-b", "work"], "2026-01-01T10:00:00Z");
        let on_work = commit("work", "2026-01-02T10:00:00Z");
        let after = commit("made by the session", "2026-01-03T10:00:00Z");
        git(&["checkout", "-q", "main"], "2026-01-01T10:00:00Z");
        let main_later = commit("main later", "2026-01-02T12:00:00Z");
        let started = "2026-01-03T09:00:00.500Z";
        assert_eq!(
            commit_before(repo, Some("work"), started).unwrap(),
            StartCommit {
                commit: on_work,
                searched: "refs/heads/work".to_owned(),
                missing_branch: None,
            }
        );
        assert_eq!(
            commit_before(repo, None, started).unwrap(),
            StartCommit {
                commit: main_later,
                searched: "HEAD".to_owned(),
                missing_branch: None,
            }
        );
        assert_eq!(
            commit_before(repo, Some("gone"), "2026-01-01T11:00:00Z").unwrap(),
            StartCommit {
                commit: first,
                searched: "HEAD".to_owned(),
                missing_branch: Some("gone".to_owned()),
            }
        );
        assert_ne!(after, "");
        assert_eq!(
            commit_before(repo, None, "2025-12-31T00:00:00Z").unwrap_err(),
            format!(
                "{} has no commit on HEAD older than the session (2025-12-31 00:00:00 +0000); \
                 give --rev",
                repo.display()
            )
        );
    }
}
