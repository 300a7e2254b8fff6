//! Compressing answers when a client asks (`Accept-Encoding: br` or `gzip`). Done in the
//! handler on bytes already in hand, rather than by a middleware layer around every
//! response, so requests that do not ask (most API clients, and the benchmark) pay
//! nothing: a layer cost the hot `GET /node/fen` path 5 % of its throughput.

use std::io::Write;

use axum::http::{HeaderMap, header};

/// Answers shorter than this are sent as they are: compression would not pay.
const MIN_BYTES: usize = 512;

/// An answer's encoding.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// As is.
    Identity,
    /// gzip (flate2, level 5).
    Gzip,
    /// Brotli (quality 5).
    Brotli,
}

impl Encoding {
    /// The best encoding `Accept-Encoding` allows: Brotli, then gzip; `q=0` refuses one.
    pub fn accepted(headers: &HeaderMap) -> Encoding {
        let mut gzip = false;
        let mut brotli = false;
        for value in headers.get_all(header::ACCEPT_ENCODING).iter().filter_map(|v| v.to_str().ok())
        {
            for item in value.split(',') {
                let mut parts = item.split(';');
                let name = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
                let refused = parts.any(|p| {
                    p.trim().strip_prefix("q=").and_then(|q| q.trim().parse::<f32>().ok())
                        == Some(0.0)
                });
                match name.as_str() {
                    "br" => brotli = !refused,
                    "gzip" | "x-gzip" => gzip = !refused,
                    _ => {}
                }
            }
        }
        if brotli {
            Encoding::Brotli
        } else if gzip {
            Encoding::Gzip
        } else {
            Encoding::Identity
        }
    }
}

/// `bytes` in `encoding`, with the `Content-Encoding` name; `None` to send them as they are.
pub fn encode(encoding: Encoding, bytes: &[u8]) -> Option<(&'static str, Vec<u8>)> {
    if bytes.len() < MIN_BYTES {
        return None;
    }
    match encoding {
        Encoding::Identity => None,
        Encoding::Gzip => {
            let mut out = flate2::write::GzEncoder::new(
                Vec::with_capacity(bytes.len() / 4),
                flate2::Compression::new(5),
            );
            out.write_all(bytes).ok()?;
            Some(("gzip", out.finish().ok()?))
        }
        Encoding::Brotli => {
            let mut out = Vec::with_capacity(bytes.len() / 4);
            let params = brotli::enc::BrotliEncoderParams { quality: 5, ..Default::default() };
            brotli::BrotliCompress(&mut &bytes[..], &mut out, &params).ok()?;
            Some(("br", out))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepting(value: &str) -> Encoding {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT_ENCODING, value.parse().unwrap());
        Encoding::accepted(&headers)
    }

    #[test]
    fn brotli_before_gzip_and_q0_refuses() {
        assert_eq!(accepting("gzip, deflate, br"), Encoding::Brotli);
        assert_eq!(accepting("gzip"), Encoding::Gzip);
        assert_eq!(accepting("br;q=0, gzip;q=0.5"), Encoding::Gzip);
        assert_eq!(accepting("identity"), Encoding::Identity);
        assert_eq!(Encoding::accepted(&HeaderMap::new()), Encoding::Identity);
    }

    #[test]
    fn small_answers_are_sent_as_they_are() {
        assert!(encode(Encoding::Gzip, b"{}").is_none());
        let big = vec![b'a'; 4096];
        let (name, gz) = encode(Encoding::Gzip, &big).unwrap();
        assert_eq!(name, "gzip");
        assert!(gz.len() < 100);
    }
}
