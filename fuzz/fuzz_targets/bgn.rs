//! BGN (JSON lines) as the game counter reads it.
#![no_main]
use libfuzzer_sys::fuzz_target;
use okb::games::bgn::read_chunk;
use okb::games::pgn::ChunkOrigin;
use okb::games::report::BadGames;

fuzz_target!(|data: &[u8]| {
    let mut bad = BadGames::default();
    let origin = ChunkOrigin { file: "fuzz.bgn", first_line: 1, last: true };
    read_chunk(data, origin, 15, &mut bad, |_| {});
});
