#!/usr/bin/env python3
"""The ceiling for bench/engine: Stockfish driven directly over UCI, no okb, no library.

One Stockfish process per worker thread (default: one per core), Threads=1, the same
Hash and MultiPV as okb, positions taken from a shared queue in the file's priority
order, and `ucinewgame` before each search like okb's default. Prints key=value.
"""
import os
import queue
import subprocess
import sys
import threading
import time


def worker(engine, jobs, depth, hash_mb, multipv, new_game, totals, lock):
    p = subprocess.Popen([engine], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def send(s):
        p.stdin.write(s + "\n")
        p.stdin.flush()

    def until(prefix):
        nodes = 0
        for line in p.stdout:
            if line.startswith("info") and " nodes " in line:
                nodes = int(line.split(" nodes ")[1].split()[0])
            if line.startswith(prefix):
                return nodes
        raise RuntimeError("engine closed its output")

    send("uci")
    until("uciok")
    send(f"setoption name Threads value 1\nsetoption name Hash value {hash_mb}\nsetoption name MultiPV value {multipv}\nisready")
    until("readyok")
    searched = 0
    while True:
        try:
            fen = jobs.get_nowait()
        except queue.Empty:
            break
        if new_game and searched:
            send("ucinewgame")
        send(f"position fen {fen}\ngo depth {depth}")
        nodes = until("bestmove")
        searched += 1
        with lock:
            totals[0] += 1
            totals[1] += nodes
    send("quit")
    p.wait()


def main():
    positions, depth, engine = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    workers = int(sys.argv[4]) if len(sys.argv) > 4 else os.cpu_count()
    new_game = (sys.argv[5] if len(sys.argv) > 5 else "1") == "1"
    rows = [l.rstrip("\n").split("\t") for l in open(positions) if l.strip()]
    # okb's order: priority descending, ties by path.
    rows.sort(key=lambda r: (-int(r[2]), r[0]))
    jobs = queue.Queue()
    for r in rows:
        jobs.put(r[1])
    totals, lock = [0, 0], threading.Lock()
    start = time.monotonic()
    threads = [threading.Thread(target=worker, args=(engine, jobs, depth, 16, 3, new_game, totals, lock)) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    print(f"positions={totals[0]} elapsed_s={elapsed:.3f} positions_per_s={totals[0] / elapsed:.4f} nodes={totals[1]} nodes_per_s={totals[1] / elapsed:.0f} engines={workers}")


if __name__ == "__main__":
    main()
