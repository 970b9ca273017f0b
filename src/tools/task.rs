//! The one way a tool runs blocking file-system work: on tokio's blocking
//! pool, after a last look at the cancellation token.

use super::contract::ToolContext;
use super::contract::ToolOutput;
use super::error::ToolError;

/// The body of a tool that blocks: its arguments and context in, its
/// result out.
pub(crate) type BlockingWork<A> = fn(&A, &ToolContext) -> Result<ToolOutput, ToolError>;

/// Runs `work` on a blocking thread, unless the call is already cancelled.
/// A task that panics or is dropped is a broken invariant: "the {tool}
/// task failed: …".
pub(crate) async fn run_blocking<A: Send + 'static>(
    tool: &str,
    args: A,
    ctx: ToolContext,
    work: BlockingWork<A>,
) -> Result<ToolOutput, ToolError> {
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::cancelled());
    }
    tokio::task::spawn_blocking(move || work(&args, &ctx))
        .await
        .map_err(|err| ToolError::fatal(format!("the {tool} task failed: {err}")))?
}
