#!/usr/bin/env bash
# Runs every fuzz target for SECONDS (default 600) each, PARALLEL (default 2) at a time,
# at low priority; logs in fuzz/logs/<target>.log, crashes in fuzz/artifacts/<target>/.
# The last line of each log says how many inputs were run (`Done N runs in S second(s)`).
set -uo pipefail
cd "$(dirname "$0")"
seconds="${SECONDS_EACH:-600}"
parallel="${PARALLEL:-2}"
mkdir -p logs
[ -d corpus ] || ./seed.sh
targets=(pgn bgn lichess_tsv scid_eco eco_pgn fen pipeline_toml http structure_labels)
# Build once, then run the binaries themselves: `cargo fuzz run` would rebuild (and wait
# for the build lock) whenever the sources changed since, in the middle of the runs.
RUSTC_BOOTSTRAP=1 cargo fuzz build -s none
bin="target/$(rustc -vV | sed -n 's/^host: //p')/release"
run() {
    mkdir -p "artifacts/$1"
    nice -n 19 "$bin/$1" "corpus/$1" -artifact_prefix="artifacts/$1/" -max_total_time="$seconds" \
        -timeout=10 -rss_limit_mb=4096 > "logs/$1.log" 2>&1
    echo "$1: exit $? — $(grep -E '^Done [0-9]+ runs' "logs/$1.log" || tail -1 "logs/$1.log")"
}
for target in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do sleep 5; done
    run "$target" &
done
wait
