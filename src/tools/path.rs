//! Paths: normalisation, resolution against the workspace, confinement, and
//! how paths are shown to a model (§common.3, D1, D6).
//!
//! A path argument goes through [`normalize_input`] (the habits of models:
//! unicode spaces, a leading `@`, `~`, `file://` URLs), is resolved
//! lexically against the workspace root (so `a/../b` is `b`, as pi does),
//! and is then resolved to its real path: the nearest existing ancestor is
//! canonicalised with every symlink followed, and the rest is appended. When
//! confinement is on (the default), a real path outside the root is refused
//! before any tool touches it. The same real path is the key of the mutation
//! queue, so a symlink and its target share one queue.
//!
//! Messages show paths relative to the workspace; absolute host paths appear
//! only when confinement is off (D6).

use std::ffi::OsStr;
use std::io;
use std::path::Component;
use std::path::Path;
use std::path::PathBuf;

use super::facts::ErrorClass;
use super::fs_error::cause;
use super::fs_error::describe_io_error;
use super::ops::FsOps;
use super::visible::show_path;
use super::visible::unshow;

/// The code points models and macOS put where a space belongs (§common.3.1).
const UNICODE_SPACES: &[char] = &[
    '\u{00A0}', '\u{2000}', '\u{2001}', '\u{2002}', '\u{2003}', '\u{2004}', '\u{2005}', '\u{2006}',
    '\u{2007}', '\u{2008}', '\u{2009}', '\u{200A}', '\u{202F}', '\u{205F}', '\u{3000}',
];

/// Applies the normalisation steps of §common.3.1 in order: unicode spaces
/// to ASCII spaces, one leading `@` dropped, `~` and `~/…` expanded with
/// `home`, and a `file://` URL turned into a path. Whitespace is not trimmed.
pub(crate) fn normalize_input(raw: &str, home: Option<&Path>) -> String {
    let mut path: String = raw
        .chars()
        .map(|c| if UNICODE_SPACES.contains(&c) { ' ' } else { c })
        .collect();
    if let Some(rest) = path.strip_prefix('@') {
        path = rest.to_owned();
    }
    if let Some(home) = home {
        if path == "~" {
            path = home.to_string_lossy().into_owned();
        } else if let Some(rest) = path.strip_prefix("~/") {
            path = home.join(rest).to_string_lossy().into_owned();
        }
    }
    if let Some(rest) = path.strip_prefix("file://") {
        // `file:///abs` and `file://localhost/abs` name a local path.
        let rest = rest.strip_prefix("localhost").unwrap_or(rest);
        path = percent_decode(rest);
    }
    path
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(value) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(value);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Collapses `.` and `..` lexically; `..` never climbs above `/`.
pub(crate) fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(p) => out.push(p.as_os_str()),
            Component::RootDir => out.push("/"),
            Component::CurDir => {}
            Component::ParentDir => {
                let climbs_above_start = matches!(
                    out.components().next_back(),
                    None | Some(Component::ParentDir)
                );
                if climbs_above_start {
                    // A relative path climbing above its start keeps `..`.
                    out.push("..");
                } else if out.parent().is_some() {
                    // `/` has no parent: `..` never climbs above it.
                    out.pop();
                }
            }
            Component::Normal(name) => out.push(name),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// A path argument, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedPath {
    /// The argument as the model sent it.
    pub raw: String,
    /// The lexical absolute path (what the tool opens).
    pub abs: PathBuf,
    /// The real path: symlinks resolved for the part that exists.
    pub real: PathBuf,
    /// How messages show this path: relative to the workspace when inside
    /// it (`.` for the root), else absolute.
    pub display: String,
}

/// A path that may not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathError {
    /// The real path is outside the workspace and confinement is on (D1).
    Outside {
        /// The argument as sent.
        raw: String,
        /// Where it is said to lead: the path as written, or `a path above
        /// the workspace root` / `a path outside the workspace root` where
        /// its end depends on the machine (never a real path).
        real: String,
        /// The real path it leads to (for checks and logs, not the model).
        resolved: PathBuf,
        /// `" through a symlink"` when a symlink led outside.
        via: &'static str,
        /// The workspace root.
        root: String,
    },
    /// The path could not be looked up for another reason.
    Unresolvable {
        /// The argument as sent.
        raw: String,
        /// What happened and what to do next, the path shown relative to
        /// the workspace.
        message: String,
        /// The kind of failure.
        class: ErrorClass,
        /// The OS error's C name, when it had a number.
        errno: Option<&'static str>,
    },
}

impl std::fmt::Display for PathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Outside {
                raw,
                real,
                via,
                root,
                ..
            } => write!(
                f,
                "Path \"{raw}\" is outside the workspace: it resolves to {real}{via}, but tools \
                 may only touch files under the workspace root {root}. Use a path relative to \
                 the workspace root."
            ),
            Self::Unresolvable { message, .. } => f.write_str(message),
        }
    }
}

impl std::error::Error for PathError {}

/// Where paths resolve and whether they are confined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PathPolicy {
    root: PathBuf,
    confine: bool,
    home: Option<PathBuf>,
}

impl PathPolicy {
    /// A policy rooted at the real path of `root`.
    pub(crate) fn new(fs: &dyn FsOps, root: &Path, confine: bool) -> io::Result<Self> {
        let root = fs.canonicalize(root).map_err(|err| {
            io::Error::new(
                err.kind(),
                format!("workspace root {} is not usable: {err}", root.display()),
            )
        })?;
        if !fs.metadata(&root)?.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("workspace root {} is not a directory", root.display()),
            ));
        }
        Ok(Self {
            root,
            confine,
            home: std::env::var_os("HOME").map(PathBuf::from),
        })
    }

    /// Sets the directory `~` expands to.
    #[cfg(test)]
    pub(crate) fn with_home(mut self, home: Option<PathBuf>) -> Self {
        self.home = home;
        self
    }

    pub(crate) fn set_confine(&mut self, confine: bool) {
        self.confine = confine;
    }

    /// Whether paths outside the root are refused.
    pub(crate) fn confines(&self) -> bool {
        self.confine
    }

    /// The workspace root (a real path).
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// The lexical absolute path of an argument, without touching the disk.
    pub(crate) fn absolute(&self, raw: &str) -> PathBuf {
        let normalized = normalize_input(raw, self.home.as_deref());
        let path = Path::new(&normalized);
        if path.is_absolute() {
            clean(path)
        } else {
            clean(&self.root.join(path))
        }
    }

    /// Resolves an argument and applies confinement.
    pub(crate) fn resolve(&self, fs: &dyn FsOps, raw: &str) -> Result<ResolvedPath, PathError> {
        self.resolve_absolute(fs, raw, self.absolute(raw))
    }

    /// Applies confinement to an absolute path computed from `raw`.
    pub(crate) fn resolve_absolute(
        &self,
        fs: &dyn FsOps,
        raw: &str,
        abs: PathBuf,
    ) -> Result<ResolvedPath, PathError> {
        let real = real_path(fs, &abs).map_err(|err| {
            let found = cause(&err);
            // A confined path outside the root is named as it was written:
            // its lexical form may hold where the workspace happens to be.
            let shown = if self.confine && !abs.starts_with(&self.root) {
                raw.to_owned()
            } else {
                self.display(&abs)
            };
            PathError::Unresolvable {
                raw: raw.to_owned(),
                message: describe_io_error("look up", &shown, &err),
                class: found.class,
                errno: found.errno,
            }
        })?;
        if self.confine && !real.starts_with(&self.root) {
            return Err(PathError::Outside {
                raw: raw.to_owned(),
                real: self.outside_target(raw, &abs),
                resolved: real,
                via: if abs.starts_with(&self.root) {
                    " through a symlink"
                } else {
                    ""
                },
                root: self.root.display().to_string(),
            });
        }
        Ok(ResolvedPath {
            raw: raw.to_owned(),
            display: self.display(&abs),
            abs,
            real,
        })
    }

    /// Where a path that leads outside the root is said to resolve: only
    /// ever the path as the model wrote it (cleaned of `.` and `//`), never
    /// a real path. Where the model cannot know it, the path's end depends
    /// on where the workspace happens to be (a `..` that climbs out of the
    /// root or of another presented directory, a symlink inside); naming it
    /// would tell the model, and every price of what it reads, the temp
    /// dir.
    fn outside_target(&self, raw: &str, abs: &Path) -> String {
        let outside = || "a path outside the workspace root".to_owned();
        // Without `~` expanded: the home directory is the machine's too.
        let written = normalize_input(raw, None);
        let home = written == "~" || written.starts_with("~/");
        let written = Path::new(&written);
        if abs.starts_with(&self.root) || home {
            outside()
        } else if written.is_relative() {
            "a path above the workspace root".to_owned()
        } else if written.components().any(|c| c == Component::ParentDir) {
            outside()
        } else {
            abs.display().to_string()
        }
    }

    /// How messages show `abs`: relative to the root when inside it, its
    /// names as tools show names ([`show_path`]: control pictures, `\xNN`).
    pub(crate) fn display(&self, abs: &Path) -> String {
        match abs.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
            Ok(rel) => show_path(rel).into_owned(),
            Err(_) => show_path(abs).into_owned(),
        }
    }

    /// The path `abs` stands for when it is written as tools show names
    /// (`\xNN`, control pictures; [`unshow`]): only the part below the
    /// root is read that way. `None` when it holds no such spelling.
    pub(crate) fn unshown(&self, abs: &Path) -> Option<PathBuf> {
        use std::os::unix::ffi::OsStrExt;
        let (base, rest) = match abs.strip_prefix(&self.root) {
            Ok(rel) => (self.root.as_path(), rel),
            Err(_) => (Path::new(""), abs),
        };
        let bytes = unshow(rest.as_os_str().as_bytes())?;
        Some(base.join(OsStr::from_bytes(&bytes)))
    }

    /// Existing paths with names close to a missing one, for "did you
    /// mean" hints (D6): corrects each missing component against its
    /// directory's entries. At most three, as display paths.
    pub(crate) fn suggest(&self, fs: &dyn FsOps, abs: &Path) -> Vec<String> {
        let Ok(rel) = abs.strip_prefix(&self.root) else {
            return Vec::new();
        };
        let parts: Vec<&OsStr> = rel.components().map(|c| c.as_os_str()).collect();
        let mut dir = self.root.clone();
        for (index, part) in parts.iter().enumerate() {
            let candidate = dir.join(part);
            if fs.symlink_metadata(&candidate).is_ok() {
                dir = candidate;
                continue;
            }
            let names = close_names(fs, &dir, &part.to_string_lossy());
            let is_last = index + 1 == parts.len();
            if is_last {
                return names
                    .into_iter()
                    .take(3)
                    .map(|name| self.display(&dir.join(name)))
                    .collect();
            }
            // Correct this directory name and keep going; suggest only a
            // correction that leads to something that exists.
            let Some(best) = names.into_iter().next() else {
                return Vec::new();
            };
            let mut corrected = dir.join(best);
            for rest in &parts[index + 1..] {
                corrected.push(rest);
            }
            if fs.symlink_metadata(&corrected).is_ok() {
                return vec![self.display(&corrected)];
            }
            return self.suggest(fs, &corrected).into_iter().take(1).collect();
        }
        Vec::new()
    }
}

/// The other spellings `read` tries when a path does not exist
/// (§common.3.4), in order: a narrow no-break space (U+202F) before `AM.` /
/// `PM.` as in macOS screenshot names, the path in Unicode NFD, ASCII
/// apostrophes as U+2019, and NFD with curly apostrophes.
pub(crate) fn read_variants(abs: &Path) -> Vec<PathBuf> {
    use unicode_normalization::UnicodeNormalization;
    let text = abs.to_string_lossy();
    let mut am_pm = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        let marker = chars
            .get(i + 1..i + 4)
            .map(|w| w.iter().collect::<String>().to_ascii_uppercase());
        if *c == ' ' && matches!(marker.as_deref(), Some("AM." | "PM.")) {
            am_pm.push('\u{202F}');
        } else {
            am_pm.push(*c);
        }
    }
    let nfd: String = text.nfd().collect();
    let curly = text.replace('\'', "\u{2019}");
    let nfd_curly = nfd.replace('\'', "\u{2019}");
    let mut out: Vec<PathBuf> = Vec::new();
    for candidate in [am_pm, nfd, curly, nfd_curly] {
        let candidate = PathBuf::from(candidate);
        if candidate.as_path() != abs && !out.contains(&candidate) {
            out.push(candidate);
        }
    }
    out
}

/// The names in `dir` that look like `wanted`, best first (compared as
/// text, invalid UTF-8 replaced; kept as they are).
fn close_names(fs: &dyn FsOps, dir: &Path, wanted: &str) -> Vec<std::ffi::OsString> {
    let Ok(entries) = fs.read_dir(dir) else {
        return Vec::new();
    };
    let wanted_lower = wanted.to_lowercase();
    let mut scored: Vec<(f64, std::ffi::OsString)> = entries
        .into_iter()
        .filter_map(|entry| {
            let name = entry.name;
            let lower = name.to_string_lossy().to_lowercase();
            let score = if lower == wanted_lower {
                2.0
            } else {
                let distance = strsim::damerau_levenshtein(&lower, &wanted_lower);
                let allowed = (wanted_lower.chars().count() / 3).max(1);
                let jw = strsim::jaro_winkler(&lower, &wanted_lower);
                if distance <= allowed {
                    1.0 + jw
                } else if jw >= 0.85 {
                    jw
                } else {
                    return None;
                }
            };
            Some((score, name))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, name)| name).collect()
}

/// Symlinks followed at most while resolving one path (as the OS does).
const MAX_SYMLINK_HOPS: usize = 40;

/// The real path of `abs`: the nearest existing ancestor canonicalised,
/// with the missing rest appended. A dangling symlink on the way is
/// followed to where it points, since that is where a write would land.
fn real_path(fs: &dyn FsOps, abs: &Path) -> io::Result<PathBuf> {
    real_path_hops(fs, abs, 0)
}

fn real_path_hops(fs: &dyn FsOps, abs: &Path, hops: usize) -> io::Result<PathBuf> {
    let mut existing = abs.to_path_buf();
    let mut missing: Vec<std::ffi::OsString> = Vec::new();
    loop {
        match fs.canonicalize(&existing) {
            Ok(mut real) => {
                for part in missing.iter().rev() {
                    real.push(part);
                }
                return Ok(real);
            }
            Err(err)
                if matches!(
                    err.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                let dangling = fs
                    .symlink_metadata(&existing)
                    .is_ok_and(|m| m.kind == super::ops::FileKind::Symlink);
                if dangling {
                    if hops >= MAX_SYMLINK_HOPS {
                        return Err(io::Error::from_raw_os_error(libc::ELOOP));
                    }
                    let target = fs.read_link(&existing)?;
                    let parent = existing.parent().unwrap_or(Path::new("/"));
                    // Not cleaned as text: in `a/../b` the kernel follows
                    // `a` before it climbs, and so must the check.
                    let mut resolved = real_path_hops(fs, &parent.join(target), hops + 1)?;
                    for part in missing.iter().rev() {
                        resolved.push(part);
                    }
                    return Ok(resolved);
                }
                let Some(name) = existing.file_name() else {
                    return Err(err);
                };
                missing.push(name.to_os_string());
                if !existing.pop() {
                    return Err(err);
                }
            }
            Err(err) => return Err(err),
        }
    }
}

/// A sentence for a missing path: the path, the suggestions if any, or a
/// hint to use `find` (D6).
pub(crate) fn not_found_message(what: &str, display: &str, suggestions: &[String]) -> String {
    match suggestions {
        [] => {
            let name = Path::new(display)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| display.to_owned());
            format!(
                "{what} not found: {display}. No similar name exists there; use the find tool \
                 (pattern \"**/{name}\") or ls to locate it."
            )
        }
        [one] => format!("{what} not found: {display}. Did you mean {one}?"),
        many => format!(
            "{what} not found: {display}. Did you mean one of: {}?",
            many.join(", ")
        ),
    }
}

#[cfg(test)]
#[path = "path_properties.rs"]
mod properties;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ops::MemoryFs;
    use pretty_assertions::assert_eq;

    /// What a refusal says a path leads to, where it really does, and how.
    fn escape(result: Result<ResolvedPath, PathError>) -> (String, PathBuf, &'static str) {
        match result {
            Err(PathError::Outside {
                real,
                resolved,
                via,
                ..
            }) => (real, resolved, via),
            other => panic!("not refused as outside: {other:?}"),
        }
    }

    fn policy(fs: &MemoryFs) -> PathPolicy {
        PathPolicy::new(fs, Path::new("/ws"), true)
            .unwrap()
            .with_home(Some(PathBuf::from("/home/me")))
    }

    #[test]
    fn normalisation_steps() {
        let home = Some(Path::new("/home/me"));
        assert_eq!(normalize_input("a\u{00A0}b\u{202F}c", home), "a b c");
        assert_eq!(normalize_input("@src/main.rs", home), "src/main.rs");
        assert_eq!(normalize_input("@@x", home), "@x");
        assert_eq!(normalize_input("~", home), "/home/me");
        assert_eq!(normalize_input("~/notes.md", home), "/home/me/notes.md");
        assert_eq!(normalize_input("~draft.md", home), "~draft.md");
        assert_eq!(normalize_input("~user/x", home), "~user/x");
        assert_eq!(
            normalize_input("file:///tmp/a%20b.txt", home),
            "/tmp/a b.txt"
        );
        assert_eq!(normalize_input(" padded ", home), " padded ");
    }

    #[test]
    fn resolves_relative_paths_lexically_inside_the_root() {
        let fs = MemoryFs::new();
        fs.add_file("/ws/src/main.rs", "fn main() {}");
        let p = policy(&fs);
        let r = p.resolve(&fs, "src/../src/./main.rs").unwrap();
        assert_eq!(r.abs, PathBuf::from("/ws/src/main.rs"));
        assert_eq!(r.real, PathBuf::from("/ws/src/main.rs"));
        assert_eq!(r.display, "src/main.rs");
        assert_eq!(p.resolve(&fs, ".").unwrap().display, ".");
        assert_eq!(p.resolve(&fs, "/ws/src").unwrap().display, "src");
    }

    #[test]
    fn refuses_parent_escapes_and_absolute_paths_outside() {
        let fs = MemoryFs::new();
        fs.add_dir("/ws");
        fs.add_file("/etc/passwd", "root");
        let p = policy(&fs);
        let err = p.resolve(&fs, "../etc/passwd").unwrap_err();
        assert_eq!(
            err.to_string(),
            "Path \"../etc/passwd\" is outside the workspace: it resolves to a path above the \
             workspace root, but tools may only touch files under the workspace root /ws. Use a \
             path relative to the workspace root."
        );
        assert_eq!(
            p.resolve(&fs, "/etc/passwd").unwrap_err().to_string(),
            "Path \"/etc/passwd\" is outside the workspace: it resolves to /etc/passwd, but \
             tools may only touch files under the workspace root /ws. Use a path relative to the \
             workspace root."
        );
        // Where the end of a path depends on the machine (the home
        // directory, a `..` after a directory the model knows by another
        // name), only the path as written is named.
        let outside = |raw: &str| p.resolve(&fs, raw).unwrap_err().to_string();
        assert_eq!(
            outside("~/x"),
            "Path \"~/x\" is outside the workspace: it resolves to a path outside the workspace \
             root, but tools may only touch files under the workspace root /ws. Use a path \
             relative to the workspace root."
        );
        assert_eq!(
            outside("/ws/../x.txt"),
            "Path \"/ws/../x.txt\" is outside the workspace: it resolves to a path outside the \
             workspace root, but tools may only touch files under the workspace root /ws. Use a \
             path relative to the workspace root."
        );
        assert_eq!(
            outside("file:///etc/./passwd"),
            "Path \"file:///etc/./passwd\" is outside the workspace: it resolves to /etc/passwd, \
             but tools may only touch files under the workspace root /ws. Use a path relative to \
             the workspace root."
        );
    }

    #[test]
    fn refuses_symlinks_that_lead_outside_even_for_new_files() {
        let fs = MemoryFs::new();
        fs.add_dir("/ws");
        fs.add_dir("/etc");
        fs.add_symlink("/ws/outside", "../etc");
        let p = policy(&fs);
        // Where the symlink leads is not named: it may be anywhere on the
        // machine.
        assert_eq!(
            escape(p.resolve(&fs, "outside/new-file.txt")),
            (
                "a path outside the workspace root".to_owned(),
                PathBuf::from("/etc/new-file.txt"),
                " through a symlink"
            )
        );
    }

    #[test]
    fn symlink_inside_the_workspace_is_fine_and_keys_on_the_target() {
        let fs = MemoryFs::new();
        fs.add_file("/ws/real.txt", "x");
        fs.add_symlink("/ws/link.txt", "real.txt");
        let p = policy(&fs);
        let r = p.resolve(&fs, "link.txt").unwrap();
        assert_eq!(r.real, PathBuf::from("/ws/real.txt"));
        assert_eq!(r.display, "link.txt");
    }

    #[test]
    fn unconfined_allows_outside_and_shows_absolute_paths() {
        let fs = MemoryFs::new();
        fs.add_dir("/ws");
        fs.add_file("/etc/passwd", "root");
        let mut p = policy(&fs);
        p.set_confine(false);
        let r = p.resolve(&fs, "../etc/passwd").unwrap();
        assert_eq!(r.display, "/etc/passwd");
    }

    #[test]
    fn suggests_close_names_for_missing_files_and_directories() {
        let fs = MemoryFs::new();
        fs.add_file("/ws/src/main.rs", "");
        fs.add_file("/ws/src/lib.rs", "");
        fs.add_file("/ws/README.md", "");
        let p = policy(&fs);
        assert_eq!(
            p.suggest(&fs, Path::new("/ws/src/mian.rs")),
            vec!["src/main.rs"]
        );
        assert_eq!(
            p.suggest(&fs, Path::new("/ws/scr/main.rs")),
            vec!["src/main.rs"]
        );
        assert_eq!(
            p.suggest(&fs, Path::new("/ws/readme.md")),
            vec!["README.md"]
        );
        assert!(p.suggest(&fs, Path::new("/ws/src/zzzzzz.py")).is_empty());
    }

    #[test]
    fn dangling_symlinks_resolve_to_where_they_point() {
        let fs = MemoryFs::new();
        fs.add_dir("/ws");
        fs.add_dir("/outside");
        fs.add_symlink("/ws/dangling_out", "../outside/missing.txt");
        fs.add_symlink("/ws/dangling_in", "sub/later.txt");
        let p = policy(&fs);
        assert_eq!(
            escape(p.resolve(&fs, "dangling_out")),
            (
                "a path outside the workspace root".to_owned(),
                PathBuf::from("/outside/missing.txt"),
                " through a symlink"
            )
        );
        assert_eq!(
            p.resolve(&fs, "dangling_in").unwrap().real,
            PathBuf::from("/ws/sub/later.txt")
        );
    }

    /// Issue 10, item 1: `trick -> dlink/../pwned.txt` with
    /// `dlink -> ../outside/odir`. The kernel follows `dlink` before it
    /// climbs, so `trick` names `/outside/pwned.txt`; cleaning the target
    /// as text made it `/ws/pwned.txt`.
    #[test]
    fn a_dangling_symlink_climbing_through_another_symlink_leads_where_the_kernel_goes() {
        let fs = MemoryFs::new();
        fs.add_dir("/ws");
        fs.add_dir("/outside/odir");
        fs.add_symlink("/ws/dlink", "../outside/odir");
        fs.add_symlink("/ws/trick", "dlink/../pwned.txt");
        fs.add_symlink("/ws/fine", "dir/../kept.txt");
        fs.add_dir("/ws/dir");
        let p = policy(&fs);
        assert_eq!(
            p.resolve(&fs, "trick").unwrap_err(),
            PathError::Outside {
                raw: "trick".to_owned(),
                real: "a path outside the workspace root".to_owned(),
                resolved: PathBuf::from("/outside/pwned.txt"),
                via: " through a symlink",
                root: "/ws".to_owned(),
            }
        );
        assert_eq!(
            p.resolve(&fs, "fine").unwrap().real,
            PathBuf::from("/ws/kept.txt")
        );
    }

    /// Regression: `clean` once let `..` climb above `/` and collapsed a
    /// relative `../..` to `.`. Found by the path property with the start
    /// `<tmp>/` and components `.., .., ..`.
    #[test]
    fn clean_never_climbs_above_the_root() {
        assert_eq!(clean(Path::new("/a/../..")), PathBuf::from("/"));
        assert_eq!(clean(Path::new("/..")), PathBuf::from("/"));
        assert_eq!(clean(Path::new("../..")), PathBuf::from("../.."));
        assert_eq!(clean(Path::new("a/../../b")), PathBuf::from("../b"));
        assert_eq!(clean(Path::new("a/./b/..")), PathBuf::from("a"));
    }

    #[test]
    fn read_variants_cover_screenshots_nfd_and_apostrophes() {
        let variants = read_variants(Path::new("/ws/Screenshot 2024 at 10.00.00 am.png"));
        assert_eq!(
            variants[0],
            PathBuf::from("/ws/Screenshot 2024 at 10.00.00\u{202F}am.png")
        );
        let variants = read_variants(Path::new("/ws/café's.txt"));
        assert_eq!(
            variants,
            vec![
                PathBuf::from("/ws/cafe\u{301}'s.txt"),
                PathBuf::from("/ws/café\u{2019}s.txt"),
                PathBuf::from("/ws/cafe\u{301}\u{2019}s.txt"),
            ]
        );
        assert!(read_variants(Path::new("/ws/plain.txt")).is_empty());
    }

    #[test]
    fn not_found_messages() {
        assert_eq!(
            not_found_message("File", "src/mian.rs", &["src/main.rs".into()]),
            "File not found: src/mian.rs. Did you mean src/main.rs?"
        );
        assert_eq!(
            not_found_message("File", "a/x.py", &[]),
            "File not found: a/x.py. No similar name exists there; use the find tool (pattern \
             \"**/x.py\") or ls to locate it."
        );
    }
}
