//! A bulk take for consumers that process many values in one go: waits for
//! the first value as [`take_timeout`](ReliableQueue::take_timeout) does,
//! then claims the values ready beside it with the batch claim the Worker
//! uses (`lua/claim_batch.lua`, up to 128 a script).

use std::time::Duration;

use tokio::time::Instant;

use crate::error::{DecodeError, Error, Result};
use crate::queue::reliable::claim_batch::Batch;
use crate::queue::reliable::delivery::Delivery;

use super::ReliableQueue;

/// What a bulk take gives: each value's delivery, or, for a value the codec
/// could not read, its error (the value went back to the queue), in list order.
type Deliveries<T> = Vec<std::result::Result<Delivery<T>, DecodeError>>;

/// What claiming the ready values came to.
enum Ready<T> {
    Taken(Deliveries<T>),
    Paused,
}

impl<T: 'static> ReliableQueue<T> {
    /// Takes up to `max` values in one go, for a consumer that handles many
    /// at once: waits up to `timeout` for the first (no longer when values
    /// are ready; [`Duration::ZERO`] never waits), then claims those ready
    /// beside it without waiting, up to `max`, in list order, 128 a script.
    /// Each is a [`Delivery`] of its own, acked, nacked or dead-lettered on
    /// its own, with its own visibility timeout and delivery count. An empty
    /// batch means nothing came in time (or the queue is paused).
    ///
    /// A value that cannot be decoded is given back to the queue (so it
    /// counts towards the dead-letter limit, as with [`take`](Self::take))
    /// and is its [`DecodeError`] in its place. Cancel safe: deliveries
    /// claimed for a call dropped before it returns go back to the queue,
    /// and a claim whose reply was lost is found again and given back.
    /// `max` of 0 is [`Error::InvalidArgument`].
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let orders = client.reliable_queue("orders", delayq::StringCodec)?;
    /// for delivery in orders.take_many(50, Duration::from_secs(5)).await? {
    ///     match delivery {
    ///         Ok(delivery) => {
    ///             println!("{}", delivery.value());
    ///             delivery.ack().await?;
    ///         }
    ///         Err(undecodable) => eprintln!("given back: {undecodable}"),
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn take_many(
        &self,
        max: usize,
        timeout: Duration,
    ) -> Result<Vec<std::result::Result<Delivery<T>, DecodeError>>> {
        if max == 0 {
            return Err(Error::InvalidArgument(
                "take_many takes at least one value (max 0)".into(),
            ));
        }
        let deadline = Instant::now().checked_add(timeout);
        loop {
            match self.claim_ready(max).await? {
                Ready::Taken(taken) if !taken.is_empty() => return Ok(taken),
                Ready::Taken(_) => {}
                Ready::Paused => {
                    self.wait_while_paused(deadline).await?;
                    if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                        return Ok(Vec::new());
                    }
                    continue;
                }
            }
            // Nothing ready: wait for one as a take does, then fill up.
            let first = match self.next(deadline).await {
                Ok(Some(first)) => Ok(first),
                Ok(None) if deadline.is_some_and(|deadline| Instant::now() >= deadline) => {
                    return Ok(Vec::new());
                }
                Ok(None) => continue,
                Err(Error::Decode(error)) => Err(error),
                Err(error) => return Err(error),
            };
            let mut taken = vec![first];
            if max > 1 {
                // The first is held already: a failure filling up is logged
                // by the claim, and the batch goes out as it is.
                if let Ok(Ready::Taken(more)) = self.claim_ready(max - 1).await {
                    taken.extend(more);
                }
            }
            return Ok(taken);
        }
    }

    /// Claims up to `max` ready values without waiting, a script per 128,
    /// until `max`, a short batch (the list ran out, or the script's byte
    /// budget), or a batch with a value given back undecodable (the next
    /// script would claim it again and spend its deliveries).
    async fn claim_ready(&self, max: usize) -> Result<Ready<T>> {
        let mut taken: Deliveries<T> = Vec::new();
        while taken.len() < max {
            let asked = max - taken.len();
            match self.take_ready_batch(asked).await? {
                // Empty when every value popped went to the dead letters:
                // read on, the list may hold more.
                Batch::Taken(batch) if batch.is_empty() => continue,
                Batch::Taken(batch) => {
                    let full = batch.len() == asked.min(super::CLAIM_BATCH);
                    let undecodable = batch.iter().any(|delivery| delivery.is_err());
                    taken.extend(batch);
                    if !full || undecodable {
                        break;
                    }
                }
                // At the concurrency limit: what it has (none: the take
                // waits for room as `take` does).
                Batch::Nothing | Batch::Full => break,
                Batch::Paused if taken.is_empty() => return Ok(Ready::Paused),
                Batch::Paused => break,
            }
        }
        Ok(Ready::Taken(taken))
    }
}
