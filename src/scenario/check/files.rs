//! The run's `expect.files`: each file read through a handle confined to
//! the workspace, and checked as the model would read it.

use std::borrow::Cow;
use std::path::Path;

use crate::agent::Presenter;
use crate::scenario::exact;
use crate::scenario::model::Eol;
use crate::scenario::model::FileChecks;
use crate::scenario::model::FileExpect;
use crate::scenario::vars;
use crate::tools::ops::ConfinedFs;
use crate::tools::ops::FsOps;

use super::failure::Failure;
use super::failure::flag_check;
use super::failure::substring_checks;
use super::input::CheckInput;
use super::input::expanded_regex;
use super::input::variables;

/// The largest file a file check reads.
pub const MAX_CHECKED_FILE_BYTES: u64 = 64 * 1024 * 1024;

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

pub(super) fn file_checks(input: &CheckInput<'_>, failures: &mut Vec<Failure>) {
    let files = CheckedFiles::new(input.workspace);
    let vars = variables(input, None);
    for (rel, expect) in &input.scenario.run_check.expect.files {
        let expect: &FileExpect = expect;
        let label = format!("files: {rel}");
        let step = Some(label.as_str());
        let (expect, expanded_regex) = if vars::file_expect_has_vars(expect) {
            let expanded = vars::expand_file_expect(expect, &vars);
            let pattern = match &expanded {
                FileExpect::Checks(c) => c.matches.clone(),
                FileExpect::Equals(_) => None,
            };
            let regex = expanded_regex(pattern.as_deref(), &label, failures);
            (Cow::Owned(expanded), regex)
        } else {
            (Cow::Borrowed(expect), None)
        };
        let expect = expect.as_ref();
        match expect {
            FileExpect::Equals(want) => match files.read(rel) {
                Ok(bytes) => {
                    let got = input.presenter.text(&String::from_utf8_lossy(&bytes));
                    if got != *want {
                        failures.push(Failure::new(step, "equals", want.clone(), got));
                    }
                }
                Err(err) => failures.push(Failure::new(
                    step,
                    "equals",
                    want.clone(),
                    format!("cannot read the file: {err}"),
                )),
            },
            FileExpect::Checks(checks) => {
                let regex = expanded_regex
                    .as_deref()
                    .or_else(|| input.scenario.run_check.file_regexes.get(rel).map(|r| &**r));
                let bytes = input.scenario.run_check.file_bytes.get(rel);
                file_object_checks(
                    failures,
                    step,
                    (&files, rel, input.presenter),
                    checks,
                    (regex, bytes.map(Vec::as_slice)),
                );
            }
        }
    }
}

/// The object form of a file's checks; `regex` is its compiled `matches`.
/// The file's text is checked as `presenter` shows it to the model.
fn file_object_checks(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    (files, rel, presenter): (&CheckedFiles, &str, &Presenter),
    checks: &FileChecks,
    (regex, want_bytes): (Option<&regex::Regex>, Option<&[u8]>),
) {
    let exists = files.exists(rel);
    let presence = ("the file exists", "no such file");
    if let Some(absent) = checks.absent
        && absent == exists
    {
        flag_check(failures, step, "absent", (!absent, exists), presence);
        return;
    }
    if let Some(want) = checks.exists
        && want != exists
    {
        flag_check(failures, step, "exists", (want, exists), presence);
        return;
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
                "symlink",
                format!("a symlink to {target:?}"),
                actual,
            ));
        }
    }
    let needs_content = checks.equals.is_some()
        || checks.contains.is_some()
        || checks.not_contains.is_some()
        || checks.matches.is_some()
        || checks.bom.is_some()
        || checks.eol.is_some()
        || checks.bytes_base64.is_some()
        || checks.sha256.is_some();
    if needs_content {
        match files.read(rel) {
            Ok(bytes) => {
                let text = presenter.text(&String::from_utf8_lossy(&bytes));
                content_of_file_checks(failures, step, (&bytes, &text), checks, regex);
                let exact = [
                    (
                        "bytes_base64",
                        want_bytes.and_then(|w| exact::bytes(w, &bytes)),
                    ),
                    (
                        "sha256",
                        checks
                            .sha256
                            .as_deref()
                            .and_then(|w| exact::sha256(w, &bytes)),
                    ),
                ];
                for (check, miss) in exact {
                    if let Some((expected, actual)) = miss {
                        failures.push(Failure::new(step, check, expected, actual));
                    }
                }
            }
            Err(err) => {
                failures.push(Failure::new(
                    step,
                    "read",
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

/// `equals`, `contains`, `not_contains`, `matches` on a file's text (as
/// presented), `bom` and `eol` on its bytes.
fn content_of_file_checks(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    (bytes, text): (&[u8], &str),
    checks: &FileChecks,
    regex: Option<&regex::Regex>,
) {
    if let Some(want) = &checks.equals
        && *want != text
    {
        failures.push(Failure::new(step, "equals", want.clone(), text));
    }
    substring_checks(
        failures,
        step,
        "content",
        text,
        (checks.contains.as_ref(), checks.not_contains.as_ref()),
        regex,
    );
    if let Some(want) = checks.bom {
        let has = bytes.starts_with(b"\xEF\xBB\xBF");
        flag_check(
            failures,
            step,
            "bom",
            (want, has),
            ("a UTF-8 BOM", "no BOM"),
        );
    }
    if let Some(want) = checks.eol {
        let crlf = bytes.windows(2).filter(|w| w == b"\r\n").count();
        let lf = bytes.iter().filter(|b| **b == b'\n').count();
        let (ok, what) = match want {
            Eol::Lf => (crlf == 0, "LF line endings only"),
            Eol::Crlf => (lf > 0 && crlf == lf, "CRLF line endings only"),
        };
        if !ok {
            failures.push(Failure::new(
                step,
                "eol",
                what,
                format!("{} CRLF and {} bare LF line endings", crlf, lf - crlf),
            ));
        }
    }
}

/// `mode`: the file's permission bits.
fn mode_check(
    failures: &mut Vec<Failure>,
    step: Option<&str>,
    found: Result<u32, String>,
    mode: &str,
) {
    match found {
        Ok(found) => {
            let got = format!("{:o}", found & 0o7777);
            let want = u32::from_str_radix(mode, 8)
                .map(|m| format!("{m:o}"))
                .unwrap_or_else(|_| mode.to_owned());
            if got != want {
                failures.push(Failure::new(step, "mode", want, got));
            }
        }
        Err(err) => failures.push(Failure::new(
            step,
            "mode",
            mode,
            format!("cannot stat it: {err}"),
        )),
    }
}
