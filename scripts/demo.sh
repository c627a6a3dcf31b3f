#!/usr/bin/env bash
# Runs the demo end to end: installs redis-server when missing, starts one on
# a free loopback port, runs examples/demo.rs against it, then stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/redis.sh
ensure_redis_server
start_redis
cargo run --locked --example demo
