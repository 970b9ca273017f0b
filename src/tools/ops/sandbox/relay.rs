//! The loopback relay: a port of the machine's 127.0.0.1 (a harness
//! endpoint: a served model, a `url:` MCP server) made reachable at the
//! same address inside a sandbox's network namespace.
//!
//! The init listens on 127.0.0.1:PORT inside the namespace and hands the
//! socket over; here each connection accepted on it is joined to a new
//! connection to 127.0.0.1:PORT outside, bytes copied both ways until
//! either side closes. Nothing else of the machine's network is reachable.

use std::io;
use std::net::Ipv4Addr;
use std::os::fd::OwnedFd;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

/// The pause after a failed `accept` (out of descriptors), so that a
/// persistent failure does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Running relays; dropping this stops them and closes their connections.
#[derive(Debug)]
pub(super) struct Relay {
    stop: CancellationToken,
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Starts relaying each listener to its port outside, on the runtime of
/// `handle`.
pub(super) fn start(
    listeners: Vec<(u16, OwnedFd)>,
    handle: &tokio::runtime::Handle,
) -> io::Result<Relay> {
    let stop = CancellationToken::new();
    let _entered = handle.enter();
    for (port, fd) in listeners {
        let listener = std::net::TcpListener::from(fd);
        listener.set_nonblocking(true)?;
        let listener = TcpListener::from_std(listener)?;
        handle.spawn(accept_loop(listener, port, stop.clone()));
    }
    Ok(Relay { stop })
}

async fn accept_loop(listener: TcpListener, port: u16, stop: CancellationToken) {
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((inbound, _)) => {
                tokio::spawn(join(inbound, port, stop.clone()));
            }
            Err(_) => {
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(ACCEPT_BACKOFF) => {}
                }
            }
        }
    }
}

/// Joins one connection from inside to 127.0.0.1:`port` outside. A port
/// nothing listens on outside closes the connection at once, as a refused
/// connection would.
async fn join(mut inbound: TcpStream, port: u16, stop: CancellationToken) {
    let Ok(mut outbound) = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).await else {
        return;
    };
    tokio::select! {
        () = stop.cancelled() => {}
        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
    }
}
