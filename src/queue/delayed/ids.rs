//! Elements with ids: offered once per id, cancelled, rescheduled and read by id.

use std::time::{Duration, SystemTime};

use bytes::Bytes;
use fred::types::Value;

use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::{Error, Result};
use crate::queue::traces::OfferTrace;
use crate::telemetry::IdOffer;
use crate::wire::codec;
use crate::wire::format;
use crate::wire::time;

use super::offer::Due;
use super::DelayedQueue;

/// Longest id accepted, in bytes: ids are hashed, but they travel with every
/// call and name an element in logs.
pub(crate) const MAX_ID_LEN: usize = 1024;

/// A pending element found by its id: its value and when it is due.
///
/// ```no_run
/// # async fn demo(queue: delayq::DelayedQueue<String>) -> delayq::Result<()> {
/// if let Some(reminder) = queue.get("order-42").await? {
///     println!("{} due at {:?}", reminder.value, reminder.due);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Scheduled<T> {
    /// The value.
    pub value: T,
    /// When it is due (the producer's clock, ms precision).
    pub due: SystemTime,
}

/// What an offer does when an element with its id is pending already.
#[derive(Debug, Clone, Copy)]
enum IfPending {
    Keep,
    Replace,
}

impl IfPending {
    fn arg(self) -> Value {
        Value::from(match self {
            IfPending::Keep => "keep",
            IfPending::Replace => "replace",
        })
    }
}

impl<T: 'static> DelayedQueue<T> {
    /// Offers `value` under `id`, due `delay` from now, unless an element
    /// with this id is pending: returns whether it was offered. Offering the
    /// same id again while it waits (a retried request, a second pod) does
    /// nothing; once it was delivered, cancelled or removed, the id is free.
    ///
    /// The element is an ordinary Redisson element (Java reads, transfers and
    /// removes it as any other); only its 8 random id bytes are derived from
    /// `id`, and delayq indexes it in `delayq_ids:{name}` so that
    /// [`cancel`](Self::cancel), [`reschedule`](Self::reschedule) and
    /// [`get`](Self::get) find it with two lookups. Two ids whose SHA-1 share
    /// the first 64 bits (52 in the legacy layout) cannot both be pending:
    /// the second fails with an error naming both, and nothing changes.
    ///
    /// A resend after a lost reply returns the first answer; a reply lost
    /// for good fails with [`Error::OutcomeUnknown`] (look with
    /// [`get`](Self::get) before offering again).
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let reminders = client.delayed_queue("reminders", delayq::StringCodec)?;
    /// let first = reminders.offer_with_id("order-42", &"remind".to_string(), Duration::from_secs(3600)).await?;
    /// let again = reminders.offer_with_id("order-42", &"remind".to_string(), Duration::from_secs(3600)).await?;
    /// assert!(first && !again);
    /// # Ok(()) }
    /// ```
    pub async fn offer_with_id(&self, id: &str, value: &T, delay: Duration) -> Result<bool> {
        let due = self.due_after(delay)?;
        self.offer_id(id, value, due, IfPending::Keep).await
    }

    /// [`offer_with_id`](Self::offer_with_id), due at `at`.
    pub async fn offer_with_id_at(&self, id: &str, value: &T, at: SystemTime) -> Result<bool> {
        let due = Due::At(time::due_at(time::now_ms(), at)?);
        self.offer_id(id, value, due, IfPending::Keep).await
    }

    /// Offers `value` under `id`, due `delay` from now, replacing an element
    /// with this id that is pending (its value and due time become the new
    /// ones; it moves to the end of the offer order). Returns whether no
    /// element with this id was pending.
    pub async fn replace_with_id(&self, id: &str, value: &T, delay: Duration) -> Result<bool> {
        let due = self.due_after(delay)?;
        self.offer_id(id, value, due, IfPending::Replace).await
    }

    /// Removes the pending element with `id`; returns whether there was one.
    /// It will not be delivered. Costs what Java's `remove` costs at most:
    /// one `LREM` of the pending list, from the tail when the element is
    /// among the last 1,000, else from the head.
    ///
    /// ```no_run
    /// # async fn demo(reminders: delayq::DelayedQueue<String>) -> delayq::Result<()> {
    /// if reminders.cancel("order-42").await? {
    ///     println!("reminder cancelled");
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn cancel(&self, id: &str) -> Result<bool> {
        check_id(id)?;
        let keys = SCRIPTS.cancel_id.keys(&self.handle.keys).build();
        let value = self
            .handle
            .request(&SCRIPTS.cancel_id, keys, vec![Value::from(id)])
            .await?;
        let cancelled = reply::int(&value)? == 1;
        if cancelled {
            crate::telemetry::cancelled(self.name());
        }
        Ok(cancelled)
    }

    /// Makes the pending element with `id` due `delay` from now; returns
    /// whether there was one. Its place in the offer order stays.
    pub async fn reschedule(&self, id: &str, delay: Duration) -> Result<bool> {
        let due = self.due_after(delay)?;
        self.reschedule_to(id, due).await
    }

    /// Makes the pending element with `id` due at `at`; returns whether there was one.
    ///
    /// ```no_run
    /// use std::time::{Duration, SystemTime};
    /// # async fn demo(reminders: delayq::DelayedQueue<String>) -> delayq::Result<()> {
    /// let tomorrow = SystemTime::now() + Duration::from_secs(24 * 3600);
    /// reminders.reschedule_at("order-42", tomorrow).await?;
    /// # Ok(()) }
    /// ```
    pub async fn reschedule_at(&self, id: &str, at: SystemTime) -> Result<bool> {
        let due = Due::At(time::due_at(time::now_ms(), at)?);
        self.reschedule_to(id, due).await
    }

    /// The pending element with `id`: its value and due time, or `None`
    /// once it left the pending set: [`job`](Self::job) says where it went.
    pub async fn get(&self, id: &str) -> Result<Option<Scheduled<T>>> {
        check_id(id)?;
        let keys = SCRIPTS.get_id.keys(&self.handle.keys).build();
        let value = self.run(&SCRIPTS.get_id, keys, vec![Value::from(id)]).await?;
        if matches!(value, Value::Null) || matches!(value, Value::Boolean(false)) {
            return Ok(None);
        }
        let [element, score] = reply::tuple::<2>(value)?;
        let element = reply::bytes(element)?;
        let due = reply::opt_score(score)?
            .ok_or_else(|| Error::Protocol("get_id returned an element without a due time".into()))?;
        let unpacked = format::unpack(&element).map_err(|e| Error::Protocol(format!("id {id:?}: {e}")))?;
        let raw = Bytes::copy_from_slice(unpacked.payload);
        Ok(Some(Scheduled {
            value: codec::decode(&*self.handle.codec, raw)?,
            due: time::from_ms(due),
        }))
    }

    /// Where the job offered with `id` is now, from any state (pending,
    /// ready, in flight, dead-lettered, handled, ...), and its last attempts
    /// by reliable consumers: see
    /// [`ReliableQueue::job`](crate::ReliableQueue::job).
    ///
    /// ```no_run
    /// # async fn demo(reminders: delayq::DelayedQueue<String>) -> delayq::Result<()> {
    /// use delayq::jobs::JobState;
    /// if reminders.get("order-42").await?.is_none() {
    ///     match reminders.job("order-42").await?.state {
    ///         JobState::Handled { at } => println!("handled at {at:?}"),
    ///         state => println!("now {}", state.name()),
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn job(&self, id: &str) -> Result<crate::queue::jobs::JobHistory> {
        crate::queue::jobs::history(&self.handle.core, &self.handle.keys, id).await
    }

    /// Stops the job offered with `id`, wherever it is: see
    /// [`ReliableQueue::cancel_job`](crate::ReliableQueue::cancel_job).
    /// Where [`cancel`](Self::cancel) removes only a pending element, this
    /// also reaches a ready or running job of a queue that keeps job history.
    ///
    /// ```no_run
    /// # async fn demo(imports: delayq::DelayedQueue<String>) -> delayq::Result<()> {
    /// println!("{:?}", imports.cancel_job("import-7").await?);
    /// # Ok(()) }
    /// ```
    pub async fn cancel_job(&self, id: &str) -> Result<crate::queue::jobs::CancelOutcome> {
        crate::queue::jobs::cancel(&self.handle.core, &self.handle.keys, id).await
    }

    /// Turns job history on (`Some(keep)`) or off (`None`, which deletes
    /// every history the queue kept): see
    /// [`ReliableQueue::set_job_history`](crate::ReliableQueue::set_job_history).
    /// Off by default.
    ///
    /// ```no_run
    /// # async fn demo(reminders: delayq::DelayedQueue<String>) -> delayq::Result<()> {
    /// use std::time::Duration;
    /// reminders.set_job_history(Some(Duration::from_secs(3600))).await?;
    /// # Ok(()) }
    /// ```
    pub async fn set_job_history(&self, keep: Option<std::time::Duration>) -> Result<()> {
        crate::queue::jobs::set_switch(&self.handle.core, &self.handle.keys, keep).await
    }

    /// The queue's job history switch (`None`: off, the default): see
    /// [`ReliableQueue::job_history`](crate::ReliableQueue::job_history).
    ///
    /// ```no_run
    /// # async fn demo(reminders: delayq::DelayedQueue<String>) -> delayq::Result<()> {
    /// println!("history: {:?}", reminders.job_history().await?);
    /// # Ok(()) }
    /// ```
    pub async fn job_history(&self) -> Result<Option<std::time::Duration>> {
        crate::queue::jobs::switch(&self.handle.core, &self.handle.keys).await
    }

    async fn offer_id(&self, id: &str, value: &T, due: Due, if_pending: IfPending) -> Result<bool> {
        check_id(id)?;
        self.handle.core.seen(&self.handle.keys);
        let payload = self.encode(value)?;
        let mut waiting = super::limits::Waiting::new(self.when_full);
        loop {
            match self.offer_id_once(id, payload.clone(), due, if_pending).await {
                Err(error) if waiting.again(&error).await => continue,
                outcome => return outcome,
            }
        }
    }

    /// One try of [`offer_id`](Self::offer_id) (a refusal stores no answer:
    /// the next try is a new request).
    async fn offer_id_once(&self, id: &str, payload: Bytes, due: Due, if_pending: IfPending) -> Result<bool> {
        let mut args = vec![
            Value::from(id),
            Value::Bytes(payload),
            Value::from(self.format.as_str()),
            due.arg(),
            if_pending.arg(),
        ];
        // Inside a span (feature `opentelemetry`): the context goes with it.
        let trace = OfferTrace::current();
        let keys = SCRIPTS.offer_id.keys(&self.handle.keys).traced(trace.is_some()).build();
        trace.append_arg(&mut args);
        let value = self.handle.durable_request(&SCRIPTS.offer_id, keys, args).await?;
        let new = reply::int(&value)? == 1;
        let outcome = match (new, if_pending) {
            (true, _) => IdOffer::New,
            (false, IfPending::Keep) => IdOffer::Kept,
            (false, IfPending::Replace) => IdOffer::Replaced,
        };
        crate::telemetry::offered_with_id(self.name(), outcome);
        Ok(new)
    }

    async fn reschedule_to(&self, id: &str, due: Due) -> Result<bool> {
        check_id(id)?;
        let keys = SCRIPTS.reschedule_id.keys(&self.handle.keys).build();
        let value = self
            .handle
            .request(&SCRIPTS.reschedule_id, keys, vec![Value::from(id), due.arg()])
            .await?;
        Ok(reply::int(&value)? == 1)
    }
}

/// An id is 1 to [`MAX_ID_LEN`] bytes.
pub(crate) fn check_id(id: &str) -> Result<()> {
    if id.is_empty() || id.len() > MAX_ID_LEN {
        return Err(Error::InvalidArgument(format!(
            "an id is 1 to {MAX_ID_LEN} bytes, not {}",
            id.len()
        )));
    }
    Ok(())
}
