//! The crawl's HTTP client, polite by construction: one request in flight (the client is
//! not shared), at most `rate` requests per second (a token bucket holding one token),
//! at least `wait_after_429` seconds after a 429 (or the server's `Retry-After`, if
//! longer), exponential backoff from `backoff` seconds on 5xx answers, network errors,
//! truncated or unreadable bodies, capped at `backoff_cap`, and at most `max_attempts`
//! attempts per request. A 401 or 403 stops at once: waiting does not mend a token.

use std::time::{Duration, Instant};

use super::{CrawlError, Politeness};

/// What went wrong with one attempt.
enum Failure {
    /// Try again: after the server's `Retry-After` if it sent one, after a full
    /// `wait_after_429` at least if it was a 429, else after the backoff.
    Retry { reason: String, server_wait: Option<Duration>, rate_limited: bool },
    /// The token is missing or refused.
    Unauthorized(u16),
    /// Trying again cannot help.
    Fatal(String),
}

/// Counts of what a client went through, for reports and tests.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counters {
    /// Requests answered.
    pub answered: u64,
    /// Attempts that failed and were tried again.
    pub retried: u64,
    /// 429 answers among them.
    pub rate_limited: u64,
    /// Time spent waiting after failures (not the rate limit's spacing).
    pub waited: Duration,
}

/// The host of `server` when a token sent there would cross the network in clear text:
/// plain `http://` to anything but a loopback address (`localhost`, 127.0.0.0/8, ::1).
fn cleartext_host(server: &str) -> Option<String> {
    let url = reqwest::Url::parse(server).ok()?;
    let host = url.host_str()?;
    let ip = host.trim_start_matches('[').trim_end_matches(']').parse::<std::net::IpAddr>();
    let loopback = host.eq_ignore_ascii_case("localhost") || ip.is_ok_and(|ip| ip.is_loopback());
    (url.scheme() == "http" && !loopback).then(|| host.to_string())
}

/// One crawl's connection to one server.
pub struct Client {
    http: reqwest::blocking::Client,
    server: String,
    token: Option<String>,
    token_env: Option<String>,
    source_name: String,
    politeness: Politeness,
    /// When the bucket next holds a token.
    next_slot: Instant,
    /// What happened so far.
    pub counters: Counters,
}

impl Client {
    /// A client for `server` (`https://explorer.lichess.org`), authenticating with the
    /// token in the environment variable `token_env` when it is set.
    pub fn new(
        source_name: &str,
        server: &str,
        token_env: Option<&str>,
        politeness: Politeness,
    ) -> Result<Client, CrawlError> {
        let fail = |why: String| CrawlError::Settings { source_name: source_name.into(), why };
        let politeness = politeness.for_server(server).map_err(fail)?;
        let http = reqwest::blocking::Client::builder()
            .user_agent(concat!(
                "okb/",
                env!("CARGO_PKG_VERSION"),
                " (opening knowledge base compiler)"
            ))
            .connect_timeout(Duration::from_secs_f64(politeness.timeout.min(20.0)))
            .timeout(Duration::from_secs_f64(politeness.timeout))
            .build()
            .map_err(|e| fail(format!("cannot set up HTTP: {e}")))?;
        let token =
            token_env.and_then(|var| std::env::var(var).ok()).filter(|t| !t.trim().is_empty());
        if let (Some(var), Some(_)) = (token_env, &token)
            && let Some(host) = cleartext_host(server)
        {
            return Err(fail(format!(
                "refusing to send the token in ${var} over plain http to {host} ({server}): anyone on the way could read it; use https (plain http is for loopback addresses only)"
            )));
        }
        Ok(Client {
            http,
            server: server.trim_end_matches('/').to_string(),
            token,
            token_env: token_env.map(str::to_string),
            source_name: source_name.into(),
            politeness,
            next_slot: Instant::now(),
            counters: Counters::default(),
        })
    }

    /// GETs `request` (path and query) until the body passes `check`; the error of a body
    /// that never does names the request and what is wrong with it.
    pub fn get<T>(
        &mut self,
        request: &str,
        check: impl Fn(&[u8]) -> Result<T, String>,
    ) -> Result<(Vec<u8>, T), CrawlError> {
        let answer = self.get_or_missing(request, false, check)?;
        Ok(answer.expect("a 404 is an error unless it is an answer"))
    }

    /// [`Client::get`] for an API whose 404 is an answer ("nothing known"), when
    /// `missing_is_answer`: then `None`.
    pub fn get_or_missing<T>(
        &mut self,
        request: &str,
        missing_is_answer: bool,
        check: impl Fn(&[u8]) -> Result<T, String>,
    ) -> Result<Option<(Vec<u8>, T)>, CrawlError> {
        let url = format!("{}{request}", self.server);
        let mut backoff = Duration::from_secs_f64(self.politeness.backoff);
        let cap = Duration::from_secs_f64(self.politeness.backoff_cap);
        for attempt in 1..=self.politeness.max_attempts {
            let failure = match self
                .attempt(&url, missing_is_answer)
                .map(|body| body.map(|body| check(&body).map(|value| (body, value))))
            {
                Ok(None) => {
                    self.counters.answered += 1;
                    return Ok(None);
                }
                Ok(Some(Ok(answer))) => {
                    self.counters.answered += 1;
                    return Ok(Some(answer));
                }
                Ok(Some(Err(why))) => Failure::Retry {
                    reason: format!("the answer is not the API's JSON: {why}"),
                    server_wait: None,
                    rate_limited: false,
                },
                Err(failure) => failure,
            };
            let (reason, wait) = match failure {
                Failure::Unauthorized(status) => return Err(self.unauthorized(url, status)),
                Failure::Fatal(reason) => return Err(self.request_error(url, reason)),
                Failure::Retry { reason, server_wait, rate_limited: true } => (
                    reason,
                    server_wait
                        .unwrap_or_default()
                        .max(Duration::from_secs_f64(self.politeness.wait_after_429)),
                ),
                Failure::Retry { reason, server_wait: Some(wait), .. } => (reason, wait.min(cap)),
                Failure::Retry { reason, server_wait: None, .. } => (reason, backoff),
            };
            if attempt == self.politeness.max_attempts {
                return Err(
                    self.request_error(url, format!("{reason} (gave up after {attempt} attempts)"))
                );
            }
            self.wait(&url, &reason, wait, attempt);
            backoff = (backoff * 2).min(cap);
        }
        unreachable!("the last attempt returns")
    }

    /// One GET, spaced by the rate limit; the body read whole (`None`: a 404 that is an
    /// answer).
    fn attempt(&mut self, url: &str, missing_is_answer: bool) -> Result<Option<Vec<u8>>, Failure> {
        self.take_token();
        let mut request = self.http.get(url).header(reqwest::header::ACCEPT, "application/json");
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        let response = request.send().map_err(|e| self.network(e))?;
        let status = response.status().as_u16();
        let retry_after = retry_after(&response);
        match status {
            200 => response.bytes().map(|b| Some(b.to_vec())).map_err(|e| self.network(e)),
            404 if missing_is_answer => Ok(None),
            401 | 403 => Err(Failure::Unauthorized(status)),
            429 => {
                self.counters.rate_limited += 1;
                Err(Failure::Retry {
                    reason: "HTTP 429 Too Many Requests".into(),
                    server_wait: retry_after,
                    rate_limited: true,
                })
            }
            500..=599 => Err(Failure::Retry {
                reason: format!("HTTP {status}"),
                server_wait: retry_after,
                rate_limited: false,
            }),
            _ => Err(Failure::Fatal(format!(
                "HTTP {status}: {}",
                excerpt(&response.text().unwrap_or_default())
            ))),
        }
    }

    fn network(&self, e: reqwest::Error) -> Failure {
        Failure::Retry {
            reason: crate::diagnostics::error_chain(&e),
            server_wait: None,
            rate_limited: false,
        }
    }

    /// Sleeps until the bucket holds a token, and takes it.
    fn take_token(&mut self) {
        if self.politeness.rate <= 0.0 {
            return;
        }
        let now = Instant::now();
        if self.next_slot > now {
            std::thread::sleep(self.next_slot - now);
        }
        self.next_slot =
            self.next_slot.max(now) + Duration::from_secs_f64(1.0 / self.politeness.rate);
    }

    fn wait(&mut self, url: &str, reason: &str, wait: Duration, attempt: u32) {
        self.counters.retried += 1;
        self.counters.waited += wait;
        crate::progress::println(&format!(
            "{:>12} {:.1} s before attempt {} of {}: {url}: {reason}",
            "Waiting",
            wait.as_secs_f64(),
            attempt + 1,
            self.politeness.max_attempts
        ));
        std::thread::sleep(wait);
        // The wait counts as the spacing too.
        self.next_slot = Instant::now();
    }

    fn unauthorized(&self, url: String, status: u16) -> CrawlError {
        let token = match (&self.token_env, &self.token) {
            (Some(var), Some(_)) => format!(" (the token in ${var} was refused)"),
            (Some(var), None) => format!(" (${var} is not set)"),
            (None, _) => " (set `token_env` in the source to the variable holding one)".into(),
        };
        CrawlError::Unauthorized { source_name: self.source_name.clone(), url, status, token }
    }

    fn request_error(&self, url: String, reason: String) -> CrawlError {
        CrawlError::Request { source_name: self.source_name.clone(), url, reason }
    }
}

/// The `Retry-After` header in seconds (the HTTP-date form is rare from APIs and read as
/// absent).
fn retry_after(response: &reqwest::blocking::Response) -> Option<Duration> {
    let value = response.headers().get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

/// The start of a body, on one line, for an error message.
fn excerpt(body: &str) -> String {
    let line = body.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > 200 {
        format!("{}…", line.chars().take(200).collect::<String>())
    } else {
        line
    }
}
