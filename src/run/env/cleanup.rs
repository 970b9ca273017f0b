//! Removing finished workspaces without waiting on the disk. Freeing
//! inodes while new ones are created is what costs: on ext4 without a
//! journal, creating a file skips every inode of its group freed in the
//! last minute or more (`recently_deleted`, read from the inode table one
//! by one), so a run that removes each workspace as it ends makes every
//! later workspace slower to build; and on a disk mounted with `discard`
//! each `unlinkat` of a file waits about 1 ms for the device. So finished
//! workspaces wait, and are removed once the run ends, by [`THREADS`]
//! threads side by side (the run joins them: every directory is gone when
//! it returns). At most [`MAX_WAITING`] workspaces or [`MAX_WAITING_BYTES`]
//! of the files their builder wrote wait: past either bound those waiting
//! are removed at once, as the run goes on. Measured in benches/README.md
//! ("Runner").

use std::sync::Mutex;
use std::sync::PoisonError;
use std::thread::JoinHandle;

/// What the cleanup drops (a `TempDir` removes itself when dropped).
type Garbage = Box<dyn Send>;

/// The threads that remove side by side: the disk, not the cores, bounds
/// removal, so their number does not follow the machine.
pub(crate) const THREADS: usize = 4;

/// The most finished workspaces that wait for the end of the run.
pub(crate) const MAX_WAITING: usize = 1024;

/// The most bytes (of what the workspaces' builder wrote) that wait.
pub(crate) const MAX_WAITING_BYTES: u64 = 256 * 1024 * 1024;

/// The cleanup of one run.
#[derive(Debug, Default)]
pub(crate) struct Cleanup {
    inner: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Finished workspaces not handed to a thread yet.
    waiting: Vec<Garbage>,
    /// The bytes the builder wrote into them.
    waiting_bytes: u64,
    /// Threads removing an earlier batch.
    threads: Vec<JoinHandle<()>>,
    /// The run has ended: removal happens in place.
    finished: bool,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("waiting", &self.waiting.len())
            .field("waiting_bytes", &self.waiting_bytes)
            .field("threads", &self.threads.len())
            .field("finished", &self.finished)
            .finish()
    }
}

/// Removes `batch` on up to [`THREADS`] threads, each a share; a share
/// whose thread cannot start is removed here.
fn remove_side_by_side(batch: Vec<Garbage>) -> Vec<JoinHandle<()>> {
    let mut shares: Vec<Vec<Garbage>> = (0..THREADS).map(|_| Vec::new()).collect();
    for (i, garbage) in batch.into_iter().enumerate() {
        shares[i % THREADS].push(garbage);
    }
    shares
        .into_iter()
        .filter(|share| !share.is_empty())
        .enumerate()
        .filter_map(|(i, share)| {
            // On failure the closure, and the share with it, is dropped
            // here: removed in place.
            std::thread::Builder::new()
                .name(format!("harness-cleanup-{i}"))
                .spawn(move || drop(share))
                .ok()
        })
        .collect()
}

impl Cleanup {
    /// Takes a finished workspace (`garbage`, whose builder wrote `bytes`)
    /// to remove by the end of the run, or right here once the run has
    /// ended.
    pub(crate) fn remove(&self, garbage: impl Send + 'static, bytes: u64) {
        let garbage: Garbage = Box::new(garbage);
        let mut state = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if state.finished {
            drop(state);
            return drop(garbage);
        }
        state.waiting.push(garbage);
        state.waiting_bytes = state.waiting_bytes.saturating_add(bytes);
        if state.waiting.len() >= MAX_WAITING || state.waiting_bytes >= MAX_WAITING_BYTES {
            let batch = std::mem::take(&mut state.waiting);
            state.waiting_bytes = 0;
            let started = remove_side_by_side(batch);
            state.threads.extend(started);
        }
    }

    /// Removes everything handed over, side by side, and waits until it is
    /// gone.
    pub(crate) fn finish(&self) {
        let (waiting, earlier) = {
            let mut state = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
            state.finished = true;
            state.waiting_bytes = 0;
            (
                std::mem::take(&mut state.waiting),
                std::mem::take(&mut state.threads),
            )
        };
        for thread in earlier.into_iter().chain(remove_side_by_side(waiting)) {
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
    use std::sync::Arc;
    use std::sync::Condvar;
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;

    #[test]
    fn everything_handed_over_waits_and_is_removed_when_the_run_finishes() {
        let cleanup = Cleanup::default();
        let dirs: Vec<std::path::PathBuf> = (0..5)
            .map(|_| {
                let dir = tempfile::tempdir().unwrap();
                std::fs::write(dir.path().join("f"), "x").unwrap();
                let path = dir.path().to_path_buf();
                cleanup.remove(dir, 1);
                path
            })
            .collect();
        // Under both bounds, nothing is removed before the end.
        assert_eq!(dirs.iter().filter(|d| d.exists()).count(), 5);
        cleanup.finish();
        assert_eq!(dirs.iter().filter(|d| d.exists()).count(), 0);
        // After the end, removal happens in place.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        cleanup.remove(dir, 1);
        assert!(!path.exists());
    }

    /// Dropped, it tells `dropped`.
    struct Told(mpsc::Sender<()>);

    impl Drop for Told {
        fn drop(&mut self) {
            let _ = self.0.send(());
        }
    }

    #[test]
    fn past_the_byte_bound_those_waiting_are_removed_as_the_run_goes_on() {
        let cleanup = Cleanup::default();
        let (tx, dropped) = mpsc::channel();
        cleanup.remove(Told(tx.clone()), MAX_WAITING_BYTES / 2);
        assert_eq!(dropped.try_recv(), Err(mpsc::TryRecvError::Empty));
        cleanup.remove(Told(tx), MAX_WAITING_BYTES / 2);
        // Both go without finish.
        for _ in 0..2 {
            assert_eq!(dropped.recv_timeout(Duration::from_secs(10)), Ok(()));
        }
        cleanup.finish();
    }

    #[test]
    fn past_the_count_bound_those_waiting_are_removed_as_the_run_goes_on() {
        let cleanup = Cleanup::default();
        let (tx, dropped) = mpsc::channel();
        for _ in 0..MAX_WAITING - 1 {
            cleanup.remove(Told(tx.clone()), 0);
        }
        assert_eq!(dropped.try_recv(), Err(mpsc::TryRecvError::Empty));
        cleanup.remove(Told(tx), 0);
        for _ in 0..MAX_WAITING {
            assert_eq!(dropped.recv_timeout(Duration::from_secs(10)), Ok(()));
        }
        cleanup.finish();
    }

    /// Dropped, it waits (at most 10 s) until [`THREADS`] guests are being
    /// dropped at once, and records the most it saw.
    struct Guest(Arc<(Mutex<(usize, usize)>, Condvar)>);

    impl Drop for Guest {
        fn drop(&mut self) {
            let (state, changed) = &*self.0;
            let mut now = state.lock().unwrap();
            now.0 += 1;
            now.1 = now.1.max(now.0);
            changed.notify_all();
            let (mut now, _) = changed
                .wait_timeout_while(now, Duration::from_secs(10), |s| s.1 < THREADS)
                .unwrap();
            now.0 -= 1;
        }
    }

    #[test]
    fn removals_wait_on_the_disk_side_by_side() {
        let meeting = Arc::new((Mutex::new((0, 0)), Condvar::new()));
        let cleanup = Cleanup::default();
        for _ in 0..THREADS {
            cleanup.remove(Guest(Arc::clone(&meeting)), 0);
        }
        cleanup.finish();
        // (dropping now, most at once): all of them were removed together.
        assert_eq!(*meeting.0.lock().unwrap(), (0, THREADS));
    }
}
