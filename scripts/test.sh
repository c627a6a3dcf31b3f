#!/usr/bin/env bash
# Runs every test of the crate. Installs redis-server (Debian package) when it
# is missing; the tests start their own servers on free loopback ports.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/redis.sh
ensure_redis_server
cargo test --all-targets --locked "$@"
cargo test --doc --locked
