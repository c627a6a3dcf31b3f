//! A queue's admission limits: how many values it may hold, how large one
//! payload may be, and switches that turn offers or takes off. Stored in the
//! queue's slot (`delayq_limits:{name}`, a HASH), read by delayq's offer
//! scripts before they change anything (`lua/lib/limits.lua`) and by its
//! consumers' claims; Java's offers and takes do not read it.

use std::fmt;
use std::time::Duration;

use fred::interfaces::HashesInterface;
use fred::types::Value;

use crate::connection::script::SCRIPTS;
use crate::error::{CommandResult, Error, Refusal, Result};

use super::DelayedQueue;

/// A queue's admission limits ([`DelayedQueue::set_limits`]). The default
/// is no limit: every offer admitted, takes on.
///
/// ```
/// use delayq::limits::Limits;
/// let limits = Limits::none().max_size(10_000).max_payload(64 * 1024).takes(false);
/// assert_eq!(limits.to_string(), "max_size=10000 max_payload=65536 takes=off");
/// let fleet = Limits::none().concurrency(8);
/// assert_eq!(fleet.to_string(), "concurrency=8");
/// assert_eq!(fleet.concurrency_limit(), Some(8));
/// assert_eq!(Limits::none().to_string(), "none");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Limits {
    max_size: Option<u64>,
    max_payload: Option<u64>,
    offers_off: bool,
    takes_off: bool,
    concurrency: Option<u32>,
}

impl Limits {
    /// No limit at all (what a queue has until limits are set).
    pub fn none() -> Self {
        Limits::default()
    }

    /// At most `n` values pending or ready in the destination list (values
    /// taken and not acknowledged yet do not count): an offer that would
    /// pass it is refused ([`Refusal::MaxSize`]), or waits
    /// ([`WhenFull::Wait`]). `None` removes the limit.
    pub fn max_size(mut self, n: impl Into<Option<u64>>) -> Self {
        self.max_size = n.into();
        self
    }

    /// Payloads (the codec's bytes, as Java reads them) of at most `bytes`:
    /// a longer one is refused ([`Refusal::MaxPayload`]). `None` removes
    /// the limit.
    pub fn max_payload(mut self, bytes: impl Into<Option<u64>>) -> Self {
        self.max_payload = bytes.into();
        self
    }

    /// Offers on (the default) or off: off, every delayq offer is refused
    /// ([`Refusal::OffersOff`]).
    pub fn offers(mut self, on: bool) -> Self {
        self.offers_off = !on;
        self
    }

    /// Takes on (the default) or off: off, reliable takes, `take_many` and
    /// workers take nothing and wait, as while the queue is paused
    /// ([`DelayedQueue::pause`]), while transfers go on moving due values.
    pub fn takes(mut self, on: bool) -> Self {
        self.takes_off = !on;
        self
    }

    /// At most `n` values in flight (taken by delayq consumers and not
    /// settled yet) across every process: reliable takes, `take_many` and
    /// workers claim only while the queue's live leases leave room, and
    /// wait otherwise, taking nothing meanwhile. A crashed process's values
    /// count until their visibility timeout ends.
    /// A value a worker holds ahead of its free slots counts too: under a
    /// limit it holds at most half the room its last claim left.
    /// Java's takes neither read nor count against it. `None` removes the
    /// limit; 0 is refused by [`DelayedQueue::set_limits`] (use
    /// [`takes(false)`](Self::takes) to stop takes).
    pub fn concurrency(mut self, n: impl Into<Option<u32>>) -> Self {
        self.concurrency = n.into();
        self
    }

    /// The concurrency limit, if any.
    pub fn concurrency_limit(&self) -> Option<u32> {
        self.concurrency
    }

    /// The size limit, if any.
    pub fn size_limit(&self) -> Option<u64> {
        self.max_size
    }

    /// The payload limit in bytes, if any.
    pub fn payload_limit(&self) -> Option<u64> {
        self.max_payload
    }

    /// Whether offers are on.
    pub fn offers_on(&self) -> bool {
        !self.offers_off
    }

    /// Whether takes are on.
    pub fn takes_on(&self) -> bool {
        !self.takes_off
    }

    /// Whether there is no limit at all.
    pub fn is_none(&self) -> bool {
        *self == Limits::none()
    }

    /// The hash's fields, as `lua/lib/limits.lua` reads them.
    fn fields(&self) -> Vec<(&'static str, String)> {
        let mut fields = Vec::new();
        if let Some(n) = self.max_size {
            fields.push(("max_size", n.to_string()));
        }
        if let Some(n) = self.max_payload {
            fields.push(("max_payload", n.to_string()));
        }
        if self.offers_off {
            fields.push(("offers", "off".to_owned()));
        }
        if self.takes_off {
            fields.push(("takes", "off".to_owned()));
        }
        if let Some(n) = self.concurrency {
            fields.push(("concurrency", n.to_string()));
        }
        fields
    }

    /// The limits a hash holds; a field that does not parse is an error
    /// naming it (nothing is guessed).
    fn from_fields(key: &str, fields: Vec<(String, String)>) -> Result<Limits> {
        let mut limits = Limits::none();
        let bad = |field: &str, value: &str| Error::Protocol(format!("{key}: field {field} holds {value:?}"));
        for (field, value) in fields {
            match field.as_str() {
                "max_size" => limits.max_size = Some(value.parse().map_err(|_| bad(&field, &value))?),
                "max_payload" => limits.max_payload = Some(value.parse().map_err(|_| bad(&field, &value))?),
                "offers" => limits.offers_off = value == "off",
                "takes" => limits.takes_off = value == "off",
                "concurrency" => limits.concurrency = Some(value.parse().map_err(|_| bad(&field, &value))?),
                _ => {} // written by a newer version: not ours to judge
            }
        }
        Ok(limits)
    }
}

/// `max_size=N max_payload=BYTES offers=off takes=off concurrency=N` (only what is set),
/// or `none`: what `delayq limits` prints and the `limits_set` event holds.
impl fmt::Display for Limits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fields = self.fields();
        if fields.is_empty() {
            return f.write_str("none");
        }
        let text: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
        f.write_str(&text.join(" "))
    }
}

/// What an offer does when the queue is full ([`Refusal::MaxSize`]):
/// [`DelayedQueue::when_full`]. Other refusals (offers off, a payload too
/// large) never wait: waiting would not change them.
///
/// ```
/// use std::time::Duration;
/// use delayq::limits::WhenFull;
/// let policy = WhenFull::Wait(Duration::from_secs(5));
/// assert_ne!(policy, WhenFull::Refuse);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WhenFull {
    /// Fail at once with [`Error::OfferRefused`] (the default).
    #[default]
    Refuse,
    /// Offer again as room appears, for at most this long, then fail with
    /// the last refusal. The offer looks again after 10 ms, doubling up to
    /// a second: a full queue costs its waiting producers one script run
    /// each per second at most.
    Wait(Duration),
}

/// The first and longest pause between a waiting offer's tries.
const FIRST_WAIT: Duration = Duration::from_millis(10);
const LONGEST_WAIT: Duration = Duration::from_secs(1);

/// A waiting offer's state: its deadline and next pause.
pub(super) struct Waiting {
    deadline: Option<tokio::time::Instant>,
    pause: Duration,
}

impl Waiting {
    pub(super) fn new(policy: WhenFull) -> Self {
        Waiting {
            deadline: match policy {
                WhenFull::Refuse => None,
                WhenFull::Wait(limit) => Some(tokio::time::Instant::now() + limit),
            },
            pause: FIRST_WAIT,
        }
    }

    /// Whether `error` is a full queue worth trying again after a pause,
    /// which this waits (false: give the error up; a refusal given up is
    /// counted, `delayq_offers_refused_total`).
    pub(super) async fn again(&mut self, error: &Error) -> bool {
        let refusal = match error {
            Error::OfferRefused { refusal, .. } => Some(refusal),
            Error::PartlyOffered { source, .. } => match &**source {
                Error::OfferRefused { refusal, .. } => Some(refusal),
                _ => None,
            },
            _ => None,
        };
        let Some(refusal) = refusal else {
            return false;
        };
        let now = tokio::time::Instant::now();
        let waits = matches!(refusal, Refusal::MaxSize { .. }) && self.deadline.is_some_and(|d| now < d);
        if !waits {
            if let Error::OfferRefused { queue, .. } | Error::PartlyOffered { queue, .. } = error {
                crate::telemetry::offer_refused(
                    queue,
                    match refusal {
                        Refusal::MaxSize { .. } => "max_size",
                        Refusal::MaxPayload { .. } => "max_payload",
                        _ => "offers_off",
                    },
                );
            }
            return false;
        }
        let deadline = self.deadline.expect("waits only with a deadline");
        tokio::time::sleep_until(deadline.min(now + self.pause)).await;
        self.pause = (self.pause * 2).min(LONGEST_WAIT);
        true
    }
}

impl<T: 'static> DelayedQueue<T> {
    /// Sets the queue's admission limits, replacing any it had
    /// ([`Limits::none`] removes them): for every delayq client at once,
    /// from their next offer or claim, across restarts. Java's producers
    /// and consumers do not read them (README, "Limits").
    ///
    /// ```no_run
    /// use delayq::limits::Limits;
    /// use delayq::error::{Error, Refusal};
    /// # async fn demo(queue: delayq::DelayedQueue<String>) -> delayq::Result<()> {
    /// queue.set_limits(&Limits::none().max_size(1)).await?;
    /// queue.offer(&"first".into(), std::time::Duration::ZERO).await?;
    /// match queue.offer(&"second".into(), std::time::Duration::ZERO).await {
    ///     Err(Error::OfferRefused { refusal: Refusal::MaxSize { size: 1, .. }, .. }) => {}
    ///     other => panic!("{other:?}"),
    /// }
    /// assert_eq!(queue.limits().await?, Limits::none().max_size(1));
    /// # Ok(()) }
    /// ```
    pub async fn set_limits(&self, limits: &Limits) -> Result<()> {
        if limits.concurrency == Some(0) {
            return Err(Error::InvalidArgument(
                "a concurrency limit of 0 would hold every take: switch takes off instead (Limits::takes(false))"
                    .into(),
            ));
        }
        let keys = SCRIPTS.limits_set.keys(&self.handle.keys).build();
        let mut args = vec![Value::from(limits.to_string())];
        for (field, value) in limits.fields() {
            args.push(Value::from(field));
            args.push(Value::from(value));
        }
        self.run(&SCRIPTS.limits_set, keys, args).await?;
        Ok(())
    }

    /// The queue's admission limits ([`Limits::none`] when none are set).
    pub async fn limits(&self) -> Result<Limits> {
        let key = self.handle.keys.limits();
        let fields: Vec<(String, String)> = self
            .handle
            .core
            .conn()?
            .hgetall::<std::collections::HashMap<String, String>, _>(&key)
            .await
            .on_key(&key)?
            .into_iter()
            .collect();
        Limits::from_fields(&key, fields)
    }

    /// The same queue, its offers doing `policy` when the queue is full
    /// (default [`WhenFull::Refuse`]). With [`WhenFull::Wait`], `offer`,
    /// `offer_at`, `offer_with_id` and `offer_all` offer again as room
    /// appears (`offer_all` goes on from the first value not queued yet),
    /// until the wait is over.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use delayq::limits::WhenFull;
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let queue = client
    ///     .delayed_queue("emails", delayq::StringCodec)?
    ///     .when_full(WhenFull::Wait(Duration::from_secs(30)));
    /// queue.offer(&"hello".into(), Duration::ZERO).await?; // waits up to 30 s for room
    /// # Ok(()) }
    /// ```
    pub fn when_full(mut self, policy: WhenFull) -> Self {
        self.when_full = policy;
        self
    }
}
