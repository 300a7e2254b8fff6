//! What a hostile or broken client may hold of `okb serve`: every connection has a
//! header-read timeout (a request's headers must arrive within it: slowloris), an idle
//! timeout (no byte moved either way), and there are at most `max_connections` at once.
//!
//! At the limit a new connection is not refused and not queued: it takes the place of
//! the open connection that has waited longest without a request in progress (a client
//! still sending its headers, or an idle kept-alive one). Connections that only hold a
//! socket therefore cannot lock out clients that ask something, and the server never
//! runs out of file descriptors (which made it stop answering anyone).

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

/// The limits of `okb serve` (`--header-timeout`, `--idle-timeout`, `--max-connections`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// Time a client has to send a request's headers.
    pub header_timeout: Duration,
    /// Time a connection may move no byte either way before it is closed.
    pub idle_timeout: Duration,
    /// Connections open at once.
    pub max_connections: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 512,
        }
    }
}

/// One open connection, as the accept loop and the reaper see it.
struct Slot {
    /// A request is being answered.
    busy: AtomicBool,
    /// When it last became free of requests (accepted, or an answer finished), in ms.
    free_since: AtomicU64,
    /// When it last moved a byte, in ms.
    active: AtomicU64,
    /// Told to close.
    close: Notify,
}

/// The open connections, by number.
struct Connections {
    start: Instant,
    open: Mutex<HashMap<u64, Arc<Slot>>>,
}

impl Connections {
    fn now(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    /// Registers a new connection, closing the longest-waiting free one at the limit.
    /// `None` when every open connection is answering a request.
    fn admit(&self, id: u64, max: usize) -> Option<Arc<Slot>> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if open.len() >= max {
            let victim = open
                .iter()
                .filter(|(_, s)| !s.busy.load(Ordering::Relaxed))
                .min_by_key(|(id, s)| (s.free_since.load(Ordering::Relaxed), **id))
                .map(|(id, _)| *id)?;
            if let Some(slot) = open.remove(&victim) {
                slot.close.notify_one();
            }
        }
        let now = self.now();
        let slot = Arc::new(Slot {
            busy: AtomicBool::new(false),
            free_since: AtomicU64::new(now),
            active: AtomicU64::new(now),
            close: Notify::new(),
        });
        open.insert(id, slot.clone());
        Some(slot)
    }

    /// Closes the connections idle for longer than `idle`.
    fn reap(&self, idle: Duration) {
        let cutoff = self.now().saturating_sub(idle.as_millis() as u64);
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.retain(|_, s| {
            let keep = s.active.load(Ordering::Relaxed) >= cutoff;
            if !keep {
                s.close.notify_one();
            }
            keep
        });
    }
}

/// Serves `app` on `listener` within `limits` until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) {
    let connections =
        Arc::new(Connections { start: Instant::now(), open: Mutex::new(HashMap::new()) });
    let reaper = tokio::spawn(reap_every(connections.clone(), limits.idle_timeout));
    let mut shutdown = std::pin::pin!(shutdown);
    let mut next_id = 0u64;
    loop {
        let accepted = std::future::poll_fn(|cx| match shutdown.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(None),
            Poll::Pending => listener.poll_accept(cx).map(Some),
        })
        .await;
        let tcp = match accepted {
            None => break,
            Some(Ok((tcp, _))) => tcp,
            // Out of descriptors or a connection reset before it was accepted: the
            // listener itself is fine, try again shortly.
            Some(Err(_)) => {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        next_id += 1;
        let Some(slot) = connections.admit(next_id, limits.max_connections.max(1)) else {
            continue;
        };
        // Answers are small and written whole: send them now rather than wait for an ACK.
        let _ = tcp.set_nodelay(true);
        tokio::spawn(connection(tcp, app.clone(), limits, slot, connections.clone(), next_id));
    }
    reaper.abort();
}

async fn reap_every(connections: Arc<Connections>, idle: Duration) {
    let period = (idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(5));
    loop {
        tokio::time::sleep(period).await;
        connections.reap(idle);
    }
}

/// Answers one connection's requests until it ends or its slot is told to close.
async fn connection(
    tcp: TcpStream,
    app: Router,
    limits: Limits,
    slot: Arc<Slot>,
    connections: Arc<Connections>,
    id: u64,
) {
    let io =
        TokioIo::new(Tracked { inner: tcp, slot: slot.clone(), connections: connections.clone() });
    let service = {
        let (slot, connections) = (slot.clone(), connections.clone());
        hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            slot.busy.store(true, Ordering::Relaxed);
            let answer =
                tower_service::Service::call(&mut app.clone(), request.map(axum::body::Body::new));
            let (slot, connections) = (slot.clone(), connections.clone());
            async move {
                let response = answer.await;
                slot.free_since.store(connections.now(), Ordering::Relaxed);
                slot.busy.store(false, Ordering::Relaxed);
                Ok::<_, Infallible>(response.unwrap_or_else(|never| match never {}))
            }
        })
    };
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout);
    let conn = builder.serve_connection(io, service);
    let mut conn = std::pin::pin!(conn);
    let closed = slot.close.notified();
    let mut closed = std::pin::pin!(closed);
    std::future::poll_fn(|cx| {
        if conn.as_mut().poll(cx).is_ready() || closed.as_mut().poll(cx).is_ready() {
            return Poll::Ready(());
        }
        Poll::Pending
    })
    .await;
    connections.open.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
}

/// A TCP stream that records in its slot when it last moved a byte.
struct Tracked {
    inner: TcpStream,
    slot: Arc<Slot>,
    connections: Arc<Connections>,
}

impl Tracked {
    fn moved<T>(&self, poll: &Poll<io::Result<T>>) {
        if let Poll::Ready(Ok(_)) = poll {
            self.slot.active.store(self.connections.now(), Ordering::Relaxed);
        }
    }
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        self.moved(&poll);
        poll
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.moved(&poll);
        poll
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.moved(&poll);
        poll
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}
