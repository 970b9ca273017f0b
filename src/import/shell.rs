//! A client's shell that keeps its working directory between calls
//! (Claude Code's Bash: `cd sub` in one call, `make` in the next runs in
//! `sub`). This harness's bash starts every command in the workspace, so a
//! command recorded while the shell stood elsewhere is replayed as
//! `cd DIR && COMMAND`.
//!
//! Where the shell stands is known from two sources: the client's own word
//! (the working directory an entry records, when it changes, and "Shell cwd
//! was reset to DIR" in a result) and the `cd`s of the commands themselves,
//! followed when they are plain (`cd DIR` at the top level of the command,
//! a literal directory, no subshell or pipeline around it).
//!
//! A Windows working directory (`D:\proj`) is kept with `/` for `\`
//! (`D:/proj/src`), a form the session's path map takes for the same
//! directory; a path with a drive letter is absolute, never joined to
//! where the shell stands.

/// The shell of one session.
#[derive(Clone, Debug, Default)]
pub(crate) struct Shell {
    /// The session's working directory (the workspace).
    home: Option<String>,
    /// Where the shell stands now.
    dir: Option<String>,
    /// The directory the client last said it stood in.
    told: Option<String>,
}

impl Shell {
    /// A shell that starts in `cwd`.
    pub(crate) fn new(cwd: Option<&str>) -> Self {
        let cwd = cwd.map(|c| normalize(c.trim_end_matches('/')));
        Self {
            home: cwd.clone(),
            dir: cwd.clone(),
            told: cwd,
        }
    }

    /// The client recorded `cwd` as its working directory; a change from
    /// what it said before moves the shell there.
    pub(crate) fn told(&mut self, cwd: &str) {
        let cwd = normalize(cwd.trim_end_matches('/'));
        if self.told.as_deref() != Some(cwd.as_str()) {
            self.told = Some(cwd.clone());
            self.dir = Some(cwd);
        }
    }

    /// A result's text: Claude Code says when it moved the shell back to
    /// the project (`Shell cwd was reset to DIR`).
    pub(crate) fn result(&mut self, text: &str) {
        if let Some(at) = text.rfind("Shell cwd was reset to ") {
            let rest = &text[at + "Shell cwd was reset to ".len()..];
            let dir = rest.lines().next().unwrap_or("").trim();
            if is_absolute(dir) {
                self.dir = Some(normalize(dir.trim_end_matches('/')));
            }
        }
    }

    /// Where the shell stands, when that is not the workspace: a path
    /// argument a client resolves against its working directory (Grep's
    /// and Glob's default `path`, a relative one) is resolved there.
    pub(crate) fn moved(&self) -> Option<&str> {
        match (&self.dir, &self.home) {
            (Some(dir), Some(home)) if dir != home => Some(dir),
            _ => None,
        }
    }

    /// A path argument as the client resolved it: a relative one against
    /// where the shell stands.
    pub(crate) fn resolve(&self, path: &str) -> String {
        match &self.dir {
            Some(dir) if !is_absolute(path) && !path.starts_with('~') => {
                normalize(&format!("{dir}/{path}"))
            }
            _ => path.to_owned(),
        }
    }

    /// The command to replay for `command`: prefixed with `cd DIR && `
    /// when the shell stands elsewhere than the workspace; then the
    /// command's own plain `cd`s move the shell.
    pub(crate) fn command(&mut self, command: &str) -> String {
        let replayed = match (&self.dir, &self.home) {
            (Some(dir), Some(home)) if dir != home => format!("cd {} && {command}", quote(dir)),
            _ => command.to_owned(),
        };
        if let Some(dir) = &self.dir {
            self.dir = Some(follow_cds(dir, command));
        }
        replayed
    }
}

/// `dir` after the plain top-level `cd`s of `command`. A command with a
/// subshell, a substitution, braces or a backquote is not followed (its
/// `cd` may not be the shell's); a `cd` whose directory is not a literal
/// path (`cd`, `cd -`, `cd ~`, `cd $X`) stops following.
fn follow_cds(dir: &str, command: &str) -> String {
    if command.contains(['(', ')', '`', '{', '}']) {
        return dir.to_owned();
    }
    let mut at = dir.to_owned();
    for segment in segments(command) {
        let segment = segment.trim();
        let Some(rest) = segment.strip_prefix("cd") else {
            continue;
        };
        if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
            continue;
        }
        if segment.contains('|') {
            continue; // a cd in a pipeline runs in a subshell
        }
        let Some(target) = literal(rest.trim()) else {
            break;
        };
        at = if is_absolute(&target) {
            normalize(&target)
        } else {
            normalize(&format!("{at}/{target}"))
        };
    }
    at
}

/// The git subcommand of `command` that changes the files of the working
/// tree, if one of its top-level commands runs one: `checkout` and
/// `switch` (but not `-b NAME`/`-c NAME` alone, which start a branch
/// where the tree stands), `pull`, `merge`, `rebase`, `cherry-pick`,
/// `revert`, `am`, `apply`, `restore`, `reset` with `--hard`, `--merge` or
/// `--keep`, and `stash` that puts work away or back. Replayed, such a
/// command runs on the replay's clone, whose branches and remotes are
/// today's (or absent), so the files after it may not be the ones the
/// session saw.
pub(crate) fn git_moves_tree(command: &str) -> Option<String> {
    segments(command).into_iter().find_map(|segment| {
        let mut words = segment
            .split_whitespace()
            .skip_while(|w| w.contains('=') && !w.starts_with('-'));
        if words.next()? != "git" {
            return None;
        }
        // Options before the subcommand, with their values.
        let mut sub = words.next()?;
        while sub.starts_with('-') {
            if matches!(
                sub,
                "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace"
            ) {
                words.next()?;
            }
            sub = words.next()?;
        }
        let rest: Vec<&str> = words.collect();
        let moves = match sub {
            "checkout" | "switch" => {
                !matches!(
                    rest.as_slice(),
                    [flag, _] if matches!(*flag, "-b" | "-B" | "-c" | "-C")
                ) && !rest.is_empty()
            }
            "pull" | "merge" | "rebase" | "cherry-pick" | "revert" | "am" | "apply" | "restore" => {
                true
            }
            "reset" => rest
                .iter()
                .any(|w| matches!(*w, "--hard" | "--merge" | "--keep")),
            "stash" => matches!(
                rest.first().copied(),
                None | Some("push" | "save" | "pop" | "apply" | "branch" | "-u" | "-m")
            ),
            _ => false,
        };
        moves.then(|| sub.to_owned())
    })
}

/// The top-level commands of a command line: split at `&&`, `||`, `;` and
/// newlines outside quotes.
fn segments(command: &str) -> Vec<&str> {
    let bytes = command.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'\'' | b'"' => quote = Some(b),
                b'\\' => i += 1,
                b';' | b'\n' => {
                    out.push(&command[start..i]);
                    start = i + 1;
                }
                b'&' | b'|' if bytes.get(i + 1) == Some(&b) => {
                    out.push(&command[start..i]);
                    start = i + 2;
                    i += 1;
                }
                _ => {}
            },
        }
        i += 1;
    }
    out.push(&command[start.min(command.len())..]);
    out
}

/// A literal directory argument: one word, or one quoted string, with no
/// expansion in it.
fn literal(arg: &str) -> Option<String> {
    let word = if let Some(inner) = arg.strip_prefix('\'').and_then(|a| a.strip_suffix('\'')) {
        inner.to_owned()
    } else if let Some(inner) = arg.strip_prefix('"').and_then(|a| a.strip_suffix('"')) {
        if inner.contains(['$', '\\', '"']) {
            return None;
        }
        inner.to_owned()
    } else {
        if arg.contains([
            ' ', '\t', '$', '~', '*', '?', '[', '\\', '\'', '"', '<', '>', '&',
        ]) {
            return None;
        }
        arg.to_owned()
    };
    (!word.is_empty() && word != "-" && !word.contains('\'')).then_some(word)
}

/// The drive letter of a Windows path (`D:\proj`, `d:/proj`, `D:`).
fn drive(path: &str) -> Option<char> {
    match path.as_bytes() {
        [d, b':'] | [d, b':', b'\\' | b'/', ..] if d.is_ascii_alphabetic() => {
            Some(char::from(d.to_ascii_uppercase()))
        }
        _ => None,
    }
}

/// Whether `path` is absolute: from `/`, or from a Windows drive.
fn is_absolute(path: &str) -> bool {
    path.starts_with('/') || drive(path).is_some()
}

/// `path` with `.` and `..` components resolved lexically; a Windows path
/// (`D:\proj\src\..`) keeps its drive and takes `/` for `\` (`D:/proj`).
pub(super) fn normalize(path: &str) -> String {
    let (root, path) = match drive(path) {
        Some(d) => (format!("{d}:/"), path[2..].replace('\\', "/")),
        None => ("/".to_owned(), path.to_owned()),
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("{root}{}", parts.join("/"))
}

/// `dir` as one shell word.
pub(super) fn quote(dir: &str) -> String {
    if dir
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%,=".contains(c))
    {
        dir.to_owned()
    } else {
        format!("'{}'", dir.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cd_carries_over_to_the_next_command() {
        let mut shell = Shell::new(Some("/p/app"));
        let replayed: Vec<String> = [
            "ls",
            "cd src && ls",
            "make",
            "cd ../docs; cd \"my notes\"",
            "cat a",
            "(cd /tmp) && pwd",
            "cd $HOME",
            "pwd",
        ]
        .iter()
        .map(|c| shell.command(c))
        .collect();
        assert_eq!(
            replayed,
            [
                "ls",
                "cd src && ls",
                "cd /p/app/src && make",
                "cd /p/app/src && cd ../docs; cd \"my notes\"",
                "cd '/p/app/docs/my notes' && cat a",
                "cd '/p/app/docs/my notes' && (cd /tmp) && pwd",
                "cd '/p/app/docs/my notes' && cd $HOME",
                "cd '/p/app/docs/my notes' && pwd",
            ]
        );
    }

    #[test]
    fn the_client_s_word_moves_the_shell() {
        let mut shell = Shell::new(Some("/p/app"));
        shell.told("/p/app");
        assert_eq!(shell.command("ls"), "ls");
        shell.told("/p/app/src");
        assert_eq!(shell.command("ls"), "cd /p/app/src && ls");
        shell.command("cd /elsewhere");
        shell.result("out\nShell cwd was reset to /p/app\n");
        assert_eq!(shell.command("ls"), "ls");
        // The same word again is no news: the cd stands.
        shell.command("cd lib");
        shell.told("/p/app/src");
        assert_eq!(shell.command("ls"), "cd /p/app/lib && ls");
        assert_eq!(
            segments("a && b || c; d\ne 'x;y' \"p&&q\""),
            ["a ", " b ", " c", " d", "e 'x;y' \"p&&q\""]
        );
    }

    #[test]
    fn a_windows_shell_keeps_its_drive() {
        // Claude Code on Windows records `D:\proj` and paths such as
        // `D:\proj\src`: absolute, never joined to where the shell stands.
        let mut shell = Shell::new(Some("D:\\proj"));
        shell.told("D:\\proj");
        assert_eq!(shell.moved(), None);
        assert_eq!(shell.resolve("D:\\proj\\src"), "D:\\proj\\src");
        assert_eq!(shell.resolve("src\\lib"), "D:/proj/src/lib");
        let replayed: Vec<String> = ["cd src && go test", "go vet", "cd D:/other", "ls"]
            .iter()
            .map(|c| shell.command(c))
            .collect();
        assert_eq!(
            replayed,
            [
                "cd src && go test",
                "cd D:/proj/src && go vet",
                "cd D:/proj/src && cd D:/other",
                "cd D:/other && ls",
            ]
        );
        shell.result("Shell cwd was reset to D:\\proj");
        assert_eq!(shell.moved(), None);
        assert_eq!(shell.command("ls"), "ls");
        shell.told("D:\\proj\\src\\..\\web");
        assert_eq!(shell.moved(), Some("D:/proj/web"));
        assert_eq!(normalize("c:"), "C:/");
    }

    #[test]
    fn git_commands_that_change_the_tree_are_told() {
        let cases = [
            ("git checkout main && git pull", Some("checkout")),
            ("git checkout -b feat/x", None),
            ("git checkout -b feat/x origin/main", Some("checkout")),
            ("git checkout -- src/a.ts", Some("checkout")),
            (
                "cd /p && GIT_PAGER=cat git -C sub pull --rebase",
                Some("pull"),
            ),
            ("git stash", Some("stash")),
            ("git stash list", None),
            ("git reset --hard HEAD~1", Some("reset")),
            ("git reset HEAD a.ts", None),
            ("git status; git log --oneline -5", None),
            ("echo 'git checkout main'", None),
            ("git switch -c topic", None),
            ("git --no-pager merge origin/main", Some("merge")),
        ];
        for (command, want) in cases {
            assert_eq!(git_moves_tree(command).as_deref(), want, "{command}");
        }
    }
}
