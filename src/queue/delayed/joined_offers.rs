//! Concurrent offers to one queue, joined into one script run.
//!
//! fred writes every script call with a write of its own (it flushes after
//! each `EVALSHA`), so each offer cost a write and a read on both sides and
//! a wake-up of the caller: at 2,000 offers a second that, not the scripts,
//! was most of the process's CPU. An offer that finds none in flight runs
//! alone, as it always did (a lone offer waits for nothing). Offers that come
//! while one is in flight wait, and are then sent together as one run of
//! `lua/offer.lua`, which takes many elements and leaves what offering them
//! one by one in arrival order would: the same members and scores, the
//! pending list in that order, and one publish when the queue's new head is
//! one of them (Redisson's transfer reschedules on it alone).

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;
use fred::types::Value;
use parking_lot::Mutex;
use tokio::sync::oneshot;

use crate::connection::reply;
use crate::connection::script::{ScriptError, SCRIPTS};
use crate::error::{Error, Result};
use crate::queue::batch::OfferRun;
use crate::queue::Core;
use crate::wire::keys::QueueKeys;

use super::offer::Due;

/// The offers of one queue (shared by a handle's clones).
#[derive(Default)]
pub(super) struct JoinedOffers {
    outbox: Mutex<Outbox>,
}

/// Whether a run of this queue's offers is in flight, and the offers
/// waiting to go with the next one.
#[derive(Default)]
struct Outbox {
    /// An offer is in flight, or joined ones are being sent: newcomers wait.
    busy: bool,
    waiting: VecDeque<Waiter>,
}

/// An offer waiting to be sent with others.
struct Waiter {
    due: Due,
    element: Bytes,
    /// Its payload's length: what it counts against a run's bounds.
    payload: usize,
    /// Where its outcome goes: whether its element collided with a pending
    /// one (then it is re-packed and offered again), or the run's error.
    reply: oneshot::Sender<Result<bool>>,
}

/// Where offers go: what a joined run needs, without the handle's type.
#[derive(Clone)]
pub(super) struct Target {
    pub core: Arc<Core>,
    pub keys: Arc<QueueKeys>,
}

impl Target {
    /// One run of `lua/offer.lua` adding `elements` in order (sent once: a
    /// resent offer could add its elements twice). The 1-based positions of
    /// those that collided with pending ones.
    pub(super) async fn offer(&self, elements: Vec<(Due, Bytes)>) -> Result<Vec<usize>> {
        self.collisions(self.run(elements).await)
    }

    /// The run itself: its reply or its failure, both of which clone, so
    /// that every offer of a joined run gets the error its own run would
    /// have given (an unknown outcome stays [`Error::OutcomeUnknown`]).
    async fn run(&self, elements: Vec<(Due, Bytes)>) -> Result<std::result::Result<Value, ScriptError>> {
        let keys = SCRIPTS.offer.keys(&self.keys).build();
        let mut args = Vec::with_capacity(2 * elements.len());
        for (due, element) in elements {
            args.push(due.arg());
            args.push(Value::Bytes(element));
        }
        Ok(SCRIPTS
            .offer
            .run(self.core.conn()?, self.keys.destination(), keys, args)
            .await)
    }

    /// The error of an offer whose run's reply can never come.
    fn unknown_outcome(&self) -> Error {
        let gone = fred::error::Error::new(
            fred::error::ErrorKind::Canceled,
            "the task sending this offer with others ended before its reply came",
        );
        ScriptError::new(gone, &SCRIPTS.offer, self.keys.destination()).into()
    }

    /// What a run's reply means for the offers it carried.
    fn collisions(&self, run: Result<std::result::Result<Value, ScriptError>>) -> Result<Vec<usize>> {
        let value = run??;
        reply::array(value)?
            .iter()
            .map(|v| reply::int(v).map(|i| i as usize))
            .collect()
    }
}

impl JoinedOffers {
    /// Offers packed `element` (of a `payload` bytes long payload), due
    /// `due`: alone, or with others, as many as one offering run takes
    /// (`queue/batch.rs`, as a bulk-offer chunk). Whether it collided with
    /// a pending element (then re-pack it and offer again).
    pub(super) async fn offer(
        self: &Arc<Self>,
        target: Target,
        due: Due,
        element: Bytes,
        payload: usize,
    ) -> Result<bool> {
        let joined = {
            let mut outbox = self.outbox.lock();
            if !outbox.busy {
                outbox.busy = true;
                None
            } else {
                let (reply, joined) = oneshot::channel();
                outbox.waiting.push_back(Waiter {
                    due,
                    element: element.clone(),
                    payload,
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
                // Sends the offers that come meanwhile once dropped: after the
                // run, or with this call if its caller stops waiting.
                let alone = Alone {
                    joined: self.clone(),
                    target,
                };
                Ok(!alone.target.offer(vec![(due, element)]).await?.is_empty())
            }
        }
    }

    /// The next offers to send together, in arrival order (those whose
    /// callers stopped waiting are left out: they were never sent); none when
    /// no one waits, and then the outbox is idle.
    fn next_batch(&self) -> Vec<Waiter> {
        let mut outbox = self.outbox.lock();
        let mut batch = Vec::new();
        let mut run = OfferRun::default();
        while let Some(next) = outbox.waiting.front() {
            if next.reply.is_closed() {
                outbox.waiting.pop_front();
            } else if run.take(next.payload) {
                batch.push(outbox.waiting.pop_front().expect("a front"));
            } else {
                break;
            }
        }
        if batch.is_empty() {
            outbox.busy = false;
        }
        batch
    }
}

/// Held by the offer that runs alone.
struct Alone {
    joined: Arc<JoinedOffers>,
    target: Target,
}

impl Drop for Alone {
    fn drop(&mut self) {
        let batch = self.joined.next_batch();
        if batch.is_empty() {
            return;
        }
        let (joined, target) = (self.joined.clone(), self.target.clone());
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                // Made before the spawn: a task dropped before its first
                // poll (its runtime shutting down) still idles the outbox.
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

/// Idles the outbox if the task sending joined offers ends before it is
/// done (a runtime shutting down drops it, a panic unwinds it): the offers
/// still waiting then fail instead of waiting forever, and later offers
/// find the outbox idle. (Done, the task has idled it itself.)
struct Sending(Option<Arc<JoinedOffers>>);

impl Sending {
    fn finished(mut self) {
        self.0 = None;
    }
}

impl Drop for Sending {
    fn drop(&mut self) {
        if let Some(joined) = self.0.take() {
            let mut outbox = joined.outbox.lock();
            outbox.busy = false;
            // Never sent (those of a run cut short hear "outcome unknown").
            for waiter in outbox.waiting.drain(..) {
                let _ = waiter.reply.send(Err(Error::Shutdown));
            }
        }
    }
}

/// Whether a run failed because the queue's limits refused it.
fn refused(run: &Result<std::result::Result<Value, ScriptError>>) -> bool {
    matches!(run, Ok(Err(e)) if matches!(Error::from(e.clone()), Error::OfferRefused { .. }))
}

/// Sends joined offers, batch after batch, until none waits.
async fn send_joined(joined: &JoinedOffers, target: &Target, mut batch: Vec<Waiter>) {
    while !batch.is_empty() {
        let elements = batch.iter().map(|w| (w.due, w.element.clone())).collect();
        // Counted while a run is in flight (shutdown waits for it), not
        // between runs: offers that keep coming never hold a stop up.
        let counted = target.core.settling().enter();
        let run = target.run(elements).await;
        if batch.len() > 1 && refused(&run) {
            // The queue's limits refused the run: each offer goes alone, in
            // order, and gets the answer it would have got alone (a refused
            // run changed nothing, so sending its offers again is safe).
            for waiter in batch {
                if waiter.reply.is_closed() {
                    continue; // its caller stopped waiting: never sent alone
                }
                let alone = target.run(vec![(waiter.due, waiter.element.clone())]).await;
                let _ = waiter
                    .reply
                    .send(target.collisions(alone).map(|collided| !collided.is_empty()));
            }
            drop(counted);
            batch = joined.next_batch();
            continue;
        }
        drop(counted);
        for (i, waiter) in batch.into_iter().enumerate() {
            // Every offer of the run shares its fate, as each would have alone.
            let outcome = match &run {
                Ok(reply) => target.collisions(Ok(reply.clone())),
                // `conn()` fails only after shutdown.
                Err(_) => Err(Error::Shutdown),
            };
            let _ = waiter.reply.send(outcome.map(|collided| collided.contains(&(i + 1))));
        }
        batch = joined.next_batch();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::format::{self, Format};

    /// Joined runs and bulk-offer chunks split one sequence of payloads at
    /// the same places, whatever layout the elements are packed in.
    #[test]
    fn joined_runs_split_where_bulk_chunks_do() {
        // Sizes from tiny to over the byte bound, in a fixed pseudo-random order.
        let mut seed = 7u64;
        let sizes: Vec<usize> = (0..3_000)
            .map(|i| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let n = (seed >> 33) as usize;
                match i % 7 {
                    0 => n % (300 * 1024),
                    1 | 2 => n % (8 * 1024),
                    _ => n % 64,
                }
            })
            .collect();
        let items: Vec<(Due, Bytes)> = sizes
            .iter()
            .map(|&n| (Due::At(0), Bytes::from(vec![b'x'; n])))
            .collect();
        for layout in [Format::Modern, Format::Legacy] {
            let joined = JoinedOffers::default();
            let mut replies = Vec::new();
            for (due, payload) in &items {
                let (reply, open) = oneshot::channel();
                replies.push(open);
                joined.outbox.lock().waiting.push_back(Waiter {
                    due: *due,
                    element: format::pack(layout, payload),
                    payload: payload.len(),
                    reply,
                });
            }
            let (mut start, mut runs) = (0, 0);
            loop {
                let batch = joined.next_batch();
                if batch.is_empty() {
                    break;
                }
                let end = super::super::offer::chunk_end(&items, start);
                assert_eq!(batch.len(), end - start, "{layout}: run {runs} from {start}");
                start = end;
                runs += 1;
            }
            assert_eq!(start, items.len());
            assert!(runs > 20, "{runs} runs: the bounds were reached");
        }
    }
}
