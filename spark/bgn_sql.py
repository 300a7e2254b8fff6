#!/usr/bin/env python3
"""Spark SQL over okb's BGN output (`okb convert -o games.bgn.bz2 --split-size …`): games
per first move and result, as JSON on stdout.

    python3 spark/bgn_sql.py --master local[2] out/games-*.bgn.bz2

BGN is JSON lines, so spark.read.json reads the split, bzip2-compressed files directly
(one partition per file and bzip2 block). The same numbers are the root node's children
in okb's knowledge base built from the same games (node_children.game_count and results).
"""
import argparse
import json

from pyspark.sql import SparkSession

QUERY = """
SELECT concat(moves[0].f, moves[0].t) AS first_move,
       count(*) AS games,
       sum(CASE WHEN result = '1-0' THEN 1 ELSE 0 END) AS white_wins,
       sum(CASE WHEN result = '1/2-1/2' THEN 1 ELSE 0 END) AS draws,
       sum(CASE WHEN result = '0-1' THEN 1 ELSE 0 END) AS black_wins
FROM games
WHERE size(moves) > 0 AND result IN ('1-0', '0-1', '1/2-1/2')
GROUP BY concat(moves[0].f, moves[0].t)
ORDER BY games DESC, first_move
"""


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--master")
    p.add_argument("files", nargs="+")
    args = p.parse_args()
    builder = SparkSession.builder.appName("okb-bgn-sql")
    if args.master:
        builder = builder.master(args.master)
    spark = builder.getOrCreate()
    spark.read.json(args.files).createOrReplaceTempView("games")
    rows = [r.asDict() for r in spark.sql(QUERY).collect()]
    spark.stop()
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
