//! `validation-report`: Phase 3's findings as files (validation.{json,txt}, stubs TSV).


use super::ids::{VALIDATE};
use crate::dataflow::{BuildError, Ctx, Decl, ExportFile, Input, Rule};
use super::planning::{Planner, Planning};
use crate::validate::report::ValidationReport;

/// The rule.
pub static RULE: Rule = Rule { name: "validation-report", about: "validation.{json,txt} and the stub lines", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// The files the step may write into its folder (what `okb clean` removes).
pub const FILES: [&str; 3] = ["validation.json", "validation.txt", "validation-stubs.tsv"];

/// With `[validate]`: its report files beside the store.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    if p.loaded.pipeline.validate.is_none() {
        return Ok(Vec::new());
    }
    let mut d = p.declare("validation-report", &RULE);
    let report: Input<ValidationReport> = d.input(VALIDATE);
    let stubs: bool = d.param("validate.stubs")?;
    let run = move |cx: &Ctx<'_>| {
        let report = cx.get(&report)?;
        let mut files = vec![
            ExportFile { name: FILES[0].into(), bytes: report.to_json() },
            ExportFile { name: FILES[1].into(), bytes: report.to_table() },
        ];
        if stubs {
            files.push(ExportFile { name: FILES[2].into(), bytes: report.to_stub_tsv() });
        }
        Ok((files, format!("{} variations reported", report.missing.len())))
    };
    Ok(vec![d.files(p.build_dir(), run).priority(300)])
}
