//! Takes that wait for values of one queue, joined into `BLMPOP ... COUNT n`.
//!
//! A `BLPOP` per waiting take costs a reply and a fresh `BLPOP` for every
//! value: at 2,000 values a second over 8 takers that was a round trip (a
//! write, a read and two wake-ups) per value, and most of the process's CPU.
//! So waits are joined as pops are (`joined_pops`): two waits of a queue
//! may block at once, each on a connection of its own; takes that come
//! while they are busy wait in line, and the next wait blocks for itself and
//! for every take in line then, with one `BLMPOP timeout 1 key LEFT COUNT n`.
//! Redis hands it up to `n` values as they arrive, each going to a take that
//! waits for one: nothing is popped ahead of a take, and a value whose take
//! stopped waiting goes back to the head of the list. A wait blocks no
//! longer than the first take it serves waits, so that this is rare. Takes
//! left without a value (fewer came) go back to the front of the line.
//!
//! Redis before 7.0 has no `BLMPOP`: the first refusal turns joining off for
//! the queue, and every take then waits with a `BLPOP` of its own.

use std::sync::atomic::Ordering;

use bytes::Bytes;
use fred::types::Value;
use tokio::time::Instant;

use crate::connection::reply;
use crate::error::{CommandResult, Error, Result};

use super::joined_pops::{push_back_later, Entry, InLine, Served, Slot, Source};
use super::BlockingQueue;

/// Waits of one queue blocked at once, each on a blocking connection of its
/// own: two, so that one is blocked while the takes the other served run.
pub(super) const WAITS: usize = 2;

impl<T: 'static> BlockingQueue<T> {
    /// Waits until `deadline` (or forever) for a value of `name`, joined with
    /// the other takes of the queue in this client that wait meanwhile;
    /// `Ok(None)` when the time is up, or with `for_marker`, between two
    /// rounds, once the queue is known to have priority values (its takes
    /// then look at them: `priorities.rs`). Keeps waiting across reconnects.
    pub(super) async fn joined_wait(
        &self,
        name: &str,
        deadline: Option<Instant>,
        for_marker: bool,
    ) -> Result<Option<Bytes>> {
        // Where values served to a take that stopped waiting go back.
        let source = Source::new(self.handle.core.conn_for(name)?, self.handle.core.settling(), name);
        let mut slot = match self.wait_in_line(&source, deadline).await? {
            Waited::Lead(slot) => slot,
            Waited::Served(raw) => return Ok(Some(raw)),
            Waited::TimeUp => return self.time_up_in_line(),
        };
        loop {
            if self.takes.no_blmpop.load(Ordering::Relaxed) {
                drop(slot); // the next take in line finds joining off too
                return Ok(self.blpop_wait(&[name], deadline).await?.map(|(_, raw)| raw));
            }
            // A take whose time is already up goes back in line, not into
            // this wait: its own timer ends it (tokio fires timers up to a
            // millisecond late), and values popped for it would go back.
            let now = Instant::now();
            let (joined, expired): (Vec<InLine>, Vec<InLine>) = slot
                .joined()
                .into_iter()
                .partition(|take| take.until.is_none_or(|at| at > now));
            slot.requeue(expired);
            let count = joined.len() as i64 + 1;
            // Each wait blocks for at most the pool's timeout, then gathers
            // the takes that came meanwhile; and no longer than any take it
            // serves waits, so that it pops nothing for a take that is gone.
            let round = now + self.handle.core.blocking().timeout;
            let joined_until = joined.iter().filter_map(|take| take.until);
            let round = deadline.into_iter().chain(joined_until).fold(round, Instant::min);
            // Dropped with this future (the caller stopped waiting): the
            // joined takes go back in line and the slot passes on, while the
            // pool ends the BLMPOP and puts back what it popped.
            let batch = WaitBatch {
                joined,
                slot: Some(slot),
            };
            let args = |secs: f64| {
                vec![
                    Value::from(secs),
                    Value::from(1),
                    Value::from(name),
                    Value::from("LEFT"),
                    Value::from("COUNT"),
                    Value::from(count),
                ]
            };
            let waited = self
                .handle
                .core
                .blocking()
                .wait("BLMPOP", name, Some(round), args, Some(&self.takes.failing))
                .await;
            let time_up = deadline.is_some_and(|at| Instant::now() >= at);
            match waited {
                Ok(Some(value)) => {
                    let (key, values) = reply::blmpop(value)?;
                    if key != name || values.is_empty() {
                        let restored = self.restore(&key, values).await;
                        return Err(Error::Protocol(format!(
                            "BLMPOP on {name:?} answered from {key:?} (values put back: {restored})"
                        )));
                    }
                    return Ok(Some(batch.serve(&source, values)));
                }
                Ok(None) => {
                    slot = batch.into_slot();
                    // Empty: does the queue have priority values now (as last
                    // seen: a look never holds a wait)? Its takes then look at them.
                    if for_marker && !time_up && self.handle.marked(deadline).await {
                        return Ok(None); // the slot passes on as it drops
                    }
                }
                Err(error) if refuses_blmpop(&error) => {
                    tracing::info!(
                        queue = name,
                        "the server has no BLMPOP (Redis before 7.0): each take waits with BLPOP"
                    );
                    self.takes.no_blmpop.store(true, Ordering::Relaxed);
                    slot = batch.into_slot();
                    continue;
                }
                // The pool already retried on new connections for this round.
                Err(error) if error.is_transient() && !time_up => slot = batch.into_slot(),
                // The take in line that leads next tries for itself.
                Err(error) => return Err(error),
            }
            if time_up {
                return Ok(None); // the slot passes on as it drops
            }
        }
    }

    /// What a take whose time is up in line returns: `None`, or, while the
    /// blocking reads fail, how they fail ("empty" and "unreachable" differ).
    fn time_up_in_line(&self) -> Result<Option<Bytes>> {
        match self.takes.failing.error() {
            Some(error) => Err(error),
            None => Ok(None),
        }
    }

    /// A slot to wait with, a value a wait served this take, or the time up
    /// while in line.
    async fn wait_in_line(&self, source: &Source, deadline: Option<Instant>) -> Result<Waited> {
        loop {
            let waiting = match self.takes.waits.enter(|| source.clone(), deadline) {
                Entry::Pop(slot) => return Ok(Waited::Lead(slot)),
                Entry::Wait(waiting) => waiting,
            };
            let served = match deadline {
                None => waiting.served().await,
                // A value sent just as the time is up goes back (see `Waiting`).
                Some(at) => match tokio::time::timeout_at(at, waiting.served()).await {
                    Ok(served) => served,
                    Err(_) => return Ok(Waited::TimeUp),
                },
            };
            return match served {
                (Served::Lead, slot) => Ok(Waited::Lead(slot.expect("a slot comes with the lead"))),
                (Served::Value(raw), _) => Ok(Waited::Served(raw)),
                (Served::Failed(error), _) => Err(error).on_key(self.name()),
                // Not sent to waits; in line again.
                (Served::Empty, _) => continue,
            };
        }
    }
}

/// How a take's wait in line ended (entering gave it a place in line:
/// `joined_pops::Entry::Wait`).
enum Waited {
    /// Its turn to wait, for itself and the takes in line.
    Lead(Slot),
    /// A wait served it a value.
    Served(Bytes),
    /// Its deadline passed in line.
    TimeUp,
}

/// Whether the server refused `BLMPOP` as a command it does not know.
fn refuses_blmpop(error: &Error) -> bool {
    let text = error.to_string().to_ascii_lowercase();
    text.contains("unknown command") && text.contains("blmpop")
}

/// A wait for its take and the takes it joined. Dropped unserved, it puts
/// them back at the front of the line, then frees its slot.
struct WaitBatch {
    joined: Vec<InLine>,
    slot: Option<Slot>,
}

impl WaitBatch {
    /// The slot back, the joined takes in line again: the wait ended empty.
    fn into_slot(mut self) -> Slot {
        let slot = self.slot.take().expect("held until served");
        slot.requeue(std::mem::take(&mut self.joined));
        slot
    }

    /// Serves the joined takes from `values` (head first, after the waiting
    /// take's own, which it returns); takes left without a value go back in
    /// line, values left without a take back to the head of the list.
    fn serve(mut self, source: &Source, values: Vec<Bytes>) -> Bytes {
        let mut values = values.into_iter();
        let own = values.next().expect("checked: at least one value");
        let mut unserved = Vec::new();
        let mut unclaimed = Vec::new();
        for take in std::mem::take(&mut self.joined) {
            match values.next() {
                Some(value) => {
                    if let Err(Served::Value(value)) = take.take.send(Served::Value(value)) {
                        unclaimed.push(value);
                    }
                }
                None => unserved.push(take),
            }
        }
        unclaimed.extend(values);
        push_back_later(source, unclaimed);
        if let Some(slot) = self.slot.take() {
            slot.requeue(unserved);
        }
        own
    }
}

impl Drop for WaitBatch {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            slot.requeue(std::mem::take(&mut self.joined));
        }
    }
}
