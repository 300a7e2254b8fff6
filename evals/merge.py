#!/usr/bin/env python3
"""Merges files in the Lichess evaluation format into one: every evaluation of every
position, each position once (its evaluations deepest first, duplicates dropped), lines
sorted by FEN. Plain or .zst inputs (zstd on PATH); writes plain JSON lines to stdout.

  python3 evals/merge.py a.jsonl b.jsonl.zst | zstd -19 > evals/okb-shipped.jsonl.zst
"""
import json
import subprocess
import sys


def lines(path):
    if path.endswith(".zst"):
        data = subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout.decode()
    else:
        data = open(path).read()
    return (line for line in data.splitlines() if line.strip())


def main():
    merged = {}
    for path in sys.argv[1:]:
        for line in lines(path):
            entry = json.loads(line)
            evals = merged.setdefault(entry["fen"], [])
            for e in entry["evals"]:
                if e not in evals:
                    evals.append(e)
    for fen in sorted(merged):
        evals = sorted(merged[fen], key=lambda e: (-e["depth"], -e["knodes"]))
        sys.stdout.write(json.dumps({"fen": fen, "evals": evals}, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
