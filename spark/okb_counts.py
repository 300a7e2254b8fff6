#!/usr/bin/env python3
"""Count game files on Spark with okb, into one counts file a pipeline reads as a
`kind = "counts"` source.

    spark-submit spark/okb_counts.py --okb target/release/okb -o all.okbc \\
        --max-ply 15 --partitions 64 /data/lichess/2026-10/*.pgn.zst

(or `python3 spark/okb_counts.py --master local[2] …` with pyspark installed). The okb
binary is shipped to every executor with SparkContext.addFile; each partition of the file
list runs `okb count` on its files and returns the partial counts file's bytes; the driver
merges them with `okb count --merge`. Counts are sums, so the result equals `okb count`
over all the files at once, whatever the partitioning. Executors read the game files by
path: give paths every executor can open (a shared filesystem), or run in local mode.
"""
import argparse
import os
import subprocess
import sys
import tempfile

from pyspark import SparkFiles
from pyspark.sql import SparkSession


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--okb", required=True, help="the okb binary (Linux, same as the executors')")
    p.add_argument("-o", "--output", required=True, help="the merged counts file to write")
    p.add_argument("--max-ply", type=int, default=15, help="the pipeline's tree.max_ply")
    p.add_argument("--partitions", type=int, default=0, help="default: one per file, at most 1000")
    p.add_argument("--master", help="Spark master (default: spark-submit's)")
    p.add_argument("files", nargs="+", help="game files (PGN, .zst, .bz2, .gz, BGN)")
    args = p.parse_args(argv)

    builder = SparkSession.builder.appName("okb-counts")
    if args.master:
        builder = builder.master(args.master)
    spark = builder.getOrCreate()
    sc = spark.sparkContext
    okb = os.path.abspath(args.okb)
    sc.addFile(okb)
    name, max_ply = os.path.basename(okb), args.max_ply
    files = [os.path.abspath(f) for f in args.files]
    partitions = args.partitions or min(len(files), 1000)

    def count(index, part):
        part = list(part)
        if not part:
            return
        binary = SparkFiles.get(name)
        os.chmod(binary, 0o755)
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, f"part-{index:05}.okbc")
            run = subprocess.run([binary, "count", "--max-ply", str(max_ply), "-o", out, *part], capture_output=True, text=True)
            if run.returncode != 0:
                raise RuntimeError(f"okb count failed on partition {index}: {run.stderr.strip()}")
            with open(out, "rb") as f:
                yield index, f.read()

    parts = sc.parallelize(files, partitions).mapPartitionsWithIndex(count).collect()
    spark.stop()
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for index, data in sorted(parts):
            path = os.path.join(tmp, f"part-{index:05}.okbc")
            with open(path, "wb") as f:
                f.write(data)
            paths.append(path)
        run = subprocess.run([okb, "count", "--merge", "-o", args.output, *paths], capture_output=True, text=True)
        sys.stderr.write(run.stderr)
        if run.returncode != 0:
            sys.exit(f"okb count --merge failed ({run.returncode})")
    print(f"{len(files)} files in {len(parts)} partitions counted into {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
