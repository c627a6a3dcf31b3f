//! Reads values a Java service wrote with Redisson's default codec
//! (`Kryo5Codec`), as a Rust struct and as untyped JSON, and writes them back
//! byte for byte. No Redis needed: the bytes are what `bucket.set(order)`
//! stores (captured from a real Redisson 3.52.0 client, `compat/fixtures`).
//!
//! `cargo run -p delayq-codec --example redisson_values`

use delayq_codec::kryo::{KryoSchema, KryoValue};
use delayq_codec::{Codec, JacksonCodec, KryoCodec};
use serde::{Deserialize, Serialize};

/// The Java class `compat.Order { String id; long amount; List<String> tags; }`.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename = "compat.Order")]
struct Order {
    id: Option<String>,
    amount: i64,
    tags: Vec<String>,
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

fn main() {
    // new Order("o-1", 1234, List.of("a", "b")) in an ArrayList, as Kryo5Codec wrote it.
    let java = unhex("0100636f6d7061742e4f726465f2a4136f2db101016a6176612e7574696c2e41727261794c6973f40382618262");

    // Typed: a serde struct named after the Java class.
    let kryo = KryoCodec::<Order>::new();
    let order = kryo.decode(&java).expect("a compat.Order");
    println!("as a Rust struct: {order:?}");
    assert_eq!(kryo.encode(&order).unwrap(), java, "written back byte for byte");

    // Untyped: any Kryo payload, for tools without Rust types. A POJO's
    // fields are not in Kryo's bytes, so the class is described once.
    let schema = KryoSchema::from_json(
        r#"{"classes": {"compat.Order": {"fields": {"id": "String", "amount": "long", "tags": "List<String>"}}}}"#,
    )
    .expect("a schema");
    let value = KryoValue::decode(&java, Some(&schema)).expect("a Kryo value");
    println!("as JSON: {}", value.to_json_text());

    // The same value in JsonJacksonCodec's format, for a service that moves
    // from Redisson's default codec to JSON.
    let jackson = JacksonCodec::<Order>::new();
    let json = jackson.encode(&order).unwrap();
    println!("as JsonJacksonCodec writes it: {}", String::from_utf8_lossy(&json));
    assert_eq!(jackson.decode(&json).unwrap(), order);
}
