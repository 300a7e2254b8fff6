//! `okb graph`: the declared steps of the loaded pipeline, with what each reads and
//! whether it is fresh, as text, Graphviz DOT, Mermaid or JSON.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use miette::IntoDiagnostic;
use serde_json::json;

use crate::dataflow::{Build, Plan, Status, StepReport};
use crate::make::{self, MakeOptions};
use crate::pipeline::Loaded;

/// Output formats of `okb graph`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GraphFormat {
    /// One line per step: state, id, the steps it reads.
    Text,
    /// Graphviz (`okb graph --format dot | dot -Tsvg > graph.svg`).
    Dot,
    /// A Mermaid flowchart (renders in GitHub Markdown).
    Mermaid,
    /// Every step with its rule, reads, input files, parameters, outputs and state.
    Json,
}

/// Arguments of `okb graph`.
#[derive(Debug, Clone, clap::Args)]
pub struct GraphArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: GraphFormat,
    /// One node per rule (parse, tree, export:csv…) instead of per step, without states.
    #[arg(long)]
    pub rules: bool,
    /// Mirror folders, as for make.
    #[arg(long, value_name = "DIR")]
    pub mirror: Vec<PathBuf>,
}

/// A node to draw: a step, or several steps of one rule drawn as one.
struct Node {
    id: String,
    label: String,
    state: &'static str,
    reason: Option<String>,
    reads: BTreeSet<String>,
}

/// Prints the graph on stdout.
pub fn run(args: &GraphArgs, loaded: &Loaded) -> miette::Result<()> {
    let options = MakeOptions {
        mirrors: crate::sources::mirrors(&args.mirror),
        offline: true,
        dry_run: true,
        replay_warnings: false,
    };
    let build = Build::new(loaded.layout().cache, true, Box::new(|_| {}));
    let plan = make::plan(loaded, &options, &build, &mut Vec::new())?;
    plan.run(&build).into_diagnostic()?;
    let reports: BTreeMap<String, StepReport> = build
        .reports
        .lock()
        .expect("reports poisoned")
        .drain(..)
        .map(|r| (r.id.clone(), r))
        .collect();
    if args.format == GraphFormat::Json {
        println!("{}", serde_json::to_string_pretty(&to_json(&plan, &reports)).into_diagnostic()?);
        return Ok(());
    }
    let nodes = if args.rules { rule_nodes(&plan) } else { step_nodes(&plan, &reports) };
    let text = match args.format {
        GraphFormat::Text => text(&nodes),
        GraphFormat::Dot => dot(&nodes),
        GraphFormat::Mermaid => mermaid(&nodes),
        GraphFormat::Json => unreachable!("handled above"),
    };
    print!("{text}");
    Ok(())
}

fn state_of(report: Option<&StepReport>) -> (&'static str, Option<String>) {
    match report.map(|r| (r.status, r.reason.clone())) {
        Some((Status::Fresh, _)) => ("fresh", None),
        Some((_, reason)) => ("stale", reason),
        None => ("unknown", None),
    }
}

/// One node per step, except that a rule with many steps that read nothing (game files)
/// is drawn once, with a count.
fn step_nodes(plan: &Plan<'_>, reports: &BTreeMap<String, StepReport>) -> Vec<Node> {
    let mut per_rule: BTreeMap<&str, usize> = BTreeMap::new();
    for decl in plan.steps.iter().filter(|d| d.reads.is_empty()) {
        *per_rule.entry(decl.rule.name).or_default() += 1;
    }
    let grouped = |rule: &str| per_rule.get(rule).is_some_and(|&n| n > 4);
    let group_id = |rule: &str| format!("{rule}:*");
    let mut nodes: Vec<Node> = Vec::new();
    for decl in &plan.steps {
        let (state, reason) = state_of(reports.get(&decl.id));
        let reads = decl
            .reads
            .iter()
            .map(|r| match plan.steps.iter().find(|d| &d.id == r) {
                Some(d) if d.reads.is_empty() && grouped(d.rule.name) => group_id(d.rule.name),
                _ => r.clone(),
            })
            .collect();
        if decl.reads.is_empty() && grouped(decl.rule.name) {
            let id = group_id(decl.rule.name);
            match nodes.iter_mut().find(|n| n.id == id) {
                Some(node) if state == "stale" => node.state = "stale",
                Some(_) => {}
                None => {
                    let label = format!("{} ×{}", id, per_rule[decl.rule.name]);
                    nodes.push(Node { id, label, state, reason: None, reads });
                }
            }
            continue;
        }
        nodes.push(Node { id: decl.id.clone(), label: decl.id.clone(), state, reason, reads });
    }
    nodes
}

/// One node per rule, edges where a step of one reads a step of the other.
fn rule_nodes(plan: &Plan<'_>) -> Vec<Node> {
    let rule_of: BTreeMap<&str, &str> =
        plan.steps.iter().map(|d| (d.id.as_str(), d.rule.name)).collect();
    let mut nodes: Vec<Node> = Vec::new();
    for decl in &plan.steps {
        let reads: BTreeSet<String> =
            decl.reads.iter().map(|r| rule_of[r.as_str()].to_string()).collect();
        match nodes.iter_mut().find(|n| n.id == decl.rule.name) {
            Some(node) => node.reads.extend(reads),
            None => nodes.push(Node {
                id: decl.rule.name.into(),
                label: decl.rule.name.into(),
                state: "rule",
                reason: None,
                reads,
            }),
        }
    }
    nodes
}

fn text(nodes: &[Node]) -> String {
    let width = nodes.iter().map(|n| n.label.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    for node in nodes {
        let reads = if node.reads.is_empty() {
            String::new()
        } else {
            format!(" ← {}", node.reads.iter().cloned().collect::<Vec<_>>().join(", "))
        };
        let state =
            if node.state == "rule" { String::new() } else { format!("{:<6} ", node.state) };
        out.push_str(format!("{state}{:<width$}{reads}", node.label).trim_end());
        out.push('\n');
        if let Some(reason) = &node.reason {
            out.push_str(&format!("{:7}because {reason}\n", ""));
        }
    }
    out
}

/// A name Mermaid and DOT accept as a node id.
fn ident(id: &str) -> String {
    id.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}

fn mermaid(nodes: &[Node]) -> String {
    let mut out = String::from("flowchart LR\n");
    for node in nodes {
        let class = if node.state == "rule" { String::new() } else { format!(":::{}", node.state) };
        out.push_str(&format!("    {}[\"{}\"]{class}\n", ident(&node.id), node.label));
    }
    for node in nodes {
        for read in &node.reads {
            out.push_str(&format!("    {} --> {}\n", ident(read), ident(&node.id)));
        }
    }
    if nodes.iter().any(|n| n.state != "rule") {
        out.push_str("    classDef fresh fill:#d4f7d4,stroke:#2a7a2a\n    classDef stale fill:#fde2c4,stroke:#b35c00\n");
    }
    out
}

fn dot(nodes: &[Node]) -> String {
    let mut out = String::from(
        "digraph okb {\n    rankdir=LR;\n    node [shape=box, style=\"rounded,filled\", fillcolor=white];\n",
    );
    for node in nodes {
        let fill = match node.state {
            "fresh" => ", fillcolor=\"#d4f7d4\"",
            "stale" => ", fillcolor=\"#fde2c4\"",
            _ => "",
        };
        out.push_str(&format!("    {} [label=\"{}\"{fill}];\n", ident(&node.id), node.label));
    }
    for node in nodes {
        for read in &node.reads {
            out.push_str(&format!("    {} -> {};\n", ident(read), ident(&node.id)));
        }
    }
    out.push_str("}\n");
    out
}

fn to_json(plan: &Plan<'_>, reports: &BTreeMap<String, StepReport>) -> serde_json::Value {
    let steps: Vec<serde_json::Value> = plan
        .steps
        .iter()
        .map(|decl| {
            let (state, reason) = state_of(reports.get(&decl.id));
            let (writes, target) = decl.action.writes();
            json!({
                "id": decl.id,
                "rule": decl.rule.name,
                "code": decl.rule.file,
                "reads": decl.reads,
                "files": decl.files.iter().map(|(name, hash)| json!({"name": name, "blake3": hash})).collect::<Vec<_>>(),
                "params": decl.params.iter().map(|p| p.join(".")).collect::<Vec<_>>(),
                "writes": writes,
                "target": target.map(|t| t.display().to_string()),
                "state": state,
                "reason": reason,
            })
        })
        .collect();
    json!({ "steps": steps })
}
