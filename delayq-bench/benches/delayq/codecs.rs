//! Scenario 8: encoding and decoding one POJO with `KryoCodec` (Redisson's
//! default Kryo5Codec bytes) and with `JacksonCodec` (JsonJacksonCodec JSON),
//! in this process, no Redis: what a worker pays per value for the codec.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;

use crate::report::{rate, Row};
use crate::scenario::{Context, Rows, Scenario};
use delayq::{Codec, JacksonCodec, KryoCodec};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename = "compat.Order")]
pub struct Order {
    id: Option<String>,
    amount: i64,
    tags: Vec<String>,
}

/// compat.Event of the captured vectors, minus its enum and UUID (which
/// Jackson types differently): the same fields both codecs can carry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename = "compat.Event", rename_all = "camelCase")]
pub struct Event {
    #[serde(rename = "type")]
    kind: Option<String>,
    order: Option<Order>,
    created_at: i64,
    attrs: Option<BTreeMap<String, String>>,
    retries: Option<i32>,
    ratio: f64,
    urgent: bool,
}

pub const ITERATIONS: u32 = 200_000;

pub struct Rates {
    pub kryo_encode: f64,
    pub kryo_decode: f64,
    pub jackson_encode: f64,
    pub jackson_decode: f64,
    pub kryo_bytes: usize,
    pub jackson_bytes: usize,
}

pub fn event() -> Event {
    Event {
        kind: Some("charge".into()),
        order: Some(Order {
            id: Some("o-1".into()),
            amount: 1234,
            tags: vec!["a".into(), "b".into()],
        }),
        created_at: 1_795_400_000_000,
        attrs: Some(BTreeMap::from([("k".into(), "v".into())])),
        retries: Some(3),
        ratio: 0.25,
        urgent: true,
    }
}

/// Operations per second, median of 3 runs of `ITERATIONS`.
pub fn per_second(mut op: impl FnMut()) -> f64 {
    let mut rates: Vec<f64> = (0..3)
        .map(|_| {
            let started = Instant::now();
            for _ in 0..ITERATIONS {
                op();
            }
            f64::from(ITERATIONS) / started.elapsed().as_secs_f64()
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    rates[1]
}

fn measure<C: Codec<Event>>(codec: &C) -> (f64, f64, usize) {
    let value = event();
    let raw = codec.encode(&value).expect("encodes");
    assert_eq!(
        codec.decode(&raw).expect("decodes"),
        value,
        "{} round trip",
        codec.name()
    );
    let encode = per_second(|| {
        black_box(codec.encode(black_box(&value)).unwrap());
    });
    let decode = per_second(|| {
        black_box(codec.decode(black_box(&raw)).unwrap());
    });
    (encode, decode, raw.len())
}

pub fn run() -> Rates {
    let (kryo_encode, kryo_decode, kryo_bytes) = measure(&KryoCodec::<Event>::new());
    let (jackson_encode, jackson_decode, jackson_bytes) = measure(&JacksonCodec::<Event>::new());
    Rates {
        kryo_encode,
        kryo_decode,
        jackson_encode,
        jackson_decode,
        kryo_bytes,
        jackson_bytes,
    }
}

/// Scenario 8. Kryo against Jackson on one POJO, in this process.
pub struct Codecs;

impl Scenario for Codecs {
    fn name(&self) -> &'static str {
        "codecs"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            let mut rows = Vec::new();
            eprintln!("8. codecs: one POJO, {} encodes and decodes each...", ITERATIONS);
            let r = run();
            let scenario = "8. codecs, one POJO (compat.Event)";
            for (metric, kryo, jackson) in [
                ("encodes/s (KryoCodec vs JacksonCodec)", r.kryo_encode, r.jackson_encode),
                ("decodes/s (KryoCodec vs JacksonCodec)", r.kryo_decode, r.jackson_decode),
            ] {
                rows.push(
                    Row::new(scenario, metric)
                        .values(rate(kryo), format!("{} (JacksonCodec)", rate(jackson)))
                        .ratio(kryo / jackson),
                );
            }
            rows.push(
                Row::new(scenario, "payload bytes")
                    .values(
                        format!("{} B", r.kryo_bytes),
                        format!("{} B (JacksonCodec)", r.jackson_bytes),
                    )
                    .ratio(r.kryo_bytes as f64 / r.jackson_bytes as f64),
            );
            rows
        })
    }
}
