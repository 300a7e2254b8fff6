//! The structure-labels parser (a filled-in `okb review structures` form), then the
//! classifier built from what it parsed, on the positions of the labelled rows.
#![no_main]
use libfuzzer_sys::fuzz_target;
use okb::structure::labels;

fuzz_target!(|data: &[u8]| {
    let parsed = labels::parse("fuzz", data);
    // The csv reader ends records at \n, \r or \r\n.
    let lines = data.split(|b| *b == b'\n' || *b == b'\r').count();
    assert!(parsed.rows.len() + parsed.warnings.len() <= lines + 1);
    let (classifier, _) = labels::classifier([&parsed]);
    for row in &parsed.rows {
        assert!(okb::structure::STRUCTURES.iter().any(|s| s.name == row.structure) || row.structure == "Unknown");
    }
    let _ = classifier.classify(&shakmaty::Chess::default());
});
