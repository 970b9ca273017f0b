//! The workspace a scenario runs in: a fixture or a `git_checkout`, and
//! its files (paths inside, no file under a declared symlink, modes,
//! generated sizes within the suite's budget).

use std::collections::BTreeMap;
use std::path::Component;
use std::path::Path;
use std::path::PathBuf;

use base64::Engine;

use crate::scenario::model::FileObject;
use crate::scenario::model::FileSpec;
use crate::scenario::model::WorkspaceSpec;
use crate::scenario::replay::GitCheckoutSpec;
use crate::scenario::template::Template;
use crate::scenario::yaml::PathText;
use crate::scenario::yaml::Seg;

use super::expectations::parse_mode;
use super::scenario::FileContent;
use super::scenario::GitCheckout;
use super::scenario::WorkspacePlan;
use super::suite::SUITE_FILE;
use super::suite::Suite;
use super::validator::NUL_IN_PATH;
use super::validator::Validator;
use super::validator::is_inside;
use super::validator::join;
use super::validator::k;

impl Validator<'_> {
    /// What the workspace is built from: a fixture and files.
    pub(super) fn workspace(&mut self, spec: &WorkspaceSpec, suite: &Suite) -> WorkspacePlan {
        let fixture = spec
            .fixture
            .as_ref()
            .and_then(|name| self.fixture(name, suite));
        let files_at = [k("workspace"), k("files")];
        let symlinks: BTreeMap<Vec<&str>, &str> = spec
            .files
            .iter()
            .filter(|(_, f)| {
                matches!(
                    f,
                    FileSpec::Object(FileObject {
                        symlink: Some(_),
                        ..
                    })
                )
            })
            .map(|(rel, _)| (components(rel), rel.as_str()))
            .collect();
        let budget = suite.max_generated_bytes();
        let mut generated: u64 = 0;
        let mut files = Vec::new();
        for (rel, file) in &spec.files {
            let at = join(&files_at, [k(rel)]);
            if rel.contains('\0') {
                self.problem_at_key(&at, NUL_IN_PATH);
                continue;
            }
            if !is_inside(rel) {
                self.problem_at_key(&at, "paths must be relative and may not contain `..`");
                continue;
            }
            let parts = components(rel);
            if let Some(link) = (1..parts.len()).find_map(|n| symlinks.get(&parts[..n])) {
                self.problem_at_key(
                    &at,
                    format!(
                        "`{rel}` is inside `{link}`, which this scenario makes a \
                         symlink; files are never written through a symlink: choose a path \
                         outside it"
                    ),
                );
                continue;
            }
            if (spec.git || spec.git_checkout.is_some())
                && let Some(message) = git_dir_problem(&parts, file)
            {
                self.problem_at_key(&at, message);
                continue;
            }
            // A `times` that is there but could not be read was reported
            // where it is written; saying it is missing too would mislead.
            if let FileSpec::Object(FileObject { times: None, .. }) = file
                && self
                    .reported
                    .contains(&PathText(&join(&at, [k("times")])).to_string())
            {
                continue;
            }
            let size = match planned_size(file) {
                Ok(size) => size,
                Err((sub, message)) => {
                    self.problem(&join(&at, sub), message);
                    continue;
                }
            };
            generated = generated.saturating_add(size);
            if generated > budget {
                let sub = match file {
                    FileSpec::Object(FileObject { times: Some(_), .. }) => vec![k("times")],
                    _ => Vec::new(),
                };
                self.problem(
                    &join(&at, sub),
                    format!(
                        "the inline files of this scenario come to more than {budget} bytes (this one: {size}); make them smaller, or raise \
                         `max_generated_bytes` in {SUITE_FILE}"
                    ),
                );
                continue;
            }
            match file_content(file) {
                Ok(content) => files.push((rel.clone(), content)),
                Err((sub, message)) => {
                    self.problem(&join(&at, sub), message);
                }
            }
        }
        let git_checkout = spec.git_checkout.as_ref().and_then(|checkout| {
            if spec.fixture.is_some() {
                self.problem_at_key(
                    &[k("workspace"), k("git_checkout")],
                    "a workspace is either a `fixture` or a `git_checkout`, not both; keep one",
                );
            }
            self.git_checkout(checkout)
        });
        WorkspacePlan {
            fixture,
            files,
            git: spec.git,
            git_checkout,
        }
    }

    /// `git_checkout: { repo, rev }`: the repository is a directory
    /// (relative to the scenario file) and the revision cannot be read as
    /// an option.
    pub(super) fn git_checkout(&mut self, spec: &GitCheckoutSpec) -> Option<GitCheckout> {
        let at = [k("workspace"), k("git_checkout")];
        let mut ok = true;
        let rev_ok = !spec.rev.is_empty()
            && !spec.rev.starts_with('-')
            && !spec
                .rev
                .chars()
                .any(|c| c.is_whitespace() || c.is_control());
        if !rev_ok {
            self.problem(
                &join(&at, [k("rev")]),
                format!(
                    "`{}` is not a revision: give a commit, tag or branch name (not empty, no \
                     spaces, not starting with `-`)",
                    spec.rev
                ),
            );
            ok = false;
        }
        let repo = self.base_dir.join(&spec.repo);
        if spec.repo.is_empty() || !repo.is_dir() {
            self.problem(
                &join(&at, [k("repo")]),
                format!(
                    "the repository {} is not a directory; give the path of a local git \
                     repository, relative to this scenario file",
                    repo.display()
                ),
            );
            ok = false;
        }
        ok.then(|| GitCheckout {
            repo,
            rev: spec.rev.clone(),
        })
    }

    /// The fixture directory `name` under the suite's fixtures root.
    pub(super) fn fixture(&mut self, name: &str, suite: &Suite) -> Option<PathBuf> {
        let at = [k("workspace"), k("fixture")];
        if name.is_empty()
            || Path::new(name)
                .components()
                .any(|c| !matches!(c, Component::Normal(_)))
        {
            self.problem(
                &at,
                format!("fixture `{name}` must be a plain name or relative path without `..`"),
            );
            return None;
        }
        let root = suite.fixtures_root();
        let dir = root.join(name);
        if dir.is_dir() {
            // A link (the fixture, or a directory on the way) that leads
            // out of the fixtures root is refused, not followed.
            let inside = match (dir.canonicalize(), root.canonicalize()) {
                (Ok(real), Ok(root)) => real.starts_with(root),
                _ => false,
            };
            if inside {
                return Some(dir);
            }
            self.problem(
                &at,
                format!(
                    "fixture `{name}` is a symlink that leads out of the fixtures directory {}; \
                     it is not followed (copy the directory there instead)",
                    root.display()
                ),
            );
            return None;
        }
        self.problem(
            &at,
            format!(
                "fixture `{name}` not found: looked for the directory {}; set `fixtures:` in \
                 harness.yaml or create it",
                dir.display()
            ),
        );
        None
    }
}

/// With git run in the workspace (`git: true`, `git_checkout`), an entry
/// at or below `.git` that would make git work outside it: `.git` itself
/// as anything but a directory (a symlink, or a `gitdir:` file), or a
/// symlink inside it.
fn git_dir_problem(parts: &[&str], file: &FileSpec) -> Option<String> {
    if parts.first() != Some(&".git") {
        return None;
    }
    let (symlink, dir) = match file {
        FileSpec::Text(_) => (false, false),
        FileSpec::Object(o) => (o.symlink.is_some(), o.dir == Some(true)),
    };
    if parts.len() == 1 && !dir {
        Some(format!(
            "`.git` is declared as {}, but this workspace runs git, which would then work \
             where it points, outside the workspace; declare `.git: {{ dir: true }}` or leave \
             it out",
            if symlink { "a symlink" } else { "a file" }
        ))
    } else if symlink {
        Some(
            "a symlink inside `.git`, but this workspace runs git, which would follow it, maybe \
             outside the workspace; declare a file or a directory here, or leave it out"
                .to_owned(),
        )
    } else {
        None
    }
}

/// The names of a relative path, `.` left out.
pub(super) fn components(rel: &str) -> Vec<&str> {
    rel.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect()
}

/// Octal permission bits for a file the workspace gets: at most `777`,
/// never setuid, setgid or sticky.
fn parse_file_mode(text: &str) -> Result<u32, String> {
    match parse_mode(text) {
        Some(mode) if mode <= 0o777 => Ok(mode),
        Some(_) => Err(format!(
            "mode `{text}` sets setuid, setgid or sticky bits, which a workspace file never \
             gets; give the permission bits only, like \"755\""
        )),
        None => Err(format!("mode `{text}` is not an octal mode like \"755\"")),
    }
}

/// The bytes `times` repetitions of `template` make, `{n}` counting from
/// 1, computed without making them; `None` when it overflows (or the
/// template does not parse, which [`file_content`] reports).
#[cfg(test)]
pub(super) fn repeat_len(template: &str, times: u64) -> Option<u64> {
    Template::parse(template).ok()?.len(times, "")
}

/// The bytes a workspace file will hold, or what is wrong with it (and the
/// key below the file's own path it concerns).
fn planned_size(spec: &FileSpec) -> Result<u64, (Vec<Seg>, String)> {
    let object = match spec {
        FileSpec::Text(text) => return Ok(text.len() as u64),
        FileSpec::Object(object) => object,
    };
    let bom = if object.bom == Some(true) { 3 } else { 0 };
    let body = match (&object.text, &object.base64, &object.repeat) {
        (Some(text), _, _) => text.len() as u64,
        // Decoded base64 is never longer than its text.
        (_, Some(encoded), _) => encoded.len() as u64,
        (_, _, Some(template)) => {
            let times = object.times.unwrap_or(0) as u64;
            let template =
                Template::parse(template).map_err(|message| (vec![k("repeat")], message))?;
            let join = object.join.as_deref().unwrap_or("");
            template.len(times, join).ok_or_else(|| {
                (
                    vec![k("times")],
                    format!("`times: {times}` makes more bytes than can be counted"),
                )
            })?
        }
        _ => 0,
    };
    Ok(body.saturating_add(bom))
}

/// A workspace file's content, or what is wrong with it (and the key below
/// the file's own path it concerns). Its size is checked before.
fn file_content(spec: &FileSpec) -> Result<FileContent, (Vec<Seg>, String)> {
    let object = match spec {
        FileSpec::Text(text) => {
            return Ok(FileContent::Bytes {
                data: text.clone().into_bytes(),
                mode: None,
            });
        }
        FileSpec::Object(object) => object,
    };
    let whole = |message: &str| (Vec::new(), message.to_owned());
    let FileObject {
        text,
        base64,
        repeat,
        times,
        symlink,
        dir,
        bom,
        mode,
        join,
    } = object;
    let kinds = [
        text.is_some(),
        base64.is_some(),
        repeat.is_some(),
        symlink.is_some(),
        dir == &Some(true),
    ];
    if kinds.iter().filter(|k| **k).count() != 1 {
        return Err(whole(
            "give exactly one of `text`, `base64`, `repeat` (+ `times`), `symlink` or `dir: true`",
        ));
    }
    let mode = match mode {
        Some(m) => Some(parse_file_mode(m).map_err(|message| (vec![k("mode")], message))?),
        None => None,
    };
    if times.is_some() && repeat.is_none() {
        return Err((
            vec![k("times")],
            "`times` only goes with `repeat`".to_owned(),
        ));
    }
    if join.is_some() && repeat.is_none() {
        return Err((vec![k("join")], "`join` only goes with `repeat`".to_owned()));
    }
    if bom.is_some() && symlink.is_some() | (dir == &Some(true)) {
        return Err((
            vec![k("bom")],
            "`bom` only goes with file content".to_owned(),
        ));
    }
    let prefix: &[u8] = if bom == &Some(true) {
        b"\xEF\xBB\xBF"
    } else {
        b""
    };
    if let Some(target) = symlink {
        if mode.is_some() {
            return Err((vec![k("mode")], "a symlink has no `mode`".to_owned()));
        }
        return Ok(FileContent::Symlink(target.clone()));
    }
    if dir == &Some(true) {
        return Ok(FileContent::Dir(mode));
    }
    let body = if let Some(text) = text {
        text.clone().into_bytes()
    } else if let Some(encoded) = base64 {
        let cleaned: String = encoded.split_whitespace().collect();
        base64::engine::general_purpose::STANDARD
            .decode(cleaned)
            .map_err(|err| {
                (
                    vec![k("base64")],
                    format!("`base64` is not valid base64: {err}"),
                )
            })?
    } else if let Some(template) = repeat {
        let times = times.ok_or_else(|| whole("`repeat` needs `times`"))?;
        let template = Template::parse(template).map_err(|message| (vec![k("repeat")], message))?;
        return Ok(FileContent::Generated {
            bom: bom == &Some(true),
            template,
            times,
            join: join.clone().unwrap_or_default(),
            mode,
        });
    } else {
        Vec::new()
    };
    let mut data = prefix.to_vec();
    data.extend_from_slice(&body);
    Ok(FileContent::Bytes { data, mode })
}
