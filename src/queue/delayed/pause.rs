//! Pausing a queue: delayq's transfers and reliable consumers wait.

use fred::types::Value;

use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::Result;
use crate::wire::time;

use super::DelayedQueue;

impl<T: 'static> DelayedQueue<T> {
    /// Pauses the queue for every delayq process: their transfers move
    /// nothing (due elements accumulate in the timeout set) and their
    /// reliable consumers and workers take nothing (a value taken as the
    /// pause began goes back to the head). Offers, reads and removals go on.
    /// The pause lasts until [`resume`](Self::resume), across restarts
    /// (it is the key `delayq_paused:{name}`).
    ///
    /// Java does not know the pause: a Java process holding the queue's
    /// `RDelayedQueue` keeps transferring due elements, and Java consumers
    /// keep taking. Pause a queue that Java transfers only when that is what
    /// you want. Plain [`BlockingQueue::take`](crate::BlockingQueue::take)s
    /// are not paused either.
    ///
    /// ```no_run
    /// # async fn demo(queue: delayq::DelayedQueue<String>) -> delayq::Result<()> {
    /// queue.pause().await?; // the payment provider is down
    /// // ...
    /// queue.resume().await?; // what fell due meanwhile moves now
    /// # Ok(()) }
    /// ```
    pub async fn pause(&self) -> Result<()> {
        // A script (SET NX), so that the pause and its event are one step.
        let keys = SCRIPTS.pause.keys(&self.handle.keys).build();
        self.run(&SCRIPTS.pause, keys, vec![Value::from(time::now_ms())])
            .await?;
        Ok(())
    }

    /// Ends a pause: every delayq transfer of the queue wakes and moves what
    /// fell due meanwhile (in due order, as any backlog); consumers take again within a
    /// second. Returns whether the queue was paused.
    pub async fn resume(&self) -> Result<bool> {
        let keys = SCRIPTS.resume.keys(&self.handle.keys).build();
        let value = self.handle.request(&SCRIPTS.resume, keys, vec![]).await?;
        Ok(reply::int(&value)? == 1)
    }

    /// Whether the queue is paused.
    pub async fn is_paused(&self) -> Result<bool> {
        self.handle.is_paused().await
    }
}
