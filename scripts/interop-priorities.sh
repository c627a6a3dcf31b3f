#!/usr/bin/env bash
# Priorities, message TTL and headers beside real Java (issue 45). A value
# offered with a priority 1-9, a TTL or headers lives in delayq's own keys
# (`delayq_priority_ready:{Q}`, `delayq_priority_delayed:{Q}`), which Java
# never reads; plain values stay in Redisson's keys and must behave exactly
# as before, both ways. For each real Redisson (3.21.0, 3.52.0, 4.7.0), with
# the string codec:
#   a) Java offers plain values (delay 0 and a short delay) to a queue that
#      also holds delayq priority / TTL / header values: `delayq take` gets
#      the priority values first, then Java's in order, headers shown;
#      nothing lost, nothing twice;
#   b) delayq offers a mix (plain, priority 7, TTL, header) and Java takes
#      all it can: exactly the plain values, in order; the others are still
#      there for `delayq take`;
#   c) Java's own transfer runs on a queue with priority values (ready ones,
#      and delayed ones that fall due while it runs): delayq's sets are
#      untouched, Java's values arrive.
# Needs the peers of ../shared/peers and redis-server, as interop-peers.sh.
#
#   PEERS=$HOME/jp scripts/interop-priorities.sh
#
# Prints one line per check and ends with "N passed, M failed".
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/interop.sh
rcli() { redis-cli -p "$PORT" "$@"; }

# What is left of queue Q in every key a value can be in: Redisson's list,
# timeout set and pending list, delayq's ready and delayed sets.
left() {
  echo "list=$(rcli llen "$1") timeout=$(rcli zcard "redisson_delay_queue_timeout:{$1}")" \
    "pending=$(rcli llen "redisson_delay_queue:{$1}") ready=$(rcli zcard "delayq_priority_ready:{$1}")" \
    "delayed=$(rcli zcard "delayq_priority_delayed:{$1}")"
}
# delayq inspect's counts: pending + ready, and the priority ones among them.
counts() {
  "$DELAYQ" inspect "$1" --format json | python3 -c \
    'import json,sys; d=json.load(sys.stdin); d["total"]=d["pending"]+d["ready"]; print("total=%(total)s priority_pending=%(priority_pending)s priority_ready=%(priority_ready)s" % d)' || true
}
# `delayq take --format json` lines as value{headers}|...
take_json() { # Q N
  "$DELAYQ" take "$1" -n "$2" --timeout 20s --format json | python3 -c \
    'import json,sys
for l in sys.stdin:
    d=json.loads(l); h=",".join("%s=%s" % kv for kv in sorted(d["headers"].items()))
    print(d["value"] + ("{" + h + "}" if h else ""), end="|")' || true
}

for version in 3.21.0 3.52.0 4.7.0; do
  peer="$PEERS/peer-$version"
  format=modern
  [ "$version" == 3.21.0 ] && format=legacy
  offer() { "$DELAYQ" offer "$@" --format "$format" >/dev/null 2>"$DIR/offer-err" || echo "      (delayq offer $* failed: $(cat "$DIR/offer-err"))"; }

  # a) Java offers plain values to a queue that also has delayq's.
  q="prio-a-$version"
  offer "$q" --delay 0 --priority 7 a-p7
  offer "$q" --delay 0 --ttl 60s a-ttl
  offer "$q" --delay 0 --header tenant=acme --header src=rust a-hdr
  offer "$q" --delay 0 --priority 2 --header k=v a-p2h
  # One JVM per value: each gets its own due ms (Redisson's transfer orders a
  # tie by the element's bytes, which start with a random id).
  "$peer" offer "$PORT" "$q" string 0 a-j1 >/dev/null 2>&1 || echo "      (Java offer failed)"
  "$peer" offer "$PORT" "$q" string 0 a-j2 >/dev/null 2>&1 || echo "      (Java offer failed)"
  "$peer" offer "$PORT" "$q" string 1500 a-j3 >/dev/null 2>&1 || echo "      (Java offer failed)"
  "$peer" offer "$PORT" "$q" string 1500 a-j4 >/dev/null 2>&1 || echo "      (Java offer failed)"
  check "$version a: delayq inspect counts Java's 4 and delayq's 4 (all priority ready)" \
    "total=8 priority_pending=0 priority_ready=4" "$(counts "$q")"
  # Redisson's list, then its pending list (the value ends each element there).
  got=$( (rcli --no-raw lrange "$q" 0 -1; rcli --no-raw lrange "redisson_delay_queue:{$q}" 0 -1) \
    | grep -o 'a-j[0-9]"$' | tr -d '"' | tr '\n' ' ' || true)
  check "$version a: Redisson's keys hold Java's values only, in order" "a-j1 a-j2 a-j3 a-j4 " "$got"
  got=$(take_json "$q" 8)
  check "$version a: delayq take: priorities, then TTL/headers, then Java's in order" \
    "a-p7|a-p2h{k=v}|a-ttl|a-hdr{src=rust,tenant=acme}|a-j1|a-j2|a-j3|a-j4|" "$got"
  check "$version a: nothing left" "list=0 timeout=0 pending=0 ready=0 delayed=0" "$(left "$q")"

  # b) delayq offers a mix; Java takes all it can.
  q="prio-b-$version"
  offer "$q" --delay 0 b-plain1
  offer "$q" --delay 0 --priority 7 b-p7
  offer "$q" --delay 0 b-plain2
  offer "$q" --delay 0 --ttl 60s b-ttl
  offer "$q" --delay 0 --header tenant=acme b-hdr
  offer "$q" --delay 1s --priority 5 b-p5late
  offer "$q" --delay 1s b-plain3
  got=$("$peer" take-transfer "$PORT" "$q" string 6 8 2>"$DIR/err" | tr '\n' '|' || true)
  check "$version b: Java takes exactly the plain values, in order" "b-plain1|b-plain2|b-plain3|" "$got"
  check "$version b: Java's take found nothing more" "timeout: got 3 of 6" "$(grep -o 'timeout: got .*' "$DIR/err" || true)"
  check "$version b: delayq's values still there" "list=0 timeout=0 pending=0 ready=3 delayed=1" "$(left "$q")"
  got=$(take_json "$q" 4)
  check "$version b: delayq take gets the rest" "b-p7|b-p5late|b-ttl|b-hdr{tenant=acme}|" "$got"
  check "$version b: nothing left" "list=0 timeout=0 pending=0 ready=0 delayed=0" "$(left "$q")"

  # c) Java's own transfer on a queue with priority values.
  q="prio-c-$version"
  offer "$q" --delay 0 --priority 7 c-p7
  offer "$q" --delay 0 --header k=v c-hdr
  offer "$q" --delay 1s --priority 4 c-p4late
  offer "$q" --delay 1s --ttl 60s c-ttllate
  before=$(rcli zrange "delayq_priority_ready:{$q}" 0 -1 withscores | md5sum)$(rcli zrange "delayq_priority_delayed:{$q}" 0 -1 withscores | md5sum)
  zc="ready=$(rcli zcard "delayq_priority_ready:{$q}") delayed=$(rcli zcard "delayq_priority_delayed:{$q}")"
  check "$version c: delayq's sets before" "ready=2 delayed=2" "$zc"
  "$peer" offer "$PORT" "$q" string 500 c-j1 >/dev/null 2>&1 || echo "      (Java offer failed)"
  "$peer" offer "$PORT" "$q" string 1500 c-j2 >/dev/null 2>&1 || echo "      (Java offer failed)"
  got=$("$peer" take-transfer "$PORT" "$q" string 2 20 2>/dev/null | tr '\n' '|' || true)
  check "$version c: Java's transfer delivers Java's values" "c-j1|c-j2|" "$got"
  after=$(rcli zrange "delayq_priority_ready:{$q}" 0 -1 withscores | md5sum)$(rcli zrange "delayq_priority_delayed:{$q}" 0 -1 withscores | md5sum)
  zc="ready=$(rcli zcard "delayq_priority_ready:{$q}") delayed=$(rcli zcard "delayq_priority_delayed:{$q}")"
  check "$version c: delayq's sets after Java's transfer (ZCARD)" "ready=2 delayed=2" "$zc"
  check "$version c: delayq's sets unchanged, member for member" "$before" "$after"
  check "$version c: Redisson's keys empty" "list=0 timeout=0 pending=0" "$(left "$q" | cut -d' ' -f1-3)"
  got=$(take_json "$q" 4)
  check "$version c: delayq take gets delayq's values" "c-p7|c-p4late|c-hdr{k=v}|c-ttllate|" "$got"
  check "$version c: nothing left" "list=0 timeout=0 pending=0 ready=0 delayed=0" "$(left "$q")"
done
finish
