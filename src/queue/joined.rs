//! Concurrent calls to one queue's offering script, joined into one run.
//!
//! fred writes every script call with a write of its own (it flushes after
//! each `EVALSHA`), so each offer cost a write and a read on both sides and
//! a wake-up of the caller: at 2,000 offers a second that, not the scripts,
//! was most of the process's CPU. A call that finds none in flight runs
//! alone, as it always did (a lone call waits for nothing). Calls that come
//! while one is in flight wait, and are then sent together as one run of
//! the script, which takes many elements and leaves what running them one
//! by one in arrival order would. What a run is (its script, its items,
//! what each caller learns from the reply) is a [`Join`]: plain offers
//! (`delayed/joined_offers.rs`, `lua/offer.lua`), deduplicated ones
//! (`delayed/dedup.rs`, `lua/offer_dedup.lua`), priority offers
//! (`delayed/priority.rs`, `lua/offer_priority.lua`) and the pops of a
//! queue with priorities (`blocking/priorities.rs`, `lua/pop_priority.lua`).

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Arc;

use fred::types::Value;
use parking_lot::Mutex;
use tokio::sync::oneshot;

use crate::connection::script::{Script, ScriptError};
use crate::error::{Error, Result};
use crate::queue::batch::OfferRun;
use crate::queue::Core;

/// A run's outcome: its reply or its failure, both of which clone, so that
/// every call of a joined run gets the error its own run would have given
/// (an unknown outcome stays [`Error::OutcomeUnknown`]). The outer error is
/// a run that could not be sent (after shutdown).
pub(crate) type RunOutcome = Result<std::result::Result<Value, ScriptError>>;

/// One kind of script run that concurrent calls share.
pub(crate) trait Join: Clone + Send + Sync + 'static {
    /// One call's part of a run.
    type Item: Clone + Send + 'static;
    /// What one call learns from the run.
    type Answer: Send + 'static;

    /// Runs in flight at once. Offers keep one, so that their runs apply
    /// in the order their calls came; pops may overlap (no order is
    /// promised between takes waiting at once).
    const RUNS: usize = 1;

    /// The client the runs go through (for shutdown's count of runs in flight).
    fn core(&self) -> &Arc<Core>;

    /// The length of an item's payload: what it counts against a run's
    /// bounds (`queue/batch.rs`).
    fn payload(item: &Self::Item) -> usize;

    /// Whether `next` may go in one run with `first` (the script takes
    /// some arguments once per run).
    fn joins(_first: &Self::Item, _next: &Self::Item) -> bool {
        true
    }

    /// One run of the script for `items`, in order.
    fn run(&self, items: Vec<Self::Item>) -> impl Future<Output = RunOutcome> + Send;

    /// What the `position`th item (0-based) of a run learns from its reply.
    fn answer(&self, reply: &Value, position: usize, item: &Self::Item) -> Result<Self::Answer>;

    /// The error of a call whose run's reply can never come.
    fn unknown_outcome(&self) -> Error;

    /// A joined call's answer that found no caller (it stopped waiting
    /// while its run was in flight): a pop gives its value back.
    fn unclaimed(&self, _answer: Self::Answer) {}
}

/// The calls of one queue (shared by a handle's clones).
pub(crate) struct Joined<J: Join> {
    outbox: Mutex<Outbox<J>>,
}

impl<J: Join> Default for Joined<J> {
    fn default() -> Self {
        Joined {
            outbox: Mutex::new(Outbox {
                running: 0,
                waiting: VecDeque::new(),
            }),
        }
    }
}

/// How many runs of this queue's calls are in flight, and the calls
/// waiting to go with the next one.
struct Outbox<J: Join> {
    /// Calls in flight, alone or sending joined ones ([`Join::RUNS`] at
    /// most): while all are busy, newcomers wait.
    running: usize,
    waiting: VecDeque<Waiter<J>>,
}

/// A call waiting to be sent with others.
struct Waiter<J: Join> {
    item: J::Item,
    /// Where its answer goes, or the run's error.
    reply: oneshot::Sender<Result<J::Answer>>,
}

/// Whether a run failed because the queue's limits refused it.
fn refused(run: &RunOutcome) -> bool {
    matches!(run, Ok(Err(e)) if matches!(Error::from(e.clone()), Error::OfferRefused { .. }))
}

/// The error of a call whose run of `script` on `queue` was joined with
/// others and whose reply can never come (the task sending it ended).
pub(crate) fn reply_gone(script: &'static Script, queue: &str) -> Error {
    let gone = fred::error::Error::new(
        fred::error::ErrorKind::Canceled,
        "the task sending this offer with others ended before its reply came",
    );
    ScriptError::new(gone, script, queue).into()
}

/// What the `position`th call of a run learns from its outcome.
fn answer<J: Join>(target: &J, run: &RunOutcome, position: usize, item: &J::Item) -> Result<J::Answer> {
    match run {
        Ok(Ok(reply)) => target.answer(reply, position, item),
        Ok(Err(error)) => Err(error.clone().into()),
        // `conn()` fails only after shutdown.
        Err(_) => Err(Error::Shutdown),
    }
}

/// What a lone call learns from its run: the same, with the error of a run
/// that could not be sent as it is.
fn answer_alone<J: Join>(target: &J, run: RunOutcome, item: &J::Item) -> Result<J::Answer> {
    let run = Ok(run?);
    answer(target, &run, 0, item)
}

impl<J: Join> Joined<J> {
    /// Sends `item`: alone, or with others, as many as one run takes
    /// (`queue/batch.rs`, as a bulk-offer chunk), and answers what its
    /// part of the run's reply says.
    pub(crate) async fn send(self: &Arc<Self>, target: J, item: J::Item) -> Result<J::Answer> {
        let joined = {
            let mut outbox = self.outbox.lock();
            if outbox.running < J::RUNS {
                outbox.running += 1;
                None
            } else {
                let (reply, joined) = oneshot::channel();
                outbox.waiting.push_back(Waiter {
                    item: item.clone(),
                    reply,
                });
                Some(joined)
            }
        };
        match joined {
            // Gone only when the task sending it ended first (the runtime
            // shutting down): its run may or may not have been applied.
            Some(joined) => joined.await.map_err(|_| target.unknown_outcome())?,
            None => {
                // Sends the calls that come meanwhile once dropped: after the
                // run, or with this call if its caller stops waiting.
                let alone = Alone {
                    joined: self.clone(),
                    target,
                };
                let run = alone.target.run(vec![item.clone()]).await;
                answer_alone(&alone.target, run, &item)
            }
        }
    }

    /// The next calls to send together, in arrival order (those whose
    /// callers stopped waiting are left out: they were never sent); none when
    /// no one waits, and then the caller's run is over (one fewer in flight).
    fn next_batch(&self) -> Vec<Waiter<J>> {
        let mut outbox = self.outbox.lock();
        let mut batch: Vec<Waiter<J>> = Vec::new();
        let mut run = OfferRun::default();
        while let Some(next) = outbox.waiting.front() {
            if next.reply.is_closed() {
                outbox.waiting.pop_front();
            } else if batch.first().is_none_or(|first| J::joins(&first.item, &next.item))
                && run.take(J::payload(&next.item))
            {
                batch.push(outbox.waiting.pop_front().expect("a front"));
            } else {
                break;
            }
        }
        if batch.is_empty() {
            outbox.running -= 1;
        }
        batch
    }
}

/// Held by the call that runs alone.
struct Alone<J: Join> {
    joined: Arc<Joined<J>>,
    target: J,
}

impl<J: Join> Drop for Alone<J> {
    fn drop(&mut self) {
        let batch = self.joined.next_batch();
        if batch.is_empty() {
            return;
        }
        let (joined, target) = (self.joined.clone(), self.target.clone());
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                // Made before the spawn: a task dropped before its first
                // poll (its runtime shutting down) still ends its run.
                let sending = Sending(Some(joined.clone()));
                drop(runtime.spawn(async move {
                    send_joined(&joined, &target, batch).await;
                    sending.finished();
                }));
            }
            // No runtime left: nothing was sent.
            Err(_) => {
                for waiter in batch {
                    let _ = waiter.reply.send(Err(Error::Shutdown));
                }
                drop(Sending(Some(joined)));
            }
        }
    }
}

/// Ends a run if the task sending joined calls ends before it is done (a
/// runtime shutting down drops it, a panic unwinds it): when it was the
/// last run, the calls still waiting then fail instead of waiting forever,
/// and later calls find the outbox idle. (Done, the task has ended its run
/// itself.)
struct Sending<J: Join>(Option<Arc<Joined<J>>>);

impl<J: Join> Sending<J> {
    fn finished(mut self) {
        self.0 = None;
    }
}

impl<J: Join> Drop for Sending<J> {
    fn drop(&mut self) {
        if let Some(joined) = self.0.take() {
            let mut outbox = joined.outbox.lock();
            outbox.running -= 1;
            // Never sent, and no run left to send them (those of a run cut
            // short hear "outcome unknown").
            if outbox.running == 0 {
                for waiter in outbox.waiting.drain(..) {
                    let _ = waiter.reply.send(Err(Error::Shutdown));
                }
            }
        }
    }
}

/// Sends joined calls, batch after batch, until none waits.
async fn send_joined<J: Join>(joined: &Joined<J>, target: &J, mut batch: Vec<Waiter<J>>) {
    while !batch.is_empty() {
        let items = batch.iter().map(|w| w.item.clone()).collect();
        // Counted while a run is in flight (shutdown waits for it), not
        // between runs: calls that keep coming never hold a stop up.
        let counted = target.core().settling().enter();
        let run = target.run(items).await;
        if batch.len() > 1 && refused(&run) {
            // The queue's limits refused the run: each call goes alone, in
            // order, and gets the answer it would have got alone (a refused
            // run changed nothing, so sending its calls again is safe).
            for waiter in batch {
                if waiter.reply.is_closed() {
                    continue; // its caller stopped waiting: never sent alone
                }
                let alone = target.run(vec![waiter.item.clone()]).await;
                if let Err(Ok(unclaimed)) = waiter.reply.send(answer_alone(target, alone, &waiter.item)) {
                    target.unclaimed(unclaimed);
                }
            }
            drop(counted);
            batch = joined.next_batch();
            continue;
        }
        drop(counted);
        for (position, waiter) in batch.into_iter().enumerate() {
            // Every call of the run shares its fate, as each would have alone.
            if let Err(Ok(unclaimed)) = waiter.reply.send(answer(target, &run, position, &waiter.item)) {
                target.unclaimed(unclaimed);
            }
        }
        batch = joined.next_batch();
    }
}

#[cfg(test)]
impl<J: Join> Joined<J> {
    /// Queues `item` as a waiting call (for tests of how runs split).
    pub(crate) fn push_waiting(&self, item: J::Item) -> oneshot::Receiver<Result<J::Answer>> {
        let (reply, open) = oneshot::channel();
        let mut outbox = self.outbox.lock();
        // As if a run were in flight: the calls wait for it, and the batch
        // that finds none ends it.
        outbox.running = outbox.running.max(1);
        outbox.waiting.push_back(Waiter { item, reply });
        open
    }

    /// How many calls the next run would carry (and takes them out).
    pub(crate) fn next_batch_len(&self) -> usize {
        self.next_batch().len()
    }
}
