#!/usr/bin/env python3
"""Independent check of okb's import of a Lichess evaluation dump: python-chess reads the
dump's lines and the best move and score it finds for each position must be what okb's
CSV export says, for every node okb took from the dump (at least MIN of them).

usage: check_evals.py DUMP.jsonl NODES.csv MULTIPV MIN
"""

import csv
import json
import sys

import chess

dump_path, csv_path, multipv, minimum = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])

expected = {}
for line in open(dump_path):
    entry = json.loads(line)
    board = chess.Board(entry["fen"] + " 0 1")
    key = board.fen(en_passant="legal").rsplit(" ", 2)[0]
    # The deepest evaluation with enough lines (or all of the position's moves).
    needed = min(multipv, board.legal_moves.count())
    evals = [e for e in entry["evals"] if len(e["pvs"]) >= needed]
    best = max(evals, key=lambda e: (e["depth"], e["knodes"]))
    pv = best["pvs"][0]
    move = chess.Move.from_uci(pv["line"].split()[0])
    if "mate" in pv:
        score = 1000 if pv["mate"] > 0 else -1000
    else:
        score = max(-999, min(999, pv["cp"]))
    expected[key] = (board.san(move), score, best["depth"])

compared = 0
for row in csv.DictReader(open(csv_path)):
    if not row["eval_source"].startswith("evals@"):
        continue
    want = expected[row["position_key"]]
    got = (row["best_move"], int(row["stockfish_eval"]), int(row["stockfish_depth"]))
    if got != want:
        sys.exit(f"{row['position_key']}: okb {got}, python-chess {want}")
    compared += 1
if compared < minimum:
    sys.exit(f"only {compared} nodes came from the dump (wanted {minimum})")
print(compared)
