//! The incremental build engine: memoized steps over content-hashed inputs.
//!
//! A step is identified by an id (`parse:lichess-a`, `eco`, `export:csv`) and keyed by the
//! BLAKE3 of its id, code version, parameters and the hashes of its inputs. A step whose
//! key has a record in the [`cache`] is *Fresh* and does not run; its output is loaded only
//! if a dependent has to run. Dependents are keyed by their inputs' *output* hashes, so a
//! step that reruns but produces identical bytes stops the rebuild there (early cutoff).
//!
//! Within one run each step is evaluated once (the orchestration in [`crate::make`] calls
//! each step once and passes its [`Output`] on); across runs the cache does the memoizing.

pub mod cache;
pub mod filestate;
pub mod lock;
pub mod temp;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Serialize, de::DeserializeOwned};

use cache::{Cache, Hash, KeyParts, StepRecord, hash_bytes};
use filestate::FileStates;

/// How a step ended in this run.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Reused from the cache.
    Fresh,
    /// Computed.
    Built,
    /// Reused from the cache, and its output files were written back from the cache.
    Restored,
    /// Would run (dry run: `okb status`).
    Stale,
}

/// What happened to one step.
#[derive(Clone, Debug)]
pub struct StepReport {
    /// Step id.
    pub id: String,
    /// Outcome.
    pub status: Status,
    /// What the step produced.
    pub summary: String,
    /// Warnings it reported.
    pub warnings: usize,
    /// Time spent.
    pub elapsed: Duration,
    /// Why it ran (or would run).
    pub reason: Option<String>,
}

/// The description of a step: everything its key is made of.
#[derive(Clone, Debug)]
pub struct Step {
    /// Unique id within the pipeline.
    pub id: String,
    /// Bumped when the step's code changes what it produces.
    pub version: u32,
    /// Hash of the step's parameters.
    pub params: Hash,
    /// Named hashes of its inputs (source bytes or other steps' outputs).
    pub inputs: Vec<(String, Hash)>,
}

impl Step {
    /// A step with parameters given as any serializable value.
    pub fn new(id: impl Into<String>, version: u32, params: &impl Serialize) -> Step {
        let bytes = serde_json::to_vec(params).expect("parameters serialize");
        Step { id: id.into(), version, params: hash_bytes(&bytes), inputs: Vec::new() }
    }

    /// Adds an input.
    pub fn input(mut self, name: impl Into<String>, hash: &str) -> Step {
        self.inputs.push((name.into(), hash.to_string()));
        self
    }

    fn parts(&self) -> KeyParts {
        KeyParts { version: self.version, params: self.params.clone(), inputs: self.inputs.clone() }
    }

    fn key(&self) -> Hash {
        let mut h = blake3::Hasher::new();
        h.update(self.id.as_bytes());
        h.update(&[0]);
        h.update(&self.version.to_le_bytes());
        h.update(self.params.as_bytes());
        for (name, hash) in &self.inputs {
            h.update(name.as_bytes());
            h.update(&[0]);
            h.update(hash.as_bytes());
        }
        h.finalize().to_hex().to_string()
    }
}

/// The output of a step: its hash, and the way to load it when a dependent runs.
#[derive(Clone, Debug)]
pub struct Output {
    /// Hash of the output bytes (unknown in a dry run for a stale step).
    pub hash: Hash,
    /// The value itself when the step ran in this process: dependents use it instead of
    /// decoding the cache object again (the in-run half of memoization).
    memo: Option<Memo>,
}

type Memo = std::sync::Arc<dyn std::any::Any + Send + Sync>;

impl Output {
    fn known(hash: Hash) -> Output {
        Output { hash, memo: None }
    }
}

impl Drop for Output {
    /// Freeing a large step value (a tree, a skeleton, game counts) is millions of small
    /// deallocations; a background thread does it so the build can finish meanwhile.
    fn drop(&mut self) {
        if let Some(memo) = self.memo.take()
            && std::sync::Arc::strong_count(&memo) == 1 {
                let _ = background_dropper().lock().expect("dropper poisoned").send(memo);
            }
    }
}

fn background_dropper() -> &'static Mutex<std::sync::mpsc::Sender<Memo>> {
    static DROPPER: std::sync::OnceLock<Mutex<std::sync::mpsc::Sender<Memo>>> = std::sync::OnceLock::new();
    DROPPER.get_or_init(|| {
        let (send, receive) = std::sync::mpsc::channel::<Memo>();
        std::thread::spawn(move || receive.into_iter().for_each(drop));
        Mutex::new(send)
    })
}

/// A cache object that failed verification; the step record is removed so that the
/// next attempt recomputes it.
#[derive(Debug, thiserror::Error)]
#[error("cache object {hash} of step {step} is missing or corrupt; it was discarded and will be rebuilt")]
pub struct CorruptCache {
    /// The step.
    pub step: String,
    /// The bad object.
    pub hash: Hash,
}

/// Errors of the build engine itself.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// Reading or writing the cache or an output failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A cache object was corrupt.
    #[error(transparent)]
    Corrupt(#[from] CorruptCache),
    /// A step's own computation failed.
    #[error("{step}: {message}")]
    Step {
        /// The step.
        step: String,
        /// What went wrong.
        message: String,
    },
}

/// A callback that sees each step report as the step finishes.
pub type OnReport = Box<dyn FnMut(&StepReport) + Send>;

/// One build (or dry run) over a project's cache. Independent steps may run on several
/// threads at once: every method takes `&self`.
pub struct Build {
    /// The persistent cache.
    pub cache: Cache,
    /// File hashes by stat.
    pub files: Mutex<FileStates>,
    /// Per-step reports, in the order steps finished.
    pub reports: Mutex<Vec<StepReport>>,
    dry_run: bool,
    on_report: Mutex<OnReport>,
}

const UNKNOWN: &str = "?";

impl Build {
    /// A build over the cache in `cache_dir`; `on_report` sees each step as it finishes.
    pub fn new(cache_dir: PathBuf, dry_run: bool, on_report: OnReport) -> Build {
        let files = Mutex::new(FileStates::load(cache_dir.join("file-states.json")));
        Build { cache: Cache::new(cache_dir), files, reports: Mutex::default(), dry_run, on_report: Mutex::new(on_report) }
    }

    fn finish(&self, report: StepReport) {
        (self.on_report.lock().expect("report callback poisoned"))(&report);
        self.reports.lock().expect("reports poisoned").push(report);
    }

    fn file_matches(&self, path: &Path, hash: &str) -> bool {
        self.files.lock().expect("file states poisoned").matches(path, hash)
    }

    /// The BLAKE3 of an input file, from the stat cache when the file is unchanged.
    pub fn hash_file(&self, path: &Path) -> Result<Hash, BuildError> {
        self.files
            .lock()
            .expect("file states poisoned")
            .hash(path)
            .map_err(|source| BuildError::Io { what: format!("reading {}", path.display()), source })
    }

    fn record_file(&self, path: &Path, hash: &str) {
        self.files.lock().expect("file states poisoned").record(path, hash)
    }

    /// Why `step` must run: what differs from its latest run.
    fn reason(&self, step: &Step, fallback: &str) -> String {
        if step.inputs.iter().any(|(_, h)| h == UNKNOWN) {
            let names: Vec<&str> = step.inputs.iter().filter(|(_, h)| h == UNKNOWN).map(|(n, _)| n.as_str()).collect();
            return format!("input {} will be rebuilt", names.join(", "));
        }
        let Some(last) = self.cache.last_parts(&step.id) else {
            return "never built".into();
        };
        let mut why = Vec::new();
        if last.version != step.version {
            why.push(format!("code version changed ({} → {})", last.version, step.version));
        }
        if last.params != step.params {
            why.push("parameters changed".into());
        }
        for (name, hash) in &step.inputs {
            match last.inputs.iter().find(|(n, _)| n == name) {
                Some((_, old)) if old == hash => {}
                Some(_) => why.push(format!("{name} changed")),
                None => why.push(format!("new input {name}")),
            }
        }
        for (name, _) in &last.inputs {
            if !step.inputs.iter().any(|(n, _)| n == name) {
                why.push(format!("input {name} removed"));
            }
        }
        if why.is_empty() { fallback.to_string() } else { why.join(", ") }
    }

    /// Reports a step that would run (dry run) and gives it an unknown output.
    fn stale(&self, id: String, start: Instant, reason: String) -> Output {
        self.finish(StepReport {
            id,
            status: Status::Stale,
            summary: String::new(),
            warnings: 0,
            elapsed: start.elapsed(),
            reason: Some(reason),
        });
        Output::known(UNKNOWN.into())
    }

    fn io(what: String) -> impl FnOnce(std::io::Error) -> BuildError {
        move |source| BuildError::Io { what, source }
    }

    /// Runs `step` unless it is fresh; `compute` returns the value, a summary and a
    /// warning count.
    pub fn value<T: Serialize + Send + Sync + 'static>(
        &self,
        step: Step,
        compute: impl FnOnce(&Build) -> Result<(T, String, usize), BuildError>,
    ) -> Result<Output, BuildError> {
        self.resumable(step, |b| compute(b).map(|(value, summary, warnings)| (value, summary, warnings, true)))
    }

    /// Like [`Build::value`], for a step that may stop early (a time or work budget):
    /// when `compute` says its value is incomplete, the value still feeds this run's
    /// dependents but the step is not recorded, so the next run runs it again and
    /// continues (the step keeps its own finished work, e.g. in the engine cache).
    pub fn resumable<T: Serialize + Send + Sync + 'static>(
        &self,
        step: Step,
        compute: impl FnOnce(&Build) -> Result<(T, String, usize, bool), BuildError>,
    ) -> Result<Output, BuildError> {
        self.run_value(step, compute, |cache, value| cache.put_value(value))
    }

    /// Like [`Build::value`], for a large value that `encode` turns into its postcard
    /// bytes faster than serde streaming does (on all cores, see
    /// [`cache::encode_seq_in_parallel`]). The bytes must be postcard's: dependents that
    /// run in a later build read them back with [`Build::load`].
    pub fn value_encoded<T: Serialize + Send + Sync + 'static>(
        &self,
        step: Step,
        compute: impl FnOnce(&Build) -> Result<(T, String, usize), BuildError>,
        encode: impl FnOnce(&T) -> Vec<u8>,
    ) -> Result<Output, BuildError> {
        self.run_value(
            step,
            |b| compute(b).map(|(value, summary, warnings)| (value, summary, warnings, true)),
            |cache, value| cache.put_blob(&encode(value)),
        )
    }

    fn run_value<T: Send + Sync + 'static>(
        &self,
        step: Step,
        compute: impl FnOnce(&Build) -> Result<(T, String, usize, bool), BuildError>,
        store: impl FnOnce(&Cache, &T) -> std::io::Result<Hash>,
    ) -> Result<Output, BuildError> {
        let start = Instant::now();
        let key = step.key();
        if let Some(record) = self.cache.step(&key) {
            self.finish(StepReport {
                id: step.id,
                status: Status::Fresh,
                summary: record.summary,
                warnings: record.warnings,
                elapsed: start.elapsed(),
                reason: None,
            });
            return Ok(Output::known(record.output));
        }
        let reason = self.reason(&step, "output missing from the cache");
        if self.dry_run {
            return Ok(self.stale(step.id, start, reason));
        }
        let (value, summary, warnings, complete) = compute(self)?;
        let hash = store(&self.cache, &value).map_err(Self::io(format!("storing output of {}", step.id)))?;
        let memo: Memo = std::sync::Arc::new(value);
        if complete {
            let record = StepRecord { output: hash.clone(), summary: summary.clone(), warnings };
            self.cache.put_step(&key, &record).map_err(Self::io(format!("recording {}", step.id)))?;
        }
        self.cache.put_last_parts(&step.id, &step.parts());
        self.finish(StepReport {
            id: step.id,
            status: Status::Built,
            summary,
            warnings,
            elapsed: start.elapsed(),
            reason: Some(reason),
        });
        Ok(Output { hash, memo: Some(memo) })
    }

    /// Loads the value of a step output (for a dependent that runs).
    pub fn load<T: DeserializeOwned + Send + Sync + 'static>(
        &self,
        step: &str,
        output: &Output,
    ) -> Result<std::sync::Arc<T>, BuildError> {
        if let Some(value) = output.memo.as_ref().and_then(|m| m.clone().downcast::<T>().ok()) {
            return Ok(value);
        }
        match self.cache.get_value(&output.hash) {
            Some(v) => Ok(std::sync::Arc::new(v)),
            None => Err(CorruptCache { step: step.to_string(), hash: output.hash.clone() }.into()),
        }
    }

    /// Runs a step whose output is a set of files under `target` (the files' bytes are
    /// cached too, so a deleted or edited output is restored without recomputing).
    pub fn files(
        &self,
        step: Step,
        target: &Path,
        compute: impl FnOnce(&Build) -> Result<(Vec<crate::export::ExportFile>, String), BuildError>,
    ) -> Result<Output, BuildError> {
        let start = Instant::now();
        let key = step.key();
        let id = step.id.clone();
        let mut status = Status::Fresh;
        let mut reason = None;
        // The bytes of a step that runs now are written from memory, not read back.
        let mut computed: Vec<Vec<u8>> = Vec::new();
        let (manifest, summary, hash) = match self.cache.step(&key) {
            Some(record) => match self.cache.get_value::<Vec<(String, Hash)>>(&record.output) {
                Some(manifest) => (manifest, record.summary, record.output),
                None => return Err(CorruptCache { step: id, hash: record.output }.into()),
            },
            None => {
                let why = self.reason(&step, "output missing from the cache");
                if self.dry_run {
                    return Ok(self.stale(id, start, why));
                }
                let (files, summary) = compute(self)?;
                let mut manifest = Vec::with_capacity(files.len());
                for file in files {
                    let hash = self.cache.put_blob(&file.bytes).map_err(Self::io(format!("storing output of {id}")))?;
                    manifest.push((file.name, hash));
                    computed.push(file.bytes);
                }
                let hash = self.cache.put_value(&manifest).map_err(Self::io(format!("storing output of {id}")))?;
                let record = StepRecord { output: hash.clone(), summary: summary.clone(), warnings: 0 };
                self.cache.put_step(&key, &record).map_err(Self::io(format!("recording {id}")))?;
                self.cache.put_last_parts(&id, &step.parts());
                status = Status::Built;
                reason = Some(why);
                (manifest, summary, hash)
            }
        };
        let mut restored = Vec::new();
        for (index, (name, file_hash)) in manifest.iter().enumerate() {
            let path = if name.is_empty() { target.to_path_buf() } else { target.join(name) };
            if self.file_matches(&path, file_hash) {
                continue;
            }
            if self.dry_run {
                restored.push(path.display().to_string());
                continue;
            }
            let bytes = match computed.get_mut(index) {
                Some(bytes) => std::mem::take(bytes),
                // A bad file blob invalidates the manifest, so that the retry recomputes the step.
                None => self
                    .cache
                    .get_blob(file_hash)
                    .ok_or_else(|| CorruptCache { step: id.clone(), hash: hash.clone() })?,
            };
            // A copy, not a link to the cached blob: an output edited in place must not
            // edit the cache.
            cache::write_atomic(&path, &bytes).map_err(Self::io(format!("writing {}", path.display())))?;
            self.record_file(&path, file_hash);
            restored.push(path.display().to_string());
        }
        if status == Status::Fresh && !restored.is_empty() {
            status = if self.dry_run { Status::Stale } else { Status::Restored };
            reason = Some(format!("output missing or modified: {}", restored.join(", ")));
        }
        self.finish(StepReport { id, status, summary, warnings: 0, elapsed: start.elapsed(), reason });
        Ok(Output::known(hash))
    }

    /// Runs a step that writes one file itself (the store): fresh when its record exists
    /// and the file still holds what it wrote.
    pub fn external(
        &self,
        step: Step,
        target: &Path,
        compute: impl FnOnce(&Build) -> Result<String, BuildError>,
    ) -> Result<Output, BuildError> {
        let start = Instant::now();
        let key = step.key();
        let record = self.cache.record(&key);
        if let Some(record) = &record
            && self.file_matches(target, &record.output) {
                self.finish(StepReport {
                    id: step.id,
                    status: Status::Fresh,
                    summary: record.summary.clone(),
                    warnings: 0,
                    elapsed: start.elapsed(),
                    reason: None,
                });
                return Ok(Output::known(record.output.clone()));
            }
        let why = match record {
            Some(_) => format!("{} missing or modified", target.display()),
            None => self.reason(&step, &format!("{} missing or modified", target.display())),
        };
        if self.dry_run {
            return Ok(self.stale(step.id, start, why));
        }
        let summary = compute(self)?;
        let hash = filestate::hash_own_file(target).map_err(Self::io(format!("hashing {}", target.display())))?;
        self.record_file(target, &hash);
        let record = StepRecord { output: hash.clone(), summary: summary.clone(), warnings: 0 };
        self.cache.put_step(&key, &record).map_err(Self::io(format!("recording {}", step.id)))?;
        self.cache.put_last_parts(&step.id, &step.parts());
        self.finish(StepReport {
            id: step.id,
            status: Status::Built,
            summary,
            warnings: 0,
            elapsed: start.elapsed(),
            reason: Some(why),
        });
        Ok(Output::known(hash))
    }

    /// Forgets a step record whose output turned out corrupt.
    pub fn discard(&self, corrupt: &CorruptCache) {
        let _ = std::fs::remove_file(self.cache.object_path(&corrupt.hash));
    }

    /// Saves the stat cache and the latest key parts of the steps.
    pub fn save(&self) -> Result<(), BuildError> {
        self.cache.save_last_parts().map_err(Self::io("saving the latest key parts".into()))?;
        self.files.lock().expect("file states poisoned").save().map_err(Self::io("saving the file-state cache".into()))
    }
}
