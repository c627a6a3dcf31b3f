//! A Kryo schema read from the Java service's own compiled classes
//! (`compat/java/class-files`: `shop.jar` and the same classes as a folder)
//! reads what Redisson 4.7.0's `Kryo5Codec` wrote for instances of them
//! (`payloads.json`, written by `capture.sh`), and writes it back byte for
//! byte.

use std::path::PathBuf;

use delayq_codec::kryo::{KryoSchema, KryoValue};
use serde_json::{json, Value};

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../compat/java/class-files")
}

fn payload(case: &str) -> Vec<u8> {
    let file: Value = serde_json::from_str(&std::fs::read_to_string(data().join("payloads.json")).unwrap()).unwrap();
    let hex = file["cases"][case].as_str().unwrap();
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn the_jar_and_the_classes_folder_give_the_same_schema() {
    let jar = KryoSchema::from_class_files(data().join("shop.jar")).unwrap();
    let folder = KryoSchema::from_class_files(data().join("classes")).unwrap();
    assert_eq!(jar, folder);
    assert_eq!(jar.superclass("shop.RushOrder"), Some("shop.Order"));
    assert_eq!(jar.superclass("shop.Order"), None);
    assert_eq!(jar.serial_version_uid("shop.Order"), Some(42));
    assert_eq!(jar.serial_version_uid("shop.RushOrder"), Some(7));
    assert!(jar.parse_type("shop.Address").unwrap().is_final());
    assert!(!jar.parse_type("shop.Order").unwrap().is_final());
}

#[test]
fn what_kryo5codec_wrote_reads_with_the_schema_from_the_jar_and_writes_back_byte_for_byte() {
    let schema = KryoSchema::from_class_files(data().join("shop.jar")).unwrap();
    for (case, expected) in [
        (
            "order",
            json!({"address": {"city": "Oslo", "zip": 150}, "amount": 1234, "attrs": {"k": 5}, "id": "o-1",
                "retries": 3, "status": "PAID", "tags": ["a", "b"]}),
        ),
        (
            "order_nulls",
            json!({"address": null, "amount": -5, "attrs": null, "id": null, "retries": null, "status": null,
                "tags": null}),
        ),
        ("status", json!("CANCELLED")),
        ("address", json!({"city": "Bergen", "zip": 5003})),
    ] {
        let raw = payload(case);
        let value = KryoValue::decode(&raw, Some(&schema)).unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(value.to_json(), expected, "{case}");
        assert_eq!(value.encode().unwrap(), raw, "{case}: written back");
    }
}

/// `RushOrder extends Order` and redeclares `id`: Kryo writes the fields of
/// both sorted by name, RushOrder's `id` before Order's.
#[test]
fn a_subclass_reads_with_its_superclass_fields_in_kryo_order() {
    let schema = KryoSchema::from_class_files(data().join("shop.jar")).unwrap();
    let raw = payload("rush_order");
    let value = KryoValue::decode(&raw, Some(&schema)).unwrap();
    let KryoValue::Object { fields, .. } = &value else {
        panic!("{value:?}")
    };
    let read: Vec<(&str, Value)> = fields.iter().map(|f| (f.name.as_str(), f.value.to_json())).collect();
    assert_eq!(
        read,
        [
            ("address", Value::Null),
            ("amount", json!(9)),
            ("attrs", Value::Null),
            ("deadline", json!(1_795_400_000_000i64)),
            ("id", json!("r-7")),
            ("id", json!("base-r-7")),
            ("retries", Value::Null),
            ("status", json!("PAID")),
            ("tags", json!([])),
        ]
    );
    assert_eq!(value.encode().unwrap(), raw);
}

/// `int[]`, `String[]` and `List<long[]>` fields, typed from the class
/// file's descriptors and generic signature: read, and written back byte
/// for byte.
#[test]
fn array_fields_are_typed_from_the_class_file() {
    let schema = KryoSchema::from_class_files(data().join("shop.jar")).unwrap();
    let raw = payload("payment");
    let value = KryoValue::decode(&raw, Some(&schema)).unwrap();
    assert_eq!(value.java_class(), Some("shop.Payment"));
    assert_eq!(
        value.to_json(),
        json!({"batches": [[7, 8]], "codes": [1, -2, 300], "names": ["x", null]})
    );
    assert_eq!(value.encode().unwrap(), raw);
}

#[test]
fn what_is_not_a_jar_or_a_class_file_is_an_error() {
    let err = KryoSchema::from_class_files(data().join("payloads.json")).unwrap_err();
    assert!(err.contains("not a jar"), "{err}");
    assert!(KryoSchema::from_class_files(data().join("missing.jar")).is_err());
}
