//! Removing finished workspaces off the runtime: a removal blocks on the
//! disk (each `unlinkat` costs about 0.2 ms on ext4 mounted with
//! `discard`), so scenarios hand their temporary directories to one
//! cleanup thread and go on; the run joins it at the end, so every
//! directory is gone when the run returns.

use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::mpsc;
use std::thread::JoinHandle;

/// What the cleanup thread drops (a `TempDir` removes itself when dropped).
type Garbage = Box<dyn Send>;

/// The cleanup thread of one run.
#[derive(Debug, Default)]
pub(super) struct Cleanup {
    inner: Mutex<State>,
}

#[derive(Debug, Default)]
enum State {
    /// Nothing handed over yet.
    #[default]
    Idle,
    /// The thread runs.
    Running(mpsc::Sender<Garbage>, JoinHandle<()>),
    /// The run has ended: removal happens in place.
    Finished,
}

impl Cleanup {
    /// Drops `garbage` on the cleanup thread (started on first use), or
    /// right here when the thread cannot be started or the run has ended.
    pub(super) fn remove(&self, garbage: impl Send + 'static) {
        let garbage: Garbage = Box::new(garbage);
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if matches!(*inner, State::Idle) {
            let (tx, rx) = mpsc::channel::<Garbage>();
            let spawned = std::thread::Builder::new()
                .name("harness-cleanup".to_owned())
                .spawn(move || rx.into_iter().for_each(drop));
            match spawned {
                Ok(thread) => *inner = State::Running(tx, thread),
                Err(_) => return drop(garbage),
            }
        }
        match &*inner {
            State::Running(tx, _) => {
                if let Err(mpsc::SendError(garbage)) = tx.send(garbage) {
                    drop(garbage);
                }
            }
            State::Idle | State::Finished => drop(garbage),
        }
    }

    /// Waits until everything handed over is removed.
    pub(super) fn finish(&self) {
        let taken = std::mem::replace(
            &mut *self.inner.lock().unwrap_or_else(PoisonError::into_inner),
            State::Finished,
        );
        if let State::Running(tx, thread) = taken {
            drop(tx);
            let _ = thread.join();
        }
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_handed_over_is_removed_when_the_run_finishes() {
        let cleanup = Cleanup::default();
        let dirs: Vec<std::path::PathBuf> = (0..5)
            .map(|_| {
                let dir = tempfile::tempdir().unwrap();
                std::fs::write(dir.path().join("f"), "x").unwrap();
                let path = dir.path().to_path_buf();
                cleanup.remove(dir);
                path
            })
            .collect();
        cleanup.finish();
        assert_eq!(dirs.iter().filter(|d| d.exists()).count(), 0);
        // After the end, removal happens in place.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        cleanup.remove(dir);
        assert!(!path.exists());
    }
}
