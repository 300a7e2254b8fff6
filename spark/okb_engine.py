#!/usr/bin/env python3
"""Run a pipeline's engine annotation on Spark with okb: the queue from
`okb engine queue` is split into parts, each searched by `okb engine annotate` on an
executor, and the results files come back to the driver.

    okb engine queue -o queue.okbq
    spark-submit spark/okb_engine.py --okb target/release/okb --queue queue.okbq \\
        -o results/ --partitions 64 --import
    okb make        # finds every result in the engine cache, starts no engine for them

(or `python3 spark/okb_engine.py --master local[2] …` with pyspark installed). The okb
binary and the queue file are shipped to every executor with SparkContext.addFile, and
with --engine the Stockfish binary too (otherwise each executor uses `stockfish` on its
PATH or /usr/games/stockfish). Either way the engine must be the binary the queue names
(same BLAKE3): okb refuses another one. Partition K of N runs `okb engine annotate --part
K/N`: every N-th position from the K-th, so each part gets its share of the deep
searches. The driver writes the parts to the output folder as part-K-of-N.okbr and, with
--import, runs `okb engine import` on them in the pipeline's project (checking each file
against the pipeline's [engine] before any enters the cache).
"""
import argparse
import os
import subprocess
import sys
import tempfile

from pyspark import SparkFiles
from pyspark.sql import SparkSession


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--okb", required=True, help="the okb binary (Linux, same as the executors')")
    p.add_argument("--queue", required=True, help="the queue file from `okb engine queue`")
    p.add_argument("-o", "--output", required=True, help="folder for the results files (part-K-of-N.okbr)")
    p.add_argument("--partitions", type=int, default=0, help="parts of the queue (default: Spark's default parallelism)")
    p.add_argument("--engine", help="ship this engine binary to the executors (default: theirs)")
    p.add_argument("--engines-per-task", type=int, default=1, help="engine processes per Spark task (match spark.task.cpus)")
    p.add_argument("--import", dest="do_import", action="store_true", help="run `okb engine import` on the results")
    p.add_argument("--pipeline", help="with --import: the pipeline file (default: pipeline.toml here)")
    p.add_argument("--master", help="Spark master (default: spark-submit's)")
    return p.parse_args(argv)


def annotate_parts(sc, args):
    """Runs `okb engine annotate` on every part; returns [(K, results bytes)] sorted by K."""
    okb, queue = os.path.abspath(args.okb), os.path.abspath(args.queue)
    sc.addFile(okb)
    sc.addFile(queue)
    engine = os.path.abspath(args.engine) if args.engine else None
    if engine:
        sc.addFile(engine)
    names = (os.path.basename(okb), os.path.basename(queue), os.path.basename(engine) if engine else None)
    parts = args.partitions or sc.defaultParallelism
    per_task = str(args.engines_per_task)

    def annotate(index, ks):
        okb_name, queue_name, engine_name = names
        binary = SparkFiles.get(okb_name)
        os.chmod(binary, 0o755)
        extra = []
        if engine_name:
            shipped = SparkFiles.get(engine_name)
            os.chmod(shipped, 0o755)
            extra = ["--engine", shipped]
        for k in ks:
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, f"part-{k}.okbr")
                command = [binary, "engine", "annotate", "--part", f"{k}/{parts}", "-j", per_task, "-o", out, *extra, SparkFiles.get(queue_name)]
                run = subprocess.run(command, capture_output=True, text=True)
                if run.returncode != 0:
                    raise RuntimeError(f"okb engine annotate failed on part {k}/{parts}: {run.stderr.strip()}")
                with open(out, "rb") as f:
                    yield k, f.read()

    return sorted(sc.parallelize(range(1, parts + 1), parts).mapPartitionsWithIndex(annotate).collect())


def write_parts(results, folder):
    """Writes the results files into `folder`; returns their paths."""
    os.makedirs(folder, exist_ok=True)
    paths = []
    for k, data in results:
        path = os.path.join(folder, f"part-{k}-of-{len(results)}.okbr")
        with open(path, "wb") as f:
            f.write(data)
        paths.append(path)
    return paths


def main(argv=None):
    args = parse_args(argv)
    builder = SparkSession.builder.appName("okb-engine")
    if args.master:
        builder = builder.master(args.master)
    spark = builder.getOrCreate()
    try:
        results = annotate_parts(spark.sparkContext, args)
    finally:
        spark.stop()
    paths = write_parts(results, args.output)
    print(f"{len(paths)} results files written to {args.output}", file=sys.stderr)
    if args.do_import:
        command = [os.path.abspath(args.okb), "engine", "import", *paths]
        if args.pipeline:
            command[1:1] = ["--pipeline", args.pipeline]
        run = subprocess.run(command, capture_output=True, text=True)
        sys.stderr.write(run.stderr)
        if run.returncode != 0:
            sys.exit(f"okb engine import failed ({run.returncode})")


if __name__ == "__main__":
    main()
