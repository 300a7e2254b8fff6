//! The rules that recognise the catalogue's structures, in precedence order.
//!
//! Every rule is an explicit predicate over the pawn skeleton (and, for the systems told
//! apart by a piece, piece placement), written in the language of [`super::pattern`].
//! The first rule that matches names the structure, so a specific structure (Hedgehog)
//! is listed before the broader one it is a case of (Maroczy Bind), and a family's broad
//! form (Open Sicilian) comes after its named forms. A rule names a skeleton, never an
//! opening: a catch-all for an opening's first moves (the old Open Game, Scotch, English,
//! Symmetrical English and Queen's Pawn Game) named structures where a strong player sees
//! none, so a skeleton no rule fits is Unknown. Rules are tried only once both sides have
//! moved a centre pawn ([`super::centre_is_engaged`]).

/// One rule: a structure's name and the conditions on each side, in
/// [`super::pattern`] syntax.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Rule {
    /// Stable id of the rule (`iqp-white`, `kid-closed`, ...).
    pub id: &'static str,
    /// Name of the structure it recognises.
    pub structure: &'static str,
    /// White's conditions.
    pub white: &'static str,
    /// Black's conditions.
    pub black: &'static str,
}

macro_rules! rule {
    ($id:literal, $structure:literal, white: $w:literal, black: $b:literal) => {
        Rule { id: $id, structure: $structure, white: $w, black: $b }
    };
}

/// All rules, first match wins.
pub const RULES: &[Rule] = &[
    // Binds and doubled pawns: the most specific skeletons.
    // The English Hedgehog keeps White's e-pawn at home or on e3: the skeleton is
    // Black's a6/b6/d6/e6 against c4 without the d-pawn either way.
    rule!("hedgehog", "Hedgehog", white: "c4 -d", black: "b6 d6 e6 -c"),
    rule!("maroczy", "Maroczy Bind", white: "c4 e4 -d", black: "-c d6|d7"),
    rule!("open-english", "Open English", white: "c4 -d -e4", black: "-c d6|d7"),
    rule!("nimzo-doubled-c", "Nimzo-Indian Doubled C-Pawns", white: "c3 c4 -b", black: ""),
    rule!("french-winawer", "French Winawer", white: "c3 d4 e5 -b", black: "d5 e6"),
    rule!("dutch-stonewall", "Dutch Stonewall", white: "", black: "c6 d5 e6 f5"),
    rule!("stonewall", "Stonewall", white: "c3 d4 e3 f4", black: ""),
    // The Alekhine Four Pawns (c4/d4/e5 with f4, or the f-pawn gone after ...dxe5 fxe5):
    // before the d4 rules below, which would read ...d6 and ...g6 as an Indian defence.
    rule!("alekhine-four-pawns", "Alekhine Four Pawns", white: "c4 d4 e5 f4", black: "d6"),
    rule!("alekhine-four-pawns-fxe5", "Alekhine Four Pawns", white: "c4 d4 e5 -f", black: "-d"),
    // d5 chains: Benko, Benoni, King's Indian.
    rule!("benko", "Benko", white: "d5 a2|a3|a4|b2|b3|b4", black: "c5 -a -b"),
    rule!("benoni", "Benoni", white: "d5 -c", black: "c5 d6|d7 -e"),
    // With the centre closed (d5 against ...e5) f3 comes in the Mar del Plata too: the
    // d5 chain is the King's Indian's, whichever move order played f3.
    rule!("kid-samisch", "King's Indian Sämisch", white: "c4 d4 e4 f3", black: "d6 g6"),
    rule!("czech-benoni", "Czech Benoni", white: "c4 d5 e4", black: "c5 d6 e5"),
    rule!("benoni-chain", "Benoni", white: "c4 d5", black: "c5 d6|d7 -e5"),
    rule!("benoni-no-c4", "Benoni", white: "d5 c2|c3", black: "c5 d6|d7 -e5"),
    rule!("kid-closed", "King's Indian", white: "c4 d5 e4", black: "d6 e5"),
    rule!("kid-tension", "King's Indian", white: "c4 d4 e4", black: "d6 e5 g6"),
    rule!("kid-fianchetto", "King's Indian Fianchetto", white: "c4 g3 -e4 d4|d5", black: "d6 g6 -f5"),
    rule!("kid-main", "King's Indian", white: "c4 d4 e4", black: "d6 e7 g6"),
    rule!("kid-e3", "King's Indian", white: "c4 d4 -e4", black: "d6 e7 g6 -f5"),
    rule!("old-indian", "Old Indian", white: "c4 d4", black: "d6 g7 e5|e7"),
    // Dutch systems (after the King's Indian: ...f5 also comes in the Mar del Plata).
    rule!("leningrad-dutch", "Leningrad Dutch", white: "d4 -e4", black: "d6 f5 g6"),
    rule!("classical-dutch", "Classical Dutch", white: "d4 -e4", black: "e6 f5 -d5"),
    rule!("dutch", "Dutch", white: "d4 -e4", black: "f5 -e5"),
    // French, Caro-Kann Advance, Alekhine: e5 chains.
    rule!("caro-advance", "Caro-Kann Advance", white: "d4 e5", black: "c6 d5"),
    rule!("alapin-e5", "Alapin", white: "d4 e5 -c", black: "-c d6|d7 e6|e7"),
    rule!("french", "French", white: "d4 e5", black: "d5 e6"),
    rule!("french-dxc5", "French", white: "-d e4|e5", black: "d5 e6 -c6"),
    rule!("french-tension", "French", white: "d4 e4", black: "d5 e6"),
    rule!("alekhine", "Alekhine", white: "d4 e5", black: "d6 e7"),
    rule!("open-ruy", "Open Ruy", white: "e5 -d", black: "d5 -e"),
    rule!("berlin", "Berlin Wall", white: "e5 -d", black: "c6 c7 -d -e"),
    // Queen's Gambit exchanges, isolated and hanging pawns.
    rule!("carlsbad", "Carlsbad", white: "d4 -c e2|e3", black: "d5 -e c6|c7"),
    rule!("reversed-carlsbad", "Reversed Carlsbad", white: "c3 d4 -e", black: "d5 -c e6|e7"),
    rule!("iqp-symmetric", "Isolated Queen's Pawn", white: "d4 -c -e", black: "d5 -c -e"),
    rule!("iqp-white", "Isolated Queen's Pawn", white: "d4 -c -e", black: "-d"),
    rule!("iqp-black", "Isolated Queen's Pawn", white: "-d", black: "d5 -c -e"),
    rule!("hanging-white", "Hanging Pawns", white: "c4 d4 -b -e", black: "-c -d"),
    rule!("hanging-black", "Hanging Pawns", white: "-c -d", black: "c5 d5 -b -e"),
    rule!("exchange-slav", "Exchange Slav", white: "d4 -c", black: "d5 -c"),
    rule!("tarrasch-exchanged", "Tarrasch", white: "d4 -c", black: "c5 d5 -e"),
    // Caro-Kann, Scandinavian and the symmetrical centres without e-pawns.
    rule!("caro-kann", "Caro-Kann", white: "d4 -e", black: "c6 -d e6|e7"),
    rule!("caro-kann-rubinstein", "Caro-Kann", white: "d4 -e", black: "c7 -d e6"),
    rule!("alekhine-dxe5", "Alekhine Four Pawns", white: "c4 d4 f4 -e", black: "-d e5"),
    rule!("scandinavian", "Scandinavian", white: "-e d2|d3|d4", black: "-d c6|c7 e7"),
    rule!("symmetrical-centre", "Symmetrical Centre", white: "-e d2|d3|d4", black: "-e d5|d6|d7"),
    rule!("petroff-dxc3", "Petroff Doubled C-Pawns", white: "c2 c3 -d -e", black: "-e d5|d6|d7"),
    // Grünfeld, Catalan, Queen's Gambit.
    // The Exchange Grünfeld's centre, before and after ...cxd4 cxd4 (then no c-pawns).
    rule!("grunfeld", "Grünfeld Centre", white: "d4 e4 -c4", black: "-d g6"),
    rule!("grunfeld-exchanged", "Grünfeld", white: "d4 -c -e4", black: "-d g6"),
    rule!("grunfeld-tension", "Grünfeld", white: "c4 d4", black: "c7 d5 g6"),
    rule!("open-catalan", "Open Catalan", white: "d4 g3 -c", black: "-d e6"),
    rule!("catalan", "Catalan", white: "c4 d4 g3 -e4", black: "d5 e6"),
    rule!("catalan-early", "Catalan", white: "c4 d4 g3 -e4", black: "c7 d7 e6"),
    rule!("catalan-cxd4", "Catalan", white: "c4 g3 -d", black: "d5 e6 -c"),
    rule!("semi-slav", "Semi-Slav Triangle", white: "d4", black: "c6 d5 e6"),
    rule!("slav", "Slav", white: "c4 d4", black: "c6 d5 e7"),
    rule!("slav-accepted", "Slav", white: "d4 -c", black: "c4 c6 -d e7"),
    // The Slav main line (5. a4 against ...dxc4, then ...e6): White's a4 keeps Black's
    // b-pawn at home, which is what the Meran's ...b5 is about.
    rule!("slav-main", "Slav", white: "d4 a4 -c", black: "b7 c6 e6 -d"),
    rule!("meran", "Meran", white: "d4 -c", black: "c6 e6 -d"),
    rule!("tarrasch", "Tarrasch", white: "c4 d4", black: "c5 d5 e6"),
    rule!("qgd", "Queen's Gambit Declined", white: "c4 d4", black: "c7 d5 e6"),
    rule!("qgd-cxd4", "Queen's Gambit Declined", white: "c4 d4 -e", black: "d5 e6 -c"),
    rule!("qgd-dxc5", "Queen's Gambit Declined", white: "c4 -d -e4", black: "d5 e6 -c"),
    rule!("queens-gambit", "Queen's Gambit", white: "c4 d4", black: "c7 d5 e7"),
    rule!("qga", "Queen's Gambit Accepted", white: "d4 -c e2|e3|e4|e5", black: "-d"),
    rule!("albin", "Albin Counter-Gambit", white: "c4 e5 -d", black: "d4 -e"),
    rule!("nimzo-queens-indian", "Nimzo–Queen's Indian", white: "c4 d4", black: "e6 d7|d6"),
    // Sicilians: named forms, then the open and closed families.
    // After Bxf6 gxf6 the g-pawn is gone and f7 stays at home; White's e-pawn may since
    // have taken on f5 or d5, but its d-pawn is gone from d2-d4 either way.
    rule!("sveshnikov", "Sveshnikov", white: "-d2|d3|d4", black: "d6 e5 f7 -c -g"),
    rule!("boleslavsky", "Boleslavsky", white: "e4 -d", black: "d6 e5 -c"),
    rule!("dragon", "Dragon", white: "e4 -d", black: "d6 g6 -c"),
    rule!("accelerated-dragon", "Accelerated Dragon", white: "e4 -d", black: "d7 g6 -c"),
    rule!("najdorf", "Najdorf", white: "e4 -d", black: "a6 d6 e7 -c"),
    rule!("scheveningen", "Scheveningen", white: "e4 -d", black: "d6 e6 -c"),
    rule!("taimanov-kan", "Sicilian Taimanov–Kan", white: "e4 -d", black: "d7 e6 -c"),
    rule!("sicilian-bxc6", "Sicilian", white: "e4 -d", black: "c6 -c7 -b"),
    rule!("open-sicilian", "Sicilian", white: "e4 -d", black: "-c d6|d7"),
    rule!("alapin", "Alapin", white: "c3 e4 d2|d4", black: "c5 -e5"),
    rule!("alapin-cxd4", "Alapin", white: "c3 -d e4|e5", black: "d4 -c"),
    rule!("alapin-exchanged", "Alapin", white: "c3 -e d2|d4", black: "c5 -d"),
    // c4/e4/g3 is the Botvinnik set-up whether or not d3 has been played yet.
    rule!("botvinnik", "Botvinnik System", white: "c4 e4 g3 d2|d3", black: ""),
    rule!("kia-sicilian", "King's Indian Attack", white: "d3 e4 g3 c2|c3", black: "c5 d5"),
    // The King's Indian Attack after e5: the wedge against the French set-up.
    rule!("kia-wedge", "King's Indian Attack", white: "d3 e5 g3", black: "d5 e6"),
    // ... and against ...c6/d5/e5, where the Caro-Kann rules below would otherwise speak.
    rule!("kia-c6-e5", "King's Indian Attack", white: "d3 e4 g3 c2|c3", black: "c6 d5 e5"),
    rule!("closed-sicilian", "Closed Sicilian", white: "d3 e4 c2|c3", black: "c5"),
    rule!("grand-prix", "Closed Sicilian", white: "c2 e4 f4 d2|d3", black: "c5"),
    rule!("anti-sicilian", "Anti-Sicilian", white: "c2 e4 d2|d3", black: "c5"),
    rule!("anti-sicilian-exd5", "Anti-Sicilian", white: "-e c2 d2|d3", black: "c5 -d"),
    // 1. e4 e5: Ruy Lopez, Italian, gambits, the open centre.
    rule!("closed-ruy", "Closed Ruy", white: "c3 d4 e4", black: "d6 e5"),
    rule!("closed-ruy-d3", "Closed Ruy", white: "d3 e4 c2|c3", black: "b5 d6 e5"),
    rule!("closed-ruy-d5", "Closed Ruy", white: "c3 d5 e4", black: "d6 e5"),
    rule!("kia", "King's Indian Attack", white: "d3 e4 g3 c2|c3", black: "-e5"),
    // g2|g3: the Grob (1. g4) plays d3 and e2 too but is no King's Indian Attack.
    rule!("kia-d3", "King's Indian Attack", white: "d3 e2|e3 g2|g3 -c4 c2|c3", black: "d5|e5"),
    rule!("caro-kann-two-knights", "Caro-Kann", white: "e4 d2|d3", black: "c6 d5"),
    rule!("giuoco-pianissimo", "Giuoco Pianissimo", white: "d3 e4 c2|c3", black: "e5 d6|d7"),
    rule!("exchange-ruy", "Ruy Lopez Exchange", white: "e4", black: "c6 c7 -d e5"),
    // After the d-pawn exchange: White's 4-against-3 on the kingside, Black's doubled
    // c-pawns (c7 at home, the other on c6 or c5) on the queenside.
    rule!("exchange-ruy-open", "Ruy Lopez Exchange", white: "e4 -d", black: "c7 c6|c5 -d"),
    rule!("kings-gambit", "King's Gambit", white: "e4 f4 d2|d3", black: "e5"),
    // Only the e- and f-pawns changed: a counter-gambit that also gives a queenside pawn
    // (the Bryan's ...b5) leaves a wreck no one names, not this structure.
    rule!(
        "kings-gambit-accepted",
        "King's Gambit Accepted",
        white: "e4 -f a2|a3|a4 b2|b3|b4 c2|c3|c4",
        black: "f4 -e a7|a6|a5 b7|b6|b5 c7|c6|c5"
    ),
    rule!("philidor", "Philidor", white: "d4 e4 -c4", black: "d6 e5"),
    rule!("broad-centre", "Broad Centre", white: "d4 e4", black: "-e d6|d7"),
    // 1. e4 against the hypermodern defences.
    rule!("pirc", "Pirc–Modern", white: "d4 e4 -c4", black: "d6|d7 e6|e7 -d5"),
    rule!("pirc-d5", "Pirc–Modern", white: "d5 e4 -c4", black: "d6 e7 g6"),
    // Flank openings.
    rule!("reversed-dragon", "Reversed Dragon", white: "-c -e4 d2|d3", black: "e5 -d"),
    rule!("english-grunfeld", "Grünfeld", white: "-c -e4 d2|d3", black: "-d c7 e7 g6"),
    rule!("small-centre", "Small Centre", white: "-e d2|d3", black: "e5 -d"),
    // These flank systems keep White's g-pawn at home or fianchettoed; after the Grob's
    // g4 okb names none of them (the catalogue has no Grob).
    rule!("reversed-sicilian", "Reversed Sicilian", white: "c4 -e4 d2|d3 g2|g3", black: "e5"),
    rule!("reti", "Réti", white: "c4 -e4 d2|d3 g2|g3", black: "d5"),
    rule!("bird", "Bird", white: "f4 -e4 d2|d3", black: ""),
    // Against a classical centre: a Hippopotamus (...b6/d6/e6/g6) is no Larsen.
    rule!("larsen", "Nimzowitsch–Larsen", white: "b3 e3 -c4 -d4", black: "c5|d5|e5"),
    rule!("open-centre", "Open Centre", white: "-c -d", black: "-c -d"),
    // 1. d4 systems without c4: bishops tell London from Colle, then the family.
    rule!("zukertort", "Colle–Zukertort", white: "b3 c2 d4 e3 -f4", black: "d5"),
    rule!("london", "London", white: "d4 e3 -c4 -f4 B:f4|g3|h2", black: "d5|d6"),
    rule!("colle", "Colle", white: "d4 e3 -c4 -f4 c2|c3 B:c1", black: "d5"),
];
