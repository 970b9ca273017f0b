//! The session's working directory becomes the workspace: absolute paths
//! below it, in path arguments and inside bash commands, are written as
//! `${workspace}`-relative; paths elsewhere stay as they are (confinement
//! refuses them, as it should). Every other `${` is escaped as `$${`, so
//! the faux model sends it literally.
//!
//! Transcripts that people publish are often redacted by hand or by a
//! script that missed some places: the working directory says
//! `C:\Users\me\proj` while the calls say `/c/Users/[USER]/proj/…`. A home
//! directory whose user name is a placeholder (`[USER]`, `<user>`, `{user}`,
//! `$USER`, `%USERNAME%`, `REDACTED`, …) is taken for the working
//! directory's home, in either direction.

use std::borrow::Cow;

use serde_json::Value;

use crate::base::vars::escape;

/// Argument keys that hold a path.
const PATH_KEYS: [&str; 2] = ["path", "file_path"];

/// Maps one session's paths.
#[derive(Clone, Debug, Default)]
pub(crate) struct PathMap {
    cwd: Option<String>,
    /// The working directory is a Windows one (`C:\Users\me\proj`): paths
    /// below it are also spelled `C:/Users/me/proj/…` and, in Git Bash,
    /// `/c/Users/me/proj/…`, and take `\` and `/` alike.
    windows: Option<String>,
    /// The user name of the home directory the working directory is in
    /// (`me` in `/home/me/proj`, `/Users/me/…`, `C:\Users\me\…`).
    user: Option<String>,
}

impl PathMap {
    /// A map for a session whose working directory is `cwd`.
    pub(crate) fn new(cwd: Option<&str>) -> Self {
        let cwd = cwd
            .map(|c| c.trim_end_matches('/').to_owned())
            .filter(|c| !c.is_empty());
        let windows = cwd
            .as_deref()
            .filter(
                |c| matches!(c.as_bytes(), [d, b':', b'\\' | b'/', ..] if d.is_ascii_alphabetic()),
            )
            .and_then(windows_form)
            .map(|w| w.trim_end_matches('/').to_owned())
            .filter(|w| w.len() > 3);
        let user = cwd.as_deref().and_then(|c| {
            home_users(c)
                .next()
                .map(|(start, end)| c[start..end].to_owned())
        });
        Self { cwd, windows, user }
    }

    /// `text` with each home directory whose user name is a placeholder
    /// spelled with the working directory's user name; with `either`, also
    /// each home directory of any other user when the working directory's
    /// user name is the placeholder (the caller keeps the result only if
    /// it is below the working directory).
    fn unredact<'a>(&self, text: &'a str, either: bool) -> Cow<'a, str> {
        let Some(user) = self.user.as_deref() else {
            return Cow::Borrowed(text);
        };
        let mut out = String::new();
        let mut copied = 0;
        for (start, end) in home_users(text) {
            if start < copied {
                continue;
            }
            let found = &text[start..end];
            if found != user && (is_placeholder(found) || either && is_placeholder(user)) {
                out.push_str(&text[copied..start]);
                out.push_str(user);
                copied = end;
            }
        }
        if copied == 0 {
            return Cow::Borrowed(text);
        }
        out.push_str(&text[copied..]);
        Cow::Owned(out)
    }

    /// `path` below the Windows working directory: `Some("")` for the
    /// directory itself, `Some("src/a.ts")` below it.
    fn below_windows(&self, path: &str) -> Option<String> {
        let cwd = self.windows.as_deref()?;
        let path = windows_form(path)?;
        if path.trim_end_matches('/') == cwd {
            return Some(String::new());
        }
        path.strip_prefix(cwd)
            .and_then(|rest| rest.strip_prefix('/'))
            .map(str::to_owned)
    }

    /// The arguments with paths mapped and `${` escaped.
    pub(crate) fn args(&self, args: &Value) -> Value {
        self.value(args, None)
    }

    fn value(&self, value: &Value, key: Option<&str>) -> Value {
        match value {
            Value::String(s) => Value::String(match key {
                Some(k) if PATH_KEYS.contains(&k) => self.path(s),
                Some("command") => self.command(s),
                _ => escape(s),
            }),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.value(v, None)).collect())
            }
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.value(v, Some(k))))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// A path argument: the working directory itself or a path below it
    /// becomes `${workspace}`(`/…`).
    pub(crate) fn path(&self, path: &str) -> String {
        match self.unredact(path, true) {
            Cow::Owned(unredacted) => {
                let mapped = self.path_as_written(&unredacted);
                if mapped.starts_with("${workspace}") {
                    return mapped;
                }
                self.path_as_written(path)
            }
            Cow::Borrowed(_) => self.path_as_written(path),
        }
    }

    fn path_as_written(&self, path: &str) -> String {
        match self.below_windows(path) {
            Some(rest) if rest.is_empty() => return "${workspace}".to_owned(),
            Some(rest) => return format!("${{workspace}}/{}", escape(&rest)),
            None => {}
        }
        let escaped = escape(path);
        let Some(cwd) = &self.cwd else {
            return escaped;
        };
        let cwd = escape(cwd);
        if escaped == cwd {
            return "${workspace}".to_owned();
        }
        match escaped.strip_prefix(&format!("{cwd}/")) {
            Some(rest) => format!("${{workspace}}/{rest}"),
            None => escaped,
        }
    }

    /// The working directory, if known.
    pub(crate) fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }

    /// A recorded path as answers name it: relative to the working
    /// directory when below it (`src/a.ts`, `.` for the directory itself),
    /// relative ones as they are (without `./`), others absolute.
    pub(crate) fn relative(&self, path: &str) -> String {
        match self.unredact(path, true) {
            Cow::Owned(unredacted) => {
                let relative = self.relative_as_written(&unredacted);
                if relative != unredacted {
                    return relative;
                }
                self.relative_as_written(path)
            }
            Cow::Borrowed(_) => self.relative_as_written(path),
        }
    }

    fn relative_as_written(&self, path: &str) -> String {
        let path = path.strip_prefix("./").unwrap_or(path);
        match self.below_windows(path) {
            Some(rest) if rest.is_empty() => return ".".to_owned(),
            Some(rest) => return rest,
            None => {}
        }
        let Some(cwd) = &self.cwd else {
            return path.to_owned();
        };
        if path == cwd {
            return ".".to_owned();
        }
        match path
            .strip_prefix(cwd.as_str())
            .and_then(|r| r.strip_prefix('/'))
        {
            Some(rest) => rest.to_owned(),
            None => path.to_owned(),
        }
    }

    /// A bash command: every occurrence of the working directory that
    /// ends there or continues with `/` becomes `${workspace}`.
    pub(crate) fn command(&self, command: &str) -> String {
        let escaped = escape(&self.unredact(command, false));
        let Some(cwd) = &self.cwd else {
            return escaped;
        };
        let mut spellings = vec![escape(cwd)];
        if let Some(w) = &self.windows {
            // `C:/Users/me/proj`, `c:/…`, `C:\Users\me\proj`, `/c/Users/me/proj`
            let (drive, tail) = w.split_at(1);
            let lower = drive.to_ascii_lowercase();
            for d in [drive, lower.as_str()] {
                spellings.push(escape(&format!("{d}{tail}")));
                spellings.push(escape(&format!("{d}{}", tail.replace('/', "\\"))));
            }
            spellings.push(escape(&format!("/{lower}{}", &tail[1..])));
            spellings.sort();
            spellings.dedup();
        }
        let mut out = String::with_capacity(escaped.len());
        let mut rest = escaped.as_str();
        while let Some((at, cwd)) = spellings
            .iter()
            .filter_map(|s| rest.find(s.as_str()).map(|at| (at, s)))
            .min_by_key(|(at, s)| (*at, usize::MAX - s.len()))
        {
            let after = &rest[at + cwd.len()..];
            let before_ok = rest[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '.'));
            let after_ok = after
                .chars()
                .next()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '.'));
            out.push_str(&rest[..at]);
            if before_ok && after_ok {
                out.push_str("${workspace}");
                if self.windows.is_some() && after.starts_with('\\') {
                    // The rest of a Windows path, up to where the word
                    // ends, with `/` for `\\` (which the shell would eat).
                    let end = after
                        .find(|c: char| c.is_whitespace() || "'\"`;|&<>()".contains(c))
                        .unwrap_or(after.len());
                    out.push_str(&after[..end].replace('\\', "/"));
                    rest = &after[end..];
                    continue;
                }
            } else {
                out.push_str(cwd);
            }
            rest = after;
        }
        out.push_str(rest);
        out
    }
}

/// The byte ranges of the user names of the home directories `text`
/// names: the component after `/home/`, `/Users/` or `\\Users\\` (after a
/// drive, `C:/Users/`, or in Git Bash, `/c/Users/`), up to the next
/// separator. `/home/` and `/Users/` count where a path can begin: at the
/// start, after a drive or a Git Bash drive, or after a word break.
fn home_users(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    const HOMES: [&str; 3] = ["/home/", "/Users/", "\\Users\\"];
    let bytes = text.as_bytes();
    (0..bytes.len()).filter_map(move |at| {
        let home = HOMES
            .iter()
            .find(|h| bytes[at..].starts_with(h.as_bytes()))?;
        let before = &bytes[..at];
        let starts_path = match before {
            [] => true,
            [.., b'/', d] if d.is_ascii_alphabetic() => true,
            [.., c] => !(c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.')),
        };
        if !starts_path {
            return None;
        }
        let start = at + home.len();
        let end = text[start..]
            .find(|c: char| c.is_whitespace() || "/\\'\"`;|&():".contains(c))
            .map_or(text.len(), |n| start + n);
        (end > start).then_some((start, end))
    })
}

/// A user name that stands for one left out: `[USER]`, `<user>`, `{user}`,
/// `$USER`, `%USERNAME%`, `REDACTED`, `username`, `anonymous`.
fn is_placeholder(name: &str) -> bool {
    let bracketed = [('[', ']'), ('<', '>'), ('{', '}'), ('%', '%')]
        .iter()
        .any(|(open, close)| name.len() > 2 && name.starts_with(*open) && name.ends_with(*close));
    let inner = name
        .trim_matches(|c| "[]<>{}%$".contains(c))
        .to_ascii_lowercase();
    bracketed
        || name.starts_with('$')
        || matches!(
            inner.as_str(),
            "user" | "username" | "redacted" | "anonymous" | "anon" | "user_name"
        )
}

/// A Windows path with `/` for `\\` and an upper-case drive letter
/// (`c:\a\b` and `/c/a/b` are `C:/a/b`); `None` for a path of no drive.
fn windows_form(path: &str) -> Option<String> {
    let path = path.replace('\\', "/");
    let bytes = path.as_bytes();
    let (drive, rest) = match bytes {
        [d, b':', b'/', ..] if d.is_ascii_alphabetic() => (*d, &path[2..]),
        [d, b':'] if d.is_ascii_alphabetic() => (*d, "/"),
        [b'/', d, b'/', ..] if d.is_ascii_alphabetic() => (*d, &path[2..]),
        _ => return None,
    };
    Some(format!("{}:{rest}", drive.to_ascii_uppercase() as char))
}

/// A mapped path argument (`${workspace}/src`, `src`, `/elsewhere`) as
/// answers name it: workspace-relative (`src`, `.`), or absolute when it
/// is outside.
pub(crate) fn mapped_relative(mapped: &str) -> String {
    let unescaped = crate::base::vars::unescape(mapped);
    if unescaped == "${workspace}" || unescaped.is_empty() || unescaped == "." {
        return ".".to_owned();
    }
    if let Some(rest) = unescaped.strip_prefix("${workspace}/") {
        return rest.trim_end_matches('/').to_owned();
    }
    unescaped
        .strip_prefix("./")
        .unwrap_or(&unescaped)
        .trim_end_matches('/')
        .to_owned()
}

/// The path of `dir` below `top` (`app` for `/p/app` below `/p`), when
/// `dir` is below it and not `top` itself; a trailing `/` left out.
pub(crate) fn subdir_of<'a>(dir: &'a str, top: &str) -> Option<&'a str> {
    let sub = dir
        .strip_prefix(top)?
        .strip_prefix('/')?
        .trim_end_matches('/');
    (!sub.is_empty()).then_some(sub)
}

/// `rel` below the workspace-relative directory `dir` (`.` is the
/// workspace).
pub(crate) fn join_relative(dir: &str, rel: &str) -> String {
    if rel.starts_with('/') || dir == "." {
        return rel.to_owned();
    }
    format!("{dir}/{rel}")
}

/// A glob pattern split where its first wildcard component begins: an
/// absolute `/p/src/**/*.ts` is the directory `/p/src` and the pattern
/// `**/*.ts`. `None` for a pattern that is not absolute.
pub(crate) fn split_absolute_glob(pattern: &str) -> Option<(String, String)> {
    if !pattern.starts_with('/') {
        return None;
    }
    let parts: Vec<&str> = pattern.split('/').collect();
    let wild = parts
        .iter()
        .position(|p| p.contains(['*', '?', '[', '{']))
        .unwrap_or(parts.len().saturating_sub(1));
    let dir = parts[..wild].join("/");
    let rest = parts[wild..].join("/");
    let dir = if dir.is_empty() { "/".to_owned() } else { dir };
    Some((
        dir,
        if rest.is_empty() {
            "*".to_owned()
        } else {
            rest
        },
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn paths_below_the_working_directory_become_workspace_relative() {
        let map = PathMap::new(Some("/home/me/proj/"));
        assert_eq!(map.path("/home/me/proj/src/a.ts"), "${workspace}/src/a.ts");
        assert_eq!(map.path("/home/me/proj"), "${workspace}");
        assert_eq!(map.path("/home/me/project/a"), "/home/me/project/a");
        assert_eq!(map.path("/etc/passwd"), "/etc/passwd");
        assert_eq!(map.path("src/a.ts"), "src/a.ts");
    }

    #[test]
    fn windows_paths_below_the_working_directory_become_workspace_relative() {
        let map = PathMap::new(Some(r"C:\Users\me\proj"));
        assert_eq!(
            [
                map.path(r"C:\Users\me\proj\src\a.ts"),
                map.path("c:/Users/me/proj/src/a.ts"),
                map.path("/c/Users/me/proj/src"),
                map.path(r"C:\Users\me\proj"),
                map.path(r"C:\Users\me\project\a"),
                map.path(r"D:\Users\me\proj\a"),
                map.relative(r"C:\Users\me\proj\docs\x.md"),
            ],
            [
                "${workspace}/src/a.ts",
                "${workspace}/src/a.ts",
                "${workspace}/src",
                "${workspace}",
                r"C:\Users\me\project\a",
                r"D:\Users\me\proj\a",
                "docs/x.md",
            ]
        );
        assert_eq!(
            map.command(
                r#"python C:\Users\me\proj\scripts\x.py "C:/Users/me/proj/a b" && ls /c/Users/me/proj/src C:\Users\me\projx"#
            ),
            r#"python ${workspace}/scripts/x.py "${workspace}/a b" && ls ${workspace}/src C:\Users\me\projx"#
        );
        // A Unix working directory is never taken for a Windows one.
        assert_eq!(PathMap::new(Some("/c/p")).path("C:/p/a"), "C:/p/a");
    }

    #[test]
    fn a_redacted_user_name_is_taken_for_the_working_directory_s_home() {
        let map = PathMap::new(Some(r"C:\Users\Mischa\.claude-worktrees\M\w"));
        assert_eq!(
            [
                map.path("/c/Users/[USER]/.claude-worktrees/M/w/README.md"),
                map.path(r"C:\Users\<user>\.claude-worktrees\M\w\a.py"),
                map.relative("/c/Users/$USER/.claude-worktrees/M/w/docs/x.md"),
                // Another real user is another directory.
                map.path("/c/Users/bob/.claude-worktrees/M/w/a"),
            ],
            [
                "${workspace}/README.md",
                "${workspace}/a.py",
                "docs/x.md",
                "/c/Users/bob/.claude-worktrees/M/w/a",
            ]
        );
        assert_eq!(
            map.command("cat /c/Users/[USER]/.claude-worktrees/M/w/a.md /Users/[USER]x"),
            "cat ${workspace}/a.md /Users/[USER]x"
        );
        // The working directory redacted, the calls not.
        let map = PathMap::new(Some("/Users/[USER]/proj"));
        assert_eq!(
            [
                map.path("/Users/alice/proj/src/a.ts"),
                map.path("/Users/[USER]/proj/b"),
                map.path("/home/alice/proj/c"),
                map.path("/tmp/Users/alice/proj/d"),
            ],
            [
                "${workspace}/src/a.ts",
                "${workspace}/b",
                "/home/alice/proj/c",
                "/tmp/Users/alice/proj/d",
            ]
        );
        // A session outside any home has nothing to stand for.
        assert_eq!(
            PathMap::new(Some("/srv/proj")).path("/Users/[USER]/proj/a"),
            "/Users/[USER]/proj/a"
        );
    }

    #[test]
    fn absolute_globs_are_split_at_their_first_wildcard() {
        assert_eq!(
            split_absolute_glob("/p/src/**/*.ts"),
            Some(("/p/src".to_owned(), "**/*.ts".to_owned()))
        );
        assert_eq!(
            split_absolute_glob("/p/README.md"),
            Some(("/p".to_owned(), "README.md".to_owned()))
        );
        assert_eq!(split_absolute_glob("**/*.ts"), None);
        let map = PathMap::new(Some("/p"));
        assert_eq!(
            [
                map.relative("/p/a/b"),
                map.relative("/p"),
                map.relative("./x"),
                map.relative("/q")
            ],
            ["a/b", ".", "x", "/q"]
        );
        assert_eq!(
            [
                mapped_relative("${workspace}/src/"),
                mapped_relative("${workspace}"),
                mapped_relative("./lib"),
                mapped_relative("/etc")
            ],
            ["src", ".", "lib", "/etc"]
        );
    }

    #[test]
    fn commands_map_the_directory_and_escape_variables() {
        let map = PathMap::new(Some("/home/me/proj"));
        assert_eq!(
            map.command(
                "cd /home/me/proj && sed -i '' s/a/b/ /home/me/proj/x.ts /home/me/projx ${HOME}"
            ),
            "cd ${workspace} && sed -i '' s/a/b/ ${workspace}/x.ts /home/me/projx $${HOME}"
        );
    }

    #[test]
    fn arguments_map_paths_and_escape_every_other_string() {
        let map = PathMap::new(Some("/p"));
        assert_eq!(
            map.args(
                &json!({"path": "/p/a", "oldText": "${x} /p/a", "edits": [{"oldText": "${y}"}]})
            ),
            json!({
                "path": "${workspace}/a",
                "oldText": "$${x} /p/a",
                "edits": [{"oldText": "$${y}"}]
            })
        );
    }
}
