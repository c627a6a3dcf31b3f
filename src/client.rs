//! The client: connections, the transfer scheduler, and queue handles.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fred::prelude::{ClientLike, Config, Options, ReconnectPolicy};
use fred::types::Builder;
use tokio_util::sync::CancellationToken;

use crate::blocking_pool::BlockingPool;
use crate::codec::Codec;
use crate::error::{Error, Result};
use crate::outstanding::Outstanding;
use crate::scheduler::Scheduler;
use crate::sentinel_watch;
use crate::settling::Settling;
use crate::{BlockingQueue, DelayedQueue};

/// Which clock a [`Client`] reads "now" from, for the transfer and for
/// relative offers.
///
/// | | [`Local`](Clock::Local) (default) | [`Server`](Clock::Server) |
/// |---|---|---|
/// | transfer (scheduler, [`DelayedQueue::transfer_now`](crate::DelayedQueue::transfer_now)): what is due | this host's clock, sent to the script | Redis `TIME`, read inside the script |
/// | [`DelayedQueue::offer`] / [`offer_all`](DelayedQueue::offer_all) (`delay` from now) | this host's clock + delay | Redis `TIME` + delay, computed inside the script |
/// | [`DelayedQueue::offer_at`] (absolute time) | stored as given | stored as given |
/// | reliable deliveries' visibility deadlines | Redis `TIME` | Redis `TIME` |
///
/// Due times are stored as ms since the epoch either way, so the queue stays
/// readable by Redisson; Java producers and Java transfers always use their
/// own host's clock. Under `Server`, the scheduler also learns the offset
/// between the two clocks from its runs and sets its timers by it, so a host
/// whose clock is off neither delays nor advances delivery of what it offers
/// or transfers (a delay is still range-checked on this host's clock before
/// sending, which only matters at the ~285,000-year limit).
///
/// ```
/// use delayq::{Client, Clock};
/// let builder = Client::builder().clock(Clock::Server);
/// # let _ = builder;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Clock {
    /// This host's clock, as Redisson uses it for offers and transfers. Default.
    #[default]
    Local,
    /// The Redis server's clock (`TIME`), for the transfer and for offers
    /// with a delay (`offer`, `offer_all`): due time = server's now + delay.
    /// `offer_at` stores the absolute time it is given, whatever the clock.
    Server,
}

/// Default largest payload an offer accepts.
const DEFAULT_MAX_PAYLOAD: usize = 16 * 1024 * 1024;

/// A hook that adjusts fred's builder before connecting.
type Customize = Box<dyn Fn(&mut Builder) + Send + Sync>;

/// Settings of a [`Client`], built by [`Client::builder`].
///
/// ```no_run
/// # async fn demo() -> delayq::Result<()> {
/// use std::time::Duration;
/// let client = delayq::Client::builder()
///     .url("redis://127.0.0.1:6379")
///     .pool_size(4)
///     .transfer_batch(200)
///     .build()
///     .await?;
/// # Ok(()) }
/// ```
#[must_use]
pub struct ClientBuilder {
    url: Option<String>,
    config: Option<Config>,
    pool_size: usize,
    pub(crate) transfer: TransferSettings,
    blocking_timeout: Duration,
    connect_timeout: Duration,
    shutdown_grace: Duration,
    max_payload: usize,
    reconnect: ReconnectPolicy,
    customize: Option<Customize>,
    #[cfg(feature = "tls")]
    tls: Option<crate::Tls>,
}

/// How the scheduler runs the transfer.
#[derive(Debug, Clone)]
pub(crate) struct TransferSettings {
    /// Elements moved per script run.
    pub batch: usize,
    /// Transfer scripts in flight at once, across all queues of the client.
    pub max_in_flight: usize,
    /// Every queue is transferred at least this often, whatever the channel says.
    pub resync_interval: Option<Duration>,
    /// Which clock says what is due.
    pub clock: Clock,
    /// First delay after a failed run; doubles up to `max_backoff`.
    pub min_backoff: Duration,
    /// Longest delay between retries of a failing run.
    pub max_backoff: Duration,
}

impl Default for TransferSettings {
    fn default() -> Self {
        TransferSettings {
            batch: 500,
            max_in_flight: 32,
            resync_interval: Some(Duration::from_secs(60)),
            clock: Clock::Local,
            min_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
        }
    }
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            url: None,
            config: None,
            pool_size: 2,
            transfer: TransferSettings::default(),
            blocking_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(10),
            shutdown_grace: Duration::from_secs(10),
            max_payload: DEFAULT_MAX_PAYLOAD,
            reconnect: ReconnectPolicy::new_exponential(0, 50, 500, 2),
            customize: None,
            #[cfg(feature = "tls")]
            tls: None,
        }
    }
}

impl ClientBuilder {
    /// Longest duration the builder's timeouts, intervals and backoffs take,
    /// a day: longer ones, up to `Duration::MAX`, are clamped to it rather
    /// than overflowing a deadline somewhere.
    pub const MAX_SETTING: Duration = Duration::from_secs(24 * 3600);

    /// Connect to a URL in any form fred takes (see
    /// `fred::types::config::Config::from_url`):
    ///
    /// - `redis://[user:password@]host:port[/db]`, one server;
    /// - `redis-cluster://[user:password@]host:port[?node=host:port&node=...]`,
    ///   a Redis Cluster found from any of its nodes;
    /// - `redis-sentinel://[user:password@]host:port[/db]?sentinelServiceName=NAME[&node=host:port...]`,
    ///   the master the sentinels name, followed across failovers
    ///   (`sentinelUsername`/`sentinelPassword` when the sentinels require
    ///   their own credentials);
    /// - `rediss://`, `rediss-cluster://`, `rediss-sentinel://`: the same over
    ///   TLS (feature `tls`), trusting the system's roots unless
    ///   `ClientBuilder::tls` says otherwise.
    ///
    /// ```
    /// let builder = delayq::Client::builder()
    ///     .url("redis-sentinel://10.0.0.1:26379/0?sentinelServiceName=mymaster&node=10.0.0.2:26379");
    /// # let _ = builder;
    /// ```
    pub fn url(mut self, url: impl Into<String>) -> Self {
        self.url = Some(url.into());
        self
    }

    /// Connect with a fred configuration (takes precedence over [`url`](Self::url)).
    pub fn config(mut self, config: Config) -> Self {
        self.config = Some(config);
        self
    }

    /// Number of multiplexed connections for ordinary commands (default 2).
    pub fn pool_size(mut self, size: usize) -> Self {
        self.pool_size = size.max(1);
        self
    }

    /// Most elements the regular transfer moves per script run (default 500;
    /// Redisson moves 100).
    pub fn transfer_batch(mut self, batch: usize) -> Self {
        self.transfer.batch = batch.max(1);
        self
    }

    /// Transfer scripts in flight at once across all queues (default 32).
    pub fn max_transfers_in_flight(mut self, n: usize) -> Self {
        self.transfer.max_in_flight = n.max(1);
        self
    }

    /// Transfer every queue at least this often even when no message says so
    /// (default 60 s; at most [`MAX_SETTING`](Self::MAX_SETTING), a day; `None` relies on the
    /// channel and reconnects alone).
    pub fn resync_interval(mut self, interval: Option<Duration>) -> Self {
        self.transfer.resync_interval = interval.map(|i| i.min(Self::MAX_SETTING));
        self
    }

    /// The clock this client reads "now" from (default [`Clock::Local`]):
    /// under [`Clock::Server`], both its transfer and its offers with a
    /// delay use the Redis server's `TIME`; see [`Clock`] for exactly what
    /// each setting changes.
    pub fn clock(mut self, clock: Clock) -> Self {
        self.transfer.clock = clock;
        self
    }

    /// Retry delays of a failing transfer: first `min`, doubling up to `max`
    /// (default 100 ms to 5 s; both at most [`MAX_SETTING`](Self::MAX_SETTING), a day).
    pub fn transfer_backoff(mut self, min: Duration, max: Duration) -> Self {
        let min = min.min(Self::MAX_SETTING);
        self.transfer.min_backoff = min;
        self.transfer.max_backoff = max.clamp(min, Self::MAX_SETTING);
        self
    }

    /// Server-side timeout of each blocking read (`BLPOP`) in a wait loop
    /// (default 5 s; from 10 ms to [`MAX_SETTING`](Self::MAX_SETTING), a day): a dead
    /// connection is noticed within about this time. It does not limit how
    /// long a `take()` waits: that loops until a value comes.
    pub fn blocking_timeout(mut self, timeout: Duration) -> Self {
        self.blocking_timeout = timeout.clamp(Duration::from_millis(10), Self::MAX_SETTING);
        self
    }

    /// How long [`build`](Self::build) waits for the first connection, and
    /// fred's timeout for its own commands while connecting (default 10 s; at
    /// most [`MAX_SETTING`](Self::MAX_SETTING), a day).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout.min(Self::MAX_SETTING);
        self
    }

    /// How long [`Client::shutdown`] waits for reliable deliveries in flight
    /// to be settled before it gives them back to their queues (default 10 s;
    /// at most [`MAX_SETTING`](Self::MAX_SETTING), a day).
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace.min(Self::MAX_SETTING);
        self
    }

    /// Largest payload an offer accepts (default 16 MiB): a larger one is
    /// [`Error::PayloadTooLarge`], before anything is sent. Redis holds up to
    /// 512 MiB per value, but every script that reads the queue copies its
    /// elements, so very large values slow every operation on it.
    pub fn max_payload_size(mut self, bytes: usize) -> Self {
        self.max_payload = bytes;
        self
    }

    /// fred's reconnect policy for every connection (default: exponential,
    /// 50 ms to 500 ms, forever, so service resumes within half a second of
    /// Redis coming back).
    pub fn reconnect_policy(mut self, policy: ReconnectPolicy) -> Self {
        self.reconnect = policy;
        self
    }

    /// Connect over TLS with these roots and client certificate, whatever
    /// the URL's scheme (a `rediss://` URL alone trusts the system's roots).
    ///
    /// ```no_run
    /// # async fn demo() -> delayq::Result<()> {
    /// let client = delayq::Client::builder()
    ///     .url("rediss://redis.internal:6380")
    ///     .tls(delayq::Tls::with_ca_file("/etc/redis/tls/ca.crt")?)
    ///     .build()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "tls")]
    pub fn tls(mut self, tls: crate::Tls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Adjusts fred's builder (performance, TCP, TLS, connection settings)
    /// before any connection is made.
    pub fn customize(mut self, f: impl Fn(&mut Builder) + Send + Sync + 'static) -> Self {
        self.customize = Some(Box::new(f));
        self
    }

    /// Connects the command pool and the subscriber, and starts the transfer scheduler.
    pub async fn build(self) -> Result<Client> {
        let config = match (self.config, self.url) {
            (Some(config), _) => config,
            (None, Some(url)) => {
                // Without a TLS feature fred would warn and connect in clear text.
                if cfg!(not(feature = "tls")) && url.starts_with("rediss") {
                    return Err(Error::Tls(
                        "a rediss:// URL needs delayq's `tls` feature (on by default)".into(),
                    ));
                }
                Config::from_url(&url)?
            }
            (None, None) => Config::default(),
        };
        #[cfg(feature = "tls")]
        let config = match &self.tls {
            Some(tls) => Config {
                tls: Some(tls.connector()?.into()),
                ..config
            },
            None => config,
        };
        let mut builder = Builder::from_config(config);
        builder.set_policy(self.reconnect.clone());
        let connect_timeout = self.connect_timeout;
        builder.with_connection_config(|c| {
            c.connection_timeout = connect_timeout;
            c.internal_command_timeout = connect_timeout;
            // Small request/response traffic: never wait for Nagle's algorithm.
            c.tcp.nodelay = Some(true);
        });
        if let Some(customize) = &self.customize {
            customize(&mut builder);
        }

        let address = address(builder.get_config().map(|c| &c.server));
        let pool = builder.build_pool(self.pool_size)?;
        connect(&pool, connect_timeout, &address).await?;
        let subscriber = builder.build_subscriber_client()?;
        if let Err(e) = connect(&subscriber, connect_timeout, &address).await {
            quit_pool(&pool).await;
            return Err(e);
        }
        let shutdown = CancellationToken::new();
        let scheduler = Scheduler::start(pool.clone(), subscriber.clone(), self.transfer.clone());
        let config = builder.get_config().cloned().unwrap_or_default();
        let settling = Arc::new(Settling::default());
        let blocking = BlockingPool::new(builder, self.blocking_timeout, shutdown.clone(), settling.clone());
        let targets = sentinel_watch::Targets {
            pool: pool.clone(),
            subscriber,
            blocking: blocking.epoch(),
        };
        sentinel_watch::start(&config, &self.reconnect, targets, shutdown.clone());
        Ok(Client {
            inner: Arc::new(Inner {
                pool,
                scheduler,
                blocking,
                shutdown,
                closed: AtomicBool::new(false),
                outstanding: Outstanding::default(),
                reapers: Default::default(),
                settling,
                shutdown_grace: self.shutdown_grace,
                max_payload: self.max_payload,
                transfer: self.transfer,
            }),
        })
    }
}

/// How long shutdown waits for blocked reads to end and give back what they popped.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long closing one connection may take.
const QUIT_TIMEOUT: Duration = Duration::from_secs(2);

/// Closes a connection without waiting forever: fred's QUIT has no timeout of
/// its own, and one sent while the connection is being re-established (a
/// cut, a failover) can be left unanswered.
pub(crate) async fn quit<C: ClientLike>(client: &C) {
    let options = Options {
        timeout: Some(QUIT_TIMEOUT),
        max_attempts: Some(1),
        ..Options::default()
    };
    let _ = client.with_options(&options).quit().await;
}

async fn quit_pool(pool: &fred::clients::Pool) {
    futures_util::future::join_all(pool.clients().iter().map(quit)).await;
}

/// Connects `client`; failing to reach `address` at all (refused,
/// unreachable, no answer in time) is [`Error::Connect`], other failures
/// (authentication, TLS...) are [`Error::Redis`].
async fn connect<C: ClientLike>(client: &C, timeout: Duration, address: &str) -> Result<()> {
    // init() subscribes to the connect event before connecting; connect() then
    // wait_for_connect() can miss an event that fires in between.
    let error = match tokio::time::timeout(timeout, client.init()).await {
        Ok(Ok(_)) => return Ok(()),
        Ok(Err(error)) => error,
        Err(_) => {
            quit(client).await;
            fred::error::Error::new(
                fred::error::ErrorKind::Timeout,
                format!("no connection within {timeout:?}"),
            )
        }
    };
    if unreachable(&error) {
        Err(Error::Connect {
            address: address.to_owned(),
            source: error,
        })
    } else {
        Err(Error::Redis(error))
    }
}

/// Whether a failed first connection means the server was not reached:
/// refused, unreachable, unresolved, or no answer in time. fred reports TLS
/// handshake failures as I/O errors too; they are not "unreachable" (the CLI
/// has its own hints for them).
fn unreachable(error: &fred::error::Error) -> bool {
    use fred::error::ErrorKind;
    const TLS: [&str; 6] = ["Certificate", "AlertReceived", "Handshake", "InvalidData", "tls", "TLS"];
    match error.kind() {
        ErrorKind::Timeout | ErrorKind::Canceled => true,
        ErrorKind::IO => !TLS.iter().any(|mark| error.details().contains(mark)),
        _ => false,
    }
}

/// Where a configuration connects, for messages: `host:port`, or the nodes or
/// sentinels it starts from (no credentials).
fn address(server: Option<&fred::types::config::ServerConfig>) -> String {
    use fred::types::config::ServerConfig;
    let list = |hosts: &[fred::prelude::Server]| hosts.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
    match server {
        Some(ServerConfig::Centralized { server }) => server.to_string(),
        Some(ServerConfig::Clustered { hosts, .. }) => format!("cluster nodes {}", list(hosts)),
        Some(ServerConfig::Sentinel {
            hosts, service_name, ..
        }) => {
            format!("sentinels {} (service {service_name})", list(hosts))
        }
        #[allow(unreachable_patterns)] // fred's `unix-sockets` feature adds a variant
        _ => "the configured server".to_owned(),
    }
}

/// A connection to Redis shared by every queue handle made from it.
///
/// It owns a small pool of multiplexed connections for ordinary commands, one
/// subscriber connection that listens to every queue's channel, dedicated
/// connections for blocking reads (so a `take()` never blocks other
/// commands), and the transfer scheduler that moves due elements of every
/// [`DelayedQueue`] made from it. Cloning is cheap and shares all of that.
///
/// # Dropping without `shutdown`
///
/// Call [`shutdown`](Self::shutdown) to stop gracefully. A client that is
/// simply dropped (its last clone and every queue handle, delivery and worker
/// made from it gone, since each of them holds the client) still releases
/// everything, at once and without the graceful wait: blocked reads and
/// background tasks (scheduler, Sentinel watchers) are cancelled and every
/// connection is closed in the background, including the pool
/// [`redis`](Self::redis) returns. Nothing is lost, but nothing is handed
/// back gracefully either: a reliable [`Delivery`](crate::Delivery) dropped
/// unsettled is given back to the tail of its queue in the background (not
/// to the head, as shutdown does), and one that cannot be (the process exits
/// first, Redis is unreachable) returns when its visibility timeout passes,
/// through the reaper of any client of the queue. A due element not
/// transferred yet stays in the timeout set for the next transfer, Java or
/// Rust. Closing needs a Tokio runtime; without one, the connections end
/// with the runtime that ran them.
///
/// ```no_run
/// use std::time::Duration;
/// use delayq::{Client, StringCodec};
///
/// # async fn demo() -> delayq::Result<()> {
/// let client = Client::connect("redis://127.0.0.1:6379").await?;
/// let delayed = client.delayed_queue("orders", StringCodec)?;
/// delayed.offer(&"order-1".to_string(), Duration::from_secs(10)).await?;
///
/// let orders = client.blocking_queue("orders", StringCodec)?;
/// let order = orders.take().await?; // about 10 s later
/// client.shutdown().await;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub pool: fred::clients::Pool,
    pub scheduler: Scheduler,
    pub blocking: BlockingPool,
    /// Cancelled when shutdown begins: blocking waits end, nothing new is taken.
    pub shutdown: CancellationToken,
    /// Set when shutdown has closed the connections.
    pub closed: AtomicBool,
    pub outstanding: Outstanding,
    /// One reaper per reliable queue, shared by its handles.
    pub reapers: crate::reapers::Reapers,
    /// Give-backs of dropped pops still running (see `detached`).
    pub settling: Arc<Settling>,
    pub shutdown_grace: Duration,
    pub max_payload: usize,
    pub transfer: TransferSettings,
}

/// The last reference to the client is gone without [`Client::shutdown`]:
/// cancel what runs in the background and close the connections, without the
/// graceful wait (see "Dropping without `shutdown`" on [`Client`]). The
/// scheduler ends as its command channel closes with `scheduler`, the
/// blocking pool closes its idle connections in its own `Drop`.
impl Drop for Inner {
    fn drop(&mut self) {
        // Blocked reads, Sentinel watchers, reapers: all stop on the token.
        self.shutdown.cancel();
        if self.closed.swap(true, Ordering::SeqCst) {
            return; // shutdown() already closed everything
        }
        tracing::debug!("client dropped without shutdown(); closing its connections");
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let pool = self.pool.clone();
            runtime.spawn(async move { quit_pool(&pool).await });
        }
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("shut_down", &self.inner.shutdown.is_cancelled())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Connects with default settings to `url` (see [`ClientBuilder::url`]).
    pub async fn connect(url: &str) -> Result<Client> {
        Client::builder().url(url).build().await
    }

    /// A builder for a client with custom settings.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// A handle on the delayed queue whose destination is `name`; the Java
    /// equivalent is `redisson.getDelayedQueue(redisson.getBlockingQueue(name, codec))`.
    ///
    /// While any handle of the queue lives, this client's scheduler moves its
    /// due elements to the destination.
    pub fn delayed_queue<T, C>(&self, name: &str, codec: C) -> Result<DelayedQueue<T>>
    where
        C: Codec<T>,
        T: 'static,
    {
        self.check_open()?;
        DelayedQueue::new(self.clone(), name, Arc::new(codec), true)
    }

    /// A handle on the delayed queue `name` that never runs the transfer:
    /// every operation works, but due elements move only if some other handle
    /// or process transfers them. For tools that inspect a queue without
    /// changing when anything is delivered.
    pub fn delayed_queue_without_transfer<T, C>(&self, name: &str, codec: C) -> Result<DelayedQueue<T>>
    where
        C: Codec<T>,
        T: 'static,
    {
        self.check_open()?;
        DelayedQueue::new(self.clone(), name, Arc::new(codec), false)
    }

    /// A handle on the destination list `name`, where due elements arrive; the
    /// Java equivalent is `redisson.getBlockingQueue(name, codec)`.
    ///
    /// It does not transfer due elements unless [`BlockingQueue::with_transfer`] is called.
    pub fn blocking_queue<T, C>(&self, name: &str, codec: C) -> Result<BlockingQueue<T>>
    where
        C: Codec<T>,
        T: 'static,
    {
        self.check_open()?;
        BlockingQueue::new(self.clone(), name, Arc::new(codec))
    }

    /// Reliable, at-least-once consumption of the destination list `name`:
    /// see [`ReliableQueue`](crate::ReliableQueue).
    pub fn reliable_queue<T, C>(&self, name: &str, codec: C) -> Result<crate::ReliableQueue<T>>
    where
        C: Codec<T>,
        T: 'static,
    {
        self.check_open()?;
        crate::ReliableQueue::new(self.clone(), name, Arc::new(codec))
    }

    /// A [`Worker`](crate::Worker) for the queue `name`: configure it, then
    /// [`run`](crate::Worker::run) it with a handler.
    pub fn worker<T, C>(&self, name: &str, codec: C) -> Result<crate::Worker<T>>
    where
        C: Codec<T>,
        T: Send + 'static,
    {
        Ok(crate::Worker::new(self.reliable_queue(name, codec)?))
    }

    /// The underlying fred pool, for commands this crate does not wrap.
    pub fn redis(&self) -> &fred::clients::Pool {
        &self.inner.pool
    }

    /// What this client's transfer scheduler has done so far.
    pub fn stats(&self) -> crate::ClientStats {
        self.inner.scheduler.stats.snapshot()
    }

    /// Whether [`shutdown`](Self::shutdown) was called.
    pub fn is_shut_down(&self) -> bool {
        self.inner.shutdown.is_cancelled()
    }

    /// Shuts down gracefully, waiting up to the builder's
    /// [`shutdown_grace`](ClientBuilder::shutdown_grace) for deliveries in
    /// flight (see [`shutdown_within`](Self::shutdown_within)).
    pub async fn shutdown(&self) {
        self.shutdown_within(self.inner.shutdown_grace).await;
    }

    /// Shuts down gracefully, losing nothing:
    ///
    /// 1. blocked reads end with [`Error::Shutdown`] and nothing new is taken
    ///    (a value popped for one as it ended goes back first);
    /// 2. reliable deliveries already handed out may still be acked or nacked
    ///    for up to `grace`; those still unsettled then go back to the head of
    ///    their queues;
    /// 3. the scheduler stops after its transfer runs in flight end (a due
    ///    element not moved yet stays in the timeout set for any other client,
    ///    Java or Rust);
    /// 4. every connection closes; later calls fail with [`Error::Shutdown`].
    pub async fn shutdown_within(&self, grace: Duration) {
        if self.inner.shutdown.is_cancelled() {
            return;
        }
        self.inner.shutdown.cancel();
        if tokio::time::timeout(grace, self.inner.outstanding.settled())
            .await
            .is_err()
        {
            let unsettled = self.inner.outstanding.drain();
            tracing::info!(
                count = unsettled.len(),
                "giving unsettled deliveries back to their queues"
            );
            for (keys, settings, member) in unsettled {
                let given =
                    crate::delivery::give_back(self, &keys, settings, &member, crate::delivery::GiveBack::Head).await;
                if let Err(error) = given {
                    tracing::warn!(queue = keys.destination(), %error, "could not give a delivery back; its visibility timeout will");
                }
            }
        }
        // Blocked reads end now; values popped for them go back before the
        // connections close.
        self.inner.blocking.settled(SETTLE_TIMEOUT).await;
        self.inner.settling.settled(SETTLE_TIMEOUT).await;
        self.inner.scheduler.shutdown().await;
        self.inner.blocking.close().await;
        self.inner.closed.store(true, Ordering::SeqCst);
        quit_pool(&self.inner.pool).await;
    }

    pub(crate) fn check_open(&self) -> Result<()> {
        if self.inner.closed.load(Ordering::SeqCst) {
            Err(Error::Shutdown)
        } else {
            Ok(())
        }
    }

    /// Fails with [`Error::PayloadTooLarge`] for a payload over the limit.
    pub(crate) fn check_payload(&self, payload: &[u8]) -> Result<()> {
        if payload.len() > self.inner.max_payload {
            return Err(Error::PayloadTooLarge {
                size: payload.len(),
                limit: self.inner.max_payload,
            });
        }
        Ok(())
    }

    /// A connection for one ordinary command, or [`Error::Shutdown`].
    pub(crate) fn conn(&self) -> Result<&fred::clients::Client> {
        self.check_open()?;
        Ok(self.inner.pool.next())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fred::error::{Error as FredError, ErrorKind};

    #[test]
    fn unreachable_means_not_reached_not_refused_by_tls_or_auth() {
        let io = |details: &str| FredError::new(ErrorKind::IO, details.to_owned());
        assert!(unreachable(&io(
            "Os { code: 111, kind: ConnectionRefused, message: \"Connection refused\" }"
        )));
        assert!(unreachable(&FredError::new(ErrorKind::Timeout, "no connection")));
        assert!(!unreachable(&io(
            "Custom { kind: InvalidData, error: InvalidCertificate(UnknownIssuer) }"
        )));
        assert!(!unreachable(&FredError::new(ErrorKind::Auth, "WRONGPASS")));
    }

    #[test]
    fn addresses_name_servers_not_credentials() {
        let config = Config::from_url("redis://app:s3cret@10.0.0.1:6380/2").unwrap();
        assert_eq!(address(Some(&config.server)), "10.0.0.1:6380");
        let sentinel =
            Config::from_url("redis-sentinel://u:p@10.0.0.1:26379/0?sentinelServiceName=mymaster&node=10.0.0.2:26379")
                .unwrap();
        let named = address(Some(&sentinel.server));
        assert!(named.contains("10.0.0.1:26379") && named.contains("10.0.0.2:26379") && named.contains("mymaster"));
        assert!(!named.contains("p@"), "{named}");
    }

    #[test]
    fn duration_settings_are_clamped() {
        let builder = Client::builder()
            .blocking_timeout(Duration::MAX)
            .connect_timeout(Duration::MAX)
            .shutdown_grace(Duration::MAX)
            .resync_interval(Some(Duration::MAX))
            .transfer_backoff(Duration::MAX, Duration::MAX);
        assert_eq!(builder.blocking_timeout, ClientBuilder::MAX_SETTING);
        assert_eq!(builder.connect_timeout, ClientBuilder::MAX_SETTING);
        assert_eq!(builder.shutdown_grace, ClientBuilder::MAX_SETTING);
        assert_eq!(builder.transfer.resync_interval, Some(ClientBuilder::MAX_SETTING));
        assert_eq!(builder.transfer.min_backoff, ClientBuilder::MAX_SETTING);
        assert_eq!(builder.transfer.max_backoff, ClientBuilder::MAX_SETTING);
        let builder = Client::builder()
            .blocking_timeout(Duration::ZERO)
            .transfer_backoff(Duration::from_secs(2), Duration::from_secs(1));
        assert_eq!(builder.blocking_timeout, Duration::from_millis(10));
        assert_eq!(builder.transfer.max_backoff, Duration::from_secs(2));
    }
}
