//! The crawl itself: breadth first from the root, one request per position (okb's
//! position identity, so a transposition is asked about once, at the fewest plies that
//! reach it). A position is asked about when a move played in at least `min_games` games
//! leads to it from a position asked about, up to `max_ply`; positions at `max_ply` are
//! asked about but not expanded. Answers the journal already holds are read from the
//! archive, so a killed crawl resumes without asking again and a finished one replays
//! offline.

use std::collections::{HashSet, VecDeque};

use shakmaty::{Chess, Move, Position};

use super::archive::{Archive, Journal};
use super::client::Client;
use super::explorer::{self, Answer};
use super::manifest::{Entry, Manifest};
use super::{CrawlError, CrawlParams};

/// One walk over a server's answers.
pub struct Walk<'a> {
    /// The source's name (for messages).
    pub name: &'a str,
    /// What to crawl.
    pub params: &'a CrawlParams,
    /// Where answers are kept.
    pub archive: &'a Archive,
    /// The requests this server answered before.
    pub journal: &'a mut Journal,
    /// The server; `None`: offline (only the journal's answers).
    pub client: Option<&'a mut Client>,
    /// The server's address (for messages when offline).
    pub server: &'a str,
}

/// What a walk found.
pub struct Walked {
    /// The finished crawl.
    pub manifest: Manifest,
    /// Positions asked about over the network in this walk.
    pub requested: u64,
}

impl Walk<'_> {
    /// Walks the whole crawl, asking the server only for what the journal lacks.
    pub fn run(mut self) -> Result<Walked, CrawlError> {
        let settings = |why: String| CrawlError::Settings { source_name: self.name.into(), why };
        let (root, root_ply) = self.params.check().map_err(settings)?;
        // Each queued position with its request, made once: it says whether the journal
        // answers it (for the progress) and then asks. `to_ask`: queued positions the
        // journal does not answer, the requests left that are known so far (the crawl
        // finds more as it goes), for the bar and its ETA.
        let root_request = self.params.request(&root);
        let mut to_ask = u64::from(!self.journal.contains(&root_request));
        let mut queue = VecDeque::from([(root.clone(), root_ply, root_request)]);
        let mut seen = HashSet::from([crate::position::key(&root)]);
        let mut entries = Vec::new();
        let mut requested = 0;
        let bar = crate::progress::start(1, &format!("explorer requests ({})", self.name));
        while let Some((pos, ply, request)) = queue.pop_front() {
            let (answer, moves, hash, fetched) = self.answer(&pos, &request)?;
            requested += u64::from(fetched);
            // (An answer the journal names but the archive lost is asked again, uncounted.)
            to_ask = to_ask.saturating_sub(u64::from(fetched));
            if ply < self.params.max_ply {
                for (m, played) in moves.into_iter().zip(&answer.moves) {
                    if played.outcomes().games() < self.params.min_games {
                        continue;
                    }
                    let mut child = pos.clone();
                    child.play_unchecked(m);
                    if seen.insert(crate::position::key(&child)) {
                        let request = self.params.request(&child);
                        to_ask += u64::from(!self.journal.contains(&request));
                        queue.push_back((child, ply + 1, request));
                    }
                }
            }
            entries.push(Entry {
                fen: super::params::request_fen(&pos),
                ply,
                request,
                answer: hash,
            });
            bar.set_length(requested + to_ask);
            bar.set(requested);
            bar.set_message(format!("{} positions, {} queued", entries.len(), queue.len()));
        }
        Ok(Walked { manifest: Manifest::new(self.params.clone(), entries), requested })
    }

    /// The answer for `pos`: from the archive when the journal has it, else from the
    /// server (stored, then journalled). Returns whether the server was asked.
    fn answer(
        &mut self,
        pos: &Chess,
        request: &str,
    ) -> Result<(Answer, Vec<Move>, String, bool), CrawlError> {
        let io = |what: String| {
            let name = self.name.to_string();
            move |error| CrawlError::Io { source_name: name, what, error }
        };
        if let Some(hash) = self.journal.get(request).cloned()
            && let Some(body) =
                self.archive.get(&hash).map_err(io(format!("reading answer {hash}")))?
        {
            let (answer, moves) = explorer::parse(&body, pos).map_err(|e| CrawlError::Request {
                source_name: self.name.into(),
                url: format!("{}{request}", self.server),
                reason: format!("the stored answer {hash} is not explorer JSON: {e}"),
            })?;
            return Ok((answer, moves, hash, false));
        }
        let Some(client) = self.client.as_deref_mut() else {
            let what =
                format!("{request} is not answered yet ({} positions are)", self.journal.len());
            return Err(CrawlError::Offline {
                source_name: self.name.into(),
                what,
                server: self.server.into(),
            });
        };
        let (body, (answer, moves)) =
            client.get(request, |body| explorer::parse(body, pos).map_err(|e| e.to_string()))?;
        let hash = self
            .archive
            .put(&body)
            .map_err(io(format!("storing an answer in {}", self.archive.root.display())))?;
        self.journal
            .record(request, &hash)
            .map_err(io(format!("writing {}", self.journal.path().display())))?;
        Ok((answer, moves, hash, true))
    }
}
