#!/usr/bin/env bash
# A fresh clone runs the README's main command, as a new user does: a clean folder beside
# ../shared, the command copied from README.md, then the tree must hold the master games
# and a second make must have nothing to do. Prints the time of each.
#
# The clone's target/ is a link to this checkout's, so only okb itself compiles (the
# dependencies are built already); its cache/, sources/ and build/ start empty, so the
# make copies every source from the mirrors and takes the engine evaluations from the
# pinned source (evals/okb-shipped.jsonl.zst).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
clone="$(mktemp -d "$repo/../okb-fresh-clone.XXXXXX")"
trap 'rm -rf "$clone"' EXIT
git clone -q "$repo" "$clone"
ln -s "$repo/target" "$clone/target"
cd "$clone"

main_command="$(grep -m1 '^cargo build --release && ' README.md)"
echo "fresh clone in $clone: $main_command"
start=$(date +%s.%N)
bash -c "$main_command" 2> make.log || { cat make.log >&2; exit 1; }
end=$(date +%s.%N)
grep -E "Building (games|engine) |Finished" make.log
echo "first make (with cargo build): $(echo "$end - $start" | bc) s"

games=$(./target/release/okb query moves "" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["game_count"])')
[ "$games" = 380615 ] || { echo "the root counts $games games, not the masters' 380,615 distinct ones (454,278 read, 87 filtered out, 73,576 repeats)" >&2; exit 1; }
grep -q "380615 games counted of 454278, 73576 repeats skipped" make.log || { echo "the make did not count the 454,278 master games" >&2; exit 1; }

bash -c "$main_command" 2> again.log
grep -q "nothing to do" again.log || { cat again.log >&2; echo "the second make had work to do" >&2; exit 1; }
grep Finished again.log
echo "fresh clone: $games games at the root"
