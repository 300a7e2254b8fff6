//! `repertoire-report:<name>`: a repertoire against the knowledge base, as files in
//! `build/repertoire-<name>/`: gaps, coverage and engine flags (`.json` and `.txt`).


use super::ids::{ENGINE, TREE};
use crate::dataflow::{BuildError, Ctx, Decl, ExportFile, Input, Rule};
use super::planning::{Planner, Planning, is_declared, repertoire_evals_id, repertoire_id};
use crate::engine::Annotations;
use crate::repertoire::{Repertoire, flags, flow, report, scope};
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "repertoire-report", about: "gaps, coverage and engine flags of a repertoire", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per repertoire: its reports in `build/repertoire-<name>/`.
pub fn plan(p: &Planning<'_>, declared: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    p.repertoires.iter().map(|file| declare(p, declared, &file.name)).collect()
}

/// Reports on repertoire `name` against the tree (and the evaluations, when declared).
fn declare(p: &Planning<'_>, declared: &[Decl<'static>], name: &str) -> Result<Decl<'static>, BuildError> {
    let mut d = p.declare(format!("repertoire-report:{name}"), &RULE);
    let rep: Input<Repertoire> = d.input(repertoire_id(name));
    let tree: Input<Tree> = d.input(TREE);
    let min_probability: f64 = d.param_at(&["repertoires", name, "min_probability"])?;
    let min_share: Option<f64> = d.param_at(&["repertoires", name, "min_share"])?;
    let scope_lines: Option<Vec<String>> = d.param_at(&["repertoires", name, "scope"])?;
    let rep_name = name.to_string();
    let eval_floor: i32 = d.param_at(&["repertoires", name, "eval_floor"])?;
    let max_loss: i32 = d.param_at(&["repertoires", name, "max_loss"])?;
    let plies: Option<Vec<u16>> = d.param_at(&["repertoires", name, "plies"])?;
    let engine: Option<Input<Annotations>> = d.input_if(declared, ENGINE);
    let evals_id = repertoire_evals_id(name);
    let own: Option<Input<Annotations>> = is_declared(declared, &evals_id).then(|| d.input(evals_id));
    let run = move |cx: &Ctx<'_>| {
        let (rep, tree) = (cx.get(&rep)?, cx.get(&tree)?);
        let annotations = engine.as_ref().map(|e| cx.get(e)).transpose()?;
        // The repertoire's own positions, at any ply; the tree's for the gaps.
        let own = own.as_ref().map(|e| cx.get(e)).transpose()?;
        let plies = plies.clone().filter(|p| !p.is_empty()).unwrap_or_else(|| flow::default_plies(&rep));
        let scope = scope::scope(&rep, scope_lines.as_deref()).map_err(|why| cx.fail(format!("[repertoires.{rep_name}] {why}")))?;
        let params = flow::FlowParams { min_probability, min_share: min_share.unwrap_or(0.0), plies, scope };
        let flow = flow::compute(&rep, &tree, annotations.as_deref(), &params);
        let flagged = own.as_deref().or(annotations.as_deref());
        let flags = flagged.map(|a| flags::flags(&rep, a, eval_floor, max_loss));
        let unevaluated = flagged.map(|a| a.failures.values().collect()).unwrap_or_default();
        let reports = report::Reports { rep: &rep, flow: &flow, flags: flags.as_deref(), params: &params, unevaluated };
        let files = vec![
            ExportFile { name: "gaps.json".into(), bytes: reports.gaps_json() },
            ExportFile { name: "gaps.txt".into(), bytes: reports.gaps_text() },
            ExportFile { name: "coverage.json".into(), bytes: reports.coverage_json() },
            ExportFile { name: "coverage.txt".into(), bytes: reports.coverage_text() },
            ExportFile { name: "flags.json".into(), bytes: reports.flags_json() },
            ExportFile { name: "flags.txt".into(), bytes: reports.flags_text() },
        ];
        let last = flow.coverage.last().map(|p| format!(", {:.1} % inside at ply {}", p.inside * 100.0, p.ply)).unwrap_or_default();
        Ok((files, format!("{} gaps of ≥ {:.2} %{last}, {} engine flags", flow.gaps.len(), min_probability * 100.0, flags.map_or(0, |f| f.len()))))
    };
    Ok(d.files(p.repertoire_dir(name), run).priority(300))
}
