#!/usr/bin/env python3
"""Counts the distinct games among the rows of a repertoire's games.txt, independently of
okb: each row's game is read with python-chess from its file at its line (the row's
`file:line`), two games being the same when their White, Black, Date and Result tags and
all their moves are equal. Prints `<rows> <distinct>`.

Usage: check_judged_games.py PROJECT_DIR GAMES_TXT"""

import io
import re
import os
import subprocess
import sys

import chess.pgn


def opened(path):
    """The file's text, and where each of its lines starts in it."""
    if path.endswith(".zst"):
        data = subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout
    else:
        data = open(path, "rb").read()
    text = data.decode("latin-1")
    starts, at = [], 0
    for line in text.split("\n"):  # as okb numbers lines: by newlines alone
        starts.append(at)
        at += len(line) + 1
    return io.StringIO(text), starts


def main(root, games_txt):
    rows = [
        (m.group(1), int(m.group(2)))
        for m in (re.match(r"(\S+):(\d+)  ", l) for l in open(games_txt, encoding="utf-8"))
        if m
    ]
    files, seen = {}, set()
    for file, line in rows:
        path = os.path.join(root, file)
        if path not in files:
            files[path] = opened(path)
        text, starts = files[path]
        text.seek(starts[line - 1])
        game = chess.pgn.read_game(text)
        moves = tuple(m.uci() for m in game.mainline_moves())
        tags = tuple(game.headers.get(t, "") for t in ("White", "Black", "Date", "Result"))
        seen.add((moves, tags))
    print(len(rows), len(seen))


if __name__ == "__main__":
    main(*sys.argv[1:])
