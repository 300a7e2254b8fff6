//! `validation-report`: Phase 3's findings as files (validation.{json,txt}, stubs TSV).

use std::path::PathBuf;
use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, ExportFile, Rule};
use crate::validate::report::ValidationReport;

/// The rule.
pub static RULE: Rule = Rule { name: "validation-report", about: "validation.{json,txt} and the stub lines", file: file!() };

/// The files the step may write into its folder (what `okb clean` removes).
pub const FILES: [&str; 3] = ["validation.json", "validation.txt", "validation-stubs.tsv"];

/// Writes the report files into `dir` (and the stubs TSV when `stubs`).
pub fn declare(dir: PathBuf, stubs: bool) -> Decl<'static> {
    let run = move |cx: &Ctx<'_>| {
        let report: Arc<ValidationReport> = cx.load("validate")?;
        let mut files = vec![
            ExportFile { name: FILES[0].into(), bytes: report.to_json() },
            ExportFile { name: FILES[1].into(), bytes: report.to_table() },
        ];
        if stubs {
            files.push(ExportFile { name: FILES[2].into(), bytes: report.to_stub_tsv() });
        }
        Ok((files, format!("{} variations reported", report.missing.len())))
    };
    Decl::new("validation-report", &RULE, Action::Files(dir, Box::new(run))).reads("validate").param("validate.stubs").priority(300)
}
