//! The accept loop: at most `connections` open connections per listener (one more is closed at
//! once, so a client falls back instead of waiting), and a connection that has not sent a whole
//! request head within `header_timeout` is closed (slow clients cannot hold the daemon).

use std::sync::Arc;
use std::time::Duration;

use axum::serve::Listener;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::sync::{watch, Semaphore};

/// Bounds on what clients can hold.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Open connections per listener.
    pub connections: usize,
    /// Time for a client to send a request's line and headers.
    pub header_timeout: Duration,
    /// Dispatches running at once (over both listeners); one more is answered 503.
    pub dispatches: usize,
    /// Time for a client to send a dispatch's body once the daemon asked for it.
    pub body_timeout: Duration,
    /// Bytes of dispatch requests larger than [`SMALL_DISPATCH`] taken at once (their
    /// `Content-Length`, held until answered); one more is answered 503.
    pub dispatch_bytes: usize,
    /// Observers (event streams, the dashboard, `/v1/sessions`, `/metrics`) served at once per
    /// listener, at most half its connections: the rest are for dispatches. One more is
    /// answered 503.
    pub observers: usize,
}

/// A dispatch request this small is never refused for the bytes in flight: what the agents
/// send (they are counted by [`Limits::dispatches`] only, so they hold 128 × 64 KiB at most).
pub const SMALL_DISPATCH: usize = 64 * 1024;

impl Limits {
    /// Observers served at once on one listener: [`Limits::observers`], at most half of
    /// [`Limits::connections`] (at least one).
    pub fn observers_per_listener(&self) -> usize {
        self.observers.min(self.connections / 2).max(1)
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connections: 1024,
            header_timeout: Duration::from_secs(5),
            dispatches: 128,
            body_timeout: Duration::from_secs(30),
            dispatch_bytes: 32 * 1024 * 1024,
            observers: 256,
        }
    }
}

/// Told of each connection closed unanswered because the listener was at its connection cap.
pub(crate) type OverCap = Arc<dyn Fn() + Send + Sync>;

/// Serve `app` on `listener` until `stopping` turns true, then let open connections finish
/// their current request. `admit` may refuse a connection (the Unix socket's peer check);
/// `over_cap` is told of each one closed at the cap.
pub(crate) async fn serve<L>(
    mut listener: L,
    app: Router,
    limits: Limits,
    (admit, over_cap): (fn(&L::Io) -> bool, OverCap),
    mut stopping: watch::Receiver<bool>,
) where
    L: Listener,
    L::Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let slots = Arc::new(Semaphore::new(limits.connections.max(1)));
    let mut conns = tokio::task::JoinSet::new();
    loop {
        let io = tokio::select! {
            (io, _) = listener.accept() => io,
            () = stopped(&mut stopping) => break,
        };
        while conns.try_join_next().is_some() {}
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            over_cap();
            continue; // over the cap: dropping `io` closes it
        };
        if !admit(&io) {
            continue;
        }
        let svc = TowerToHyperService::new(app.clone());
        let mut stop = stopping.clone();
        let timeout = limits.header_timeout;
        conns.spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(timeout);
            let conn = builder.serve_connection(TokioIo::new(io), svc);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                () = stopped(&mut stop) => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
            drop(slot);
        });
    }
    while conns.join_next().await.is_some() {}
}

/// Resolves when the daemon is stopping (or its sender is gone).
async fn stopped(rx: &mut watch::Receiver<bool>) {
    let _ = rx.wait_for(|s| *s).await;
}

/// The Unix socket's peer runs as this daemon's user: its mode (0600) says so already, this
/// holds even if the mode was loosened or the socket was reachable before it was set.
pub(crate) fn same_user(io: &tokio::net::UnixStream) -> bool {
    io.peer_cred()
        .is_ok_and(|c| c.uid() == nix::unistd::geteuid().as_raw())
}

/// TCP connections are judged per request (token, Host, Origin).
pub(crate) fn any(_: &tokio::net::TcpStream) -> bool {
    true
}
