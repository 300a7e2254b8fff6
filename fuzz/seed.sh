#!/usr/bin/env bash
# Builds the seed corpora of the fuzz targets from ../shared and the fixtures into
# fuzz/corpus/<target>/ (git-ignored). Run from anywhere; needs ../shared beside the repo
# and a built okb (target/release/okb) for the BGN seeds.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
shared="$root/../shared"
corpus="$here/corpus"
mkdir -p "$corpus"/{pgn,bgn,lichess_tsv,scid_eco,eco_pgn,fen,pipeline_toml,http,structure_labels}

# Files cut into pieces of about 4 KB at line ends (libFuzzer's default input size).
split_lines() { # file target prefix
    python3 - "$1" "$2" "$3" <<'PY'
import sys, os
data = open(sys.argv[1], 'rb').read()
out, prefix = sys.argv[2], sys.argv[3]
pieces, start = 0, 0
while start < len(data) and pieces < 200:
    end = data.find(b'\n', start + 4000)
    end = len(data) if end < 0 else end + 1
    open(os.path.join(out, f"{prefix}-{pieces:03}"), 'wb').write(data[start:end])
    start, pieces = end, pieces + 1
PY
}
for f in "$root"/fixtures/games/*.pgn; do cp "$f" "$corpus/pgn/"; done
split_lines "$shared/corpus/lichess/lichess_db_standard_rated_2013-01.first5297.pgn" "$corpus/pgn" lichess
split_lines "$shared/corpus/twic/twic0920.pgn" "$corpus/pgn" twic
for f in "$shared"/sources/lichess-chess-openings/*.tsv "$root"/fixtures/eco/*.tsv; do split_lines "$f" "$corpus/lichess_tsv" "$(basename "$f")"; done
split_lines "$shared/sources/scid/scid.eco" "$corpus/scid_eco" scid
cp "$root/fixtures/eco/mini.eco" "$corpus/scid_eco/"
split_lines "$shared/sources/pgn-extract/eco.pgn" "$corpus/eco_pgn" eco
cp "$root/fixtures/eco/mini-eco.pgn" "$corpus/eco_pgn/"
if [ -x "$root/target/release/okb" ]; then
    tmp="$(mktemp -d)"
    "$root/target/release/okb" convert -q -o "$tmp/games.bgn" "$root/fixtures/games/openings.pgn" "$root/fixtures/games/classify.pgn"
    split_lines "$tmp/games.bgn" "$corpus/bgn" bgn
    rm -rf "$tmp"
fi
# FENs and EPDs: the start position, en passant (legal and not), castling, counters left out.
i=0
while IFS= read -r fen; do printf '%s' "$fen" > "$corpus/fen/fen-$i"; i=$((i + 1)); done <<'FENS'
rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1
rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq e6 0 2
rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3
r1bqkb1r/pp3ppp/2n2n2/3p4/3P4/2N2N2/PP3PPP/R1BQKB1R w KQkq -
8/8/8/8/8/8/8/K6k w - - 0 1
1. e4 c5 2. Nf3 d6 3. d4
FENS
cp "$root/pipeline.toml" "$root/fixtures/every-step.toml" "$corpus/pipeline_toml/"
# HTTP: a method byte (even GET, odd POST), the path and query, a newline, the body.
printf '\x00node/fen/rnbqkbnr_pppppppp_8_8_8_8_PPPPPPPP_RNBQKBNR_w_KQkq_-_0_1' > "$corpus/http/fen"
printf '\x01node/pgn\n{"moves": "1. e4 c5 2. Nf3"}' > "$corpus/http/pgn"
printf '\x00opening/search?q=sicilian&limit=5' > "$corpus/http/search"
printf '\x00opening/eco/B20?depth=3&min_games=1' > "$corpus/http/eco"
printf '\x00masters?fen=rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR%%20w%%20KQkq%%20-%%200%%201&moves=5' > "$corpus/http/masters"
printf '\x00structure/Carlsbad/openings' > "$corpus/http/structure"
printf '\x00opening/B20-sicilian-defense/tree?max_depth=3' > "$corpus/http/tree"
# Structure labels: the fixture, and the hand-checked positions as a moves-column form.
cp "$root"/fixtures/structures/labels.tsv "$corpus/structure_labels/fixture.tsv"
sed '1s/^structure\tmoves$/label\tmoves/' "$root"/fixtures/structures/hand-checked.tsv > "$corpus/structure_labels/hand-checked.tsv"
echo "seeded: $(find "$corpus" -type f | wc -l) files in $corpus"
