//! `--codec kryo` in the CLI: Java's exact bytes in, JSON out, hostile payloads bounded.

use std::process::{Command, Output};

use delayq::codec::kryo::KryoValue;
use delayq::format::{pack, unpack, Format};
use delayq::KryoCodec;

use delayq_test_support::vectors::{hostile_big_integer, kryo_case, maps_in_keys};
use delayq_test_support::{now_ms, redis_test, RedisServer};

const SCHEMA_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../compat/kryo-schema.example.json");

redis_test! {
    async fn the_cli_offers_java_bytes_and_prints_json(redis) {
        let order = r#"{"id":"o-1","amount":1234,"tags":["a","b"]}"#;
        let base = ["offer", "kq", "--delay", "1h", "--codec", "kryo"];
        ok(&delayq(&redis, &[&base[..], &["--java-type", "Long", "42"]].concat()));
        ok(&delayq(
            &redis,
            &[&base[..], &["--java-type", "String", "order-42"]].concat(),
        ));
        ok(&delayq(
            &redis,
            &[&base[..], &["--java-type", "BigDecimal", "12.50"]].concat(),
        ));
        ok(&delayq(&redis, &[&base[..], &[r#"["x","y","z"]"#]].concat()));
        ok(&delayq(
            &redis,
            &[
                &base[..],
                &["--java-class", "compat.Order", "--kryo-schema", SCHEMA_FILE, order],
            ]
            .concat(),
        ));
        let want: Vec<Vec<u8>> = ["long", "string", "bigdecimal", "arraylist", "pojo_order"]
            .iter()
            .map(|c| kryo_case(c).raw)
            .collect();
        assert_eq!(
            payloads(&redis, "kq").await,
            want,
            "exactly the bytes Java's Kryo5Codec wrote"
        );

        // inspect and take print JSON.
        let shown = ok(&delayq(
            &redis,
            &[
                "inspect",
                "kq",
                "--codec",
                "kryo",
                "--kryo-schema",
                SCHEMA_FILE,
                "--format",
                "json",
            ],
        ));
        let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
        let previews: Vec<&str> = shown["elements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["payload"].as_str().unwrap())
            .collect();
        assert_eq!(
            previews,
            [
                "42",
                "\"order-42\"",
                "12.50",
                r#"["x","y","z"]"#,
                r#"{"amount":1234,"id":"o-1","tags":["a","b"]}"#
            ]
        );
        // Another codec says what the bytes are and what to use.
        let shown = ok(&delayq(
            &redis,
            &["inspect", "kq", "--codec", "long", "--format", "json"],
        ));
        assert!(shown.contains("use --codec kryo"), "{shown}");
        // The table shows the payload's bytes (Kryo's Long 42: 09 54), not the packed element's.
        let table = ok(&delayq(&redis, &["inspect", "kq", "--codec", "long"]));
        assert!(table.contains("<0954>"), "{table}");
        let json: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(json["elements"][0]["payload_hex"], "0954", "{shown}");
        // POJOs need the schema.
        let shown = ok(&delayq(
            &redis,
            &["inspect", "kq", "--codec", "kryo", "--format", "json"],
        ));
        assert!(shown.contains("--kryo-schema"), "{shown}");
        // The table names the POJO's class and what reads its fields, not
        // only its bytes (with auto detection too).
        for codec in ["kryo", "auto"] {
            let table = ok(&delayq(&redis, &["inspect", "kq", "--codec", codec]));
            assert!(table.contains("<compat.Order · fields need --kryo-schema>"), "{codec}:\n{table}");
        }

        ok(&delayq(
            &redis,
            &[
                "offer",
                "ready",
                "--delay",
                "0",
                "--codec",
                "kryo",
                "--java-class",
                "compat.Order",
                "--kryo-schema",
                SCHEMA_FILE,
                order,
            ],
        ));
        let out = ok(&delayq(
            &redis,
            &[
                "take",
                "ready",
                "--timeout",
                "10s",
                "--codec",
                "kryo",
                "--kryo-schema",
                SCHEMA_FILE,
            ],
        ));
        assert_eq!(out, "{\"amount\":1234,\"id\":\"o-1\",\"tags\":[\"a\",\"b\"]}\n");

        // Mistakes are errors, not wrong bytes.
        let out = delayq(&redis, &[&base[..], &["--java-class", "compat.Order", order]].concat());
        assert!(!out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--kryo-schema"),
            "{out:?}"
        );
        let out = delayq(&redis, &[&base[..], &["--java-type", "Integer", "x"]].concat());
        assert!(!out.status.success(), "{out:?}");
    }
}

redis_test! {
    async fn dead_letters_list_as_json_with_the_kryo_codec(redis, raw, client) {
        let keys = client
            .delayed_queue("dl", KryoCodec::<KryoValue>::new())
            .unwrap()
            .without_transfer()
            .keys()
            .clone();
        let _: i64 = delayq::fred::interfaces::ListInterface::rpush(
            &raw.client,
            keys.dead_letter(),
            vec![kryo_case("uuid").raw, kryo_case("enum").raw],
        )
        .await
        .unwrap();
        let out = ok(&delayq(
            &redis,
            &[
                "dead-letter",
                "list",
                "dl",
                "--codec",
                "kryo",
                "--kryo-schema",
                SCHEMA_FILE,
                "--format",
                "json",
            ],
        ));
        let out: serde_json::Value = serde_json::from_str(&out).unwrap();
        let values: Vec<&str> = out["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["value"].as_str().unwrap())
            .collect();
        assert_eq!(values, ["\"123e4567-e89b-12d3-a456-426614174000\"", "\"CANCELLED\""]);
    }
}

redis_test! {
    async fn the_cli_prints_hostile_kryo_payloads_exactly_or_bounded(redis, raw) {
        let hostile = KryoValue::BigInteger(hostile_big_integer()).encode().unwrap();
        let keys = maps_in_keys(14).encode().unwrap();
        let due = now_ms() + 3_600_000;
        raw.seed("hostile", &pack(Format::Modern, &hostile), due).await;
        raw.seed("hostile", &pack(Format::Modern, &keys), due + 1).await;
        let shown = ok(&delayq(
            &redis,
            &["inspect", "hostile", "--codec", "kryo", "--format", "json"],
        ));
        let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
        let payloads: Vec<&str> = shown["elements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["payload"].as_str().unwrap_or_else(|| panic!("{e}")))
            .collect();
        // Past 2^131072 a BigInteger prints in hexadecimal, every bit of it.
        let hex: String = hostile_big_integer().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(payloads[0], format!("\"0x{hex}\""));
        // Maps as keys of maps as keys...: two levels print as JSON text, the
        // rest as their class, so the text stays proportional to the payload.
        assert!(payloads[1].contains("<java.util.HashMap>"), "{}", payloads[1]);
        assert!(
            payloads[1].len() <= 8 * keys.len(),
            "{} bytes of JSON from a {}-byte payload",
            payloads[1].len(),
            keys.len()
        );
    }
}

redis_test! {
    /// Java's `LocalDateTime`, `BigDecimal` and `BigInteger` as `Kryo5Codec`
    /// wrote them (`compat/fixtures/jdk-types.json`) print as ISO-8601 and
    /// exact decimals (the scale of 2.50 kept, all 30 digits).
    async fn the_cli_prints_java_time_and_exact_decimals(redis, raw) {
        let fixture: serde_json::Value =
            serde_json::from_str(include_str!("../../../compat/fixtures/jdk-types.json")).unwrap();
        let due = now_ms() + 3_600_000;
        for (i, case) in ["local_date_time", "big_decimal_scale", "big_integer"].iter().enumerate() {
            let hex = fixture["codecs"]["kryo"][case]["hex"].as_str().unwrap();
            let bytes: Vec<u8> = (0..hex.len()).step_by(2).map(|j| u8::from_str_radix(&hex[j..j + 2], 16).unwrap()).collect();
            raw.seed("times", &pack(Format::Modern, &bytes), due + i as i64).await;
        }
        let shown = ok(&delayq(&redis, &["inspect", "times", "--codec", "kryo", "--format", "json"]));
        let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
        let payloads: Vec<&str> = shown["elements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["payload"].as_str().unwrap_or_else(|| panic!("{e}")))
            .collect();
        assert_eq!(
            payloads,
            ["\"2026-11-23T02:13:20.123456789\"", "2.50", "123456789012345678901234567890"]
        );
    }
}

redis_test! {
    /// `--kryo-schema-from` the Java service's jar (or its classes folder):
    /// the POJO is written as Java's `Kryo5Codec` wrote it, and read back.
    async fn the_cli_takes_its_kryo_schema_from_the_java_services_jar(redis) {
        let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../compat/java/class-files");
        let jar = format!("{data}/shop.jar");
        let classes = format!("{data}/classes");
        let order = r#"{"address":{"city":"Oslo","zip":150},"amount":1234,"attrs":{"k":5},"id":"o-1","retries":3,"status":"PAID","tags":["a","b"]}"#;
        ok(&delayq(
            &redis,
            &[
                "offer", "jq", "--delay", "1h", "--codec", "kryo", "--java-class", "shop.Order",
                "--kryo-schema-from", &jar, order,
            ],
        ));
        let payloads_json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(format!("{data}/payloads.json")).unwrap()).unwrap();
        let hex = payloads_json["cases"]["order"].as_str().unwrap();
        let java: Vec<u8> = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
        assert_eq!(payloads(&redis, "jq").await, [java], "the bytes Java's Kryo5Codec wrote");
        let shown = ok(&delayq(
            &redis,
            &["inspect", "jq", "--codec", "kryo", "--kryo-schema-from", &classes, "--format", "json"],
        ));
        let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(shown["elements"][0]["payload"], order);
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

async fn payloads(redis: &RedisServer, queue: &str) -> Vec<Vec<u8>> {
    let raw = redis.raw().await;
    raw.lrange(&format!("redisson_delay_queue:{{{queue}}}"))
        .await
        .iter()
        .map(|e| unpack(e).unwrap().payload.to_vec())
        .collect()
}

redis_test! {
    /// `schedule list` shows a value it cannot read as the other commands
    /// do: a Kryo POJO names its class and what reads its fields, and
    /// `--kryo-schema` reads them.
    async fn schedule_list_names_the_class_of_a_value_it_cannot_read(redis) {
        let pojo = kryo_case("pojo_order").raw;
        let hex: String = pojo.iter().map(|b| format!("{b:02x}")).collect();
        ok(&delayq(
            &redis,
            &["schedule", "add", "kq", "orders", "--every", "1h", "--codec", "bytes", &hex],
        ));
        for codec in ["kryo", "auto"] {
            let table = ok(&delayq(&redis, &["schedule", "list", "kq", "--codec", codec]));
            assert!(table.contains("<compat.Order · fields need --kryo-schema>"), "{codec}:\n{table}");
        }
        let json = ok(&delayq(
            &redis,
            &["schedule", "list", "kq", "--codec", "kryo", "--format", "json"],
        ));
        let json: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(json["schedules"][0]["class"], "compat.Order", "{json}");
        let table = ok(&delayq(
            &redis,
            &["schedule", "list", "kq", "--codec", "kryo", "--kryo-schema", SCHEMA_FILE],
        ));
        assert!(table.contains(r#"{"amount":1234,"id":"o-1""#), "{table}");
    }
}
