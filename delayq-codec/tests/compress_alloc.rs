//! Hostile compressed bytes allocate nothing of the size they claim: every
//! allocation made while decompressing them is measured (a test binary of
//! its own, for its counting allocator).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use delayq_codec::compress::{CompressErrorKind, Compression, DEFAULT_MAX_DECOMPRESSED};

/// The system allocator, noting the largest request made on this thread.
struct Counting;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe {
            LARGEST.with(|l| l.set(l.get().max(layout.size())));
            System.alloc(layout)
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        unsafe {
            LARGEST.with(|l| l.set(l.get().max(new_size)));
            System.realloc(ptr, layout, new_size)
        }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Decompresses `raw`; returns the error kind and the largest allocation.
fn decompress(compression: Compression, raw: &[u8], max_size: usize) -> (CompressErrorKind, usize) {
    LARGEST.with(|l| l.set(0));
    let result = compression.decompress(raw, max_size);
    let largest = LARGEST.with(Cell::get);
    match result {
        Ok(out) => panic!("{compression}: decompressed to {} bytes", out.len()),
        Err(e) => (e.kind(), largest),
    }
}

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

#[test]
fn a_claim_over_the_cap_allocates_nothing_for_it() {
    // 2 GiB - 1 claimed, and 64 MiB + 1 (just over the default cap).
    for claim in [0x7fff_ffffu32, (DEFAULT_MAX_DECOMPRESSED + 1) as u32] {
        for compression in [Compression::Lz4, Compression::Lz4V2, Compression::Zstd] {
            let mut raw = claim.to_be_bytes().to_vec();
            raw.extend_from_slice(&[0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58, 0x01, 0x00, 0x00]);
            raw.extend(std::iter::repeat_n(0x11, 4 * KIB));
            let (kind, largest) = decompress(compression, &raw, DEFAULT_MAX_DECOMPRESSED);
            assert_eq!(kind, CompressErrorKind::TooLarge, "{compression}");
            assert!(largest < KIB, "{compression}: allocated {largest} bytes");
        }
        let mut snappy = Vec::new();
        let mut n = claim;
        while n >= 0x80 {
            snappy.push(n as u8 | 0x80);
            n >>= 7;
        }
        snappy.push(n as u8);
        snappy.extend(std::iter::repeat_n(0x00, 4 * KIB));
        let (kind, largest) = decompress(Compression::Snappy, &snappy, DEFAULT_MAX_DECOMPRESSED);
        assert_eq!(kind, CompressErrorKind::TooLarge);
        assert!(largest < KIB, "snappy: allocated {largest} bytes");
    }
}

#[test]
fn a_claim_under_the_cap_that_the_bytes_cannot_make_allocates_nothing_for_it() {
    // 60 MiB claimed by 100 bytes of data: under the cap, over what LZ4
    // (255 per byte), Snappy (22) or zstd (32 Ki per byte) can make.
    let claim = 60 * MIB as u32;
    for compression in [Compression::Lz4, Compression::Zstd] {
        let mut raw = claim.to_be_bytes().to_vec();
        raw.extend_from_slice(&[0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58]);
        raw.extend(std::iter::repeat_n(0x11, 94));
        let (kind, largest) = decompress(compression, &raw, DEFAULT_MAX_DECOMPRESSED);
        assert_eq!(kind, CompressErrorKind::LengthMismatch, "{compression}");
        assert!(largest < KIB, "{compression}: allocated {largest} bytes");
    }
    let mut snappy = vec![0x80, 0x80, 0x80, 0x1e]; // 60 Mi
    snappy.extend(std::iter::repeat_n(0x00, 100));
    let (kind, largest) = decompress(Compression::Snappy, &snappy, DEFAULT_MAX_DECOMPRESSED);
    assert_eq!(kind, CompressErrorKind::LengthMismatch);
    assert!(largest < KIB, "snappy: allocated {largest} bytes");
}

#[test]
fn a_zstd_bomb_allocates_what_it_claims_not_what_it_makes() {
    // 48 MiB of zeros: RLE blocks, a few hundred bytes.
    let zeros = vec![0u8; 48 * MIB];
    let honest = Compression::Zstd.compress(&zeros).unwrap();
    drop(zeros);
    assert!(honest.len() < 64 * KIB, "{}", honest.len());
    // Claiming 1 KiB: stops past 1 KiB, with the frame's 2 MiB window the
    // largest allocation (not 48 MiB).
    let mut small_claim = honest.clone();
    small_claim[..4].copy_from_slice(&(KIB as u32).to_be_bytes());
    let (kind, largest) = decompress(Compression::Zstd, &small_claim, DEFAULT_MAX_DECOMPRESSED);
    assert_eq!(kind, CompressErrorKind::LengthMismatch);
    assert!(largest <= 9 * MIB, "allocated {largest} bytes");
    // Claiming the truth but over a 1 MiB cap: refused up front.
    let (kind, largest) = decompress(Compression::Zstd, &honest, MIB);
    assert_eq!(kind, CompressErrorKind::TooLarge);
    assert!(largest < KIB, "allocated {largest} bytes");
}

#[test]
fn a_zstd_window_larger_than_needed_is_refused_before_it_is_reserved() {
    // A frame asking for a 64 MiB window (descriptor 0x80: 2^(10+16)) to
    // make 2 bytes (under ruzstd's own 128 MiB limit).
    let raw = [
        0, 0, 0, 2, 0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x80, 0x11, 0x00, 0x00, 0x03, 0x81,
    ];
    let (kind, largest) = decompress(Compression::Zstd, &raw, DEFAULT_MAX_DECOMPRESSED);
    assert_eq!(kind, CompressErrorKind::Unsupported);
    assert!(largest < MIB, "allocated {largest} bytes");
}
