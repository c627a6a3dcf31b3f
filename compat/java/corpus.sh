#!/usr/bin/env bash
# The JDK-types corpus (compat/java/corpus/JdkCorpus.java), both ways, with
# real Redisson codec objects. Needs the peers of ../shared/peers (Redisson
# 4.7.0 and 3.52.0 compiled, Kryo, Jackson with jackson-datatype-jsr310, JBoss
# Marshalling) and a JDK 17; CI has neither, and reads what this writes.
#
#   PEERS=$HOME/jp compat/java/corpus.sh write
#       Java -> Rust: every case written by every codec into
#       compat/fixtures/jdk-types.json (bytes, Java's value, Java's reading).
#   PEERS=$HOME/jp compat/java/corpus.sh verify
#       Rust -> Java: the bytes delayq writes for each case
#       (`cargo test -p delayq-codec --test jdk_types -- --ignored write_rust_fixture`
#       puts them in compat/fixtures/jdk-types-rust.json) read by the same
#       codecs; Java's reading is recorded beside them.
#   PEERS=$HOME/jp compat/java/corpus.sh verify compat/fixtures/jdk-types-rust-jackson.json
#       The same for what delayq_codec::jackson::encode_value writes
#       (`cargo test -p delayq-codec --test jackson_jdk_types -- --ignored write_rust_fixture`).
#   PEERS=$HOME/jp compat/java/corpus.sh write-natural
#       Java -> Rust for the natural-types check only: a corpus.Order whose
#       LocalDateTime and BigDecimal are null, and ZonedDateTimes in region
#       zones (a gap, an overlap, LMT) and an offset zone, by Kryo5Codec,
#       SerializationCodec, JsonJacksonCodec (plain and with JavaTimeModule)
#       and MarshallingCodec, into
#       compat/fixtures/natural-types-java.json.
#   PEERS=$HOME/jp compat/java/corpus.sh verify-natural
#       the same as verify for compat/fixtures/natural-types-rust.json
#       (corpus.Order written from Rust structs of chrono/time/bigdecimal/
#       rust_decimal fields, plain and Option, and ZonedDateTimes from
#       chrono-tz and time values, by delayq-codec/tests/natural.rs), each
#       compared with its Java case.
set -euo pipefail
cd "$(dirname "$0")/../.."
PEERS=${PEERS:-$HOME/jp}
[ -d "$PEERS/classes-4.7.0" ] && [ -d "$PEERS/classes-3.52.0" ] \
  || { echo "no peers in $PEERS (see ../shared/peers/README.md)" >&2; exit 2; }
FIXTURES=compat/fixtures
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

javac -nowarn -encoding UTF-8 -proc:none -cp "$PEERS/classes-4.7.0:$PEERS/lib/*" -d "$OUT/classes" \
  compat/java/Shade.java compat/java/corpus/*.java

# Dates print in UTC whatever the machine's zone; Java 17 runs
# MarshallingCodec only with these opens (as a real service must).
JAVA_OPTS=(-Duser.timezone=UTC -Duser.language=en -Duser.country=US)
OPENS=()
for p in java.util java.util.concurrent java.lang java.math java.time java.io java.net java.util.concurrent.atomic; do
  OPENS+=(--add-opens "java.base/$p=ALL-UNNAMED")
done
OPENS+=(--add-opens "java.sql/java.sql=ALL-UNNAMED")
NEW_CODECS="kryo serialization jackson jackson_jsr310 lz4 lz4v2 snappy zstd"
corpus() { # VERSION ARGS...
  local version=$1
  shift
  TZ=UTC java "${JAVA_OPTS[@]}" "${OPENS[@]}" -cp "$OUT/classes:$PEERS/classes-$version:$PEERS/lib/*" corpus.JdkCorpus "$@"
}

case "${1:-}" in
  write)
    corpus 4.7.0 write $NEW_CODECS > "$OUT/new.json"
    corpus 3.52.0 write marshalling > "$OUT/old.json"
    python3 - "$OUT/new.json" "$OUT/old.json" "$FIXTURES/jdk-types.json" <<'EOF'
import json, sys
codecs = {}
for path in sys.argv[1:3]:
    codecs.update(json.load(open(path)))
doc = {
    "about": "The JDK types real POJOs carry, each written by Redisson's own codec objects "
             "(compat/java/corpus/JdkCorpus.java, run by compat/java/corpus.sh write): Kryo5Codec, "
             "SerializationCodec, JsonJacksonCodec plain and with JavaTimeModule (jackson_jsr310), "
             "LZ4Codec, LZ4CodecV2, SnappyCodecV2 and ZStdCodec (each around Kryo5Codec) of Redisson 4.7.0; "
             "MarshallingCodec of Redisson 3.52.0. OpenJDK 17, Kryo 5.6.2, Jackson 2.18.2, JBoss Marshalling "
             "2.0.11, time zone UTC.",
    "fields": {
        "codecs[codec][case].java": "the Java value",
        "codecs[codec][case].java_class": "its runtime class",
        "codecs[codec][case].expected": "the value in canonical JSON (what KryoValue::to_json_text gives: "
                                        "java.time as toString(), exact decimals, maps in iteration order, "
                                        "POJO fields by name)",
        "codecs[codec][case].hex": "the codec's bytes",
        "codecs[codec][case].java_decoded": "Java decoding those bytes with the same codec, in canonical JSON",
        "codecs[codec][case].java_decoded_class": "the class Java decoding gives",
        "codecs[codec][case].java_decode_error": "Java cannot read its own bytes",
        "codecs[codec][case].error": "Java cannot write this value with this codec",
    },
    "codecs": codecs,
}
with open(sys.argv[3], "w") as f:
    json.dump(doc, f, indent=1, ensure_ascii=False)
    f.write("\n")
EOF
    echo "wrote $FIXTURES/jdk-types.json"
    ;;
  verify)
    RUST=${2:-$FIXTURES/jdk-types-rust.json}
    [ -f "$RUST" ] || { echo "no $RUST: run the ignored write_rust_fixture test first" >&2; exit 2; }
    for codec in $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["codecs"]))' "$RUST"); do
      python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["codecs"].get(sys.argv[2], {})
for k, v in c.items():
    if "hex" in v: print(k, v["hex"])' "$RUST" "$codec" > "$OUT/$codec.txt"
      version=4.7.0
      [ "$codec" == marshalling ] && version=3.52.0
      corpus "$version" read "$codec" "$OUT/$codec.txt" > "$OUT/$codec.read.json"
    done
    python3 - "$RUST" "$OUT" <<'EOF'
import json, os, sys
path, out = sys.argv[1], sys.argv[2]
doc = json.load(open(path))
for codec, cases in doc["codecs"].items():
    read = json.load(open(os.path.join(out, codec + ".read.json")))
    for name, rec in cases.items():
        for key in ("java_decoded", "java_class", "same_class", "equal", "java_error"):
            rec.pop(key, None)
        got = read.get(name)
        if got is None:
            continue
        if "error" in got:
            rec["java_error"] = got["error"]
        else:
            rec.update({k: got[k] for k in ("java_decoded", "java_class", "same_class", "equal") if k in got})
with open(path, "w") as f:
    json.dump(doc, f, indent=1, ensure_ascii=False)
    f.write("\n")
EOF
    echo "recorded Java's reading in $RUST"
    ;;
  write-natural)
    corpus 4.7.0 write-natural kryo serialization jackson jackson_jsr310 > "$OUT/new.json"
    corpus 3.52.0 write-natural marshalling > "$OUT/old.json"
    python3 - "$OUT/new.json" "$OUT/old.json" "$FIXTURES/natural-types-java.json" <<'EOF3'
import json, sys
codecs = {}
for path in sys.argv[1:3]:
    codecs.update(json.load(open(path)))
doc = {
    "about": "Values only the natural-types check reads (delayq-codec/tests/natural.rs): corpus.Order with nulls, "
             "ZonedDateTimes in region and offset zones; written by Redisson's "
             "Kryo5Codec, SerializationCodec and JsonJacksonCodec (jackson: plain; jackson_jsr310: with "
             "JavaTimeModule) of 4.7.0 and MarshallingCodec of 3.52.0 "
             "(compat/java/corpus.sh write-natural); fields as in jdk-types.json.",
    "codecs": codecs,
}
with open(sys.argv[3], "w") as f:
    json.dump(doc, f, indent=1, ensure_ascii=False)
    f.write("\n")
EOF3
    echo "wrote $FIXTURES/natural-types-java.json"
    ;;
  verify-natural)
    # corpus.Order as written from Rust structs of natural types
    # (delayq-codec/tests/natural.rs, its ignored write_natural_fixture),
    # read by the same codecs and compared with the corpus's pojo_order.
    NATURAL=$FIXTURES/natural-types-rust.json
    for codec in $(python3 -c 'import json,sys; print(*json.load(open(sys.argv[1]))["codecs"])' "$NATURAL"); do
      for types in $(python3 -c 'import json,sys; print(*json.load(open(sys.argv[1]))["codecs"][sys.argv[2]])' \
          "$NATURAL" "$codec"); do
        python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["codecs"][sys.argv[2]][sys.argv[3]]
print(r.get("case", "pojo_order"), r["hex"])' "$NATURAL" "$codec" "$types" > "$OUT/$codec-$types.txt"
        version=4.7.0
        [ "$codec" == marshalling ] && version=3.52.0
        corpus "$version" read "$codec" "$OUT/$codec-$types.txt" > "$OUT/$codec-$types.read.json"
      done
    done
    python3 - "$NATURAL" "$OUT" <<'EOF2'
import json, os, sys
path, out = sys.argv[1], sys.argv[2]
doc = json.load(open(path))
for codec, kinds in doc["codecs"].items():
    for types, rec in kinds.items():
        got = json.load(open(os.path.join(out, f"{codec}-{types}.read.json")))[rec.get("case", "pojo_order")]
        for key in ("java_decoded", "java_class", "same_class", "equal", "java_error"):
            rec.pop(key, None)
        if "error" in got:
            rec["java_error"] = got["error"]
        else:
            rec.update({k: got[k] for k in ("java_decoded", "java_class", "same_class", "equal") if k in got})
with open(path, "w") as f:
    json.dump(doc, f, indent=1, ensure_ascii=False)
    f.write("\n")
EOF2
    echo "recorded Java's reading in $NATURAL"
    ;;
  *)
    echo "usage: $0 write|verify|write-natural|verify-natural" >&2
    exit 2
    ;;
esac
