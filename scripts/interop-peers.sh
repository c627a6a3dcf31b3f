#!/usr/bin/env bash
# Interop with real Java, both ways, for the compression wrappers, Java
# serialization and JBoss Marshalling: Rust offers
# with `delayq offer --codec C` and a real Redisson client takes; a real
# Redisson client offers and `delayq take --codec C` (and `--codec auto`)
# takes. Needs the peers of ../shared/peers (real Redisson 3.21.0, 3.52.0 and
# 4.7.0 built from source) and redis-server; CI has neither Java nor Redisson
# source, so CI proves the same bytes with the captured vectors instead.
#
#   PEERS=$HOME/jp scripts/interop-peers.sh
#
# Prints one line per check and ends with "N passed, M failed".
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/interop.sh
SCHEMA=$PWD/compat/kryo-schema.example.json
# Java 17 runs MarshallingCodec only with these (as a real service must).
opens=""
for p in java.util java.util.concurrent java.lang java.math java.time java.io; do
  opens="$opens --add-opens java.base/$p=ALL-UNNAMED"
done
export PEER_JAVA_OPTS="${PEER_JAVA_OPTS:-$opens}"

ORDER='{"id":"o-1","amount":1234,"tags":["a","b"]}'
JAVA_ORDER='Order id=o-1 amount=1234 tags=[a, b]'
RUST_ORDER='{"amount":1234,"id":"o-1","tags":["a","b"]}'

for version in 3.21.0 3.52.0 4.7.0; do
  peer="$PEERS/peer-$version"
  format=modern
  [ "$version" == 3.21.0 ] && format=legacy
  codecs="serialization lz4 snappy"
  [ "$version" != 4.7.0 ] && codecs="$codecs marshalling"
  [ "$version" != 3.21.0 ] && codecs="$codecs lz4v2 zstd"
  for codec in $codecs; do
    q="interop-$version-${codec//\//-}"
    # Rust offers, Java takes.
    "$DELAYQ" offer "$q" --delay 0 --codec "$codec" --format "$format" --java-type String hello 2>/dev/null
    "$DELAYQ" offer "$q" --delay 0 --codec "$codec" --format "$format" --java-type Long 42 2>/dev/null
    "$DELAYQ" offer "$q" --delay 0 --codec "$codec" --format "$format" --kryo-schema "$SCHEMA" \
      --java-class compat.Order "$ORDER" 2>/dev/null
    got=$("$peer" take-transfer "$PORT" "$q" "$codec" 3 20 2>/dev/null | tr '\n' '|')
    check "$version $codec: Rust offers, Java takes" "hello|42|$JAVA_ORDER|" "$got"
    # Java offers, Rust takes (named codec, then auto-detected).
    for read_as in "$codec" auto; do
      "$peer" offer "$PORT" "$q" "$codec" 0 string:hello long:42 "order:$ORDER" >/dev/null 2>&1
      got=$("$DELAYQ" take "$q" -n 3 --timeout 20s --codec "$read_as" --kryo-schema "$SCHEMA" | tr '\n\t' '| ')
      expected="\"hello\"|42|$RUST_ORDER|"
      if [ "$read_as" == auto ]; then
        inner=$codec
        [ "$codec" == lz4v2 ] && inner=lz4  # LZ4CodecV2 frames like LZ4Codec: detected as lz4
        expected="$inner \"hello\"|$inner 42|$inner $RUST_ORDER|"
      fi
      check "$version $codec: Java offers, Rust takes (--codec $read_as)" "$expected" "$got"
    done
  done
  # Other codecs inside a compression wrapper: Jackson (an Order) and strings.
  wraps="lz4 snappy"
  [ "$version" != 3.21.0 ] && wraps="$wraps zstd"
  for wrap in $wraps; do
    q="interop-$version-$wrap-jackson"
    "$DELAYQ" offer "$q" --delay 0 --codec "$wrap/jackson" --format "$format" --java-class compat.Order "$ORDER" 2>/dev/null
    got=$("$peer" take-transfer "$PORT" "$q" "$wrap/jackson" 1 20 2>/dev/null)
    check "$version $wrap/jackson: Rust offers, Java takes" "$JAVA_ORDER" "$got"
    "$peer" offer "$PORT" "$q" "$wrap/jackson" 0 "order:$ORDER" >/dev/null 2>&1
    got=$("$DELAYQ" take "$q" --timeout 20s --codec auto | tr '\t' ' ')
    check "$version $wrap/jackson: Java offers, Rust takes (--codec auto)" "$wrap/jackson $RUST_ORDER" "$got"
    q="interop-$version-$wrap-string"
    "$DELAYQ" offer "$q" --delay 0 --codec "$wrap/string" --format "$format" "zażółć 🚀" 2>/dev/null
    got=$("$peer" take-transfer "$PORT" "$q" "$wrap/string" 1 20 2>/dev/null)
    check "$version $wrap/string: Rust offers, Java takes" "zażółć 🚀" "$got"
    "$peer" offer "$PORT" "$q" "$wrap/string" 0 "zażółć 🚀" >/dev/null 2>&1
    got=$("$DELAYQ" take "$q" --timeout 20s --codec "$wrap/string")
    check "$version $wrap/string: Java offers, Rust takes" "zażółć 🚀" "$got"
  done
done
finish
