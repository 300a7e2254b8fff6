#!/usr/bin/env python3
"""Writes N opening-tree positions for bench/engine, deterministically.

The tree is every position along the lines of lichess-chess-openings (*.tsv, columns
eco, name, pgn); a node's weight is the number of named lines through it. The N heaviest
nodes (ties: fewer plies, then path) form the top of the tree, so parents and children
are both present, as in a real okb tree. Output lines: path<TAB>fen<TAB>weight, where
the FEN is the EPD with counters "0 1" (what okb itself sends to the engine).
"""
import csv
import glob
import os
import sys

import chess
import chess.pgn


def main(sources, n):
    weight = {}
    path_of = {}
    files = sorted(glob.glob(os.path.join(sources, "*.tsv")))
    if not files:
        sys.exit(f"no *.tsv under {sources}")
    for name in files:
        with open(name, newline="") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                board = chess.Board()
                path = []
                seen = set()
                nodes = [(board.epd(), "")]
                game = chess.pgn.read_game(__import__("io").StringIO(row["pgn"]))
                for move in game.mainline_moves():
                    path.append(board.san(move))
                    board.push(move)
                    nodes.append((board.epd(), " ".join(path)))
                for epd, p in nodes:
                    if epd in seen:
                        continue
                    seen.add(epd)
                    weight[epd] = weight.get(epd, 0) + 1
                    old = path_of.get(epd)
                    key = (len(p.split()), p)
                    if old is None or key < (len(old.split()), old):
                        path_of[epd] = p
    ranked = sorted(weight, key=lambda e: (-weight[e], len(path_of[e].split()), path_of[e]))
    for epd in ranked[:n]:
        print(f"{path_of[epd]}\t{epd} 0 1\t{weight[epd]}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 200)
