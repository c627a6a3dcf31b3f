//! Scenario 13: what a hostile payload costs a decoder, in this process, no
//! Redis. A Kryo `BigInteger` or `BigDecimal` of 1 to 64 KB decoded to
//! decimal text (`KryoCodec<String>`, `KryoCodec<JavaBigDecimal>`) and to
//! JSON (`KryoValue::decode` + `to_json_text`, the CLI's and the
//! dashboard's path), against a `String` or `byte[]` of the same size read
//! the same way; and map keys nested in map keys, against the same maps
//! nested as values.

use std::hint::black_box;
use std::time::{Duration, Instant};

use crate::report::Row;
use crate::scenario::{Context, Rows, Scenario};
use delayq::codec::kryo::{JavaBigDecimal, KryoValue};
use delayq::{Codec, KryoCodec};

/// Payload sizes, in KiB.
pub const SIZES_KB: [usize; 4] = [1, 4, 16, 64];

/// How deep the map keys nest in the nested-key rows.
pub const KEY_DEPTHS: [usize; 2] = [12, 18];

/// One measured decode: the median time of one call and what it gave.
pub struct Timed {
    pub per_call: Duration,
    pub outcome: String,
}

impl Timed {
    pub fn text(&self) -> String {
        let us = self.per_call.as_secs_f64() * 1e6;
        let time = if us >= 1e6 {
            format!("{:.2} s", us / 1e6)
        } else if us >= 1e3 {
            format!("{:.2} ms", us / 1e3)
        } else {
            format!("{us:.1} µs")
        };
        format!("{time} ({})", self.outcome)
    }
}

/// Calls `op` until 300 ms have passed (at least once, at most 2,000 times)
/// and keeps the median call.
fn timed(mut op: impl FnMut() -> String) -> Timed {
    let started = Instant::now();
    let mut times = Vec::new();
    let mut outcome = String::new();
    while times.is_empty() || (started.elapsed() < Duration::from_millis(300) && times.len() < 2_000) {
        let t = Instant::now();
        outcome = black_box(op());
        times.push(t.elapsed());
    }
    times.sort();
    Timed {
        per_call: times[times.len() / 2],
        outcome,
    }
}

/// `n` bytes of a positive two's complement number with every bit pattern.
fn magnitude(n: usize) -> Vec<u8> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut bytes: Vec<u8> = (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    bytes[0] = 0x7f;
    bytes
}

fn outcome<T>(result: Result<T, delayq::error::BoxError>, len: impl Fn(&T) -> usize) -> String {
    match result {
        Ok(value) => format!("{} chars", len(&value)),
        Err(e) => {
            let e = e.to_string();
            format!("error: {}", e.chars().take(60).collect::<String>())
        }
    }
}

/// The rows for one size: (what, delayq, baseline).
pub struct SizeRows {
    pub kb: usize,
    pub big_integer_text: Timed,
    pub big_decimal: Timed,
    pub string_text: Timed,
    pub big_integer_json: Timed,
    pub bytes_json: Timed,
}

pub fn run_size(kb: usize) -> SizeRows {
    let n = kb * 1024;
    let big_integer = KryoValue::BigInteger(magnitude(n)).encode().unwrap();
    let big_decimal = KryoValue::BigDecimal {
        unscaled: magnitude(n),
        scale: 7,
    }
    .encode()
    .unwrap();
    let string = KryoValue::String("x".repeat(n)).encode().unwrap();
    let bytes = KryoValue::Bytes(magnitude(n)).encode().unwrap();

    let text = KryoCodec::<String>::new();
    let decimal = KryoCodec::<JavaBigDecimal>::new();
    let json = |raw: &[u8]| match KryoValue::decode(raw, None) {
        Ok(v) => format!("{} chars", v.to_json_text().len()),
        Err(e) => format!("error: {e}"),
    };
    SizeRows {
        kb,
        big_integer_text: timed(|| outcome(text.decode(&big_integer), String::len)),
        big_decimal: timed(|| outcome(decimal.decode(&big_decimal), |d| d.as_str().len())),
        string_text: timed(|| outcome(text.decode(&string), String::len)),
        big_integer_json: timed(|| json(&big_integer)),
        bytes_json: timed(|| json(&bytes)),
    }
}

/// Maps nested `depth` deep, through their keys (`keys`) or their values.
fn nested_maps(depth: usize, keys: bool) -> Vec<u8> {
    let mut v = KryoValue::String("a\"b".into());
    for _ in 0..depth {
        let entry = if keys {
            (v, KryoValue::Null)
        } else {
            (KryoValue::String("k".into()), v)
        };
        v = KryoValue::Map {
            class: "java.util.HashMap".into(),
            entries: vec![entry],
        };
    }
    v.encode().unwrap()
}

pub struct KeyRows {
    pub depth: usize,
    pub payload_bytes: usize,
    pub in_keys: Timed,
    pub in_values: Timed,
}

pub fn run_keys(depth: usize) -> KeyRows {
    let in_keys = nested_maps(depth, true);
    let in_values = nested_maps(depth, false);
    let json = |raw: &[u8]| format!("{} chars", KryoValue::decode(raw, None).unwrap().to_json_text().len());
    KeyRows {
        depth,
        payload_bytes: in_keys.len(),
        in_keys: timed(|| json(&in_keys)),
        in_values: timed(|| json(&in_values)),
    }
}

/// Scenario 13. Decoders on hostile BigIntegers, BigDecimals and map keys.
pub struct HostileDecoders;

impl Scenario for HostileDecoders {
    fn name(&self) -> &'static str {
        "decoders"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            let mut rows = Vec::new();
            eprintln!("13. decoders: hostile BigIntegers, BigDecimals and map keys...");
            let ratio = |a: &Timed, b: &Timed| a.per_call.as_secs_f64() / b.per_call.as_secs_f64();
            for kb in SIZES_KB {
                let r = run_size(kb);
                let scenario = format!("13. decoders, {} KB value", r.kb);
                rows.push(
                    Row::new(&scenario, "BigInteger → decimal text (KryoCodec<String>): per decode")
                        .values(
                            r.big_integer_text.text(),
                            format!("{} (a String)", r.string_text.text()),
                        )
                        .ratio(ratio(&r.big_integer_text, &r.string_text)),
                );
                rows.push(
                    Row::new(&scenario, "BigDecimal, scale 7 → KryoCodec<JavaBigDecimal>: per decode")
                        .values(r.big_decimal.text(), format!("{} (a String)", r.string_text.text()))
                        .ratio(ratio(&r.big_decimal, &r.string_text)),
                );
                rows.push(
                    Row::new(
                        &scenario,
                        "BigInteger → JSON text (KryoValue, the CLI's path): per decode",
                    )
                    .values(r.big_integer_json.text(), format!("{} (a byte[])", r.bytes_json.text()))
                    .ratio(ratio(&r.big_integer_json, &r.bytes_json)),
                );
            }
            for depth in KEY_DEPTHS {
                let r = run_keys(depth);
                rows.push(
                    Row::new(
                        &format!("13. decoders, maps {} deep ({} B)", r.depth, r.payload_bytes),
                        "maps as map keys → JSON text (KryoValue): per decode",
                    )
                    .values(r.in_keys.text(), format!("{} (nested as values)", r.in_values.text()))
                    .ratio(ratio(&r.in_keys, &r.in_values)),
                );
            }
            rows
        })
    }
}
