# Shared by scripts/test.sh and scripts/demo.sh: make sure redis-server is
# installed (Debian's package), and start a throwaway one on a free loopback port.

ensure_redis_server() {
  if command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1; then
    return 0
  fi
  echo "redis-server not found: installing Debian's redis-server package" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo="sudo"
    else
      echo "need root or sudo to run apt-get install redis-server" >&2
      return 1
    fi
  fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-tools >/dev/null
  command -v redis-server >/dev/null 2>&1
}

# Starts redis-server on a free 127.0.0.1 port in a temp dir; exports REDIS_URL
# and stops the server when the calling script exits.
start_redis() {
  REDIS_DIR=$(mktemp -d)
  local port
  for _ in 1 2 3 4 5; do
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null \
      || shuf -i 20000-60000 -n 1)
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$REDIS_DIR" \
      --daemonize yes --pidfile "$REDIS_DIR/redis.pid" --logfile "$REDIS_DIR/redis.log"
    for _ in $(seq 50); do
      if redis-cli -p "$port" ping >/dev/null 2>&1; then
        export REDIS_URL="redis://127.0.0.1:$port"
        trap stop_redis EXIT
        return 0
      fi
      sleep 0.1
    done
  done
  echo "could not start redis-server; see $REDIS_DIR/redis.log" >&2
  return 1
}

stop_redis() {
  if [ -n "${REDIS_DIR:-}" ] && [ -f "$REDIS_DIR/redis.pid" ]; then
    kill "$(cat "$REDIS_DIR/redis.pid")" 2>/dev/null || true
  fi
}
