//! Scripts that remove or give back values, made safe to send again.
//!
//! fred resends a command whose connection dropped before its reply came
//! (`max_command_attempts`), and the first send may have run: a drain run
//! twice removes twice as much, and the first batch is gone. Each such call
//! here is a [`Request`] with a key of its own (`delayq_request:{N}:<id>`,
//! see `lua/lib/request.lua`): the first run stores its reply there, and a
//! resend returns that reply and changes nothing.
//!
//! When the caller never gets the reply (fred gave up while the connection
//! stayed down, or the caller stopped waiting), the request is cancelled in
//! the background: a first run that arrives late does nothing, and if it had
//! run, what it removed goes back where it was — for the requests that say
//! how (drain, remove_first, remove_pending). Those that cannot be undone exactly
//! (a removal by value, a move to another list) report
//! [`Error::OutcomeUnknown`](crate::Error::OutcomeUnknown) instead.
//!
//! A [`Sequence`] is one request made of many runs (a bulk offer's chunks):
//! every run carries its key, which records how far the whole call got.
//!
//! A [`Lane`] numbers runs of scripts that are harmless to repeat but run
//! far too often for a request key each (transfers, sweep windows, reaps):
//! a resend answers as its first run did when that run changed something.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fred::interfaces::KeysInterface;
use fred::types::{Expiration, Key, Value};

use crate::connection::script::{Resend, Script, ScriptError, SCRIPTS};
use crate::connection::settling::Settling;
use crate::wire::keys::{request_key, QueueKeys};

/// How long [`Request::apply_retrying`] retries through connection failures.
const APPLY_RETRYING_FOR: Duration = Duration::from_secs(30);

/// How long a cancel keeps trying to reach Redis. What a request removed
/// stays in its record for a day, so it can still be put back after an
/// outage this long.
const CANCEL_RETRY_FOR: Duration = Duration::from_secs(600);

/// How long the "consumed" mark of a read reply lives: a copy of the
/// request still in flight on a dropped connection finds it and does
/// nothing (`lua/lib/request.lua`).
const CONSUMED_TTL: Duration = Duration::from_secs(60);

/// `cmsgpack.pack({'consumed'})`: the record of a request whose reply was read.
const CONSUMED: &[u8] = b"\x91\xa8consumed";

/// What a cancel found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cancelled {
    /// The request had not run; now it never will.
    NotRun,
    /// It had run, and what it removed is back.
    Undone,
    /// It had run and has nothing to undo (its effect stands).
    Ran,
}

/// One call of a request-keyed script.
pub(crate) struct Request {
    key: String,
    /// The queue (or list) it runs on, for its errors.
    queue: String,
}

impl Request {
    /// A new request on the queue (or list) `name` (a random 128-bit id).
    pub(crate) fn new(name: &str) -> Request {
        Request {
            key: new_key(name),
            queue: name.to_owned(),
        }
    }

    /// Appends the request key to a request-keyed script's `keys`.
    fn append_to(&self, script: &Script, keys: &mut Vec<Key>) {
        debug_assert_eq!(script.resend, Resend::Safe, "{} is request-keyed", script.name);
        keys.push(Key::from(self.key.as_str()));
    }

    /// Runs `script`, which removes values, with this request's key after
    /// `keys` (the script's last KEY). fred may resend it. Unless the reply
    /// arrives — on a connection failure, or when the caller drops this
    /// future — the request is cancelled in the background (counted in
    /// `settling`, so that shutdown waits for it), which puts back what it
    /// removed: a lost reply is a transient error, not an unknown outcome.
    pub(crate) async fn remove(
        self,
        conn: &fred::clients::Client,
        settling: &Arc<Settling>,
        script: &'static Script,
        mut keys: Vec<Key>,
        args: Vec<Value>,
    ) -> Result<Value, ScriptError> {
        self.append_to(script, &mut keys);
        let Request { key, queue } = self;
        let mut unanswered = CancelUnlessAnswered {
            conn: conn.clone(),
            keys: Some(keys.clone()),
            settling: settling.clone(),
        };
        match script.run(conn, &queue, keys, args).await {
            Ok(reply) => {
                unanswered.keys = None;
                consumed(conn.clone(), key);
                Ok(reply)
            }
            Err(error) if !error.may_have_run() => {
                // Redis answered with an error: the script changed nothing.
                unanswered.keys = None;
                Err(error)
            }
            Err(error) => {
                tracing::debug!(script = script.name, %error, "request failed; cancelling it");
                Err(error)
            }
        }
    }

    /// Runs `script`, whose effect cannot be undone (a removal by value, a
    /// move to another list), like [`remove`](Self::remove); a call whose
    /// reply never came fails with [`Error::OutcomeUnknown`](crate::Error::OutcomeUnknown).
    pub(crate) async fn apply(
        self,
        conn: &fred::clients::Client,
        settling: &Arc<Settling>,
        script: &'static Script,
        keys: Vec<Key>,
        args: Vec<Value>,
    ) -> Result<Value, ScriptError> {
        self.remove(conn, settling, script, keys, args)
            .await
            .map_err(ScriptError::unrepeatable)
    }

    /// Runs `script` (one that gives values back: a restore, a push back,
    /// a nack) with this request's key after `keys`, retrying through
    /// connection failures for up to 30 s: the same request applies once
    /// however often it is sent. Runs in a task of its own, so a caller that
    /// stops waiting does not stop it. A reply still lost after that fails
    /// with [`Error::OutcomeUnknown`](crate::Error::OutcomeUnknown).
    pub(crate) async fn apply_retrying(
        self,
        conn: &fred::clients::Client,
        settling: &Arc<Settling>,
        script: &'static Script,
        mut keys: Vec<Key>,
        args: Vec<Value>,
    ) -> Result<Value, ScriptError> {
        self.append_to(script, &mut keys);
        let conn = conn.clone();
        let counted = settling.enter();
        let Request { key, queue } = self;
        let on = queue.clone();
        let applying = tokio::spawn(async move {
            let deadline = tokio::time::Instant::now() + APPLY_RETRYING_FOR;
            let result = loop {
                // Each try ends by the deadline: while Redis is out of reach
                // it would wait in fred's queue for as long as that lasts.
                // One given up on and run later applies once all the same.
                let tried = tokio::time::timeout_at(deadline, script.run(&conn, &queue, keys.clone(), args.clone()));
                let tried = tried.await.unwrap_or_else(|_| {
                    let late = "Redis did not answer a give-back in time";
                    let late = fred::error::Error::new(fred::error::ErrorKind::Timeout, late);
                    Err(ScriptError::new(late, script, &queue))
                });
                match tried {
                    Ok(reply) => {
                        consumed(conn.clone(), key);
                        break Ok(reply);
                    }
                    Err(error) if error.may_have_run() && tokio::time::Instant::now() < deadline => {
                        tracing::debug!(script = script.name, %error, "give-back failed; retrying");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    Err(error) => break Err(error.unrepeatable()),
                }
            };
            drop(counted);
            result
        });
        applying.await.unwrap_or_else(|join| {
            let ended = fred::error::Error::new(
                fred::error::ErrorKind::Canceled,
                format!("give-back task ended: {join}"),
            );
            Err(ScriptError::new(ended, script, &on).unrepeatable())
        })
    }
}

/// A new request key on the queue (or list) `name`: a random 128-bit id.
fn new_key(name: &str) -> String {
    let id = format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));
    request_key(name, &id)
}

/// Cancels its request when dropped still armed: the caller never saw the
/// reply (a connection failure, or the caller stopped waiting).
struct CancelUnlessAnswered {
    conn: fred::clients::Client,
    keys: Option<Vec<Key>>,
    settling: Arc<Settling>,
}

impl Drop for CancelUnlessAnswered {
    fn drop(&mut self) {
        if let Some(keys) = self.keys.take() {
            cancel_in_background(self.conn.clone(), keys, &self.settling, true);
        }
    }
}

/// One request made of many script runs, all carrying its key (a bulk
/// offer's chunks: `lua/offer_all.lua` keeps the call's progress there, so
/// a resent or late run repeats nothing).
///
/// Dropped before [`finish`](Self::finish) (the call failed, or its caller
/// stopped waiting), it is cancelled in the background: a run still on its
/// way finds the mark and does nothing, so what the call did stops changing.
pub(crate) struct Sequence {
    key: String,
    conn: fred::clients::Client,
    settling: Arc<Settling>,
    finished: bool,
}

impl Sequence {
    /// A new sequence on the queue `name`, run on `conn`.
    pub(crate) fn new(name: &str, conn: &fred::clients::Client, settling: &Arc<Settling>) -> Sequence {
        Sequence {
            key: new_key(name),
            conn: conn.clone(),
            settling: settling.clone(),
            finished: false,
        }
    }

    /// The key each run takes among its KEYS.
    pub(crate) fn key(&self) -> Key {
        Key::from(self.key.as_str())
    }

    /// Every run's reply was read: the record becomes the short-lived
    /// "consumed" mark, which a copy still in flight obeys.
    pub(crate) fn finish(mut self) {
        self.finished = true;
        consumed(self.conn.clone(), std::mem::take(&mut self.key));
    }
}

impl Drop for Sequence {
    fn drop(&mut self) {
        if !self.finished {
            cancel_in_background(self.conn.clone(), vec![self.key()], &self.settling, false);
        }
    }
}

/// Runs of one client, numbered, at most one at a time per queue (the
/// transfer scheduler's, one reaper's, one `transfer_now` or `reap_now`
/// call's), of scripts that are harmless to run twice but would answer
/// only what the second run did: the first run's counts would be lost.
///
/// Each run takes its lane's record key on the queue (`delayq_runs:{N}:<lane>`)
/// and its id; a run that changed something leaves its reply there in place
/// of the lane's previous one (`lua/lib/request.lua`), for 60 s. So a lane
/// costs one small key per queue it changed in the last minute, and a run
/// that changes nothing writes nothing; a resend of it runs again and
/// answers what it does then, which is right as well.
pub(crate) struct Lane {
    token: Arc<str>,
    runs: AtomicU64,
}

impl Lane {
    /// A new lane (a random 64-bit token).
    pub(crate) fn new() -> Lane {
        Lane {
            token: Arc::from(format!("{:016x}", fastrand::u64(..))),
            runs: AtomicU64::new(0),
        }
    }

    /// The lane's next run on `keys`' queue.
    pub(crate) fn next(&self, keys: &QueueKeys) -> LaneRun {
        LaneRun {
            record: keys.runs(&self.token),
            id: self.runs.fetch_add(1, Ordering::Relaxed) + 1,
            lane: self.token.clone(),
        }
    }
}

/// One run of a [`Lane`]: the record key and the run's id that its script
/// takes (as its last KEY and ARGV).
#[derive(Debug, Clone)]
pub(crate) struct LaneRun {
    record: String,
    id: u64,
    lane: Arc<str>,
}

impl LaneRun {
    /// The lane's record key on the queue.
    pub(crate) fn record(&self) -> Key {
        Key::from(self.record.as_str())
    }

    /// The run's id, as the script's argument.
    pub(crate) fn id(&self) -> Value {
        Value::from(self.id as i64)
    }

    /// The token of its lane: names the client among others (the scheduler's
    /// lane holds the queue's sweep lease under it).
    pub(crate) fn lane(&self) -> &str {
        &self.lane
    }
}

/// Replaces a request's stored reply, once read, by a small mark that
/// expires: a copy of the request still in flight on a dropped connection
/// must find it and not run again.
fn consumed(conn: fred::clients::Client, key: String) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move {
            let mark = Expiration::PX(CONSUMED_TTL.as_millis() as i64);
            let _: Result<(), _> = conn.set(key, CONSUMED, Some(mark), None, false).await;
        });
    }
}

/// Cancels a request in a task, retrying while Redis is unreachable.
/// `ran_is_news`: whether finding that it ran is worth a warning (a single
/// request's lost reply), or expected (a sequence given up part way).
fn cancel_in_background(conn: fred::clients::Client, keys: Vec<Key>, settling: &Arc<Settling>, ran_is_news: bool) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let counted = settling.enter();
    runtime.spawn(async move {
        let deadline = tokio::time::Instant::now() + CANCEL_RETRY_FOR;
        let mut pause = Duration::from_millis(50);
        loop {
            match cancel(&conn, keys.clone()).await {
                Ok(Cancelled::Undone) => {
                    tracing::info!(request = ?keys.last(), "a request whose reply was lost had run; what it removed is back");
                    break;
                }
                Ok(Cancelled::Ran) if ran_is_news => {
                    tracing::warn!(request = ?keys.last(), "a request whose reply was lost had run; its effect stands");
                    break;
                }
                Ok(Cancelled::Ran) => break,
                Ok(Cancelled::NotRun) => break,
                Err(error) if tokio::time::Instant::now() < deadline => {
                    tracing::debug!(%error, "cancelling a request failed; retrying");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(5));
                }
                Err(error) => {
                    tracing::error!(request = ?keys.last(), %error, "could not cancel a request; what it removed stays in its request key for a day");
                    break;
                }
            }
        }
        drop(counted);
    });
}

/// Runs `lua/cancel_request.lua` once.
async fn cancel(conn: &fred::clients::Client, keys: Vec<Key>) -> Result<Cancelled, ScriptError> {
    let request = keys.last().map(|k| k.as_str_lossy().into_owned()).unwrap_or_default();
    match SCRIPTS.cancel_request.run(conn, &request, keys, Vec::new()).await? {
        Value::Integer(1) => Ok(Cancelled::Undone),
        Value::Integer(2) => Ok(Cancelled::Ran),
        _ => Ok(Cancelled::NotRun),
    }
}
