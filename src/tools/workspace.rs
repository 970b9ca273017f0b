//! The workspace a tool call runs in: the operations that reach it and the
//! policy that turns a model's path into something to open.
//!
//! [`Workspace::resolve`] and [`Workspace::resolve_existing`] are the one
//! place where a tool turns a path argument into a [`ResolvedPath`]:
//! normalised, resolved against the root, confined (D1), and, for paths
//! that must exist, looked up with a "did you mean" error when they do not
//! (D6). Every file access after that goes through [`FsOps`], with the
//! resolved real path: on a local workspace that is a [`ConfinedFs`], so
//! the kernel refuses a path that has changed since the check and now leads
//! outside (D1).
//!
//! [`Scratch`] is where tools put files of their own, outside the
//! workspace: bash's full-output logs (D18).

use std::io;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;

use super::error::ToolError;
use super::facts::ErrorClass;
use super::facts::ErrorKind;
use super::fs_error::classed_failure;
use super::fs_error::io_failure;
use super::ops::ConfinedFs;
use super::ops::FsOps;
use super::ops::LocalFs;
use super::ops::LocalProcess;
use super::ops::Metadata;
use super::ops::ProcessOps;
use super::path::PathError;
use super::path::PathPolicy;
use super::path::ResolvedPath;
use super::path::not_found_message;
use super::path::read_variants;

/// The world a tool call runs in: a root directory, the path policy, and
/// the operations that reach it.
#[derive(Clone, Debug)]
pub struct Workspace {
    /// What tools open files with while confinement is on.
    fs: Arc<dyn FsOps>,
    /// The process's own reach: what the path check resolves names with,
    /// and what tools open files with while confinement is off. `None`:
    /// `fs` does both.
    ambient: Option<Arc<dyn FsOps>>,
    process: Arc<dyn ProcessOps>,
    policy: PathPolicy,
    scratch: Scratch,
    bash: BashConfig,
}

/// How `bash` runs its commands in a workspace: extra environment, a
/// prefix before every command, and a working directory below the root.
/// The shell itself is the [`ProcessOps`]' business
/// ([`LocalProcess::with_shell`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BashConfig {
    /// Variables set for every command, on top of the inherited ones.
    pub env: Vec<(String, String)>,
    /// Text run before every command: the shell gets
    /// `{command_prefix}\n{command}` (pi's `commandPrefix`).
    pub command_prefix: Option<String>,
    /// The working directory, relative to the root (default: the root). It
    /// is resolved like a path argument, so while confinement is on it
    /// cannot lead out of the workspace.
    pub cwd: Option<String>,
}

/// How [`Scratch`] names the files it creates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScratchNames {
    /// `harness-{kind}-{16 random hex digits}{suffix}`: unpredictable
    /// names, for a directory others share (the system temp directory).
    Random,
    /// `{kind}-{call id}{suffix}`, then `{kind}-{call id}-2{suffix}` and so
    /// on when taken: the same names in every run, for a directory of
    /// one's own.
    PerCall,
}

/// The longest call id kept in a [`ScratchNames::PerCall`] name.
const MAX_CALL_ID_IN_NAME: usize = 64;

/// Where tools put files of their own, outside the workspace (bash's
/// full-output logs, D18): a directory, the operations that reach it, and
/// how files there are named. Every file is created new with mode `0600`.
#[derive(Clone, Debug)]
pub struct Scratch {
    fs: Arc<dyn FsOps>,
    dir: PathBuf,
    names: ScratchNames,
}

impl Scratch {
    /// A scratch directory over any operations.
    pub fn new(fs: Arc<dyn FsOps>, dir: impl Into<PathBuf>, names: ScratchNames) -> Self {
        Self {
            fs,
            dir: dir.into(),
            names,
        }
    }

    /// The system temp directory on the local disk, with random names
    /// (what `harness call` uses).
    pub fn system_temp() -> Self {
        Self::new(
            Arc::new(LocalFs),
            std::env::temp_dir(),
            ScratchNames::Random,
        )
    }

    /// A directory of one's own on the local disk (it must exist), reached
    /// through a handle confined to it, with per-call names (what a
    /// scenario run uses).
    pub fn private_dir(dir: impl AsRef<Path>) -> io::Result<Self> {
        let fs = ConfinedFs::new(dir)?;
        let dir = fs.root().to_path_buf();
        Ok(Self::new(Arc::new(fs), dir, ScratchNames::PerCall))
    }

    /// The operations that reach the directory.
    pub fn fs(&self) -> &Arc<dyn FsOps> {
        &self.fs
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How files are named.
    pub fn names(&self) -> ScratchNames {
        self.names
    }

    /// The stem of the per-call name of a `kind` file of call `call_id`
    /// (`bash-call_1`, for [`FsOps::create_numbered`]), or `None` when names
    /// are random ([`FsOps::create_temp`]). Characters other
    /// than ASCII letters, digits, `_`, `-` and `.` become `_`, and the id
    /// is cut to 64 characters.
    pub fn file_stem(&self, kind: &str, call_id: &str) -> Option<String> {
        if self.names == ScratchNames::Random {
            return None;
        }
        let id: String = call_id
            .chars()
            .take(MAX_CALL_ID_IN_NAME)
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let id = if id.is_empty() { "call" } else { id.as_str() };
        Some(format!("{kind}-{id}"))
    }
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
    /// confined by default (D1): files are opened through a [`ConfinedFs`]
    /// on the root, and with confinement off through [`LocalFs`]. Bash's
    /// full-output logs go to the system temp directory
    /// ([`Scratch::system_temp`]).
    ///
    /// # Errors
    ///
    /// When `root` does not exist, is not a directory, or cannot be opened.
    pub fn local(root: impl AsRef<Path>) -> io::Result<Self> {
        let policy = PathPolicy::new(&LocalFs, root.as_ref(), true)?;
        let confined = ConfinedFs::new(policy.root()).map_err(|err| {
            io::Error::new(
                err.kind(),
                format!(
                    "workspace root {} cannot be opened: {err}",
                    root.as_ref().display()
                ),
            )
        })?;
        Ok(Self {
            fs: Arc::new(confined),
            ambient: Some(Arc::new(LocalFs)),
            process: Arc::new(LocalProcess::default()),
            policy,
            scratch: Scratch::system_temp(),
            bash: BashConfig::default(),
        })
    }

    /// A workspace over any operations; `fs` both checks and opens paths,
    /// and the scratch directory is the system temp directory reached
    /// through `fs`.
    ///
    /// # Errors
    ///
    /// When `fs` finds no directory at `root`.
    pub fn new(
        fs: Arc<dyn FsOps>,
        process: Arc<dyn ProcessOps>,
        root: impl AsRef<Path>,
        confine: bool,
    ) -> io::Result<Self> {
        let policy = PathPolicy::new(fs.as_ref(), root.as_ref(), confine)?;
        let scratch = Scratch::new(Arc::clone(&fs), std::env::temp_dir(), ScratchNames::Random);
        Ok(Self {
            fs,
            ambient: None,
            process,
            policy,
            scratch,
            bash: BashConfig::default(),
        })
    }

    /// Turns confinement on or off (`confine: false` restores pi's
    /// behaviour).
    pub fn with_confine(mut self, confine: bool) -> Self {
        self.policy.set_confine(confine);
        self
    }

    /// Puts tools' own files (bash's full-output logs) in `scratch`.
    pub fn with_scratch(mut self, scratch: Scratch) -> Self {
        self.scratch = scratch;
        self
    }

    /// Runs every operation through wrappers: `fs` wraps each file-system
    /// backend (the one tools open files with, the one paths are checked
    /// with, and the scratch directory's), `process` the process
    /// operations. For injected faults (the harness's scenarios wrap them so) or
    /// tracing.
    pub fn with_wrapped_ops(
        mut self,
        fs: impl Fn(Arc<dyn FsOps>) -> Arc<dyn FsOps>,
        process: impl FnOnce(Arc<dyn ProcessOps>) -> Arc<dyn ProcessOps>,
    ) -> Self {
        self.fs = fs(Arc::clone(&self.fs));
        self.ambient = self.ambient.take().map(&fs);
        self.scratch = Scratch::new(
            fs(Arc::clone(&self.scratch.fs)),
            self.scratch.dir.clone(),
            self.scratch.names,
        );
        self.process = process(Arc::clone(&self.process));
        self
    }

    /// Runs commands through `process` (e.g. a [`LocalProcess`] with a
    /// shell of one's choice).
    pub fn with_process(mut self, process: Arc<dyn ProcessOps>) -> Self {
        self.process = process;
        self
    }

    /// Sets how `bash` runs its commands.
    pub fn with_bash(mut self, bash: BashConfig) -> Self {
        self.bash = bash;
        self
    }

    /// How `bash` runs its commands.
    pub fn bash(&self) -> &BashConfig {
        &self.bash
    }

    /// The file-system operations tools open files with: confined to the
    /// root on a local workspace while confinement is on.
    pub fn fs(&self) -> &Arc<dyn FsOps> {
        match &self.ambient {
            Some(ambient) if !self.policy.confines() => ambient,
            _ => &self.fs,
        }
    }

    /// What the path check resolves names with: the process's own reach,
    /// so that a refusal can say where a path leads. It only looks at
    /// names and never opens a file.
    fn namer(&self) -> &dyn FsOps {
        self.ambient.as_deref().unwrap_or(self.fs.as_ref())
    }

    /// Where tools put files of their own.
    pub fn scratch(&self) -> &Scratch {
        &self.scratch
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

    /// The directory bash starts commands in: the configured `cwd`
    /// ([`BashConfig::cwd`]) resolved like a path argument (so confined),
    /// else the root. It is not checked to exist (the command's start
    /// says so); the error is the path check's own, about a path that
    /// came from the configuration, not from the model.
    pub fn bash_cwd(&self) -> Result<PathBuf, PathError> {
        match &self.bash.cwd {
            Some(dir) => Ok(self.policy.resolve(self.namer(), dir)?.real),
            None => Ok(self.root().to_path_buf()),
        }
    }

    /// Resolves a path argument and applies confinement; the error is the
    /// model-facing one. A path written as tools show names (`\xNN`,
    /// control pictures) names the file they showed when nothing exists
    /// under it as written.
    pub fn resolve(&self, raw: &str) -> Result<ResolvedPath, ToolError> {
        let resolved = self
            .policy
            .resolve(self.namer(), raw)
            .map_err(path_failure)?;
        let Some(abs) = self.policy.unshown(&resolved.abs) else {
            return Ok(resolved);
        };
        let fs = self.fs().as_ref();
        if fs.symlink_metadata(&resolved.real).is_ok() || fs.symlink_metadata(&abs).is_err() {
            return Ok(resolved);
        }
        self.policy
            .resolve_absolute(self.namer(), raw, abs)
            .map_err(path_failure)
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
        let fs = self.fs().as_ref();
        let mut resolved = self.resolve(raw)?;
        let mut found = fs.metadata(&resolved.real);
        if found.is_err() && lookup.other_spellings {
            let spelled = read_variants(&resolved.abs)
                .into_iter()
                .find(|variant| fs.metadata(variant).is_ok());
            if let Some(abs) = spelled {
                resolved = self
                    .policy
                    .resolve_absolute(self.namer(), raw, abs)
                    .map_err(path_failure)?;
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
                Err(ToolError::failure(
                    ErrorKind::Io(ErrorClass::NotFound),
                    message,
                ))
            }
            Err(err) => Err(io_failure(lookup.action, &resolved.display, &err)),
        }
    }
}

/// A path that may not be used, as the model is told.
fn path_failure(err: PathError) -> ToolError {
    match err {
        PathError::Unresolvable {
            message,
            class,
            errno,
            ..
        } => classed_failure(message, class, errno),
        outside @ PathError::Outside { .. } => {
            classed_failure(outside.to_string(), ErrorClass::OutsideWorkspace, None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ops::FileKind;
    use crate::tools::ops::MemoryFs;
    use crate::tools::testutil::disk;
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
            "Cannot list plain/x: a part of the path that should be a directory is a file. \
             Check the path with ls, and shorten or correct it."
        );
    }

    #[test]
    fn per_call_scratch_names_are_the_call_id_made_safe_and_numbered_when_taken() {
        let fs = MemoryFs::new();
        fs.add_dir("/logs");
        let scratch = Scratch::new(Arc::new(fs.clone()), "/logs", ScratchNames::PerCall);
        assert_eq!(
            scratch.file_stem("bash", "call_1"),
            Some("bash-call_1".to_owned())
        );
        assert_eq!(
            scratch.file_stem("bash", "../../etc/x y"),
            Some("bash-.._.._etc_x_y".to_owned())
        );
        assert_eq!(scratch.file_stem("bash", ""), Some("bash-call".to_owned()));
        let long = "a".repeat(100);
        assert_eq!(
            scratch.file_stem("bash", &long),
            Some(format!("bash-{}", "a".repeat(64)))
        );
        let stem = "bash-c1";
        let paths: Vec<PathBuf> = (0..3)
            .map(|_| {
                let (path, _) = fs
                    .create_numbered(Path::new("/logs"), stem, ".log")
                    .unwrap();
                path
            })
            .collect();
        assert_eq!(
            paths,
            [
                PathBuf::from("/logs/bash-c1.log"),
                PathBuf::from("/logs/bash-c1-2.log"),
                PathBuf::from("/logs/bash-c1-3.log"),
            ]
        );
        assert_eq!(
            fs.metadata(Path::new("/logs/bash-c1-2.log")).unwrap().mode,
            0o600
        );
        let random = Scratch::new(Arc::new(fs), "/logs", ScratchNames::Random);
        assert_eq!(random.file_stem("bash", "call_1"), None);
    }

    #[test]
    fn a_local_workspace_opens_through_its_root_handle_unless_unconfined() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        disk::create_dir_all(base.join("ws"));
        disk::write(base.join("secret.txt"), "s");
        let secret = base.join("secret.txt");
        let ws = Workspace::local(base.join("ws")).unwrap();
        let err = ws.fs().read(&secret).unwrap_err();
        assert!(crate::tools::ops::is_outside_workspace(&err), "{err:?}");
        let ws = ws.with_confine(false);
        assert_eq!(ws.fs().read(&secret).unwrap(), b"s");
        let ws = ws.with_confine(true);
        assert!(ws.fs().read(&secret).is_err());
        // Logs go to the system temp dir with random names by default.
        assert_eq!(ws.scratch().dir(), std::env::temp_dir());
        assert_eq!(ws.scratch().names(), ScratchNames::Random);
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
