//! Commands that take a value out of Redis, made safe to cancel.
//!
//! A future dropped while it awaits a pop (`tokio::time::timeout(take())`, a
//! `select!` branch that lost) would drop the reply with it, and the value
//! the server popped would be gone. A [`Detached`] command runs inline while
//! its caller waits (no task, no channel: takes stay as fast as a plain
//! await); if the caller stops waiting first, the command is finished in a
//! task of its own and what it took is given back.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use fred::prelude::Options;
use fred::types::Value;

use crate::connection::request::Request;
use crate::connection::script::SCRIPTS;
use crate::connection::settling::Settling;
use crate::wire::keys::KeyRole;

/// What a [`Detached`] command does with a reply its caller stopped waiting
/// for: undoes the take, putting what it took back where it came from. A
/// closure holding the connection and keys it needs, kept inline in the
/// [`Detached`] (no allocation while the caller waits; its future is boxed
/// only when it runs, after a caller stopped waiting).
pub(crate) trait OnAbandon<T>: Send + 'static {
    fn undo(self, reply: T) -> Pin<Box<dyn Future<Output = ()> + Send>>;
}

impl<T, F, Fut> OnAbandon<T> for F
where
    F: FnOnce(T) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    fn undo(self, reply: T) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        Box::pin(self(reply))
    }
}

/// Pushes values back at the head of `key`, in their original order: values
/// that did not decode, or that were popped for a caller that is gone. Sent
/// as a request (see `request`), so a resend never pushes a value twice, and
/// in a task counted by `settling`, so a caller that stops waiting does not
/// stop it and shutdown waits for it.
pub(crate) async fn push_back(
    conn: &fred::clients::Client,
    settling: &Arc<Settling>,
    key: &str,
    raw: Vec<Bytes>,
) -> bool {
    let args = raw.into_iter().map(Value::Bytes).collect();
    let pushed = Request::new(key)
        .apply_retrying(
            conn,
            settling,
            &SCRIPTS.push_back,
            SCRIPTS.push_back.given_keys().with(KeyRole::List, key).build(),
            args,
        )
        .await;
    match pushed {
        Ok(_) => true,
        Err(error) => {
            tracing::error!(queue = key, %error, "could not put values back at the head of the list");
            false
        }
    }
}

/// Moves a value that was moved from the `from` end (`LEFT`/`RIGHT`) of
/// `source` to the `to` end of `destination`, for a caller that is gone,
/// back where it came from (`undo_move.lua`; nothing if it is no longer there).
pub(crate) async fn undo_move(
    conn: &fred::clients::Client,
    source: &str,
    destination: &str,
    value: Bytes,
    from: &'static str,
    to: &'static str,
) -> bool {
    let keys = SCRIPTS
        .undo_move
        .given_keys()
        .with(KeyRole::Source, source)
        .with(KeyRole::Target, destination)
        .build();
    let args = vec![Value::Bytes(value), Value::from(from), Value::from(to)];
    match SCRIPTS.undo_move.run(conn, source, keys, args).await {
        Ok(_) => true,
        Err(error) => {
            tracing::error!(queue = source, %error, "could not give back a value moved for a cancelled take");
            false
        }
    }
}

/// How long an abandoned command may take to end and give its value back,
/// unless it says otherwise ([`Detached::within`]). Enough for requests
/// (`request`): one run late cannot harm, as its cancel outlives it.
const ABANDON_TIMEOUT: Duration = Duration::from_secs(5);

/// Options of a plain pop (`LPOP`, `LMOVE`) on the shared connections:
/// - sent once: a resent pop could pop twice;
/// - `fail_fast`: while the connection is down it fails at once, not
///   queued in fred until Redis is back, when no one may be waiting for it
///   any more (its value would be popped for no one).
///
/// No deadline of fred's: a pop fred gave up on after writing it would
/// still run, and its value would be lost with the reply. A caller with a
/// deadline stops waiting instead ([`Detached`] gives back what the pop
/// took), and an abandoned pop is awaited until fred answers or fails it
/// ([`Detached::until_answered`]): one queued in fred just as the
/// connection broke is never dropped, so never written later for no one.
pub(crate) fn pop_options() -> Options {
    Options {
        max_attempts: Some(1),
        fail_fast: true,
        ..Options::default()
    }
}

/// How long past its deadline a caller waits for the reply of a pop before
/// it gives up on the connection: a pop answers in well under a
/// millisecond, so only a stalled connection takes this long.
const STALLED_AFTER: Duration = Duration::from_secs(1);

/// `pop` (a [`Detached`] command, so cancel safe: a value it takes after
/// all is given back), given up [`STALLED_AFTER`] `deadline` with an error
/// the caller can tell from "empty".
pub(crate) async fn until<T>(
    deadline: Option<tokio::time::Instant>,
    pop: impl Future<Output = crate::error::Result<T>>,
) -> crate::error::Result<T> {
    let Some(at) = deadline else { return pop.await };
    let stalled = "no reply to a pop in time: the connection seems stalled";
    super::by_deadline(at + STALLED_AFTER, stalled, pop).await
}

/// A command's future, boxed by the caller where it is written: fred's
/// command futures are large (~7 KB), and one boxed there is copied once,
/// one moved into a function that boxes it twice (a take's fast path runs
/// this once per value).
pub(crate) type Command<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// A command whose reply is read by its caller, or else undone.
pub(crate) struct Detached<T: Send + 'static, G: OnAbandon<T>> {
    /// `None` once it has ended and its reply went somewhere. Boxed so that
    /// a dropped caller can hand it, already running, to a task.
    command: Option<Command<T>>,
    undo: Option<G>,
    settling: Arc<Settling>,
    /// How long it may run on once abandoned (see [`within`](Self::within)).
    within: Duration,
}

/// Wraps `command`, which must take its value in one step (one command or
/// script) and be safe to finish in the background (counted by `settling`).
pub(crate) fn detach<T, G>(command: Command<T>, undo: G, settling: &Arc<Settling>) -> Detached<T, G>
where
    T: Send + 'static,
    G: OnAbandon<T>,
{
    Detached {
        command: Some(command),
        undo: Some(undo),
        settling: settling.clone(),
        within: ABANDON_TIMEOUT,
    }
}

impl<T: Send + 'static, G: OnAbandon<T>> Detached<T, G> {
    /// A command that fred itself ends within `fred_timeout` (its
    /// `Options::timeout`): once abandoned it is awaited a little longer
    /// than that. Dropped sooner, fred would not know that no one waits: a
    /// command still queued (the connection reconnecting) would be written
    /// later and pop a value for no one.
    pub(crate) fn within(mut self, fred_timeout: Duration) -> Self {
        self.within = self.within.max(fred_timeout.saturating_add(Duration::from_secs(1)));
        self
    }

    /// A command without a deadline of fred's (see [`pop_options`]): once
    /// abandoned it is awaited until fred answers or fails it (at the
    /// latest when the connection fails or the client quits).
    pub(crate) fn until_answered(mut self) -> Self {
        self.within = Duration::MAX;
        self
    }

    /// Runs the command to its end and returns its reply. The reply goes
    /// straight to the caller in the poll that completes the command, so no
    /// cancellation can fall between the two.
    pub(crate) async fn reply(&mut self) -> T {
        let command = self.command.as_mut().expect("a reply is read once");
        let reply = command.await;
        self.command = None;
        reply
    }

    /// Stops waiting: finishes the command and undoes it (the caller counts
    /// this in `settling`).
    pub(crate) async fn abandon(mut self) {
        if let (Some(command), Some(undo)) = (self.command.take(), self.undo.take()) {
            finish(command, undo, self.within).await;
        }
    }
}

impl<T: Send + 'static, G: OnAbandon<T>> Drop for Detached<T, G> {
    fn drop(&mut self) {
        if let (Some(command), Some(undo)) = (self.command.take(), self.undo.take())
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let (counted, within) = (self.settling.enter(), self.within);
            runtime.spawn(async move {
                finish(command, undo, within).await;
                drop(counted);
            });
        }
    }
}

/// Runs an abandoned command to its end and undoes it.
async fn finish<T, G: OnAbandon<T>>(command: Command<T>, undo: G, within: Duration) {
    let reply = match within {
        Duration::MAX => Ok(command.await),
        within => tokio::time::timeout(within, command).await,
    };
    if let Ok(reply) = reply {
        undo.undo(reply).await;
    }
}
