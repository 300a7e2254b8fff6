#!/usr/bin/env python3
"""python-chess's `engine.analyse` loop for bench/engine, one engine per worker thread
(default: one per core), Threads=1, Hash 16, MultiPV 3, a new `game` per position so
python-chess sends `ucinewgame` like okb does. Prints key=value."""
import os
import queue
import sys
import threading
import time

import chess
import chess.engine


def worker(engine_path, jobs, depth, totals, lock):
    engine = chess.engine.SimpleEngine.popen_uci(engine_path)
    engine.configure({"Threads": 1, "Hash": 16})
    while True:
        try:
            i, fen = jobs.get_nowait()
        except queue.Empty:
            break
        infos = engine.analyse(chess.Board(fen), chess.engine.Limit(depth=depth), multipv=3, game=i)
        with lock:
            totals[0] += 1
            totals[1] += max(info.get("nodes", 0) for info in infos)
    engine.quit()


def main():
    positions, depth, engine = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    workers = int(sys.argv[4]) if len(sys.argv) > 4 else os.cpu_count()
    rows = [l.rstrip("\n").split("\t") for l in open(positions) if l.strip()]
    rows.sort(key=lambda r: (-int(r[2]), r[0]))
    jobs = queue.Queue()
    for i, r in enumerate(rows):
        jobs.put((i, r[1]))
    totals, lock = [0, 0], threading.Lock()
    start = time.monotonic()
    threads = [threading.Thread(target=worker, args=(engine, jobs, depth, totals, lock)) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    print(f"positions={totals[0]} elapsed_s={elapsed:.3f} positions_per_s={totals[0] / elapsed:.4f} nodes={totals[1]} nodes_per_s={totals[1] / elapsed:.0f} engines={workers}")


if __name__ == "__main__":
    main()
