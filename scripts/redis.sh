# Shared by scripts/test.sh and scripts/demo.sh: make sure the Debian packages
# the project needs are installed, and start a throwaway Redis on a free
# loopback port.

# Installs Debian packages for the commands named "command:package" that are missing.
ensure_commands() {
  local missing=()
  for pair in "$@"; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing Debian packages: ${missing[*]}" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo="sudo"
    else
      echo "need root or sudo to run apt-get install ${missing[*]}" >&2
      return 1
    fi
  fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  # The downloaded .deb files (chromium's are ~100 MB) are not needed again.
  $sudo apt-get clean || true
  for pair in "$@"; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || { echo "${pair%%:*} still missing" >&2; return 1; }
  done
}

ensure_redis_server() {
  ensure_commands redis-server:redis-server redis-cli:redis-tools
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
