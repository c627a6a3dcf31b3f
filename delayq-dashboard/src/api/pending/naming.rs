//! How the page names one pending element for an action: its packed bytes
//! as hex, or for a large one a digest of them and its due time, found again
//! among the elements due at that ms.

use std::hash::Hasher;
use std::time::{Duration, SystemTime};

use bytes::Bytes;

use delayq::DelayedQueue;

use super::super::hex;
use super::due_before;
use crate::epoch_ms;

/// Packed elements up to this size go to the page whole (hex), to name them
/// for an action; a larger one is named by a digest of its bytes and its due
/// time, and found again among the elements due at that ms, so that a page
/// of large values does not travel twice.
const RAW_INLINE: usize = 8 * 1024;
/// Elements due at the same ms an action looks through for a digest, most.
const TIES: usize = 1_000;

/// How the page names an element: its packed bytes, or for a large one a
/// digest of them and its due time ([`handle`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Named {
    Bytes(Vec<u8>),
    Digest { digest: u64, due_ms: i64 },
}

/// The name the page gets for an element: its bytes as hex, or
/// `~<digest>@<due ms>` when they are longer than [`RAW_INLINE`].
pub(super) fn handle(raw: &[u8], due_ms: i64) -> String {
    if raw.len() <= RAW_INLINE {
        hex(raw)
    } else {
        format!("~{:016x}@{due_ms}", digest(raw))
    }
}

/// The dashboard names and finds an element in the same process: the std
/// hasher with its fixed keys is enough (the action itself then goes by
/// the exact bytes found).
fn digest(raw: &[u8]) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    hasher.write(raw);
    hasher.finish()
}

impl Named {
    pub(super) fn parse(text: &str) -> Option<Named> {
        match text.strip_prefix('~') {
            Some(rest) => {
                let (digest, due) = rest.split_once('@')?;
                Some(Named::Digest {
                    digest: u64::from_str_radix(digest, 16).ok()?,
                    due_ms: due.parse().ok()?,
                })
            }
            None => unhex(text).map(Named::Bytes),
        }
    }

    /// The element's packed bytes: as named, or the element due at its ms
    /// whose digest matches (`None`: not pending at that due time now, or
    /// not among the first [`TIES`] due then).
    pub(super) async fn resolve(self, queue: &DelayedQueue<Bytes>) -> delayq::Result<Option<Vec<u8>>> {
        let (digest_of, due_ms) = match self {
            Named::Bytes(raw) => return Ok(Some(raw)),
            Named::Digest { digest, due_ms } => (digest, due_ms),
        };
        let at = SystemTime::UNIX_EPOCH + Duration::from_millis(due_ms.max(0) as u64);
        let mut rank = due_before(queue, at).await?;
        let mut looked = 0;
        while looked < TIES {
            let page = queue.pending_page(rank, 100).await?;
            for element in &page {
                if epoch_ms(element.due) != due_ms {
                    return Ok(None);
                }
                if digest(&element.raw) == digest_of {
                    return Ok(Some(element.raw.to_vec()));
                }
            }
            if page.len() < 100 {
                break;
            }
            (rank, looked) = (rank + page.len(), looked + page.len());
        }
        Ok(None)
    }
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if text.is_empty() || !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_are_named_by_hex_or_by_digest_and_due_time() {
        assert_eq!(unhex("00ff10"), Some(vec![0, 255, 16]));
        for bad in ["", "0", "zz", "0é"] {
            assert_eq!(unhex(bad), None, "{bad:?}");
        }
        let big = vec![7u8; RAW_INLINE + 1];
        let named = handle(&big, 1_700_000_000_123);
        assert!(named.starts_with('~') && named.ends_with("@1700000000123"), "{named}");
        assert_eq!(
            Named::parse(&named),
            Some(Named::Digest {
                digest: digest(&big),
                due_ms: 1_700_000_000_123
            })
        );
        assert_eq!(Named::parse(&handle(b"ab", 1)), Some(Named::Bytes(b"ab".to_vec())));
        for bad in ["~", "~zz@1", "~12@", "~12@x", "~12"] {
            assert_eq!(Named::parse(bad), None, "{bad:?}");
        }
    }
}
