//! The glob matchers of the search tools: grep's `glob` file filter
//! (ripgrep's `--glob`) and find's pattern (fd's `--glob`).

use std::path::Path;

use globset::GlobBuilder;
use globset::GlobMatcher;

/// One compiled glob, and the literal text every match ends with, which
/// rejects most candidates (`*.rs` against `main.ts`) without running the
/// glob's regex.
#[derive(Clone, Debug)]
struct Glob {
    matcher: GlobMatcher,
    /// The pattern's last characters when they are plain (letters,
    /// digits, `.`, `-`, `_`): a match ends with them (ASCII case aside
    /// when case-insensitive, as the glob's `(?-u)(?i)` regex compares).
    tail: Box<[u8]>,
    case_insensitive: bool,
}

impl Glob {
    fn is_match(&self, candidate: impl AsRef<Path>) -> bool {
        let candidate = candidate.as_ref();
        self.ends_with_tail(candidate.as_os_str().as_encoded_bytes())
            && self.matcher.is_match(candidate)
    }

    fn ends_with_tail(&self, bytes: &[u8]) -> bool {
        bytes.len() >= self.tail.len() && {
            let end = &bytes[bytes.len() - self.tail.len()..];
            if self.case_insensitive {
                end.eq_ignore_ascii_case(&self.tail)
            } else {
                *end == *self.tail
            }
        }
    }

    /// Whether no candidate whose last name is `name` (raw bytes, as
    /// listed) can match, known without making the text a glob sees
    /// ([`show_name`](crate::tools::visible::show_name)): `name` is
    /// printable ASCII, which that text keeps as it is, and does not end
    /// with the plain end. The end holds no `/`, so a longer path ending
    /// in `name` cannot end with it either. `false` means only "not known".
    fn surely_misses(&self, name: &[u8]) -> bool {
        !self.tail.is_empty()
            && !self.ends_with_tail(name)
            && name.iter().all(|&byte| (0x20..0x7f).contains(&byte))
    }
}

/// The characters a glob always matches as themselves, wherever they
/// stand outside brackets and braces.
fn is_plain(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'-' | b'_')
}

/// Compiles one glob with the options the tools use: `*` and `?` never
/// match `/`, `{a,b}` alternates, `\` escapes.
fn compile_glob(pattern: &str, case_insensitive: bool) -> Result<Glob, globset::Error> {
    let matcher = GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .case_insensitive(case_insensitive)
        .build()?
        .compile_matcher();
    // A valid glob cannot end inside brackets or braces (they must be
    // closed, by `]` or `}`, which are not plain), and an escaped plain
    // character is itself: the plain end is literal text.
    let bytes = pattern.as_bytes();
    let plain = bytes.iter().rev().take_while(|&&b| is_plain(b)).count();
    Ok(Glob {
        matcher,
        tail: bytes[bytes.len() - plain..].into(),
        case_insensitive,
    })
}

/// What a glob is matched against.
#[derive(Clone, Debug)]
enum Target {
    /// The entry's name (patterns without `/`).
    Name(Glob),
    /// The path relative to the search directory.
    Relative(Glob),
}

impl Target {
    fn glob(&self) -> &Glob {
        match self {
            Self::Name(glob) | Self::Relative(glob) => glob,
        }
    }

    fn is_match(&self, rel: &str) -> bool {
        match self {
            Self::Name(glob) => glob.is_match(rel.rsplit('/').next().unwrap_or(rel)),
            Self::Relative(glob) => glob.is_match(rel),
        }
    }
}

/// grep's `glob` file filter, with ripgrep's `--glob` meaning: a pattern
/// without `/` matches the file name at any depth, a pattern with `/` matches
/// the path relative to the search directory (a leading `/` anchors there
/// too), a trailing `/` matches directories (the files below them), and a
/// leading `!` excludes instead of selecting.
#[derive(Clone, Debug)]
pub(crate) struct FileFilter {
    target: Target,
    negated: bool,
    dirs_only: bool,
}

impl FileFilter {
    /// Compiles a filter; the error names what is wrong with the glob.
    pub(super) fn new(glob: &str) -> Result<Self, globset::Error> {
        let (negated, rest) = match glob.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, glob),
        };
        let (dirs_only, rest) = match rest.strip_suffix('/') {
            Some(stripped) if !stripped.is_empty() => (true, stripped),
            _ => (false, rest),
        };
        let target = match rest.strip_prefix('/') {
            Some(anchored) => Target::Relative(compile_glob(anchored, false)?),
            None if rest.contains('/') => Target::Relative(compile_glob(rest, false)?),
            None => Target::Name(compile_glob(rest, false)?),
        };
        Ok(Self {
            target,
            negated,
            dirs_only,
        })
    }

    /// Whether [`FileFilter::allows`] looks only at the file's name (a
    /// pattern without `/` that selects): then it may be given the name
    /// alone.
    pub(super) fn names_only(&self) -> bool {
        matches!(self.target, Target::Name(_)) && !self.negated && !self.dirs_only
    }

    /// Whether [`FileFilter::allows`] is surely false for every file
    /// named `name` (raw bytes, as listed), known without the text it is
    /// given (see `Glob::surely_misses`); `false` means only "not known".
    pub(super) fn surely_rejects(&self, name: &[u8]) -> bool {
        !self.negated && !self.dirs_only && self.target.glob().surely_misses(name)
    }

    /// Whether the file at `rel` (relative to the search directory, `/`
    /// separators) is searched.
    pub(super) fn allows(&self, rel: &str) -> bool {
        let ancestors = || {
            rel.match_indices('/')
                .map(|(i, _)| &rel[..i])
                .filter(|dir| !dir.is_empty())
        };
        let by_dir = || ancestors().any(|dir| self.target.is_match(dir));
        let hit = if self.dirs_only {
            by_dir()
        } else if self.negated {
            self.target.is_match(rel) || by_dir()
        } else {
            self.target.is_match(rel)
        };
        hit != self.negated
    }
}

/// find's pattern, with fd's `--glob` meaning (§find.4) on paths relative
/// to the search directory: a pattern without `/` matches names at any
/// depth; a pattern with `/` matches relative paths at any depth (it gets a
/// `**/` prefix unless it starts with `**/` or is `**`); a pattern that
/// starts with `/` matches either the absolute path or the path relative to
/// the search directory; a trailing `/` selects directories only. Matching
/// is case-insensitive unless the pattern has an uppercase letter (fd's
/// smart case).
#[derive(Clone, Debug)]
pub(crate) struct NamePattern {
    target: Target,
    absolute: Option<Glob>,
    dirs_only: bool,
}

impl NamePattern {
    /// Compiles a pattern; the error names what is wrong with the glob.
    pub(super) fn new(pattern: &str) -> Result<Self, globset::Error> {
        let case_insensitive = !pattern.chars().any(char::is_uppercase);
        let (dirs_only, rest) = match pattern.strip_suffix('/') {
            Some(stripped) if !stripped.is_empty() => (true, stripped),
            _ => (false, pattern),
        };
        let mut absolute = None;
        let target = if let Some(anchored) = rest.strip_prefix('/') {
            absolute = Some(compile_glob(rest, case_insensitive)?);
            Target::Relative(compile_glob(anchored, case_insensitive)?)
        } else if rest.contains('/') {
            let full = if rest.starts_with("**/") || rest == "**" {
                rest.to_owned()
            } else {
                format!("**/{rest}")
            };
            Target::Relative(compile_glob(&full, case_insensitive)?)
        } else {
            Target::Name(compile_glob(rest, case_insensitive)?)
        };
        Ok(Self {
            target,
            absolute,
            dirs_only,
        })
    }

    /// Whether [`NamePattern::matches`] looks only at the entry's name (a
    /// pattern without `/`): then it may be given the name alone.
    pub(super) fn names_only(&self) -> bool {
        matches!(self.target, Target::Name(_))
    }

    /// Whether [`NamePattern::matches`] is surely false for every entry
    /// named `name` (raw bytes, as listed), known without the text it is
    /// given (see `Glob::surely_misses`; an absolute path ends with the
    /// name too); `false` means only "not known".
    pub(super) fn surely_misses(&self, name: &[u8]) -> bool {
        self.target.glob().surely_misses(name)
            && self
                .absolute
                .as_ref()
                .is_none_or(|glob| glob.surely_misses(name))
    }

    /// Whether the entry at `abs` (shown as `rel`) is a result.
    pub(super) fn matches(&self, abs: &Path, rel: &str, is_dir: bool) -> bool {
        if self.dirs_only && !is_dir {
            return false;
        }
        self.target.is_match(rel) || self.absolute.as_ref().is_some_and(|g| g.is_match(abs))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn file_filter_follows_ripgrep_glob_semantics() {
        let f = FileFilter::new("*.rs").unwrap();
        assert!(f.allows("main.rs"));
        assert!(f.allows("src/deep/lib.rs"));
        assert!(!f.allows("src/lib.rs.bak"));
        let f = FileFilter::new("src/*.rs").unwrap();
        assert!(f.allows("src/lib.rs"));
        assert!(!f.allows("src/deep/lib.rs"));
        assert!(!f.allows("pkg/src/lib.rs"));
        let f = FileFilter::new("/src/**/*.rs").unwrap();
        assert!(f.allows("src/lib.rs"));
        assert!(f.allows("src/deep/lib.rs"));
        let f = FileFilter::new("**/*.spec.ts").unwrap();
        assert!(f.allows("a.spec.ts"));
        assert!(f.allows("x/y/a.spec.ts"));
        let f = FileFilter::new("*.{ts,tsx}").unwrap();
        assert!(f.allows("a.tsx"));
        assert!(!f.allows("a.js"));
        let f = FileFilter::new("!*.min.js").unwrap();
        assert!(f.allows("app.js"));
        assert!(!f.allows("dist/app.min.js"));
        let f = FileFilter::new("!vendor").unwrap();
        assert!(!f.allows("vendor/x.go"));
        assert!(!f.allows("a/vendor/x.go"));
        assert!(f.allows("main.go"));
        let f = FileFilter::new("docs/").unwrap();
        assert!(f.allows("docs/a.md"));
        assert!(!f.allows("a.md"));
        assert!(FileFilter::new("[").is_err());
    }

    /// The plain end of a glob only rejects what its regex rejects too.
    #[test]
    fn the_plain_end_of_a_glob_agrees_with_its_regex() {
        let patterns = [
            "*.rs",
            "*.RS",
            "Cargo.toml",
            "a\\.rs",
            "a\\*.rs",
            "*.{rs,ts}",
            "{a,b}.rs",
            "a,b.rs",
            "[.]rs",
            "[!a]rs",
            "**",
            "src/**",
            "**/src/**/*.rs",
            "*.r?",
            "x-y_z.1",
            "*\\[rs",
            "*ſ",
            "*k",
        ];
        let candidates = [
            "main.rs",
            "MAIN.RS",
            "main.ts",
            "rs",
            ".rs",
            "a.rs",
            "a*.rs",
            "b.rs",
            "a,b.rs",
            "Cargo.toml",
            "cargo.TOML",
            "src/lib.rs",
            "pkg/src/deep/x.rs",
            "xrs",
            "arl",
            "x-y_z.1",
            "a[rs",
            "a.rſ",
            "\u{212a}",
            "k",
            "",
        ];
        for pattern in patterns {
            for case_insensitive in [false, true] {
                let glob = compile_glob(pattern, case_insensitive).unwrap();
                for candidate in candidates {
                    assert_eq!(
                        glob.is_match(candidate),
                        glob.matcher.is_match(candidate),
                        "{pattern:?} ({case_insensitive}) on {candidate:?}"
                    );
                    // A name it surely misses, alone or last in a path.
                    if let Some(name) = candidate.rsplit('/').next()
                        && glob.surely_misses(name.as_bytes())
                    {
                        for path in [name.to_owned(), format!("d/{name}"), format!("a/b/{name}")] {
                            assert!(
                                !glob.matcher.is_match(&path),
                                "{pattern:?} ({case_insensitive}) surely misses {path:?}"
                            );
                        }
                    }
                }
            }
        }
        assert_eq!(&*compile_glob("*.rs", true).unwrap().tail, b".rs");
        assert_eq!(&*compile_glob("*.{rs,ts}", true).unwrap().tail, b"");
        assert_eq!(&*compile_glob("a\\.rs", false).unwrap().tail, b".rs");
    }

    #[test]
    fn name_pattern_follows_fd_glob_semantics() {
        let yes = |pattern: &str, rel: &str, is_dir: bool| {
            NamePattern::new(pattern)
                .unwrap()
                .matches(&Path::new("/ws").join(rel), rel, is_dir)
        };
        assert!(yes("*.spec.ts", "a/b/x.spec.ts", false));
        assert!(!yes("*.ts", "a.tsx", false));
        assert!(yes("src/**/*.ts", "src/a.ts", false));
        assert!(yes("src/**/*.ts", "pkg/src/deep/a.ts", false));
        assert!(!yes("src/*.ts", "src/deep/a.ts", false));
        assert!(yes("some/child/**", "some/child/x", false));
        assert!(!yes("some/child/**", "some/child", true));
        assert!(yes("**", "anything/at/all", false));
        assert!(yes("/src/*.ts", "src/a.ts", false));
        assert!(!yes("/src/*.ts", "pkg/src/a.ts", false));
        assert!(yes("/ws/src/*.ts", "src/a.ts", false));
        assert!(yes("src/", "pkg/src", true));
        assert!(!yes("src/", "src", false));
        // Smart case.
        assert!(yes("*.md", "README.MD", false));
        assert!(!yes("*.MD", "notes.md", false));
        assert!(yes("README*", "README.md", false));
        assert!(NamePattern::new("{a,b").is_err());
    }
}
