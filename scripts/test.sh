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
  # In a process group of its own (setsid), so that an interrupted or failing
  # run takes the whole background half with it: cargo, the test binary and
  # the Chromium it drives.
  setsid cargo test --workspace --all-targets --all-features --locked -- browser:: handlers:: \
    >"$dashboard_log" 2>&1 &
  dashboard=$!
  trap 'kill -- -"$dashboard" 2>/dev/null || true; rm -f "$dashboard_log"' EXIT
  status=0
  # Four tests at a time, not one per core: most of them wait on Redis, on
  # leases and timeouts, not on the CPU (the library's 393 add up to about
  # 800 s; two at a time took 406 s on a quiet 2-core machine, four 205 s
  # with two builds running beside them). Each test must hold under load
  # anyway, as these machines are shared.
  cargo test --workspace --all-targets --all-features --locked -- --skip browser:: --skip handlers:: \
    --test-threads 4 || status=$?
  wait "$dashboard" || status=$?
  echo "--- the dashboard's tests (run beside the others) ---"
  cat "$dashboard_log"
  [ "$status" -eq 0 ] || exit "$status"
fi
cargo test --workspace --doc --all-features --locked
