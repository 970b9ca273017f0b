//! Where a scenario's calls to names no active tool has go: to one of its
//! MCP servers, sent as written, so the server's own answer to a name it
//! does not have (or to arguments it refuses) is what the scenario checks.
//!
//! - `SERVER/NAME`, for a server of the scenario: to that server as `NAME`;
//! - any other name, when the active tools all come from servers: to the
//!   active server whose `prefix` the name starts with (the longest), or
//!   else to the one active server without a prefix;
//! - anything else (a built-in tool is active, or two servers without a
//!   prefix could take it) is answered by the registry's not-found error.

use std::sync::Arc;

use crate::mcp::client::McpClient;
use crate::mcp::client::ServerTool;
use crate::tools::AnyTool;
use crate::tools::Router;

/// One server a call can be sent to.
#[derive(Debug)]
pub(super) struct Route {
    /// The server's name in the scenario.
    pub server: String,
    /// The prefix of its tools' names.
    pub prefix: String,
    /// Whether some of its tools are active.
    pub active: bool,
}

/// The router of a scenario's registry: each route with its server's
/// client; `builtin_active`: some built-in tool is active (then only
/// `SERVER/NAME` is sent to a server).
pub(super) fn router(servers: Vec<(Route, Arc<McpClient>)>, builtin_active: bool) -> Router {
    let (routes, clients): (Vec<Route>, Vec<Arc<McpClient>>) = servers.into_iter().unzip();
    Arc::new(move |name: &str| {
        let (index, tool) = target(&routes, builtin_active, name)?;
        let client = clients.get(index)?;
        let tool: Arc<dyn AnyTool> = Arc::new(ServerTool::routed(client, tool, name));
        Some(tool)
    })
}

/// The route a call to `name` takes (its index), and the tool's name on
/// that server.
pub(super) fn target<'n>(
    routes: &[Route],
    builtin_active: bool,
    name: &'n str,
) -> Option<(usize, &'n str)> {
    if let Some((server, tool)) = name.split_once('/')
        && let Some(index) = routes.iter().position(|r| r.server == server)
    {
        return Some((index, tool));
    }
    if builtin_active {
        return None;
    }
    let active = || routes.iter().enumerate().filter(|(_, r)| r.active);
    if let Some((index, route)) = active()
        .filter(|(_, r)| !r.prefix.is_empty() && name.starts_with(r.prefix.as_str()))
        .max_by_key(|(_, r)| r.prefix.len())
    {
        return Some((index, &name[route.prefix.len()..]));
    }
    let mut bare = active().filter(|(_, r)| r.prefix.is_empty());
    match (bare.next(), bare.next()) {
        (Some((index, _)), None) => Some((index, name)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn route(server: &str, prefix: &str, active: bool) -> Route {
        Route {
            server: server.to_owned(),
            prefix: prefix.to_owned(),
            active,
        }
    }

    #[test]
    fn server_slash_name_goes_to_that_server_whatever_is_active() {
        let routes = [route("memory", "", false), route("time", "t_", true)];
        for builtin_active in [false, true] {
            assert_eq!(
                target(&routes, builtin_active, "memory/nope"),
                Some((0, "nope"))
            );
            assert_eq!(
                target(&routes, builtin_active, "time/a/b"),
                Some((1, "a/b"))
            );
        }
        // Not a server of the scenario: no route by the slash.
        assert_eq!(target(&routes, true, "other/x"), None);
    }

    #[test]
    fn other_names_go_to_the_only_active_server_when_no_built_in_is() {
        let one = [route("memory", "", true), route("checked", "", false)];
        assert_eq!(target(&one, false, "delete_all"), Some((0, "delete_all")));
        assert_eq!(target(&one, false, "other/x"), Some((0, "other/x")));
        assert_eq!(target(&one, true, "delete_all"), None);
        // Two servers without a prefix: no way to tell.
        let two = [route("a", "", true), route("b", "", true)];
        assert_eq!(target(&two, false, "x"), None);
        // A prefix picks its server; the longest prefix wins.
        let prefixed = [
            route("a", "", true),
            route("b", "b_", true),
            route("bb", "b_b_", true),
        ];
        assert_eq!(target(&prefixed, false, "b_x"), Some((1, "x")));
        assert_eq!(target(&prefixed, false, "b_b_x"), Some((2, "x")));
        assert_eq!(target(&prefixed, false, "x"), Some((0, "x")));
        // No server is active: nothing to send it to.
        assert_eq!(target(&[route("a", "", false)], false, "x"), None);
        assert_eq!(target(&[], false, "x"), None);
    }
}
