//! Scenario 14: Redisson's other codecs (LZ4, LZ4 v2, Snappy and Zstd
//! around Kryo; Java serialization, JBoss Marshalling and Jackson, each
//! also inside LZ4) against Kryo alone, in this process, no Redis: the
//! per-value rates of scenario 8's POJO (`compat.Event`, an `Order` inside),
//! the stored size of the 27 captured values, and a 100 KB document through
//! each compression wrapper.

use std::hint::black_box;
use std::time::Instant;

use delayq::codec::compress::{Compression, Lz4Codec, Lz4V2Codec, SnappyCodec, ZstdCodec};
use delayq::codec::{Codec, JacksonCodec, KryoCodec, MarshallingCodec, SerializationCodec, StringCodec};
use delayq_test_support::vectors;

use crate::codecs::{event, per_second, Event};
use crate::report::{rate, Row};
use crate::scenario::{Context, Rows, Scenario};

/// One codec's rates on the POJO.
pub struct PerValue {
    pub codec: &'static str,
    pub encode: f64,
    pub decode: f64,
    pub bytes: usize,
}

/// One wrapper on the 100 KB document.
pub struct Document {
    pub codec: &'static str,
    /// MB/s of document, encode and decode.
    pub encode: f64,
    pub decode: f64,
    pub bytes: usize,
}

pub struct Results {
    pub kryo: PerValue,
    pub others: Vec<PerValue>,
    pub plain: Document,
    pub documents: Vec<Document>,
    /// (codec, bytes of the 27 captured values, Kryo's bytes of the same).
    pub vector_sizes: Vec<(String, usize, usize)>,
}

pub const DOCUMENT_BYTES: usize = 100 * 1024;

fn per_value<C: Codec<Event>>(codec: &'static str, c: &C) -> PerValue {
    let value = event();
    let raw = c.encode(&value).expect("encodes");
    assert_eq!(c.decode(&raw).expect("decodes"), value, "{codec} round trip");
    PerValue {
        codec,
        encode: per_second(|| {
            black_box(c.encode(black_box(&value)).unwrap());
        }),
        decode: per_second(|| {
            black_box(c.decode(black_box(&raw)).unwrap());
        }),
        bytes: raw.len(),
    }
}

/// MB/s through `c` of the document, median of 3 runs of about 200 ms.
fn document<C: Codec<String>>(codec: &'static str, c: &C, text: &String) -> Document {
    let raw = c.encode(text).expect("encodes");
    assert_eq!(&c.decode(&raw).expect("decodes"), text, "{codec} round trip");
    let mb_per_s = |op: &mut dyn FnMut()| {
        let mut rates: Vec<f64> = (0..3)
            .map(|_| {
                let started = Instant::now();
                let mut n = 0u32;
                while started.elapsed().as_millis() < 200 {
                    op();
                    n += 1;
                }
                f64::from(n) * text.len() as f64 / started.elapsed().as_secs_f64() / 1e6
            })
            .collect();
        rates.sort_by(f64::total_cmp);
        rates[1]
    };
    Document {
        codec,
        encode: mb_per_s(&mut || {
            black_box(c.encode(black_box(text)).unwrap());
        }),
        decode: mb_per_s(&mut || {
            black_box(c.decode(black_box(&raw)).unwrap());
        }),
        bytes: raw.len(),
    }
}

/// A JSON array of orders, `size` bytes or a little more: text that
/// compresses as real payloads do (repeated keys, varied values).
fn json_document(size: usize) -> String {
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let tags = ["express", "gift", "fragile", "priority", "international", "return"];
    let mut out = String::from("[");
    while out.len() < size {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        out.push_str(&format!(
            r#"{{"id":"o-{}","customer":"c-{:05}","amount":{},"currency":"EUR","tags":["{}"],"createdAt":{}}},"#,
            seed % 1_000_000,
            (seed >> 20) % 100_000,
            (seed >> 8) % 100_000,
            tags[(seed >> 40) as usize % tags.len()],
            1_795_400_000_000u64 + (seed >> 30) % 86_400_000,
        ));
    }
    out.pop();
    out.push(']');
    out
}

/// Total bytes per codec of the values real Redisson wrote
/// (`compat/fixtures/codecs.json`), with Kryo's total for the same cases.
fn vector_sizes() -> Vec<(String, usize, usize)> {
    let codecs = vectors::codecs();
    let kryo = vectors::kryo_cases();
    let kryo_bytes = |case: &str| kryo.iter().find(|c| c.name == case).map_or(0, |c| c.raw.len());
    let mut out = Vec::new();
    for name in ["lz4", "lz4v2", "snappy", "zstd", "serialization", "marshalling"] {
        let cases = codecs["codecs"][name]["cases"].as_object().expect(name);
        let (mut ours, mut theirs) = (0, 0);
        for (case, bytes) in cases {
            if let Some(hex) = bytes["hex"].as_str() {
                ours += hex.len() / 2;
                theirs += kryo_bytes(case);
            }
        }
        out.push((name.to_owned(), ours, theirs));
    }
    out
}

fn serialization() -> SerializationCodec<Event> {
    SerializationCodec::new()
        .with_serial_version_uid("compat.Event", 1)
        .with_serial_version_uid("compat.Order", 1)
}

fn marshalling() -> MarshallingCodec<Event> {
    MarshallingCodec::new()
        .with_serial_version_uid("compat.Event", 1)
        .with_serial_version_uid("compat.Order", 1)
}

pub fn run() -> Results {
    let kryo = per_value("kryo", &KryoCodec::<Event>::new());
    let others = vec![
        per_value(Compression::Lz4.name(), &Lz4Codec::<Event>::new()),
        per_value(Compression::Lz4V2.name(), &Lz4V2Codec::<Event>::new()),
        per_value(Compression::Snappy.name(), &SnappyCodec::<Event>::new()),
        per_value(Compression::Zstd.name(), &ZstdCodec::<Event>::new()),
        per_value("serialization", &serialization()),
        per_value("lz4/serialization", &Lz4Codec::wrap(serialization())),
        per_value("marshalling", &marshalling()),
        per_value("lz4/marshalling", &Lz4Codec::wrap(marshalling())),
        per_value("jackson", &JacksonCodec::<Event>::new()),
        per_value("lz4/jackson", &Lz4Codec::wrap(JacksonCodec::<Event>::new())),
    ];
    let text = json_document(DOCUMENT_BYTES);
    let plain = document("string", &StringCodec, &text);
    let documents = vec![
        document("lz4/string", &Lz4Codec::wrap(StringCodec), &text),
        document("lz4v2/string", &Lz4V2Codec::wrap(StringCodec), &text),
        document("snappy/string", &SnappyCodec::wrap(StringCodec), &text),
        document("zstd/string", &ZstdCodec::wrap(StringCodec), &text),
    ];
    Results {
        kryo,
        others,
        plain,
        documents,
        vector_sizes: vector_sizes(),
    }
}

/// The `corpus.Order` rows: each codec against Kryo measured in turns
/// with it, for the Rust struct and for `KryoValue`.
fn order_rows(r: &crate::java_order::Results) -> Vec<Row> {
    let mut rows = Vec::new();
    for (scenario, rates) in [
        (
            "14. Java codecs, corpus.Order as a Rust struct (chrono, bigdecimal)",
            &r.natural,
        ),
        (
            "14. Java codecs, corpus.Order as a KryoValue (the CLI's, the dashboard's)",
            &r.untyped,
        ),
    ] {
        for c in rates {
            if let Some(e) = &c.encode {
                rows.push(
                    Row::new(scenario, &format!("{} encodes/s (vs kryo, in turns)", c.codec))
                        .values(rate(e.ours), format!("{} (kryo)", rate(e.kryo)))
                        .ratio(e.ratio),
                );
            }
            let d = &c.decode;
            rows.push(
                Row::new(
                    scenario,
                    &format!("{} decodes/s of Java's bytes (vs kryo, in turns)", c.codec),
                )
                .values(rate(d.ours), format!("{} (kryo)", rate(d.kryo)))
                .ratio(d.ratio),
            );
            rows.push(
                Row::new(scenario, &format!("{} payload bytes (Java's)", c.codec))
                    .values(format!("{} B", c.bytes), format!("{} B (kryo)", c.kryo_bytes))
                    .ratio(c.bytes as f64 / c.kryo_bytes as f64),
            );
        }
    }
    rows
}

/// Scenario 14. Redisson's other codecs against Kryo, in this process.
pub struct JavaCodecs;

impl Scenario for JavaCodecs {
    fn name(&self) -> &'static str {
        "java-codecs"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            let mut rows = Vec::new();
            eprintln!("14. Java codecs: LZ4, LZ4 v2, Snappy, Zstd, serialization, marshalling, jackson (and in LZ4) against Kryo...");
            let r = run();
            let scenario = "14. Java codecs, one POJO (compat.Event)";
            for c in &r.others {
                rows.push(
                    Row::new(scenario, &format!("{} encodes/s (vs KryoCodec)", c.codec))
                        .values(rate(c.encode), format!("{} (kryo)", rate(r.kryo.encode)))
                        .ratio(c.encode / r.kryo.encode),
                );
                rows.push(
                    Row::new(scenario, &format!("{} decodes/s (vs KryoCodec)", c.codec))
                        .values(rate(c.decode), format!("{} (kryo)", rate(r.kryo.decode)))
                        .ratio(c.decode / r.kryo.decode),
                );
                rows.push(
                    Row::new(scenario, &format!("{} payload bytes", c.codec))
                        .values(format!("{} B", c.bytes), format!("{} B (kryo)", r.kryo.bytes))
                        .ratio(c.bytes as f64 / r.kryo.bytes as f64),
                );
            }
            rows.extend(order_rows(&crate::java_order::run()));
            let scenario = "14. Java codecs, the 27 captured values";
            for (codec, ours, kryo) in &r.vector_sizes {
                rows.push(
                    Row::new(scenario, &format!("{codec}: bytes of all 27 (as Java wrote them)"))
                        .values(format!("{ours} B"), format!("{kryo} B (kryo)"))
                        .ratio(*ours as f64 / *kryo as f64),
                );
            }
            let scenario = format!("14. Java codecs, a {} KB JSON document", DOCUMENT_BYTES / 1024);
            for d in &r.documents {
                rows.push(
                    Row::new(&scenario, &format!("{} encode / decode MB/s", d.codec))
                        .values(
                            format!("{:.0} / {:.0} MB/s", d.encode, d.decode),
                            format!("{:.0} / {:.0} MB/s (string)", r.plain.encode, r.plain.decode),
                        )
                        .ratio(d.decode / r.plain.decode),
                );
                rows.push(
                    Row::new(&scenario, &format!("{} stored bytes", d.codec))
                        .values(format!("{} B", d.bytes), format!("{} B (string)", r.plain.bytes))
                        .ratio(d.bytes as f64 / r.plain.bytes as f64),
                );
            }
            rows
        })
    }
}
