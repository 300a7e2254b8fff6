//! `eco`: the taxonomies merged into the ECO skeleton: the Lichess names as the
//! authority, the others as aliases, gaps interpolated (Phase 1).

use super::ids;
use std::sync::Arc;

use crate::dataflow::{BuildError, Ctx, Decl, Input, Produced, Rule};
use super::planning::{Planner, Planning, parse_id};
use crate::eco::{self, EcoFormat, EcoSkeleton, ParsedSource, merge::MergeInput};

/// The rule.
pub static RULE: Rule = Rule { name: "eco", about: "the ECO skeleton: taxonomies merged, gaps interpolated", file: file!() };


/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// The skeleton of every taxonomy source, in pipeline order (the first is the authority).
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    let mut d = p.declare(ids::ECO, &RULE);
    let sources: Vec<(String, EcoFormat, Input<ParsedSource>)> =
        p.taxonomies().map(|(file, format)| (file.name.clone(), format, d.input(parse_id(&file.name)))).collect();
    let interpolate: bool = d.param("eco.interpolate")?;
    let run = move |cx: &Ctx<'_>| {
        let mut parsed: Vec<(&str, EcoFormat, Arc<ParsedSource>)> = Vec::new();
        for (name, format, input) in &sources {
            parsed.push((name, *format, cx.get(input)?));
        }
        let inputs: Vec<MergeInput<'_>> = parsed.iter().map(|(name, format, p)| MergeInput { format: *format, file: name, parsed: p }).collect();
        let skeleton = eco::merge(&inputs, interpolate);
        let interpolated = skeleton.entries.iter().filter(|e| e.src == "interpolated").count();
        let orphans = skeleton.warnings.iter().filter(|w| w.is_note()).count();
        let text = format!("{} named positions, {interpolated} interpolated, {orphans} orphan lines", skeleton.named_positions);
        let warnings = skeleton.warnings.len() - orphans;
        cx.warn(skeleton.warnings.iter().cloned());
        Ok(Produced::encoded(skeleton, text, encode_skeleton).warnings(warnings))
    };
    Ok(vec![d.value(run).priority(900)])
}

/// The skeleton's postcard bytes, its entries encoded on all cores: the merge's dependents
/// wait for the hash of these 4–5 MB, and nothing else runs meanwhile.
pub fn encode_skeleton(skeleton: &EcoSkeleton, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    // Field by field, in declaration order (postcard writes a struct as its fields);
    // the test below checks the result against postcard's own.
    let EcoSkeleton { entries, from_to, sources, named_positions, warnings } = skeleton;
    crate::dataflow::cache::encode_seq_in_parallel(entries, out)?;
    postcard::to_io(&(from_to, sources, named_positions, warnings), out).map(drop).map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_skeleton_encoding_is_postcards() {
        let tsv = "eco\tname\tpgn\nA00\tA\t1. e4\nA01\tB: x\t1. e4 e5 2. Nf3 Nc6\nA02\tC\t1. Nf3 Nc6 2. e4 e5\n";
        let parsed = eco::parse(EcoFormat::LichessTsv, "t.tsv", tsv.as_bytes());
        let skeleton = eco::merge(&[MergeInput { format: EcoFormat::LichessTsv, file: "t.tsv", parsed: &parsed }], true);
        assert!(skeleton.entries.len() == 4 && skeleton.from_to.len() == 3 && skeleton.warnings.len() == 3);
        let mut bytes = Vec::new();
        encode_skeleton(&skeleton, &mut bytes).unwrap();
        assert_eq!(bytes, postcard::to_allocvec(&skeleton).unwrap());
        // Past one chunk of items, and a length that takes two varint bytes.
        let many: Vec<String> = (0..1000).map(|i| format!("item {i}")).collect();
        let mut out = Vec::new();
        crate::dataflow::cache::encode_seq_in_parallel(&many, &mut out).unwrap();
        assert_eq!(out, postcard::to_allocvec(&many).unwrap());
        // Past one window of items, whose bytes are written before the next is encoded.
        let more: Vec<u32> = (0..200_000).collect();
        let mut out = Vec::new();
        crate::dataflow::cache::encode_seq_in_parallel(&more, &mut out).unwrap();
        assert_eq!(out, postcard::to_allocvec(&more).unwrap());
    }
}
