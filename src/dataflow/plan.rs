//! Steps as data: a [`Plan`] is the list of declared steps of one pipeline, each a
//! [`Decl`]: its id, its [`Rule`] (whose source file gives the code fingerprint), the
//! outputs it reads, the input files it hashes, the pipeline parameters it depends on
//! (by path), what it writes, and the function that computes it. The scheduler
//! ([`super::schedule`]) walks the plan; nothing else wires steps together.

use std::any::Any;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use super::cache::{Cache, Hash};
use super::{Build, BuildError, ExportFile, Memo, Output};
use crate::diagnostics::Warning;

/// A kind of step: `parse`, `tree`, `export:csv`. Its code is the file that declares it
/// and everything that file uses ([`super::code`]).
#[derive(Debug)]
pub struct Rule {
    /// The rule's name; step ids are this name or `name:instance`.
    pub name: &'static str,
    /// One line on what the step computes (for `okb graph`).
    pub about: &'static str,
    /// The declaring source file, `file!()`.
    pub file: &'static str,
}

/// The function of a step, given its context.
pub type Run<'a, R> = Box<dyn Fn(&Ctx<'_>) -> Result<R, BuildError> + Send + Sync + 'a>;

/// What a step writes and how it computes it.
pub enum Action<'a> {
    /// A value kept in the cache, read by dependents.
    Value(Run<'a, Produced>),
    /// A value kept only in memory for this run (cheap to recompute, costly to store);
    /// its output hash is its key, and a dependent that runs when it did not recomputes it.
    Memory(Run<'a, Produced>),
    /// Files under a target path (a file, or a folder of named files); their bytes are
    /// cached too, so a deleted or edited output is restored without recomputing.
    Files(PathBuf, Run<'a, (Vec<ExportFile>, String)>),
    /// One file the step writes itself (a database); fresh while it holds what it wrote.
    File(PathBuf, Run<'a, String>),
}

impl Action<'_> {
    /// What the step writes, in a word, and where.
    pub fn writes(&self) -> (&'static str, Option<&PathBuf>) {
        match self {
            Action::Value(_) => ("value", None),
            Action::Memory(_) => ("memory", None),
            Action::Files(target, _) => ("files", Some(target)),
            Action::File(target, _) => ("file", Some(target)),
        }
    }
}

/// One declared step.
pub struct Decl<'a> {
    /// Unique id within the plan.
    pub id: String,
    /// Its rule.
    pub rule: &'static Rule,
    /// Ids of the steps whose outputs it reads.
    pub reads: Vec<String>,
    /// Input files by name, with their BLAKE3.
    pub files: Vec<(String, Hash)>,
    /// Pipeline parameters it depends on, as paths (`["tree", "max_ply"]`).
    pub params: Vec<Vec<String>>,
    /// Among steps ready at once, higher runs first.
    pub priority: i64,
    /// What it writes and how.
    pub action: Action<'a>,
    /// For `okb status`: how much work the step has left, in words (a step that does
    /// long, resumable work, such as engine searches).
    pub left: Option<Run<'a, String>>,
    /// For a value that names other cache objects (sorted runs streamed to the cache):
    /// reads the stored value and lists them, so that `okb clean --unused` keeps them.
    pub references: Option<References>,
}

/// Lists the cache objects the stored value `hash` names; `None` when it cannot be read.
pub type References = Box<dyn Fn(&Cache, &Hash) -> Option<Vec<Hash>> + Send + Sync>;

impl<'a> Decl<'a> {
    /// A step of `rule` with id `id` (no inputs yet).
    pub fn new(id: impl Into<String>, rule: &'static Rule, action: Action<'a>) -> Decl<'a> {
        Decl { id: id.into(), rule, reads: Vec::new(), files: Vec::new(), params: Vec::new(), priority: 0, action, left: None, references: None }
    }

    /// Reads the output of step `id`.
    pub fn reads(mut self, id: impl Into<String>) -> Self {
        self.reads.push(id.into());
        self
    }

    /// Hashes an input file (or any content named by a hash).
    pub fn file(mut self, name: impl Into<String>, hash: impl Into<Hash>) -> Self {
        self.files.push((name.into(), hash.into()));
        self
    }

    /// Depends on the pipeline parameter at `path` (`"tree.max_ply"`; one segment per
    /// `.`), or on a whole table (`"tree"`).
    pub fn param(self, path: &str) -> Self {
        self.param_at(path.split('.').map(String::from).collect())
    }

    /// Like [`Decl::param`], for a path whose segments may hold dots (source names).
    pub fn param_at(mut self, path: Vec<String>) -> Self {
        self.params.push(path);
        self
    }

    /// Says how to tell what work is left (see [`Decl::left`]).
    pub fn left(mut self, left: Run<'a, String>) -> Self {
        self.left = Some(left);
        self
    }

    /// Says which cache objects the step's stored value (of type `T`) names.
    pub fn references<T: serde::de::DeserializeOwned + 'static>(mut self, names: fn(&T) -> Vec<Hash>) -> Self {
        self.references = Some(Box::new(move |cache: &Cache, hash: &Hash| cache.get_value::<T>(hash).map(|value| names(&value))));
        self
    }

    /// Sets the priority among steps ready at the same time.
    pub fn priority(mut self, priority: i64) -> Self {
        self.priority = priority;
        self
    }
}

type StoreFn = Box<dyn FnOnce(&Cache, &(dyn Any + Send + Sync)) -> std::io::Result<Hash> + Send>;

/// A step's value as it is handed over: the value, how to store it, and its report.
pub struct Produced {
    pub(super) value: Arc<dyn Any + Send + Sync>,
    pub(super) store: Option<StoreFn>,
    /// One line on what was produced.
    pub summary: String,
    /// Warnings reported.
    pub warnings: usize,
    /// False when the step stopped early (a budget): it runs again next time.
    pub complete: bool,
}

impl Produced {
    /// A value stored with postcard.
    pub fn new<T: Serialize + Send + Sync + 'static>(value: T, summary: impl Into<String>) -> Produced {
        let store = |cache: &Cache, value: &(dyn Any + Send + Sync)| cache.put_value(downcast::<T>(value));
        Produced { value: Arc::new(value), store: Some(Box::new(store)), summary: summary.into(), warnings: 0, complete: true }
    }

    /// A value of an [`Action::Memory`] step: never stored.
    pub fn unstored<T: Send + Sync + 'static>(value: T, summary: impl Into<String>) -> Produced {
        Produced { value: Arc::new(value), store: None, summary: summary.into(), warnings: 0, complete: true }
    }

    /// A value whose postcard bytes `encode` writes faster than serde streaming (on all
    /// cores: [`super::cache::encode_seq_in_parallel`]); they must be postcard's.
    pub fn encoded<T: Send + Sync + 'static>(value: T, summary: impl Into<String>, encode: fn(&T) -> Vec<u8>) -> Produced {
        let store = move |cache: &Cache, value: &(dyn Any + Send + Sync)| cache.put_blob(&encode(downcast::<T>(value)));
        Produced { value: Arc::new(value), store: Some(Box::new(store)), summary: summary.into(), warnings: 0, complete: true }
    }

    /// With a warning count.
    pub fn warnings(mut self, warnings: usize) -> Produced {
        self.warnings = warnings;
        self
    }

    /// Marks the value incomplete when `complete` is false.
    pub fn complete(mut self, complete: bool) -> Produced {
        self.complete = complete;
        self
    }
}

fn downcast<T: 'static>(value: &(dyn Any + Send + Sync)) -> &T {
    value.downcast_ref::<T>().expect("a produced value is stored as the type it was made with")
}

/// What a running step sees: its inputs' values, and where to report warnings.
pub struct Ctx<'r> {
    /// The build.
    pub build: &'r Build,
    /// The running step's id.
    pub id: &'r str,
    pub(super) plan: &'r dyn Inputs,
    pub(super) warnings: &'r Mutex<Vec<Warning>>,
}

/// Where a running step's inputs come from: the state of the run ([`super::schedule`]
/// implements it, so this module need not know the scheduler).
pub(super) trait Inputs: Sync {
    /// The steps that step `id` declared it reads.
    fn reads(&self, id: &str) -> &[String];
    /// The output of finished step `id`.
    fn output(&self, id: &str) -> &Output;
    /// The in-memory value of step `id`, while its readers run.
    fn memo(&self, id: &str) -> Option<Memo>;
    /// The value of [`Action::Memory`] step `id`: from memory, or computed again when the
    /// step was fresh (and so did not run) but a reader runs.
    fn memory_value(&self, build: &Build, id: &str) -> Result<Memo, BuildError>;
}

impl Ctx<'_> {
    /// The value of input step `id` (one this step declared it reads).
    pub fn load<T: serde::de::DeserializeOwned + Send + Sync + 'static>(&self, id: &str) -> Result<Arc<T>, BuildError> {
        self.declared(id)?;
        self.build.load(id, self.plan.output(id), self.plan.memo(id))
    }

    /// The value of input step `id`, an [`Action::Memory`] step (never read from the cache).
    pub fn load_in_memory<T: Send + Sync + 'static>(&self, id: &str) -> Result<Arc<T>, BuildError> {
        self.declared(id)?;
        let value = self.plan.memory_value(self.build, id)?;
        value.downcast::<T>().map_err(|_| BuildError::Step { step: id.to_string(), message: "read as the wrong type".into() })
    }

    /// An error unless this step declared that it reads `id`: an input left out of the
    /// declaration is left out of the step's key, and a change to it would go unseen.
    fn declared(&self, id: &str) -> Result<(), BuildError> {
        if self.plan.reads(self.id).iter().any(|r| r == id) {
            return Ok(());
        }
        Err(self.fail(format!("loads step {id} without declaring that it reads it (`.reads(\"{id}\")`): its key would not cover that input")))
    }

    /// The output hash of input step `id`: for a step that writes one file itself
    /// ([`Action::File`]), that file's BLAKE3, so a reader need not hash it again.
    pub fn hash_of(&self, id: &str) -> super::cache::Hash {
        self.plan.output(id).hash.clone()
    }

    /// Reports warnings (shown after the build, in file and line order).
    pub fn warn(&self, warnings: impl IntoIterator<Item = Warning>) {
        self.warnings.lock().expect("warnings poisoned").extend(warnings);
    }

    /// A failure of this step.
    pub fn fail(&self, message: impl std::fmt::Display) -> BuildError {
        BuildError::Step { step: self.id.to_string(), message: message.to_string() }
    }
}
