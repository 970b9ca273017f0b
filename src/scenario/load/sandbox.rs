//! `sandbox:` checked into a [`SandboxPlan`]: `off`, or the network and the
//! extra writable paths. Each `write:` path is validated where it enters,
//! located at its item: absolute, without `..`, existing, and not through
//! a symlink (what the sandbox lets programs write is exactly the path
//! written, never where a link happens to point).

use std::path::Component;
use std::path::Path;
use std::path::PathBuf;

use crate::base::vars::substitute_some;
use crate::scenario::sandbox::SandboxSpec;
use crate::scenario::yaml::Seg;

use super::scenario::SandboxPlan;
use super::validator::Validator;
use super::validator::k;

/// The most paths `write:` may list.
pub(super) const MAX_WRITE_PATHS: usize = 64;

/// What is wrong with the `write:` path `raw` (its `${dir}` given the
/// value `dir`), or the path.
fn write_path(raw: &str, dir: &Path) -> Result<PathBuf, String> {
    let vars = std::collections::BTreeMap::from([("dir".to_owned(), dir.display().to_string())]);
    let text = substitute_some(raw, &vars);
    if text.contains('\0') {
        return Err(super::validator::NUL_IN_PATH.to_owned());
    }
    let path = Path::new(&text);
    if !path.is_absolute() {
        return Err(format!(
            "`{text}` is not an absolute path; write one from `/` (or `${{dir}}/…` for a path \
             beside this file)"
        ));
    }
    if path.components().any(|c| c == Component::ParentDir) {
        return Err(format!(
            "`{text}` holds `..`; write the directory it means without `..`"
        ));
    }
    let real = std::fs::canonicalize(path).map_err(|err| {
        if err.kind() == std::io::ErrorKind::NotFound {
            format!("`{text}` does not exist; create it before the run, or leave it out")
        } else {
            format!("`{text}` cannot be used: {err}")
        }
    })?;
    // The path as written, without `.` and doubled or trailing slashes.
    let written: PathBuf = path.components().collect();
    if real != written {
        return Err(format!(
            "`{text}` leads through a symlink to `{}`; name the real path (the sandbox lets \
             programs write exactly where this says)",
            real.display()
        ));
    }
    Ok(real)
}

/// `spec` checked, `dir` the directory of the file it is written in;
/// `by_suite`: it is the suite file's. Problems are returned with their
/// paths (`sandbox.write[2]`).
pub(super) fn plan(
    spec: Option<&SandboxSpec>,
    dir: &Path,
    by_suite: bool,
) -> (SandboxPlan, Vec<(Vec<Seg>, String)>) {
    let mut problems = Vec::new();
    let plan = match spec {
        None => SandboxPlan::default(),
        Some(SandboxSpec::Off) => SandboxPlan::Off { by_suite },
        Some(SandboxSpec::On(object)) => {
            let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
            if object.write.len() > MAX_WRITE_PATHS {
                problems.push((
                    vec![k("sandbox"), k("write")],
                    format!(
                        "lists {} paths; at most {MAX_WRITE_PATHS} (name a directory above them)",
                        object.write.len()
                    ),
                ));
            }
            let mut write = Vec::new();
            for (i, raw) in object.write.iter().enumerate() {
                match write_path(raw, &dir) {
                    Ok(path) => write.push(path),
                    Err(message) => {
                        problems.push((vec![k("sandbox"), k("write"), Seg::Index(i)], message))
                    }
                }
            }
            SandboxPlan::On {
                network: object.network,
                write,
            }
        }
    };
    (plan, problems)
}

impl Validator<'_> {
    /// The plan of a file's own `sandbox:` (problems reported here), or,
    /// when it has none, of its suite file's (`suite`: its spec and
    /// directory; its problems were reported where it was read).
    pub(super) fn sandbox(
        &mut self,
        own: Option<&SandboxSpec>,
        dir: &Path,
        suite: Option<(&SandboxSpec, &Path)>,
    ) -> SandboxPlan {
        match (own, suite) {
            (Some(spec), _) => {
                let (plan, problems) = plan(Some(spec), dir, false);
                for (at, message) in problems {
                    self.problem(&at, message);
                }
                plan
            }
            (None, Some((spec, suite_dir))) => plan(Some(spec), suite_dir, true).0,
            (None, None) => SandboxPlan::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn write_paths_are_absolute_real_and_existing() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir(base.join("out")).unwrap();
        std::os::unix::fs::symlink("/etc", base.join("link")).unwrap();
        let b = base.display();
        let got: Vec<Result<PathBuf, String>> = [
            "${dir}/out",
            "${dir}/./out/",
            "out",
            "${dir}/out/../out",
            "${dir}/link",
            "${dir}/missing",
        ]
        .iter()
        .map(|raw| write_path(raw, &base))
        .collect();
        assert_eq!(
            got,
            vec![
                Ok(base.join("out")),
                Ok(base.join("out")),
                Err(
                    "`out` is not an absolute path; write one from `/` (or `${dir}/…` for a \
                     path beside this file)"
                        .to_owned()
                ),
                Err(format!(
                    "`{b}/out/../out` holds `..`; write the directory it means without `..`"
                )),
                Err(format!(
                    "`{b}/link` leads through a symlink to `/etc`; name the real path (the \
                     sandbox lets programs write exactly where this says)"
                )),
                Err(format!(
                    "`{b}/missing` does not exist; create it before the run, or leave it out"
                )),
            ]
        );
    }
}
