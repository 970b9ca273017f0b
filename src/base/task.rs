//! A task that stops when nobody waits for it any more.

/// Aborts a Tokio task when dropped; aborting a finished task does
/// nothing.
pub(crate) struct AbortOnDrop(tokio::task::AbortHandle);

impl AbortOnDrop {}

impl<T> From<&tokio::task::JoinHandle<T>> for AbortOnDrop {
    fn from(task: &tokio::task::JoinHandle<T>) -> Self {
        Self(task.abort_handle())
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
