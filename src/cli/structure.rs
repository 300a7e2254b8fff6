//! `okb structure <FEN>`: the pawn structure of one position, without a pipeline;
//! `okb structure --list`: the catalogue.

use miette::miette;

/// Arguments of `okb structure`.
#[derive(clap::Args, Debug)]
pub struct StructureArgs {
    /// The position as FEN or EPD (move counters optional), quoted.
    #[arg(required_unless_present = "list")]
    pub fen: Option<String>,
    /// Print every structure okb names (with --json: descriptions, plans and rules).
    #[arg(long, conflicts_with = "fen")]
    pub list: bool,
    /// Print JSON: the structure, how it was found (exact, near, rule), its description
    /// and plans, and the rule that fits.
    #[arg(long)]
    pub json: bool,
}

/// Prints the structure's name (or JSON) on stdout.
pub fn run(args: &StructureArgs) -> miette::Result<()> {
    let Some(fen) = &args.fen else {
        list(args.json);
        return Ok(());
    };
    let pos = crate::position::parse_fen(fen).map_err(|e| miette!("{e}"))?;
    let tag = crate::structure::classify(&pos);
    if args.json {
        let answer = serde_json::json!({
            "fen": crate::position::fen(&pos),
            "structure": tag.structure.name,
            "confidence": tag.confidence,
            "description": tag.structure.description,
            "white_plans": tag.structure.white_plans,
            "black_plans": tag.structure.black_plans,
            "rule": tag.rule,
        });
        println!("{}", serde_json::to_string_pretty(&answer).expect("JSON values serialize"));
    } else {
        println!("{}", tag.structure.name);
    }
    Ok(())
}

/// The catalogue: names, or JSON with each structure's rules.
fn list(json: bool) {
    use crate::structure::{RULES, STRUCTURES};
    if !json {
        for s in STRUCTURES {
            println!("{}", s.name);
        }
        return;
    }
    let all: Vec<serde_json::Value> = STRUCTURES
        .iter()
        .map(|s| {
            let rules: Vec<_> = RULES.iter().filter(|r| r.structure == s.name).collect();
            serde_json::json!({ "structure": s, "rules": rules })
        })
        .collect();
    println!("{}", serde_json::to_string_pretty(&all).expect("JSON values serialize"));
}
