//! Dedicated connections for blocking reads.
//!
//! A blocking command (`BLPOP`, `BLMOVE`) holds its connection until it
//! returns, so each one runs on a connection of its own, taken from this pool
//! and given back when it ends. The command pool and the subscriber are never
//! used for blocking commands.

use std::sync::Arc;
use std::time::Duration;

use fred::clients::Client as FredClient;
use fred::interfaces::ClientInterface;
use fred::prelude::{Blocking, ClientLike, Options};
use fred::types::{Builder, ClientUnblockFlag, ClusterHash, CustomCommand, Value};
use futures_util::future::BoxFuture;
use parking_lot::Mutex;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::connection::detached::{detach, push_back, Command, Detached};
use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::connection::settling::{Settling, SettlingGuard};
use crate::error::{CommandResult, Error, Result};
use crate::wire::keys::KeyRole;

/// Idle connections kept for reuse; more are opened on demand.
const MAX_IDLE: usize = 64;

/// Longest a connection left opening by a take whose time ran out may take
/// to open before it is given up.
const PARK_LIMIT: Duration = Duration::from_secs(30);

/// Pause before retrying a blocking read whose connection failed (and a
/// take's priority pop, which waits the same way).
pub(crate) const RETRY_PAUSE: Duration = Duration::from_millis(100);
/// The pause before waiting again after a `TRYAGAIN` (a Cluster slot moving).
const SLOT_MOVING_PAUSE: Duration = Duration::from_millis(20);

pub(crate) struct BlockingPool {
    builder: Builder,
    /// Idle connections; shared with connections still opening for a take
    /// whose time ran out (see `park`).
    idle: Arc<Mutex<Idle>>,
    /// Bumped when every connection must be opened anew (a Sentinel
    /// failover: see `sentinel_watch`): waits in progress start over on a new
    /// connection, and connections of older epochs are closed, not reused.
    epoch: Arc<watch::Sender<u64>>,
    /// Leases out, so that shutdown can wait for blocked reads to end.
    leases: Arc<Settling>,
    /// Give-backs and closes of cancelled reads still running.
    settling: Arc<Settling>,
    /// Server-side timeout of one blocking command in a wait loop.
    pub timeout: Duration,
    pub shutdown: CancellationToken,
}

/// Idle connections and the epoch each was opened in; `closed` once the
/// pool closed them all (a connection that opens later is closed, not kept).
#[derive(Default)]
struct Idle {
    connections: Vec<(u64, FredClient)>,
    closed: bool,
}

impl Idle {
    /// Keeps `client`, opened in `epoch`, for reuse if the pool still takes
    /// connections back: not closed or shutting down, not full, and no
    /// failover since it opened (`current` is the pool's epoch now). Hands
    /// it back otherwise, for the caller to close.
    fn keep(&mut self, epoch: u64, current: u64, shutting_down: bool, client: FredClient) -> Option<FredClient> {
        if self.closed || shutting_down || self.connections.len() >= MAX_IDLE || epoch != current {
            return Some(client);
        }
        self.connections.push((epoch, client));
        None
    }
}

/// How the blocking reads of one queue fail, while they do: the last one
/// failed on its connection, and none has got a connection since. A take
/// whose time is up without a read of its own (in line behind another's)
/// returns it instead of "nothing came", as a take that read itself does.
#[derive(Default)]
pub(crate) struct Failing(Mutex<Option<fred::error::Error>>);

impl Failing {
    pub(crate) fn error(&self) -> Option<Error> {
        let failing = self.0.lock().clone();
        failing.map(|e| Error::Redis(crate::error::RedisError(e)))
    }

    fn set(&self, error: &Error) {
        let details = format!("blocking reads are failing: {error}");
        *self.0.lock() = Some(fred::error::Error::new(fred::error::ErrorKind::IO, details));
    }

    fn clear(&self) {
        *self.0.lock() = None;
    }
}

/// A connection checked out of the pool; returns to it when dropped, unless
/// it was [`discard`](Lease::discard)ed or dropped in the middle of a
/// blocking command (a cancelled `take()`): then the server is told to end
/// that command (`CLIENT UNBLOCK`, sent on another connection) before the
/// connection is closed, and a value the command popped anyway (the server
/// may pop one just before the unblock arrives) is put back where it was.
/// Closing alone is not enough: the server only sees the close after the
/// command, and the reply with the popped value would go nowhere.
pub(crate) struct Lease<'a> {
    pool: &'a BlockingPool,
    client: Option<FredClient>,
    epoch: u64,
    in_flight: Option<InFlight>,
    _out: SettlingGuard,
}

type Reply = std::result::Result<Value, fred::error::Error>;

/// What gives back a value a blocking command popped for a caller that is
/// gone (boxed: one type for every command).
type UndoRead = Box<dyn FnOnce(Reply) -> BoxFuture<'static, ()> + Send>;

/// A blocking command under way; a value it pops for a caller that is gone
/// is given back (see `detached`).
type InFlight = Detached<Reply, UndoRead>;

impl BlockingPool {
    pub(crate) fn new(
        mut builder: Builder,
        timeout: Duration,
        shutdown: CancellationToken,
        settling: Arc<Settling>,
    ) -> Self {
        // Anything sent to a connection while it blocks first unblocks it
        // with CLIENT UNBLOCK, so a blocked pop ends rather than holding on.
        builder.with_config(|config| config.blocking = Blocking::Interrupt);
        BlockingPool {
            builder,
            idle: Arc::default(),
            epoch: Arc::new(watch::Sender::new(0)),
            leases: Arc::default(),
            settling,
            timeout,
            shutdown,
        }
    }

    /// An idle connection, or a new one; waits for a new one to connect until
    /// `deadline` (or forever).
    pub(crate) async fn lease_until(&self, deadline: Option<Instant>) -> Result<Lease<'_>> {
        if self.shutdown.is_cancelled() {
            return Err(Error::Shutdown);
        }
        let epoch = *self.epoch.borrow();
        loop {
            let popped = self.idle.lock().connections.pop();
            match popped {
                Some((opened, client)) if opened == epoch => {
                    return Ok(Lease {
                        pool: self,
                        client: Some(client),
                        epoch,
                        in_flight: None,
                        _out: self.leases.enter(),
                    })
                }
                // Opened before a switch: may still be on the old master.
                Some((_, client)) => close_in_background(client, None),
                None => break,
            }
        }
        // Ended if this call is dropped while it connects (a take cut
        // short): fred's connection task would otherwise live on, holding a
        // connection nobody uses, one more for every such take.
        let mut opening = Opening::start(self.builder.build()?);
        let expired = async {
            match deadline {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            result = opening.connected() => result?,
            _ = expired => {
                self.park(opening, epoch);
                return Err(fred::error::Error::new(
                    fred::error::ErrorKind::Timeout,
                    "could not open a connection for a blocking read in time",
                )
                .into());
            }
            _ = self.shutdown.cancelled() => return Err(Error::Shutdown),
        }
        let client = opening.opened();
        Ok(Lease {
            pool: self,
            client: Some(client),
            epoch,
            in_flight: None,
            _out: self.leases.enter(),
        })
    }

    /// The handle that makes every connection be opened anew.
    pub(crate) fn epoch(&self) -> Arc<watch::Sender<u64>> {
        self.epoch.clone()
    }

    /// Options of one blocking command that waits up to `server_timeout` on
    /// the server: one attempt (a retried pop could pop twice), failing at
    /// once on a connection that is down (the wait retries on another), and
    /// a client-side deadline a little later, so a dead connection is noticed.
    pub(crate) fn command_options(&self, server_timeout: Duration) -> Options {
        Options {
            max_attempts: Some(1),
            // Not queued on a connection that is reconnecting: written after
            // a cancelled take's unblock, it would block for no one.
            fail_fast: true,
            timeout: Some(client_timeout(server_timeout)),
            ..Options::default()
        }
    }

    /// Runs the blocking `command` until it returns something other than nil,
    /// or `deadline` passes (`None`: forever). Each try waits at most
    /// [`timeout`](Self::timeout) on the server; `args` builds the arguments
    /// for a server-side wait of that many seconds. Connection failures are
    /// retried on a new connection; if the deadline passes while they last,
    /// the last one is returned, so "nothing came" and "unreachable" differ;
    /// `failing`, if given, hears of each failure and recovery as it happens.
    pub(crate) async fn wait(
        &self,
        command: &'static str,
        queue: &str,
        deadline: Option<Instant>,
        args: impl Fn(f64) -> Vec<Value>,
        failing: Option<&Failing>,
    ) -> Result<Option<Value>> {
        self.wait_while(command, queue, deadline, args, failing, || std::future::ready(true))
            .await
    }

    /// [`wait`](Self::wait), also ending with `Ok(None)` after a try that
    /// came back empty once `keep_waiting` says no (a queue's takes stop
    /// waiting on the list alone once it has priority values).
    pub(crate) async fn wait_while<F: Future<Output = bool>>(
        &self,
        command: &'static str,
        queue: &str,
        deadline: Option<Instant>,
        args: impl Fn(f64) -> Vec<Value>,
        failing: Option<&Failing>,
        keep_waiting: impl Fn() -> F,
    ) -> Result<Option<Value>> {
        let mut last_error: Option<Error> = None;
        loop {
            let wait = match deadline {
                None => self.timeout,
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return last_error.map_or(Ok(None), Err);
                    }
                    left.min(self.timeout)
                }
            };
            let mut leased = true;
            let outcome = match self.lease_until(deadline).await {
                Ok(mut lease) => {
                    failing.map(Failing::clear);
                    // Seconds with millisecond precision; 0 would mean forever.
                    let argv = args((wait.as_millis().max(1) as f64) / 1000.0);
                    let options = self.command_options(wait);
                    let mut epoch = self.epoch.subscribe();
                    if *epoch.borrow_and_update() != lease.epoch {
                        continue; // opened just before a switch: open another
                    }
                    let sent = tokio::select! {
                        out = lease.run(command, options, argv) => out,
                        _ = self.shutdown.cancelled() => return Err(Error::Shutdown),
                        // The lease is dropped busy: unblocked and closed.
                        _ = epoch.changed() => continue,
                    };
                    let outcome = sent.on_key(queue);
                    // TRYAGAIN is Redis's answer on a sound connection: keep it.
                    if outcome.as_ref().is_err_and(|e| !e.slot_moving()) {
                        lease.discard();
                    }
                    outcome
                }
                Err(error) => {
                    leased = false;
                    Err(error)
                }
            };
            if let (Some(failing), Err(error)) = (failing, &outcome)
                && !error.slot_moving()
            {
                // Not a connection that could not open before a deadline that
                // short: that says nothing about the server.
                let ran_out = !leased && deadline.is_some_and(|at| Instant::now() >= at);
                if error.is_transient() && !ran_out {
                    failing.set(error);
                }
            }
            match outcome {
                Ok(Value::Null) => {
                    last_error = None;
                    if !keep_waiting().await {
                        return Ok(None);
                    }
                }
                Ok(value) => return Ok(Some(value)),
                // A Cluster slot moving (BLMOVE's two keys only partly on the
                // node): it did not run; again on the same connection, soon.
                Err(error) if error.slot_moving() => {
                    // Not an error to report if time runs out: nothing came.
                    tracing::debug!(queue, command, %error, "slot moving; waiting again");
                    last_error = None;
                    tokio::select! {
                        _ = tokio::time::sleep(SLOT_MOVING_PAUSE) => {}
                        _ = self.shutdown.cancelled() => return Err(Error::Shutdown),
                    }
                }
                // The node became a replica (a failover) and ended the read
                // unrun, closing the connection: again on a new one, by the
                // slot's new primary.
                Err(error) if error.unblocked_by_failover() => {
                    tracing::debug!(queue, command, %error, "primary demoted; waiting again");
                    last_error = None;
                    tokio::select! {
                        _ = tokio::time::sleep(RETRY_PAUSE) => {}
                        _ = self.shutdown.cancelled() => return Err(Error::Shutdown),
                    }
                }
                Err(error) if error.is_transient() => {
                    tracing::warn!(queue, command, %error, "blocking read failed; retrying on a new connection (if Redis ran it and only its reply was lost, the values it popped are lost: use a ReliableQueue for at-least-once)");
                    last_error = Some(error);
                    tokio::select! {
                        _ = tokio::time::sleep(RETRY_PAUSE) => {}
                        _ = self.shutdown.cancelled() => return Err(Error::Shutdown),
                    }
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// Lets a connection that did not open within its take's time finish
    /// opening and wait idle for the next take. Aborting it instead would
    /// leave a link slower to connect than a take's timeout with no
    /// connection ever: each short take would start one and give it up.
    /// Bounded: one per take whose time ran out, each given up after
    /// `PARK_LIMIT` or at shutdown, and kept only within `MAX_IDLE`.
    fn park(&self, mut opening: Opening, epoch: u64) {
        let idle = Arc::downgrade(&self.idle);
        let (current, shutdown) = (self.epoch.subscribe(), self.shutdown.clone());
        tokio::spawn(async move {
            tokio::select! {
                up = opening.connected() => if up.is_err() { return },
                _ = tokio::time::sleep(PARK_LIMIT) => return,
                _ = shutdown.cancelled() => return,
            }
            let client = opening.opened();
            let unkept = match idle.upgrade() {
                Some(idle) => {
                    let now = *current.borrow();
                    idle.lock().keep(epoch, now, shutdown.is_cancelled(), client)
                }
                None => Some(client), // the pool is gone
            };
            if let Some(client) = unkept {
                close_in_background(client, None);
            }
        });
    }

    /// Waits (up to `within`) until every lease is back and every cancelled
    /// read has ended and given its value back.
    pub(crate) async fn settled(&self, within: Duration) {
        let started = Instant::now();
        self.leases.settled(within).await;
        self.settling.settled(within.saturating_sub(started.elapsed())).await;
    }

    pub(crate) async fn close(&self) {
        let idle = {
            let mut idle = self.idle.lock();
            idle.closed = true;
            std::mem::take(&mut idle.connections)
        };
        for (_, client) in idle {
            crate::connection::quit(&client).await;
        }
    }
}

/// A client dropped without [`close`](BlockingPool::close) (see
/// `Connections`' `Drop`) still closes its idle connections, in the
/// background; leased ones close when their lease ends, as the pool is
/// shutting down.
impl Drop for BlockingPool {
    fn drop(&mut self) {
        let mut idle = self.idle.lock();
        idle.closed = true;
        for (_, client) in std::mem::take(&mut idle.connections) {
            close_in_background(client, None);
        }
    }
}

/// The client-side deadline of a blocking command that waits up to
/// `server_timeout` on the server: half as long again plus 2 s, so a slow
/// reply is not taken for a dead connection; saturates, never overflows.
fn client_timeout(server_timeout: Duration) -> Duration {
    server_timeout
        .saturating_add(Duration::from_secs(2))
        .saturating_add(server_timeout / 2)
}

impl Lease<'_> {
    pub(crate) fn client(&self) -> &FredClient {
        self.client.as_ref().expect("lease holds a client until dropped")
    }

    /// Runs one blocking command on this connection and waits for its
    /// reply; if this future is dropped first, the lease's `Drop` sees to the
    /// command (see the type's docs).
    pub(crate) async fn run(&mut self, command: &'static str, options: Options, argv: Vec<Value>) -> Reply {
        let client = self.client().clone();
        let (to, back, settling) = (client.clone(), argv.clone(), self.pool.settling.clone());
        let undo: UndoRead = Box::new(move |reply: Reply| {
            Box::pin(async move {
                if let Ok(value) = reply {
                    undo_read(&to, &settling, command, &back, value).await;
                }
            })
        });
        let fred_timeout = options.timeout.unwrap_or_default();
        let command: Command<Reply> = Box::pin(async move { blocking_command(&client, command, options, argv).await });
        let detached = detach(command, undo, &self.pool.settling).within(fred_timeout);
        let in_flight = self.in_flight.insert(detached);
        let out = in_flight.reply().await;
        self.in_flight = None;
        out
    }

    /// Drops the connection instead of returning it (after a timeout or an
    /// I/O error its state is unknown).
    pub(crate) fn discard(mut self) {
        if let Some(client) = self.client.take() {
            close_in_background(client, None);
        }
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            // One busy with a cancelled read is never kept.
            let unkept = match self.in_flight {
                Some(_) => Some(client),
                None => {
                    let current = *self.pool.epoch.borrow();
                    let shutting_down = self.pool.shutdown.is_cancelled();
                    self.pool.idle.lock().keep(self.epoch, current, shutting_down, client)
                }
            };
            if let Some(client) = unkept {
                let in_flight = self.in_flight.take().map(|f| (f, self.pool.settling.enter()));
                close_in_background(client, in_flight);
            }
        }
    }
}

/// A connection being opened for a lease. Unless [`opened`](Opening::opened),
/// its connection task is aborted when dropped (on every early return, and
/// when the call opening it is dropped). Aborted, not quit: fred's `init()`
/// spawns that task, and a QUIT sent before the task first runs finds no task
/// to stop ("already stopped") and does nothing; the task then connects and
/// stays open for good. Seen under load, one connection per take cut short.
struct Opening {
    client: Option<FredClient>,
    task: Option<fred::types::ConnectHandle>,
}

impl Opening {
    /// Spawns `client`'s connection task.
    fn start(client: FredClient) -> Self {
        let task = client.connect();
        Opening {
            client: Some(client),
            task: Some(task),
        }
    }

    /// Waits until the connection is up, or its task ended (a first connect
    /// that failed ends it: fred's `fail_fast`). `wait_for_connect` sees a
    /// connect that happened before it was polled (the client's state says
    /// so), and a failure before then ends the task: neither is missed.
    async fn connected(&mut self) -> std::result::Result<(), fred::error::Error> {
        let client = self.client.as_ref().expect("set until opened");
        let task = self.task.as_mut().expect("set until opened");
        tokio::select! {
            biased;
            up = client.wait_for_connect() => up,
            ended = task => Err(match ended {
                Ok(Err(error)) => error,
                Ok(Ok(())) => fred::error::Error::new(fred::error::ErrorKind::Canceled, "the connection closed while opening"),
                Err(join) => fred::error::Error::new(fred::error::ErrorKind::Unknown, format!("the connection task failed: {join}")),
            }),
        }
    }

    /// The open connection; its task runs on, as after fred's `init()`.
    fn opened(mut self) -> FredClient {
        self.task = None;
        self.client.take().expect("opened once")
    }
}

impl Drop for Opening {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// Closes a connection without waiting (also from `Drop`, where we cannot
/// await). If a blocking command is `in_flight`, first ends it and puts back
/// the value it popped, if any.
fn close_in_background(client: FredClient, in_flight: Option<(InFlight, SettlingGuard)>) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move {
            if let Some((in_flight, counted)) = in_flight {
                // The pop already happened (its value is given back) or never will.
                if let Err(error) = client.unblock_self(Some(ClientUnblockFlag::Error)).await {
                    tracing::debug!(%error, "could not unblock a cancelled blocking read");
                }
                in_flight.abandon().await;
                drop(counted);
            }
            crate::connection::quit(&client).await;
        });
    }
}

/// Puts values popped for a caller that is gone back where they were: at
/// the head of the list `BLPOP` or `BLMPOP` took them from, in order, or,
/// for `BLMOVE`, out of the list it moved one to and back to the end of the
/// list it came from.
async fn undo_read(client: &FredClient, settling: &Arc<Settling>, command: &str, argv: &[Value], reply: Value) {
    if reply.is_null() {
        return;
    }
    let given_back = match command {
        "BLPOP" | "BLMPOP" => {
            let popped = if command == "BLPOP" {
                reply::blpop(reply).map(|(key, value)| (key, vec![value]))
            } else {
                reply::blmpop(reply)
            };
            match popped {
                Ok((key, values)) => push_back(client, settling, &key, values).await, // logs its own failure
                Err(error) => {
                    tracing::error!(command, %error, "a cancelled blocking read returned values that cannot be given back");
                    false
                }
            }
        }
        "BLMOVE" if argv.len() >= 4 => {
            let source = key_of(&argv[0]).as_str_lossy().into_owned();
            let keys = SCRIPTS
                .undo_move
                .given_keys()
                .with(KeyRole::Source, key_of(&argv[0]))
                .with(KeyRole::Target, key_of(&argv[1]))
                .build();
            let args = vec![reply, argv[2].clone(), argv[3].clone()];
            match SCRIPTS.undo_move.run(client, &source, keys, args).await {
                Ok(_) => true,
                Err(error) => {
                    tracing::error!(command, %error, "could not give back a value popped for a cancelled read");
                    false
                }
            }
        }
        // A read of a stream takes nothing away.
        "XREAD" => return,
        _ => {
            tracing::error!(
                command,
                ?reply,
                "a cancelled blocking read returned a value that cannot be given back"
            );
            false
        }
    };
    if given_back {
        tracing::debug!(command, "gave back a value popped for a cancelled read");
    }
}

fn key_of(value: &Value) -> fred::types::Key {
    match value {
        Value::Bytes(b) => fred::types::Key::from(b.clone()),
        other => fred::types::Key::from(other.as_string().unwrap_or_default()),
    }
}

/// Which key a blocking command is routed by in a Cluster. fred takes a
/// custom command's first text argument: the key for BLMOVE and BLMPOP
/// (their numbers are not text), but `COUNT` for XREAD, whose key follows
/// `STREAMS`.
fn route(name: &str, args: &[Value]) -> ClusterHash {
    let streams = (name == "XREAD")
        .then(|| {
            args.iter()
                .position(|a| matches!(a, Value::String(s) if &**s == "STREAMS"))
        })
        .flatten();
    match streams {
        Some(at) => ClusterHash::Offset(at + 1),
        None => ClusterHash::FirstKey,
    }
}

/// Sends a blocking command as a fred custom command: fred's own BLPOP/BLMOVE
/// turn the server's "timed out" nil into the same error as a client-side
/// timeout, and a wait that ended empty must not look like a dead connection.
async fn blocking_command(
    conn: &FredClient,
    name: &'static str,
    options: Options,
    args: Vec<Value>,
) -> std::result::Result<Value, fred::error::Error> {
    let command = CustomCommand::new_static(name, route(name, &args), true);
    conn.with_options(&options).custom(command, args).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xread_is_routed_by_its_stream_key_not_its_first_word() {
        let key = "delayq_events:{orders}";
        let args = vec![
            Value::from("COUNT"),
            Value::from(100),
            Value::from("BLOCK"),
            Value::from(1000),
            Value::from("STREAMS"),
            Value::from(key),
            Value::from("0-0"),
        ];
        let slot = Some(fred::util::redis_keyslot(key.as_bytes()));
        assert_eq!(route("XREAD", &args).hash(&args), slot);
        assert_ne!(ClusterHash::FirstKey.hash(&args), slot, "COUNT hashes elsewhere");
        let blmove = vec![
            Value::from("delayq_x:{orders}"),
            Value::from("{orders}"),
            Value::from("LEFT"),
        ];
        assert_eq!(route("BLMOVE", &blmove).hash(&blmove), slot);
    }

    #[test]
    fn the_client_side_deadline_is_later_and_saturates() {
        assert_eq!(client_timeout(Duration::from_secs(5)), Duration::from_millis(9_500));
        assert_eq!(client_timeout(Duration::ZERO), Duration::from_secs(2));
        assert_eq!(client_timeout(Duration::MAX), Duration::MAX);
        assert_eq!(client_timeout(Duration::MAX - Duration::from_secs(1)), Duration::MAX);
    }
}
