//! Deduplication windows: offers refused as duplicates of one made, under
//! the same id or with the same payload, within a window
//! (`lua/offer_dedup.lua`, records in `delayq_dedup:{name}`).

use std::borrow::Borrow;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use fred::types::Value;

use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::{Error, Result};
use crate::queue::Core;
use crate::wire::format;
use crate::wire::keys::QueueKeys;

use super::limits::Waiting;
use super::offer::{chunk_end, Due};
use super::DelayedQueue;
use crate::queue::joined::{reply_gone, Join, RunOutcome};

/// The longest window: a year (records are kept that long at most).
const MAX_WINDOW: Duration = Duration::from_secs(366 * 24 * 3600);
/// The longest id: ids are record names, kept for the whole window.
const MAX_ID_BYTES: usize = 1024;

/// What makes two offers the same for a deduplication window.
///
/// ```
/// use delayq::dedup::DedupKey;
/// let by_id = DedupKey::Id("order-42".into());
/// assert_ne!(by_id, DedupKey::Payload);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DedupKey {
    /// The caller's id: offers with equal ids are the same, whatever their
    /// payloads (equal payloads under different ids are not).
    Id(String),
    /// The payload: offers whose payloads (the codec's bytes, as Java reads
    /// them) are equal are the same. Redis hashes them (SHA-1) in the
    /// script, so the payload is never hashed twice or differently.
    Payload,
}

/// A deduplication window for one offer ([`DelayedQueue::offer_dedup`]):
/// what makes offers the same, and for how long after the first one a
/// second is refused.
///
/// ```
/// use std::time::Duration;
/// use delayq::dedup::{Dedup, DedupKey};
/// let dedup = Dedup::by_id("order-42", Duration::from_secs(600));
/// assert_eq!(dedup.key(), &DedupKey::Id("order-42".into()));
/// assert_eq!(dedup.window(), Duration::from_secs(600));
/// assert_eq!(Dedup::by_payload(Duration::from_secs(60)).key(), &DedupKey::Payload);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dedup {
    key: DedupKey,
    window: Duration,
}

impl Dedup {
    /// Offers under `id` are duplicates for `window` after the first one.
    pub fn by_id(id: impl Into<String>, window: Duration) -> Self {
        Dedup {
            key: DedupKey::Id(id.into()),
            window,
        }
    }

    /// Offers of an equal payload are duplicates for `window` after the
    /// first one.
    pub fn by_payload(window: Duration) -> Self {
        Dedup {
            key: DedupKey::Payload,
            window,
        }
    }

    /// What makes offers the same.
    pub fn key(&self) -> &DedupKey {
        &self.key
    }

    /// How long after the first offer a second is a duplicate.
    pub fn window(&self) -> Duration {
        self.window
    }
}

/// The answer of an offer with a deduplication window: queued, or not
/// because it is a duplicate.
///
/// A duplicate is a normal outcome, not an error: a producer that offers
/// again after a crash or a timeout expects "already there" and goes on, as
/// with `HashSet::insert` returning `false` or Redisson's `offer` returning
/// `false`; an `Err` would make `?` treat it as a failure and retry logic
/// offer it again. Errors stay for what went wrong (a refusal of the
/// queue's limits, a connection lost...).
///
/// ```
/// use delayq::dedup::Offered;
/// let answer = Offered::Duplicate;
/// assert!(answer.is_duplicate() && !answer.is_queued());
/// ```
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Offered {
    /// The value is queued, and its key recorded for the window.
    Queued,
    /// An offer with the same key was made within the window: nothing is
    /// queued (even if the first one has been taken and handled since).
    Duplicate,
}

impl Offered {
    /// Whether the value was queued.
    pub fn is_queued(self) -> bool {
        self == Offered::Queued
    }

    /// Whether the offer was refused as a duplicate.
    pub fn is_duplicate(self) -> bool {
        self == Offered::Duplicate
    }
}

/// The window in ms, checked: at least 1 ms, at most [`MAX_WINDOW`].
fn window_ms(window: Duration) -> Result<i64> {
    if window < Duration::from_millis(1) || window > MAX_WINDOW {
        return Err(Error::InvalidArgument(format!(
            "a deduplication window must be from 1 ms to 366 days, not {window:?}"
        )));
    }
    Ok(window.as_millis() as i64)
}

/// The record name the script takes: `i:<id>`, or `p` (the script names it
/// by the payload's hash).
fn key_arg(key: &DedupKey) -> Result<Value> {
    match key {
        DedupKey::Id(id) if id.is_empty() => Err(Error::InvalidArgument("an empty deduplication id".into())),
        DedupKey::Id(id) if id.len() > MAX_ID_BYTES => Err(Error::InvalidArgument(format!(
            "a deduplication id of {} bytes (at most {MAX_ID_BYTES})",
            id.len()
        ))),
        DedupKey::Id(id) => Ok(Value::from(format!("i:{id}"))),
        DedupKey::Payload => Ok(Value::from("p")),
    }
}

fn label(key: &DedupKey) -> &'static str {
    match key {
        DedupKey::Id(_) => "id",
        DedupKey::Payload => "payload",
    }
}

impl<T: 'static> DelayedQueue<T> {
    /// Offers `value`, due `delay` from now, unless an offer with the same
    /// key ([`Dedup::by_id`], [`Dedup::by_payload`]) was made within the
    /// window: then nothing is queued and the answer is
    /// [`Offered::Duplicate`], even if the first value was taken and handled
    /// since, until the window ends. Records expire by themselves (README,
    /// "Deduplication windows").
    ///
    /// One atomic script run, which may be resent after a lost reply: the
    /// resend finds its own record and answers as the first run did
    /// ([`Offered::Queued`]), queuing nothing twice. Concurrent calls with
    /// the same window (through this handle or its clones) share runs as
    /// [`offer`](Self::offer)'s do: a call made while another is in flight
    /// waits for it, then goes with the others that came meanwhile (at most
    /// 250 values or 256 KiB a run), each answered as offering them one by
    /// one in arrival order would (of two calls with one key, the later is
    /// the duplicate). The queue's limits are
    /// checked as for [`offer`](Self::offer) ([`Error::OfferRefused`]); a
    /// duplicate is never refused by them. Fails with
    /// [`Error::InvalidArgument`] for a window under 1 ms or over 366 days,
    /// or an id empty or over 1 KiB. After an error whose outcome is not
    /// known (the connection failed for good), offering again under the
    /// same key is safe: it answers [`Offered::Duplicate`] if the first run
    /// queued the value.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use delayq::dedup::{Dedup, Offered};
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let emails = client.delayed_queue("emails", delayq::StringCodec)?;
    /// let once = Dedup::by_id("welcome:ann", Duration::from_secs(3600));
    /// let first = emails.offer_dedup(&"welcome ann".into(), Duration::ZERO, &once).await?;
    /// assert_eq!(first, Offered::Queued);
    /// let again = emails.offer_dedup(&"welcome ann".into(), Duration::ZERO, &once).await?;
    /// assert_eq!(again, Offered::Duplicate);
    /// # Ok(()) }
    /// ```
    pub async fn offer_dedup(&self, value: &T, delay: Duration, dedup: &Dedup) -> Result<Offered> {
        let window = window_ms(dedup.window)?;
        let key = key_arg(&dedup.key)?;
        let due = self.due_after(delay)?;
        let payload = self.encode(value)?;
        self.handle.core.seen(&self.handle.keys);
        // Packed once: a resend (fred's, or this loop's after a wait) carries
        // the same element bytes, which is how the script knows its own.
        let item = DedupItem {
            window,
            due,
            payload: payload.len(),
            element: format::pack(self.format, &payload),
            key,
            label: label(&dedup.key),
            durability: self.handle.durability,
        };
        let target = self.dedup_target();
        let mut waiting = Waiting::new(self.when_full);
        loop {
            self.handle.arm(); // the run itself fails after shutdown
            match self.joined_dedup.send(target.clone(), item.clone()).await {
                Err(error) if waiting.again(&error).await => continue,
                outcome => return outcome,
            }
        }
    }

    /// Offers many values, each with its delay and key, in one window, in
    /// order: each answer says whether its value was queued or a duplicate
    /// (of an offer within the window, or of an earlier value of the same
    /// call). The values go in chunks of at most 250 values or 256 KiB, one
    /// script run each (each may be resent after a lost reply, answering as
    /// its first run).
    ///
    /// # Errors
    ///
    /// All keys, delays and payloads are checked before anything is sent.
    /// A failure part way is [`Error::PartlyOffered`], whose `offered` counts
    /// the values answered (queued or duplicates) from the first one; a
    /// refusal of the queue's limits stops the call at the chunk holding the
    /// refused value, of which none is queued.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use delayq::dedup::{DedupKey, Offered};
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let q = client.delayed_queue("emails", delayq::StringCodec)?;
    /// let answers = q
    ///     .offer_all_dedup(
    ///         [("a", DedupKey::Payload), ("a", DedupKey::Payload)]
    ///             .into_iter()
    ///             .map(|(v, key)| (v.to_string(), Duration::ZERO, key)),
    ///         Duration::from_secs(60),
    ///     )
    ///     .await?;
    /// assert_eq!(answers, [Offered::Queued, Offered::Duplicate]);
    /// # Ok(()) }
    /// ```
    pub async fn offer_all_dedup<I, B>(&self, items: I, window: Duration) -> Result<Vec<Offered>>
    where
        I: IntoIterator<Item = (B, Duration, DedupKey)>,
        B: Borrow<T>,
    {
        let window = window_ms(window)?;
        let (mut encoded, mut keys, mut labels) = (Vec::new(), Vec::new(), Vec::new());
        for (value, delay, key) in items {
            keys.push(key_arg(&key)?);
            labels.push(label(&key));
            encoded.push((self.due_after(delay)?, self.encode(value.borrow())?));
        }
        let mut answers = Vec::with_capacity(encoded.len());
        while answers.len() < encoded.len() {
            let (start, end) = (answers.len(), chunk_end(&encoded, answers.len()));
            match self
                .offer_dedup_run(window, &encoded[start..end], &keys[start..end], &labels[start..end])
                .await
            {
                Ok(chunk) => answers.extend(chunk),
                Err(error) => {
                    let unknown = if matches!(error, Error::OutcomeUnknown { .. }) || error.is_transient() {
                        end - start
                    } else {
                        0
                    };
                    if start == 0 && unknown == 0 {
                        return Err(error);
                    }
                    return Err(Error::PartlyOffered {
                        queue: self.name().to_owned(),
                        offered: start,
                        unknown,
                        source: Box::new(error),
                    });
                }
            }
        }
        Ok(answers)
    }

    /// One run of `offer_dedup.lua` for `items` (one chunk at most), waiting
    /// for room when the queue is full and the handle says so.
    async fn offer_dedup_run(
        &self,
        window: i64,
        items: &[(Due, Bytes)],
        keys: &[Value],
        labels: &[&'static str],
    ) -> Result<Vec<Offered>> {
        self.handle.core.seen(&self.handle.keys);
        // Packed once: a resend (fred's, or this loop's after a wait) carries
        // the same element bytes, which is how the script knows its own.
        let items: Vec<DedupItem> = (items.iter().zip(keys).zip(labels))
            .map(|(((due, payload), key), label)| DedupItem {
                window,
                due: *due,
                payload: payload.len(),
                element: format::pack(self.format, payload),
                key: key.clone(),
                label,
                durability: self.handle.durability,
            })
            .collect();
        let target = self.dedup_target();
        let mut waiting = Waiting::new(self.when_full);
        let reply = loop {
            self.handle.arm(); // the run itself fails after shutdown
            let error = match target.run(items.clone()).await? {
                Ok(reply) => break reply,
                Err(error) => Error::from(error),
            };
            if !waiting.again(&error).await {
                return Err(error);
            }
        };
        if !matches!(&reply, Value::Array(flags) if flags.len() == items.len()) {
            return Err(Error::Protocol(format!("offer_dedup answered {reply:?}")));
        }
        (items.iter().enumerate())
            .map(|(position, item)| target.answer(&reply, position, item))
            .collect()
    }

    /// Where this queue's deduplicated offers go.
    fn dedup_target(&self) -> DedupTarget {
        DedupTarget {
            core: self.handle.core.clone(),
            keys: self.handle.keys.clone(),
        }
    }
}

/// Where deduplicated offers go, joined as plain offers are (`joined.rs`):
/// concurrent `offer_dedup` calls with the same window share one run of
/// `lua/offer_dedup.lua`, which answers each value in order as offering
/// them one by one would (the second of two equal keys is the duplicate).
#[derive(Clone)]
pub(super) struct DedupTarget {
    core: Arc<Core>,
    keys: Arc<QueueKeys>,
}

/// One deduplicated offer: its window (one per run), due time, packed
/// element, key argument and key kind (for the duplicates' counter).
#[derive(Clone)]
pub(super) struct DedupItem {
    window: i64,
    due: Due,
    payload: usize,
    element: Bytes,
    key: Value,
    label: &'static str,
    /// Items join only with items that wait for as many replicas.
    durability: Option<crate::Durability>,
}

impl Join for DedupTarget {
    type Item = DedupItem;
    type Answer = Offered;

    fn core(&self) -> &Arc<Core> {
        &self.core
    }

    fn payload(item: &DedupItem) -> usize {
        item.payload
    }

    /// The script takes one window per run.
    fn joins(first: &DedupItem, next: &DedupItem) -> bool {
        first.window == next.window && first.durability == next.durability
    }

    async fn run(&self, items: Vec<DedupItem>) -> RunOutcome {
        let durable = self.core.durable(items.first().and_then(|i| i.durability));
        let keys = SCRIPTS.offer_dedup.keys(&self.keys).build();
        let mut args = Vec::with_capacity(1 + 3 * items.len());
        args.push(Value::from(items.first().map_or(0, |i| i.window)));
        for item in items {
            args.push(item.due.arg());
            args.push(Value::Bytes(item.element));
            args.push(item.key);
        }
        Ok(SCRIPTS
            .offer_dedup
            .run_durable(self.core.conn()?, self.keys.destination(), keys, args, durable)
            .await)
    }

    fn answer(&self, reply: &Value, position: usize, item: &DedupItem) -> Result<Offered> {
        let flag = match reply {
            Value::Array(flags) => flags.get(position),
            _ => None,
        };
        let Some(flag) = flag else {
            return Err(Error::Protocol(format!("offer_dedup answered {reply:?}")));
        };
        Ok(if reply::int(flag)? == 1 {
            Offered::Queued
        } else {
            crate::telemetry::offer_duplicate(self.keys.destination(), item.label);
            Offered::Duplicate
        })
    }

    fn unknown_outcome(&self) -> Error {
        reply_gone(&SCRIPTS.offer_dedup, self.keys.destination())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_and_ids_out_of_range_are_refused_before_anything_is_sent() {
        assert!(window_ms(Duration::from_micros(999)).is_err());
        assert_eq!(window_ms(Duration::from_millis(1)).unwrap(), 1);
        assert!(window_ms(MAX_WINDOW + Duration::from_millis(1)).is_err());
        assert!(key_arg(&DedupKey::Id(String::new())).is_err());
        assert!(key_arg(&DedupKey::Id("x".repeat(MAX_ID_BYTES + 1))).is_err());
        assert_eq!(key_arg(&DedupKey::Id("a:b".into())).unwrap(), Value::from("i:a:b"));
        assert_eq!(key_arg(&DedupKey::Payload).unwrap(), Value::from("p"));
    }
}
