//! The incremental build engine: memoized steps over content-hashed inputs.
//!
//! A step is identified by an id (`parse:lichess-a`, `eco`, `export:csv`) and keyed by the
//! BLAKE3 of its id, code version, parameters and the hashes of its inputs. A step whose
//! key has a record in the [`cache`] is *Fresh* and does not run; its output is loaded only
//! if a dependent has to run. Dependents are keyed by their inputs' *output* hashes, so a
//! step that reruns but produces identical bytes stops the rebuild there (early cutoff).
//!
//! Steps are declared as data ([`plan`]) and run by the [`schedule`]r: within one run
//! each step is evaluated once and hands its [`Output`] to its readers in memory; across
//! runs the cache does the memoizing. A step's key includes the fingerprint of the code
//! that computes it ([`code`]), so no version number has to be bumped by hand.

pub mod cache;
pub mod code;
pub mod gc;
pub mod lock;
pub mod mark;
pub mod plan;
pub mod scan;
pub mod schedule;
pub mod timings;

pub use plan::{Action, Ctx, Decl, Declaring, Input, Produced, Rule, StepId};
pub use schedule::Plan;

pub use crate::files::ExportFile;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;

use crate::diagnostics::Warning;

use crate::files::FileStates;
use cache::{Cache, Hash, KeyParts, StepRecord};

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
    /// A fresh step's stored warnings (see [`Build::warnings_of`]).
    pub warning_list: Option<Hash>,
}

/// The description of a step: everything its key is made of.
#[derive(Clone, Debug)]
pub struct Step {
    /// Unique id within the pipeline.
    pub id: String,
    /// Fingerprint of the code that computes it ([`code`]).
    pub code: Hash,
    /// Its code files with their short hashes (to say which changed).
    pub code_files: Vec<(String, String)>,
    /// Hash of each parameter it depends on, by path.
    pub params: Vec<(String, Hash)>,
    /// Named hashes of its inputs (source bytes or other steps' outputs).
    pub inputs: Vec<(String, Hash)>,
    /// The warnings it reports while it runs (kept with its record).
    pub sink: std::sync::Arc<Mutex<Vec<Warning>>>,
}

impl Step {
    /// A step whose code is declared in `code_file` (`file!()` of its rule), with the
    /// hashes of its parameters.
    pub fn new(id: impl Into<String>, code_file: &str, params: Vec<(String, Hash)>) -> Step {
        Step {
            id: id.into(),
            code: code::of(code_file),
            code_files: code::code_files(code::FILES, code_file),
            params,
            inputs: Vec::new(),
            sink: Default::default(),
        }
    }

    /// Adds an input.
    pub fn input(mut self, name: impl Into<String>, hash: &str) -> Step {
        self.inputs.push((name.into(), hash.to_string()));
        self
    }

    fn parts(&self) -> KeyParts {
        KeyParts {
            code: self.code.clone(),
            code_files: self.code_files.clone(),
            params: self.params.clone(),
            inputs: self.inputs.clone(),
        }
    }

    fn key(&self) -> Hash {
        step_key(&self.id, &self.code, &self.params, &self.inputs)
    }
}

/// The cache key of a run of step `id`: its code's fingerprint, its parameters' and its
/// inputs' hashes.
fn step_key(id: &str, code: &str, params: &[(String, Hash)], inputs: &[(String, Hash)]) -> Hash {
    let mut h = blake3::Hasher::new();
    h.update(id.as_bytes());
    h.update(&[0]);
    h.update(code.as_bytes());
    for (path, hash) in params {
        h.update(path.as_bytes());
        h.update(&[0]);
        h.update(hash.as_bytes());
    }
    for (name, hash) in inputs {
        h.update(name.as_bytes());
        h.update(&[0]);
        h.update(hash.as_bytes());
    }
    h.finalize().to_hex().to_string()
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

/// A step value in memory.
pub type Memo = std::sync::Arc<dyn std::any::Any + Send + Sync>;

impl Output {
    fn known(hash: Hash) -> Output {
        Output { hash, memo: None }
    }

    /// The value, when the step ran in this process.
    pub fn memo(&self) -> Option<Memo> {
        self.memo.clone()
    }

    /// Takes the value out (the scheduler keeps it apart, to drop it early).
    pub(crate) fn take_memo(&mut self) -> Option<Memo> {
        self.memo.take()
    }

    /// An output holding only `memo`: dropping it frees the value in the background.
    pub(crate) fn with_memo(memo: Option<Memo>) -> Output {
        Output { hash: String::new(), memo }
    }
}

impl Drop for Output {
    /// Freeing a large step value (a tree, a skeleton, game counts) is millions of small
    /// deallocations; a background thread does it so the build can finish meanwhile.
    fn drop(&mut self) {
        if let Some(memo) = self.memo.take()
            && std::sync::Arc::strong_count(&memo) == 1
        {
            let _ = background_dropper().lock().expect("dropper poisoned").send(memo);
        }
    }
}

fn background_dropper() -> &'static Mutex<std::sync::mpsc::Sender<Memo>> {
    static DROPPER: std::sync::OnceLock<Mutex<std::sync::mpsc::Sender<Memo>>> =
        std::sync::OnceLock::new();
    DROPPER.get_or_init(|| {
        let (send, receive) = std::sync::mpsc::channel::<Memo>();
        std::thread::spawn(move || receive.into_iter().for_each(drop));
        Mutex::new(send)
    })
}

/// A cache object that failed verification (`found`); the object `hash` that makes the
/// step fresh (its value, or the list of its files) is removed so that the next attempt
/// recomputes the step.
#[derive(Debug, thiserror::Error)]
#[error("cache object {found} of step {step} is missing or corrupt; {}", self.consequence())]
pub struct CorruptCache {
    /// The step.
    pub step: String,
    /// The object to discard: the step's output.
    pub hash: Hash,
    /// The object found missing or corrupt (the output itself, or an object it names).
    pub found: Hash,
}

impl CorruptCache {
    /// A step's output found missing or corrupt.
    pub fn output(step: impl Into<String>, hash: impl Into<Hash>) -> CorruptCache {
        let hash = hash.into();
        CorruptCache { step: step.into(), found: hash.clone(), hash }
    }

    fn consequence(&self) -> String {
        match self.found == self.hash {
            true => format!("it was discarded and step {} will be rebuilt", self.step),
            false => format!(
                "the step's output {} was discarded, so step {} will be rebuilt",
                self.hash, self.step
            ),
        }
    }
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
    /// A step refused a pipeline parameter when it was planned. The path lets the make
    /// point at the parameter in the pipeline file, which the build engine does not read.
    #[error("{step}: {message}")]
    Param {
        /// The step.
        step: String,
        /// Where the parameter is from the pipeline's top (`["exports", "book", "weights"]`).
        path: Vec<String>,
        /// What is wrong with it.
        message: String,
        /// What to do about it.
        help: Option<String>,
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
        let files = Mutex::new(FileStates::load(cache_dir.join(crate::files::states::FILE_NAME)));
        Build {
            cache: Cache::new(cache_dir),
            files,
            reports: Mutex::default(),
            dry_run,
            on_report: Mutex::new(on_report),
        }
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
        self.files.lock().expect("file states poisoned").hash(path).map_err(|source| {
            BuildError::Io { what: format!("reading {}", path.display()), source }
        })
    }

    fn record_file(&self, path: &Path, hash: &str) {
        self.files.lock().expect("file states poisoned").record(path, hash)
    }

    /// Why `step` must run: what differs from its latest run.
    fn reason(&self, step: &Step, fallback: &str) -> String {
        if step.inputs.iter().any(|(_, h)| h == UNKNOWN) {
            let names: Vec<&str> =
                step.inputs.iter().filter(|(_, h)| h == UNKNOWN).map(|(n, _)| n.as_str()).collect();
            let shown = match names.len() {
                1..=3 => names.join(", "),
                n => format!("{}, {} and {} more", names[0], names[1], n - 2),
            };
            return format!("input {shown} will be rebuilt");
        }
        let Some(last) = self.cache.last_parts(&step.id) else {
            return "never built".into();
        };
        let mut why = Vec::new();
        if last.code != step.code {
            why.push(code_change(&last.code_files, &step.code_files));
        }
        why.extend(changes("parameter", &last.params, &step.params));
        why.extend(changes("input", &last.inputs, &step.inputs));
        if why.is_empty() { fallback.to_string() } else { why.join(", ") }
    }

    /// Reports a step that would run (dry run) and gives it an unknown output.
    fn stale(&self, id: String, start: Instant, reason: String) -> Output {
        self.stale_with(id, start, reason, String::new())
    }

    /// [`Build::stale`] with a summary (what is left to do).
    fn stale_with(&self, id: String, start: Instant, reason: String, summary: String) -> Output {
        self.finish(StepReport {
            id,
            status: Status::Stale,
            summary,
            warnings: 0,
            elapsed: start.elapsed(),
            reason: Some(reason),
            warning_list: None,
        });
        Output::known(UNKNOWN.into())
    }

    fn io(what: String) -> impl FnOnce(std::io::Error) -> BuildError {
        move |source| BuildError::Io { what, source }
    }

    /// Runs a value step unless it is fresh. An incomplete value (a step that stopped
    /// at a budget) still feeds this run's dependents but is not recorded, so the next
    /// run runs the step again and it continues from its own finished work.
    ///
    /// In a dry run, `left` (when given and the inputs are known) says how much work the
    /// step has left, for `okb status`.
    pub fn value(
        &self,
        step: Step,
        compute: impl FnOnce() -> Result<Produced, BuildError>,
        left: Option<&dyn Fn() -> Result<String, BuildError>>,
    ) -> Result<Output, BuildError> {
        let start = Instant::now();
        let key = step.key();
        if let Some(record) = self.cache.step(&key) {
            self.fresh(step.id, start, &record);
            return Ok(Output::known(record.output));
        }
        let reason = self.reason(&step, "its last run did not finish");
        if self.dry_run {
            let known = step.inputs.iter().all(|(_, h)| h != UNKNOWN);
            let summary = match left.filter(|_| known) {
                Some(left) => left()?,
                None => String::new(),
            };
            return Ok(self.stale_with(step.id, start, reason, summary));
        }
        let produced = compute()?;
        let store = produced.store.ok_or_else(|| BuildError::Step {
            step: step.id.clone(),
            message: "a value step produced an unstored value".into(),
        })?;
        let hash = store(&self.cache, produced.value.as_ref())
            .map_err(Self::io(format!("storing output of {}", step.id)))?;
        let warnings = match produced.complete {
            true => {
                self.record(&key, &step, hash.clone(), produced.summary.clone(), produced.warnings)?
            }
            false => Self::counted(&step, produced.warnings),
        };
        self.built(&step, start, produced.summary, warnings, reason);
        Ok(Output { hash, memo: Some(produced.value) })
    }

    /// Runs a memory step unless it is fresh: its value is not stored, and its output
    /// hash is its key (a function of its inputs, like the value).
    pub fn memory(
        &self,
        step: Step,
        compute: impl FnOnce() -> Result<Produced, BuildError>,
    ) -> Result<Output, BuildError> {
        let start = Instant::now();
        let key = step.key();
        if let Some(record) = self.cache.record(&key) {
            self.fresh(step.id, start, &record);
            return Ok(Output::known(key));
        }
        let reason = self.reason(&step, "never built with these inputs");
        if self.dry_run {
            return Ok(self.stale(step.id, start, reason));
        }
        let produced = compute()?;
        let warnings =
            self.record(&key, &step, key.clone(), produced.summary.clone(), produced.warnings)?;
        self.built(&step, start, produced.summary, warnings, reason);
        Ok(Output { hash: key, memo: Some(produced.value) })
    }

    /// Writes the record of `step` under `key`, with the warnings it reported, and
    /// returns their count: the step's own count, or the warnings it listed when more.
    /// The run's report takes this count too, so the `Finished` line counts the warnings
    /// it prints, as the next make (reading the record) does.
    fn record(
        &self,
        key: &str,
        step: &Step,
        output: Hash,
        summary: String,
        warnings: usize,
    ) -> Result<usize, BuildError> {
        let warnings = Self::counted(step, warnings);
        let list = step.sink.lock().expect("warnings poisoned").clone();
        let io = || Self::io(format!("recording {}", step.id));
        let warning_list =
            if list.is_empty() { None } else { Some(self.cache.put_value(&list).map_err(io())?) };
        self.cache
            .put_step(key, &StepRecord { output, summary, warnings, warning_list })
            .map_err(io())?;
        Ok(warnings)
    }

    /// The warnings `step` reports: `reported` (its own count), or the warnings (not
    /// notes) it listed when more.
    fn counted(step: &Step, reported: usize) -> usize {
        reported.max(
            step.sink.lock().expect("warnings poisoned").iter().filter(|w| !w.is_note()).count(),
        )
    }

    /// The warnings a fresh step reported when it ran (empty if its blob is gone: they
    /// are a report, not an output).
    pub fn warnings_of(&self, report: &StepReport) -> Vec<Warning> {
        report.warning_list.as_ref().and_then(|hash| self.cache.get_value(hash)).unwrap_or_default()
    }

    fn fresh(&self, id: String, start: Instant, record: &StepRecord) {
        let (summary, warnings, warning_list) =
            (record.summary.clone(), record.warnings, record.warning_list.clone());
        self.finish(StepReport {
            id,
            status: Status::Fresh,
            summary,
            warnings,
            elapsed: start.elapsed(),
            reason: None,
            warning_list,
        });
    }

    fn built(&self, step: &Step, start: Instant, summary: String, warnings: usize, reason: String) {
        self.cache.put_last_parts(&step.id, &step.parts());
        let id = step.id.clone();
        self.finish(StepReport {
            id,
            status: Status::Built,
            summary,
            warnings,
            elapsed: start.elapsed(),
            reason: Some(reason),
            warning_list: None,
        });
    }

    /// Loads the value of a step output (for a dependent that runs): `memo` when the
    /// step ran in this process and its value is still in memory, else from the cache.
    pub fn load<T: DeserializeOwned + Send + Sync + 'static>(
        &self,
        step: &str,
        output: &Output,
        memo: Option<Memo>,
    ) -> Result<std::sync::Arc<T>, BuildError> {
        if let Some(value) =
            memo.or_else(|| output.memo.clone()).and_then(|m| m.downcast::<T>().ok())
        {
            return Ok(value);
        }
        match self.cache.get_value(&output.hash) {
            Some(v) => Ok(std::sync::Arc::new(v)),
            None => Err(CorruptCache::output(step, output.hash.clone()).into()),
        }
    }

    /// Runs a step whose output is a set of files under `target` (the files' bytes are
    /// cached too, so a deleted or edited output is restored without recomputing).
    pub fn files(
        &self,
        step: Step,
        target: &Path,
        compute: impl FnOnce() -> Result<(Vec<ExportFile>, String), BuildError>,
    ) -> Result<Output, BuildError> {
        let start = Instant::now();
        let key = step.key();
        let id = step.id.clone();
        let mut status = Status::Fresh;
        let mut reason = None;
        // The bytes of a step that runs now are written from memory, not read back.
        let mut computed: Vec<Vec<u8>> = Vec::new();
        let (manifest, summary, hash, warnings, warning_list) = match self.cache.step(&key) {
            Some(record) => match self.cache.get_value::<Vec<(String, Hash)>>(&record.output) {
                Some(manifest) => {
                    // The files' bytes are objects too, though a fresh step reads none.
                    manifest.iter().for_each(|(_, hash)| self.cache.mark(hash));
                    (manifest, record.summary, record.output, record.warnings, record.warning_list)
                }
                None => return Err(CorruptCache::output(id, record.output).into()),
            },
            None => {
                let why = self.reason(&step, "output missing from the cache");
                if self.dry_run {
                    return Ok(self.stale(id, start, why));
                }
                let (files, summary) = compute()?;
                let mut manifest = Vec::with_capacity(files.len());
                for file in files {
                    let hash = self
                        .cache
                        .put_blob(&file.bytes)
                        .map_err(Self::io(format!("storing output of {id}")))?;
                    manifest.push((file.name, hash));
                    computed.push(file.bytes);
                }
                let hash = self
                    .cache
                    .put_value(&manifest)
                    .map_err(Self::io(format!("storing output of {id}")))?;
                let warnings = self.record(&key, &step, hash.clone(), summary.clone(), 0)?;
                self.cache.put_last_parts(&id, &step.parts());
                status = Status::Built;
                reason = Some(why);
                (manifest, summary, hash, warnings, None)
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
                None => self.cache.get_blob(file_hash).ok_or_else(|| CorruptCache {
                    step: id.clone(),
                    hash: hash.clone(),
                    found: file_hash.clone(),
                })?,
            };
            // A copy, not a link to the cached blob: an output edited in place must not
            // edit the cache.
            cache::write_atomic(&path, &bytes)
                .map_err(Self::io(format!("{id}: writing {}", path.display())))?;
            self.record_file(&path, file_hash);
            restored.push(path.display().to_string());
        }
        if status == Status::Fresh && !restored.is_empty() {
            status = if self.dry_run { Status::Stale } else { Status::Restored };
            reason = Some(self.restored_reason(&step, &restored));
        }
        self.finish(StepReport {
            id,
            status,
            summary,
            warnings,
            elapsed: start.elapsed(),
            reason,
            warning_list,
        });
        Ok(Output::known(hash))
    }

    /// Why a fresh step's files were put back from the cache (`restored`): what changed
    /// since the step last ran (a parameter set back to a value built before), or else
    /// the files were missing or edited. Remembers the parts, so the next explanation
    /// starts from these. The files come last, after `: `, for `okb verify`.
    fn restored_reason(&self, step: &Step, restored: &[String]) -> String {
        let files = restored.join(", ");
        let changed = self.reason(step, "");
        if !self.dry_run {
            self.cache.put_last_parts(&step.id, &step.parts());
        }
        match changed.as_str() {
            "" | "never built" => format!("output missing or modified: {files}"),
            _ => format!("{changed}, a build the cache holds; its output restored: {files}"),
        }
    }

    /// Runs a step that writes one file itself (the store): fresh when its record exists
    /// and the file still holds what it wrote.
    pub fn external(
        &self,
        step: Step,
        target: &Path,
        compute: impl FnOnce() -> Result<String, BuildError>,
    ) -> Result<Output, BuildError> {
        let start = Instant::now();
        let key = step.key();
        let record = self.cache.record(&key);
        if let Some(record) = &record
            && self.file_matches(target, &record.output)
        {
            self.finish(StepReport {
                id: step.id,
                status: Status::Fresh,
                summary: record.summary.clone(),
                warnings: record.warnings,
                elapsed: start.elapsed(),
                reason: None,
                warning_list: record.warning_list.clone(),
            });
            return Ok(Output::known(record.output.clone()));
        }
        // With a record too: a parameter set back to a value built before rebuilds the
        // file, and the change says why better than the file does.
        let why = self.reason(&step, &format!("{} missing or modified", target.display()));
        if self.dry_run {
            return Ok(self.stale(step.id, start, why));
        }
        let summary = compute()?;
        let hash = crate::files::hash_own_file(target)
            .map_err(Self::io(format!("hashing {}", target.display())))?;
        self.record_file(target, &hash);
        let warnings = self.record(&key, &step, hash.clone(), summary.clone(), 0)?;
        self.cache.put_last_parts(&step.id, &step.parts());
        self.finish(StepReport {
            id: step.id,
            status: Status::Built,
            summary,
            warnings,
            elapsed: start.elapsed(),
            reason: Some(why),
            warning_list: None,
        });
        Ok(Output::known(hash))
    }

    /// Whether `target` holds what step `id` wrote there when it last finished: `false`
    /// when no finished run is recorded (a first run, a lost cache), and when a run was cut
    /// short after it replaced the file but before it was recorded (that file is no
    /// finished build).
    pub fn holds_last_output(&self, id: &str, target: &Path) -> bool {
        let Some(last) = self.cache.last_parts(id) else { return false };
        let key = step_key(id, &last.code, &last.params, &last.inputs);
        self.cache.peek_record(&key).is_some_and(|record| self.file_matches(target, &record.output))
    }

    /// Forgets a step record whose output turned out corrupt.
    pub fn discard(&self, corrupt: &CorruptCache) {
        let _ = std::fs::remove_file(self.cache.object_path(&corrupt.hash));
    }

    /// In a dry run, marks the objects a fresh step's stored value names as used (a step
    /// that ran marked them as it stored them).
    pub(crate) fn mark_references(
        &self,
        step: &str,
        output: &Output,
        references: &plan::References,
    ) -> Result<(), BuildError> {
        if !self.dry_run || output.hash == UNKNOWN {
            return Ok(());
        }
        let names = references(&self.cache, &output.hash)
            .ok_or_else(|| CorruptCache::output(step, output.hash.clone()))?;
        names.iter().for_each(|name| self.cache.mark(name));
        Ok(())
    }

    /// Saves the stat cache and the latest key parts of the steps.
    pub fn save(&self) -> Result<(), BuildError> {
        self.cache.save_last_parts().map_err(Self::io("saving the latest key parts".into()))?;
        self.files
            .lock()
            .expect("file states poisoned")
            .save()
            .map_err(Self::io("saving the file-state cache".into()))
    }
}

/// Which code files changed between two runs of a step, in words.
fn code_change(old: &[(String, String)], new: &[(String, String)]) -> String {
    let mut files: Vec<&str> =
        new.iter().filter(|f| !old.contains(f)).map(|(path, _)| path.as_str()).collect();
    files.extend(
        old.iter()
            .filter(|(path, _)| !new.iter().any(|(p, _)| p == path))
            .map(|(path, _)| path.as_str()),
    );
    match files.len() {
        0 => "code changed (dependency versions in Cargo.lock)".into(),
        1..=3 => format!("code changed ({})", files.join(", ")),
        n => format!("code changed ({}, … {} files)", files[..2].join(", "), n),
    }
}

/// What differs between two named hash lists: `parameter tree.max_ply changed`.
fn changes(what: &str, old: &[(String, Hash)], new: &[(String, Hash)]) -> Vec<String> {
    let mut why = Vec::new();
    for (name, hash) in new {
        match old.iter().find(|(n, _)| n == name) {
            Some((_, h)) if h == hash => {}
            // "lichess-a changed" (an input), "parameter tree.max_ply changed".
            Some(_) if what == "input" => why.push(format!("{name} changed")),
            Some(_) => why.push(format!("{what} {name} changed")),
            None => why.push(format!("new {what} {name}")),
        }
    }
    for (name, _) in old {
        if !new.iter().any(|(n, _)| n == name) {
            why.push(format!("{what} {name} removed"));
        }
    }
    why
}
