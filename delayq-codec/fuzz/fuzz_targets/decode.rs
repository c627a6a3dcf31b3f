//! Any bytes, read by the River, Java serialization, Kryo and Jackson
//! decoders, bare or inside each compression wrapper (the first byte
//! picks which): none may panic, and none may have more bytes live at once
//! than `bounds::max_decode_bytes` of the decompressed payload (a counting
//! allocator checks it after each input).

#![no_main]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering::Relaxed};

use delayq_codec::bounds::max_decode_bytes;
use delayq_codec::compress::Compression;
use delayq_codec::kryo::{KryoSchema, KryoValue};
use delayq_codec::{detect, jackson, marshalling, serialization};
use libfuzzer_sys::fuzz_target;

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = LIVE.fetch_add(layout.size() as isize, Relaxed) + layout.size() as isize;
        PEAK.fetch_max(now, Relaxed);
        System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Relaxed);
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let now = LIVE.fetch_add(new_size as isize - layout.size() as isize, Relaxed) + new_size as isize
            - layout.size() as isize;
        PEAK.fetch_max(now, Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A schema for the POJOs and enums of the seeds (compat.Order, compat.Event).
const SCHEMA: &str = r#"{"classes": {
  "compat.Order": {"serialVersionUID": 1, "fields": {"id": "String", "amount": "long", "tags": "List<String>"}},
  "compat.Event": {"serialVersionUID": 1, "fields": {"type": "String", "order": "compat.Order",
    "status": "compat.Event$Status", "uuid": "UUID", "createdAt": "long", "attrs": "Map<String,String>",
    "retries": "Integer", "ratio": "double", "urgent": "boolean"}},
  "compat.Event$Status": {"enum": ["NEW", "PAID", "CANCELLED"]}
}}"#;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, raw)) = data.split_first() else { return };
    let schema = KryoSchema::from_json(SCHEMA).unwrap();
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let wrap = match pick >> 4 {
        1 => Some(Compression::Lz4),
        2 => Some(Compression::Lz4V2),
        3 => Some(Compression::Snappy),
        4 => Some(Compression::Zstd),
        _ => None,
    };
    let inner = match wrap {
        // A 4 MiB cap keeps each run short; the bound is in the decompressed size.
        Some(c) => match c.decompress(raw, 4 << 20) {
            Ok(inner) => inner,
            Err(_) => return,
        },
        None => raw.to_vec(),
    };
    match pick & 0x0f {
        0 => drop(marshalling::decode(&inner)),
        1 => drop(marshalling::decode_with_schema(&inner, &schema)),
        2 => drop(serialization::decode(&inner)),
        3 => drop(serialization::decode_with_schema(&inner, &schema)),
        4 => drop(KryoValue::decode(&inner, None)),
        5 => drop(KryoValue::decode(&inner, Some(&schema)).map(|v| v.to_json_text())),
        6 => drop(jackson::to_plain_json(&inner)),
        // Detection decompresses what it finds inside: its bound is the cap's.
        _ => {
            drop(detect::detect(&inner, Some(&schema), 4 << 20));
            return;
        }
    }
    let peak = (PEAK.load(Relaxed) - base) as usize;
    // The decompressed copy is counted too: the bound covers it.
    assert!(
        peak <= max_decode_bytes(inner.len()),
        "{peak} bytes live at once decoding {} bytes (bound {})",
        inner.len(),
        max_decode_bytes(inner.len())
    );
});
