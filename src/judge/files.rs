//! The run's `expect.files`: each file read through a handle confined to
//! the workspace, and checked as the model would read it.

use std::path::Path;

use crate::agent::Presenter;
use crate::judge::deadline::Deadline;
use crate::judge::exact;
use crate::scenario::expect::ContentCheck;
use crate::scenario::expect::FileChecks;
use crate::scenario::expect::FileExpectation;
use crate::scenario::expect::ModeCheck;
use crate::scenario::expect::Presence;
use crate::scenario::model::Eol;
use crate::tools::ops::ConfinedFs;
use crate::tools::ops::FsOps;

use super::actual::Checked;
use super::expand;
use super::failure::Failure;
use super::failure::contains_check;
use super::failure::flag_check;
use super::failure::matches_check;
use super::failure::not_contains_check;
use super::input::CheckInput;
use super::input::variables;
use super::kind::CheckKind;

/// The largest file a file check reads.
pub(super) const MAX_CHECKED_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The files of `expect.files`, reached only through a handle confined to
/// the workspace (D1): regular files only, opened without blocking, at most
/// [`MAX_CHECKED_FILE_BYTES`] each. A path that leads outside the workspace
/// (absolute, `..`, a symlink) cannot be read; for `exists`/`absent` it
/// does not exist.
pub(super) struct CheckedFiles {
    pub(super) fs: Result<ConfinedFs, String>,
    /// The largest file read: [`MAX_CHECKED_FILE_BYTES`].
    pub(super) max: u64,
}

impl CheckedFiles {
    pub(super) fn new(workspace: &Path) -> Self {
        Self {
            fs: ConfinedFs::new(workspace)
                .map_err(|err| format!("the workspace cannot be opened: {err}")),
            max: MAX_CHECKED_FILE_BYTES,
        }
    }

    pub(super) fn exists(&self, rel: &str) -> bool {
        self.fs
            .as_ref()
            .is_ok_and(|fs| fs.symlink_metadata(&fs.root().join(rel)).is_ok())
    }

    pub(super) fn read(&self, rel: &str) -> Result<Vec<u8>, String> {
        let fs = self.fs.as_ref().map_err(String::clone)?;
        fs.read_capped(&fs.root().join(rel), self.max)
            .map_err(|err| match err.kind() {
                std::io::ErrorKind::FileTooLarge => format!(
                    "it is larger than {}, the most a file check reads",
                    crate::tools::truncate::format_size(
                        usize::try_from(self.max).unwrap_or(usize::MAX)
                    )
                ),
                _ => err.to_string(),
            })
    }

    /// The target of the symlink at `rel` as written, or what is there
    /// instead.
    fn link(&self, rel: &str) -> Result<String, String> {
        let fs = self.fs.as_ref().map_err(String::clone)?;
        let path = fs.root().join(rel);
        match fs.symlink_metadata(&path) {
            Ok(meta) if meta.kind == crate::tools::ops::FileKind::Symlink => fs
                .read_link(&path)
                .map(|target| target.display().to_string())
                .map_err(|err| format!("a symlink that cannot be read: {err}")),
            Ok(meta) if meta.is_dir() => Err("a directory, not a symlink".to_owned()),
            Ok(_) => Err("a file, not a symlink".to_owned()),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                Err("no such file".to_owned())
            }
            Err(err) => Err(format!("cannot look at it: {err}")),
        }
    }

    pub(super) fn mode(&self, rel: &str) -> Result<u32, String> {
        let fs = self.fs.as_ref().map_err(String::clone)?;
        fs.metadata(&fs.root().join(rel))
            .map(|meta| meta.mode)
            .map_err(|err| err.to_string())
    }
}

/// `expect.files`: each file's checks, in path order, until the deadline:
/// `Err` names the file whose checks it stopped in (or before).
pub(super) fn file_checks(
    input: &CheckInput<'_>,
    failures: &mut Vec<Failure>,
) -> Result<(), String> {
    let files = CheckedFiles::new(input.workspace);
    let vars = variables(input, None);
    for file in &input.scenario.run_check.files {
        let rel = file.path.as_str();
        let label = format!("files: {rel}");
        if input.deadline.passed() {
            return Err(label);
        }
        let step = Some(label.as_str());
        let expect = expand::file_check(file, &vars, &label, failures);
        match expect.as_ref() {
            FileExpectation::Equals(want) => match files.read(rel) {
                Ok(bytes) => {
                    let got = input.presenter.text(&String::from_utf8_lossy(&bytes));
                    drop(bytes);
                    if got != *want {
                        failures.push(Failure::new(step, CheckKind::Equals, want.clone(), got));
                    }
                }
                Err(err) => failures.push(Failure::new(
                    step,
                    CheckKind::Equals,
                    want.clone(),
                    format!("cannot read the file: {err}"),
                )),
            },
            FileExpectation::Checks(checks) => {
                let file = (&files, rel, input.presenter);
                file_object_checks(failures, step, file, checks, &input.deadline);
            }
        }
        if input.deadline.passed() {
            return Err(label);
        }
    }
    Ok(())
}

/// The object form of a file's checks. The file's text is checked as
/// `presenter` shows it to the model, held once for all its checks (and
/// their failures' shared [`super::Actual`]).
fn file_object_checks(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    (files, rel, presenter): (&CheckedFiles, &str, &Presenter),
    checks: &FileChecks,
    deadline: &Deadline,
) {
    let exists = files.exists(rel);
    let shown = ("the file exists", "no such file");
    for presence in &checks.presence {
        match *presence {
            Presence::Absent(absent) if absent == exists => {
                flag_check(failures, step, CheckKind::Absent, (!absent, exists), shown);
                return;
            }
            Presence::Exists(want) if want != exists => {
                flag_check(failures, step, CheckKind::Exists, (want, exists), shown);
                return;
            }
            _ => {}
        }
    }
    if let Some(target) = &checks.symlink {
        let found = files.link(rel).map(|t| presenter.text(&t));
        if found.as_deref().ok() != Some(target.as_str()) {
            let actual = match found {
                Ok(other) => format!("a symlink to {other:?}"),
                Err(what) => what,
            };
            failures.push(Failure::new(
                step,
                CheckKind::Symlink,
                format!("a symlink to {target:?}"),
                actual,
            ));
        }
    }
    if !checks.content.is_empty() {
        match files.read(rel) {
            Ok(bytes) => {
                let text = presenter.text(&String::from_utf8_lossy(&bytes));
                let checked = Checked::new(&text);
                for check in &checks.content {
                    if deadline.passed() {
                        return;
                    }
                    content_check(failures, step, (&bytes, &checked), check, deadline);
                }
            }
            Err(err) => {
                failures.push(Failure::new(
                    step,
                    CheckKind::Read,
                    "a readable file",
                    format!("cannot read it: {err}"),
                ));
                return;
            }
        }
    }
    if let Some(mode) = &checks.mode {
        mode_check(failures, step, files.mode(rel), mode);
    }
}

/// One check of what a file holds: on its text (as presented) or on its
/// bytes.
fn content_check(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    (bytes, checked): (&[u8], &Checked<'_>),
    check: &ContentCheck,
    deadline: &Deadline,
) {
    let text = ("content", checked);
    match check {
        ContentCheck::Equals(want) => {
            if *want != checked.text() {
                failures.push(Failure::new(
                    step,
                    CheckKind::Equals,
                    want.clone(),
                    checked.actual(),
                ));
            }
        }
        ContentCheck::Contains(needles) => {
            contains_check(failures, step, text, needles, deadline);
        }
        ContentCheck::NotContains(needles) => {
            not_contains_check(failures, step, text, needles, deadline);
        }
        ContentCheck::Matches(pattern) => {
            if let Some(regex) = &pattern.regex {
                matches_check(failures, step, text, regex);
            }
        }
        ContentCheck::Bom(want) => {
            let has = bytes.starts_with(b"\xEF\xBB\xBF");
            flag_check(
                failures,
                step,
                CheckKind::Bom,
                (*want, has),
                ("a UTF-8 BOM", "no BOM"),
            );
        }
        ContentCheck::Eol(want) => {
            let crlf = bytes.windows(2).filter(|w| w == b"\r\n").count();
            let lf = bytes.iter().filter(|b| **b == b'\n').count();
            let (ok, what) = match want {
                Eol::Lf => (crlf == 0, "LF line endings only"),
                Eol::Crlf => (lf > 0 && crlf == lf, "CRLF line endings only"),
            };
            if !ok {
                failures.push(Failure::new(
                    step,
                    CheckKind::Eol,
                    what,
                    format!("{} CRLF and {} bare LF line endings", crlf, lf - crlf),
                ));
            }
        }
        ContentCheck::Bytes(want) => {
            if let Some((expected, actual)) = exact::bytes(want, bytes) {
                failures.push(Failure::new(step, CheckKind::BytesBase64, expected, actual));
            }
        }
        ContentCheck::Sha256(want) => {
            if let Some((expected, actual)) = exact::sha256(want, bytes) {
                failures.push(Failure::new(step, CheckKind::Sha256, expected, actual));
            }
        }
    }
}

/// `mode`: the file's permission bits.
fn mode_check(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    found: Result<u32, String>,
    mode: &ModeCheck,
) {
    match found {
        Ok(found) => {
            let got = format!("{:o}", found & 0o7777);
            if got != mode.octal {
                failures.push(Failure::new(step, CheckKind::Mode, mode.octal.clone(), got));
            }
        }
        Err(err) => failures.push(Failure::new(
            step,
            CheckKind::Mode,
            mode.written.as_str(),
            format!("cannot stat it: {err}"),
        )),
    }
}
