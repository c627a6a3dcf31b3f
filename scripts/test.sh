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
if [ "$#" -gt 0 ]; then
  # Arguments given (a filter, `-- --nocapture`, ...): one plain run.
  cargo test --workspace --all-targets --all-features --locked "$@"
else
  cargo test --workspace --all-targets --all-features --locked --no-run
  # The dashboard's tests (browser::, handlers::) mostly wait on Chromium and
  # on the dashboard's sampling; they run beside the rest, which keeps the
  # CPU busy, instead of after it. The two filters split the tests in two
  # complementary sets (a test matches `browser::`/`handlers::` or is
  # skipped by them), so nothing runs twice or not at all.
  dashboard_log="$(mktemp)"
  cargo test --workspace --all-targets --all-features --locked -- browser:: handlers:: \
    >"$dashboard_log" 2>&1 &
  dashboard=$!
  status=0
  cargo test --workspace --all-targets --all-features --locked -- --skip browser:: --skip handlers:: || status=$?
  wait "$dashboard" || status=$?
  echo "--- the dashboard's tests (run beside the others) ---"
  cat "$dashboard_log"
  rm -f "$dashboard_log"
  [ "$status" -eq 0 ] || exit "$status"
fi
cargo test --workspace --doc --all-features --locked
