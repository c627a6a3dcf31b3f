#!/usr/bin/env bash
# Runs the benchmark (release build) and prints its table. Installs
# redis-server and redis-benchmark (Debian's redis-server and redis-tools)
# when missing; the benchmark starts its own servers on free loopback ports.
# Pass --only offers,bulk,lateness,backlog,queues,takes,consumers,memory,reliable,codecs,decoders,ratelimit,dashboard,big
# (or large) to run some scenarios; --only soak --soak-minutes 30 --soak-rate 1000 [--soak-dashboard]: the soak.
set -euo pipefail
case "${1:-}" in
  -h|--help)
    sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'
    echo "Results and what each scenario measures: BENCHMARKS.md."
    exit 0
    ;;
esac
cd "$(dirname "$0")/.."
. scripts/redis.sh
ensure_commands redis-server:redis-server redis-cli:redis-tools redis-benchmark:redis-tools
# The CLI rows run the `delayq` binary of the same release build.
cargo build --locked --release -p delayq-cli
cargo bench --locked -p delayq-bench -- "$@"
