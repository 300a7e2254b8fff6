//! FEN/EPD as queries and [FEN] tags give it: parse, then the position identity and
//! key functions must agree with themselves.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(pos) = okb::position::parse_fen(text) {
        let epd = okb::position::epd(&pos);
        let again = okb::position::parse_fen(&epd).expect("an EPD okb wrote parses back");
        assert_eq!(okb::position::epd(&again), epd);
        assert_eq!(okb::position::key(&again), okb::position::key(&pos));
    }
    let _ = okb::eco::line::position_after(text);
});
