//! Injected faults (a scenario's `faults:`, a harness concern kept out of
//! the tool layer, which wraps its I/O through the public [`FsOps`] and
//! [`ProcessOps`] traits as any embedder could): [`FaultFs`] and [`FaultProcess`] wrap any [`FsOps`]
//! and [`ProcessOps`] and make chosen operations fail, stall, or stop
//! after part of their bytes, as a full disk, a locked file or a shell
//! that cannot be started would.
//!
//! A [`FaultRule`] names an operation ([`FaultOp`]), optionally a glob of
//! paths relative to the workspace root, and what happens: an OS error
//! ([`FaultError::Os`], an `io::Error` built from the raw error number,
//! so its kind and text are the ones the real call would give) or one with
//! a message of one's own; a stall before the operation (`delay`); a
//! stream that stops after `after_bytes` bytes (reads, created files and
//! the bytes of a write); and how many matching operations it applies to
//! (`times`). A write is not one operation but the steps of a replacing
//! write ([`WriteStep`]): create the temporary file, write its bytes,
//! rename it over the old name, remove it after a failure; each step meets
//! the rules of its own operation, matched on the path of the file
//! written, so a fault hits the step it names and the backend does what it
//! does after a real failure there. The first
//! rule that matches an operation and has uses left applies; the others
//! are not consulted.
//!
//! Every rule list is shared by a [`FaultPlan`], which also ends stalls
//! early: [`FaultPlan::interrupt`] (called when a run is cancelled or over)
//! wakes every stalled operation, which then goes on as it would have
//! after the full stall. An interrupted stall changes only how long the
//! caller waited, never what it sees.

use std::io;
use std::io::Read;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Condvar;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use crate::tools::ops::BoxFuture;
use crate::tools::ops::DataSink;
use crate::tools::ops::DirEntry;
use crate::tools::ops::ExecEnd;
use crate::tools::ops::ExecRequest;
use crate::tools::ops::FsOps;
use crate::tools::ops::Metadata;
use crate::tools::ops::ProcessOps;
use crate::tools::ops::StepFault;
use crate::tools::ops::WriteStep;
use crate::tools::ops::WriteSteps;

use crate::scenario::setup::FaultError;
use crate::scenario::setup::FaultOp;
use crate::scenario::setup::FaultRule;

/// What one operation is to do: stall, fail, stop after some bytes.
#[derive(Clone, Debug, Default)]
struct Fault {
    delay: Option<Duration>,
    error: Option<FaultError>,
    after_bytes: Option<u64>,
}

impl Fault {
    /// The error a stream stops with.
    fn stream_error(&self) -> io::Error {
        self.error
            .as_ref()
            .unwrap_or(&FaultError::Os(libc::EIO))
            .to_io()
    }
}

/// The rules of one run, their uses so far, and the switch that ends
/// stalls.
#[derive(Debug)]
pub(crate) struct FaultPlan {
    root: PathBuf,
    rules: Vec<(FaultRule, AtomicU64)>,
    interrupted: Mutex<bool>,
    wake: Condvar,
    deadline: Mutex<Option<Instant>>,
}

impl FaultPlan {
    /// The plan of `rules` over the workspace at `root` (its real path:
    /// globs match paths relative to it).
    pub(crate) fn new(root: impl Into<PathBuf>, rules: Vec<FaultRule>) -> Arc<Self> {
        let rules = rules
            .into_iter()
            .map(|rule| {
                let left = rule.times.unwrap_or(u64::MAX);
                (rule, AtomicU64::new(left))
            })
            .collect();
        Arc::new(Self {
            root: root.into(),
            rules,
            interrupted: Mutex::new(false),
            wake: Condvar::new(),
            deadline: Mutex::new(None),
        })
    }

    /// Every stall, now and later, ends by `deadline` at the latest: a
    /// stall can block the very thread that would call
    /// [`FaultPlan::interrupt`] when a run's time is up.
    pub(crate) fn set_deadline(&self, deadline: Instant) {
        *self.deadline.lock().unwrap_or_else(PoisonError::into_inner) = Some(deadline);
    }

    /// Ends every stall, now and later: the stalled operations go on at
    /// once.
    pub(crate) fn interrupt(&self) {
        *self
            .interrupted
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = true;
        self.wake.notify_all();
    }

    /// The fault for `op` on `path` (or on no path), using up one of the
    /// first matching rule's uses.
    fn take(&self, op: FaultOp, path: Option<&Path>) -> Option<Fault> {
        let rel = path.and_then(|p| {
            p.strip_prefix(&self.root).ok().map(|rel| {
                if rel.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    rel
                }
            })
        });
        self.rules.iter().find_map(|(rule, left)| {
            if !rule.matches(op, rel) {
                return None;
            }
            left.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .ok()?;
            Some(Fault {
                delay: rule.delay,
                error: rule.error.clone(),
                after_bytes: rule.after_bytes.filter(|_| op.streams()),
            })
        })
    }

    /// Blocks for `delay`, or until [`FaultPlan::interrupt`] or the
    /// deadline.
    fn stall(&self, delay: Duration) {
        let deadline = *self.deadline.lock().unwrap_or_else(PoisonError::into_inner);
        let delay = match deadline {
            Some(deadline) => delay.min(deadline.saturating_duration_since(Instant::now())),
            None => delay,
        };
        let guard = self
            .interrupted
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let _ = self
            .wake
            .wait_timeout_while(guard, delay, |interrupted| !*interrupted)
            .unwrap_or_else(PoisonError::into_inner);
    }

    /// Applies `op`'s fault, if any: stalls, then fails for a fault that
    /// does not stream; returns what is left for a stream.
    fn before(&self, op: FaultOp, path: Option<&Path>) -> io::Result<Option<Fault>> {
        let Some(fault) = self.take(op, path) else {
            return Ok(None);
        };
        if let Some(delay) = fault.delay {
            self.stall(delay);
        }
        match (&fault.error, fault.after_bytes) {
            (_, Some(_)) => Ok(Some(fault)),
            (Some(error), None) => Err(error.to_io()),
            (None, None) => Ok(None),
        }
    }
}

/// File-system operations that fail per a [`FaultPlan`], and otherwise
/// are `inner`'s.
#[derive(Debug)]
pub(crate) struct FaultFs {
    inner: Arc<dyn FsOps>,
    plan: Arc<FaultPlan>,
}

impl FaultFs {
    /// `inner` with `plan`'s faults.
    pub(crate) fn new(inner: Arc<dyn FsOps>, plan: Arc<FaultPlan>) -> Self {
        Self { inner, plan }
    }

    /// A plain operation: its fault, then `inner`'s work.
    fn plain<T>(
        &self,
        op: FaultOp,
        path: &Path,
        work: impl FnOnce() -> io::Result<T>,
    ) -> io::Result<T> {
        self.plan.before(op, Some(path))?;
        work()
    }
}

impl FsOps for FaultFs {
    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.plain(FaultOp::Metadata, path, || self.inner.metadata(path))
    }

    fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.plain(FaultOp::Metadata, path, || {
            self.inner.symlink_metadata(path)
        })
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.plain(FaultOp::Metadata, path, || self.inner.canonicalize(path))
    }

    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        self.plain(FaultOp::Metadata, path, || self.inner.read_link(path))
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn Read + Send>> {
        let fault = self.plan.before(FaultOp::Read, Some(path))?;
        let file = self.inner.open(path)?;
        Ok(match fault {
            Some(fault) => Box::new(CutReader {
                inner: file,
                left: fault.after_bytes.unwrap_or(0),
                error: Some(fault.stream_error()),
            }),
            None => file,
        })
    }

    fn write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        let steps = PlanSteps {
            plan: &self.plan,
            path,
        };
        self.inner.write_in_steps(path, data, &steps)
    }

    fn write_in_steps(&self, path: &Path, data: &[u8], steps: &dyn WriteSteps) -> io::Result<()> {
        let ours = PlanSteps {
            plan: &self.plan,
            path,
        };
        self.inner.write_in_steps(path, data, &Chain(&ours, steps))
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.plain(FaultOp::Create, path, || self.inner.create_dir_all(path))
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        self.plain(FaultOp::List, path, || self.inner.read_dir(path))
    }

    fn create_new(&self, path: &Path, mode: u32) -> io::Result<Box<dyn Write + Send>> {
        let fault = self.plan.before(FaultOp::Create, Some(path))?;
        let file = self.inner.create_new(path, mode)?;
        Ok(match fault {
            Some(fault) => Box::new(CutWriter {
                inner: file,
                left: fault.after_bytes.unwrap_or(0),
                error: Some(fault.stream_error()),
            }),
            None => file,
        })
    }
}

/// The steps of one write meeting a plan's rules, on the path written.
struct PlanSteps<'a> {
    plan: &'a FaultPlan,
    path: &'a Path,
}

impl WriteSteps for PlanSteps<'_> {
    fn before(&self, step: WriteStep) -> Option<StepFault> {
        let op = FaultOp::of_step(step);
        let fault = self.plan.take(op, Some(self.path))?;
        if let Some(delay) = fault.delay {
            self.plan.stall(delay);
        }
        match (&fault.error, fault.after_bytes) {
            (_, Some(bytes)) => Some(StepFault::Cut(bytes, fault.stream_error())),
            (Some(error), None) => Some(StepFault::Fail(error.to_io())),
            (None, None) => None,
        }
    }
}

/// Two watchers of one write: the first that makes a step fail wins.
struct Chain<'a>(&'a dyn WriteSteps, &'a dyn WriteSteps);

impl WriteSteps for Chain<'_> {
    fn before(&self, step: WriteStep) -> Option<StepFault> {
        self.0.before(step).or_else(|| self.1.before(step))
    }
}

/// A reader that ends in an error after `left` bytes.
struct CutReader {
    inner: Box<dyn Read + Send>,
    left: u64,
    error: Option<io::Error>,
}

impl Read for CutReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            // The same error on every later read too.
            return Err(match &self.error {
                Some(err) => copy_error(err),
                None => io::Error::from_raw_os_error(libc::EIO),
            });
        }
        let room = usize::try_from(self.left)
            .unwrap_or(usize::MAX)
            .min(buf.len());
        let n = self.inner.read(&mut buf[..room])?;
        self.left -= n as u64;
        if n == 0 {
            // The file ended first: nothing was cut.
            self.left = u64::MAX;
        }
        Ok(n)
    }
}

/// A writer that takes `left` bytes, then fails.
struct CutWriter {
    inner: Box<dyn Write + Send>,
    left: u64,
    error: Option<io::Error>,
}

impl Write for CutWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            return Err(match &self.error {
                Some(err) => copy_error(err),
                None => io::Error::from_raw_os_error(libc::ENOSPC),
            });
        }
        let room = usize::try_from(self.left)
            .unwrap_or(usize::MAX)
            .min(buf.len());
        let n = self.inner.write(&buf[..room])?;
        self.left -= n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The same error again (an OS error by its number, else kind and text).
fn copy_error(err: &io::Error) -> io::Error {
    match err.raw_os_error() {
        Some(n) => io::Error::from_raw_os_error(n),
        None => io::Error::new(err.kind(), err.to_string()),
    }
}

/// Process operations that fail or stall per a [`FaultPlan`] (rules of
/// [`FaultOp::Exec`]), and otherwise are `inner`'s.
#[derive(Debug)]
pub(crate) struct FaultProcess {
    inner: Arc<dyn ProcessOps>,
    plan: Arc<FaultPlan>,
}

impl FaultProcess {
    /// `inner` with `plan`'s faults.
    pub(crate) fn new(inner: Arc<dyn ProcessOps>, plan: Arc<FaultPlan>) -> Self {
        Self { inner, plan }
    }
}

impl ProcessOps for FaultProcess {
    fn exec(
        &self,
        request: ExecRequest,
        on_data: DataSink,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, io::Result<ExecEnd>> {
        let Some(fault) = self.plan.take(FaultOp::Exec, None) else {
            return self.inner.exec(request, on_data, cancel);
        };
        let inner = Arc::clone(&self.inner);
        Box::pin(async move {
            if let Some(delay) = fault.delay {
                // A cancellation during the stall ends the command as it
                // would end a running one.
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = cancel.cancelled() => return Ok(ExecEnd::Cancelled),
                }
            }
            match &fault.error {
                Some(error) => Err(error.to_io()),
                None => inner.exec(request, on_data, cancel).await,
            }
        })
    }
}

#[cfg(test)]
#[path = "faults_tests.rs"]
mod tests;
