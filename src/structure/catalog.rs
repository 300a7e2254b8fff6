//! The structures okb names: each with a description of its skeleton and the openings
//! that reach it, and typical plans for both sides. [`super::rules`] recognises them.

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

/// The label of positions no rule recognises.
pub const UNKNOWN: Structure = Structure {
    name: "Unknown",
    description: "No rule of okb's catalogue fits this skeleton; listed in the structure review report.",
    white_plans: &[],
    black_plans: &[],
};

/// Every structure okb names (without [`UNKNOWN`]), in the order of their first rule.
pub const STRUCTURES: &[Structure] = &[
    Structure {
        name: "Hedgehog",
        description: "White c4+e4 against Black's a6/b6/d6/e6 crouch, no c- or White d-pawn: English and Sicilian Hedgehogs (1. c4 c5 2. Nf3 Nf6 3. g3 b6 ... d6 e6 a6).",
        white_plans: &[
            "restrain ...b5 and ...d5 with a4 and Rd1",
            "build up slowly; a premature attack meets the counter-blows",
        ],
        black_plans: &[
            "prepare ...b5 or ...d5 to break out",
            "keep pieces compact on the first two ranks and wait for over-extension",
        ],
    },
    Structure {
        name: "Maroczy Bind",
        description: "White pawns c4 and e4 without a d-pawn against Black's d-pawn without a c-pawn: Accelerated Dragon 5. c4, Sicilian Kan and Taimanov binds.",
        white_plans: &[
            "clamp d5 and the queenside with Be3, Qd2, Rac1",
            "trade Black's active pieces and win space further with f4 or b4",
        ],
        black_plans: &[
            "free the game with ...b5 or ...f5, or aim for the ...d5 break after exchanges",
            "use the dark squares (…Qa5, …Bg7, …Nd7-c5)",
        ],
    },
    Structure {
        name: "Nimzo-Indian Doubled C-Pawns",
        description: "White's doubled c3/c4 pawns and no b-pawn after ...Bxc3 bxc3: Nimzo-Indian Sämisch and Rubinstein lines.",
        white_plans: &[
            "use the bishop pair and open the centre with e4, or play on the kingside with f3 and e4",
            "keep the c4 pawn defended and avoid a blocked centre",
        ],
        black_plans: &[
            "blockade with ...c5, ...d6, ...e5 and attack c4 with ...Na5, ...Ba6",
            "keep the position closed so the knights outlast the bishops",
        ],
    },
    Structure {
        name: "Dutch Stonewall",
        description: "Black pawns c6, d5, e6, f5: the Stonewall Dutch (1. d4 f5 2. c4 Nf6 3. g3 e6 ... d5 c6) and Semi-Slav/Stonewall hybrids.",
        white_plans: &[
            "trade the dark-squared bishops (Bf4 or Ba3) and occupy e5",
            "open lines on the queenside with b4-b5 or cxd5",
        ],
        black_plans: &[
            "anchor a knight on e4 and attack on the kingside with ...g5 or ...Qe8-h5",
            "bring the light-squared bishop out via ...b6 and ...Ba6 or ...Bd7-e8-h5",
        ],
    },
    Structure {
        name: "Stonewall",
        description: "White pawns c3, d4, e3, f4: the Stonewall Attack and Colle-Zukertort setups with f4.",
        white_plans: &[
            "plant a knight on e5 and attack with Rf3-h3 or g4-g5",
            "keep the light-squared bishop on d3 aiming at h7",
        ],
        black_plans: &[
            "exchange the e5 knight and attack the dark squares (…Ne4, …f6)",
            "play ...c5 and ...b5 on the queenside, or ...Bf5 to trade the good bishop",
        ],
    },
    Structure {
        name: "Benko",
        description: "White d5 with queenside pawns against Black's c5 and no a- or b-pawns: the Benko Gambit (1. d4 Nf6 2. c4 c5 3. d5 b5 4. cxb5 a6 5. bxa6).",
        white_plans: &[
            "consolidate the extra pawn, play a4, Nd2-c4 and Ra2/Qc2",
            "prepare e4-e5 when Black's pieces are on the queenside",
        ],
        black_plans: &[
            "pressure a2 and b2 along the half-open files with ...Qa5, ...Rfb8, ...Bg7",
            "keep the pieces active; an endgame is often good for Black",
        ],
    },
    Structure {
        name: "Benoni",
        description: "White d5 without a c-pawn against Black's c5+d6 without an e-pawn: the Modern Benoni (1. d4 Nf6 2. c4 c5 3. d5 e6 4. Nc3 exd5 5. cxd5 d6).",
        white_plans: &[
            "break with e4-e5 or f4-e5 in the centre",
            "restrain ...b5 with a4 and use the c4 square for a knight",
        ],
        black_plans: &[
            "queenside expansion with ...a6, ...b5 and the Bg7 on the long diagonal",
            "use e5 and the half-open e-file; ...Nbd7-e5",
        ],
    },
    Structure {
        name: "King's Indian",
        description: "White c4 + e4 with d5 or d4 against Black's d6 + ...g6 (and ...e5): the Classical, Petrosian and Mar del Plata King's Indian, closed or with the centre tension.",
        white_plans: &[
            "attack on the queenside with c5 (b4, Nd2-c4)",
            "close the centre and keep the king side solid against ...f5",
        ],
        black_plans: &[
            "kingside pawn storm with ...f5-f4, ...g5-g4",
            "for an open centre: ...exd4 and pressure on e4",
        ],
    },
    Structure {
        name: "French",
        description: "White chain d4-e5 against Black's d5-e6: Advance and Classical/Winawer French lines after e5.",
        white_plans: &[
            "kingside attack and space behind e5 (f4, Qg4)",
            "keep d4 defended with c3 and Nf3",
        ],
        black_plans: &[
            "attack the base of the chain with ...c5 and ...Qb6, and the head with ...f6",
            "exchange the bad light-squared bishop via ...b6-...Ba6",
        ],
    },
    Structure {
        name: "Open Ruy",
        description: "White e5 without a d-pawn against Black's d5 without an e-pawn: the Open Ruy Lopez (5...Nxe4 6. d4 b5 7. Bb3 d5 8. dxe5).",
        white_plans: &[
            "pressure d5 and attack with Nd4, f4-f5 and Nbd2xe4",
            "the c3-c4 break against the queenside",
        ],
        black_plans: &["active pieces: ...Nc5, ...Be6, ...Qd7, ...Rd8", "the ...f6 or ...d4 break"],
    },
    Structure {
        name: "Carlsbad",
        description: "White d4 + e-pawn without a c-pawn against Black's d5 + c-pawn without an e-pawn: the QGD Exchange (4. cxd5 exd5), before and after ...c6.",
        white_plans: &[
            "the minority attack b4-b5 against c6",
            "a central break with f3 and e4, or a kingside attack after Ne5 and f4",
        ],
        black_plans: &[
            "kingside play with ...Ne4, ...f5 and a piece attack",
            "meet the minority attack with ...a6 or ...b5 and use c4",
        ],
    },
    Structure {
        name: "Reversed Carlsbad",
        description: "White c3+d4 without an e-pawn against Black's d5 + e-pawn without a c-pawn: Caro-Kann Exchange and Exchange Slav reversed roles.",
        white_plans: &[
            "kingside play with Bd3, Qc2 and Ne5",
            "the f4-f5 push when Black castles short",
        ],
        black_plans: &[
            "the minority attack ...b5-b4 against c3",
            "trade the light-squared bishops with ...Bf5",
        ],
    },
    Structure {
        name: "Isolated Queen's Pawn",
        description: "A d-pawn with no friendly c- or e-pawns and no enemy d-pawn (or isolated d-pawns on both sides): QGA, Tarrasch, Panov and Semi-Tarrasch IQP positions.",
        white_plans: &[
            "the IQP side: piece activity and a kingside attack, the d4-d5 break",
            "the other side: blockade d5 (d4) and trade minor pieces",
        ],
        black_plans: &[
            "the IQP side: the ...d5-d4 break and active pieces",
            "the other side: blockade in front of the pawn and head for an endgame",
        ],
    },
    Structure {
        name: "Hanging Pawns",
        description: "A c-pawn and d-pawn side by side on the fourth (fifth) rank with no b- or e-pawns and no enemy c- or d-pawns: QGD Tartakower and Queen's Indian lines.",
        white_plans: &[
            "the hanging side: keep them side by side and prepare d5 or c5 at the right moment",
            "the other side: attack them with Rc1/Rd1 and force one to advance",
        ],
        black_plans: &[
            "the hanging side: use the half-open b- and e-files for the rooks",
            "the other side: blockade the square in front of an advanced pawn",
        ],
    },
    Structure {
        name: "Caro-Kann",
        description: "White d4 without an e-pawn against Black's c6 + e-pawn (or c7 + e6) without a d-pawn: Caro-Kann Classical and Karpov lines, the French Rubinstein and Burn.",
        white_plans: &[
            "space on the kingside (h4-h5) and the e5 outpost",
            "the d4-d5 break or a queenside castle and pawn storm",
        ],
        black_plans: &[
            "the freeing ...c5 (or ...e5) break",
            "solid development; trade pieces toward a favourable endgame",
        ],
    },
    Structure {
        name: "Grünfeld Centre",
        description: "White's d4+e4 centre without a c4 pawn against Black's ...g6 and no d-pawn: the Exchange Grünfeld (5. e4 Nxc3 6. bxc3).",
        white_plans: &[
            "the d4-d5 advance supported by the broad centre",
            "a kingside attack with h4-h5 or f4-f5",
        ],
        black_plans: &[
            "pressure d4 with ...c5, ...Nc6, ...Bg7 and ...Qa5",
            "trade pieces to reach an endgame with the queenside majority",
        ],
    },
    Structure {
        name: "Semi-Slav Triangle",
        description: "Black pawns c6, d5, e6 against White's d4: Semi-Slav, Triangle and Noteboom systems.",
        white_plans: &[
            "e4 in the centre or a queenside bind with c5",
            "the Meran and Botvinnik attacks",
        ],
        black_plans: &[
            "...dxc4 and ...b5 (Meran), then ...c5 or ...e5",
            "...Ne4 and ...f5 in Stonewall fashion",
        ],
    },
    Structure {
        name: "Slav",
        description: "White c4+d4 against Black's c6+d5 with the e-pawn still on e7: the Slav Defence before ...e6 (2...c6 3. Nf3 Nf6 4. Nc3).",
        white_plans: &[
            "win the c4 pawn back after ...dxc4 with a4 and e3",
            "cxd5 when the bishop on f5 leaves the queenside",
        ],
        black_plans: &[
            "develop the light-squared bishop to f5 or g4 before ...e6",
            "...dxc4 and ...b5, or ...a6 (Chebanenko)",
        ],
    },
    Structure {
        name: "Queen's Gambit Declined",
        description: "White c4+d4 against Black's d5+e6 with the c-pawn on c7: Orthodox, Lasker and Tartakower QGD before ...c5/…c6.",
        white_plans: &[
            "the minority attack after cxd5, or a central e4",
            "pressure on d5 with Bg5, Rc1 and Qc2",
        ],
        black_plans: &[
            "the freeing ...c5 or ...e5 breaks",
            "...dxc4 and ...c5 in QGA style, or ...Ne4 simplification",
        ],
    },
    Structure {
        name: "Boleslavsky",
        description: "White e4 without a d-pawn against Black's d6+e5 without a c-pawn: Boleslavsky Sicilian, Najdorf 6...e5, Sveshnikov and Kalashnikov: the d5 hole.",
        white_plans: &[
            "occupy d5 with a knight (Nc3-d5, Bg5xf6)",
            "play against the backward d6 pawn",
        ],
        black_plans: &[
            "the ...d5 break",
            "control d5 with ...Be6, ...Nf6 and queenside play with ...b5",
        ],
    },
    Structure {
        name: "Sveshnikov",
        description: "Black's d6 + e5 without a c-pawn and with the g-pawn gone to f6 (f7 and f6 or f5, doubled until an exchange on f5), White's d-pawn exchanged: the Sveshnikov after Bxf6 gxf6 (1. e4 c5 2. Nf3 Nc6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 e5 6. Ndb5 d6 7. Bg5 a6 8. Na3 b5 9. Bxf6 gxf6).",
        white_plans: &[
            "the d5 outpost for a knight, c3 and Nc2-e3 to hold it",
            "the a4 lever against b5; exf5 to open the f-file for the pieces",
        ],
        black_plans: &[
            "...f5 to break up e4 and free the bishops (the pair compensates the structure)",
            "...Bg7, ...O-O and ...f4 or a kingside attack along the g-file",
        ],
    },
    Structure {
        name: "Dragon",
        description: "White e4 without a d-pawn against Black's d6+g6 without a c-pawn: the Sicilian Dragon (5...g6).",
        white_plans: &[
            "Yugoslav attack: Be3, f3, Qd2, O-O-O and h4-h5",
            "the Bc4 to keep ...d5 down",
        ],
        black_plans: &[
            "the g7 bishop on the long diagonal, ...Rc8 and ...Rxc3",
            "queenside attack with ...b5 and ...Qa5",
        ],
    },
    Structure {
        name: "Najdorf",
        description: "White e4 without a d-pawn against Black's a6+d6 with the e-pawn on e7 and no c-pawn: the Sicilian Najdorf before ...e5/...e6 (5...a6).",
        white_plans: &["English attack (Be3, f3, g4) or 6. Bg5 with f4", "the e4-e5 break"],
        black_plans: &[
            "choose ...e5 (Boleslavsky hole) or ...e6 (small centre)",
            "queenside expansion with ...b5 and ...Bb7",
        ],
    },
    Structure {
        name: "Scheveningen",
        description: "White e4 without a d-pawn against Black's d6+e6 small centre without a c-pawn: Scheveningen, Najdorf with ...e6, Taimanov and Kan small centres.",
        white_plans: &[
            "the Keres attack g4-g5 or f4 and e5",
            "a kingside pawn storm after opposite castling",
        ],
        black_plans: &[
            "the ...d5 or ...e5 breaks",
            "queenside counterplay with ...b5 and pressure on the c-file",
        ],
    },
    Structure {
        name: "Sicilian",
        description: "White e4 without a d-pawn against Black's d-pawn without a c-pawn: the Open Sicilian (2...d6/2...Nc6/2...e6 3. d4 cxd4).",
        white_plans: &[
            "space advantage and kingside attack",
            "use the half-open d-file and the d5 square",
        ],
        black_plans: &[
            "the half-open c-file and queenside play",
            "the central breaks ...d5 and ...e5",
        ],
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
        white_plans: &[
            "the kingside attack f4-f5, Nf3-h4 or Be3, Qd2, Bh6",
            "keep the centre closed",
        ],
        black_plans: &[
            "queenside expansion with ...Rb8, ...b5-b4",
            "the ...e5 clamp or ...d5 in the centre",
        ],
    },
    Structure {
        name: "Closed Ruy",
        description: "White c3 + e4 with d4 (or d5), or d3 against Black's ...b5, facing Black's d6+e5: the Closed Ruy Lopez (Chigorin, Breyer, Zaitsev, 6. d3 b5 lines).",
        white_plans: &["the manoeuvre Nbd2-f1-g3 and the d4 break", "the queenside a4 lever"],
        black_plans: &[
            "the ...c5/...b5 queenside expansion, or ...d5",
            "the ...f5 break after ...Nh7/...Ng5",
        ],
    },
    Structure {
        name: "King's Indian Attack",
        description: "White d3 + e4 + g3 with the c-pawn on c2/c3: the King's Indian Attack (Nf3, g3, Bg2, d3, e4) and reversed King's Indians.",
        white_plans: &[
            "e4-e5 and a kingside attack with Nf1-h2-g4, h4",
            "the Bg2 diagonal after exf5/exd5",
        ],
        black_plans: &[
            "queenside expansion with ...b5-b4 and ...a5-a4",
            "the ...d5 break in the centre",
        ],
    },
    Structure {
        name: "London",
        description: "White d4 + e3 with no pawns on c4/f4 and the dark-squared bishop on f4/g3/h2 against ...d5/...d6: the London System.",
        white_plans: &[
            "Nbd2, Ngf3, c3, Bd3 and the kingside attack (Ne5, Qf3)",
            "the e4 break when Black castles",
        ],
        black_plans: &[
            "...c5 and ...Qb6 against b2",
            "the ...Bd6 to trade the dark-squared bishops",
        ],
    },
    Structure {
        name: "Colle",
        description: "White d4 + e3 with the c-pawn on c2/c3 (b-pawn at home) and the dark-squared bishop on c1 against ...d5: the Colle System (c3, Bd3, Nbd2).",
        white_plans: &[
            "the e3-e4 break after Nbd2 and Re1",
            "dxc5 and e4 with a kingside attack from Bd3",
        ],
        black_plans: &["...c5 and ...Nc6 with pressure on d4", "...b6 and ...Bb7 to fight for e4"],
    },
    Structure {
        name: "Colle–Zukertort",
        description: "White's b3, c2 (no c4), d4 and e3 against Black's d5: the Colle–Zukertort (1. d4 d5 2. Nf3 Nf6 3. e3 e6 4. Bd3 c5 5. b3), the queenside fianchetto behind the Colle triangle.",
        white_plans: &[
            "Bb2, Nbd2 and Ne5 with f4, then a kingside attack with the bishops on d3 and b2",
            "dxc5 and c4 to open the long diagonal at the right moment",
        ],
        black_plans: &[
            "...cxd4 and ...Bb4 or ...Ne4 to meet Ne5",
            "...b6 and ...Bb7 to mirror the set-up; trade the d3 bishop with ...Nb4",
        ],
    },
    Structure {
        name: "French Winawer",
        description: "White's doubled c2/c3 pawns behind the d4-e5 chain against Black's d5-e6: the Winawer French after ...Bb4xc3+ bxc3 (1. e4 e6 2. d4 d5 3. Nc3 Bb4 4. e5 c5 5. a3 Bxc3+ 6. bxc3).",
        white_plans: &[
            "attack the weakened dark squares on the kingside with Qg4 and h4-h5",
            "open the position for the bishop pair with a4 and Ba3",
        ],
        black_plans: &[
            "pressure the doubled c-pawns with ...Qa5, ...Ba4 and ...Nbc6",
            "block the queenside and castle long or keep the king in the centre",
        ],
    },
    Structure {
        name: "King's Indian Sämisch",
        description: "White c4, d4, e4 and f3 against Black's d6 + g6: the Sämisch King's Indian (5. f3) while d4 stands; once d5 closes the centre the King's Indian or Benoni chain names it.",
        white_plans: &[
            "Be3, Qd2 and long castling with the g4/h4-h5 pawn storm",
            "keep e4 solid and grab queenside space with Nge2 and Nc1-b3",
        ],
        black_plans: &[
            "the ...c5 or ...e5 central breaks and the Benko-style ...b5 sacrifice",
            "...Nc6, ...a6, ...Rb8 and ...b5 against the long-castled king",
        ],
    },
    Structure {
        name: "Czech Benoni",
        description: "White c4, d5, e4 against Black's c5, d6, e5: a fully blocked centre (1. d4 Nf6 2. c4 c5 3. d5 e5 4. Nc3 d6 5. e4).",
        white_plans: &[
            "the g4 restraint and a kingside space grab, or b4 on the queenside",
            "keep the knights on good squares; Black's pieces have little room",
        ],
        black_plans: &[
            "the ...f5 break after ...Ne8 and ...g6, or ...b5 after ...a6 and ...Rb8",
            "manoeuvre slowly: the blocked centre rewards patience",
        ],
    },
    Structure {
        name: "King's Indian Fianchetto",
        description: "White c4 + d4 with g3 and no e4 against Black's d6 + g6: the Fianchetto King's Indian (3. Nf3 Bg7 4. g3 O-O 5. Bg2 d6 6. O-O).",
        white_plans: &[
            "e4 later with a big centre, or d5 to gain space",
            "the long diagonal: pressure on b7 and the queenside",
        ],
        black_plans: &[
            "...e5 or ...c5 against d4; the Panno ...Nc6, ...a6, ...Rb8 and ...b5",
            "the Yugoslav ...c5 with ...Nc6 and ...Bf5",
        ],
    },
    Structure {
        name: "Old Indian",
        description: "White c4 + d4 against Black's d6 and e5 (or e7) with the g-pawn at home: the Old Indian (1. d4 Nf6 2. c4 d6 3. Nc3 e5) and Neo-Old Indian set-ups.",
        white_plans: &[
            "space with e4 and d5, then a queenside expansion with b4 and c5",
            "the g3 fianchetto against Black's light squares",
        ],
        black_plans: &[
            "keep the tension with ...Nbd7, ...Be7, ...c6 and ...Qc7",
            "the ...exd4 release and piece play against c4 and e4",
        ],
    },
    Structure {
        name: "Leningrad Dutch",
        description: "White d4 without e4 against Black's d6, f5 and g6: the Leningrad Dutch (1. d4 f5 2. g3 Nf6 3. Bg2 g6 4. Nf3 Bg7 5. O-O O-O 6. c4 d6).",
        white_plans: &[
            "the d5 advance and Nd4-e6, or b4-b5 on the queenside",
            "the e4 break against f5 after Qc2 and Rd1",
        ],
        black_plans: &[
            "...e5 with ...Qe8 or ...c6 and ...Qe8",
            "the kingside attack with ...Qe8-h5 and ...Ng4",
        ],
    },
    Structure {
        name: "Classical Dutch",
        description: "White d4 without e4 against Black's e6 + f5 without ...d5: the Classical and Ilyin-Zhenevsky Dutch (1. d4 f5 2. c4 Nf6 3. g3 e6 4. Bg2 Be7 5. Nf3 O-O 6. O-O d6).",
        white_plans: &[
            "the e4 break, prepared with Nc3 and Qc2",
            "space on the queenside with b4 and c5",
        ],
        black_plans: &[
            "...e5 (after ...d6 and ...Qe8) or a kingside attack with ...Qe8-h5",
            "the ...Ne4 outpost",
        ],
    },
    Structure {
        name: "Dutch",
        description: "White d4 without e4 against Black's f5 (no ...e5): Dutch Defence systems not yet settled into the Stonewall, Leningrad or Classical set-ups.",
        white_plans: &[
            "e2-e4 in one go (Staunton gambit, Nc3 and f3), or a g3 fianchetto",
            "Bg5 and h4 against the weakened kingside",
        ],
        black_plans: &[
            "control of e4 with ...Nf6 and the f5 pawn",
            "choose the set-up: ...e6 and ...d5 (Stonewall), ...g6 and ...d6 (Leningrad)",
        ],
    },
    Structure {
        name: "Caro-Kann Advance",
        description: "White's d4-e5 chain against Black's c6 + d5: the Caro-Kann Advance (1. e4 c6 2. d4 d5 3. e5 Bf5), before the French-like ...e6 or with the bishop outside the chain.",
        white_plans: &[
            "the kingside pawn push g4 and h4 against the f5 bishop",
            "the c4 lever or Nf3, Be2 and O-O with a space edge",
        ],
        black_plans: &[
            "...c5 against the base of the chain",
            "...e6, ...Nd7 and ...Ne7 with the light-squared bishop outside",
        ],
    },
    Structure {
        name: "Alekhine",
        description: "White d4 + e5 against Black's d6 and e7: the Alekhine Defence's Four Pawns and Modern lines before the exchange on d6 (1. e4 Nf6 2. e5 Nd5 3. d4 d6).",
        white_plans: &[
            "keep the broad centre with c4, f4 and Nf3",
            "chase the knight and build a space advantage",
        ],
        black_plans: &[
            "hit the centre with ...dxe5, ...Bg4, ...Nc6 and ...c5",
            "trade pieces; White's pawns can become targets",
        ],
    },
    Structure {
        name: "Alekhine Four Pawns",
        description: "White's c4, d4 and e5 with f4 (or the f-pawn gone after ...dxe5 fxe5) against Black's d6 or no d-pawn: the Four Pawns Attack (1. e4 Nf6 2. e5 Nd5 3. d4 d6 4. c4 Nb6 5. f4).",
        white_plans: &[
            "keep the four-pawn centre with Be3, Nc3 and Nf3, then d5 or f5 at the right moment",
            "after ...dxe5 fxe5: a kingside attack behind e5 and the half-open f-file",
        ],
        black_plans: &[
            "undermine the centre at once: ...dxe5, ...Nc6, ...Bf5 or ...Bg4 against d4",
            "...c5 or ...f6 breaks; the centre overextended becomes a target",
        ],
    },
    Structure {
        name: "Exchange Slav",
        description: "White's d4 against Black's d5 with no c-pawns: the Exchange Slav (3. cxd5 cxd5) and other symmetrical c-file exchanges.",
        white_plans: &[
            "the open c-file: Rc1 and Bf4 with small pressure",
            "the minority plan b4-b5 or a knight on c5",
        ],
        black_plans: &[
            "mirror White's development and contest the c-file",
            "an early ...Bf5 and ...e6: the symmetrical equalising plan",
        ],
    },
    Structure {
        name: "Tarrasch",
        description: "White's d4 (with c4) against Black's c5 + d5 (with e6, or without the e-pawn after ...exd5): the Tarrasch and Semi-Tarrasch before the isolated pawn is fixed.",
        white_plans: &[
            "dxc5 or cxd5 to saddle Black with an isolated or hanging pawn",
            "the Rubinstein g3 fianchetto against d5",
        ],
        black_plans: &[
            "free piece play: ...Nc6, ...Nf6, ...Be7 and ...O-O",
            "...c4 to gain space when White allows it",
        ],
    },
    Structure {
        name: "Scandinavian",
        description: "White's d-pawn without an e-pawn against Black's c- and e-pawns without a d-pawn: the Scandinavian (1. e4 d5 2. exd5 Qxd5) and similar exchanges on d5.",
        white_plans: &[
            "tempo on the queen with Nc3, then a space edge with d4 and Nf3",
            "long castling and the h4-g4 pawn storm",
        ],
        black_plans: &[
            "...c6, ...Bf5 (or ...Bg4) and ...e6: a solid Caro-Kann-like set-up",
            "the ...c5 or ...e5 break",
        ],
    },
    Structure {
        name: "Symmetrical Centre",
        description: "No e-pawns and the d-pawns facing each other: the Exchange French (3. exd5 exd5), the Petroff (5. d4 d5, 5. d3) and other symmetrical exchanges.",
        white_plans: &[
            "the open e-file: Re1, Ne5 and piece pressure",
            "c4 to create an isolated pawn or hanging pawns",
        ],
        black_plans: &[
            "mirror the piece set-up and contest the e-file",
            "castle opposite and attack when White castles short",
        ],
    },
    Structure {
        name: "Grünfeld",
        description: "Black's ...d5 + ...g6 against White's d4 (with c4 in the tension, or after cxd5 without e4): Grünfeld lines other than the e4 centre.",
        white_plans: &[
            "the e4 centre when it can be kept, or a quiet Bf4/Bg5 with e3",
            "pressure on d5 and the queenside",
        ],
        black_plans: &[
            "...c5 and ...Nc6 against d4 with the Bg7",
            "...dxc4 and piece play on the queenside",
        ],
    },
    Structure {
        name: "Open Catalan",
        description: "White's d4 and the g3 fianchetto without a c-pawn against Black's e6 without a d-pawn: the Open Catalan after ...dxc4 (1. d4 Nf6 2. c4 e6 3. g3 d5 4. Bg2 dxc4).",
        white_plans: &[
            "win back c4 with Qa4 or Qc2 and press on the long diagonal",
            "e4 and the queenside majority",
        ],
        black_plans: &[
            "hold c4 with ...b5 or return it for development",
            "the ...c5 break with ...Bb7 against the g2 bishop",
        ],
    },
    Structure {
        name: "Catalan",
        description: "White c4 + d4 with g3 against Black's e6 (and ...d5): the Closed Catalan (4. Bg2 Be7 5. Nf3 O-O) and Bogo-Catalan positions.",
        white_plans: &[
            "pressure on d5 and b7 with the Bg2, Qc2 and Rd1",
            "the e4 break when Black's pieces are passive",
        ],
        black_plans: &[
            "...dxc4 at the right moment and ...b5 or ...c5",
            "...Nbd7, ...c6 and ...b6 with ...Bb7: a solid QGD",
        ],
    },
    Structure {
        name: "Meran",
        description: "White's d4 (with e3) without a c-pawn against Black's c6 + e6 after ...dxc4: the Meran Semi-Slav (6. Bd3 dxc4 7. Bxc4 b5) and Slav lines with ...e6.",
        white_plans: &[
            "the e4-e5 advance or d4-d5 break",
            "play against the c6 pawn with Nd2-e4 and Rc1",
        ],
        black_plans: &[
            "...b5, ...Bb7 and ...c5 (or ...a6 and ...c5)",
            "the ...e5 break to free the position",
        ],
    },
    Structure {
        name: "Queen's Gambit",
        description: "White c4 + d4 against Black's d5 with c7 and e7 still home: the Queen's Gambit before ...e6/...c6 (Chigorin 2...Nc6, Baltic 2...Bf5, early 2...Nf6 lines).",
        white_plans: &["cxd5 and e4 to take the centre", "Nc3, Nf3 and a quick Qb3 against b7"],
        black_plans: &[
            "development with tempo against the centre (...Nc6, ...Bg4)",
            "...e5 or ...dxc4 to hit d4",
        ],
    },
    Structure {
        name: "Queen's Gambit Accepted",
        description: "White's d4 (with an e-pawn) without a c-pawn against Black's lack of a d-pawn: the QGA (2...dxc4) and QGD lines after ...dxc4 and Bxc4.",
        white_plans: &[
            "a central majority: e3-e4, d4-d5",
            "piece activity from the IQP if ...c5 is traded",
        ],
        black_plans: &[
            "...c5 to undermine d4, ...a6 and ...b5 with tempo",
            "blockade d5 and aim for an endgame",
        ],
    },
    Structure {
        name: "Albin Counter-Gambit",
        description: "White's c4 + e5 without a d-pawn against Black's d4 wedge without an e-pawn: the Albin Counter-Gambit (1. d4 d5 2. c4 e5 3. dxe5 d4).",
        white_plans: &[
            "keep the extra pawn with Nf3, g3 and Bg2 and round up d4",
            "b4-b5 and the queenside majority",
        ],
        black_plans: &[
            "...Nc6, ...Bg4/Be6, ...Qd7 and long castling",
            "recover e5 or use the cramping d4 pawn",
        ],
    },
    Structure {
        name: "Nimzo–Queen's Indian",
        description: "White c4 + d4 against Black's e6 with the d-pawn on d7/d6 and no ...d5: Nimzo-Indian, Queen's Indian and Bogo-Indian before the centre is fixed.",
        white_plans: &[
            "build e4 with f3 or Qc2, or a3 to gain the bishop pair",
            "the g3 fianchetto against the Bb7",
        ],
        black_plans: &[
            "control e4 with ...Bb7, ...Bb4 and ...Ne4",
            "the ...c5 or ...d5 break when White's pieces are committed",
        ],
    },
    Structure {
        name: "Accelerated Dragon",
        description: "White e4 without a d-pawn against Black's ...g6 with the d-pawn at home and no c-pawn: the Accelerated Dragon before ...d6 (2...Nc6 3. d4 cxd4 4. Nxd4 g6).",
        white_plans: &["c4 for the Maroczy Bind", "Nc3, Be3 and Bc4 with a quick attack"],
        black_plans: &[
            "the ...d5 break in one move",
            "...Nf6, ...Bg7, ...O-O with pressure on the long diagonal",
        ],
    },
    Structure {
        name: "Sicilian Taimanov–Kan",
        description: "White e4 without a d-pawn against Black's e6 with the d-pawn still on d7 and no c-pawn: the Taimanov (4...Nc6) and Kan (4...a6) before ...d6.",
        white_plans: &[
            "c4 for a Maroczy-type bind, or Nc3, Be3, Qd2 and long castling",
            "Nb5-d6 against the d6 hole",
        ],
        black_plans: &[
            "flexible ...Qc7, ...a6 and ...b5",
            "the ...d5 break in one move, or ...d6 into a Scheveningen",
        ],
    },
    Structure {
        name: "Alapin",
        description: "White's c3 with e4 (or d4 after the exchange on d5) against Black's c5: the Alapin Sicilian (2. c3) before the centre is settled.",
        white_plans: &[
            "d4 with a full centre; after ...cxd4 cxd4 the IQP or a big centre",
            "develop quickly and use e5 against a knight on f6",
        ],
        black_plans: &[
            "...d5 or ...Nf6 against e4 before White builds the centre",
            "...cxd4 and play against the isolated d-pawn",
        ],
    },
    Structure {
        name: "Anti-Sicilian",
        description: "White's e4 with the c-pawn at home and the d-pawn on d2/d3 against Black's c5: the Rossolimo, Moscow, 2. Nc3 and 2. Nf3 lines before d4.",
        white_plans: &[
            "Bb5 and Bxc6 to damage the queenside, then d3 and a slow build-up",
            "c3 and d4 at the right moment",
        ],
        black_plans: &[
            "...g6 and ...Bg7, or ...e5 against the d4 push",
            "the bishop pair after Bxc6",
        ],
    },
    Structure {
        name: "Giuoco Pianissimo",
        description: "White's d3 + e4 (c-pawn on c2/c3) against Black's e5 with ...d6 or the d-pawn at home: the slow Italian (4. d3), the Ruy Lopez 4. d3/6. d3 lines without ...b5, and the Four Knights.",
        white_plans: &[
            "the manoeuvre Nbd2-f1-g3, then d4 or a kingside attack with Bg5/Nh4",
            "a4 and b4 to gain queenside space",
        ],
        black_plans: &[
            "mirror with ...Ne7-g6 and ...c6, then ...d5",
            "...a6, ...Ba7 and the ...f5 break",
        ],
    },
    Structure {
        name: "Ruy Lopez Exchange",
        description: "Black's doubled c-pawns (c7 + c6) without a d-pawn against White's e4: the Exchange Ruy Lopez (4. Bxc6 dxc6) and Four Knights exchanges on c6.",
        white_plans: &[
            "d4xe5 and the kingside pawn majority in the endgame",
            "trade pieces; the healthy majority makes a passed pawn",
        ],
        black_plans: &[
            "the bishop pair and the open d-file",
            "...f6, ...Bg4 or ...Qd6 to keep pieces active",
        ],
    },
    Structure {
        name: "King's Gambit",
        description: "White's e4 + f4 against Black's e5 with the gambit declined: the King's Gambit Declined (2...Bc5, Falkbeer) and Vienna/Bishop's Opening gambits with f4.",
        white_plans: &["open the f-file with fxe5 and play on f7", "the broad centre with d4"],
        black_plans: &["...Bc5 against g1, ...d6 to keep e5", "the ...d5 counter-gambit"],
    },
    Structure {
        name: "King's Gambit Accepted",
        description: "White's e4 without an f-pawn against Black's f4 gambit pawn without an e-pawn: the King's Gambit Accepted (2. f4 exf4) and Vienna/Bishop's gambits accepted.",
        white_plans: &[
            "rapid development, d4 and the open f-file against f7",
            "regain f4 with Bxf4 after h4 or Nf3",
        ],
        black_plans: &[
            "hold f4 with ...g5 (...h6) or return it with ...d5",
            "the ...d5 break to open the centre",
        ],
    },
    Structure {
        name: "Philidor",
        description: "White's d4 + e4 (no c4) against Black's d6 + e5: the Philidor (1. e4 e5 2. Nf3 d6 3. d4) and the Pirc/Lion set-ups with ...e5.",
        white_plans: &[
            "space with c3 or a kingside attack behind the centre",
            "dxe5 and the d-file against d6",
        ],
        black_plans: &[
            "hold e5 with ...Nbd7, ...c6 and ...Qc7 (Hanham)",
            "...exd4 and piece play against e4",
        ],
    },
    Structure {
        name: "Pirc–Modern",
        description: "White's d4 + e4 (no c4) against Black's d6 with the e-pawn at home: the Pirc (1. e4 d6 2. d4 Nf6 3. Nc3 g6) and Modern set-ups.",
        white_plans: &[
            "the Austrian f4 and e5, or Be3, Qd2 and long castling with h4-h5",
            "a solid centre with Nf3, Be2 and O-O",
        ],
        black_plans: &[
            "...c5 or ...e5 against the centre",
            "queenside play with ...c6, ...b5 and ...a6",
        ],
    },
    Structure {
        name: "Reversed Sicilian",
        description: "White's c4 (d-pawn on d2/d3, no e4) against Black's e5: the English 1. c4 e5, a Sicilian with colours reversed.",
        white_plans: &[
            "the queenside: Rb1, b4-b5 and the long diagonal",
            "d3 and Nd5 on the weakened d5 square",
        ],
        black_plans: &[
            "the ...d5 break in one move (Reversed Dragon)",
            "space with ...f5 and a kingside attack",
        ],
    },
    Structure {
        name: "Réti",
        description: "White's c4 (d-pawn on d2/d3, no e4) against Black's d5: the Réti (1. Nf3 d5 2. c4) and English lines against ...d5.",
        white_plans: &[
            "pressure on d5 with Bg2, Qb3 or cxd5",
            "the queenside fianchetto with b3 and Bb2",
        ],
        black_plans: &[
            "...d4 for space or ...c6 and ...Bf5/Bg4 to hold d5",
            "...dxc4 to trade the centre",
        ],
    },
    Structure {
        name: "Bird",
        description: "White's f4 without e4 and with the d-pawn on d2/d3: the Bird Opening (1. f4) and reversed Dutch set-ups.",
        white_plans: &["control of e5 with Nf3 and b3/Bb2", "a kingside attack with Qe1-h4"],
        black_plans: &[
            "the ...e5 break (From's gambit ideas) or ...d5 and ...c5",
            "the long-diagonal bishop against the weakened e3",
        ],
    },
    Structure {
        name: "Open English",
        description: "White's c4 without a d-pawn (and no e4) against Black's d-pawn without a c-pawn: the Symmetrical English after d4 cxd4 (Double Fianchetto, Hedgehog before ...e6/...d6) and Nimzo/Queen's Indian lines after ...c5 dxc5.",
        white_plans: &[
            "the Maroczy clamp with e4, or pressure down the d-file with Rd1 and Qd4/Qd2",
            "b3, Bb2 and the long diagonal",
        ],
        black_plans: &[
            "a Hedgehog with ...a6, ...b6, ...d6 and ...e6, waiting for ...b5 or ...d5",
            "the ...d5 break in one move",
        ],
    },
    Structure {
        name: "Berlin Wall",
        description: "White's e5 without a d-pawn against Black's doubled c6/c7 pawns without d- or e-pawns: the Berlin endgame (4. O-O Nxe4 5. d4 Nd6 6. Bxc6 dxc6 7. dxe5 Nf5 8. Qxd8+).",
        white_plans: &[
            "the kingside majority: f4-f5 and a passed pawn, with Nc3, h3 and Rd1",
            "keep Black's bishops quiet and trade one",
        ],
        black_plans: &[
            "the bishop pair and a blockade on the light squares (...h6, ...Be6, ...Kc8)",
            "...c5, ...b6 and a queenside majority of its own",
        ],
    },
    Structure {
        name: "Petroff Doubled C-Pawns",
        description: "White's doubled c2/c3 pawns without d- or e-pawns against Black's d-pawn without an e-pawn: the Petroff's Nimzowitsch Attack (5. Nc3 Nxc3 6. dxc3).",
        white_plans: &[
            "fast development and long castling: Be3, Qd2, O-O-O",
            "the open d-file against d6",
        ],
        black_plans: &[
            "castle short and play ...Nc6, ...Be6 and ...Qd7",
            "the ...d5 move to neutralise the d-file",
        ],
    },
    Structure {
        name: "Broad Centre",
        description: "White's d4 + e4 against Black's d-pawn without an e-pawn: the Giuoco Piano after 5. d4 exd4 6. cxd4, the Max Lange and Scotch gambits, and other open games where White gets the classical centre.",
        white_plans: &[
            "keep the centre and push d5 or e5 with tempo",
            "open lines for a quick attack while Black is undeveloped",
        ],
        black_plans: &[
            "hit the centre at once with ...d5 (or ...Bb4+ and ...d5)",
            "piece pressure on e4 and d4 to make the pawns targets",
        ],
    },
    Structure {
        name: "Reversed Dragon",
        description: "White without c- or e4-pawn and the d-pawn on d2/d3 against Black's e5 without a d-pawn: the English Four Knights and Reversed Dragon (1. c4 e5 2. Nc3 Nf6 3. Nf3 Nc6 4. g3 d5 5. cxd5 Nxd5).",
        white_plans: &[
            "the long diagonal, Rb1 and b4-b5 against c7 and e5",
            "a3 and b4, then Qc2 and Rc1 on the half-open c-file",
        ],
        black_plans: &[
            "a solid set-up with ...Be7, ...O-O, ...Nb6 and ...f6/...Be6",
            "space with ...a5, or ...f5 and a kingside build-up",
        ],
    },
    Structure {
        name: "Small Centre",
        description: "White's d-pawn without an e-pawn against Black's e5 without a d-pawn: Italian and Spanish lines after ...d5 exd5 Nxd5, and other open games with the e5 pawn against a d3 pawn.",
        white_plans: &[
            "Re1 and pressure on e5; the d3-d4 break at the right moment",
            "Nbd2-e4 and the f7/d5 targets",
        ],
        black_plans: &[
            "keep e5 defended and the d5 knight centralised",
            "...f6 or ...f5 for a kingside build-up",
        ],
    },
    Structure {
        name: "Nimzowitsch–Larsen",
        description: "White's b3 + e3 without c4 or d4: the Nimzowitsch–Larsen Attack (1. b3) and queenside-fianchetto set-ups with e3.",
        white_plans: &[
            "the long diagonal from b2, control of e5 with Nf3 and f4",
            "c4 or d4 later to strike at the centre",
        ],
        black_plans: &[
            "a broad centre with ...d5, ...e5 or ...c5",
            "...Bd6 and ...Nc6 against the b2 bishop's diagonal",
        ],
    },
    Structure {
        name: "Open Centre",
        description: "No c- or d-pawns on either side: QGA and Catalan lines after dxc5 and the queen trade, and Symmetrical English exchanges.",
        white_plans: &[
            "the d- and c-files with the rooks; a queenside majority",
            "the e-pawn's advance e4-e5 for space",
        ],
        black_plans: &[
            "contest the open files and trade rooks",
            "king to the centre in the endgame; ...e5 for equal space",
        ],
    },
];
