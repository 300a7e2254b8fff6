//! A pipeline's crawl source made available to a make.
//!
//! - **Pinned** (`blake3` = the manifest's hash): the manifest and its answers come from
//!   `sources/explorer/` or a mirror; answers still missing are asked for again (unless
//!   offline) and must be the bytes the pin recorded. Nothing is re-crawled.
//! - **Not pinned**: the crawl is walked now, from the journal where it can and over the
//!   network where it must; the manifest is stored, and `okb pin` records its hash.
//! - **Refresh** (`okb crawl --refresh`): walked again from nothing into a journal of its
//!   own, which replaces the source's journal once the walk completes (a killed refresh
//!   resumes where it stopped).

use super::archive::{Archive, Journal};
use super::client::{Client, Counters};
use super::manifest::Manifest;
use super::walk::Walk;
use super::{CrawlError, CrawlParams, Politeness};
use crate::files::Hash;

/// What pipeline.toml says about one crawl source.
#[derive(Clone, Debug)]
pub struct CrawlSource {
    /// The source's name.
    pub name: String,
    /// The server (`https://explorer.lichess.org`).
    pub server: String,
    /// The environment variable holding the token.
    pub token_env: Option<String>,
    /// What to crawl.
    pub params: CrawlParams,
    /// How to treat the server.
    pub politeness: Politeness,
    /// The pin: the manifest's BLAKE3.
    pub pin: Option<Hash>,
}

/// How to make a crawl available.
#[derive(Copy, Clone, Debug, Default)]
pub struct How {
    /// Never ask the server.
    pub offline: bool,
    /// Crawl again from nothing, ignoring the pin and the journal.
    pub refresh: bool,
}

/// A crawl ready to read.
#[derive(Debug)]
pub struct Available {
    /// The manifest's BLAKE3 (the pin it has, or would have).
    pub hash: Hash,
    /// The manifest.
    pub manifest: Manifest,
    /// What the client went through (zero when the server was not asked).
    pub counters: Counters,
}

impl CrawlSource {
    fn io(&self, what: String) -> impl FnOnce(std::io::Error) -> CrawlError + use<> {
        let source_name = self.name.clone();
        move |error| CrawlError::Io { source_name, what, error }
    }

    fn client(&self, how: How) -> Result<Option<Client>, CrawlError> {
        if how.offline {
            return Ok(None);
        }
        Client::new(&self.name, &self.server, self.token_env.as_deref(), self.politeness.clone())
            .map(Some)
    }

    /// Makes the crawl available as `how` says.
    pub fn make_available(&self, archive: &Archive, how: How) -> Result<Available, CrawlError> {
        match (&self.pin, how.refresh) {
            (Some(pin), false) => self.pinned(archive, pin, how),
            _ => self.walked(archive, how),
        }
    }

    /// The pinned manifest, with every answer in the project.
    fn pinned(&self, archive: &Archive, pin: &str, how: How) -> Result<Available, CrawlError> {
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
        let manifest = Manifest::parse(&bytes).map_err(|why| CrawlError::Settings {
            source_name: self.name.clone(),
            why: format!("manifest {pin}: {why}"),
        })?;
        if manifest.params != self.params {
            let why = format!(
                "the pinned crawl was made with other settings ({}); crawl with these (`okb crawl --refresh {}`) and pin that (`okb pin --force {}`)",
                super::params::differences(&manifest.params, &self.params),
                self.name,
                self.name
            );
            return Err(CrawlError::Settings { source_name: self.name.clone(), why });
        }
        let mut missing = Vec::new();
        for entry in &manifest.positions {
            if !archive.has(&entry.answer)
                && archive
                    .get(&entry.answer)
                    .map_err(self.io(format!("reading answer {}", entry.answer)))?
                    .is_none()
            {
                missing.push(entry);
            }
        }
        let mut client = if missing.is_empty() { None } else { self.client(how)? };
        if let (Some(first), None) = (missing.first(), &client) {
            let what = format!(
                "{} of the pinned crawl's {} answers are missing (the first: {})",
                missing.len(),
                manifest.positions.len(),
                first.request
            );
            return Err(CrawlError::Offline {
                source_name: self.name.clone(),
                what,
                server: self.server.clone(),
            });
        }
        if let Some(client) = client.as_mut() {
            for entry in missing {
                let pos =
                    crate::position::parse_fen(&entry.fen).map_err(|e| CrawlError::Settings {
                        source_name: self.name.clone(),
                        why: format!("manifest {pin}: {e}"),
                    })?;
                let (body, _) = client.get(&entry.request, |b| {
                    super::explorer::parse(b, &pos).map_err(|e| e.to_string())
                })?;
                let actual = archive.put(&body).map_err(self.io("storing an answer".into()))?;
                if actual != entry.answer {
                    let url = format!("{}{}", self.server, entry.request);
                    return Err(CrawlError::Changed {
                        source_name: self.name.clone(),
                        url,
                        expected: entry.answer.clone(),
                        actual,
                    });
                }
            }
        }
        let counters = client.map(|c| c.counters).unwrap_or_default();
        Ok(Available { hash: pin.into(), manifest, counters })
    }

    /// The crawl walked now (resuming from the journal).
    fn walked(&self, archive: &Archive, how: How) -> Result<Available, CrawlError> {
        let journal_path = archive.journal_path(&self.name, &self.server, how.refresh);
        if !how.refresh
            && let Some(available) = self.walked_before(archive, &journal_path)
        {
            return Ok(available);
        }
        let mut journal = Journal::open(journal_path.clone())
            .map_err(self.io(format!("reading {}", journal_path.display())))?;
        let mut client = self.client(how)?;
        let walk = Walk {
            name: &self.name,
            params: &self.params,
            archive,
            journal: &mut journal,
            client: client.as_mut(),
            server: &self.server,
        };
        let walked = walk.run()?;
        let bytes = walked.manifest.to_bytes();
        let hash = archive.put_manifest(&bytes).map_err(self.io("storing the manifest".into()))?;
        if how.refresh {
            let main = archive.journal_path(&self.name, &self.server, false);
            std::fs::rename(&journal_path, &main)
                .map_err(self.io(format!("replacing {}", main.display())))?;
        }
        let main = archive.journal_path(&self.name, &self.server, false);
        let _ = self.remember_walk(&main, &hash);
        let counters = client.map(|c| c.counters).unwrap_or_default();
        Ok(Available { hash, manifest: walked.manifest, counters })
    }

    /// The crawl a finished walk found, if the journal has not changed since, the
    /// settings are the same and every answer is still here: a make with nothing to ask
    /// then does not replay thousands of answers.
    fn walked_before(&self, archive: &Archive, journal: &std::path::Path) -> Option<Available> {
        let text = std::fs::read_to_string(walk_note(journal)).ok()?;
        let (stamp, hash) = text.trim().rsplit_once(' ')?;
        if stamp != self.stamp(journal)? {
            return None;
        }
        let manifest = Manifest::parse(&archive.get_manifest(hash).ok()??).ok()?;
        let complete = manifest.params == self.params
            && manifest.positions.iter().all(|e| archive.has(&e.answer));
        complete.then(|| Available {
            hash: hash.to_string(),
            manifest,
            counters: Counters::default(),
        })
    }

    /// Notes that the journal, as it is now, walks to the crawl `hash`.
    fn remember_walk(&self, journal: &std::path::Path, hash: &str) -> Option<()> {
        let stamp = self.stamp(journal)?;
        crate::files::write_atomic(&walk_note(journal), format!("{stamp} {hash}\n").as_bytes()).ok()
    }

    /// The journal's size and modification time, and the settings' hash.
    fn stamp(&self, journal: &std::path::Path) -> Option<String> {
        let meta = std::fs::metadata(journal).ok()?;
        let modified = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos();
        let params = crate::files::hash_bytes(&serde_json::to_vec(&self.params).ok()?);
        Some(format!("{} {modified} {}", meta.len(), &params[..16]))
    }
}

/// Where the note of a journal's last finished walk is kept.
fn walk_note(journal: &std::path::Path) -> std::path::PathBuf {
    journal.with_extension("walked")
}
