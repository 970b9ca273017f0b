//! Importing a session again into the same output directory. An earlier
//! import left scenario files that may have been edited since
//! (docs/replay.md tells users to add checks to the imported calls), the
//! sidecar folders those files name, and perhaps a fixture. An import that
//! would overwrite any of them is refused, naming each, unless `--force`
//! says to replace the earlier import; then the earlier import's scenario
//! files this one does not write again (the parts of another `--split`, the
//! side chains of an earlier `--sidechains`) are removed, so that no stale
//! part is left to replay twice.
//!
//! The files of an earlier import of the same session are known by their
//! names (`<stem>.yaml`, `<stem>-N.yaml`, `<stem>-side-N.yaml`,
//! `<stem>-side-N-M.yaml`) and by their first line, the header that names
//! the session file they were imported from; `<stem>.yaml` counts
//! whatever it holds, and so does every other file this import writes.

use std::collections::BTreeSet;
use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

use super::out::OutDir;
use super::write::imported_from;

/// What this import writes, as far as it is known before the session is
/// read.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan<'a> {
    /// The scenario files' stem.
    pub stem: &'a str,
    /// The session file's name, as the scenarios' header gives it.
    pub source: &'a str,
    /// The side chains imported as scenarios of their own.
    pub sides: usize,
    /// A workspace is copied to `fixtures/<stem>/`.
    pub fixture: bool,
}

impl Plan<'_> {
    /// The stem of chain `n`: the main chain's (0), or side chain N's.
    pub(crate) fn chain(&self, n: usize) -> String {
        if n == 0 {
            self.stem.to_owned()
        } else {
            format!("{}-side-{n}", self.stem)
        }
    }
}

/// What the output directory already holds of what this import writes.
#[derive(Debug, Default)]
pub(crate) struct Earlier {
    /// Scenario files of an earlier import of the same session (their
    /// header says so), which `--force` removes when this import does not
    /// write them again.
    pub scenarios: Vec<String>,
    /// Other files this import would write over (`<stem>.yaml` with
    /// another header, a link …).
    pub others: Vec<String>,
    /// Sidecar folders of this import's chains, or of the earlier's.
    pub sidecars: Vec<String>,
    /// `fixtures/<stem>`, when this import copies a workspace there.
    pub fixture: Option<String>,
}

impl Earlier {
    /// Nothing is in the way.
    pub(crate) fn is_empty(&self) -> bool {
        self.scenarios.is_empty()
            && self.others.is_empty()
            && self.sidecars.is_empty()
            && self.fixture.is_none()
    }

    /// Every name, sorted; folders end in `/`.
    pub(crate) fn names(&self) -> Vec<String> {
        let folders = self.sidecars.iter().chain(&self.fixture);
        let mut names: Vec<String> = self
            .scenarios
            .iter()
            .chain(&self.others)
            .cloned()
            .chain(folders.map(|f| format!("{f}/")))
            .collect();
        names.sort();
        names
    }
}

/// What `out` (which may not exist yet) holds of what `plan` writes. It
/// only looks: nothing is made or changed.
pub(crate) fn survey(out: &Path, plan: &Plan<'_>) -> Result<Earlier, String> {
    let mut earlier = Earlier::default();
    let entries = match std::fs::read_dir(out) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(earlier),
        Err(err) => return Err(format!("cannot read {}: {err}", out.display())),
    };
    let mut chains: BTreeSet<String> = (0..=plan.sides).map(|n| plan.chain(n)).collect();
    for entry in entries {
        let entry = entry.map_err(|err| format!("cannot read {}: {err}", out.display()))?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        let Some(chain) = name
            .strip_suffix(".yaml")
            .and_then(|base| chain_of(base, plan.stem))
        else {
            continue;
        };
        if imported_from(&first_line(&entry.path()), plan.source) {
            chains.insert(chain);
            earlier.scenarios.push(name);
        } else if name == format!("{}.yaml", plan.stem) {
            earlier.others.push(name);
        }
    }
    earlier.scenarios.sort();
    for chain in chains {
        let name = format!("{chain}.recorded");
        if out.join(&name).symlink_metadata().is_ok() {
            earlier.sidecars.push(name);
        }
    }
    let fixture = format!("fixtures/{}", plan.stem);
    if plan.fixture && out.join(&fixture).symlink_metadata().is_ok() {
        earlier.fixture = Some(fixture);
    }
    Ok(earlier)
}

/// The chain whose scenario file `base.yaml` is, when it is one of the
/// names an import of `stem` writes: `stem`, `stem-N`, `stem-side-N` or
/// `stem-side-N-M`.
fn chain_of(base: &str, stem: &str) -> Option<String> {
    if base == stem {
        return Some(stem.to_owned());
    }
    let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let rest = base.strip_prefix(stem)?.strip_prefix('-')?;
    if number(rest) {
        return Some(stem.to_owned());
    }
    let side = rest.strip_prefix("side-")?;
    let n = match side.split_once('-') {
        Some((n, part)) if number(part) => n,
        Some(_) => return None,
        None => side,
    };
    number(n).then(|| format!("{stem}-side-{n}"))
}

/// The first line of the regular file at `path` (at most its first 4 KiB;
/// empty for anything else: a link, a FIFO, an unreadable file).
fn first_line(path: &Path) -> String {
    let regular = path.symlink_metadata().is_ok_and(|meta| meta.is_file());
    let mut head = Vec::new();
    let read = regular
        && std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
            .open(path)
            .and_then(|file| file.take(4096).read_to_end(&mut head))
            .is_ok();
    if !read {
        return String::new();
    }
    let text = String::from_utf8_lossy(&head);
    text.lines().next().unwrap_or_default().to_owned()
}

/// The files of `names` (in `out`, not yet written by this import) that
/// exist already and are not among `earlier`'s.
pub(crate) fn in_the_way(out: &OutDir, names: &[String], earlier: &Earlier) -> Vec<String> {
    names
        .iter()
        .filter(|name| !earlier.scenarios.contains(name) && !earlier.others.contains(name))
        .filter(|name| out.exists(name))
        .cloned()
        .collect()
}

/// How many files and folders `names` are (`3 files`, `1 file and 2
/// folders`); folders end in `/`.
pub(crate) fn count(names: &[String]) -> String {
    let folders = names.iter().filter(|n| n.ends_with('/')).count();
    let files = names.len() - folders;
    let word = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    match (files, folders) {
        (_, 0) => word(files, "file"),
        (0, _) => word(folders, "folder"),
        _ => format!("{} and {}", word(files, "file"), word(folders, "folder")),
    }
}

/// The error of an import that would overwrite `names` (in `out`).
pub(crate) fn refusal(out: &Path, names: &[String]) -> String {
    let shown: Vec<String> = names
        .iter()
        .map(|name| out.join(name).display().to_string())
        .collect();
    match shown.as_slice() {
        [one] => format!(
            "{one} already exists, and importing would overwrite it (and any check added to it \
             since); give --force to replace it, or choose another -o"
        ),
        _ => format!(
            "{} of an earlier import already exist, and importing would overwrite them (and \
             any check added to them since): {}; give --force to replace them, or choose \
             another -o",
            count(names),
            shown.join(", ")
        ),
    }
}

/// The earlier import's sidecar folders, set aside under `--force` while
/// the session is read (its sidecars are written as it is read), and put
/// back if the import fails before it writes a scenario.
#[derive(Debug, Default)]
pub(crate) struct Aside {
    /// Each folder's name, and the name it was given meanwhile.
    folders: Vec<(String, String)>,
}

impl Aside {
    /// Sets `folders` of `out` aside.
    pub(crate) fn set(out: &OutDir, folders: &[String]) -> Result<Self, String> {
        let mut aside = Self::default();
        for name in folders {
            match out.set_aside(name) {
                Ok(temp) => aside.folders.push((name.clone(), temp)),
                Err(err) => {
                    aside.restore(out);
                    return Err(format!(
                        "cannot move {} aside: {err}",
                        out.show(name).display()
                    ));
                }
            }
        }
        Ok(aside)
    }

    /// Removes what was set aside: the import replaced it.
    pub(crate) fn discard(self, out: &OutDir) -> Result<(), String> {
        for (name, temp) in self.folders {
            out.remove(&temp).map_err(|err| {
                format!(
                    "cannot remove {} (the earlier {}): {err}",
                    out.show(&temp).display(),
                    name
                )
            })?;
        }
        Ok(())
    }

    /// Puts everything set aside back under its name.
    fn restore(self, out: &OutDir) {
        for (name, temp) in self.folders {
            let _ = out.remove(&name);
            let _ = out.rename(&temp, &name);
        }
    }
}

/// Undoes what an import that failed before writing any scenario made in
/// `out`: the sidecar folders of `plan`'s chains (which did not exist, or
/// were set aside), the folders set aside put back, and the output
/// directory itself when the import `made` it and it is empty again.
pub(crate) fn undo(out: &OutDir, plan: &Plan<'_>, aside: Aside, made: Option<&Path>) {
    for n in 0..=plan.sides {
        let _ = out.remove(format!("{}.recorded", plan.chain(n)));
    }
    aside.restore(out);
    if let Some(dir) = made {
        let _ = std::fs::remove_dir(dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_an_import_writes_are_told_from_others() {
        let cases = [
            ("s", Some("s")),
            ("s-1", Some("s")),
            ("s-12", Some("s")),
            ("s-side-2", Some("s-side-2")),
            ("s-side-2-3", Some("s-side-2")),
            ("s-", None),
            ("s-x", None),
            ("s-side-", None),
            ("s-side-2-", None),
            ("s-side-x-1", None),
            ("s2", None),
            ("t", None),
        ];
        let got: Vec<(&str, Option<String>)> = cases
            .iter()
            .map(|(base, _)| (*base, chain_of(base, "s")))
            .collect();
        let want: Vec<(&str, Option<String>)> = cases
            .iter()
            .map(|(base, chain)| (*base, chain.map(str::to_owned)))
            .collect();
        assert_eq!(got, want);
    }
}
