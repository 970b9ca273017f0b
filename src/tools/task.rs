//! The one way a tool runs blocking file-system work: on Tokio's blocking
//! pool, after a last look at the cancellation token.

use super::contract::ToolContext;
use super::contract::ToolOutput;
use super::error::ToolError;

/// Runs `work` on Tokio's blocking pool, unless the call is already
/// cancelled: the way a tool's blocking work (the disk through
/// [`FsOps`](super::ops::FsOps), a long computation) stays off the
/// runtime's worker threads. The work still sees `ctx.cancel` and should
/// look at it between steps; a blocking thread cannot be stopped from
/// outside.
///
/// # Errors
///
/// [`ToolError::cancelled`] when the call was cancelled before the work
/// started; what `work` returns; a broken invariant ("the {tool} task
/// failed: …") when the work panicked, or when it is awaited outside a
/// Tokio runtime (see [the runtime contract](super#the-runtime)).
pub async fn run_blocking<A, F>(
    tool: &str,
    args: A,
    ctx: ToolContext,
    work: F,
) -> Result<ToolOutput, ToolError>
where
    A: Send + 'static,
    F: FnOnce(&A, &ToolContext) -> Result<ToolOutput, ToolError> + Send + 'static,
{
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::cancelled());
    }
    let runtime = tokio::runtime::Handle::try_current().map_err(|_| no_runtime(tool))?;
    runtime
        .spawn_blocking(move || work(&args, &ctx))
        .await
        .map_err(|err| ToolError::fatal(format!("the {tool} task failed: {err}")))?
}

/// The broken invariant of a tool run outside a Tokio runtime.
pub(crate) fn no_runtime(what: &str) -> ToolError {
    ToolError::fatal(format!(
        "{what} was run outside a Tokio runtime; the tool layer runs its tools on Tokio \
         tasks, so call it from inside a runtime built with IO and time enabled \
         (tokio::runtime::Builder::enable_all)"
    ))
}
