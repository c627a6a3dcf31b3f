#!/usr/bin/env bash
# Runs every test of the workspace (the library, its codecs, the dashboard
# and the CLI). Installs what the tests need from Debian's
# packages when it is missing: redis-server (the tests start their own servers
# on free loopback ports), faketime (the clock-skew test), and chromium with
# chromium-driver (the dashboard's browser tests drive headless Chromium
# through /usr/bin/chromedriver).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/redis.sh
ensure_redis_server
ensure_commands faketime:faketime chromium:chromium chromedriver:chromium-driver
cargo test --workspace --all-targets --all-features --locked "$@"
cargo test --workspace --doc --all-features --locked
