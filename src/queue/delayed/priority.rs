//! Offers with a priority (`lua/offer_priority.lua`): a value of level 1 to
//! 9 goes to delayq's priority sets instead of Redisson's keys, and takes
//! that look at priorities take it before every value of a lower level.
//! Concurrent offers of one queue share script runs (`joined.rs`), as
//! plain offers do.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use fred::types::Value;

use crate::connection::reply;
use crate::connection::request::Request;
use crate::connection::script::SCRIPTS;
use crate::error::{Error, Result};
use crate::queue::priority::Priority;
use crate::queue::Core;
use crate::wire::format::{self, Format};
use crate::wire::keys::QueueKeys;
use crate::wire::time;

use super::limits::Waiting;
use super::offer::Due;
use super::DelayedQueue;
use crate::connection::durable::{Durability, Watch};
use crate::queue::joined::{reply_gone, Join, Joined, RunOutcome};

/// The priority offers of one queue (shared by a handle's clones).
pub(super) type JoinedPriorityOffers = Joined<PriorityTarget>;

/// Where priority offers go: what a joined run needs.
#[derive(Clone)]
pub(super) struct PriorityTarget {
    pub core: Arc<Core>,
    pub keys: Arc<QueueKeys>,
}

/// One priority offer: the script's level argument (the level digit, then
/// any TTL and headers), its due time and its packed element.
#[derive(Clone)]
pub(super) struct PriorityItem {
    spec: Arc<str>,
    due: Due,
    element: Bytes,
    /// Items join only with items that wait for as many replicas.
    durability: Option<Durability>,
}

impl Join for PriorityTarget {
    type Item = PriorityItem;
    type Answer = ();

    fn core(&self) -> &Arc<Core> {
        &self.core
    }

    /// Headers count against a run's bytes as the element does.
    fn payload(item: &PriorityItem) -> usize {
        item.element.len() + item.spec.len()
    }

    /// One run keyed by a request: a resend answers the first run's reply,
    /// even after its values were taken or the queue filled up.
    fn joins(first: &PriorityItem, next: &PriorityItem) -> bool {
        first.durability == next.durability
    }

    async fn run(&self, items: Vec<PriorityItem>) -> RunOutcome {
        let durable = self.core.durable(items.first().and_then(|i| i.durability));
        let keys = SCRIPTS.offer_priority.keys(&self.keys).build();
        let mut args = Vec::with_capacity(3 * items.len());
        for item in items {
            args.push(Value::from(&*item.spec));
            args.push(item.due.arg());
            args.push(Value::Bytes(item.element));
        }
        let conn = self.core.conn_for(self.keys.destination())?;
        let watch = durable.map(|_| Watch::of(conn));
        let applied = Request::new(self.keys.destination())
            .apply(conn, self.core.settling(), &SCRIPTS.offer_priority, keys, args)
            .await;
        if let (Ok(_), Some(durable), Some(watch)) = (&applied, durable, &watch) {
            let script = &SCRIPTS.offer_priority;
            if let Err(short) = durable.confirm_run(conn, watch, script, self.keys.destination()).await {
                return Ok(Err(short));
            }
        }
        Ok(applied)
    }

    /// Every value of a run is added, or the run failed as a whole.
    fn answer(&self, reply: &Value, _: usize, _: &PriorityItem) -> Result<()> {
        reply::int(reply)?;
        Ok(())
    }

    fn unknown_outcome(&self) -> Error {
        reply_gone(&SCRIPTS.offer_priority, self.keys.destination())
    }
}

impl<T: 'static> DelayedQueue<T> {
    /// Offers `value` due `delay` from now, with a `priority`: consumers
    /// of this queue ([`BlockingQueue`](crate::BlockingQueue)'s takes,
    /// [`ReliableQueue`](crate::ReliableQueue)'s takes and
    /// [`take_many`](crate::ReliableQueue::take_many), the
    /// [`Worker`](crate::Worker)) take the highest level first, values of
    /// one level in offer order, and the default level's values last. A
    /// delayed value keeps its priority when it falls due, and a value
    /// given back (a nack, a visibility timeout, a worker's give-back)
    /// keeps it too; a dead letter does not (requeued, it comes back at the
    /// default).
    ///
    /// [`Priority::DEFAULT`] is exactly [`offer`](Self::offer): the value
    /// goes to Redisson's keys and a Java client sees it. Levels 1 to 9 go
    /// to delayq's keys of the queue's slot (`delayq_priority_ready:{N}`,
    /// `delayq_priority_delayed:{N}`, and the marker `delayq_priority:{N}`),
    /// which Java's `RDelayedQueue` and `RBlockingQueue` never read: only a
    /// delayq consumer takes them, and a delayed one falls due when a delayq
    /// consumer of the queue next looks (at least once a second while one
    /// waits). `len`, `read_all` and the other reads of this delayed queue
    /// (Redisson's keys) do not count them;
    /// [`status`](Self::status) does.
    ///
    /// A lost reply is safe: the offer is sent again and adds nothing twice.
    /// Fails as [`offer`](Self::offer) fails, and the queue's limits apply
    /// ([`set_limits`](Self::set_limits); `max_size` counts priority values
    /// for a priority offer).
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use delayq::Priority;
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let orders = client.delayed_queue("orders", delayq::StringCodec)?;
    /// orders.offer(&"routine".to_owned(), Duration::ZERO).await?;
    /// orders.offer_with_priority(&"urgent".to_owned(), Duration::ZERO, Priority::new(9)?).await?;
    /// let consumer = client.blocking_queue("orders", delayq::StringCodec)?;
    /// assert_eq!(consumer.take().await?, "urgent");
    /// # Ok(()) }
    /// ```
    pub async fn offer_with_priority(&self, value: &T, delay: Duration, priority: Priority) -> Result<()> {
        if priority == Priority::DEFAULT {
            return self.offer(value, delay).await;
        }
        let due = self.due_after(delay)?;
        self.offer_priority(due, value, priority).await
    }

    /// [`offer_with_priority`](Self::offer_with_priority), due at `at` (a
    /// time in the past fails with [`Error::InvalidDelay`]).
    pub async fn offer_at_with_priority(&self, value: &T, at: SystemTime, priority: Priority) -> Result<()> {
        if priority == Priority::DEFAULT {
            return self.offer_at(value, at).await;
        }
        let due = Due::At(time::due_at(time::now_ms(), at)?);
        self.offer_priority(due, value, priority).await
    }

    async fn offer_priority(&self, due: Due, value: &T, priority: Priority) -> Result<()> {
        let payload = self.encode(value)?;
        // Inside a span its trace context goes with it as a header
        // (feature `opentelemetry`): a section, so a modern element.
        let headers = crate::queue::headers::with_trace(&crate::Headers::new(), String::new());
        let format = if headers.is_empty() {
            self.format
        } else {
            Format::Modern
        };
        self.offer_member(&format!("{}{headers}", priority.level()), due, &payload, format)
            .await
    }

    /// One value into the priority sets (`lua/offer_priority.lua`): `level`
    /// is the script's level argument (a digit, then any TTL header's
    /// fields), the element packed in `format`. Keyed by a request: a
    /// resent run answers the first run's reply, even after the value was
    /// taken or the queue filled up meanwhile. Waits for room as the
    /// queue's `when_full` says.
    pub(super) async fn offer_member(&self, level: &str, due: Due, payload: &[u8], format: Format) -> Result<()> {
        self.handle.core.seen(&self.handle.keys);
        let mut waiting = Waiting::new(self.when_full);
        let spec: Arc<str> = Arc::from(level);
        let target = PriorityTarget {
            core: self.handle.core.clone(),
            keys: self.handle.keys.clone(),
        };
        loop {
            // A new random id per try; a legacy id that starts like a
            // section (`lua/lib/priority.lua`) is drawn again, so that no
            // member reads as one with a section.
            let mut element = format::pack(format, payload);
            while matches!(element.first(), Some(b'T' | b't' | b'H')) {
                element = format::pack(format, payload);
            }
            self.handle.arm();
            let item = PriorityItem {
                spec: spec.clone(),
                due,
                element,
                durability: self.handle.durability,
            };
            match self.joined_priority.send(target.clone(), item).await {
                Ok(()) => {
                    self.handle.priorities.set();
                    return Ok(());
                }
                Err(error) if waiting.again(&error).await => continue,
                Err(error) => return Err(error),
            }
        }
    }
}
