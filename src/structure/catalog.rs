//! The structures okb names and the rules that recognise them, in precedence order.
//!
//! Every rule is an explicit predicate over the pawn skeleton (and, for the two systems
//! told apart by a bishop, piece placement), written in the language of
//! [`super::pattern`]. The first rule that matches names the structure, so a more
//! specific structure (Hedgehog) is listed before the broader one it is a case of
//! (Maroczy Bind), and the broad Open Sicilian comes after its named forms.

/// A named pawn structure: the `pawn_structures` row of the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Structure {
    /// Stable human name, the value of `resulting_structure`.
    pub name: &'static str,
    /// One line: the skeleton and the openings whose positions it covers.
    pub description: &'static str,
    /// Typical plans for White.
    pub white_plans: &'static [&'static str],
    /// Typical plans for Black.
    pub black_plans: &'static [&'static str],
}

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

/// The label of positions no rule recognises.
pub const UNKNOWN: Structure = Structure {
    name: "Unknown",
    description: "No rule of okb's catalogue fits this skeleton; listed in the structure review report.",
    white_plans: &[],
    black_plans: &[],
};

macro_rules! rule {
    ($id:literal, $structure:literal, white: $w:literal, black: $b:literal) => {
        Rule { id: $id, structure: $structure, white: $w, black: $b }
    };
}

/// All rules, first match wins.
pub const RULES: &[Rule] = &[
    rule!("hedgehog", "Hedgehog", white: "c4 e4 -d", black: "b6 d6 e6 -c"),
    rule!("maroczy", "Maroczy Bind", white: "c4 e4 -d", black: "-c d6|d7"),
    rule!("nimzo-doubled-c", "Nimzo-Indian Doubled C-Pawns", white: "c3 c4 -b", black: ""),
    rule!("dutch-stonewall", "Dutch Stonewall", white: "", black: "c6 d5 e6 f5"),
    rule!("stonewall", "Stonewall", white: "c3 d4 e3 f4", black: ""),
    rule!("benko", "Benko", white: "d5 a2|a3|a4|b2|b3|b4", black: "c5 -a -b"),
    rule!("benoni", "Benoni", white: "d5 -c", black: "c5 d6 -e"),
    rule!("kid-closed", "King's Indian", white: "d5 e4", black: "d6 e5"),
    rule!("kid-tension", "King's Indian", white: "c4 d4 e4", black: "d6 e5 g6"),
    rule!("french", "French", white: "d4 e5", black: "d5 e6"),
    rule!("open-ruy", "Open Ruy", white: "e5 -d", black: "d5 -e"),
    rule!("carlsbad", "Carlsbad", white: "d4 -c e2|e3", black: "c6 d5 -e"),
    rule!("reversed-carlsbad", "Reversed Carlsbad", white: "c3 d4 -e", black: "d5 -c e6|e7"),
    rule!("iqp-symmetric", "Isolated Queen's Pawn", white: "d4 -c -e", black: "d5 -c -e"),
    rule!("iqp-white", "Isolated Queen's Pawn", white: "d4 -c -e", black: "-d"),
    rule!("iqp-black", "Isolated Queen's Pawn", white: "-d", black: "d5 -c -e"),
    rule!("hanging-white", "Hanging Pawns", white: "c4 d4 -b -e", black: "-c -d"),
    rule!("hanging-black", "Hanging Pawns", white: "-c -d", black: "c5 d5 -b -e"),
    rule!("caro-kann", "Caro-Kann", white: "d4 -e", black: "c6 -d e6|e7"),
    rule!("caro-kann-rubinstein", "Caro-Kann", white: "d4 -e", black: "c7 -d e6"),
    rule!("grunfeld", "Grünfeld Centre", white: "d4 e4 -c4", black: "-d g6 c7|c5"),
    rule!("semi-slav", "Semi-Slav Triangle", white: "d4", black: "c6 d5 e6"),
    rule!("slav", "Slav", white: "c4 d4", black: "c6 d5 e7"),
    rule!("qgd", "Queen's Gambit Declined", white: "c4 d4", black: "c7 d5 e6"),
    rule!("boleslavsky", "Boleslavsky", white: "e4 -d", black: "d6 e5 -c"),
    rule!("dragon", "Dragon", white: "e4 -d", black: "d6 g6 -c"),
    rule!("najdorf", "Najdorf", white: "e4 -d", black: "a6 d6 e7 -c"),
    rule!("scheveningen", "Scheveningen", white: "e4 -d", black: "d6 e6 -c"),
    rule!("open-sicilian", "Sicilian", white: "e4 -d", black: "-c d6|d7"),
    rule!("botvinnik", "Botvinnik System", white: "c4 d3 e4 g3", black: ""),
    rule!("closed-sicilian", "Closed Sicilian", white: "d3 e4 c2|c3", black: "c5"),
    rule!("closed-ruy", "Closed Ruy", white: "c3 e4 d3|d4", black: "d6 e5"),
    rule!("closed-ruy-d3", "Closed Ruy", white: "c2 d3 e4", black: "d6 e5"),
    rule!("kia", "King's Indian Attack", white: "d3 e4 g3 c2|c3", black: ""),
    rule!("london", "London", white: "d4 e3 -c4 -f4 B:f4|g3|h2", black: "d5|d6"),
    rule!("colle", "Colle", white: "d4 e3 -c4 -f4 c2|c3 B:c1", black: "d5"),
];

/// Every structure okb names (without [`UNKNOWN`]), in the order of their first rule.
pub const STRUCTURES: &[Structure] = &[
    Structure {
        name: "Hedgehog",
        description: "White c4+e4 against Black's a6/b6/d6/e6 crouch, no c- or White d-pawn: English and Sicilian Hedgehogs (1. c4 c5 2. Nf3 Nf6 3. g3 b6 ... d6 e6 a6).",
        white_plans: &["restrain ...b5 and ...d5 with a4 and Rd1", "build up slowly; a premature attack meets the counter-blows"],
        black_plans: &["prepare ...b5 or ...d5 to break out", "keep pieces compact on the first two ranks and wait for over-extension"],
    },
    Structure {
        name: "Maroczy Bind",
        description: "White pawns c4 and e4 without a d-pawn against Black's d-pawn without a c-pawn: Accelerated Dragon 5. c4, Sicilian Kan and Taimanov binds.",
        white_plans: &["clamp d5 and the queenside with Be3, Qd2, Rac1", "trade Black's active pieces and win space further with f4 or b4"],
        black_plans: &["free the game with ...b5 or ...f5, or aim for the ...d5 break after exchanges", "use the dark squares (…Qa5, …Bg7, …Nd7-c5)"],
    },
    Structure {
        name: "Nimzo-Indian Doubled C-Pawns",
        description: "White's doubled c3/c4 pawns and no b-pawn after ...Bxc3 bxc3: Nimzo-Indian Sämisch and Rubinstein lines.",
        white_plans: &["use the bishop pair and open the centre with e4, or play on the kingside with f3 and e4", "keep the c4 pawn defended and avoid a blocked centre"],
        black_plans: &["blockade with ...c5, ...d6, ...e5 and attack c4 with ...Na5, ...Ba6", "keep the position closed so the knights outlast the bishops"],
    },
    Structure {
        name: "Dutch Stonewall",
        description: "Black pawns c6, d5, e6, f5: the Stonewall Dutch (1. d4 f5 2. c4 Nf6 3. g3 e6 ... d5 c6) and Semi-Slav/Stonewall hybrids.",
        white_plans: &["trade the dark-squared bishops (Bf4 or Ba3) and occupy e5", "open lines on the queenside with b4-b5 or cxd5"],
        black_plans: &["anchor a knight on e4 and attack on the kingside with ...g5 or ...Qe8-h5", "bring the light-squared bishop out via ...b6 and ...Ba6 or ...Bd7-e8-h5"],
    },
    Structure {
        name: "Stonewall",
        description: "White pawns c3, d4, e3, f4: the Stonewall Attack and Colle-Zukertort setups with f4.",
        white_plans: &["plant a knight on e5 and attack with Rf3-h3 or g4-g5", "keep the light-squared bishop on d3 aiming at h7"],
        black_plans: &["exchange the e5 knight and attack the dark squares (…Ne4, …f6)", "play ...c5 and ...b5 on the queenside, or ...Bf5 to trade the good bishop"],
    },
    Structure {
        name: "Benko",
        description: "White d5 with queenside pawns against Black's c5 and no a- or b-pawns: the Benko Gambit (1. d4 Nf6 2. c4 c5 3. d5 b5 4. cxb5 a6 5. bxa6).",
        white_plans: &["consolidate the extra pawn, play a4, Nd2-c4 and Ra2/Qc2", "prepare e4-e5 when Black's pieces are on the queenside"],
        black_plans: &["pressure a2 and b2 along the half-open files with ...Qa5, ...Rfb8, ...Bg7", "keep the pieces active; an endgame is often good for Black"],
    },
    Structure {
        name: "Benoni",
        description: "White d5 without a c-pawn against Black's c5+d6 without an e-pawn: the Modern Benoni (1. d4 Nf6 2. c4 c5 3. d5 e6 4. Nc3 exd5 5. cxd5 d6).",
        white_plans: &["break with e4-e5 or f4-e5 in the centre", "restrain ...b5 with a4 and use the c4 square for a knight"],
        black_plans: &["queenside expansion with ...a6, ...b5 and the Bg7 on the long diagonal", "use e5 and the half-open e-file; ...Nbd7-e5"],
    },
    Structure {
        name: "King's Indian",
        description: "White d5/d4 + e4 against Black's d6 + e5 chain (with ...g6 when the centre is still open): Classical, Sämisch and Petrosian King's Indian.",
        white_plans: &["attack on the queenside with c5 (b4, Nd2-c4)", "close the centre and keep the king side solid against ...f5"],
        black_plans: &["kingside pawn storm with ...f5-f4, ...g5-g4", "for an open centre: ...exd4 and pressure on e4"],
    },
    Structure {
        name: "French",
        description: "White chain d4-e5 against Black's d5-e6: Advance and Classical/Winawer French lines after e5.",
        white_plans: &["kingside attack and space behind e5 (f4, Qg4)", "keep d4 defended with c3 and Nf3"],
        black_plans: &["attack the base of the chain with ...c5 and ...Qb6, and the head with ...f6", "exchange the bad light-squared bishop via ...b6-...Ba6"],
    },
    Structure {
        name: "Open Ruy",
        description: "White e5 without a d-pawn against Black's d5 without an e-pawn: the Open Ruy Lopez (5...Nxe4 6. d4 b5 7. Bb3 d5 8. dxe5).",
        white_plans: &["pressure d5 and attack with Nd4, f4-f5 and Nbd2xe4", "the c3-c4 break against the queenside"],
        black_plans: &["active pieces: ...Nc5, ...Be6, ...Qd7, ...Rd8", "the ...f6 or ...d4 break"],
    },
    Structure {
        name: "Carlsbad",
        description: "White d4 + e-pawn without a c-pawn against Black's c6+d5 without an e-pawn: the QGD Exchange (4. cxd5 exd5).",
        white_plans: &["the minority attack b4-b5 against c6", "a central break with f3 and e4, or a kingside attack after Ne5 and f4"],
        black_plans: &["kingside play with ...Ne4, ...f5 and a piece attack", "meet the minority attack with ...a6 or ...b5 and use c4"],
    },
    Structure {
        name: "Reversed Carlsbad",
        description: "White c3+d4 without an e-pawn against Black's d5 + e-pawn without a c-pawn: Caro-Kann Exchange and Exchange Slav reversed roles.",
        white_plans: &["kingside play with Bd3, Qc2 and Ne5", "the f4-f5 push when Black castles short"],
        black_plans: &["the minority attack ...b5-b4 against c3", "trade the light-squared bishops with ...Bf5"],
    },
    Structure {
        name: "Isolated Queen's Pawn",
        description: "A d-pawn with no friendly c- or e-pawns and no enemy d-pawn (or isolated d-pawns on both sides): QGA, Tarrasch, Panov and Semi-Tarrasch IQP positions.",
        white_plans: &["the IQP side: piece activity and a kingside attack, the d4-d5 break", "the other side: blockade d5 (d4) and trade minor pieces"],
        black_plans: &["the IQP side: the ...d5-d4 break and active pieces", "the other side: blockade in front of the pawn and head for an endgame"],
    },
    Structure {
        name: "Hanging Pawns",
        description: "A c-pawn and d-pawn side by side on the fourth (fifth) rank with no b- or e-pawns and no enemy c- or d-pawns: QGD Tartakower and Queen's Indian lines.",
        white_plans: &["the hanging side: keep them side by side and prepare d5 or c5 at the right moment", "the other side: attack them with Rc1/Rd1 and force one to advance"],
        black_plans: &["the hanging side: use the half-open b- and e-files for the rooks", "the other side: blockade the square in front of an advanced pawn"],
    },
    Structure {
        name: "Caro-Kann",
        description: "White d4 without an e-pawn against Black's c6 + e-pawn (or c7 + e6) without a d-pawn: Caro-Kann Classical and Karpov lines, the French Rubinstein and Burn.",
        white_plans: &["space on the kingside (h4-h5) and the e5 outpost", "the d4-d5 break or a queenside castle and pawn storm"],
        black_plans: &["the freeing ...c5 (or ...e5) break", "solid development; trade pieces toward a favourable endgame"],
    },
    Structure {
        name: "Grünfeld Centre",
        description: "White's d4+e4 centre without a c4 pawn against Black's ...g6 and no d-pawn: the Exchange Grünfeld (5. e4 Nxc3 6. bxc3).",
        white_plans: &["the d4-d5 advance supported by the broad centre", "a kingside attack with h4-h5 or f4-f5"],
        black_plans: &["pressure d4 with ...c5, ...Nc6, ...Bg7 and ...Qa5", "trade pieces to reach an endgame with the queenside majority"],
    },
    Structure {
        name: "Semi-Slav Triangle",
        description: "Black pawns c6, d5, e6 against White's d4: Semi-Slav, Triangle and Noteboom systems.",
        white_plans: &["e4 in the centre or a queenside bind with c5", "the Meran and Botvinnik attacks"],
        black_plans: &["...dxc4 and ...b5 (Meran), then ...c5 or ...e5", "...Ne4 and ...f5 in Stonewall fashion"],
    },
    Structure {
        name: "Slav",
        description: "White c4+d4 against Black's c6+d5 with the e-pawn still on e7: the Slav Defence before ...e6 (2...c6 3. Nf3 Nf6 4. Nc3).",
        white_plans: &["win the c4 pawn back after ...dxc4 with a4 and e3", "cxd5 when the bishop on f5 leaves the queenside"],
        black_plans: &["develop the light-squared bishop to f5 or g4 before ...e6", "...dxc4 and ...b5, or ...a6 (Chebanenko)"],
    },
    Structure {
        name: "Queen's Gambit Declined",
        description: "White c4+d4 against Black's d5+e6 with the c-pawn on c7: Orthodox, Lasker and Tartakower QGD before ...c5/…c6.",
        white_plans: &["the minority attack after cxd5, or a central e4", "pressure on d5 with Bg5, Rc1 and Qc2"],
        black_plans: &["the freeing ...c5 or ...e5 breaks", "...dxc4 and ...c5 in QGA style, or ...Ne4 simplification"],
    },
    Structure {
        name: "Boleslavsky",
        description: "White e4 without a d-pawn against Black's d6+e5 without a c-pawn: Boleslavsky Sicilian, Najdorf 6...e5 and Sveshnikov-type holes on d5.",
        white_plans: &["occupy d5 with a knight (Nc3-d5, Bg5xf6)", "play against the backward d6 pawn"],
        black_plans: &["the ...d5 break", "control d5 with ...Be6, ...Nf6 and queenside play with ...b5"],
    },
    Structure {
        name: "Dragon",
        description: "White e4 without a d-pawn against Black's d6+g6 without a c-pawn: the Sicilian Dragon (5...g6).",
        white_plans: &["Yugoslav attack: Be3, f3, Qd2, O-O-O and h4-h5", "the Bc4 to keep ...d5 down"],
        black_plans: &["the g7 bishop on the long diagonal, ...Rc8 and ...Rxc3", "queenside attack with ...b5 and ...Qa5"],
    },
    Structure {
        name: "Najdorf",
        description: "White e4 without a d-pawn against Black's a6+d6 with the e-pawn on e7 and no c-pawn: the Sicilian Najdorf before ...e5/...e6 (5...a6).",
        white_plans: &["English attack (Be3, f3, g4) or 6. Bg5 with f4", "the e4-e5 break"],
        black_plans: &["choose ...e5 (Boleslavsky hole) or ...e6 (small centre)", "queenside expansion with ...b5 and ...Bb7"],
    },
    Structure {
        name: "Scheveningen",
        description: "White e4 without a d-pawn against Black's d6+e6 small centre without a c-pawn: Scheveningen, Najdorf with ...e6, Taimanov and Kan small centres.",
        white_plans: &["the Keres attack g4-g5 or f4 and e5", "a kingside pawn storm after opposite castling"],
        black_plans: &["the ...d5 or ...e5 breaks", "queenside counterplay with ...b5 and pressure on the c-file"],
    },
    Structure {
        name: "Sicilian",
        description: "White e4 without a d-pawn against Black's d-pawn without a c-pawn: the Open Sicilian (2...d6/2...Nc6/2...e6 3. d4 cxd4).",
        white_plans: &["space advantage and kingside attack", "use the half-open d-file and the d5 square"],
        black_plans: &["the half-open c-file and queenside play", "the central breaks ...d5 and ...e5"],
    },
    Structure {
        name: "Botvinnik System",
        description: "White pawns c4, d3, e4, g3: the English Botvinnik (1. c4 ... g3, Bg2, e4, d3).",
        white_plans: &["control d5 with Nc3 and Ne2, then f4 or b4", "the kingside f4-f5 push"],
        black_plans: &["...f5 against the e4 pawn", "the ...b5 break on the queenside"],
    },
    Structure {
        name: "Closed Sicilian",
        description: "White d3+e4 with a c-pawn at home against Black's c5: the Closed Sicilian (2. Nc3, g3, d3) and the Grand Prix setups.",
        white_plans: &["the kingside attack f4-f5, Nf3-h4 or Be3, Qd2, Bh6", "keep the centre closed"],
        black_plans: &["queenside expansion with ...Rb8, ...b5-b4", "the ...e5 clamp or ...d5 in the centre"],
    },
    Structure {
        name: "Closed Ruy",
        description: "White c3 + e4 + d3/d4 (or c2 + d3 + e4) against Black's d6+e5: the Closed Ruy Lopez (Chigorin, Breyer, Zaitsev, 6. d3 lines) and the Giuoco Pianissimo.",
        white_plans: &["the manoeuvre Nbd2-f1-g3 and the d4 break", "the queenside a4 lever"],
        black_plans: &["the ...c5/...b5 queenside expansion, or ...d5", "the ...f5 break after ...Nh7/...Ng5"],
    },
    Structure {
        name: "King's Indian Attack",
        description: "White d3 + e4 + g3 with the c-pawn on c2/c3: the King's Indian Attack (Nf3, g3, Bg2, d3, e4) and reversed King's Indians.",
        white_plans: &["e4-e5 and a kingside attack with Nf1-h2-g4, h4", "the Bg2 diagonal after exf5/exd5"],
        black_plans: &["queenside expansion with ...b5-b4 and ...a5-a4", "the ...d5 break in the centre"],
    },
    Structure {
        name: "London",
        description: "White d4 + e3 with no pawns on c4/f4 and the dark-squared bishop on f4/g3/h2 against ...d5/...d6: the London System.",
        white_plans: &["Nbd2, Ngf3, c3, Bd3 and the kingside attack (Ne5, Qf3)", "the e4 break when Black castles"],
        black_plans: &["...c5 and ...Qb6 against b2", "the ...Bd6 to trade the dark-squared bishops"],
    },
    Structure {
        name: "Colle",
        description: "White d4 + e3 with a c-pawn at home and the dark-squared bishop on c1 against ...d5: the Colle and Colle-Zukertort systems.",
        white_plans: &["the e3-e4 break after Nbd2 and Re1 (Colle)", "b3, Bb2 and Ne5 (Colle-Zukertort)"],
        black_plans: &["...c5 and ...Nc6 with pressure on d4", "...b6 and ...Bb7 to fight for e4"],
    },
];
