//! Answers matched to requests by their exact id, type included.
//!
//! JSON-RPC ids are numbers or strings, and an answer belongs to the
//! request whose id it carries: `"2"` is not `2`. rmcp also takes a
//! numeric string as the number (an answer `"2"` answers request `2`), so
//! [`ExactIds`] stands between it and the transport: it keeps the id of
//! every request the harness sent and has not seen answered or cancelled,
//! and an answer (a result or an error) whose id is not one of them,
//! exactly, never reaches rmcp. It is counted and sampled with the junk
//! lines, since it answers nothing.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;

use rmcp::RoleClient;
use rmcp::model::ClientNotification;
use rmcp::model::JsonRpcMessage;
use rmcp::model::RequestId;
use rmcp::service::RxJsonRpcMessage;
use rmcp::service::TxJsonRpcMessage;
use rmcp::transport::Transport;

use super::stdio::Junk;

/// A client transport that lets through only the answers to requests
/// still waiting, by exact id.
pub(super) struct ExactIds<T> {
    inner: T,
    waiting: Arc<Mutex<HashSet<RequestId>>>,
    junk: Arc<Junk>,
}

impl<T> ExactIds<T> {
    /// `inner`, its stray answers noted in `junk`.
    pub(super) fn new(inner: T, junk: Arc<Junk>) -> Self {
        Self {
            inner,
            waiting: Arc::default(),
            junk,
        }
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, HashSet<RequestId>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `message` may reach rmcp: anything but an answer, and an
    /// answer to a request still waiting (which then waits no more).
    fn admits(&self, message: &RxJsonRpcMessage<RoleClient>) -> bool {
        let id = match message {
            JsonRpcMessage::Response(response) => &response.id,
            // An error without an id (a parse error) answers no request;
            // rmcp drops it.
            JsonRpcMessage::Error(error) => match &error.id {
                Some(id) => id,
                None => return true,
            },
            JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => return true,
        };
        self.waiting().remove(id)
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for ExactIds<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        match &item {
            JsonRpcMessage::Request(request) => {
                self.waiting().insert(request.id.clone());
            }
            // A cancelled request is answered no more; a late answer is
            // dropped as rmcp would drop it.
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    self.waiting().remove(id);
                }
            }
            JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {}
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let message = self.inner.receive().await?;
            if self.admits(&message) {
                return Some(message);
            }
            self.junk.note_message(&message);
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use rmcp::model::NumberOrString;
    use rmcp::model::ServerJsonRpcMessage;
    use rmcp::model::ServerResult;

    /// A transport that answers from a list and records nothing.
    struct Canned(Vec<ServerJsonRpcMessage>);

    impl Transport<RoleClient> for Canned {
        type Error = std::io::Error;

        fn send(
            &mut self,
            _item: TxJsonRpcMessage<RoleClient>,
        ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
            std::future::ready(Ok(()))
        }

        async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
            (!self.0.is_empty()).then(|| self.0.remove(0))
        }

        async fn close(&mut self) -> Result<(), Self::Error> {
            Ok(())
        }
    }

    fn answer(id: RequestId) -> ServerJsonRpcMessage {
        JsonRpcMessage::response(ServerResult::empty(()), id)
    }

    fn ping(id: i64) -> TxJsonRpcMessage<RoleClient> {
        JsonRpcMessage::request(
            rmcp::model::ClientRequest::PingRequest(Default::default()),
            NumberOrString::Number(id),
        )
    }

    #[tokio::test]
    async fn only_answers_to_waiting_requests_pass_by_exact_id() {
        let string_two = NumberOrString::String("2".into());
        let junk = Arc::new(Junk::default());
        let mut transport = ExactIds::new(
            Canned(vec![
                answer(string_two.clone()),
                answer(NumberOrString::Number(2)),
                answer(NumberOrString::Number(2)),
                answer(NumberOrString::Number(7)),
            ]),
            Arc::clone(&junk),
        );
        transport.send(ping(2)).await.unwrap();
        let mut passed = Vec::new();
        while let Some(message) = transport.receive().await {
            passed.push(message.into_response().map(|(_, id)| id));
        }
        // `"2"`, a second answer to 2 and an answer to 7 (never sent) are junk.
        assert_eq!(
            (passed, junk.lines()),
            (vec![Some(NumberOrString::Number(2))], 3)
        );
    }
}
