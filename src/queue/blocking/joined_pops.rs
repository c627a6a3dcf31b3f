//! Concurrent takes of one queue in one process, joined into `LPOP key n`.
//!
//! Each `LPOP` costs a round trip through fred (its router task, a write,
//! a read, a reply channel): with a few takes at once that, not Redis, was
//! the limit. A few pops of a queue may be in flight at once ([`POPS`]),
//! each for the take that sent it, as when takes pop alone. A take that finds
//! them all busy waits; when a pop ends, its slot passes to the first take
//! waiting, which pops for itself and for every take waiting then, with one
//! `LPOP key n`. Nothing is popped ahead of a take: each value goes to a
//! take waiting for one, and a value whose take stopped waiting goes back to
//! the head of the list. A take left without a value (the list ran short)
//! waits with `BLPOP`, as after an empty `LPOP`.

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::connection::detached::push_back;
use crate::connection::settling::Settling;

/// `LPOP`s of one queue in flight at once. Up to this many takes each pop
/// alone, pipelined on one connection, as fred's own `LPOP`s would be;
/// joining only pays once more takes than this are waiting. Measured
/// (`--only takes`, 2026-11-25): with 2, joining at 4 takes cost more
/// hand-offs than it saved (0.55× `redis-benchmark -c 4`, against 0.66×
/// alone); 8 gave 16 takers 203k/s against 135k/s with 2, and 16 no more.
pub(super) const POPS: usize = 8;
/// Most takes one pop serves (its cost in Redis grows with the count).
const MOST_JOINED: usize = 100;

/// The takes of one queue (shared by a handle's clones).
pub(super) struct JoinedPops {
    slots: Mutex<Slots>,
    /// Pops (or waits) in flight at once.
    at_once: usize,
}

/// The slots of one queue's pops: how many are held, and the takes in line
/// for one.
#[derive(Default)]
struct Slots {
    /// Pops in flight, or whose slot is on its way to a waiting take.
    popping: usize,
    waiting: VecDeque<InLine>,
}

/// A take waiting in line: where to send what it is served, and until when
/// it waits (`None`: for as long as it takes).
pub(super) struct InLine {
    pub take: oneshot::Sender<Served>,
    pub until: Option<Instant>,
}

/// What a waiting take is told.
pub(super) enum Served {
    /// Its value.
    Value(Bytes),
    /// The pop found no value for it.
    Empty,
    /// The pop failed (fred's error, which clones).
    Failed(fred::error::Error),
    /// A slot is free: pop, for itself and for those waiting.
    Lead,
}

/// What entering gave a take: a slot to pop with now, or a place in line
/// (see `joined_waits::Waited` for how a wait in line ends).
pub(super) enum Entry {
    /// Pop: alone, or with the takes waiting (see [`Slot::joined`]).
    Pop(Slot),
    Wait(Waiting),
}

/// Where pops and give-backs go.
#[derive(Clone)]
pub(super) struct Source {
    pub conn: fred::clients::Client,
    pub settling: Arc<Settling>,
    pub key: String,
}

impl Source {
    /// Values of `key` given back through `conn`, counted by `settling`.
    pub(super) fn new(conn: &fred::clients::Client, settling: &Arc<Settling>, key: &str) -> Source {
        Source {
            conn: conn.clone(),
            settling: settling.clone(),
            key: key.to_owned(),
        }
    }
}

impl JoinedPops {
    /// Takes that pop (or wait) with up to `at_once` commands in flight.
    pub(super) fn new(at_once: usize) -> Arc<JoinedPops> {
        Arc::new(JoinedPops {
            slots: Mutex::default(),
            at_once,
        })
    }

    /// A slot to pop, or a place in the queue of waiting takes, for a take
    /// that waits `until` then (`source`, made only then, is where a value
    /// served too late goes back).
    pub(super) fn enter(self: &Arc<Self>, source: impl FnOnce() -> Source, until: Option<Instant>) -> Entry {
        let mut slots = self.slots.lock();
        if slots.popping < self.at_once {
            slots.popping += 1;
            Entry::Pop(Slot { pops: self.clone() })
        } else {
            let (tx, rx) = oneshot::channel();
            slots.waiting.push_back(InLine { take: tx, until });
            Entry::Wait(Waiting {
                served: rx,
                pops: self.clone(),
                source: source(),
            })
        }
    }

    /// A pop ended: its slot goes to the first take still waiting, or is freed.
    fn release(&self) {
        let mut slots = self.slots.lock();
        while let Some(next) = slots.waiting.pop_front() {
            if next.take.send(Served::Lead).is_ok() {
                return;
            }
        }
        slots.popping -= 1;
    }
}

/// The right to pop, held by one take until its pop has ended.
pub(super) struct Slot {
    pops: Arc<JoinedPops>,
}

impl Slot {
    /// The takes waiting now, to serve with this pop (they stop waiting
    /// for a slot of their own).
    pub(super) fn joined(&self) -> Vec<InLine> {
        let mut slots = self.pops.slots.lock();
        let mut joined = Vec::new();
        while joined.len() < MOST_JOINED {
            let Some(take) = slots.waiting.pop_front() else { break };
            // A take that stopped waiting gets nothing popped for it.
            if !take.take.is_closed() {
                joined.push(take);
            }
        }
        joined
    }

    /// Puts takes this slot's holder joined but could not serve back at the
    /// front of the line, in their order (a wait that ended with fewer
    /// values than takes; see `joined_waits`).
    pub(super) fn requeue(&self, takes: Vec<InLine>) {
        let mut slots = self.pops.slots.lock();
        for take in takes.into_iter().rev() {
            if !take.take.is_closed() {
                slots.waiting.push_front(take);
            }
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.pops.release();
    }
}

/// A pop for its take and the takes it joined. Its slot is freed when it
/// is dropped, after it served them.
pub(super) struct Batch {
    /// Held until the batch is dropped.
    pub _slot: Slot,
    pub joined: Vec<InLine>,
}

/// A batch dropped before it served its takes (its pop, finished in the
/// background for a caller that stopped waiting, ran out of time): each
/// take hears that the pop failed, and says that values may be lost, as
/// after a plain pop whose reply never came.
impl Drop for Batch {
    fn drop(&mut self) {
        for take in self.joined.drain(..) {
            let error = fred::error::Error::new(
                fred::error::ErrorKind::Timeout,
                "the pop serving this take was abandoned before its reply came",
            );
            let _ = take.take.send(Served::Failed(error));
        }
    }
}

impl Batch {
    /// Serves the joined takes from `popped` (head first, after the popping
    /// take's own value, which it returns if `caller_waits`); values left
    /// with no take to receive them go back to the head of the list, from a
    /// task of their own (so that a caller that stops waiting now loses
    /// nothing).
    pub(super) fn serve(
        mut self,
        source: &Source,
        popped: Result<Vec<Bytes>, fred::error::Error>,
        caller_waits: bool,
    ) -> Result<Option<Bytes>, fred::error::Error> {
        // The slot is freed on return, once every joined take has its answer.
        let joined = std::mem::take(&mut self.joined);
        let values = match popped {
            Ok(values) => values,
            Err(error) => {
                for take in joined {
                    let _ = take.take.send(Served::Failed(error.clone()));
                }
                return Err(error);
            }
        };
        let mut values = values.into_iter();
        let own = values.next();
        let mut unclaimed: Vec<Bytes> = own.iter().filter(|_| !caller_waits).cloned().collect();
        for take in joined {
            let Some(value) = values.next() else {
                let _ = take.take.send(Served::Empty);
                continue;
            };
            if let Err(Served::Value(value)) = take.take.send(Served::Value(value)) {
                unclaimed.push(value);
            }
        }
        unclaimed.extend(values);
        push_back_later(source, unclaimed);
        Ok(own.filter(|_| caller_waits))
    }
}

/// Puts `values` back at the head of the list, in order, from a task
/// counted by `settling` (shutdown waits for it).
pub(super) fn push_back_later(source: &Source, values: Vec<Bytes>) {
    if values.is_empty() {
        return;
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        tracing::error!(
            queue = source.key,
            count = values.len(),
            "no runtime left to give values back"
        );
        return;
    };
    let source = source.clone();
    let counted = source.settling.enter();
    drop(runtime.spawn(async move {
        push_back(&source.conn, &source.settling, &source.key, values).await;
        drop(counted);
    }));
}

/// A take waiting to be served. Dropped with a value already sent to it
/// (its caller stopped waiting just then) it puts the value back; dropped
/// with a slot passed to it, it passes the slot on.
pub(super) struct Waiting {
    served: oneshot::Receiver<Served>,
    pops: Arc<JoinedPops>,
    source: Source,
}

impl Waiting {
    /// What it was served; [`Served::Lead`] comes with the slot it names
    /// (held by the returned [`Slot`]).
    pub(super) async fn served(mut self) -> (Served, Option<Slot>) {
        match (&mut self.served).await {
            Ok(Served::Lead) => (
                Served::Lead,
                Some(Slot {
                    pops: self.pops.clone(),
                }),
            ),
            Ok(served) => (served, None),
            // Not reached in practice: a batch dropped unserved says `Failed`.
            Err(_) => (Served::Empty, None),
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        // Closed first: a send after this fails (the pop puts that value
        // back, or passes the slot on); one before it is here to take.
        self.served.close();
        match self.served.try_recv() {
            Ok(Served::Lead) => self.pops.release(),
            Ok(Served::Value(value)) => push_back_later(&self.source, vec![value]),
            _ => {}
        }
    }
}
