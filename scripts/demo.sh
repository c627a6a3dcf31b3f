#!/usr/bin/env bash
# Runs the demo end to end: installs redis-server when missing, starts one on
# a free loopback port, runs examples/demo.rs against it and, while its orders
# wait, shows the queue with `delayq inspect`; then stops Redis.
# With --dashboard it then serves `delayq dashboard` on http://127.0.0.1:9090
# (or DASHBOARD_LISTEN) against that Redis until Ctrl-C.
set -euo pipefail
dashboard=""
[ "${1:-}" = "--dashboard" ] && dashboard=1
cd "$(dirname "$0")/.."
. scripts/redis.sh
ensure_redis_server
# One cargo run for both: the CLI and the example select different features
# of the dependencies they share, and two runs would build about 50 of them
# twice on a fresh clone.
cargo build --locked -p delayq-cli --bin delayq -p delayq --example demo
start_redis
bin="${CARGO_TARGET_DIR:-target}/debug"
log="$(mktemp)"
"$bin/examples/demo" | tee "$log" &
demo=$!
until grep -q '^offered' "$log"; do
    if ! kill -0 "$demo" 2>/dev/null; then wait "$demo"; exit 1; fi
    sleep 0.05
done
echo
echo "\$ delayq inspect demo-orders --codec json"
"$bin/delayq" inspect demo-orders --codec json
echo
wait "$demo"
echo
echo "\$ delayq stats demo-orders"
"$bin/delayq" stats demo-orders
echo
echo "\$ delayq dead-letter list demo-orders --codec json"
"$bin/delayq" dead-letter list demo-orders --codec json
rm -f "$log"
if [ -n "$dashboard" ]; then
    echo
    listen="${DASHBOARD_LISTEN:-127.0.0.1:9090}"
    echo "\$ delayq dashboard --codec json --listen $listen    # open http://$listen/ ; Ctrl-C stops"
    "$bin/delayq" dashboard --codec json --listen "$listen"
fi
