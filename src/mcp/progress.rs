//! A call's streamed updates (bash's output so far) as
//! `notifications/progress`, when the client asked for them with a
//! `progressToken`.
//!
//! The tool's [`UpdateSink`] keeps only the newest update (a watch
//! channel); one task sends it on, at most once per [`PROGRESS_INTERVAL`],
//! with `progress` counting up from 1 and `message` holding the end of the
//! output's tail (at most [`PROGRESS_MESSAGE_BYTES`]). Nothing is sent once
//! the request is cancelled, and [`Progress::finish`] waits for a
//! notification on its way out, so none follows the call's result.

use std::time::Duration;

use rmcp::Peer;
use rmcp::RoleServer;
use rmcp::model::ProgressNotificationParam;
use rmcp::model::ProgressToken;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::tools::ToolUpdate;
use crate::tools::UpdateSink;

/// The least time between two progress notifications of one call.
pub(super) const PROGRESS_INTERVAL: Duration = Duration::from_millis(250);

/// The most bytes of the output's tail a progress message carries.
pub(super) const PROGRESS_MESSAGE_BYTES: usize = 4096;

/// The progress notifications of one call.
pub(super) struct Progress {
    done: CancellationToken,
    task: Option<JoinHandle<()>>,
}

impl Progress {
    /// Stops sending, and waits for a notification being sent.
    pub(super) async fn finish(self) {
        self.done.cancel();
        if let Some(task) = self.task {
            let _ = task.await;
        }
    }
}

/// A sink for the call's updates, and what sends them on: nothing at all
/// without a `token`.
pub(super) fn forward(
    token: Option<ProgressToken>,
    peer: Peer<RoleServer>,
    cancelled: CancellationToken,
) -> (UpdateSink, Progress) {
    let done = CancellationToken::new();
    let Some(token) = token else {
        let progress = Progress { done, task: None };
        return (UpdateSink::discard(), progress);
    };
    let (tx, rx) = watch::channel(String::new());
    let sink = UpdateSink::new(move |update: ToolUpdate| {
        tx.send_replace(update.text());
    });
    let task = tokio::spawn(send_updates(token, peer, rx, done.clone(), cancelled));
    (
        sink,
        Progress {
            done,
            task: Some(task),
        },
    )
}

async fn send_updates(
    token: ProgressToken,
    peer: Peer<RoleServer>,
    mut updates: watch::Receiver<String>,
    done: CancellationToken,
    cancelled: CancellationToken,
) {
    let mut sent: u32 = 0;
    loop {
        tokio::select! {
            biased;
            () = done.cancelled() => return,
            () = cancelled.cancelled() => return,
            changed = updates.changed() => {
                if changed.is_err() {
                    return;
                }
            }
        }
        let text = updates.borrow_and_update().clone();
        if text.is_empty() {
            continue;
        }
        sent = sent.saturating_add(1);
        let param = ProgressNotificationParam::new(token.clone(), f64::from(sent))
            .with_message(tail(&text, PROGRESS_MESSAGE_BYTES));
        if peer.notify_progress(param).await.is_err() {
            return;
        }
        tokio::select! {
            biased;
            () = done.cancelled() => return,
            () = cancelled.cancelled() => return,
            () = tokio::time::sleep(PROGRESS_INTERVAL) => {}
        }
    }
}

/// The end of `text` within `max` bytes: from the first line that starts
/// inside them, or (when one line is longer) from the first whole
/// character.
fn tail(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let window = &text[start..];
    match window.find('\n') {
        Some(newline) if newline + 1 < window.len() => &window[newline + 1..],
        _ => window,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Content;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_tail_keeps_whole_lines_and_whole_characters() {
        assert_eq!(tail("short", 10), "short");
        assert_eq!(tail("one\ntwo\nthree\n", 10), "three\n");
        // One long line: cut inside it, at a character boundary ("é" is
        // two bytes; the cut would fall inside the first).
        assert_eq!(tail("ééé", 5), "éé");
        // The window ends in its only newline: nothing after it, keep it.
        assert_eq!(tail("abcdef\n", 3), "ef\n");
    }

    #[test]
    fn the_text_of_an_update_joins_its_text_blocks() {
        let content = vec![
            Content::text("a"),
            Content::Image {
                data: String::new(),
                mime_type: "image/png".to_owned(),
            },
            Content::text("b"),
        ];
        assert_eq!(crate::tools::text_of(&content), "a\nb");
    }
}
