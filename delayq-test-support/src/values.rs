//! Small values tests build: bytes as fred sends them, the time in milliseconds.

use bytes::Bytes;

/// Values as the bytes fred sends.
pub fn bytes(values: &[&str]) -> Vec<Bytes> {
    values.iter().map(|v| Bytes::copy_from_slice(v.as_bytes())).collect()
}

/// Milliseconds since the epoch on this host.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}
