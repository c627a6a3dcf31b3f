#!/usr/bin/env bash
# Groups, batches and cancels beside real Java (issue 46). Grouped values
# (`offer --group`) live only in delayq's keys (`delayq_group_*:{Q}`); batch
# members are ordinary Redisson elements under ids `<batch>/<n>` and the
# batch's completion is an ordinary Redisson element (a JSON object) offered
# to a target queue; a cancel of a ready job is a mark only delayq's takes
# read. For each real Redisson (3.21.0, 3.52.0, 4.7.0), with the string codec
# and the element format that version reads (legacy for 3.21.0):
#   1) a queue of plain values (delayq's and Java's) and grouped values
#      (ready, delayed, --sequential): Java's take gets exactly the plain
#      values, in due order, nothing lost or twice; every grouped value is
#      still in delayq's group keys, member for member;
#   2) Java's own transfer on a queue with grouped values (ready ones, and
#      delayed ones that fall due while it runs) leaves every
#      `delayq_group_*` key byte for byte as it was (DUMP, PTTL, contents);
#   3) a batch offered with `delayq batch offer --on-complete T`: Java sees
#      its members as ordinary pending elements; once every member has ended
#      the completion reaches T once, and a Java consumer of T takes it, a
#      JSON object with the batch's counts. The CLI has no worker, so the
#      members end by `delayq cancel` (a pending member removed counts as
#      cancelled), not by a handler; the completion is offered by the
#      reaper of a delayq process holding a reliable consumer of the queue
#      (`delayq result Q ID --wait` on a job that does not end keeps one for
#      the wait: its reaper looks at the batch outbox every 5 s);
#   4) a job cancelled while ready (in the destination list) is still taken
#      by a Java consumer: only delayq's takes drop it.
# Needs the peers of ../shared/peers and redis-server, as interop-peers.sh,
# and a `delayq` with `offer --group` (checks 1 and 2 are skipped, and
# counted, without it). DELAYQ_CLI=path runs another build of the CLI than
# this tree's.
#
#   PEERS=$HOME/jp scripts/interop-groups.sh
#
# Prints one line per check and ends with "N passed, M failed" (and the
# skipped ones).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/interop.sh
DELAYQ=${DELAYQ_CLI:-$DELAYQ}
rcli() { redis-cli -p "$PORT" "$@"; }

skipped=0
skip() { skipped=$((skipped + 1)); echo "skip  $1"; }
has_groups=yes
"$DELAYQ" offer --help | grep -q -- '--group' || has_groups=no
[ "$has_groups" == yes ] || echo "this delayq ($DELAYQ) has no \`offer --group\`: checks 1 and 2 are skipped"

# Redisson's keys of Q: destination list, timeout set, pending list.
redisson() {
  echo "list=$(rcli llen "$1") timeout=$(rcli zcard "redisson_delay_queue_timeout:{$1}")" \
    "pending=$(rcli llen "redisson_delay_queue:{$1}")"
}
# delayq's group sets of Q: line members (ready) and delayed members.
grouped() {
  echo "values=$(rcli zcard "delayq_group_values:{$1}") delayed=$(rcli zcard "delayq_group_delayed:{$1}")"
}
# Reads `redis-cli --no-raw` lines ('1) "..."') as bytes, one a line, and
# prints them as FORMAT says: `line` (<key length><key><seq><payload>) ->
# key:payload, `delayed` (<key length><key><8 bytes><payload>) -> key:payload.
members() {
  python3 -c '
import ast, re, sys
out = []
for l in sys.stdin:
    m = re.match(r"^\s*(?:\d+\)\s*)?(\".*\")\s*$", l)
    if not m: continue
    b = ast.literal_eval("b" + m.group(1))
    n = int(b[:5]); key = b[5:5 + n].decode()
    rest = b[5 + n + (16 if sys.argv[1] == "line" else 8):]
    out.append(key + ":" + rest.decode())
print(" ".join(out))' "$1"
}
lines() { rcli --no-raw zrange "delayq_group_values:{$1}" 0 -1 | members line; }
delayed_members() { rcli --no-raw zrange "delayq_group_delayed:{$1}" 0 -1 | members line | tr ' ' '\n' | sort | tr '\n' ' '; }
# Every delayq_group_* key of Q, each with its type, PTTL and the SHA-1 of
# its DUMP (serialized value, byte for byte).
group_keys_dump() {
  local k
  for k in $(rcli --scan --pattern "delayq_group_*:{$1}" | sort); do
    echo "$k $(rcli type "$k") pttl=$(rcli pttl "$k") dump=$(rcli --raw dump "$k" | head -c -1 | sha1sum | cut -c1-16)"
  done
}
# Their contents, readably (ZSET members with scores, HASH fields).
group_keys_contents() {
  local k
  for k in $(rcli --scan --pattern "delayq_group_*:{$1}" | sort); do
    case $(rcli type "$k") in
      zset) echo "$k: $(rcli --no-raw zrange "$k" 0 -1 withscores | tr '\n' ' ')" ;;
      hash) echo "$k: $(rcli --no-raw hgetall "$k" | tr '\n' ' ')" ;;
      *) echo "$k: $(rcli type "$k")" ;;
    esac
  done
}
# The first byte of each element of a timeout set, as the layout it starts:
# 08 (an 8-byte id's length) is modern, anything else legacy.
layouts() {
  rcli --no-raw zrange "redisson_delay_queue_timeout:{$1}" 0 -1 | python3 -c '
import ast, re, sys
for l in sys.stdin:
    m = re.match(r"^\s*(?:\d+\)\s*)?(\".*\")\s*$", l)
    if m: print("modern" if ast.literal_eval("b" + m.group(1))[:1] == b"\x08" else "legacy", end=" ")'
}

for version in 3.21.0 3.52.0 4.7.0; do
  peer="$PEERS/peer-$version"
  format=modern
  [ "$version" == 3.21.0 ] && format=legacy
  offer() { "$DELAYQ" offer "$@" --format "$format" >/dev/null 2>"$DIR/offer-err" || echo "      (delayq offer $* failed: $(cat "$DIR/offer-err"))"; }
  joffer() { "$peer" offer "$PORT" "$@" >/dev/null 2>"$DIR/joffer-err" || echo "      (Java offer $* failed: $(tail -3 "$DIR/joffer-err"))"; }

  # 1) Plain and grouped values in one queue; Java takes. Each plain offer
  # is due no earlier than the one before it (delays never decrease, and
  # each process starts after the last ended), so offer order is due order.
  q="grp-a-$version"
  if [ "$has_groups" == yes ]; then
    offer "$q" --delay 0 a-p1
    offer "$q" --delay 0 --group k1 a-g1
    offer "$q" --delay 0 a-p2
    offer "$q" --delay 0 --group k2 a-g2
    joffer "$q" string 0 a-j1
    offer "$q" --delay 0 --group k1 a-g3
    offer "$q" --delay 0 a-p3
    offer "$q" --delay 0 --sequential a-s1
    joffer "$q" string 1500 a-j2
    offer "$q" --delay 1s --group k1 a-g4
    offer "$q" --delay 2s a-p4
    offer "$q" --delay 1h --group k2 a-g5
    check "$version 1: grouped values in delayq's keys only (4 in lines, 2 delayed)" "values=4 delayed=2" "$(grouped "$q")"
    lines_before=$(lines "$q")
    check "$version 1: lines, key by key in offer order" ":a-s1 k1:a-g1 k1:a-g3 k2:a-g2" "$lines_before"
    delayed_before=$(delayed_members "$q")
    check "$version 1: delayed grouped values" "k1:a-g4 k2:a-g5 " "$delayed_before"
    got=$( (rcli --no-raw lrange "$q" 0 -1; rcli --no-raw lrange "redisson_delay_queue:{$q}" 0 -1) \
      | grep -o 'a-[a-z][0-9]"$' | tr -d '"' | tr '\n' ' ' || true)
    check "$version 1: Redisson's keys hold the plain values only" "a-p1 a-p2 a-j1 a-p3 a-j2 a-p4 " "$got"
    got=$("$peer" take-transfer "$PORT" "$q" string 7 8 2>"$DIR/err" | tr '\n' '|' || true)
    check "$version 1: Java takes exactly the plain values, in due order" "a-p1|a-p2|a-j1|a-p3|a-j2|a-p4|" "$got"
    check "$version 1: Java's take found nothing more in 8 s" "timeout: got 6 of 7" "$(grep -o 'timeout: got .*' "$DIR/err" || true)"
    check "$version 1: Redisson's keys empty" "list=0 timeout=0 pending=0" "$(redisson "$q")"
    check "$version 1: grouped values all still there (lines)" "$lines_before" "$(lines "$q")"
    check "$version 1: grouped values all still there (delayed, a-g4 now due)" "$delayed_before" "$(delayed_members "$q")"
    got=$("$DELAYQ" inspect "$q" --format json | python3 -c \
      'import json,sys; d=json.load(sys.stdin); print("grouped_ready=%s grouped_pending=%s" % (d.get("grouped_ready"), d.get("grouped_pending")))' || true)
    # a-g4 is due but stays in the delayed set (counted pending) until a
    # delayq claim moves it to its key's line.
    check "$version 1: delayq inspect counts them for delayq's consumers" "grouped_ready=4 grouped_pending=2" "$got"
  else
    skip "$version 1: no \`delayq offer --group\`"
  fi

  # 2) Java's transfer beside groups: delayq_group_* keys untouched.
  q="grp-b-$version"
  if [ "$has_groups" == yes ]; then
    offer "$q" --delay 0 --group k1 b-g1
    offer "$q" --delay 0 --group k1 b-g2
    offer "$q" --delay 0 --group 'k 2' b-g3
    offer "$q" --delay 0 --sequential b-s1
    offer "$q" --delay 500ms --group k1 b-g4late
    offer "$q" --delay 1s --group 'k 2' b-g5late
    offer "$q" --delay 1h --group k1 b-g6
    offer "$q" --delay 1s b-p1
    dump_before=$(group_keys_dump "$q")
    contents_before=$(group_keys_contents "$q")
    check "$version 2: delayq's group keys before" \
      "delayq_group_delayed:{$q} zset delayq_group_ring:{$q} zset delayq_group_state:{$q} hash delayq_group_values:{$q} zset" \
      "$(echo "$dump_before" | cut -d' ' -f1-2 | tr '\n' ' ' | sed 's/ $//')"
    joffer "$q" string 500 b-j1
    joffer "$q" string 1500 b-j2
    got=$("$peer" take-transfer "$PORT" "$q" string 3 20 2>/dev/null | tr '\n' '|' || true)
    check "$version 2: Java's transfer delivers the plain values" "b-p1|b-j1|b-j2|" "$got"
    check "$version 2: every delayq_group_* key byte for byte as before (DUMP, PTTL)" "$dump_before" "$(group_keys_dump "$q")"
    check "$version 2: their contents as before" "$contents_before" "$(group_keys_contents "$q")"
    check "$version 2: Redisson's keys empty" "list=0 timeout=0 pending=0" "$(redisson "$q")"
  else
    skip "$version 2: no \`delayq offer --group\`"
  fi

  # 3) A batch's completion, taken by Java.
  q="grp-c-$version" t="grp-c-done-$version" b="batch-$version"
  "$DELAYQ" job "$q" --history on >/dev/null
  "$DELAYQ" batch offer "$q" --id "$b" --on-complete "$t" --data '{"order":"o-7"}' --delay 1h \
    --element-format "$format" c-m1 c-m2 c-m3 >/dev/null 2>"$DIR/batch-err" || echo "      (batch offer failed: $(cat "$DIR/batch-err"))"
  offer "$q" --delay 1h --id waiter c-waiter
  got=$("$peer" ops "$PORT" "$q" string readAll 2>/dev/null | tr '\n' '|' || true)
  check "$version 3: Java's readAll sees the members as ordinary elements" "c-m1|c-m2|c-m3|c-waiter|" "$got"
  got=""
  for n in 1 2 3; do got+="$("$DELAYQ" cancel "$q" "$b/$n" --format json | python3 -c 'import json,sys; print(json.load(sys.stdin).get("outcome"), end="")' || true) "; done
  check "$version 3: delayq cancel ends the 3 pending members" "pending pending pending " "$got"
  got=$("$DELAYQ" batch show "$q" "$b" --format json | python3 -c \
    'import json,sys; d=json.load(sys.stdin); print("state=%s cancelled=%s" % (d.get("state"), d.get("cancelled")))' || true)
  check "$version 3: the batch is complete" "state=complete cancelled=3" "$got"
  # A reliable consumer's reaper offers the completion (see the top).
  "$DELAYQ" result "$q" waiter --wait 8s >/dev/null 2>&1 || true
  check "$version 3: the completion, one element in T's Redisson keys" "list=0 timeout=1 pending=1" "$(redisson "$t")"
  check "$version 3: its element layout is the one Java $version reads" "$format " "$(layouts "$t")"
  # A second reaper pass offers nothing more.
  "$DELAYQ" result "$q" waiter --wait 8s >/dev/null 2>&1 || true
  check "$version 3: a second reaper pass adds nothing" "list=0 timeout=1 pending=1" "$(redisson "$t")"
  got=$("$peer" take-transfer "$PORT" "$t" string 2 6 2>"$DIR/err" || true)
  check "$version 3: Java takes the completion once" "timeout: got 1 of 2" "$(grep -o 'timeout: got .*' "$DIR/err" || true)"
  if grep -q 'ERR user_script' "$DIR/err"; then
    echo "      (Java's transfer of $t failed: $(grep -o "ERR user_script[^.]*" "$DIR/err" | head -1))"
  fi
  got=$(printf '%s' "$got" | python3 -c '
import json, sys
lines = sys.stdin.read().splitlines()
try:
    d = json.loads(lines[0]) if len(lines) == 1 else None
    print(json.dumps(d, sort_keys=True))
except Exception as e:
    print("not JSON: %r" % lines)')
  check "$version 3: its body, a JSON object with the counts and --data" \
    "{\"batch\": \"$b\", \"cancelled\": 3, \"data\": {\"order\": \"o-7\"}, \"dead_lettered\": 0, \"handled\": 0, \"queue\": \"$q\", \"total\": 3}" "$got"
  check "$version 3: T empty" "list=0 timeout=0 pending=0" "$(redisson "$t")"

  # 4) A job cancelled while ready: Java still takes it.
  q="grp-d-$version"
  "$DELAYQ" job "$q" --history on >/dev/null
  offer "$q" --delay 0 --id job-1 d-1
  "$DELAYQ" move-due "$q" >/dev/null 2>&1 || true
  check "$version 4: the job is ready in the destination list" "list=1 timeout=0 pending=0" "$(redisson "$q")"
  got=$("$DELAYQ" cancel "$q" job-1 --format json | python3 -c 'import json,sys; print(json.load(sys.stdin).get("outcome"))' || true)
  check "$version 4: delayq cancel marks the ready job" "queued" "$got"
  got=$("$peer" take-transfer "$PORT" "$q" string 2 4 2>/dev/null | tr '\n' '|' || true)
  check "$version 4: a Java consumer still takes it" "d-1|" "$got"
done
[ "$skipped" == 0 ] || echo "$skipped skipped"
finish
