//! The client: connections, the transfer scheduler, and queue handles.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fred::prelude::{ClientLike, Config, Options, ReconnectPolicy};
use fred::types::Builder;
use tokio_util::sync::CancellationToken;

use crate::blocking_pool::BlockingPool;
use crate::codec::Codec;
use crate::detached::Settling;
use crate::error::{Error, Result};
use crate::outstanding::Outstanding;
use crate::scheduler::Scheduler;
use crate::sentinel_watch;
use crate::{BlockingQueue, DelayedQueue};

/// Which clock decides "now" when the transfer moves due elements.
///
/// ```
/// use delayq::{Client, Clock};
/// let builder = Client::builder().clock(Clock::Server);
/// # let _ = builder;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Clock {
    /// This host's clock, as Redisson's transfer uses it. Default.
    #[default]
    Local,
    /// The Redis server's clock (`TIME`), so that a host whose clock is off
    /// neither delays nor advances delivery. Offers still compute due times
    /// on the producing host, as Java's do.
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
    /// (default 60 s; `None` relies on the channel and reconnects alone).
    pub fn resync_interval(mut self, interval: Option<Duration>) -> Self {
        self.transfer.resync_interval = interval;
        self
    }

    /// The clock that decides what is due (default [`Clock::Local`]).
    pub fn clock(mut self, clock: Clock) -> Self {
        self.transfer.clock = clock;
        self
    }

    /// Retry delays of a failing transfer: first `min`, doubling up to `max`
    /// (default 100 ms to 5 s).
    pub fn transfer_backoff(mut self, min: Duration, max: Duration) -> Self {
        self.transfer.min_backoff = min;
        self.transfer.max_backoff = max.max(min);
        self
    }

    /// Server-side timeout of each blocking read (`BLPOP`) in a wait loop
    /// (default 5 s): a dead connection is noticed within about this time.
    pub fn blocking_timeout(mut self, timeout: Duration) -> Self {
        self.blocking_timeout = timeout.max(Duration::from_millis(10));
        self
    }

    /// How long [`build`](Self::build) waits for the first connection (default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long [`Client::shutdown`] waits for reliable deliveries in flight
    /// to be settled before it gives them back to their queues (default 10 s).
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
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

        let pool = builder.build_pool(self.pool_size)?;
        connect(&pool, connect_timeout).await?;
        let subscriber = builder.build_subscriber_client()?;
        if let Err(e) = connect(&subscriber, connect_timeout).await {
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

async fn connect<C: ClientLike>(client: &C, timeout: Duration) -> Result<()> {
    // init() subscribes to the connect event before connecting; connect() then
    // wait_for_connect() can miss an event that fires in between.
    match tokio::time::timeout(timeout, client.init()).await {
        Ok(result) => result.map(drop).map_err(Error::from),
        Err(_) => {
            quit(client).await;
            Err(Error::Redis(fred::error::Error::new(
                fred::error::ErrorKind::Timeout,
                format!("could not connect to Redis within {timeout:?}"),
            )))
        }
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
