//! The signals that stop a command: SIGINT (Ctrl-C), SIGTERM and SIGHUP.
//! `harness run` ends its scenarios on the first and says which it was;
//! `harness call`, `mcp` and `record` cancel what runs.

/// The stop signals, caught from the moment this is made (inside a Tokio
/// runtime). A signal that cannot be caught keeps its default action.
pub(crate) struct StopSignals {
    interrupt: Option<tokio::signal::unix::Signal>,
    terminate: Option<tokio::signal::unix::Signal>,
    hangup: Option<tokio::signal::unix::Signal>,
}

impl StopSignals {
    /// Catches SIGINT, SIGTERM and SIGHUP now.
    pub(crate) fn register() -> Self {
        use tokio::signal::unix::SignalKind;
        use tokio::signal::unix::signal;
        Self {
            interrupt: signal(SignalKind::interrupt()).ok(),
            terminate: signal(SignalKind::terminate()).ok(),
            hangup: signal(SignalKind::hangup()).ok(),
        }
    }

    /// Waits for the first of them and returns its name.
    pub(crate) async fn recv(self) -> &'static str {
        tokio::select! {
            () = next(self.interrupt) => "SIGINT",
            () = next(self.terminate) => "SIGTERM",
            () = next(self.hangup) => "SIGHUP",
        }
    }
}

/// Resolves on the first stop signal; each handler is in place when this
/// returns.
pub(crate) fn stop_signals() -> impl std::future::Future<Output = ()> + Send {
    let signals = StopSignals::register();
    async move {
        signals.recv().await;
    }
}

/// Waits for the next signal of `stream`; forever without one.
async fn next(stream: Option<tokio::signal::unix::Signal>) {
    if let Some(mut stream) = stream
        && stream.recv().await.is_some()
    {
        return;
    }
    std::future::pending::<()>().await;
}
