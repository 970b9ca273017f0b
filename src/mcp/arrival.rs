//! The transport the server reads through: every `tools/call` is prepared
//! by the registry the moment it is read, at most [`MAX_IN_FLIGHT`]
//! requests are held unanswered (the input is not read past that: a
//! client that never reads the answers is pushed back), and the end of
//! the input is signalled.
//!
//! rmcp answers each request on a task of its own, and tasks start in no
//! fixed order. Preparing a call takes its place in the per-file mutation
//! queue, so preparing here, where messages come one at a time in the
//! order the client sent them, is what keeps writes and edits to one file
//! in arrival order, as the agent loop keeps them in call order. The
//! prepared call travels with the request (its extensions) to the handler;
//! a request rmcp refuses before the handler drops it, and with it its
//! place in the queue.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;

use rmcp::RoleServer;
use rmcp::model::CallToolRequestParams;
use rmcp::model::ClientNotification;
use rmcp::model::ClientRequest;
use rmcp::model::JsonRpcMessage;
use rmcp::model::RequestId;
use rmcp::service::RxJsonRpcMessage;
use rmcp::service::TxJsonRpcMessage;
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::sync::OwnedSemaphorePermit;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::tools::PrepareError;
use crate::tools::PreparedCall;
use crate::tools::Registry;
use crate::tools::ToolCall;

/// A call as the registry prepared it: ready to run, or the error result
/// the model gets instead.
pub(super) type Prepared = Result<PreparedCall, PrepareError>;

/// The prepared call a `tools/call` request carries to its handler; it is
/// taken once.
#[derive(Clone)]
pub(super) struct Arrival(Arc<Mutex<Option<Prepared>>>);

impl Arrival {
    /// The prepared call, the first time it is asked for.
    pub(super) fn take(&self) -> Option<Prepared> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

/// The registry's view of a `tools/call`: its id (the JSON-RPC id, which
/// also names a call's files), its name and its arguments (none is an
/// empty object, which validation then judges).
pub(super) fn tool_call(id: &RequestId, params: &CallToolRequestParams) -> ToolCall {
    let arguments = params
        .arguments
        .clone()
        .map_or_else(|| Value::Object(Default::default()), Value::Object);
    ToolCall::new(id.to_string(), params.name.to_string(), arguments)
}

/// The most requests a session holds that are read and not yet answered
/// (their handler running, or their answer waiting to be written). At
/// this many, nothing more is read from the input until one is answered,
/// so a client that sends and never reads the answers is pushed back
/// (its writes block) instead of the server holding every answer.
pub(super) const MAX_IN_FLIGHT: usize = 64;

/// The requests in flight: a permit of [`MAX_IN_FLIGHT`] for each, held
/// from when it is read until its answer is written (or dropped).
#[derive(Clone)]
struct Flight {
    permits: Arc<Semaphore>,
    /// The permits by request id: one request each, more when a client
    /// reuses an id still in flight.
    held: Arc<Mutex<HashMap<RequestId, Vec<OwnedSemaphorePermit>>>>,
}

impl Flight {
    fn new() -> Self {
        Self {
            permits: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            held: Arc::default(),
        }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, Vec<OwnedSemaphorePermit>>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Request `id` has no answer to come any more: its answer was
    /// written, or it was cancelled (rmcp then sends nothing for it). A
    /// reused id is answered once (rmcp keeps one entry per id), so every
    /// permit under it goes.
    fn land(&self, id: &RequestId) {
        self.held().remove(id);
    }
}

/// A transport that prepares calls as they arrive, holds at most
/// [`MAX_IN_FLIGHT`] requests unanswered, and cancels `eof` when the
/// input ends.
pub(super) struct Arrivals<T> {
    inner: T,
    registry: Arc<Registry>,
    eof: CancellationToken,
    flight: Flight,
}

impl<T> Arrivals<T> {
    pub(super) fn new(inner: T, registry: Arc<Registry>, eof: CancellationToken) -> Self {
        Self {
            inner,
            registry,
            eof,
            flight: Flight::new(),
        }
    }

    fn arrive(&self, message: &mut RxJsonRpcMessage<RoleServer>) {
        if let JsonRpcMessage::Request(request) = message
            && let ClientRequest::CallToolRequest(call) = &mut request.request
        {
            let prepared = self.registry.prepare(&tool_call(&request.id, &call.params));
            call.extensions
                .insert(Arrival(Arc::new(Mutex::new(Some(prepared)))));
        }
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for Arrivals<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answered = match &item {
            JsonRpcMessage::Response(response) => Some(response.id.clone()),
            JsonRpcMessage::Error(error) => error.id.clone(),
            JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => None,
        };
        let flight = self.flight.clone();
        let send = self.inner.send(item);
        async move {
            // Written (or failed: the output is gone): it waits no more.
            let sent = send.await;
            if let Some(id) = answered {
                flight.land(&id);
            }
            sent
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        // Nothing is read while the session holds its most requests;
        // dropped (rmcp polls this in a select), the wait costs nothing.
        let permit = Arc::clone(&self.flight.permits)
            .acquire_owned()
            .await
            .ok()?;
        let Some(mut message) = self.inner.receive().await else {
            self.eof.cancel();
            return None;
        };
        match &message {
            JsonRpcMessage::Request(request) => {
                self.flight
                    .held()
                    .entry(request.id.clone())
                    .or_default()
                    .push(permit);
            }
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    self.flight.land(id);
                }
            }
            JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {}
        }
        self.arrive(&mut message);
        Some(message)
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}
