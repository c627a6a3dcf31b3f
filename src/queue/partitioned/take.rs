//! Takes across a partitioned queue's partitions: a sweep of immediate
//! pops, then a bounded wait on a few partitions at once.

use std::sync::atomic::Ordering;
use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::time::Instant;

use crate::error::Result;

use super::{PartitionedQueue, Parts};
use crate::queue::blocking::BlockingQueue;

/// Partitions waited on at once (each wait holds a dedicated connection).
const WAITED_AT_ONCE: usize = 4;

/// How long one wait lasts when some partitions are not waited on: a value
/// arriving in one of them is found by the next sweep, within about this.
const WAIT_SLICE: Duration = Duration::from_millis(250);

/// How long one wait lasts when every partition is waited on.
const WAIT_ALL: Duration = Duration::from_secs(5);

impl<T: 'static> PartitionedQueue<T> {
    /// Waits for a value from any partition and removes it. Cancel safe, as
    /// [`BlockingQueue::take`](crate::BlockingQueue::take): dropping the
    /// future loses nothing (a value popped for it goes back to the head
    /// of its partition).
    pub async fn take(&self) -> Result<T> {
        loop {
            if let Some(value) = self.take_until(None).await? {
                return Ok(value);
            }
        }
    }

    /// Waits up to `timeout` for a value from any partition; `None` when
    /// the time is up.
    ///
    /// How: each round pops at once from every partition in turn, starting
    /// from the one after the last round's start (so none is favoured),
    /// and returns the first value found; if none has one, it waits with
    /// blocking reads on up to four partitions at once, for up to 250 ms
    /// when there are more than four (the next round's sweep finds a value
    /// of the others), else up to 5 s. So a take of an empty queue of N
    /// partitions costs N `LPOP`s about four times a second beyond four
    /// partitions, and holds at most four blocking connections.
    ///
    /// ```no_run
    /// # async fn demo(queue: delayq::PartitionedQueue<String>) -> delayq::Result<()> {
    /// use std::time::Duration;
    /// while let Some(value) = queue.take_timeout(Duration::from_secs(1)).await? {
    ///     println!("{value}");
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn take_timeout(&self, timeout: Duration) -> Result<Option<T>> {
        self.take_until(Instant::now().checked_add(timeout)).await
    }

    /// Removes a value from the first partition that has one, without
    /// waiting (one sweep; see [`take_timeout`](Self::take_timeout)).
    pub async fn try_take(&self) -> Result<Option<T>> {
        let parts = self.parts().await;
        sweep(&parts, self.next_start(&parts)).await
    }

    async fn take_until(&self, deadline: Option<Instant>) -> Result<Option<T>> {
        loop {
            let parts = self.parts().await;
            let start = self.next_start(&parts);
            if let Some(value) = sweep(&parts, start).await? {
                return Ok(Some(value));
            }
            let now = Instant::now();
            let left = match deadline {
                Some(deadline) if deadline <= now => return Ok(None),
                Some(deadline) => deadline - now,
                None => Duration::MAX,
            };
            // Retired partitions are waited on too: a value can still land
            // in one (an offer on its way as the layout changed, a retry).
            let lists: Vec<&BlockingQueue<T>> = parts.ready.iter().chain(&parts.retired_ready).collect();
            let n = lists.len();
            let waited = n.min(WAITED_AT_ONCE);
            let slice = if waited < n { WAIT_SLICE } else { WAIT_ALL };
            let slice = slice.min(left);
            // Waits that take nothing: the first to see a value ends the
            // round and the next sweep pops it. Waits that popped, raced and
            // dropped gave their values back to their heads behind the next
            // pop, and one key's values came out of order.
            let until = Instant::now() + slice;
            let mut waits: FuturesUnordered<_> = (0..waited)
                .map(|k| lists[(start + k) % n].wait_nonempty(until))
                .collect();
            while let Some(waited) = waits.next().await {
                waited?;
                if Instant::now() < until {
                    break;
                }
            }
        }
    }

    fn next_start(&self, parts: &Parts<T>) -> usize {
        self.next_take.fetch_add(1, Ordering::Relaxed) % (parts.ready.len() + parts.retired_ready.len())
    }
}

/// One pop from each retired partition, then from each partition in turn
/// from `start`; the first value. Retired partitions first: what a key had
/// there was offered before what it has in the new ones.
async fn sweep<T: 'static>(parts: &Parts<T>, start: usize) -> Result<Option<T>> {
    for list in &parts.retired_ready {
        if let Some(value) = list.try_take().await? {
            return Ok(Some(value));
        }
    }
    let n = parts.ready.len();
    for k in 0..n {
        if let Some(value) = parts.ready[(start + k) % n].try_take().await? {
            return Ok(Some(value));
        }
    }
    Ok(None)
}
