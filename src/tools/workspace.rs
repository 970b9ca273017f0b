//! The workspace a tool call runs in: the operations that reach it and the
//! policy that turns a model's path into something to open.
//!
//! [`Workspace::resolve`] and [`Workspace::resolve_existing`] are the one
//! place where a tool turns a path argument into a [`ResolvedPath`]:
//! normalised, resolved against the root, confined (D1), and, for paths
//! that must exist, looked up with a "did you mean" error when they do not
//! (D6). Every file access after that goes through [`FsOps`].

use std::io;
use std::path::Path;
use std::sync::Arc;

use super::error::ToolError;
use super::fs_error::describe_io_error;
use super::ops::FsOps;
use super::ops::LocalFs;
use super::ops::LocalProcess;
use super::ops::Metadata;
use super::ops::ProcessOps;
use super::path::PathPolicy;
use super::path::ResolvedPath;
use super::path::not_found_message;
use super::path::read_variants;

/// The world a tool call runs in: a root directory, the path policy, and
/// the operations that reach it.
#[derive(Clone, Debug)]
pub struct Workspace {
    fs: Arc<dyn FsOps>,
    process: Arc<dyn ProcessOps>,
    policy: PathPolicy,
}

/// How a tool looks up a path that must exist, and how its messages name
/// it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lookup {
    /// What is missing, as the message's first word: `"File"` or `"Path"`
    /// (`File not found: a.txt. …`).
    pub noun: &'static str,
    /// What the tool does with the path, for other I/O errors: `"read"`,
    /// `"list"`, `"search"` (`Cannot read a.txt: …`).
    pub action: &'static str,
    /// A sentence appended to the not-found message, e.g. where to go
    /// instead.
    pub next_step: Option<&'static str>,
    /// Also try the spellings a model cannot type (macOS screenshot
    /// spaces, NFD, curly apostrophes; §common.3.4) before giving up.
    pub other_spellings: bool,
}

impl Lookup {
    /// A lookup with only a noun and an action.
    pub const fn new(noun: &'static str, action: &'static str) -> Self {
        Self {
            noun,
            action,
            next_step: None,
            other_spellings: false,
        }
    }
}

impl Workspace {
    /// A workspace on the local disk, rooted at `root` (which must exist),
    /// confined by default (D1).
    pub fn local(root: impl AsRef<Path>) -> io::Result<Self> {
        Self::new(
            Arc::new(LocalFs),
            Arc::new(LocalProcess::default()),
            root,
            true,
        )
    }

    /// A workspace over any operations.
    pub fn new(
        fs: Arc<dyn FsOps>,
        process: Arc<dyn ProcessOps>,
        root: impl AsRef<Path>,
        confine: bool,
    ) -> io::Result<Self> {
        let policy = PathPolicy::new(fs.as_ref(), root.as_ref(), confine)?;
        Ok(Self {
            fs,
            process,
            policy,
        })
    }

    /// Turns confinement on or off (`confine: false` restores pi's
    /// behaviour).
    pub fn with_confine(mut self, confine: bool) -> Self {
        self.policy.set_confine(confine);
        self
    }

    /// The file-system operations.
    pub fn fs(&self) -> &Arc<dyn FsOps> {
        &self.fs
    }

    /// The process operations.
    pub fn process(&self) -> &Arc<dyn ProcessOps> {
        &self.process
    }

    /// The workspace root (its real path).
    pub fn root(&self) -> &Path {
        self.policy.root()
    }

    /// How messages show `abs`: relative to the root when inside it.
    pub fn display(&self, abs: &Path) -> String {
        self.policy.display(abs)
    }

    /// Resolves a path argument and applies confinement; the error is the
    /// model-facing one.
    pub fn resolve(&self, raw: &str) -> Result<ResolvedPath, ToolError> {
        self.policy
            .resolve(self.fs.as_ref(), raw)
            .map_err(|err| ToolError::failed(err.to_string()))
    }

    /// Resolves a path argument that must exist and returns its metadata
    /// (symlinks followed). A missing path is an error naming the closest
    /// existing names (D6); any other I/O error says what `lookup.action`
    /// could not do.
    pub fn resolve_existing(
        &self,
        raw: &str,
        lookup: Lookup,
    ) -> Result<(ResolvedPath, Metadata), ToolError> {
        let fs = self.fs.as_ref();
        let mut resolved = self.resolve(raw)?;
        let mut found = fs.metadata(&resolved.real);
        if found.is_err() && lookup.other_spellings {
            let spelled = read_variants(&resolved.abs)
                .into_iter()
                .find(|variant| fs.metadata(variant).is_ok());
            if let Some(abs) = spelled {
                resolved = self
                    .policy
                    .resolve_absolute(fs, raw, abs)
                    .map_err(|err| ToolError::failed(err.to_string()))?;
                found = fs.metadata(&resolved.real);
            }
        }
        match found {
            Ok(meta) => Ok((resolved, meta)),
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                let suggestions = self.policy.suggest(fs, &resolved.abs);
                let mut message = not_found_message(lookup.noun, &resolved.display, &suggestions);
                if let Some(next_step) = lookup.next_step {
                    message.push(' ');
                    message.push_str(next_step);
                }
                Err(ToolError::failed(message))
            }
            Err(err) => Err(ToolError::failed(describe_io_error(
                lookup.action,
                &resolved.display,
                &err,
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ops::FileKind;
    use crate::tools::ops::MemoryFs;
    use pretty_assertions::assert_eq;

    fn workspace(fs: &MemoryFs) -> Workspace {
        Workspace::new(
            Arc::new(fs.clone()),
            Arc::new(LocalProcess::default()),
            "/ws",
            true,
        )
        .unwrap()
    }

    fn message(err: ToolError) -> String {
        match err {
            ToolError::Failed { message, .. } => message,
            other => panic!("not a failure: {other:?}"),
        }
    }

    #[test]
    fn resolve_existing_returns_the_path_and_its_metadata() {
        let fs = MemoryFs::new();
        fs.add_file("/ws/src/main.rs", "fn main() {}");
        let (resolved, meta) = workspace(&fs)
            .resolve_existing("src/./main.rs", Lookup::new("File", "read"))
            .unwrap();
        assert_eq!(resolved.display, "src/main.rs");
        assert_eq!(meta.kind, FileKind::File);
        assert_eq!(meta.len, 12);
    }

    #[test]
    fn a_missing_path_names_close_names_and_the_next_step() {
        let fs = MemoryFs::new();
        fs.add_file("/ws/src/main.rs", "");
        let ws = workspace(&fs);
        let err = ws
            .resolve_existing("src/mian.rs", Lookup::new("Path", "search"))
            .unwrap_err();
        assert_eq!(
            message(err),
            "Path not found: src/mian.rs. Did you mean src/main.rs?"
        );
        let lookup = Lookup {
            next_step: Some("To create a new file, use write."),
            ..Lookup::new("File", "read")
        };
        let err = ws.resolve_existing("zzz/x.py", lookup).unwrap_err();
        assert_eq!(
            message(err),
            "File not found: zzz/x.py. No similar name exists there; use the find tool (pattern \
             \"**/x.py\") or ls to locate it. To create a new file, use write."
        );
    }

    #[test]
    fn other_spellings_are_tried_only_when_asked() {
        let fs = MemoryFs::new();
        fs.add_file("/ws/it\u{2019}s.txt", "x");
        let ws = workspace(&fs);
        let plain = ws.resolve_existing("it's.txt", Lookup::new("File", "read"));
        assert!(plain.is_err());
        let lookup = Lookup {
            other_spellings: true,
            ..Lookup::new("File", "read")
        };
        let (resolved, _) = ws.resolve_existing("it's.txt", lookup).unwrap();
        assert_eq!(resolved.display, "it\u{2019}s.txt");
    }

    #[test]
    fn other_io_errors_say_what_could_not_be_done() {
        let fs = MemoryFs::new();
        fs.add_file("/ws/plain", "x");
        let err = workspace(&fs)
            .resolve_existing("plain/x", Lookup::new("Path", "list"))
            .unwrap_err();
        assert_eq!(
            message(err),
            "Cannot list plain/x: a part of the path that should be a directory is a file."
        );
    }

    #[test]
    fn outside_paths_are_refused_before_any_lookup() {
        let fs = MemoryFs::new();
        fs.add_dir("/ws");
        let err = workspace(&fs).resolve("../etc/passwd").unwrap_err();
        assert_eq!(
            message(err),
            "Path \"../etc/passwd\" is outside the workspace: it resolves to a path above the \
             workspace root, but tools may only touch files under the workspace root /ws. Use a \
             path relative to the workspace root."
        );
    }
}
