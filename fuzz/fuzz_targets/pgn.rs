//! PGN as the game counter reads it: any bytes, as one chunk at the end of a file.
#![no_main]
use libfuzzer_sys::fuzz_target;
use okb::games::pgn::{ChunkOrigin, GameVisitor, IdentityKeys, read_chunk};
use okb::games::report::BadGames;

fuzz_target!(|data: &[u8]| {
    let mut visitor: GameVisitor<'_, IdentityKeys> = GameVisitor::new(15, None);
    let mut bad = BadGames::default();
    let origin = ChunkOrigin { file: "fuzz.pgn", first_line: 1, last: true };
    let mut games = 0u64;
    let seen = read_chunk(data, origin, &mut visitor, &mut bad, |v, _| {
        assert!(v.keys.len() <= 16 && v.moves.len() <= 15);
        games += 1;
    });
    assert!(games <= seen);
});
