//! What a hostile or broken client may hold of `okb serve`: every connection has a
//! header-read timeout (a request's headers must arrive within it: slowloris), the same
//! time again for its body (a body sent a byte at a time), an idle timeout (no byte moved
//! either way; an idle kept-alive connection waits for this one, not the header timeout),
//! at most `max_connections` are open at once, and at most `send_bytes` of answers are
//! held for clients still reading them.
//!
//! At the limit a new connection is not refused and not queued: it takes the place of
//! the open connection that has waited longest without a request being answered (a
//! client still sending its headers or body, or an idle kept-alive one). Connections that
//! only hold a socket therefore cannot lock out clients that ask something, and the
//! server never runs out of file descriptors (which made it stop answering anyone): the
//! default limit is derived from the descriptor limit (`ulimit -n`). Past `send_bytes`,
//! the connections whose answers have waited longest on their reader are closed, so slow
//! readers of large answers hold a bounded amount of memory.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use bytes::Bytes;
use hyper::body::{Body as _, Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

/// The limits of `okb serve` (`--header-timeout`, `--idle-timeout`, `--max-connections`,
/// `--send-buffer-mb`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// Time a client has to send a request's headers, and again its body.
    pub header_timeout: Duration,
    /// Time a connection may move no byte either way before it is closed.
    pub idle_timeout: Duration,
    /// Connections open at once.
    pub max_connections: usize,
    /// Bytes of answers held for clients still reading them.
    pub send_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: default_max_connections(),
            send_bytes: DEFAULT_SEND_MB << 20,
        }
    }
}

/// MiB of answers held for slow readers by default (`--send-buffer-mb`).
pub const DEFAULT_SEND_MB: usize = 256;

/// The most connections open at once by default, whatever the descriptor limit.
const MAX_CONNECTIONS: usize = 512;

/// Descriptors kept for the rest of the server: the listener, stdio, the store file and
/// its readers' handles, the watcher.
const RESERVED_DESCRIPTORS: usize = 64;

/// The default `--max-connections`: 512, or fewer when the descriptor limit (`ulimit -n`)
/// would run out first (then the limit would never be reached, and clients that hold
/// sockets would starve the server of descriptors instead).
pub fn default_max_connections() -> usize {
    match descriptor_limit() {
        Some(fds) => {
            fds.saturating_sub(RESERVED_DESCRIPTORS).max(fds / 2).clamp(1, MAX_CONNECTIONS)
        }
        None => MAX_CONNECTIONS,
    }
}

/// The soft limit on open descriptors of this process, when it has one.
fn descriptor_limit() -> Option<usize> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit only writes the struct it is given.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    (ok && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur as usize)
}

/// A connection's phases: receiving a request's headers (since it was accepted, or since
/// the first byte after an answer), receiving its body, having it answered, and between
/// requests (kept alive, or its answer still being written).
const HEAD: u8 = 0;
const BODY: u8 = 1;
const ANSWERING: u8 = 2;
const IDLE: u8 = 3;

/// One open connection, as the accept loop and the reaper see it.
struct Slot {
    /// [`HEAD`], [`BODY`], [`ANSWERING`] or [`IDLE`].
    phase: AtomicU8,
    /// When the phase began, in ms.
    since: AtomicU64,
    /// When it last became free of requests (accepted, or an answer finished), in ms.
    free_since: AtomicU64,
    /// When it last moved a byte, in ms.
    active: AtomicU64,
    /// Bytes of answers held for it, and since when (ms).
    sending: AtomicUsize,
    sending_since: AtomicU64,
    /// Told to close (its held answers are about to be released).
    closing: AtomicBool,
    close: Notify,
}

impl Slot {
    fn enter(&self, phase: u8, now: u64) {
        self.since.store(now, Ordering::Relaxed);
        self.phase.store(phase, Ordering::Relaxed);
    }

    fn tell_to_close(&self) {
        self.closing.store(true, Ordering::Relaxed);
        self.close.notify_one();
    }
}

/// The open connections, by number, and the bytes of answers they hold.
struct Connections {
    /// The coarse clock's reading at start ([`coarse_ms`]).
    start: u64,
    limits: Limits,
    open: Mutex<HashMap<u64, Arc<Slot>>>,
    sending: AtomicUsize,
}

impl Connections {
    /// Milliseconds since the server started.
    fn now(&self) -> u64 {
        coarse_ms().saturating_sub(self.start)
    }

    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Slot>>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a new connection, closing the longest-waiting free one at the limit.
    /// `None` when every open connection is having a request answered.
    fn admit(&self, id: u64) -> Option<Arc<Slot>> {
        let mut open = self.open();
        if open.len() >= self.limits.max_connections.max(1) {
            let victim = open
                .iter()
                .filter(|(_, s)| s.phase.load(Ordering::Relaxed) != ANSWERING)
                .min_by_key(|(id, s)| (s.free_since.load(Ordering::Relaxed), **id))
                .map(|(id, _)| *id)?;
            if let Some(slot) = open.remove(&victim) {
                slot.tell_to_close();
            }
        }
        let now = self.now();
        let slot = Arc::new(Slot {
            phase: AtomicU8::new(HEAD),
            since: AtomicU64::new(now),
            free_since: AtomicU64::new(now),
            active: AtomicU64::new(now),
            sending: AtomicUsize::new(0),
            sending_since: AtomicU64::new(0),
            closing: AtomicBool::new(false),
            close: Notify::new(),
        });
        open.insert(id, slot.clone());
        Some(slot)
    }

    /// Closes the connections idle for longer than the idle timeout, and those whose
    /// request's headers or body have taken longer than the header timeout.
    fn reap(&self) {
        let now = self.now();
        let (idle, head) = (self.limits.idle_timeout, self.limits.header_timeout);
        let over =
            |since: u64, limit: Duration| now.saturating_sub(since) > limit.as_millis() as u64;
        self.open().retain(|_, s| {
            let receiving = matches!(s.phase.load(Ordering::Relaxed), HEAD | BODY);
            let expired = over(s.active.load(Ordering::Relaxed), idle)
                || (receiving && over(s.since.load(Ordering::Relaxed), head));
            if expired {
                s.tell_to_close();
            }
            !expired
        });
    }

    /// Counts `bytes` more held for `slot` (connection `id`); past the budget, closes the
    /// other connections whose answers have waited longest on their reader until the rest fits.
    fn hold(&self, id: u64, slot: &Slot, bytes: usize) {
        if slot.sending.fetch_add(bytes, Ordering::Relaxed) == 0 {
            slot.sending_since.store(self.now(), Ordering::Relaxed);
        }
        let total = self.sending.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if total <= self.limits.send_bytes {
            return;
        }
        let open = self.open();
        let mut holders: Vec<_> = open
            .iter()
            .filter(|(other, s)| {
                **other != id
                    && !s.closing.load(Ordering::Relaxed)
                    && s.sending.load(Ordering::Relaxed) > 0
            })
            .map(|(_, s)| s)
            .collect();
        holders.sort_by_key(|s| s.sending_since.load(Ordering::Relaxed));
        // Connections already told to close release theirs shortly.
        let closing: usize = open
            .values()
            .filter(|s| s.closing.load(Ordering::Relaxed))
            .map(|s| s.sending.load(Ordering::Relaxed))
            .sum();
        let mut left = total.saturating_sub(closing);
        for holder in holders {
            if left <= self.limits.send_bytes {
                break;
            }
            left = left.saturating_sub(holder.sending.load(Ordering::Relaxed));
            holder.tell_to_close();
        }
    }

    /// Counts `bytes` held for `slot` released.
    fn release(&self, slot: &Slot, bytes: usize) {
        slot.sending.fetch_sub(bytes, Ordering::Relaxed);
        self.sending.fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// Milliseconds on the coarse monotonic clock (the kernel's last tick, a few ms apart):
/// connections read the time five times a request, limits count in seconds, and the
/// precise clock's reads were 1.3 % of the server's time on cached answers.
#[cfg(target_os = "linux")]
fn coarse_ms() -> u64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a valid timespec for the call to fill; the clock exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut now) };
    now.tv_sec as u64 * 1000 + now.tv_nsec as u64 / 1_000_000
}

/// Milliseconds on the monotonic clock, from the first reading.
#[cfg(not(target_os = "linux"))]
fn coarse_ms() -> u64 {
    static FIRST: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    FIRST.get_or_init(std::time::Instant::now).elapsed().as_millis() as u64
}

/// Serves `app` on `listener` within `limits` until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) {
    let connections = Arc::new(Connections {
        start: coarse_ms(),
        limits,
        open: Mutex::new(HashMap::new()),
        sending: AtomicUsize::new(0),
    });
    let reaper = tokio::spawn(reap_every(connections.clone()));
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
        let Some(slot) = connections.admit(next_id) else {
            continue;
        };
        // Answers are small and written whole: send them now rather than wait for an ACK.
        let _ = tcp.set_nodelay(true);
        tokio::spawn(connection(tcp, app.clone(), slot, connections.clone(), next_id));
    }
    reaper.abort();
}

async fn reap_every(connections: Arc<Connections>) {
    let limits = connections.limits;
    let shortest = limits.idle_timeout.min(limits.header_timeout);
    let period = (shortest / 4).clamp(Duration::from_millis(50), Duration::from_secs(1));
    loop {
        tokio::time::sleep(period).await;
        connections.reap();
    }
}

/// Answers one connection's requests until it ends or its slot is told to close.
async fn connection(
    tcp: TcpStream,
    app: Router,
    slot: Arc<Slot>,
    connections: Arc<Connections>,
    id: u64,
) {
    let io =
        TokioIo::new(Tracked { inner: tcp, slot: slot.clone(), connections: connections.clone() });
    let service = {
        let (slot, connections) = (slot.clone(), connections.clone());
        hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let (slot, connections) = (slot.clone(), connections.clone());
            let request = request.map(|inner| {
                axum::body::Body::new(Receiving::new(inner, slot.clone(), connections.clone()))
            });
            let answer = tower_service::Service::call(&mut app.clone(), request);
            async move {
                let response = answer.await.unwrap_or_else(|never| match never {});
                let response = Sending::wrap(response, id, slot.clone(), connections.clone()).await;
                let now = connections.now();
                slot.free_since.store(now, Ordering::Relaxed);
                slot.enter(IDLE, now);
                Ok::<_, Infallible>(response)
            }
        })
    };
    // The header timeout is the reaper's: hyper's would also cut idle kept-alive
    // connections, which wait for the next request's headers.
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(None).max_buf_size(BUFFER);
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
    connections.open().remove(&id);
}

/// What hyper buffers of a connection at most (its default is ~400 KiB): with the held
/// answers, this bounds the memory a slow reader takes. Also the longest request head.
const BUFFER: usize = 128 * 1024;

/// A request's body: its connection is [`BODY`] until it has been read (or dropped), then
/// [`ANSWERING`].
struct Receiving {
    inner: Incoming,
    slot: Arc<Slot>,
    connections: Arc<Connections>,
}

impl Receiving {
    fn new(inner: Incoming, slot: Arc<Slot>, connections: Arc<Connections>) -> Receiving {
        let phase = if inner.is_end_stream() { ANSWERING } else { BODY };
        slot.enter(phase, connections.now());
        Receiving { inner, slot, connections }
    }

    fn received(&self) {
        if self.slot.phase.load(Ordering::Relaxed) == BODY {
            self.slot.enter(ANSWERING, self.connections.now());
        }
    }
}

impl hyper::body::Body for Receiving {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.inner).poll_frame(cx);
        if matches!(poll, Poll::Ready(None | Some(Err(_)))) || this.inner.is_end_stream() {
            this.received();
        }
        poll
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for Receiving {
    fn drop(&mut self) {
        self.received();
    }
}

/// Answers up to this size are written as they are; larger ones are counted against
/// [`Limits::send_bytes`] and handed to hyper in copies of this size.
const CHUNK: usize = 16 * 1024;

/// A large answer being written: counted as held until its last chunk is handed over.
struct Sending {
    rest: Bytes,
    held: usize,
    slot: Arc<Slot>,
    connections: Arc<Connections>,
}

impl Sending {
    /// `response` with a large, whole body counted against the budget of held answers.
    async fn wrap(
        response: axum::response::Response,
        id: u64,
        slot: Arc<Slot>,
        connections: Arc<Connections>,
    ) -> axum::response::Response {
        let large = response.body().size_hint().exact().is_some_and(|n| n > CHUNK as u64);
        if !large {
            return response;
        }
        let (parts, body) = response.into_parts();
        // A body of known size is already whole in memory: taking it costs no copy.
        let rest = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default();
        connections.hold(id, &slot, rest.len());
        let sending = Sending { held: rest.len(), rest, slot, connections };
        axum::response::Response::from_parts(parts, axum::body::Body::new(sending))
    }

    fn release(&mut self) {
        self.rest = Bytes::new();
        self.connections.release(&self.slot, std::mem::take(&mut self.held));
    }
}

impl hyper::body::Body for Sending {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        if this.rest.is_empty() {
            this.release();
            return Poll::Ready(None);
        }
        let at = CHUNK.min(this.rest.len());
        // A copy: hyper keeps chunks until the socket takes them, and a slice would keep
        // the whole answer alive with them.
        let chunk = Bytes::copy_from_slice(&this.rest.split_to(at));
        if this.rest.is_empty() {
            this.release();
        }
        Poll::Ready(Some(Ok(Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.rest.len() as u64)
    }
}

impl Drop for Sending {
    fn drop(&mut self) {
        self.release();
    }
}

/// A TCP stream that records in its slot when it last moved a byte, and when the first
/// byte of a request after an answer came.
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
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        self.moved(&poll);
        if buf.filled().len() > before && self.slot.phase.load(Ordering::Relaxed) == IDLE {
            self.slot.enter(HEAD, self.connections.now());
        }
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
