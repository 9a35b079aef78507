//! The accept loop: each connection served by hyper's HTTP/1 server, with a deadline on
//! the request's headers.
//!
//! axum's own `serve` gives hyper no timer, and without one hyper has no header deadline:
//! a client that opens connections and never finishes their headers (a "slowloris") would
//! hold them for as long as it likes. Here hyper gets tokio's timer and
//! [`HEADER_DEADLINE`]; a body has its own deadline (`body_deadline`). Shutting down works
//! as axum's does: stop accepting, ask each connection to finish the request it is on,
//! and wait for them, here for at most [`SHUTDOWN_GRACE`] (WebSockets, once upgraded,
//! live on their own and are not waited for).

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// How long a client may take to send a request's headers, counted from when the server
/// starts waiting for them (the connection opened, or the answer before on a connection
/// kept alive); the connection is closed after that, so an idle one is closed too, as
/// keep-alive timeouts do. Headers are a few hundred bytes, sent at once by browsers
/// and scripts, which open a new connection when an idle one was closed.
pub const HEADER_DEADLINE: Duration = Duration::from_secs(30);

/// How long requests under way get to finish once the server is asked to stop.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Serves `app` on the connections `listener` accepts until `shutdown` completes, then
/// waits (up to [`SHUTDOWN_GRACE`]) for the connections under way to finish their requests.
pub async fn serve(listener: TcpListener, app: Router, shutdown: impl Future<Output = ()>) {
    // Each connection holds a receiver of `stop`: a send asks them to finish, and
    // `stop.closed()` completes when the last of them has.
    let (stop, _) = watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = &mut shutdown => break,
        };
        match accepted {
            Ok((stream, _)) => {
                // The live view's frames are small and must not wait for an ACK.
                let _ = stream.set_nodelay(true);
                tokio::spawn(serve_one(stream, app.clone(), stop.subscribe()));
            }
            // Out of file descriptors, say: wait for some to close rather than spin.
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    drop(listener);
    let _ = stop.send(true);
    // A client that never finishes its request (headers half sent) does not hold the
    // server up for longer.
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, stop.closed()).await;
}

async fn serve_one(stream: tokio::net::TcpStream, app: Router, mut stop: watch::Receiver<bool>) {
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(HEADER_DEADLINE);
    let conn = builder
        .serve_connection(TokioIo::new(stream), TowerToHyperService::new(app))
        .with_upgrades();
    let mut conn = std::pin::pin!(conn);
    tokio::select! {
        // A connection's failures (a client gone, headers too slow) are the client's.
        _ = conn.as_mut() => return,
        _ = stop.wait_for(|stopping| *stopping) => {}
    }
    conn.as_mut().graceful_shutdown();
    let _ = conn.await;
}
