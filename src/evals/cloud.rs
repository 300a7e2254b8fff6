//! Lichess cloud evaluations as a source (`kind = "lichess-cloud-eval"`): the tree's
//! positions asked of a server that speaks `GET /api/cloud-eval?fen=…&multiPv=N`
//! (lichess.org, or `okb serve`), through the explorer crawler's machinery: one request
//! in flight, the rate limit, a long wait after 429, backoff, the token from an
//! environment variable ([`crate::crawl::client`]), every answer stored by hash with a
//! journal of the requests answered ([`crate::crawl::archive`], under
//! `sources/cloud-eval/`), so a killed make asks nothing twice.
//!
//! An answer is `{"fen","knodes","depth","pvs":[{"moves","cp"|"mate"}]}` (scores from
//! White's point of view) or a 404, which is an answer too ("no evaluation"), stored as
//! an empty body. The answers a make used are listed in a manifest (request → answer
//! hash, sorted) whose BLAKE3 is the source's pin: with `blake3` set, exactly those
//! answers are used and nothing is asked; without it, the journal's answers are replayed
//! and the rest asked (`--offline`: not asked, and said).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::dump::{Eval, Pv, Score};
use super::scan::Selection;
use crate::crawl::CrawlError;
use crate::crawl::Politeness;
use crate::crawl::archive::{Archive, Journal};
use crate::crawl::client::Client;
use crate::crawl::params::form_urlencoded;

/// A cloud-eval source as pipeline.toml describes it.
#[derive(Clone, Debug)]
pub struct CloudSource {
    /// The source's name.
    pub name: String,
    /// The server (`https://lichess.org`).
    pub server: String,
    /// The environment variable holding the token.
    pub token_env: Option<String>,
    /// Politeness towards the server.
    pub politeness: Politeness,
    /// Lines asked for (`multiPv`).
    pub multipv: u32,
    /// The pinned manifest, if any.
    pub pin: Option<String>,
}

/// What a source gave for a list of positions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CloudRun {
    /// The evaluations found, keyed by position identity.
    pub selection: Selection,
    /// The manifest's BLAKE3 (the pin of these answers).
    pub manifest: String,
    /// Requests sent to the server in this run.
    pub asked: u64,
    /// Answers replayed from the journal or the pinned manifest.
    pub replayed: u64,
    /// Positions the server has no evaluation of (404).
    pub unknown: u64,
    /// Positions not asked: offline without an answer, or outside the pinned manifest.
    pub not_asked: u64,
}

/// The manifest: which answer each request got.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Manifest {
    server: String,
    multipv: u32,
    answers: BTreeMap<String, String>,
}

/// An answer; its `fen` (the position asked about) is not needed and not read.
#[derive(Deserialize)]
struct RawAnswer {
    knodes: u64,
    depth: u32,
    pvs: Vec<RawPv>,
}

#[derive(Deserialize)]
struct RawPv {
    moves: String,
    cp: Option<i32>,
    mate: Option<i32>,
}

/// The request asking about `epd` (okb's identity; counters `0 1` are added).
pub fn request(epd: &str, multipv: u32) -> String {
    let fen = format!("{epd} 0 1");
    format!(
        "/api/cloud-eval?{}",
        form_urlencoded(&[("fen", fen.as_str()), ("multiPv", &multipv.to_string())])
    )
}

/// Reads an answer: an empty body is the stored 404 (`None`).
pub fn parse_answer(body: &[u8]) -> Result<Option<Eval>, String> {
    if body.is_empty() {
        return Ok(None);
    }
    let raw: RawAnswer =
        serde_json::from_slice(body).map_err(|e| format!("not cloud-eval JSON: {e}"))?;
    if raw.pvs.is_empty() {
        return Err("not cloud-eval JSON: `pvs` is empty".into());
    }
    let mut pvs = Vec::with_capacity(raw.pvs.len());
    for pv in raw.pvs {
        let score = match (pv.cp, pv.mate) {
            (Some(cp), None) => Score::Cp(cp),
            (None, Some(m)) => Score::Mate(m),
            _ => {
                return Err("not cloud-eval JSON: a PV needs exactly one of `cp` and `mate`".into());
            }
        };
        pvs.push(Pv { score, line: super::dump::capped(&pv.moves) });
    }
    Ok(Some(Eval { depth: raw.depth, knodes: raw.knodes, pvs }))
}

impl CloudSource {
    fn io(&self, what: String) -> impl FnOnce(std::io::Error) -> CrawlError + '_ {
        move |error| CrawlError::Io { source_name: self.name.clone(), what, error }
    }

    /// The evaluations of `positions` (identities, most important first): from the
    /// pinned manifest, the journal, or the server (never when `offline`).
    pub fn fetch(
        &self,
        positions: &[String],
        archive: &Archive,
        offline: bool,
        progress: &dyn Fn(u64, u64),
    ) -> Result<CloudRun, CrawlError> {
        let pinned = match &self.pin {
            Some(pin) => Some(self.pinned_manifest(archive, pin)?),
            None => None,
        };
        let mut journal = Journal::open(archive.journal_path(&self.name, &self.server, false))
            .map_err(self.io("reading the journal".into()))?;
        let mut client: Option<Client> = None;
        let mut run = CloudRun::default();
        let mut manifest =
            Manifest { server: self.server.clone(), multipv: self.multipv, ..Manifest::default() };
        for (i, epd) in positions.iter().enumerate() {
            let request = request(epd, self.multipv);
            let known = match &pinned {
                Some(m) => m.answers.get(&request).cloned(),
                None => journal.get(&request).cloned(),
            };
            let body = match known {
                Some(hash) => {
                    match archive.get(&hash).map_err(self.io(format!("reading answer {hash}")))? {
                        Some(body) => {
                            run.replayed += 1;
                            body
                        }
                        None if pinned.is_some() => {
                            let what = format!(
                                "the pinned answer {hash} to {request} is not in sources/cloud-eval/ nor in a mirror"
                            );
                            return Err(CrawlError::Offline {
                                source_name: self.name.clone(),
                                what,
                                server: self.server.clone(),
                            });
                        }
                        None => self.ask(&mut client, &request, &mut run)?,
                    }
                }
                None if pinned.is_some() || offline => {
                    run.not_asked += 1;
                    continue;
                }
                None => self.ask(&mut client, &request, &mut run)?,
            };
            let hash = archive.put(&body).map_err(self.io("storing an answer".into()))?;
            if pinned.is_none() && journal.get(&request) != Some(&hash) {
                journal.record(&request, &hash).map_err(self.io("writing the journal".into()))?;
            }
            let eval = parse_answer(&body).map_err(|why| CrawlError::Request {
                source_name: self.name.clone(),
                url: format!("{}{request}", self.server),
                reason: why,
            })?;
            match eval {
                Some(eval) => {
                    run.selection.evals.insert(epd.clone(), vec![eval]);
                }
                None => run.unknown += 1,
            }
            manifest.answers.insert(request, hash);
            progress(i as u64 + 1, positions.len() as u64);
        }
        let bytes = serde_json::to_vec_pretty(&manifest).expect("a manifest serializes");
        run.manifest =
            archive.put_manifest(&bytes).map_err(self.io("storing the manifest".into()))?;
        run.selection.lines = manifest.answers.len() as u64;
        Ok(run)
    }

    /// Asks the server about `request`; a 404 is the empty body.
    fn ask(
        &self,
        client: &mut Option<Client>,
        request: &str,
        run: &mut CloudRun,
    ) -> Result<Vec<u8>, CrawlError> {
        if client.is_none() {
            *client = Some(Client::new(
                &self.name,
                &self.server,
                self.token_env.as_deref(),
                self.politeness.clone(),
            )?);
        }
        let client = client.as_mut().expect("made above");
        run.asked += 1;
        let answer = client.get_or_missing(request, true, |body| parse_answer(body).map(|_| ()))?;
        Ok(answer.map(|(body, ())| body).unwrap_or_default())
    }

    fn pinned_manifest(&self, archive: &Archive, pin: &str) -> Result<Manifest, CrawlError> {
        let bytes = archive
            .get_manifest(pin)
            .map_err(self.io(format!("reading manifest {pin}")))?
            .ok_or_else(|| {
                let mirrors = archive
                    .mirrors
                    .iter()
                    .map(|m| m.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ");
                CrawlError::MissingManifest {
                    source_name: self.name.clone(),
                    pin: pin.into(),
                    mirrors: if mirrors.is_empty() { "none given".into() } else { mirrors },
                }
            })?;
        serde_json::from_slice(&bytes).map_err(|e| CrawlError::Settings {
            source_name: self.name.clone(),
            why: format!("manifest {pin}: {e}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_answers() {
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -";
        assert_eq!(
            request(start, 3),
            "/api/cloud-eval?fen=rnbqkbnr%2Fpppppppp%2F8%2F8%2F8%2F8%2FPPPPPPPP%2FRNBQKBNR+w+KQkq+-+0+1&multiPv=3"
        );
        let eval = parse_answer(br#"{"fen":"x","knodes":13683,"depth":22,"pvs":[{"moves":"e2e4 e7e5","cp":18},{"moves":"d2d4","mate":-3}]}"#).unwrap().unwrap();
        assert_eq!((eval.depth, eval.knodes, eval.pvs[1].score), (22, 13683, Score::Mate(-3)));
        assert_eq!(parse_answer(b"").unwrap(), None);
        assert!(parse_answer(br#"{"fen":"x","knodes":1,"depth":2,"pvs":[]}"#).is_err());
        assert!(parse_answer(b"<html>").is_err());
    }
}
