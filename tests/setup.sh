#!/usr/bin/env bash
# Installs what okb's tests need on Debian or Ubuntu (the README's test command runs it
# first): the reference tools, PostgreSQL, chromium, Java and Python packages, and
# web/'s node modules. What is there already is left alone, so a second run takes a
# moment; elsewhere it names what is missing and stops.
set -euo pipefail
cd "$(dirname "$0")/.."

# The shared data the tests read lives beside the project.
test -d ../shared/sources || { echo "tests/setup.sh: the tests need ../shared beside the project (see README)" >&2; exit 1; }

# Debian packages by the command that shows each is installed:
#   stockfish (UCI engine), polyglot (book builder), pgn-extract: reference tools;
#   sqlite3 for inspecting stores; bzip2 and zstd: reference decompressors;
#   postgresql: tests start their own throwaway cluster (initdb, pg_ctl);
#   chromium: the explorer page's tests drive it (with playwright-core from web/);
#   nodejs/npm: playwright-core and the front end's build; Java 17 for Spark (pyspark).
declare -A need=(
    [stockfish]=stockfish [polyglot]=polyglot [pgn-extract]=pgn-extract [sqlite3]=sqlite3
    [bzip2]=bzip2 [zstd]=zstd [chromium]=chromium [npm]="nodejs npm" [java]=openjdk-17-jre-headless
    [pip3]=python3-pip
)
missing=()
for tool in "${!need[@]}"; do
    command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/games/$tool" ] || missing+=(${need[$tool]})
done
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
if [ ${#missing[@]} -gt 0 ]; then
    command -v apt-get >/dev/null 2>&1 || { echo "tests/setup.sh: not Debian or Ubuntu; install: ${missing[*]}" >&2; exit 1; }
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || { echo "tests/setup.sh: run as root: apt-get install ${missing[*]}" >&2; exit 1; }
        SUDO="sudo"
    fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# python-chess, jsonschema and schemathesis: independent readers of okb's outputs (moves,
# the OpeningIQ JSON Schema, the OpenAPI document); pyspark: Spark in local mode.
python3 - 2>/dev/null <<'EOF' || python3 -m pip install --quiet chess jsonschema schemathesis pyspark \
    || python3 -m pip install --quiet --break-system-packages chess jsonschema schemathesis pyspark
import chess, jsonschema, schemathesis, pyspark
EOF

# playwright-core (and the front end's build tools) at the versions of web/package-lock.json.
[ -d web/node_modules/playwright-core ] || (cd web && npm ci --no-audit --no-fund --loglevel=error)
