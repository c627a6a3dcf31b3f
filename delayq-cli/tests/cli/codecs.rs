//! Redisson's other codecs in the CLI: LZ4, Snappy, Zstd, Java
//! serialization and JBoss Marshalling on Java's captured bytes; `--codec
//! auto` on a queue of mixed codecs; `migrate --from-codec --to-codec`.

use std::process::{Command, Output};

use delayq::format::{pack, unpack, Format};

use delayq_test_support::vectors::{codec_case, kryo_case};
use delayq_test_support::{deadline, now_ms, redis_test, RedisServer};

const SCHEMA_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../compat/kryo-schema.example.json");
const ORDER_JSON: &str = r#"{"amount":1234,"id":"o-1","tags":["a","b"]}"#;

/// Seeds `payloads` as pending elements due an hour apart, in this order.
async fn seed(redis: &RedisServer, queue: &str, payloads: &[Vec<u8>]) {
    let raw = redis.raw().await;
    let due = now_ms() + 3_600_000;
    for (i, payload) in payloads.iter().enumerate() {
        raw.seed(queue, &pack(Format::Modern, payload), due + i as i64 * 3_600_000)
            .await;
    }
}

redis_test! {
    async fn auto_reads_a_queue_of_mixed_codecs_naming_each(redis) {
        // A fleet half way through migrations: one Order in every codec, and
        // plain values.
        let cases: Vec<(&str, Vec<u8>, &str)> = vec![
            ("kryo", kryo_case("pojo_order").raw, ORDER_JSON),
            ("serialization", codec_case("serialization", "pojo_order"), ORDER_JSON),
            ("marshalling", codec_case("marshalling", "pojo_order"), ORDER_JSON),
            ("lz4", codec_case("lz4", "pojo_order"), ORDER_JSON),
            ("snappy", codec_case("snappy", "pojo_order"), ORDER_JSON),
            ("zstd", codec_case("zstd", "pojo_order"), ORDER_JSON),
            ("lz4/jackson", codec_case("lz4/json", "pojo_order"), ORDER_JSON),
            ("zstd/string", codec_case("zstd/string", "string"), "order-42"),
            ("serialization", codec_case("serialization", "string"), "\"order-42\""),
            ("jackson", codec_case("jackson", "pojo_order"), ORDER_JSON),
            ("string", b"hello world".to_vec(), "hello world"),
            ("json", br#"{"plain":true}"#.to_vec(), r#"{"plain":true}"#),
        ];
        let payloads: Vec<Vec<u8>> = cases.iter().map(|c| c.1.clone()).collect();
        seed(&redis, "mixed", &payloads).await;

        let shown = ok(&delayq(
            &redis,
            &[
                "inspect",
                "mixed",
                "--codec",
                "auto",
                "--kryo-schema",
                SCHEMA_FILE,
                "--format",
                "json",
                "--limit",
                "50",
            ],
        ));
        let json: serde_json::Value = serde_json::from_str(&shown).unwrap();
        let elements = json["elements"].as_array().unwrap();
        assert_eq!(elements.len(), cases.len());
        for ((codec, _, value), element) in cases.iter().zip(elements) {
            assert_eq!(element["codec"], *codec, "{element}");
            assert_eq!(element["payload"], *value, "{codec}: {element}");
        }
        // The table names each codec in a column of its own.
        let table = ok(&delayq(
            &redis,
            &[
                "inspect",
                "mixed",
                "--codec",
                "auto",
                "--kryo-schema",
                SCHEMA_FILE,
                "--limit",
                "50",
            ],
        ));
        assert!(table.contains("CODEC"), "{table}");
        assert!(table.contains("lz4/jackson"), "{table}");
        // Nothing was removed by reading.
        assert_eq!(payloads_of(&redis, "mixed").await, payloads);
    }
}

redis_test! {
    async fn named_codecs_read_java_bytes_and_write_what_java_reads(redis) {
        for codec in ["lz4", "lz4v2", "snappy", "zstd", "serialization", "marshalling"] {
            let queue = format!("named-{codec}");
            seed(
                &redis,
                &queue,
                &[codec_case(codec, "pojo_order"), codec_case(codec, "long")],
            )
            .await;
            let shown = ok(&delayq(
                &redis,
                &[
                    "inspect",
                    &queue,
                    "--codec",
                    codec,
                    "--kryo-schema",
                    SCHEMA_FILE,
                    "--format",
                    "json",
                ],
            ));
            let json: serde_json::Value = serde_json::from_str(&shown).unwrap();
            assert_eq!(json["elements"][0]["payload"], ORDER_JSON, "{codec}");
            assert_eq!(json["elements"][1]["payload"], "42", "{codec}");

            // Written by the CLI: read back by the same codec, and (for
            // compression) holding Java's Kryo bytes inside.
            let written = format!("written-{codec}");
            ok(&delayq(
                &redis,
                &[
                    "offer",
                    &written,
                    "--delay",
                    "1h",
                    "--codec",
                    codec,
                    "--kryo-schema",
                    SCHEMA_FILE,
                    "--java-class",
                    "compat.Order",
                    r#"{"id":"o-1","amount":1234,"tags":["a","b"]}"#,
                ],
            ));
            let mine = &payloads_of(&redis, &written).await[0];
            match codec {
                "serialization" | "marshalling" => {
                    assert_eq!(mine, &codec_case(codec, "pojo_order"), "{codec}: Java's bytes exactly")
                }
                _ => {
                    let wrap = delayq::codec::compress::Compression::from_name(codec).unwrap();
                    let inner = wrap.decompress(mine, 1 << 20).unwrap();
                    assert_eq!(inner, kryo_case("pojo_order").raw, "{codec}: Java's Kryo bytes inside");
                }
            }
        }
        // auto reads; it cannot write.
        let out = delayq(&redis, &["offer", "q", "--delay", "1h", "--codec", "auto", "x"]);
        assert!(!out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("auto is for reading"),
            "{out:?}"
        );
        let out = delayq(&redis, &["inspect", "q", "--codec", "brotli"]);
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("lz4, lz4v2, snappy, zstd"),
            "{out:?}"
        );
    }
}

redis_test! {
    async fn migrate_re_encodes_a_marshalling_queue_as_kryo_in_place_and_back_to_serialization(redis) {
        let cases = [
            "string",
            "long",
            "pojo_order",
            "pojo_event_nested",
            "hashmap",
            "arraylist",
            "uuid",
            "bigdecimal",
        ];
        let river: Vec<Vec<u8>> = cases.iter().map(|c| codec_case("marshalling", c)).collect();
        seed(&redis, "legacy-codec", &river).await;
        // A ready value waits for consumers: not the migration's business.
        redis
            .raw()
            .await
            .cmd("RPUSH", vec!["legacy-codec".into(), "ready".into()])
            .await;
        let before = redis
            .raw()
            .await
            .zrange("redisson_delay_queue_timeout:{legacy-codec}")
            .await;

        let out = ok(&delayq(
            &redis,
            &[
                "migrate",
                "legacy-codec",
                "--from-codec",
                "marshalling",
                "--to-codec",
                "kryo",
                "--kryo-schema",
                SCHEMA_FILE,
            ],
        ));
        assert!(
            out.contains(&format!("{} value(s) re-encoded from marshalling to kryo", cases.len())),
            "{out}"
        );
        let kryo: Vec<Vec<u8>> = cases.iter().map(|c| kryo_case(c).raw).collect();
        assert_eq!(
            payloads_of(&redis, "legacy-codec").await,
            kryo,
            "Java's own Kryo5Codec bytes, case by case"
        );
        let after = redis
            .raw()
            .await
            .zrange("redisson_delay_queue_timeout:{legacy-codec}")
            .await;
        let scores = |v: &[(bytes::Bytes, i64)]| v.iter().map(|e| e.1).collect::<Vec<_>>();
        assert_eq!(scores(&before), scores(&after), "due times kept");
        assert_eq!(
            redis.raw().await.lrange("legacy-codec").await,
            [bytes::Bytes::from("ready")]
        );

        // Run again: everything is Kryo already, and auto knows it.
        let out = ok(&delayq(
            &redis,
            &[
                "migrate",
                "legacy-codec",
                "--from-codec",
                "auto",
                "--to-codec",
                "kryo",
                "--kryo-schema",
                SCHEMA_FILE,
            ],
        ));
        assert!(
            out.contains(&format!(
                "0 value(s) re-encoded from auto to kryo, {} already kryo",
                cases.len()
            )),
            "{out}"
        );

        // And on to Java serialization.
        ok(&delayq(
            &redis,
            &[
                "migrate",
                "legacy-codec",
                "--from-codec",
                "kryo",
                "--to-codec",
                "serialization",
                "--kryo-schema",
                SCHEMA_FILE,
            ],
        ));
        let shown = ok(&delayq(
            &redis,
            &["inspect", "legacy-codec", "--codec", "auto", "--format", "json"],
        ));
        let json: serde_json::Value = serde_json::from_str(&shown).unwrap();
        for element in json["elements"].as_array().unwrap() {
            assert_eq!(element["codec"], "serialization", "{element}");
        }
        assert_eq!(
            payloads_of(&redis, "legacy-codec").await[2],
            codec_case("serialization", "pojo_order"),
            "Java's own SerializationCodec bytes"
        );
    }
}

redis_test! {
    async fn migrate_leaves_values_it_cannot_read_and_says_so(redis) {
        seed(
            &redis,
            "half",
            &[
                codec_case("marshalling", "string"),
                b"plain text".to_vec(),
                codec_case("marshalling", "long"),
            ],
        )
        .await;
        let out = delayq(
            &redis,
            &["migrate", "half", "--from-codec", "marshalling", "--to-codec", "kryo"],
        );
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("2 value(s) re-encoded") && stdout.contains("1 undecodable"),
            "{stdout}"
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("pending element 1"),
            "{out:?}"
        );
        assert_eq!(payloads_of(&redis, "half").await[1], b"plain text", "left as it was");
    }
}

fn delayq(redis: &RedisServer, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_delayq"))
        .args(args)
        .env("REDIS_URL", redis.url())
        .output()
        .expect("run delayq")
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The payloads of the pending list, in list order.
async fn payloads_of(redis: &RedisServer, queue: &str) -> Vec<Vec<u8>> {
    redis
        .raw()
        .await
        .lrange(&format!("redisson_delay_queue:{{{queue}}}"))
        .await
        .iter()
        .map(|e| unpack(e).unwrap().payload.to_vec())
        .collect()
}

redis_test! {
    /// with `--from-codec auto`, a payload detection cannot
    /// read (a Kryo POJO without a schema, ByteArrayCodec bytes) comes back as
    /// `Untyped::Bytes`, and `encode_read` writes its HEX TEXT as the new value:
    /// the POJO and the bytes become Java Strings, exit 0, "0 undecodable".
    async fn migrate_from_auto_never_turns_unreadable_payloads_into_hex_strings(redis) {
        let payloads = vec![kryo_case("pojo_order").raw, vec![0xde, 0xad, 0xbe, 0xef, 0x00]];
        seed(&redis, "auto-unreadable", &payloads).await;
        let out = delayq(
            &redis,
            &[
                "migrate",
                "auto-unreadable",
                "--from-codec",
                "auto",
                "--to-codec",
                "serialization",
            ],
        );
        assert_eq!(payloads_of(&redis, "auto-unreadable").await, payloads, "{out:?}");
        assert_eq!(out.status.code(), Some(1), "{out:?}");
    }
}

redis_test! {
    /// a StringCodec queue migrated `--from-codec auto
    /// --to-codec string` must keep its text as it is; today JSON text is
    /// reparsed and rewritten (keys sorted, big numbers rounded, a `@class`
    /// property removed).
    async fn migrate_from_auto_to_string_keeps_text_byte_for_byte(redis) {
        let payloads = vec![
            br#"{"b": 1, "a": 12345678901234567890123}"#.to_vec(),
            br#"{"@class":"compat.Order","id":"o-1"}"#.to_vec(),
        ];
        seed(&redis, "auto-text", &payloads).await;
        let out = delayq(
            &redis,
            &["migrate", "auto-text", "--from-codec", "auto", "--to-codec", "string"],
        );
        assert_eq!(payloads_of(&redis, "auto-text").await, payloads, "{out:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_between_jackson_and_java_codecs_is_refused_and_changes_nothing() {
    // Jackson's @class typing and the Java codecs' classes do not map one to
    // one: a POJO rewritten without its class would reach Java as a HashMap.
    deadline(async {
        let redis = RedisServer::start().await;
        let jackson = codec_case("jackson", "pojo_order");
        seed(&redis, "from-jackson", std::slice::from_ref(&jackson)).await;
        for (from, to) in [("jackson", "kryo"), ("jackson", "serialization"), ("kryo", "jackson")] {
            let out = delayq(
                &redis,
                &[
                    "migrate",
                    "from-jackson",
                    "--from-codec",
                    from,
                    "--to-codec",
                    to,
                    "--kryo-schema",
                    SCHEMA_FILE,
                    "--java-class",
                    "compat.Order",
                ],
            );
            assert_eq!(out.status.code(), Some(2), "{out:?}");
            assert!(
                String::from_utf8_lossy(&out.stderr).contains("not supported"),
                "{out:?}"
            );
        }
        // Detected as Jackson under auto: counted, left as it is.
        let out = delayq(
            &redis,
            &[
                "migrate",
                "from-jackson",
                "--from-codec",
                "auto",
                "--to-codec",
                "kryo",
                "--kryo-schema",
                SCHEMA_FILE,
            ],
        );
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("1 undecodable"),
            "{out:?}"
        );
        assert_eq!(payloads_of(&redis, "from-jackson").await, [jackson]);
    })
    .await;
}

redis_test! {
    /// A 30-digit BigInteger and a BigDecimal's 2.50 typed on the command
    /// line are written as typed (not through a double), the decimal with
    /// its class where --java-class names one for its path, as Java's
    /// Jackson needs for a BigDecimal field (it refuses a bare number).
    async fn offer_jackson_writes_big_numbers_exactly(redis) {
        ok(&delayq(
            &redis,
            &[
                "offer",
                "exact",
                "--delay",
                "1h",
                "--codec",
                "jackson",
                "--java-class",
                "bank.Account",
                "--java-class",
                "total=java.math.BigDecimal",
                "--java-class",
                "limit=java.math.BigInteger",
                r#"{"id":"a-1","total":2.50,"limit":123456789012345678901234567890,"any":123456789012345678901234567891,"rate":0.1}"#,
            ],
        ));
        let written = &payloads_of(&redis, "exact").await[0];
        assert_eq!(
            String::from_utf8_lossy(written),
            r#"{"@class":"bank.Account","any":123456789012345678901234567891,"id":"a-1","limit":["java.math.BigInteger",123456789012345678901234567890],"rate":0.1,"total":["java.math.BigDecimal",2.50]}"#
        );
        // Not JSON: refused, nothing offered.
        let out = delayq(
            &redis,
            &["offer", "exact", "--delay", "1h", "--codec", "jackson", "--java-class", "bank.Account", "{\"id\":"],
        );
        assert!(!out.status.success(), "{out:?}");
        assert_eq!(payloads_of(&redis, "exact").await.len(), 1);
    }
}
