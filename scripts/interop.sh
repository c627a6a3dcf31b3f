# Shared by scripts/interop-*.sh (sourced from the repo root): the real Java
# peers of ../shared/peers in $PEERS, the release `delayq` CLI in $DELAYQ, a
# throwaway Redis on a free loopback port (scripts/redis.sh; $PORT, and $DIR
# for scratch files), and the tally of `check`s that `finish` prints.
. scripts/redis.sh
PEERS=${PEERS:-$HOME/jp}
[ -x "$PEERS/peer-4.7.0" ] || { echo "no peers in $PEERS (see ../shared/peers/README.md)"; exit 2; }
cargo build -q --release -p delayq-cli
DELAYQ=$PWD/target/release/delayq
start_redis
trap 'stop_redis; rm -rf "$REDIS_DIR"' EXIT
PORT=${REDIS_URL##*:}
DIR=$REDIS_DIR

pass=0 fail=0
check() { # name expected actual
  if [ "$2" == "$3" ]; then pass=$((pass + 1)); echo "ok    $1"
  else fail=$((fail + 1)); echo "FAIL  $1"; echo "      expected: $2"; echo "      got:      $3"; fi
}

# Prints the tally; fails when a check failed.
finish() {
  echo "$pass passed, $fail failed"
  [ "$fail" == 0 ]
}
