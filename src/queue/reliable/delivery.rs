//! `Delivery<T>`: one value taken from a [`ReliableQueue`], to be settled.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use fred::types::Value;

use crate::connection::durable::Watch;
use crate::connection::request::{Lane, Request};
use crate::connection::script::SCRIPTS;
use crate::connection::{reply, retrying};
use crate::error::Result;
use crate::queue::jobs::Ending;
use crate::queue::reliable::{ReliableQueue, Settings};
use crate::queue::Core;
use crate::wire::format;
use crate::wire::keys::{KeyRole, QueueKeys};

mod release_unhandled;
pub(in crate::queue::reliable) use release_unhandled::IN_BACKGROUND;
#[cfg(feature = "opentelemetry")]
mod traces;

/// Bytes before the value in a delivery's member of the lease set (`delayq_leases`): the
/// 8-byte delivery id, then the delivery count as 10 decimal digits (the
/// first of them the value's priority level, `lua/lib/priority.lua`).
pub(crate) const MEMBER_HEADER: usize = 18;

/// How long acked delivery ids are remembered, so a retried ack whose first
/// reply was lost still reports success (retries end within seconds).
const ACK_MEMORY: Duration = Duration::from_secs(300);
/// Most acked ids remembered per queue (about 10 MB).
const ACK_MEMORY_CAP: i64 = 100_000;

/// A delivery's member of the lease set (`delayq_leases`): id, count (with
/// the priority level in its first digit), value.
pub(crate) fn member(id: [u8; 8], count: u32, level: u8, value: &[u8]) -> Bytes {
    let mut member = Vec::with_capacity(MEMBER_HEADER + value.len());
    member.extend_from_slice(&id);
    let mut field = u64::from(level) * 1_000_000_000 + u64::from(count.min(999_999_999));
    // Ten digits, zero-padded, written in place (`format!` cost a busy
    // worker an allocation per value).
    let mut digits = [b'0'; 10];
    for digit in digits.iter_mut().rev() {
        *digit = b'0' + (field % 10) as u8;
        field /= 10;
    }
    member.extend_from_slice(&digits);
    member.extend_from_slice(value);
    Bytes::from(member)
}

/// What a settle carries beside the delivery, rarely (boxed: a lease is
/// moved with every delivery): how its attempt failed, its job's result.
#[derive(Debug, Default)]
struct Carried {
    ending: Option<Ending>,
    result: Option<Bytes>,
}

/// What a delivery's value was offered with beside it.
#[derive(Debug, Default)]
struct Offered {
    job: Option<String>,
    headers: crate::Headers,
}

/// Where a released delivery's value goes (`lua/nack.lua`): the lease
/// ends without an ack.
#[derive(Debug, Clone)]
pub(in crate::queue::reliable) enum Release {
    /// The destination's head: first in line again (shutdown).
    Head,
    /// The destination's head, and not counted as a delivery: the value
    /// reached no handler (a worker stopped while it was being claimed).
    Unhandled,
    /// The destination's tail (a failed or dropped delivery).
    Tail,
    /// The delayed queue, due after this long; a zero delay is the tail.
    After(Duration),
    /// The dead-letter list, its delivery count cleared, and why
    /// (`delayq_dead_reasons:{N}`).
    DeadLetter(String),
    /// Dropped: its job stopped on the cancel asked for it. Refused
    /// (answered 2, nothing changed) when no cancel was asked.
    Cancelled,
}

/// `lua/nack.lua`'s answer: the delivery was settled as asked.
const RELEASED: i64 = 1;
/// `lua/nack.lua`'s answer to a drop ([`Release::Cancelled`]) when no
/// cancel was asked for the delivery's job: nothing changed.
const NOT_CANCELLED: i64 = 2;

/// One value delivered by a [`ReliableQueue`]. Settle it with
/// [`ack`](Self::ack) (done) or [`nack`](Self::nack) (deliver again later).
///
/// Dropping it unsettled gives the value back at once (to the tail of the
/// queue), as a failed handler would want. If the process dies instead, the
/// visibility timeout gives it back. Either way the count carries over to its
/// next delivery, and a value delivered too often goes to the dead-letter
/// list (see [`ReliableQueue`] for how long a count is remembered).
///
/// ```no_run
/// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
/// let delivery = queue.take().await?;
/// println!("attempt {} of {}", delivery.delivery_count(), delivery.value());
/// if delivery.ack().await? {
///     println!("done");
/// } else {
///     println!("too late: the visibility timeout gave it to someone else");
/// }
/// # Ok(()) }
/// ```
pub struct Delivery<T> {
    value: T,
    count: u32,
    lateness: Option<Duration>,
    /// Its job id and headers, when it has either (boxed: a `Delivery`
    /// travels inside the take's answer enum).
    offered: Option<Box<Offered>>,
    /// When its claim answered: its visibility deadline is about this plus
    /// the visibility timeout, until it is extended.
    leased_at: tokio::time::Instant,
    lease: DeliveryLease,
}

impl<T: std::fmt::Debug> std::fmt::Debug for Delivery<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delivery")
            .field("queue", &self.lease.keys.destination())
            .field("value", &self.value)
            .field("delivery_count", &self.count)
            .field("lateness", &self.lateness)
            .field("offered", &self.offered)
            .finish()
    }
}

impl<T: 'static> Delivery<T> {
    pub(crate) fn new(
        queue: &ReliableQueue<T>,
        member: Bytes,
        count: u32,
        lateness: Option<Duration>,
        value: T,
        leased_at: tokio::time::Instant,
    ) -> Self {
        Delivery {
            value,
            count,
            lateness,
            offered: None,
            leased_at,
            lease: DeliveryLease::shared(
                queue.core().clone(),
                queue.shared_keys().clone(),
                *queue.settings(),
                member,
            ),
        }
    }

    /// The same delivery, naming the job its claim found.
    pub(crate) fn with_job(mut self, job: Option<String>) -> Self {
        if let Some(job) = job {
            self.offered.get_or_insert_default().job = Some(job);
        }
        self
    }

    /// The same delivery, with the headers its value was offered with.
    pub(crate) fn with_headers(mut self, headers: Option<crate::Headers>) -> Self {
        if let Some(headers) = headers.filter(|h| !h.is_empty()) {
            self.offered.get_or_insert_default().headers = headers;
        }
        self
    }

    /// Its headers, taken out (for a worker that hands the value on).
    pub(crate) fn take_headers(&mut self) -> crate::Headers {
        self.offered
            .as_mut()
            .map(|o| std::mem::take(&mut o.headers))
            .unwrap_or_default()
    }

    /// Its member of the lease set (a worker's lease keeper extends by it).
    pub(crate) fn lease_member(&self) -> &Bytes {
        self.lease.lease_member()
    }

    /// The value and what settles it, apart (for a worker that hands the value on).
    pub(crate) fn into_parts(self) -> (T, DeliveryLease) {
        (self.value, self.lease)
    }

    /// The delivery id (lifecycle events name it in 16 hex digits).
    pub(crate) fn id(&self) -> [u8; 8] {
        self.lease.member[..8]
            .try_into()
            .expect("a lease member starts with its 8-byte id")
    }

    /// When its claim answered (its visibility deadline is about this plus
    /// the visibility timeout, until extended).
    pub(crate) fn leased_at(&self) -> tokio::time::Instant {
        self.leased_at
    }

    /// The delivered value.
    pub fn value(&self) -> &T {
        &self.value
    }

    /// How many times this value has been delivered without an ack, this
    /// delivery included (1 the first time). Counted per delivery: identical
    /// values taken at once are each at 1; a value given back (nack,
    /// visibility timeout, drop) counts on from its count at its next
    /// delivery (see [`ReliableQueue`] for equal copies).
    pub fn delivery_count(&self) -> u32 {
        self.count
    }

    /// The priority it was offered with (see
    /// [`DelayedQueue::offer_with_priority`](crate::DelayedQueue::offer_with_priority));
    /// [`Priority::DEFAULT`](crate::Priority::DEFAULT) for a plain value.
    /// A give-back keeps it: the value comes back at its level.
    pub fn priority(&self) -> crate::Priority {
        crate::Priority::of_count_field(self.lease.member.get(8..MEMBER_HEADER).unwrap_or_default())
    }

    /// How long after its due time the value was taken, when known: a worker
    /// (or [`ReliableQueue::with_lateness_tracking`]) has to have been tracking it when
    /// the transfer moved it, and the producer's clock is taken to agree with
    /// the Redis server's.
    pub fn lateness(&self) -> Option<Duration> {
        self.lateness
    }

    /// The id the value was offered with
    /// ([`DelayedQueue::offer_with_id`](crate::DelayedQueue::offer_with_id)),
    /// whose history [`ReliableQueue::job`] reads; `None` for a value
    /// offered without one (or by Java), and on a queue that keeps no job
    /// history ([`ReliableQueue::set_job_history`]): the id travels in the
    /// history's records.
    ///
    /// ```no_run
    /// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// let delivery = queue.take().await?;
    /// if let Some(id) = delivery.job_id() {
    ///     println!("running job {id}");
    /// }
    /// delivery.ack().await?;
    /// # Ok(()) }
    /// ```
    pub fn job_id(&self) -> Option<&str> {
        self.offered.as_ref().and_then(|o| o.job.as_deref())
    }

    /// The headers the value was offered with
    /// ([`OfferOptions::header`](crate::OfferOptions::header)); empty for
    /// a value offered without (or by Java). Every give-back keeps them,
    /// and so do the dead letters and their requeue.
    ///
    /// ```no_run
    /// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// let delivery = queue.take().await?;
    /// if let Some(tenant) = delivery.headers().get("tenant") {
    ///     println!("{} for {tenant}", delivery.value());
    /// }
    /// delivery.ack().await?;
    /// # Ok(()) }
    /// ```
    pub fn headers(&self) -> &crate::Headers {
        self.offered
            .as_ref()
            .map_or(&crate::queue::headers::EMPTY, |o| &o.headers)
    }

    /// The value's raw payload bytes.
    pub fn raw(&self) -> &[u8] {
        &self.lease.member[MEMBER_HEADER..]
    }

    /// Settles the delivery: the value is done with for good. Returns `false`
    /// when it came too late (the visibility timeout already gave the value
    /// back, so it may be processed again). Safe to retry: an ack whose reply
    /// was lost reports `true` the second time.
    pub async fn ack(mut self) -> Result<bool> {
        self.lease.ack().await
    }

    /// Gives the value back to be delivered again: at once (to the tail of the
    /// queue) for a zero `retry_after`, else through the delayed queue, due
    /// after `retry_after`. Returns `false` if the delivery was no longer in
    /// flight (the visibility timeout already gave the value back). Retried
    /// through connection failures as one request, so a nack whose first
    /// reply was lost still reports `true`.
    pub async fn nack(mut self, retry_after: Duration) -> Result<bool> {
        self.lease.release(Release::After(retry_after)).await
    }

    /// Moves the value to the dead-letter list at once (it cannot succeed,
    /// however often it is tried), clearing its delivery count. Returns
    /// `false` if the delivery was no longer in flight.
    pub async fn dead_letter(mut self) -> Result<bool> {
        self.lease
            .release(Release::DeadLetter("dead_letter() by the consumer".into()))
            .await
    }

    /// Rejects the value: moves it to the dead-letter list at once with the
    /// reason `rejected: <why>` (what `dead_letter_page`, the CLI and the
    /// dashboard show), clearing its delivery count. The other way to say
    /// no is [`nack`](Self::nack): failed, try again later. Returns `false`
    /// if the delivery was no longer in flight.
    ///
    /// ```no_run
    /// # async fn demo(orders: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// let delivery = orders.take().await?;
    /// if delivery.value().is_empty() {
    ///     delivery.reject("an empty order cannot be processed").await?;
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn reject(mut self, why: impl std::fmt::Display) -> Result<bool> {
        self.lease
            .release(Release::DeadLetter(format!("rejected: {why}")))
            .await
    }

    /// Pushes the visibility deadline to `timeout` from now, for long work
    /// (a huge `timeout` saturates: about 142,000 years).
    /// Returns `false` if the delivery was no longer in flight.
    pub async fn extend(&self, timeout: Duration) -> Result<bool> {
        self.lease.extend(timeout).await
    }

    /// Acknowledges the delivery, as [`ack`](Self::ack), and keeps `result`
    /// (as JSON, at most [`MAX_RESULT_BYTES`](crate::jobs::MAX_RESULT_BYTES))
    /// as its job's result, which [`ReliableQueue::wait_job`] and
    /// [`ReliableQueue::job`] read. Kept only for a value offered with an id
    /// on a queue that keeps job history; a result that does not serialize,
    /// or is too large, is [`Error::InvalidArgument`](crate::Error::InvalidArgument)
    /// before anything is sent, and the delivery is given back as a dropped one is.
    ///
    /// ```no_run
    /// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// let delivery = queue.take().await?;
    /// delivery.ack_with_result(&serde_json::json!({"rows": 120})).await?;
    /// # Ok(()) }
    /// ```
    pub async fn ack_with_result(mut self, result: &impl serde::Serialize) -> Result<bool> {
        let json = crate::queue::jobs::to_json(result, "result", crate::queue::jobs::MAX_RESULT_BYTES)?;
        self.lease.set_result(json);
        self.lease.ack().await
    }

    /// Reports the job's progress (a number, or a small JSON object: at
    /// most [`MAX_PROGRESS_BYTES`](crate::jobs::MAX_PROGRESS_BYTES) as JSON),
    /// kept with its history; one script run. `false` when it was not
    /// kept: the delivery is no longer in flight, or its value has no job
    /// (offered without an id, or the queue keeps no job history).
    ///
    /// ```no_run
    /// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// let delivery = queue.take().await?;
    /// delivery.progress(&0.5).await?;
    /// # Ok(()) }
    /// ```
    pub async fn progress(&self, progress: &impl serde::Serialize) -> Result<bool> {
        let json = crate::queue::jobs::to_json(progress, "progress", crate::queue::jobs::MAX_PROGRESS_BYTES)?;
        crate::queue::jobs::report_progress(&self.lease.core, &self.lease.keys, &self.lease.member, json).await
    }

    /// Settles a delivery whose job was cancelled
    /// ([`ReliableQueue::cancel_job`]): its value is dropped, neither
    /// retried nor dead-lettered, and its history says `cancelled`. When no
    /// cancel was asked for its job, the value is given back to the queue's
    /// tail instead (as a dropped delivery is) and this answers `false`, as
    /// it does when the delivery was no longer in flight.
    ///
    /// ```no_run
    /// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// let delivery = queue.take().await?;
    /// if let Some(id) = delivery.job_id() {
    ///     if queue.job(id).await?.cancel_requested.is_some() {
    ///         delivery.settle_cancelled().await?;
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn settle_cancelled(mut self) -> Result<bool> {
        match self.lease.cancel_settle().await? {
            Some(dropped) => Ok(dropped),
            None => {
                self.lease.release(Release::Tail).await?;
                Ok(false)
            }
        }
    }
}

/// Moves the visibility deadline of the delivery whose lease set member is
/// `member` to `timeout` from now; false when it is no longer in flight.
pub(crate) async fn extend_member(core: &Core, keys: &QueueKeys, member: &Bytes, timeout: Duration) -> Result<bool> {
    let args = vec![
        Value::Bytes(member.clone()),
        Value::from(crate::wire::time::saturating_ms(timeout)),
    ];
    let script_keys = SCRIPTS.extend.keys(keys).build();
    let value = SCRIPTS
        .extend
        .run(core.conn()?, keys.destination(), script_keys, args)
        .await?;
    Ok(reply::int(&value)? == 1)
}

/// A delivery's lease on its value (its member of the lease set (`delayq_leases`), until
/// a visibility deadline): the part of a delivery that settles it, by an
/// ack or a [`Release`]. Also held without a decoded value, to release one
/// that failed to decode or that no handler saw. Dropped unsettled, it
/// releases its value to the tail.
pub(crate) struct DeliveryLease {
    core: Arc<Core>,
    keys: Arc<QueueKeys>,
    settings: Settings,
    /// The delivery's member of the lease set (`delayq_leases`) (see [`member`]).
    member: Bytes,
    token: u64,
    settled: bool,
    /// How the handler's attempt ended, for the job's history, when it
    /// failed (a worker's failure; else the release says), and its job's
    /// result, sent with the ack.
    ending: Option<Box<Carried>>,
    /// The trace context offered with the value (`traces`).
    #[cfg(feature = "opentelemetry")]
    trace: Option<Arc<str>>,
    /// `trace` came from its value's headers (`traceparent`): kept with
    /// the value, so never stored again.
    #[cfg(feature = "opentelemetry")]
    trace_in_headers: bool,
}

impl DeliveryLease {
    pub(in crate::queue::reliable) fn new(
        core: Arc<Core>,
        keys: &QueueKeys,
        settings: Settings,
        member: Bytes,
    ) -> Self {
        Self::shared(core, Arc::new(keys.clone()), settings, member)
    }

    /// As [`new`](Self::new), with the queue's keys shared, not copied (a
    /// copy is a dozen strings: too many for each delivery of a busy queue).
    pub(in crate::queue::reliable) fn shared(
        core: Arc<Core>,
        keys: Arc<QueueKeys>,
        settings: Settings,
        member: Bytes,
    ) -> Self {
        let token = core
            .reliable_queues()
            .outstanding
            .add(keys.clone(), settings, member.clone());
        DeliveryLease {
            core,
            keys,
            settings,
            member,
            token,
            settled: false,
            ending: None,
            #[cfg(feature = "opentelemetry")]
            trace: None,
            #[cfg(feature = "opentelemetry")]
            trace_in_headers: false,
        }
    }

    pub(crate) async fn extend(&self, timeout: Duration) -> Result<bool> {
        extend_member(&self.core, &self.keys, &self.member, timeout).await
    }

    /// Its member of the lease set, for [`extend_member`] by another task.
    pub(crate) fn lease_member(&self) -> &Bytes {
        &self.member
    }

    /// Its job's result (JSON), if it has one.
    fn result(&self) -> Option<&Bytes> {
        self.ending.as_ref().and_then(|c| c.result.as_ref())
    }

    /// Its job's result (JSON), sent with its ack.
    pub(crate) fn set_result(&mut self, json: Bytes) {
        self.ending.get_or_insert_default().result = Some(json);
    }

    pub(in crate::queue::reliable) async fn ack(&mut self) -> Result<bool> {
        let script = &SCRIPTS.ack;
        let late = "Redis did not answer in time while settling a delivery";
        // One connection for every try, watched from before the first: a
        // try after a lost reply writes nothing new, so the wait for the
        // replicas counts the first try's write only on its connection.
        let core = self.core.clone();
        let conn = core.conn();
        let durable = core.durable(self.settings.durability);
        let watch = match (&conn, durable) {
            (Ok(conn), Some(_)) => Some(Watch::of(conn)),
            _ => None,
        };
        let acked = retrying(SETTLE_RETRY_FOR, late, || async {
            let keys = SCRIPTS.ack.keys(&self.keys).build();
            let args = vec![
                Value::Bytes(self.member.clone()),
                Value::from(crate::wire::time::saturating_ms(ACK_MEMORY)),
                Value::from(ACK_MEMORY_CAP),
                Value::from(crate::wire::time::saturating_ms(self.settings.history_ttl)),
                Value::Bytes(self.result().cloned().unwrap_or_default()),
            ];
            let conn = conn.as_ref().map_err(|_| crate::error::Error::Shutdown)?;
            let value = script.run(conn, self.keys.destination(), keys, args).await?;
            Ok(reply::int(&value)? == 1)
        })
        .await;
        self.settle();
        if let (Ok(_), Ok(conn), Some(durable), Some(watch)) = (&acked, &conn, durable, &watch) {
            durable
                .confirm_run(conn, watch, script, self.keys.destination())
                .await?;
        }
        acked
    }

    /// Acks many deliveries of one queue in one script (`lua/ack_batch.lua`),
    /// a run of `lane` (one ack at a time per lane), retried through
    /// connection failures as [`ack`](Self::ack) is; each `true` when
    /// acked, `false` when too late. Every lease is settled.
    pub(in crate::queue::reliable) async fn ack_all(leases: &mut [DeliveryLease], lane: &Lane) -> Result<Vec<bool>> {
        let result_bytes = |l: &DeliveryLease| l.result().map_or(0, Bytes::len);
        if leases.iter().map(result_bytes).sum::<usize>() <= ACK_RESULT_BUDGET {
            return Self::ack_run(leases, lane).await;
        }
        // Results of many kilobytes each: runs of at most the budget (at
        // least one delivery), so no one script writes megabytes.
        let mut acked = Vec::with_capacity(leases.len());
        let mut rest = leases;
        while !rest.is_empty() {
            let mut bytes = 0;
            let mut n = 0;
            while n < rest.len() && (n == 0 || bytes + result_bytes(&rest[n]) <= ACK_RESULT_BUDGET) {
                bytes += result_bytes(&rest[n]);
                n += 1;
            }
            let (run, tail) = rest.split_at_mut(n);
            acked.extend(Self::ack_run(run, lane).await?);
            rest = tail;
        }
        Ok(acked)
    }

    /// One `ack_batch.lua` run for `leases`.
    async fn ack_run(leases: &mut [DeliveryLease], lane: &Lane) -> Result<Vec<bool>> {
        let Some(first) = leases.first() else {
            return Ok(Vec::new());
        };
        let (core, keys, history_ttl) = (first.core.clone(), first.keys.clone(), first.settings.history_ttl);
        // One wait for the replicas of the whole batch, on the one
        // connection every try goes through (see `ack`).
        let durable = core.durable(first.settings.durability);
        let conn = core.conn_for(keys.destination());
        let watch = match (&conn, durable) {
            (Ok(conn), Some(_)) => Some(Watch::of(conn)),
            _ => None,
        };
        // One run for every send: a resend finds the first run's reply.
        let run = lane.next(&keys);
        let late = "Redis did not answer in time while settling a delivery";
        let acked = retrying(SETTLE_RETRY_FOR, late, || async {
            let redis_keys = SCRIPTS.ack_batch.keys(&keys).with(KeyRole::Lane, run.record()).build();
            let mut args = Vec::with_capacity(2 + leases.len());
            args.push(run.id());
            args.push(Value::from(crate::wire::time::saturating_ms(history_ttl)));
            if leases.iter().any(|lease| lease.result().is_some()) {
                // Pairs of a delivery and its result ('' for none).
                args.push(Value::from_static_str("R"));
                for lease in leases.iter() {
                    args.push(Value::Bytes(lease.member.clone()));
                    args.push(Value::Bytes(lease.result().cloned().unwrap_or_default()));
                }
            } else {
                args.extend(leases.iter().map(|lease| Value::Bytes(lease.member.clone())));
            }
            let conn = core.conn_for(keys.destination())?;
            let value = SCRIPTS
                .ack_batch
                .run(conn, keys.destination(), redis_keys, args)
                .await?;
            // 2: acked, and the run completed a batch.
            let answers = reply::array(value)?
                .iter()
                .map(reply::int)
                .collect::<Result<Vec<_>>>()?;
            if answers.contains(&2) {
                core.reliable_queues().reapers.batch_completed(keys.destination());
            }
            let acked: Vec<bool> = answers.iter().map(|&n| n >= 1).collect();
            if acked.len() != leases.len() {
                return Err(crate::error::Error::Protocol(
                    "ack_batch answered for other deliveries".into(),
                ));
            }
            Ok(acked)
        })
        .await;
        // Settled together: one lock of the outstanding map for the batch.
        core.reliable_queues()
            .outstanding
            .remove_all(leases.iter_mut().map(|lease| {
                lease.settled = true;
                lease.token
            }));
        if let (Ok(_), Ok(conn), Some(durable), Some(watch)) = (&acked, conn, durable, &watch) {
            let script = &SCRIPTS.ack_batch;
            durable.confirm_run(conn, watch, script, keys.destination()).await?;
        }
        acked
    }

    /// Gives the value back to be delivered again after `delay`: through
    /// the delayed queue, or at once to the tail for a zero delay (a
    /// worker's retry). `false` when it was no longer in flight.
    pub(crate) async fn retry_after(&mut self, delay: Duration) -> Result<bool> {
        self.release(Release::After(delay)).await
    }

    /// Moves the value to the dead-letter list, `why` recorded beside it.
    pub(crate) async fn dead_letter(&mut self, why: String) -> Result<bool> {
        self.release(Release::DeadLetter(why)).await
    }

    /// Gives the value back first in line, counted (its handler was
    /// cancelled by a shutdown).
    pub(crate) async fn give_back_first(&mut self) -> Result<bool> {
        self.release(Release::Head).await
    }

    /// Records how the handler's attempt failed, for the release that
    /// follows to write into the job's history.
    pub(crate) fn record_failure(&mut self, ending: Ending) {
        self.ending.get_or_insert_default().ending = Some(ending);
    }

    pub(in crate::queue::reliable) async fn release(&mut self, to: Release) -> Result<bool> {
        // Settled first: the release runs in a task of its own (see
        // `Request::apply_retrying`) that a caller who stops waiting does not
        // stop, so `Drop` must not send a second one.
        self.settle();
        #[cfg(feature = "opentelemetry")]
        {
            let trace = self.trace_to_put();
            traces::put_back(&self.core, &self.keys, &self.member, trace, &to).await;
        }
        let ending = self.ending.as_mut().and_then(|c| c.ending.take());
        let answer = release(&self.core, &self.keys, self.settings, &self.member, to, ending).await?;
        Ok(answer == RELEASED)
    }

    /// Drops the delivery as its job's cancel asked ([`Release::Cancelled`]):
    /// `Some(true)` dropped, `Some(false)` no longer in flight, `None` when
    /// no cancel was asked for its job (nothing changed: the caller settles
    /// it another way).
    pub(crate) async fn cancel_settle(&mut self) -> Result<Option<bool>> {
        self.settle();
        let ending = Ending {
            outcome: "job_cancelled",
            ..Ending::default()
        };
        let answer = release(
            &self.core,
            &self.keys,
            self.settings,
            &self.member,
            Release::Cancelled,
            Some(ending),
        )
        .await?;
        Ok(match answer {
            NOT_CANCELLED => None,
            answer => Some(answer == RELEASED),
        })
    }

    /// The trace context to store again as the value goes back: none when
    /// its headers carry it.
    #[cfg(feature = "opentelemetry")]
    fn trace_to_put(&mut self) -> Option<Arc<str>> {
        let trace = self.trace.take();
        if self.trace_in_headers {
            return None;
        }
        trace
    }

    fn settle(&mut self) {
        self.settled = true;
        self.core.reliable_queues().outstanding.remove(self.token);
    }
}

impl Drop for DeliveryLease {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        self.core.reliable_queues().outstanding.remove(self.token);
        let (core, keys, settings, member) = (self.core.clone(), self.keys.clone(), self.settings, self.member.clone());
        #[cfg(feature = "opentelemetry")]
        let trace = self.trace_to_put();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                #[cfg(feature = "opentelemetry")]
                traces::put_back(&core, &keys, &member, trace, &Release::Tail).await;
                if let Err(error) = release(&core, &keys, settings, &member, Release::Tail, None).await.map(drop) {
                    tracing::warn!(queue = keys.destination(), %error, "could not give back a dropped delivery; its visibility timeout will");
                }
            });
        }
    }
}

/// How long an ack keeps retrying through connection failures.
const SETTLE_RETRY_FOR: Duration = Duration::from_secs(5);

/// Bytes of job results one `ack_batch.lua` run writes, at most (one
/// result over it goes alone).
const ACK_RESULT_BUDGET: usize = 256 * 1024;

/// Releases the delivery `member` to `to`: runs the nack script, as one
/// request (see `src/connection/request.rs`): retried through connection
/// failures, it applies once and a retry gets the first run's answer.
/// `false` when the delivery was no longer in flight.
pub(in crate::queue::reliable) async fn release(
    core: &Core,
    keys: &QueueKeys,
    settings: Settings,
    member: &Bytes,
    to: Release,
    ending: Option<Ending>,
) -> Result<i64> {
    let script = &SCRIPTS.nack;
    let mut ending = ending.unwrap_or_else(|| Ending {
        outcome: match &to {
            Release::Head => "cancelled",
            Release::Unhandled => "unhandled",
            Release::Tail => "dropped",
            Release::After(_) => "nacked",
            Release::DeadLetter(why) if why.starts_with("rejected") => "rejected",
            Release::DeadLetter(_) => "dead_lettered",
            Release::Cancelled => "job_cancelled",
        },
        ..Ending::default()
    });
    // A dead letter's why is its attempt's error when nothing else is:
    // `reject("card declined")` shows "card declined" in the history.
    if let (Release::DeadLetter(why), true) = (&to, ending.error.is_empty()) {
        ending.error = why.strip_prefix("rejected: ").unwrap_or(why).to_owned();
    }
    let waits = matches!(to, Release::After(_) | Release::DeadLetter(_) | Release::Cancelled);
    let mut reason = String::new();
    let delay_ms: i64 = match to {
        Release::Head => -1,
        Release::Unhandled => -3,
        Release::Tail => 0,
        Release::Cancelled => -4,
        Release::DeadLetter(why) => {
            reason = why;
            -2
        }
        Release::After(delay) if delay.is_zero() => 0,
        Release::After(delay) => crate::wire::time::saturating_ms(delay).max(1),
    };
    let packed = format::pack(settings.format, &member[MEMBER_HEADER..]);
    let args = vec![
        Value::Bytes(member.clone()),
        Value::from(delay_ms),
        Value::Bytes(packed),
        Value::from(crate::wire::time::saturating_ms(settings.count_memory)),
        Value::from(reason),
        Value::from(ending.outcome),
        Value::from(ending.error),
        Value::from(ending.chain),
        Value::from(ending.backtrace),
    ];
    let redis_keys = SCRIPTS.nack.keys(keys).build();
    let conn = core.conn()?;
    // Retries and dead letters wait for the replicas, with a durability;
    // give-backs do not (a lost one leaves a lease its timeout gives back).
    let durable = core.durable(settings.durability).filter(|_| waits);
    let watch = durable.map(|_| Watch::of(conn));
    let value = Request::new(keys.destination())
        .apply_retrying(conn, core.settling(), script, redis_keys, args)
        .await?;
    if let (Some(durable), Some(watch)) = (durable, &watch) {
        durable.confirm_run(conn, watch, script, keys.destination()).await?;
    }
    reply::int(&value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_is_the_id_ten_digits_of_level_and_count_then_the_value() {
        let id = [1, 2, 3, 4, 5, 6, 7, 8];
        let member = member(id, 7, 3, b"payload");
        assert_eq!(&member[..8], &id);
        assert_eq!(&member[8..MEMBER_HEADER], b"3000000007");
        assert_eq!(&member[MEMBER_HEADER..], b"payload");
        assert_eq!(&super::member(id, 1, 0, b"")[8..], b"0000000001");
        // Counts past nine digits stay at the most, the level intact.
        assert_eq!(&super::member(id, u32::MAX, 9, b"")[8..], b"9999999999");
        assert_eq!(&super::member(id, 123_456_789, 0, b"")[8..], b"0123456789");
    }
}
