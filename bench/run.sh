#!/usr/bin/env bash
# One command for every benchmark: `make bench` (or bench/run.sh BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
python3 bench/http_bench.py --binary "$build_dir/switchboard" --out docs/performance.md
