#!/usr/bin/env python3
"""Add a month of games to an okb counts state folder on Spark.

    spark-submit spark/okb_state.py --okb target/release/okb --state /mnt/okb/lichess-state \\
        --month 2024-01 --shards 256 --max-ply 15 --min-games 5 /data/lichess/2024-01/*.pgn.zst

(or `python3 spark/okb_state.py --master local[2] …` with pyspark installed). A pipeline
reads the folder as a source (`[sources.lichess] kind = "counts-state"`, `path = …`)
and builds the tree a `state = true` game source over the same months builds.

The okb binary is shipped to every executor with SparkContext.addFile. The driver makes
the state if it has none (`okb state init`: --shards, --max-ply and --filter are the
state's for good; an existing state must have the same). Stage 1 counts the month's
files, partitioned by file, each partition into a slices folder under the staging path
(`okb state count`: the month's counts cut by shard). Stage 2 runs one task per shard the
month touches (`okb state merge`): each reads its old shard from the state folder and
writes its new shard and hot cut there, so no state byte goes through Spark (no
shuffle). The driver then commits the month (`okb state commit`: the manifest written at
once, a month already in the state refused) and removes the staging. A failed or
retried task leaves nothing the commit trusts: files are written to temporary names and
renamed, pending merges are checked against the manifest, and until the commit the state
is the previous month's.

The state path and the staging path must be one folder every executor and the driver
can read and write under the same name: a local folder in local mode, else a shared
filesystem mounted on every node (NFS, or HDFS through its NFS gateway or FUSE, or S3
through s3fs / mountpoint-s3 with rename support). okb reads and writes plain files:
hdfs:// and s3a:// URLs are not opened directly. Executors read the game files by path
too.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

from pyspark import SparkFiles
from pyspark.sql import SparkSession


def run_okb(binary, args, what):
    run = subprocess.run([binary, *args], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"okb {what} failed: {run.stderr.strip()}")
    return run.stderr


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--okb", required=True, help="the okb binary (Linux, same as the executors')")
    p.add_argument("--state", required=True, help="the state folder (shared by every executor)")
    p.add_argument("--month", required=True, help="the month's name in the state (2024-01)")
    p.add_argument("--staging", help="where slices go (shared; default: STATE/staging/MONTH)")
    p.add_argument("--shards", type=int, default=256, help="shards of a new state")
    p.add_argument("--max-ply", type=int, default=15, help="the pipeline's tree.max_ply")
    p.add_argument("--filter", help="a new state's game filter, as TOML ('min_rating = 1800')")
    p.add_argument("--min-games", type=int, required=True, help="the pipeline's tree.min_games (the hot cut written)")
    p.add_argument("--partitions", type=int, default=0, help="counting partitions (default: one per file, at most 1000)")
    p.add_argument("--master", help="Spark master (default: spark-submit's)")
    p.add_argument("files", nargs="+", help="the month's game files (PGN, .zst, .bz2, .gz, BGN)")
    args = p.parse_args(argv)

    for path in (args.state, args.staging or ""):
        if "://" in path:
            sys.exit(f"{path}: okb reads and writes plain files; mount it on every node and give the mount's path")
    okb = os.path.abspath(args.okb)
    state = os.path.abspath(args.state)
    staging = os.path.abspath(args.staging or os.path.join(state, "staging", args.month))
    init = ["state", "init", "--state", state, "--shards", str(args.shards), "--max-ply", str(args.max_ply)]
    sys.stderr.write(run_okb(okb, init + (["--filter", args.filter] if args.filter else []), "state init"))
    shutil.rmtree(staging, ignore_errors=True)  # a failed run's slices

    builder = SparkSession.builder.appName("okb-state")
    if args.master:
        builder = builder.master(args.master)
    spark = builder.getOrCreate()
    sc = spark.sparkContext
    sc.addFile(okb)
    name = os.path.basename(okb)
    files = [os.path.abspath(f) for f in args.files]
    partitions = args.partitions or min(len(files), 1000)

    def binary():
        path = SparkFiles.get(name)
        os.chmod(path, 0o755)
        return path

    def count(index, part):
        part = list(part)
        if part:
            out = os.path.join(staging, f"part-{index:05}")
            run_okb(binary(), ["state", "count", "--state", state, "-o", out, *part], f"state count (partition {index})")
            yield out

    def merge(shard):
        args_ = ["state", "merge", "--state", state, "--shard", str(shard), "--min-games", str(args.min_games), *parts]
        run_okb(binary(), args_, f"state merge --shard {shard}")
        return shard

    try:
        parts = sorted(sc.parallelize(files, partitions).mapPartitionsWithIndex(count).collect())
        touched = set()
        for part in parts:
            with open(os.path.join(part, "counted.json")) as f:
                touched.update(s["shard"] for s in json.load(f)["slices"])
        touched = sorted(touched)
        if touched:
            sc.parallelize(touched, len(touched)).map(merge).collect()
    finally:
        spark.stop()
    commit = ["state", "commit", "--state", state, "--month", args.month, *parts]
    sys.stderr.write(run_okb(okb, commit, "state commit"))
    shutil.rmtree(staging, ignore_errors=True)
    print(f"{args.month}: {len(files)} files in {len(parts)} partitions, {len(touched)} shards merged into {state}", file=sys.stderr)


if __name__ == "__main__":
    main()
