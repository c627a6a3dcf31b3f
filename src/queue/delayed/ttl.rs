//! Offers with options ([`OfferOptions`]): a delay or a due time, a
//! [`Priority`], a message TTL and [`Headers`]. A value with a TTL or
//! headers goes to delayq's priority sets at its level, level 0 included
//! (`lua/offer_priority.lua`, `lua/lib/priority.lua`), so that every take
//! can see its expiry and its headers: a Java client never sees it.

use std::time::{Duration, SystemTime};

use crate::connection::durable::Durability;
use crate::error::{Error, Result};
use crate::queue::headers::{self, Headers};
use crate::queue::priority::Priority;
use crate::wire::format::Format;
use crate::wire::time;

use super::offer::Due;
use super::DelayedQueue;

/// The longest TTL: its expiry (ms since the epoch) must fit the 13 digits
/// a member holds, for centuries to come.
const MAX_TTL: Duration = Duration::from_millis(1_000_000_000_000);

/// What happens to a value offered with a TTL
/// ([`OfferOptions::ttl`]) that no consumer took within it.
///
/// ```
/// use delayq::{Expiry, OfferOptions};
/// use std::time::Duration;
///
/// assert_eq!(Expiry::default(), Expiry::DeadLetter);
/// let quiet = OfferOptions::after(Duration::ZERO)
///     .ttl(Duration::from_secs(30))
///     .on_expiry(Expiry::Drop);
/// assert_eq!(quiet.expiry(), Expiry::Drop);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Expiry {
    /// To the dead-letter list with reason `expired` (the default), where
    /// [`dead_letters`](crate::ReliableQueue::dead_letters) lists it and
    /// `requeue_dead_letters` can offer it again (without its TTL).
    #[default]
    DeadLetter,
    /// Dropped: only counted.
    Drop,
}

/// When to deliver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum When {
    After(Duration),
    At(SystemTime),
}

/// How to offer a value ([`DelayedQueue::offer_with`]): due after a delay
/// or at a time, with a [`Priority`], with a time to live (a message
/// TTL, as Redisson PRO's `MessageArgs.timeToLive`), and with [`Headers`]
/// (as its `MessageArgs.header`), given to the handler with the value
/// ([`Delivery::headers`](crate::Delivery::headers)).
///
/// Headers stay with the value through every give-back (a nack, a
/// visibility timeout, a worker's give-back), into the dead letters and
/// back out with a requeue; the payload's bytes stay exactly what the
/// codec wrote.
///
/// A TTL counts from the offer (the Redis server's clock). A value no
/// consumer took within it is not delivered: it goes to the dead letters
/// with reason `expired`, or is dropped ([`Expiry`]); either way the
/// queue's `expired` total counts it
/// ([`QueueTotals::expired`](crate::QueueTotals::expired)) and an
/// `expired` event tells. A value taken in time is delivered as any other,
/// and a delivery given back (a nack, a visibility timeout, a worker's
/// give-back) keeps its expiry: past it, it is expired at its next take.
///
/// A value offered with a TTL or headers lives in delayq's priority keys
/// of the queue (as the levels above the default do, level 0 included):
/// **Java never sees it**, and only delayq consumers take it. At the default level it
/// goes after every value of a higher level and before the values of the
/// destination list.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use delayq::{Expiry, OfferOptions, Priority};
///
/// let options = OfferOptions::after(Duration::from_secs(5))
///     .priority(Priority::new(7)?)
///     .ttl(Duration::from_secs(60))
///     .on_expiry(Expiry::Drop);
/// assert_eq!(options.priority_level(), Priority::new(7)?);
/// assert_eq!(options.time_to_live(), Some(Duration::from_secs(60)));
///
/// let at = OfferOptions::at(SystemTime::now() + Duration::from_secs(60));
/// assert_eq!(at.time_to_live(), None);
///
/// let traced = OfferOptions::default().header("tenant", "acme").header("source", "checkout");
/// assert_eq!(traced.headers().get("tenant"), Some("acme"));
/// assert_eq!(OfferOptions::default().priority_level(), Priority::DEFAULT);
/// # Ok::<(), delayq::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfferOptions {
    pub(super) when: When,
    priority: Priority,
    ttl: Option<Duration>,
    expiry: Expiry,
    headers: Headers,
    group: Option<String>,
    durability: Option<Durability>,
    partition_key: Option<Vec<u8>>,
}

impl Default for OfferOptions {
    /// Due now, at the default priority, without a TTL: a plain offer.
    fn default() -> Self {
        OfferOptions::after(Duration::ZERO)
    }
}

impl OfferOptions {
    /// Due `delay` from now.
    pub fn after(delay: Duration) -> OfferOptions {
        OfferOptions {
            when: When::After(delay),
            priority: Priority::DEFAULT,
            ttl: None,
            expiry: Expiry::DeadLetter,
            headers: Headers::new(),
            group: None,
            durability: None,
            partition_key: None,
        }
    }

    /// Due at `at` (a time in the past fails the offer with
    /// [`Error::InvalidDelay`]).
    pub fn at(at: SystemTime) -> OfferOptions {
        OfferOptions {
            when: When::At(at),
            ..OfferOptions::after(Duration::ZERO)
        }
    }

    /// With a priority (see [`DelayedQueue::offer_with_priority`]).
    pub fn priority(mut self, priority: Priority) -> OfferOptions {
        self.priority = priority;
        self
    }

    /// With a time to live, from the offer: a value no consumer took by
    /// then is not delivered (see [`on_expiry`](Self::on_expiry)). It must
    /// be longer than the delay (else the offer fails with
    /// [`Error::InvalidArgument`] and writes nothing), at least a
    /// millisecond, and at most about 31 years.
    pub fn ttl(mut self, ttl: Duration) -> OfferOptions {
        self.ttl = Some(ttl);
        self
    }

    /// What happens to the value once its TTL passed: [`Expiry::DeadLetter`]
    /// (the default) or [`Expiry::Drop`]. Without a TTL it does nothing.
    pub fn on_expiry(mut self, expiry: Expiry) -> OfferOptions {
        self.expiry = expiry;
        self
    }

    /// With the header `key` set to `value` (see [`Headers`]: at most
    /// [`Headers::MAX_ENTRIES`] and [`Headers::MAX_BYTES`], else the offer
    /// fails with [`Error::InvalidArgument`] and writes nothing).
    pub fn header(mut self, key: impl Into<String>, value: impl Into<String>) -> OfferOptions {
        self.headers.insert(key, value);
        self
    }

    /// With these headers, in place of any set before.
    pub fn with_headers(mut self, headers: Headers) -> OfferOptions {
        self.headers = headers;
        self
    }

    /// In the group `key` (1 to 1,024 bytes): values of one key run one at
    /// a time across every consumer (or as many as
    /// [`GroupLimits::concurrency`](crate::groups::GroupLimits::concurrency)
    /// allows), in offer order; different keys run side
    /// by side, taken round robin (see [`groups`](crate::groups)). A
    /// grouped value lives in delayq's keys of the queue: **a Java client
    /// never sees it**, and only delayq's reliable consumers and workers
    /// take it. It cannot have a priority, a TTL or headers
    /// ([`Error::InvalidArgument`] before anything is written).
    pub fn group(mut self, key: impl Into<String>) -> OfferOptions {
        self.group = Some(key.into());
        self
    }

    /// In the queue's one sequential group: every value offered so runs
    /// one at a time, in order, across every consumer (Redisson PRO's
    /// `SEQUENTIAL` processing mode), beside any other values and groups.
    pub fn sequential(mut self) -> OfferOptions {
        self.group = Some(String::new());
        self
    }

    /// The group key set, if any (`""` for [`sequential`](Self::sequential)).
    pub fn group_key(&self) -> Option<&str> {
        self.group.as_deref()
    }

    /// Acknowledged only once `durability`'s replicas have it, whatever
    /// the queue handle's durability
    /// ([`DelayedQueue::with_durability`]); unset, the handle's applies.
    /// An offer not confirmed in time fails with
    /// [`Error::NotReplicated`] (the value is queued on the primary).
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use delayq::{Durability, OfferOptions};
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let orders = client.delayed_queue("orders", delayq::StringCodec)?;
    /// let options = OfferOptions::after(Duration::from_secs(60)).durability(Durability::replicas(1));
    /// assert_eq!(options.durability_set(), Some(Durability::replicas(1)));
    /// orders.offer_with(&"o-9".to_owned(), &options).await?;
    /// # Ok(()) }
    /// ```
    pub fn durability(mut self, durability: Durability) -> OfferOptions {
        self.durability = Some(durability);
        self
    }

    /// Routed by `key` on a [`PartitionedQueue`](crate::PartitionedQueue)
    /// ([`offer_with`](crate::PartitionedQueue::offer_with)): every value
    /// of one key goes to the same partition, `CRC-32(key bytes) mod N`, so
    /// they are taken in offer order. An ordinary [`DelayedQueue`] ignores it.
    ///
    /// ```
    /// use delayq::OfferOptions;
    /// let options = OfferOptions::default().partition_key("customer-42");
    /// assert_eq!(options.partition_key_set(), Some(&b"customer-42"[..]));
    /// ```
    pub fn partition_key(mut self, key: impl AsRef<[u8]>) -> OfferOptions {
        self.partition_key = Some(key.as_ref().to_vec());
        self
    }

    /// The partition key set, if any.
    pub fn partition_key_set(&self) -> Option<&[u8]> {
        self.partition_key.as_deref()
    }

    /// The durability set for this offer, if any.
    pub fn durability_set(&self) -> Option<Durability> {
        self.durability
    }

    /// The headers set.
    pub fn headers(&self) -> &Headers {
        &self.headers
    }

    /// The priority set.
    pub fn priority_level(&self) -> Priority {
        self.priority
    }

    /// The TTL set, if any.
    pub fn time_to_live(&self) -> Option<Duration> {
        self.ttl
    }

    /// What happens once the TTL passed.
    pub fn expiry(&self) -> Expiry {
        self.expiry
    }

    /// The TTL in ms, checked against the delay (`now_ms` on this host's
    /// clock, for a due time).
    fn ttl_ms(&self, now_ms: i64) -> Result<Option<i64>> {
        let Some(ttl) = self.ttl else {
            return Ok(None);
        };
        let ttl_ms = ttl.as_millis();
        if ttl_ms == 0 {
            return Err(Error::InvalidArgument(format!("a TTL is at least 1 ms, not {ttl:?}")));
        }
        if ttl > MAX_TTL {
            return Err(Error::InvalidArgument(format!(
                "a TTL is at most {MAX_TTL:?}, not {ttl:?}"
            )));
        }
        let ttl_ms = ttl_ms as i64;
        let delay_ms = match self.when {
            When::After(delay) => i64::try_from(delay.as_millis()).unwrap_or(i64::MAX),
            When::At(at) => time::to_ms(at).saturating_sub(now_ms).max(0),
        };
        if delay_ms >= ttl_ms {
            return Err(Error::InvalidArgument(format!(
                "a value due in {delay_ms} ms would expire before it is due (TTL {ttl_ms} ms): the TTL must be longer than the delay"
            )));
        }
        Ok(Some(ttl_ms))
    }
}

impl<T: 'static> DelayedQueue<T> {
    /// Offers `value` as `options` say: due after a delay or at a time,
    /// with a priority, with a time to live, with headers. Without a TTL
    /// or headers this is
    /// [`offer`](Self::offer) / [`offer_at`](Self::offer_at) (the default
    /// priority) or [`offer_with_priority`](Self::offer_with_priority).
    ///
    /// With a TTL the value goes to delayq's keys at its level, level 0
    /// included (Java never sees it; see [`OfferOptions`]), and a consumer
    /// that takes it after its TTL does not get it: it goes to the dead
    /// letters with reason `expired`, or is dropped. A TTL not longer than
    /// the delay, or zero, fails with [`Error::InvalidArgument`] before
    /// anything is written. So do headers past their limits. Headers go
    /// to delayq's keys the same way, and reach the handler with the value. A lost reply is safe: the offer is keyed by a
    /// request, and a resend adds nothing twice. The queue's limits apply.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use delayq::{Expiry, OfferOptions};
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let quotes = client.delayed_queue("quotes", delayq::StringCodec)?;
    /// // Worth delivering for 30 seconds only, then dead-lettered.
    /// let options = OfferOptions::after(Duration::ZERO).ttl(Duration::from_secs(30));
    /// quotes.offer_with(&"EUR 1.0842".to_owned(), &options).await?;
    /// // Dropped (only counted) if nobody took it within a minute.
    /// let quiet = options.ttl(Duration::from_secs(60)).on_expiry(Expiry::Drop);
    /// quotes.offer_with(&"EUR 1.0843".to_owned(), &quiet).await?;
    /// # Ok(()) }
    /// ```
    pub async fn offer_with(&self, value: &T, options: &OfferOptions) -> Result<()> {
        if let Some(durability) = options.durability.filter(|d| Some(*d) != self.handle.durability) {
            // This call's durability: a handle of its own (clones share
            // the joined runs; runs join only offers of one durability).
            // Not a recursive call: a future that holds itself made the
            // type checks of callers' futures overflow their depth limit.
            let this = self.clone().with_durability(Some(durability));
            return Box::pin(this.offer_with_handle(value, options)).await;
        }
        self.offer_with_handle(value, options).await
    }

    /// [`offer_with`](Self::offer_with) with this handle's durability.
    async fn offer_with_handle(&self, value: &T, options: &OfferOptions) -> Result<()> {
        if let Some(group) = &options.group {
            return self.offer_grouped(value, group, options).await;
        }
        let now = time::now_ms();
        let ttl_ms = options.ttl_ms(now)?;
        // Checked before anything is decided: too many or too large fails.
        let untraced = headers::offer_arg(&options.headers)?;
        if ttl_ms.is_none() && untraced.is_empty() {
            return match options.when {
                When::After(delay) => self.offer_with_priority(value, delay, options.priority).await,
                When::At(at) => self.offer_at_with_priority(value, at, options.priority).await,
            };
        }
        let due = match options.when {
            When::After(delay) => self.due_after(delay)?,
            When::At(at) => Due::At(time::due_at(now, at)?),
        };
        let payload = self.encode(value)?;
        let headers = headers::with_trace(&options.headers, untraced);
        let kind = match options.expiry {
            Expiry::DeadLetter => 'T',
            Expiry::Drop => 't',
        };
        let ttl = ttl_ms.map(|ms| format!("{kind}{ms}")).unwrap_or_default();
        let level = format!("{}{ttl}{headers}", options.priority.level());
        // Always modern: a member with a section has a modern element
        // (`lua/lib/priority.lua`).
        self.offer_member(&level, due, &payload, Format::Modern).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ttl_must_outlast_the_delay_and_be_positive() {
        let now = time::now_ms();
        let ok = OfferOptions::after(Duration::from_secs(1)).ttl(Duration::from_secs(2));
        assert_eq!(ok.ttl_ms(now).unwrap(), Some(2000));
        for bad in [
            OfferOptions::after(Duration::from_secs(2)).ttl(Duration::from_secs(2)),
            OfferOptions::after(Duration::from_secs(3)).ttl(Duration::from_secs(2)),
            OfferOptions::after(Duration::ZERO).ttl(Duration::ZERO),
            OfferOptions::after(Duration::ZERO).ttl(Duration::from_micros(500)),
            OfferOptions::after(Duration::ZERO).ttl(MAX_TTL + Duration::from_millis(1)),
            OfferOptions::at(SystemTime::now() + Duration::from_secs(60)).ttl(Duration::from_secs(30)),
        ] {
            assert!(matches!(bad.ttl_ms(now), Err(Error::InvalidArgument(_))), "{bad:?}");
        }
        assert_eq!(OfferOptions::default().ttl_ms(now).unwrap(), None);
    }
}
