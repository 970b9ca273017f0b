//! The transport the server reads through: every `tools/call` is prepared
//! by the registry the moment it is read, and the end of the input is
//! signalled.
//!
//! rmcp answers each request on a task of its own, and tasks start in no
//! fixed order. Preparing a call takes its place in the per-file mutation
//! queue, so preparing here, where messages come one at a time in the
//! order the client sent them, is what keeps writes and edits to one file
//! in arrival order, as the agent loop keeps them in call order. The
//! prepared call travels with the request (its extensions) to the handler;
//! a request rmcp refuses before the handler drops it, and with it its
//! place in the queue.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;

use rmcp::RoleServer;
use rmcp::model::CallToolRequestParams;
use rmcp::model::ClientRequest;
use rmcp::model::JsonRpcMessage;
use rmcp::model::RequestId;
use rmcp::service::RxJsonRpcMessage;
use rmcp::service::TxJsonRpcMessage;
use rmcp::transport::Transport;
use serde_json::Value;
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

/// A transport that prepares calls as they arrive and cancels `eof` when
/// the input ends.
pub(super) struct Arrivals<T> {
    inner: T,
    registry: Arc<Registry>,
    eof: CancellationToken,
}

impl<T> Arrivals<T> {
    pub(super) fn new(inner: T, registry: Arc<Registry>, eof: CancellationToken) -> Self {
        Self {
            inner,
            registry,
            eof,
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
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let Some(mut message) = self.inner.receive().await else {
            self.eof.cancel();
            return None;
        };
        self.arrive(&mut message);
        Some(message)
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}
