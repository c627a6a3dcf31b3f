//! `QueueHandle<T>`: the part every queue handle is made of, and what the
//! three handle types do alike, written once.
//!
//! [`DelayedQueue`](crate::DelayedQueue), [`BlockingQueue`](crate::BlockingQueue)
//! and [`ReliableQueue`](crate::ReliableQueue) each embed one: the client's
//! core, the queue's keys, the codec, and whether the handle runs the
//! transfer. Here are their transfer switches (`with_transfer`,
//! `without_transfer`, `transfers`) and the stream of takes (`stream`);
//! removal by value (`remove`, `remove_all`) is in `by_value.rs`. The public
//! methods stay on each type, with its own docs, and call these.

use std::borrow::Borrow;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use fred::interfaces::{HashesInterface, KeysInterface};
use fred::types::{Key, Value};
use futures_util::stream::{self, Stream};

use crate::connection::durable::{Durability, Watch};
use crate::connection::request::Request;
use crate::connection::script::Script;
use crate::error::{CommandResult, Error, Result};
use crate::queue::priority::Marker;
use crate::queue::transferring::Transferring;
use crate::queue::Core;
use crate::wire::codec::{self, Codec};
use crate::wire::keys::QueueKeys;

/// Pause of a stream of takes after an error, so that it never spins (a
/// value no one here can read stays at the head of a blocking queue; a
/// reliable one goes back, where each delivery counts towards the
/// dead-letter limit).
const ERROR_PAUSE: Duration = Duration::from_secs(1);

/// Longest a look for the priority marker holds a take.
const MARKER_LOOK: Duration = Duration::from_secs(1);

/// How long a first look (marker, limit) may hold a take: a second, or
/// half the time left to `deadline`.
fn look_within(deadline: Option<tokio::time::Instant>) -> Duration {
    let within = deadline.map_or(MARKER_LOOK, |at| {
        at.saturating_duration_since(tokio::time::Instant::now()) / 2
    });
    within.min(MARKER_LOOK)
}

/// One handle's share of its queue: clones share everything, the
/// transfer registration included.
pub(crate) struct QueueHandle<T> {
    pub core: Arc<Core>,
    pub keys: Arc<QueueKeys>,
    pub codec: Arc<dyn Codec<T>>,
    /// What the client knows of the queue's priority marker.
    pub priorities: Arc<Marker>,
    /// How many replicas its writes wait for (`connection/durable.rs`):
    /// the client's, unless `with_durability` changed it.
    pub durability: Option<Durability>,
    transferring: Transferring,
}

impl<T> Clone for QueueHandle<T> {
    fn clone(&self) -> Self {
        QueueHandle {
            core: self.core.clone(),
            keys: self.keys.clone(),
            codec: self.codec.clone(),
            priorities: self.priorities.clone(),
            durability: self.durability,
            transferring: self.transferring.clone(),
        }
    }
}

impl<T: 'static> QueueHandle<T> {
    /// A handle that does not transfer.
    pub(super) fn new(core: Arc<Core>, keys: Arc<QueueKeys>, codec: Arc<dyn Codec<T>>) -> Self {
        let priorities = core.priority_marker(keys.destination());
        QueueHandle {
            durability: core.durability(),
            core,
            keys,
            codec,
            priorities,
            transferring: Transferring::default(),
        }
    }

    /// Whether the queue has priority values to look at (see
    /// `priority::Marker::marked`: the first look waits at most a second,
    /// or half the time to `deadline`; later ones never hold the caller).
    pub(crate) async fn marked(&self, deadline: Option<tokio::time::Instant>) -> bool {
        (self.priorities)
            .marked(&self.core, &self.keys, look_within(deadline))
            .await
    }

    /// Whether the queue has a concurrency limit (`priority::Marker::limited`;
    /// the first look waits as for [`marked`](Self::marked)).
    pub(crate) async fn limited(&self, deadline: Option<tokio::time::Instant>) -> bool {
        (self.priorities)
            .limited(&self.core, &self.keys, look_within(deadline))
            .await
    }

    /// Whether the queue had priority values or groups at the last look,
    /// without waiting for one.
    pub(crate) fn marked_now(&self) -> bool {
        self.priorities.marked_now()
    }

    /// Whether the queue had a concurrency limit at the last look, without
    /// waiting for one.
    pub(crate) fn limited_now(&self) -> bool {
        self.priorities.limited_now(&self.core, &self.keys)
    }

    /// A claim answered the room its concurrency limit had left (`None`:
    /// no limit; `Some(0)` for a `full` answer).
    pub(crate) fn limit_room(&self, room: Option<i64>) {
        self.priorities.set_room(room);
    }

    /// The room the concurrency limit had left at the last claim, if the
    /// queue has a limit (as [`limited_now`](Self::limited_now) knows it).
    pub(crate) fn room_now(&self) -> Option<i64> {
        self.limited_now().then(|| self.priorities.room())
    }

    /// The destination queue's name.
    pub(super) fn name(&self) -> &str {
        self.keys.destination()
    }

    /// Turns the transfer on for this handle, now (`with_transfer`).
    pub(super) fn with_transfer(&mut self) {
        self.transferring.on(&self.core, &self.keys);
    }

    /// Turns it off for this handle (`without_transfer`); other handles of
    /// the queue keep theirs.
    pub(super) fn without_transfer(&mut self) {
        self.transferring.off();
    }

    /// Whether this handle runs the transfer (`transfers`).
    pub(super) fn transfers(&self) -> bool {
        self.transferring.is_on()
    }

    /// Transferring from the handle's first operation, or 250 ms after it
    /// was made (see `transferring.rs`).
    pub(super) fn transfer_once_used(&mut self) {
        self.transferring = Transferring::wanted(&self.core, &self.keys);
    }

    /// Registers the queue with the scheduler if this handle transfers and
    /// has not yet (at its operations).
    pub(super) fn arm(&self) {
        self.transferring.arm(&self.core, &self.keys);
    }

    /// A connection for one command; the first one of a handle that
    /// transfers registers its queue with the scheduler.
    pub(super) fn conn(&self) -> Result<&fred::clients::Client> {
        self.arm();
        self.core.conn()
    }

    /// Whether the queue is paused (`EXISTS` on its flag).
    pub(super) async fn is_paused(&self) -> Result<bool> {
        let n: i64 = self.conn()?.exists(self.keys.paused()).await.on_key(self.name())?;
        Ok(n == 1)
    }

    /// Whether the queue's consumers must wait: it is paused, or its takes
    /// are switched off (`DelayedQueue::set_limits`). One round trip.
    pub(super) async fn takes_held(&self) -> Result<bool> {
        let conn = self.conn()?;
        let pipeline = conn.pipeline();
        let _: () = pipeline.exists(self.keys.paused()).await.on_key(self.name())?;
        let _: () = pipeline.hget(self.keys.limits(), "takes").await.on_key(self.name())?;
        let (paused, takes): (i64, Option<String>) = pipeline.all().await.on_key(self.name())?;
        Ok(paused == 1 || takes.as_deref() == Some("off"))
    }

    /// Encodes `values` with the codec (no size check: for values looked
    /// for, not written).
    pub(super) fn encode_all<I, B>(&self, values: I) -> Result<Vec<Bytes>>
    where
        I: IntoIterator<Item = B>,
        B: Borrow<T>,
    {
        values
            .into_iter()
            .map(|v| codec::encode(&*self.codec, v.borrow()))
            .collect()
    }

    /// Runs a script that removes values by value or moves them as a
    /// [`Request`]: fred's resend of it changes nothing, and a call whose
    /// reply is lost for good fails with [`Error::OutcomeUnknown`].
    pub(super) async fn request(&self, script: &'static Script, keys: Vec<Key>, args: Vec<Value>) -> Result<Value> {
        Ok(Request::new(self.name())
            .apply(self.conn()?, self.core.settling(), script, keys, args)
            .await?)
    }

    /// [`request`](Self::request), then, with the handle's durability,
    /// the wait for the replicas on the connection it went through
    /// (`connection/durable.rs`).
    pub(super) async fn durable_request(
        &self,
        script: &'static Script,
        keys: Vec<Key>,
        args: Vec<Value>,
    ) -> Result<Value> {
        let Some(durable) = self.core.durable(self.durability) else {
            return self.request(script, keys, args).await;
        };
        let conn = self.conn()?;
        let watch = Watch::of(conn);
        let value = Request::new(self.name())
            .apply(conn, self.core.settling(), script, keys, args)
            .await?;
        durable.confirm_run(conn, &watch, script, self.name()).await?;
        Ok(value)
    }

    /// `queue`'s takes as an endless stream (`stream`): `take` takes one and
    /// hands the queue back. It ends after the client shuts down; after any
    /// other error (bad data, a key of the wrong type) it waits a second
    /// before it takes again, so that it never spins.
    pub(super) fn stream<Q, V, F, Fut>(
        &self,
        queue: Q,
        take: F,
    ) -> impl Stream<Item = Result<V>> + Send + 'static + use<Q, V, F, Fut, T>
    where
        Q: Send + 'static,
        V: Send + 'static,
        F: Fn(Q) -> Fut + Copy + Send + 'static,
        Fut: Future<Output = (Q, Result<V>)> + Send,
    {
        stream::unfold(
            (queue, self.core.clone(), false),
            move |(queue, core, backoff)| async move {
                if backoff {
                    tokio::select! {
                        _ = tokio::time::sleep(ERROR_PAUSE) => {}
                        _ = core.shutdown_begun() => return None,
                    }
                }
                match take(queue).await {
                    (_, Err(Error::Shutdown)) => None,
                    (queue, Err(error)) => Some((Err(error), (queue, core, true))),
                    (queue, Ok(item)) => Some((Ok(item), (queue, core, false))),
                }
            },
        )
    }
}
