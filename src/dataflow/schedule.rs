//! The scheduler: runs a [`Plan`] in dependency order on all cores.
//!
//! A step starts as soon as the steps it reads have finished; steps that become ready
//! together start highest [`Decl::priority`] first (rayon's FIFO scope: the long chain
//! first, side work on the idle core). Each step is keyed and then built, found fresh,
//! or (dry run) reported stale by [`Build`]; the first failure stops new steps from
//! starting and is returned once the running ones end.
//!
//! A step's value stays in memory only while a step that reads it has yet to finish:
//! when the last reader ends, the value is dropped (the cache still has it), so a run's
//! memory is that of the values in flight, not of every value the run made.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use super::cache::{Hash, hash_bytes};
use super::plan::{Action, Ctx, Decl, Inputs};
use super::{Build, BuildError, Memo, Output, Step};
use crate::diagnostics::Warning;

/// The declared steps of one pipeline, and the parameters they may depend on.
pub struct Plan<'a> {
    /// The steps, in declaration order.
    pub steps: Vec<Decl<'a>>,
    /// The pipeline's parameters as JSON (paths in [`Decl::params`] point into it).
    pub params: serde_json::Value,
}

/// A plan being run: its outputs so far.
pub(super) struct Running<'r> {
    plan: &'r Plan<'r>,
    index: HashMap<&'r str, usize>,
    outputs: Vec<OnceLock<Output>>,
    /// The in-memory values of finished steps that readers still need.
    memos: Vec<Mutex<Option<Memo>>>,
    dependents: Vec<Vec<usize>>,
    pending: Vec<AtomicUsize>,
    /// Per step, its readers that have not finished yet.
    readers_left: Vec<AtomicUsize>,
    failed: Mutex<Option<BuildError>>,
}

impl<'a> Plan<'a> {
    /// The index of every step by id, and the order a sequential run would take;
    /// an error names a step that reads an unknown step, a duplicate id, or a cycle.
    pub fn check(&self) -> Result<Vec<usize>, BuildError> {
        let fail =
            |step: &str, message: String| BuildError::Step { step: step.to_string(), message };
        let mut index = HashMap::new();
        for (i, decl) in self.steps.iter().enumerate() {
            if index.insert(decl.id.as_str(), i).is_some() {
                return Err(fail(&decl.id, "declared twice".into()));
            }
        }
        let mut pending: Vec<usize> = self.steps.iter().map(|d| d.reads.len()).collect();
        let mut dependents = vec![Vec::new(); self.steps.len()];
        for (i, decl) in self.steps.iter().enumerate() {
            for read in &decl.reads {
                let &from = index.get(read.as_str()).ok_or_else(|| {
                    fail(&decl.id, format!("reads {read}, which no step declares"))
                })?;
                dependents[from].push(i);
            }
        }
        let mut order: Vec<usize> = (0..self.steps.len()).filter(|&i| pending[i] == 0).collect();
        let mut next = 0;
        while next < order.len() {
            for &d in &dependents[order[next]] {
                pending[d] -= 1;
                if pending[d] == 0 {
                    order.push(d);
                }
            }
            next += 1;
        }
        if let Some(stuck) = (0..self.steps.len()).find(|&i| pending[i] > 0) {
            return Err(fail(&self.steps[stuck].id, "is part of a cycle of steps".into()));
        }
        Ok(order)
    }

    /// The hash of each parameter path a step depends on (JSON `null` when absent).
    pub fn param_hashes(&self, decl: &Decl<'_>) -> Vec<(String, Hash)> {
        decl.params
            .iter()
            .map(|path| {
                let value = path
                    .iter()
                    .try_fold(&self.params, |v, key| v.get(key))
                    .unwrap_or(&serde_json::Value::Null);
                let bytes = serde_json::to_vec(value).expect("JSON values serialize");
                (path.join("."), hash_bytes(&bytes))
            })
            .collect()
    }

    /// Runs every step (or, for a dry-run build, reports what would run); returns the
    /// warnings the steps that ran reported.
    pub fn run(&self, build: &Build) -> Result<Vec<Warning>, BuildError> {
        self.check()?;
        let running = Running::new(self);
        let warnings = Mutex::new(Vec::new());
        let ready: Vec<usize> =
            (0..self.steps.len()).filter(|&i| self.steps[i].reads.is_empty()).collect();
        rayon::scope_fifo(|scope| running.spawn(scope, build, &warnings, ready));
        if let Some(error) = running.failed.into_inner().expect("failure poisoned") {
            return Err(error);
        }
        Ok(warnings.into_inner().expect("warnings poisoned"))
    }
}

impl<'r> Running<'r> {
    fn new(plan: &'r Plan<'r>) -> Running<'r> {
        let index: HashMap<&str, usize> =
            plan.steps.iter().enumerate().map(|(i, d)| (d.id.as_str(), i)).collect();
        let mut dependents = vec![Vec::new(); plan.steps.len()];
        for (i, decl) in plan.steps.iter().enumerate() {
            for read in &decl.reads {
                dependents[index[read.as_str()]].push(i);
            }
        }
        Running {
            plan,
            index,
            outputs: plan.steps.iter().map(|_| OnceLock::new()).collect(),
            memos: plan.steps.iter().map(|_| Mutex::new(None)).collect(),
            readers_left: dependents.iter().map(|d| AtomicUsize::new(d.len())).collect(),
            dependents,
            pending: plan.steps.iter().map(|d| AtomicUsize::new(d.reads.len())).collect(),
            failed: Mutex::new(None),
        }
    }

    /// Starts the steps of `ready`, highest priority first.
    fn spawn<'s>(
        &'s self,
        scope: &rayon::ScopeFifo<'s>,
        build: &'s Build,
        warnings: &'s Mutex<Vec<Warning>>,
        mut ready: Vec<usize>,
    ) {
        ready.sort_by_key(|&i| std::cmp::Reverse(self.plan.steps[i].priority));
        for i in ready {
            scope.spawn_fifo(move |scope| {
                if self.failed.lock().expect("failure poisoned").is_some() {
                    return;
                }
                match self.run_step(build, warnings, i) {
                    Ok(mut output) => {
                        // Kept apart for its readers; a value nobody reads goes now.
                        let memo = output.take_memo();
                        if self.dependents[i].is_empty() {
                            drop(Output::with_memo(memo));
                        } else {
                            *self.memo_slot(i) = memo;
                        }
                        let _ = self.outputs[i].set(output);
                        self.release_inputs(i);
                        let now_ready: Vec<usize> = self.dependents[i]
                            .iter()
                            .copied()
                            .filter(|&d| self.pending[d].fetch_sub(1, Ordering::AcqRel) == 1)
                            .collect();
                        self.spawn(scope, build, warnings, now_ready);
                    }
                    Err(error) => {
                        self.failed.lock().expect("failure poisoned").get_or_insert(error);
                    }
                }
            });
        }
    }

    fn memo_slot(&self, i: usize) -> std::sync::MutexGuard<'_, Option<Memo>> {
        self.memos[i].lock().expect("memo poisoned")
    }

    /// Step `i` finished: the values it read that no other step still has to read leave
    /// memory.
    fn release_inputs(&self, i: usize) {
        for read in &self.plan.steps[i].reads {
            let r = self.index[read.as_str()];
            if self.readers_left[r].fetch_sub(1, Ordering::AcqRel) == 1 {
                let memo = self.memo_slot(r).take();
                drop(Output::with_memo(memo));
            }
        }
    }

    /// Keys step `i` from its rule's code, its parameters and its inputs, then builds it.
    fn run_step(
        &self,
        build: &Build,
        warnings: &Mutex<Vec<Warning>>,
        i: usize,
    ) -> Result<Output, BuildError> {
        let decl = &self.plan.steps[i];
        let mut step = Step::new(decl.id.clone(), decl.rule.file, self.plan.param_hashes(decl));
        for read in &decl.reads {
            step = step.input(read.clone(), &self.output(read).hash);
        }
        for (name, hash) in &decl.files {
            step = step.input(name.clone(), hash);
        }
        // Listed by the periodic progress lines while it runs (when stderr is no terminal).
        let _running = crate::progress::task(&decl.id);
        // The step's own warnings go with its record, and into this run's list.
        let sink = step.sink.clone();
        let ctx = Ctx { build, id: &decl.id, plan: self, warnings: &sink };
        let output = match &decl.action {
            Action::Value(run) => {
                let ctx = &ctx;
                let left = decl.left.as_ref().map(|left| move || left(ctx));
                let output = build.value(
                    step,
                    || run(ctx),
                    left.as_ref().map(|l| l as &dyn Fn() -> Result<String, BuildError>),
                );
                match (output, &decl.references) {
                    (Ok(output), Some(references)) => {
                        build.mark_references(&decl.id, &output, references).map(|()| output)
                    }
                    (output, _) => output,
                }
            }
            Action::Memory(run) => build.memory(step, || run(&ctx)),
            Action::Files(target, run) => build.files(step, target, || run(&ctx)),
            Action::File(target, run) => build.external(step, target, || run(&ctx)),
        };
        warnings
            .lock()
            .expect("warnings poisoned")
            .append(&mut sink.lock().expect("warnings poisoned"));
        output
    }
}

impl Inputs for Running<'_> {
    fn reads(&self, id: &str) -> &[String] {
        &self.plan.steps[self.index[id]].reads
    }

    fn output(&self, id: &str) -> &Output {
        self.outputs[self.index[id]].get().expect("a step runs after the steps it reads")
    }

    fn memo(&self, id: &str) -> Option<Memo> {
        self.memo_slot(self.index[id]).clone()
    }

    fn memory_value(&self, build: &Build, id: &str) -> Result<Memo, BuildError> {
        let decl = &self.plan.steps[self.index[id]];
        if let Some(memo) = self.memo(id) {
            return Ok(memo);
        }
        let Action::Memory(run) = &decl.action else {
            return Err(BuildError::Step {
                step: id.to_string(),
                message: "is not a memory step".into(),
            });
        };
        // Its warnings were reported by the run that built it.
        let ctx = Ctx { build, id: &decl.id, plan: self, warnings: &Mutex::new(Vec::new()) };
        Ok(run(&ctx)?.value)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;
    use std::sync::{Arc, Weak};
    use std::time::{Duration, Instant};

    use super::*;
    use crate::dataflow::{Produced, Rule};

    static RULE: Rule =
        Rule { name: "test", about: "a step of the scheduler's tests", file: file!() };

    #[test]
    fn a_value_leaves_memory_when_its_last_reader_ends() {
        let dir = tempfile::tempdir().unwrap();
        let build = Build::new(dir.path().to_path_buf(), false, Box::new(|_| {}));
        let seen: Mutex<Option<Weak<Vec<u8>>>> = Mutex::new(None);
        let released = AtomicBool::new(false);
        let reader = |cx: &Ctx<'_>| {
            let value: Arc<Vec<u8>> = cx.load("big")?;
            *seen.lock().unwrap() = Some(Arc::downgrade(&value));
            Ok(Produced::new(value.len(), "read"))
        };
        // `last` runs after both readers: by then the value is gone (freed on a
        // background thread, hence the wait), though the run goes on.
        let last = |_: &Ctx<'_>| {
            let weak = seen.lock().unwrap().clone().expect("a reader ran");
            let start = Instant::now();
            while weak.upgrade().is_some() && start.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(5));
            }
            released.store(weak.upgrade().is_none(), Ordering::SeqCst);
            Ok(Produced::new(0u8, "checked"))
        };
        let steps = vec![
            Decl::new(
                "big",
                &RULE,
                Action::Value(Box::new(|_: &Ctx<'_>| {
                    Ok(Produced::new(vec![7u8; 1 << 20], "made"))
                })),
            ),
            Decl::new("b", &RULE, Action::Value(Box::new(reader))).reads("big"),
            Decl::new("c", &RULE, Action::Value(Box::new(reader))).reads("big"),
            Decl::new("last", &RULE, Action::Value(Box::new(last))).reads("b").reads("c"),
        ];
        Plan { steps, params: serde_json::Value::Null }.run(&build).unwrap();
        assert!(released.load(Ordering::SeqCst), "the value outlived its readers");
    }

    #[test]
    fn loading_a_step_not_declared_as_read_is_an_error_naming_both() {
        let dir = tempfile::tempdir().unwrap();
        let build = Build::new(dir.path().to_path_buf(), false, Box::new(|_| {}));
        let sneaky = |cx: &Ctx<'_>| {
            let value: Arc<u8> = cx.load("input")?;
            Ok(Produced::new(*value, "read"))
        };
        // `input` runs first (the reader waits for `first`, which waits for `input`), so
        // only the missing declaration can fail the load.
        let steps = vec![
            Decl::new(
                "input",
                &RULE,
                Action::Value(Box::new(|_: &Ctx<'_>| Ok(Produced::new(1u8, "made")))),
            ),
            Decl::new(
                "first",
                &RULE,
                Action::Value(Box::new(|_: &Ctx<'_>| Ok(Produced::new(2u8, "made")))),
            )
            .reads("input"),
            Decl::new("sneaky", &RULE, Action::Value(Box::new(sneaky))).reads("first"),
        ];
        let error =
            Plan { steps, params: serde_json::Value::Null }.run(&build).unwrap_err().to_string();
        assert!(
            error.contains("sneaky")
                && error.contains("loads step input without declaring that it reads it"),
            "{error}"
        );
    }
}
