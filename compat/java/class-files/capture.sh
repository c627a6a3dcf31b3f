#!/usr/bin/env bash
# Compiles the shop classes into shop.jar and writes payloads.json, the
# bytes Redisson 4.7.0's Kryo5Codec writes for instances of them. Needs a
# JDK and the peers of /work/shared/peers (PEERS, default /root/jp).
set -euo pipefail
cd "$(dirname "$0")"
PEERS=${PEERS:-/root/jp}
rm -rf classes && mkdir classes
javac --release 17 -d classes src/shop/*.java
(cd classes && jar cf ../shop.jar shop)
jshell --class-path "classes:$PEERS/classes-4.7.0:$PEERS/lib/*" capture.jsh

