//! `repertoire-report:<name>`: a repertoire against the knowledge base, as files in
//! `build/repertoire-<name>/`: gaps, coverage and engine flags (`.json` and `.txt`).

use std::path::PathBuf;
use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, ExportFile, Rule};
use crate::engine::Annotations;
use crate::repertoire::{RepertoireSpec, Repertoire, flags, flow, report};
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "repertoire-report", about: "gaps, coverage and engine flags of a repertoire", file: file!() };

/// Writes the reports of repertoire `name` (read by step `repertoire:<name>`) into `dir`.
pub fn declare(name: &str, spec: &RepertoireSpec, dir: PathBuf, with_engine: bool) -> Decl<'static> {
    let (source, spec) = (format!("repertoire:{name}"), spec.clone());
    let reads = source.clone();
    let run = move |cx: &Ctx<'_>| {
        let rep: Arc<Repertoire> = cx.load(&source)?;
        let tree: Arc<Tree> = cx.load("tree")?;
        let annotations: Option<Arc<Annotations>> = if with_engine { Some(cx.load("engine")?) } else { None };
        let plies = if spec.plies.is_empty() { flow::default_plies(&rep) } else { spec.plies.clone() };
        let flow = flow::compute(&rep, &tree, annotations.as_deref(), &flow::FlowParams { min_share: spec.min_share, plies });
        let flags = annotations.as_deref().map(|a| flags::flags(&rep, a, spec.eval_floor, spec.max_loss));
        let reports = report::Reports { rep: &rep, flow: &flow, flags: flags.as_deref(), min_share: spec.min_share };
        let files = vec![
            ExportFile { name: "gaps.json".into(), bytes: reports.gaps_json() },
            ExportFile { name: "gaps.txt".into(), bytes: reports.gaps_text() },
            ExportFile { name: "coverage.json".into(), bytes: reports.coverage_json() },
            ExportFile { name: "coverage.txt".into(), bytes: reports.coverage_text() },
            ExportFile { name: "flags.json".into(), bytes: reports.flags_json() },
            ExportFile { name: "flags.txt".into(), bytes: reports.flags_text() },
        ];
        let last = flow.coverage.last().map(|p| format!(", {:.1} % inside at ply {}", p.inside * 100.0, p.ply)).unwrap_or_default();
        Ok((files, format!("{} gaps{last}, {} engine flags", flow.gaps.len(), flags.map_or(0, |f| f.len()))))
    };
    let param = |key: &str| vec!["repertoires".to_string(), name.to_string(), key.to_string()];
    let decl = Decl::new(format!("repertoire-report:{name}"), &RULE, Action::Files(dir, Box::new(run)))
        .reads(reads)
        .reads("tree")
        .param_at(param("min_share"))
        .param_at(param("eval_floor"))
        .param_at(param("max_loss"))
        .param_at(param("plies"))
        .priority(300);
    if with_engine { decl.reads("engine") } else { decl }
}
