//! Steps as data: a [`Plan`] is the list of declared steps of one pipeline, each a
//! [`Decl`]: its id, its [`Rule`] (whose source file gives the code fingerprint), the
//! outputs it reads, the input files it hashes, the pipeline parameters it depends on
//! (by path), what it writes, and the function that computes it. The scheduler
//! ([`super::schedule`]) walks the plan; nothing else wires steps together.
//!
//! A step is declared through [`Declaring`]: each input it reads gives a typed [`Input`]
//! handle, the only thing [`Ctx::get`] loads, so a step cannot read what its key does
//! not cover; each parameter is read and keyed by one [`Declaring::param`] call.
//!
//! ```compile_fail
//! // Loading a step by its id, undeclared, does not compile outside the build engine:
//! fn sneaky(cx: &okb::dataflow::Ctx<'_>) {
//!     let _ = cx.load::<u8>("tree");
//! }
//! ```

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
        Decl {
            id: id.into(),
            rule,
            reads: Vec::new(),
            files: Vec::new(),
            params: Vec::new(),
            priority: 0,
            action,
            left: None,
            references: None,
        }
    }

    /// Reads the output of step `id` (steps declare reads through [`Declaring::input`],
    /// which hands them the only means to load it).
    #[cfg(test)]
    pub(super) fn reads(mut self, id: impl Into<String>) -> Self {
        self.reads.push(id.into());
        self
    }

    /// Says how to tell what work is left (see [`Decl::left`]).
    pub fn left(mut self, left: Run<'a, String>) -> Self {
        self.left = Some(left);
        self
    }

    /// Says which cache objects the step's stored value (of type `T`) names.
    pub fn references<T: serde::de::DeserializeOwned + 'static>(
        mut self,
        names: fn(&T) -> Vec<Hash>,
    ) -> Self {
        self.references = Some(Box::new(move |cache: &Cache, hash: &Hash| {
            cache.get_value::<T>(hash).map(|value| names(&value))
        }));
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
    pub fn new<T: Serialize + Send + Sync + 'static>(
        value: T,
        summary: impl Into<String>,
    ) -> Produced {
        let store =
            |cache: &Cache, value: &(dyn Any + Send + Sync)| cache.put_value(downcast::<T>(value));
        Produced {
            value: Arc::new(value),
            store: Some(Box::new(store)),
            summary: summary.into(),
            warnings: 0,
            complete: true,
        }
    }

    /// A value of an [`Action::Memory`] step: never stored.
    pub fn unstored<T: Send + Sync + 'static>(value: T, summary: impl Into<String>) -> Produced {
        Produced {
            value: Arc::new(value),
            store: None,
            summary: summary.into(),
            warnings: 0,
            complete: true,
        }
    }

    /// A value whose postcard bytes `encode` writes faster than serde streaming (on all
    /// cores: [`super::cache::encode_seq_in_parallel`]); they must be postcard's. They
    /// are streamed into the cache, never held whole.
    pub fn encoded<T: Send + Sync + 'static>(
        value: T,
        summary: impl Into<String>,
        encode: fn(&T, &mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> Produced {
        let store = move |cache: &Cache, value: &(dyn Any + Send + Sync)| {
            cache.put_stream(|out| encode(downcast::<T>(value), out))
        };
        Produced {
            value: Arc::new(value),
            store: Some(Box::new(store)),
            summary: summary.into(),
            warnings: 0,
            complete: true,
        }
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
    /// The value of the input `input` declared.
    pub fn get<T>(&self, input: &Input<T>) -> Result<Arc<T>, BuildError> {
        (input.load)(self, &input.id)
    }

    /// The value of input step `id` (one this step declared it reads).
    pub(super) fn load<T: serde::de::DeserializeOwned + Send + Sync + 'static>(
        &self,
        id: &str,
    ) -> Result<Arc<T>, BuildError> {
        self.declared(id)?;
        self.build.load(id, self.plan.output(id), self.plan.memo(id))
    }

    /// The value of input step `id`, an [`Action::Memory`] step (never read from the cache).
    pub(super) fn load_in_memory<T: Send + Sync + 'static>(
        &self,
        id: &str,
    ) -> Result<Arc<T>, BuildError> {
        self.declared(id)?;
        let value = self.plan.memory_value(self.build, id)?;
        value.downcast::<T>().map_err(|_| BuildError::Step {
            step: id.to_string(),
            message: "read as the wrong type".into(),
        })
    }

    /// An error unless this step declared that it reads `id`: an input left out of the
    /// declaration is left out of the step's key, and a change to it would go unseen.
    fn declared(&self, id: &str) -> Result<(), BuildError> {
        if self.plan.reads(self.id).iter().any(|r| r == id) {
            return Ok(());
        }
        Err(self.fail(format!("loads step {id} without declaring that it reads it (`.reads(\"{id}\")`): its key would not cover that input")))
    }

    /// The output hash of `input`: for a step that writes one file itself
    /// ([`Action::File`]), that file's BLAKE3, so a reader need not hash it again.
    pub fn hash_of<T>(&self, input: &Input<T>) -> Hash {
        self.plan.output(&input.id).hash.clone()
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

/// A typed handle on the output of a step that the declaring step reads. Only
/// [`Declaring::input`] makes one, and [`Ctx::get`] is the only way a step loads another
/// step's value: what a step can load is what its key covers.
pub struct Input<T> {
    id: String,
    load: for<'c, 'r> fn(&'c Ctx<'r>, &str) -> Result<Arc<T>, BuildError>,
}

impl<T> Clone for Input<T> {
    fn clone(&self) -> Self {
        Input { id: self.id.clone(), load: self.load }
    }
}

impl<T> std::fmt::Debug for Input<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Input({})", self.id)
    }
}

impl<T> Input<T> {
    /// The id of the step it reads.
    pub fn id(&self) -> &str {
        &self.id
    }
}

/// The id of a step whose value is a `T`, declared once beside its producer: a reader
/// names the constant, so reading it as another type does not compile (it used to show
/// as a "corrupt cache" at run time, retried).
pub struct StepId<T> {
    name: &'static str,
    value: std::marker::PhantomData<fn() -> T>,
}

impl<T> StepId<T> {
    /// The id `name` of a step whose value is a `T`.
    pub const fn new(name: &'static str) -> StepId<T> {
        StepId { name, value: std::marker::PhantomData }
    }

    /// The id.
    pub const fn name(&self) -> &'static str {
        self.name
    }
}

impl<T> Clone for StepId<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for StepId<T> {}

impl<T> From<StepId<T>> for String {
    fn from(id: StepId<T>) -> String {
        id.name.to_string()
    }
}

/// Names a step read as a `T`: a [`StepId`] (whose type must be `T`), or an id made
/// while planning (`games:<source>:<file>`), whose type the reader states.
pub trait StepRef<T> {
    /// The step's id.
    fn step_id(self) -> String;
}

impl<T> StepRef<T> for StepId<T> {
    fn step_id(self) -> String {
        self.name.to_string()
    }
}

impl<T> StepRef<T> for String {
    fn step_id(self) -> String {
        self
    }
}

impl<T> StepRef<T> for &String {
    fn step_id(self) -> String {
        self.clone()
    }
}

/// A step being declared: its inputs, files and parameters, before its function (which
/// captures the handles [`Declaring::input`] returns). [`Declaring::value`] and its
/// siblings end the declaration with what the step writes.
pub struct Declaring<'p> {
    id: String,
    rule: &'static Rule,
    reads: Vec<String>,
    files: Vec<(String, Hash)>,
    params: Vec<Vec<String>>,
    pipeline: &'p serde_json::Value,
}

impl<'p> Declaring<'p> {
    /// Starts declaring step `id` of `rule`; `pipeline` is the pipeline's parameters as
    /// JSON, which [`Declaring::param`] reads.
    pub fn new(
        id: impl Into<String>,
        rule: &'static Rule,
        pipeline: &'p serde_json::Value,
    ) -> Declaring<'p> {
        Declaring {
            id: id.into(),
            rule,
            reads: Vec::new(),
            files: Vec::new(),
            params: Vec::new(),
            pipeline,
        }
    }

    /// The step's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Reads the stored value of step `id`: a [`StepId`] (its type is the producer's), or
    /// an id made while planning (a file's or a month's step), read as `T`.
    pub fn input<T: serde::de::DeserializeOwned + Send + Sync + 'static>(
        &mut self,
        id: impl StepRef<T>,
    ) -> Input<T> {
        let id = id.step_id();
        self.reads.push(id.clone());
        Input { id, load: |cx, id| cx.load(id) }
    }

    /// [`Declaring::input`] when step `id` is among `declared` (an optional phase: the
    /// engine, the explorer index), else `None`.
    pub fn input_if<T: serde::de::DeserializeOwned + Send + Sync + 'static>(
        &mut self,
        declared: &[Decl<'_>],
        id: StepId<T>,
    ) -> Option<Input<T>> {
        declared.iter().any(|d| d.id == id.name()).then(|| self.input(id))
    }

    /// Reads the value of [`Action::Memory`] step `id`, of type `T`.
    pub fn input_in_memory<T: Send + Sync + 'static>(&mut self, id: impl Into<String>) -> Input<T> {
        let id = id.into();
        self.reads.push(id.clone());
        Input { id, load: |cx, id| cx.load_in_memory(id) }
    }

    /// Runs after step `id` and is keyed by its output without loading a value: for a
    /// step that writes one file itself ([`Action::File`]), whose output hash is the
    /// file's BLAKE3 (the PostgreSQL copy of the store).
    /// The handle gives [`Ctx::hash_of`] only: loading it is an error.
    pub fn after(&mut self, id: impl Into<String>) -> Input<()> {
        let id = id.into();
        self.reads.push(id.clone());
        Input {
            id,
            load: |cx, id| Err(cx.fail(format!("step {id} is read for its output hash only"))),
        }
    }

    /// Hashes an input file (or any content named by a hash).
    pub fn file(&mut self, name: impl Into<String>, hash: impl Into<Hash>) -> &mut Self {
        self.files.push((name.into(), hash.into()));
        self
    }

    /// The pipeline parameter at `path` (`"tree.max_ply"`; one segment per `.`, or a
    /// whole table: `"tree"`), read as `T` and made part of the step's key at once.
    pub fn param<T: serde::de::DeserializeOwned>(&mut self, path: &str) -> Result<T, BuildError> {
        self.param_at(&path.split('.').collect::<Vec<_>>())
    }

    /// Like [`Declaring::param`], for a path whose segments may hold dots (source names).
    pub fn param_at<T: serde::de::DeserializeOwned>(
        &mut self,
        path: &[&str],
    ) -> Result<T, BuildError> {
        let value = path
            .iter()
            .try_fold(self.pipeline, |v, key| v.get(key))
            .unwrap_or(&serde_json::Value::Null);
        let read = T::deserialize(value).map_err(|e| BuildError::Step {
            step: self.id.clone(),
            message: format!("pipeline parameter {}: {e}", path.join(".")),
        })?;
        self.key_at(path);
        Ok(read)
    }

    /// Makes the pipeline parameter at `path` part of the key without reading it: for a
    /// value the planner resolved from it (the engine's binary found from `[engine]`).
    pub fn key_at(&mut self, path: &[&str]) -> &mut Self {
        self.params.push(path.iter().map(|s| s.to_string()).collect());
        self
    }

    /// Ends the declaration: a value kept in the cache ([`Action::Value`]).
    pub fn value<'a>(
        self,
        run: impl Fn(&Ctx<'_>) -> Result<Produced, BuildError> + Send + Sync + 'a,
    ) -> Decl<'a> {
        self.finish(Action::Value(Box::new(run)))
    }

    /// Ends the declaration: a value kept in memory only ([`Action::Memory`]).
    pub fn memory<'a>(
        self,
        run: impl Fn(&Ctx<'_>) -> Result<Produced, BuildError> + Send + Sync + 'a,
    ) -> Decl<'a> {
        self.finish(Action::Memory(Box::new(run)))
    }

    /// Ends the declaration: files under `target` ([`Action::Files`]).
    pub fn files<'a>(
        self,
        target: PathBuf,
        run: impl Fn(&Ctx<'_>) -> Result<(Vec<ExportFile>, String), BuildError> + Send + Sync + 'a,
    ) -> Decl<'a> {
        self.finish(Action::Files(target, Box::new(run)))
    }

    /// Ends the declaration: one file the step writes itself ([`Action::File`]).
    pub fn writes_file<'a>(
        self,
        target: PathBuf,
        run: impl Fn(&Ctx<'_>) -> Result<String, BuildError> + Send + Sync + 'a,
    ) -> Decl<'a> {
        self.finish(Action::File(target, Box::new(run)))
    }

    fn finish<'a>(self, action: Action<'a>) -> Decl<'a> {
        let Declaring { id, rule, reads, files, params, pipeline: _ } = self;
        Decl { id, rule, reads, files, params, priority: 0, action, left: None, references: None }
    }
}
