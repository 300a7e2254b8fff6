//! A proxy in front of a real server that misbehaves on request: statuses (429 with or
//! without `Retry-After`, 5xx, 401), truncated and invalid bodies, slow answers and
//! dropped connections, one fault per request in the order scripted.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub enum Fault {
    /// Forward to the real server.
    Pass,
    /// Answer this status, with a `Retry-After` when given.
    Status(u16, Option<u32>),
    /// Promise a long body, send a little, close.
    Truncated,
    /// Say nothing for this long (longer than the client's timeout).
    Slow(Duration),
    /// 200 with a body that is not JSON.
    Invalid,
    /// Close the connection without answering.
    Drop,
}

/// A proxy in front of `upstream` that plays `script` (one fault per request, in order;
/// `Pass` when it runs out), refuses every request after `allow` requests with 401, and
/// logs (time, path, status).
pub struct Misbehaving {
    pub base: String,
    pub log: Arc<Mutex<Vec<(Instant, String, u16)>>>,
    pub allow: Arc<Mutex<Option<usize>>>,
}

impl Misbehaving {
    pub fn start(upstream: &str, script: Vec<Fault>, allow: Option<usize>) -> Misbehaving {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let upstream = upstream.trim_start_matches("http://").to_string();
        let log: Arc<Mutex<Vec<(Instant, String, u16)>>> = Arc::default();
        let allow = Arc::new(Mutex::new(allow));
        let script = Arc::new(Mutex::new(std::collections::VecDeque::from(script)));
        let (l, a) = (log.clone(), allow.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (upstream, log, allow, script) =
                    (upstream.clone(), l.clone(), a.clone(), script.clone());
                std::thread::spawn(move || serve_one(stream, &upstream, &log, &allow, &script));
            }
        });
        Misbehaving { base, log, allow }
    }

    pub fn paths(&self) -> Vec<String> {
        self.log.lock().unwrap().iter().map(|(_, p, _)| p.clone()).collect()
    }
}

fn serve_one(
    mut stream: TcpStream,
    upstream: &str,
    log: &Mutex<Vec<(Instant, String, u16)>>,
    allow: &Mutex<Option<usize>>,
    script: &Mutex<std::collections::VecDeque<Fault>>,
) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
        head.push(byte[0]);
    }
    if !head.ends_with(b"\r\n\r\n") {
        return; // the client went away mid-request (killed)
    }
    let text = String::from_utf8_lossy(&head).to_string();
    let path = text.split_whitespace().nth(1).unwrap_or("/").to_string();
    let seen = log.lock().unwrap().len();
    let refused = allow.lock().unwrap().is_some_and(|n| seen >= n);
    let fault = if refused {
        Fault::Status(401, None)
    } else {
        script.lock().unwrap().pop_front().unwrap_or(Fault::Pass)
    };
    let status = match &fault {
        Fault::Pass | Fault::Truncated | Fault::Slow(_) | Fault::Invalid => 200,
        Fault::Status(code, _) => *code,
        Fault::Drop => 0,
    };
    log.lock().unwrap().push((Instant::now(), path.clone(), status));
    let reply = match fault {
        Fault::Pass => forward(upstream, &path),
        Fault::Status(code, retry) => {
            let retry = retry.map(|s| format!("Retry-After: {s}\r\n")).unwrap_or_default();
            format!("HTTP/1.1 {code} Nope\r\n{retry}Content-Length: 2\r\nConnection: close\r\n\r\n{{}}").into_bytes()
        }
        Fault::Truncated => b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5000\r\nConnection: close\r\n\r\n{\"white\":1".to_vec(),
        Fault::Slow(d) => {
            std::thread::sleep(d);
            forward(upstream, &path)
        }
        Fault::Invalid => b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\nConnection: close\r\n\r\n<html>ok</ht>".to_vec(),
        Fault::Drop => return,
    };
    let _ = stream.write_all(&reply);
}

/// The real server's whole answer to `GET path`.
pub fn forward(upstream: &str, path: &str) -> Vec<u8> {
    let mut conn = TcpStream::connect(upstream).unwrap();
    write!(conn, "GET {path} HTTP/1.1\r\nHost: {upstream}\r\nAccept-Encoding: identity\r\nConnection: close\r\n\r\n").unwrap();
    let mut out = Vec::new();
    conn.read_to_end(&mut out).unwrap();
    // One request per connection: say so, or the client would reuse it.
    let at = out.windows(2).position(|w| w == b"\r\n").unwrap() + 2;
    out.splice(at..at, b"Connection: close\r\n".iter().copied());
    out
}
