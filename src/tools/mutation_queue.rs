//! The per-file mutation queue (§common.6).
//!
//! `write` and `edit` to the same real path run one after another, in the
//! order the calls were made; different files run concurrently. The order is
//! fixed when a call takes its [`Ticket`] (synchronously, while the registry
//! prepares the call), not when its future first runs, so two calls in one
//! parallel batch are applied in the order the model wrote them.
//!
//! A ticket waits for its predecessor's ticket to be dropped. Dropping is the
//! release, so the queue moves on after success, error, cancellation and
//! even a panic in the tool.

use std::collections::HashMap;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;

use tokio::sync::oneshot;

/// Serialises mutations per real path. Cloning shares the queue.
#[derive(Clone, Debug, Default)]
pub(crate) struct MutationQueue {
    tails: Arc<Mutex<HashMap<PathBuf, oneshot::Receiver<()>>>>,
}

/// A place in the queue of one path. Wait with [`Ticket::ready`]; drop it to
/// let the next one go.
#[derive(Debug)]
pub(crate) struct Ticket {
    previous: Option<oneshot::Receiver<()>>,
    // Never sent: dropping it is the release signal.
    _release: oneshot::Sender<()>,
}

impl Ticket {
    /// Waits until every earlier ticket of the same path was dropped.
    pub(crate) async fn ready(&mut self) {
        if let Some(previous) = self.previous.take() {
            // Err means the sender was dropped: exactly the release we want.
            let _ = previous.await;
        }
    }
}

impl MutationQueue {
    /// A new, empty queue.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Takes the next place in the queue of `real_path`.
    pub(crate) fn ticket(&self, real_path: &Path) -> Ticket {
        let (release, tail) = oneshot::channel();
        // A poisoned lock only means another thread panicked between two
        // statements that each leave the map consistent.
        let mut tails = self.tails.lock().unwrap_or_else(|e| e.into_inner());
        forget_released(&mut tails);
        let previous = tails.insert(real_path.to_path_buf(), tail);
        Ticket {
            previous,
            _release: release,
        }
    }

    /// Number of paths with a live ticket (for tests).
    #[cfg(test)]
    pub(crate) fn active_paths(&self) -> usize {
        let mut tails = self.tails.lock().unwrap_or_else(|e| e.into_inner());
        forget_released(&mut tails);
        tails.len()
    }
}

/// Forgets paths whose last ticket is gone, so the map stays small.
fn forget_released(tails: &mut HashMap<PathBuf, oneshot::Receiver<()>>) {
    tails.retain(|_, rx| matches!(rx.try_recv(), Err(oneshot::error::TryRecvError::Empty)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex as StdMutex;

    #[tokio::test]
    async fn same_path_runs_in_ticket_order_even_when_polled_out_of_order() {
        let queue = MutationQueue::new();
        let log = Arc::new(StdMutex::new(Vec::new()));
        let first = queue.ticket(Path::new("/ws/a"));
        let second = queue.ticket(Path::new("/ws/a"));
        let run = |mut ticket: Ticket,
                   name: &'static str,
                   log: Arc<StdMutex<Vec<&'static str>>>| async move {
            ticket.ready().await;
            log.lock().unwrap().push(name);
            tokio::task::yield_now().await;
            log.lock().unwrap().push(name);
        };
        // Start the second one first: it must still wait for the first.
        let b = tokio::spawn(run(second, "second", Arc::clone(&log)));
        tokio::task::yield_now().await;
        let a = tokio::spawn(run(first, "first", Arc::clone(&log)));
        a.await.unwrap();
        b.await.unwrap();
        assert_eq!(
            *log.lock().unwrap(),
            vec!["first", "first", "second", "second"]
        );
    }

    #[tokio::test]
    async fn different_paths_do_not_wait_for_each_other() {
        let queue = MutationQueue::new();
        let _held = queue.ticket(Path::new("/ws/a"));
        let mut other = queue.ticket(Path::new("/ws/b"));
        // Completes although the ticket of /ws/a is still held.
        other.ready().await;
    }

    #[tokio::test]
    async fn dropping_a_ticket_releases_the_next_and_the_map_empties() {
        let queue = MutationQueue::new();
        let first = queue.ticket(Path::new("/ws/a"));
        let mut second = queue.ticket(Path::new("/ws/a"));
        drop(first);
        second.ready().await;
        assert_eq!(queue.active_paths(), 1);
        drop(second);
        assert_eq!(queue.active_paths(), 0);
    }

    #[tokio::test]
    async fn a_panicking_holder_still_releases() {
        let queue = MutationQueue::new();
        let first = queue.ticket(Path::new("/ws/a"));
        let mut second = queue.ticket(Path::new("/ws/a"));
        let handle = tokio::spawn(async move {
            let _ticket = first;
            panic!("tool panicked");
        });
        assert!(handle.await.is_err());
        second.ready().await;
    }
}
