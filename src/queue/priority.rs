//! Priorities: the [`Priority`] of a value, and what a client knows of a
//! queue's priority marker.
//!
//! Levels 1 to 9 live in delayq's keys of the queue's slot
//! (`lua/lib/priority.lua`); the default level, 0, is the destination list
//! itself, all a Java client sees. Consumers look at the other levels only
//! once the queue's marker (`delayq_priority:{N}`) exists, so a queue that
//! never had a priority value is taken from exactly as before.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fred::interfaces::{HashesInterface, KeysInterface};
use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::error::{Error, Result};
use crate::queue::Core;
use crate::wire::keys::QueueKeys;

/// Longest a take of a queue with priority values waits on its list alone,
/// between two looks at its priority sets: a value offered meanwhile lands
/// in a set no blocking read can watch beside the list.
pub(crate) const PRIORITY_ROUND: Duration = Duration::from_secs(1);

/// How often a client looks again whether a queue without the marker has
/// one now, at most (in the background, after the first look).
const MARKER_RECHECK: Duration = Duration::from_secs(1);

/// A value's priority, from 0 (the default, lowest) to 9 (highest), as
/// Redisson PRO's `RReliableQueue` numbers them. Consumers take the highest
/// level first and values of one level in offer order.
///
/// Priority 0 is a plain offer: the value goes to Redisson's keys and a
/// Java client takes it like any other. Values of levels 1 to 9 live in
/// delayq's keys beside the queue (see
/// [`DelayedQueue::offer_with_priority`](crate::DelayedQueue::offer_with_priority)),
/// which a Java client never reads.
///
/// ```
/// use delayq::Priority;
///
/// let urgent = Priority::new(9)?;
/// assert_eq!(urgent, Priority::HIGHEST);
/// assert!(urgent > Priority::DEFAULT);
/// assert_eq!(urgent.level(), 9);
/// assert!(Priority::new(10).is_err());
/// assert_eq!(Priority::try_from(3u8)?.to_string(), "3");
/// # Ok::<(), delayq::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Priority(u8);

impl Priority {
    /// Level 0: the default, a plain offer that Java sees.
    pub const DEFAULT: Priority = Priority(0);
    /// Level 9: taken before every other.
    pub const HIGHEST: Priority = Priority(9);

    /// The priority of `level`; [`Error::InvalidArgument`] above 9.
    pub fn new(level: u8) -> Result<Priority> {
        if level > 9 {
            return Err(Error::InvalidArgument(format!(
                "a priority is 0 (default) to 9 (highest), not {level}"
            )));
        }
        Ok(Priority(level))
    }

    /// Its level, 0 to 9.
    pub fn level(self) -> u8 {
        self.0
    }

    /// The level of a lease member's count field (its first of ten digits;
    /// `lua/lib/priority.lua`), 0 for anything else.
    pub(crate) fn of_count_field(field: &[u8]) -> Priority {
        match field.first() {
            Some(d @ b'1'..=b'9') if field.len() == 10 => Priority(d - b'0'),
            _ => Priority::DEFAULT,
        }
    }
}

impl TryFrom<u8> for Priority {
    type Error = Error;

    fn try_from(level: u8) -> Result<Priority> {
        Priority::new(level)
    }
}

impl std::fmt::Display for Priority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A member of the priority sets (`lua/lib/priority.lua`): its level, its
/// section (a TTL header and headers, as `delayq_priority_parse` reads
/// them; empty for none) and its payload; `None` for bytes that are not one.
pub(crate) fn split_member(member: &[u8]) -> Option<(Priority, &[u8], &[u8])> {
    let level = match member.first() {
        Some(d @ b'0'..=b'9') => d - b'0',
        _ => return None,
    };
    let rest = &member[1..];
    let n = section_len(rest);
    // A section stands before a modern element (0x08 first); a legacy
    // element's id may start with a `T` or an `H` too.
    let (section, element) = if n > 0 && rest.get(n) == Some(&8) {
        rest.split_at(n)
    } else {
        (&rest[..0], rest)
    };
    Some((Priority(level), section, crate::format::unpack(element).ok()?.payload))
}

/// The length of the section at the start of `bytes` (0: none): a TTL
/// header (`T` or `t`, 13 digits), then headers (`H`, 5 digits of length,
/// at least 2 bytes of JSON), either or both.
fn section_len(bytes: &[u8]) -> usize {
    let mut n = 0;
    if bytes.len() >= 14 && matches!(bytes[0], b'T' | b't') && bytes[1..14].iter().all(u8::is_ascii_digit) {
        n = 14;
    }
    match crate::queue::headers::parse_len(&bytes[n..]) {
        Some(len) if (2..=crate::Headers::MAX_BYTES).contains(&len) && n + 6 + len <= bytes.len() => n += 6 + len,
        _ => {}
    }
    n
}

/// A section's expiry (ms since the epoch), if it has a TTL header.
pub(crate) fn section_expiry(section: &[u8]) -> Option<i64> {
    match section.first() {
        Some(b'T' | b't') if section.len() >= 14 => std::str::from_utf8(&section[1..14]).ok()?.parse().ok(),
        _ => None,
    }
}

/// What this client knows of one queue's priority marker and of its
/// concurrency limit (`Limits::concurrency`). A marker once seen stays seen
/// (delayq never removes one); a limit is what the last look found, or a
/// claim's `full` answer since. A look (an `EXISTS` until the marker is
/// seen, and an `HEXISTS` of the limit) starts at most once a
/// [`MARKER_RECHECK`] while the queue is taken from, never two on their
/// way: a look stays on its way until Redis (or fred, giving up on the
/// connection) answers it, so a dead connection gets no stream of looks
/// (which would keep it looking busy to fred's unresponsive check) and
/// holds no take past a bounded wait.
#[derive(Default)]
pub(crate) struct Marker {
    seen: AtomicBool,
    /// The queue has a concurrency limit.
    limited: AtomicBool,
    /// The room its limit had left at the last claim's answer.
    room: AtomicI64,
    /// Claim answers so far: a look that started before the last one
    /// leaves `limited` as that answer set it (it read older state).
    answers: AtomicU64,
    /// A look is on its way.
    looking: AtomicBool,
    /// When the last look started; `None` before the first.
    looked: Mutex<Option<Instant>>,
    /// Told when a look ends.
    answered: Notify,
}

impl Marker {
    /// Whether the queue has priority values to look at: once seen, always.
    /// Else what the last look found; a look starts when the last is
    /// [`MARKER_RECHECK`] old and none is on its way. Only the first call
    /// waits for its look, at most `within`.
    pub(crate) async fn marked(self: &Arc<Self>, core: &Arc<Core>, keys: &Arc<QueueKeys>, within: Duration) -> bool {
        if !self.seen.load(Ordering::Relaxed) {
            self.look_if_due(core, keys, within).await;
        }
        self.seen.load(Ordering::Relaxed)
    }

    /// Whether the queue has a concurrency limit, as [`marked`](Self::marked)
    /// learns it (the first call waits for its look, at most `within`).
    pub(crate) async fn limited(self: &Arc<Self>, core: &Arc<Core>, keys: &Arc<QueueKeys>, within: Duration) -> bool {
        self.look_if_due(core, keys, within).await;
        self.limited.load(Ordering::Relaxed)
    }

    /// What the last look found of the limit, without waiting (a look
    /// starts in the background when one is due).
    pub(crate) fn limited_now(self: &Arc<Self>, core: &Arc<Core>, keys: &Arc<QueueKeys>) -> bool {
        self.start_look(core, keys);
        self.limited.load(Ordering::Relaxed)
    }

    async fn look_if_due(self: &Arc<Self>, core: &Arc<Core>, keys: &Arc<QueueKeys>, within: Duration) {
        let first = self.looked.lock().is_none();
        let answered = self.answered.notified();
        let started = self.start_look(core, keys);
        if first && started {
            let _ = tokio::time::timeout(within, answered).await;
        }
    }

    /// Whether a look found priority values or groups, without waiting.
    pub(crate) fn marked_now(&self) -> bool {
        self.seen.load(Ordering::Relaxed)
    }

    /// This client wrote a priority value: the marker exists.
    pub(crate) fn set(&self) {
        self.seen.store(true, Ordering::Relaxed);
    }

    /// A claim answered the room the queue's concurrency limit had left
    /// (`None`: it has none).
    pub(crate) fn set_room(&self, room: Option<i64>) {
        self.answers.fetch_add(1, Ordering::AcqRel);
        self.limited.store(room.is_some(), Ordering::Relaxed);
        if let Some(room) = room {
            self.room.store(room, Ordering::Relaxed);
        }
    }

    /// The room at the last claim's answer (0 before any).
    pub(crate) fn room(&self) -> i64 {
        self.room.load(Ordering::Relaxed)
    }

    /// Starts a look in the background when one is due; whether it did.
    fn start_look(self: &Arc<Self>, core: &Arc<Core>, keys: &Arc<QueueKeys>) -> bool {
        {
            let mut looked = self.looked.lock();
            let due = looked.is_none_or(|at| at.elapsed() >= MARKER_RECHECK);
            if !due || self.looking.swap(true, Ordering::AcqRel) {
                return false;
            }
            *looked = Some(Instant::now());
        }
        let (marker, core, keys) = (self.clone(), core.clone(), keys.clone());
        tokio::spawn(async move {
            marker.look(&core, &keys).await;
            marker.looking.store(false, Ordering::Release);
            marker.answered.notify_waiters();
        });
        true
    }

    async fn look(&self, core: &Core, keys: &QueueKeys) {
        let Ok(conn) = core.conn_for(keys.destination()) else {
            return;
        };
        if !self.seen.load(Ordering::Relaxed) {
            // Priority levels or groups: either takes the claim that reads them.
            match conn
                .exists::<i64, _>(vec![keys.priority_marker(), keys.group_state()])
                .await
            {
                Ok(n) if n > 0 => self.set(),
                Ok(_) => {}
                Err(error) => {
                    tracing::debug!(queue = keys.destination(), %error, "could not look for the priority marker");
                    return;
                }
            }
        }
        let answers = self.answers.load(Ordering::Acquire);
        match conn.hexists::<bool, _, _>(keys.limits(), "concurrency").await {
            Ok(limited) if self.answers.load(Ordering::Acquire) == answers => {
                self.limited.store(limited, Ordering::Relaxed)
            }
            Ok(_) => {} // a claim answered meanwhile, with newer state
            Err(error) => {
                tracing::debug!(queue = keys.destination(), %error, "could not look for a concurrency limit");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{pack_with_id, ElementId};

    fn parse_member(member: &[u8]) -> Option<(Priority, &[u8])> {
        let (level, _, payload) = split_member(member)?;
        Some((level, payload))
    }

    #[test]
    fn members_read_with_and_without_a_ttl_header() {
        let modern = pack_with_id(ElementId::Modern([7; 8]), b"v");
        let mut plain = b"5".to_vec();
        plain.extend_from_slice(&modern);
        assert_eq!(parse_member(&plain), Some((Priority(5), &b"v"[..])));
        let mut with_ttl = b"0T1764000000000".to_vec();
        with_ttl.extend_from_slice(&modern);
        assert_eq!(parse_member(&with_ttl), Some((Priority(0), &b"v"[..])));
        // A legacy element whose f64 id starts with a 'T' is no TTL header.
        let mut id = [0u8; 8];
        id[0] = b'T';
        let legacy = pack_with_id(ElementId::Legacy(f64::from_le_bytes(id)), b"w");
        let mut member = b"3".to_vec();
        member.extend_from_slice(&legacy);
        assert_eq!(parse_member(&member), Some((Priority(3), &b"w"[..])));
        assert_eq!(parse_member(b"x"), None);
        let mut headed = b"0T1764000000000H00009{\"a\":\"b\"}".to_vec();
        headed.extend_from_slice(&modern);
        let (level, section, payload) = split_member(&headed).unwrap();
        assert_eq!((level, payload), (Priority(0), &b"v"[..]));
        assert_eq!(section_expiry(section), Some(1_764_000_000_000));
        assert_eq!(
            crate::queue::headers::section_headers(section),
            Some(&b"{\"a\":\"b\"}"[..])
        );
        // A legacy element whose id starts with an 'H' is no headers part.
        let mut id = [0u8; 8];
        id[0] = b'H';
        let legacy = pack_with_id(ElementId::Legacy(f64::from_le_bytes(id)), b"w");
        let mut member = b"4".to_vec();
        member.extend_from_slice(&legacy);
        assert_eq!(parse_member(&member), Some((Priority(4), &b"w"[..])));
    }
}
