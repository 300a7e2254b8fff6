#!/usr/bin/env python3
"""Counts the games of PGN files (plain or .zst) with python-chess, independently of okb:
the games with a result (1-0, 0-1, 1/2-1/2), and how many of them are distinct, two games
being the same when their White, Black, Date and Result tags and all their moves are equal.
Prints `<counted> <distinct>`.

Usage: check_distinct_games.py FILE..."""

import io
import subprocess
import sys

import chess.pgn


def text(path):
    if path.endswith(".zst"):
        data = subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout
    else:
        data = open(path, "rb").read()
    return data.decode("latin-1")


def main(paths):
    counted, seen = 0, set()
    for path in paths:
        pgn = io.StringIO(text(path))
        while (game := chess.pgn.read_game(pgn)) is not None:
            result = game.headers.get("Result", "*")
            if result not in ("1-0", "0-1", "1/2-1/2") or game.errors:
                continue
            counted += 1
            moves = tuple(m.uci() for m in game.mainline_moves())
            tags = tuple(game.headers.get(t, "") for t in ("White", "Black", "Date", "Result"))
            seen.add((moves, tags))
    print(counted, len(seen))


if __name__ == "__main__":
    main(sys.argv[1:])
