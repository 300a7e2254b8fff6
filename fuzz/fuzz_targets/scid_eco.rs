//! The scid_eco taxonomy parser, then the merge over what it parsed.
#![no_main]
use libfuzzer_sys::fuzz_target;
use okb::eco::{self, EcoFormat, merge::MergeInput};

fuzz_target!(|data: &[u8]| {
    let parsed = eco::parse(EcoFormat::Scid, "fuzz", data);
    let skeleton = eco::merge(&[MergeInput { format: EcoFormat::Scid, file: "fuzz", parsed: &parsed }], true);
    assert!(skeleton.named_positions <= parsed.rows.len());
});
