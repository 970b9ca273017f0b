//! Test helpers: a registry over an in-memory or temporary workspace, and
//! a recording update sink.

use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;

use proptest::test_runner::Config as ProptestConfig;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::ToolCall;
use super::contract::Limits;
use super::contract::ToolResult;
use super::contract::ToolUpdate;
use super::contract::UpdateSink;
use super::ops::ConfinedFs;
use super::ops::FsOps;
use super::ops::LocalFs;
use super::ops::LocalProcess;
use super::ops::MemoryFs;
use super::registry::PreparedCall;
use super::registry::Registry;
use super::workspace::Workspace;

/// A registry with every tool active over a workspace, plus file helpers.
pub(crate) struct Harness {
    pub registry: Registry,
    pub root: PathBuf,
    memory: Option<MemoryFs>,
    temp: Option<tempfile::TempDir>,
}

impl Harness {
    /// An in-memory workspace rooted at `/ws`.
    pub(crate) fn memory() -> Self {
        Self::memory_with(Limits::default())
    }

    /// An in-memory workspace with custom limits.
    pub(crate) fn memory_with(limits: Limits) -> Self {
        let fs = MemoryFs::new();
        fs.add_dir("/ws");
        let workspace = Workspace::new(
            Arc::new(fs.clone()),
            Arc::new(LocalProcess::default()),
            "/ws",
            true,
        )
        .unwrap();
        let registry = Registry::builder(workspace).limits(limits).build().unwrap();
        Self {
            registry,
            root: PathBuf::from("/ws"),
            memory: Some(fs),
            temp: None,
        }
    }

    /// A workspace in a fresh temporary directory on disk.
    pub(crate) fn local() -> Self {
        Self::local_with(Limits::default())
    }

    /// A temporary on-disk workspace with custom limits.
    pub(crate) fn local_with(limits: Limits) -> Self {
        let temp = tempfile::tempdir().unwrap();
        let workspace = Workspace::local(temp.path()).unwrap();
        let root = workspace.root().to_path_buf();
        let registry = Registry::builder(workspace).limits(limits).build().unwrap();
        Self {
            registry,
            root,
            memory: None,
            temp: Some(temp),
        }
    }

    fn abs(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn fs(&self) -> &dyn FsOps {
        self.registry.workspace().fs().as_ref()
    }

    /// The on-disk workspace through its root handle, for what the tools'
    /// own operations do not offer (modes, symlinks).
    fn confined(&self) -> ConfinedFs {
        ConfinedFs::new(&self.root).unwrap()
    }

    /// Removes the on-disk workspace, root and all (a working directory
    /// that vanished).
    pub(crate) fn remove_root(&mut self) {
        if let Some(temp) = self.temp.take() {
            temp.close().unwrap();
        }
    }

    pub(crate) fn add_file(&self, rel: &str, data: impl AsRef<[u8]>) {
        self.add_file_with_mode(rel, data, 0o644);
    }

    /// A file whose name is any bytes (not UTF-8, control characters), at
    /// the workspace root.
    pub(crate) fn add_file_named(&self, name: &[u8], data: impl AsRef<[u8]>) {
        use std::os::unix::ffi::OsStrExt;
        let path = self.root.join(std::ffi::OsStr::from_bytes(name));
        match &self.memory {
            Some(fs) => {
                fs.add_file_with_mode(&path, data.as_ref(), 0o644);
            }
            None => self.confined().write(&path, data.as_ref()).unwrap(),
        }
    }

    pub(crate) fn add_file_with_mode(&self, rel: &str, data: impl AsRef<[u8]>, mode: u32) {
        let path = self.abs(rel);
        match &self.memory {
            Some(fs) => {
                fs.add_file_with_mode(&path, data.as_ref(), mode);
            }
            None => {
                let fs = self.confined();
                fs.create_dir_all(path.parent().unwrap()).unwrap();
                fs.write(&path, data.as_ref()).unwrap();
                fs.set_mode(&path, mode).unwrap();
            }
        }
    }

    pub(crate) fn add_dir(&self, rel: &str) {
        let path = self.abs(rel);
        match &self.memory {
            Some(fs) => {
                fs.add_dir(&path);
            }
            None => self.confined().create_dir_all(&path).unwrap(),
        }
    }

    pub(crate) fn add_symlink(&self, rel: &str, target: &str) {
        let path = self.abs(rel);
        match &self.memory {
            Some(fs) => {
                fs.add_symlink(&path, target);
            }
            None => {
                let fs = self.confined();
                fs.create_dir_all(path.parent().unwrap()).unwrap();
                fs.symlink(Path::new(target), &path).unwrap();
            }
        }
    }

    pub(crate) fn bytes(&self, rel: &str) -> Vec<u8> {
        self.fs().read(&self.abs(rel)).unwrap()
    }

    pub(crate) fn file(&self, rel: &str) -> String {
        String::from_utf8(self.bytes(rel)).unwrap()
    }

    pub(crate) fn exists(&self, rel: &str) -> bool {
        self.fs().symlink_metadata(&self.abs(rel)).is_ok()
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    pub(crate) async fn call(&self, name: &str, args: Value) -> ToolResult {
        self.registry
            .dispatch(
                &ToolCall::new("call_1", name, args),
                CancellationToken::new(),
                UpdateSink::discard(),
            )
            .await
    }

    pub(crate) async fn call_recording(
        &self,
        name: &str,
        args: Value,
    ) -> (ToolResult, Vec<ToolUpdate>) {
        let (sink, updates) = recording_sink();
        let result = self
            .registry
            .dispatch(
                &ToolCall::new("call_1", name, args),
                CancellationToken::new(),
                sink,
            )
            .await;
        let updates = updates.lock().unwrap().clone();
        (result, updates)
    }

    pub(crate) fn prepare(&self, name: &str, args: Value) -> PreparedCall {
        self.registry
            .prepare(&ToolCall::new("call_1", name, args))
            .unwrap()
    }
}

/// A sink that keeps every update.
pub(crate) fn recording_sink() -> (UpdateSink, Arc<Mutex<Vec<ToolUpdate>>>) {
    let updates = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&updates);
    (
        UpdateSink::new(move |u| kept.lock().unwrap().push(u)),
        updates,
    )
}

/// The configuration of a property with `cases` cases by default: an
/// explicit `PROPTEST_CASES` always wins (proptest reads it into
/// [`ProptestConfig::default`]); without it, expensive properties keep a
/// modest count and cheap ones a larger one.
pub(crate) fn cases(cases: u32) -> ProptestConfig {
    let config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_some() {
        config
    } else {
        ProptestConfig { cases, ..config }
    }
}

/// [`cases`] for a property run by hand (outside `proptest!`, which knows
/// the source file to keep failing seeds next to): no persistence.
pub(crate) fn manual_cases(count: u32) -> ProptestConfig {
    ProptestConfig {
        failure_persistence: None,
        ..cases(count)
    }
}

/// The local disk through the ops layer ([`LocalFs`]: the process's own
/// reach, for paths outside any workspace such as `/proc` and bash's
/// full-output files), for tests that look at what tools left there.
pub(crate) mod disk {
    use std::io;
    use std::path::Path;
    use std::path::PathBuf;

    use super::ConfinedFs;
    use super::FsOps;
    use super::LocalFs;
    use crate::tools::ops::Metadata;

    pub(crate) fn read(path: impl AsRef<Path>) -> Vec<u8> {
        LocalFs.read(path.as_ref()).unwrap()
    }

    pub(crate) fn read_string(path: impl AsRef<Path>) -> String {
        String::from_utf8(read(path)).unwrap()
    }

    /// The text of a file that may not be there (any more).
    pub(crate) fn try_read_string(path: impl AsRef<Path>) -> Option<String> {
        String::from_utf8(LocalFs.read(path.as_ref()).ok()?).ok()
    }

    pub(crate) fn write(path: impl AsRef<Path>, data: impl AsRef<[u8]>) {
        LocalFs.write(path.as_ref(), data.as_ref()).unwrap();
    }

    pub(crate) fn create_dir_all(path: impl AsRef<Path>) {
        LocalFs.create_dir_all(path.as_ref()).unwrap();
    }

    pub(crate) fn metadata(path: impl AsRef<Path>) -> Metadata {
        LocalFs.metadata(path.as_ref()).unwrap()
    }

    pub(crate) fn symlink_metadata(path: impl AsRef<Path>) -> io::Result<Metadata> {
        LocalFs.symlink_metadata(path.as_ref())
    }

    pub(crate) fn read_link(path: impl AsRef<Path>) -> io::Result<PathBuf> {
        LocalFs.read_link(path.as_ref())
    }

    pub(crate) fn canonicalize(path: impl AsRef<Path>) -> PathBuf {
        LocalFs.canonicalize(path.as_ref()).unwrap()
    }

    /// The names in a directory, in no particular order.
    pub(crate) fn names(dir: impl AsRef<Path>) -> Vec<String> {
        LocalFs
            .read_dir(dir.as_ref())
            .unwrap()
            .into_iter()
            .map(|e| e.name.to_string_lossy().into_owned())
            .collect()
    }

    /// Removes a file, if it is there, through its directory's handle.
    pub(crate) fn remove_file(path: impl AsRef<Path>) {
        let path = path.as_ref();
        if let Some(dir) = path.parent()
            && let Ok(fs) = ConfinedFs::new(dir)
        {
            let _ = fs.remove_file(path);
        }
    }
}
