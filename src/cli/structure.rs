//! `okb structure <FEN>`: the pawn structure of one position, without a pipeline.

use miette::miette;

/// Arguments of `okb structure`.
#[derive(clap::Args, Debug)]
pub struct StructureArgs {
    /// The position as FEN or EPD (move counters optional), quoted.
    pub fen: String,
    /// Print JSON: the structure, its description and plans, and the rule that matched.
    #[arg(long)]
    pub json: bool,
}

/// Prints the structure's name (or JSON) on stdout.
pub fn run(args: &StructureArgs) -> miette::Result<()> {
    let pos = crate::position::parse_fen(&args.fen).map_err(|e| miette!("{e}"))?;
    let tag = crate::structure::classify(&pos);
    if args.json {
        let answer = serde_json::json!({
            "fen": crate::position::fen(&pos),
            "structure": tag.structure.name,
            "description": tag.structure.description,
            "white_plans": tag.structure.white_plans,
            "black_plans": tag.structure.black_plans,
            "confidence": tag.confidence,
            "rule": tag.rule,
        });
        println!("{}", serde_json::to_string_pretty(&answer).expect("JSON values serialize"));
    } else {
        println!("{}", tag.structure.name);
    }
    Ok(())
}
