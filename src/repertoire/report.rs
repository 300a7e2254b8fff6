//! The repertoire reports as files: JSON for programs, aligned text for people.

use serde::Serialize;
use serde_json::json;

use super::Repertoire;
use super::flags::Flag;
use super::flow::{Flow, FlowParams};
use crate::engine::Failure;

/// What the report files say about one repertoire.
pub struct Reports<'a> {
    /// The repertoire.
    pub rep: &'a Repertoire,
    /// Coverage, reach and gaps.
    pub flow: &'a Flow,
    /// Engine flags (`None` without engine annotations).
    pub flags: Option<&'a [Flag]>,
    /// The settings the gaps were cut and weighed by (the cuts and the scope).
    pub params: &'a FlowParams,
    /// The repertoire's positions left without an evaluation, and why (no engine, or
    /// its searches failed): the moves into and out of them are not checked.
    pub unevaluated: Vec<&'a Failure>,
}

fn pretty(value: &impl Serialize) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("reports serialize");
    bytes.push(b'\n');
    bytes
}

fn percent(x: f64) -> String {
    format!("{:.2}%", x * 100.0)
}

impl Reports<'_> {
    fn head(&self) -> serde_json::Value {
        let rep = self.rep;
        json!({"repertoire": rep.name, "color": rep.color, "positions": rep.nodes.len(), "own_moves": rep.own_moves(), "chapters": rep.chapters, "known_positions": self.flow.known})
    }

    /// `gaps.json`.
    pub fn gaps_json(&self) -> Vec<u8> {
        let mut v = self.head();
        v["min_probability"] = json!(self.params.min_probability);
        v["min_share"] = json!(self.params.min_share);
        v["scope"] = json!(self.params.scope);
        v["gaps"] = json!(self.flow.gaps);
        pretty(&v)
    }

    /// Which gaps are listed, in words: the cut by probability, and by share when set.
    fn cut(&self) -> String {
        let by_share = if self.params.min_share > 0.0 {
            format!(
                " and played in at least {} of a position's games (min_share)",
                percent(self.params.min_share)
            )
        } else {
            String::new()
        };
        format!(
            "met with a probability of at least {} along the repertoire (min_probability){by_share}",
            percent(self.params.min_probability)
        )
    }

    /// `gaps.txt`: one row per unanswered reply, most likely first.
    pub fn gaps_text(&self) -> Vec<u8> {
        let (rep, gaps) = (self.rep, &self.flow.gaps);
        let mut out = format!(
            "Repertoire {} ({}): {} unanswered replies {}\n",
            rep.name,
            rep.color.word(),
            gaps.len(),
            self.cut()
        );
        out.push_str(&format!("Scope: {}\n\n", self.params.scope.describe()));
        out.push_str(&format!(
            "{:>4}  {:>7}  {:>7}  {:>7}  {:>7}  {:>6}  {:>5}  line\n",
            "#", "meet", "reach", "share", "games", "score", "eval"
        ));
        for (i, g) in gaps.iter().enumerate() {
            let eval = g.eval.map_or("-".to_string(), |e| format!("{e:+}"));
            let name = g.opening.as_deref().map(|n| format!("  ({n})")).unwrap_or_default();
            out.push_str(&format!(
                "{:>4}  {:>7}  {:>7}  {:>7}  {:>7}  {:>6}  {:>5}  {}{name}\n",
                i + 1,
                percent(g.probability),
                percent(g.reach),
                percent(g.share),
                g.games,
                percent(g.score),
                eval,
                g.line
            ));
        }
        out.into_bytes()
    }

    /// `coverage.json`.
    pub fn coverage_json(&self) -> Vec<u8> {
        let mut v = self.head();
        v["coverage"] = json!(self.flow.coverage);
        pretty(&v)
    }

    /// `coverage.txt`: inside / left / ended per ply.
    pub fn coverage_text(&self) -> Vec<u8> {
        let rep = self.rep;
        let mut out = format!(
            "Repertoire {} ({}): opponents' play that stays inside, by ply ({} positions, {} with games in the knowledge base)\n\n",
            rep.name,
            rep.color.word(),
            rep.nodes.len(),
            self.flow.known
        );
        out.push_str(&format!("{:>4}  {:>8}  {:>8}  {:>8}\n", "ply", "inside", "left", "ended"));
        for p in &self.flow.coverage {
            out.push_str(&format!(
                "{:>4}  {:>8}  {:>8}  {:>8}\n",
                p.ply,
                percent(p.inside),
                percent(p.left),
                percent(p.ended)
            ));
        }
        out.into_bytes()
    }

    /// `flags.json`.
    pub fn flags_json(&self) -> Vec<u8> {
        let mut v = self.head();
        v["engine"] = json!(self.flags.is_some());
        v["flags"] = json!(self.flags.unwrap_or_default());
        if !self.unevaluated.is_empty() {
            v["unevaluated"] = json!(self.unevaluated);
        }
        pretty(&v)
    }

    /// `flags.txt`: the flagged moves, worst first.
    pub fn flags_text(&self) -> Vec<u8> {
        let rep = self.rep;
        let Some(flags) = self.flags else {
            return format!(
                "Repertoire {}: no engine annotations (the pipeline has no [engine])\n",
                rep.name
            )
            .into_bytes();
        };
        let mut out = format!(
            "Repertoire {} ({}): {} prepared moves the engine dislikes\n\n",
            rep.name,
            rep.color.word(),
            flags.len()
        );
        if let Some(first) = self.unevaluated.first() {
            out.push_str(&format!(
                "{} positions have no evaluation, so the moves into and out of them are not checked: {}\n\n",
                self.unevaluated.len(),
                first.reason
            ));
        }
        out.push_str(&format!(
            "{:>5}  {:>5}  {:>6}  {:<8}  {:<18}  line\n",
            "eval", "loss", "pgn:", "best", "why"
        ));
        for f in flags {
            let loss = f.loss.map_or("-".into(), |l| l.to_string());
            let best = f.best_move.clone().unwrap_or_else(|| "-".into());
            out.push_str(&format!(
                "{:>+5}  {:>5}  {:>6}  {:<8}  {:<18}  {}\n",
                f.eval,
                loss,
                f.source_line,
                best,
                f.reasons.join(","),
                f.line
            ));
        }
        out.into_bytes()
    }
}
