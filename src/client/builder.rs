//! `ClientBuilder`: a client's settings, and connecting with them.

use std::sync::Arc;
use std::time::Duration;

use fred::prelude::{Config, ReconnectPolicy};
use fred::types::config::UnresponsiveConfig;
use fred::types::Builder;

use super::Client;
use crate::connection::connections::{self, Settings};
use crate::connection::durable::Durability;
use crate::error::{Error, Result};
use crate::queue::Core;
use crate::transfer::{Clock, Scheduler, TransferSettings};

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
    unresponsive_timeout: Option<Duration>,
    shutdown_grace: Duration,
    max_payload: usize,
    reconnect: ReconnectPolicy,
    customize: Option<Customize>,
    durability: Option<Durability>,
    #[cfg(feature = "tls")]
    tls: Option<crate::Tls>,
}

/// Shows the settings, never the URL or the configuration: they may hold a
/// password.
impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("url", &self.url.as_ref().map(|_| "(set)"))
            .field("pool_size", &self.pool_size)
            .field("blocking_timeout", &self.blocking_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("unresponsive_timeout", &self.unresponsive_timeout)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("max_payload", &self.max_payload)
            .field("durability", &self.durability)
            .finish_non_exhaustive()
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
            unresponsive_timeout: Some(Duration::from_secs(10)),
            shutdown_grace: Duration::from_secs(10),
            max_payload: DEFAULT_MAX_PAYLOAD,
            reconnect: ReconnectPolicy::new_exponential(0, 50, 500, 2),
            customize: None,
            durability: None,
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

    /// How long a command may wait for its reply before its connection is
    /// taken for dead, closed and opened anew (default 10 s; `None`: never;
    /// at most [`MAX_SETTING`](Self::MAX_SETTING)). A connection a NAT or a
    /// load balancer forgot is never closed, so TCP never notices: without
    /// this, every command on it would wait forever. What was waiting
    /// fails, or is sent again where that is harmless, as after any lost
    /// connection. Blocking reads are not counted (they wait on purpose,
    /// with deadlines of their own). Redis answers delayq's commands in
    /// milliseconds; raise this only if your server stalls for longer (a
    /// slow fork on a huge dataset, another client's long script).
    ///
    /// ```
    /// let builder = delayq::Client::builder()
    ///     .unresponsive_timeout(Some(std::time::Duration::from_secs(30)));
    /// # let _ = builder;
    /// ```
    pub fn unresponsive_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.unresponsive_timeout = timeout.map(|t| t.clamp(Duration::from_millis(10), Self::MAX_SETTING));
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

    /// Acknowledge offers, acks, nacks and moves to the dead letters only
    /// once `durability` says enough replicas have them (default: none, as
    /// Redis replicates, asynchronously: an acknowledged write can be lost
    /// in a failover). Every queue handle of the client starts with it; a
    /// handle's `with_durability` and an offer's
    /// [`OfferOptions::durability`](crate::OfferOptions::durability) change
    /// it for themselves. A write the replicas did not confirm in time
    /// fails with [`Error::NotReplicated`] (it is on the primary). See
    /// [`Durability`] and the README's "Durable offers and acks".
    ///
    /// ```no_run
    /// # async fn demo() -> delayq::Result<()> {
    /// use std::time::Duration;
    /// use delayq::Durability;
    /// let client = delayq::Client::builder()
    ///     .url("redis://127.0.0.1:6379")
    ///     .durability(Durability::replicas(1).within(Duration::from_millis(500)))
    ///     .build()
    ///     .await?;
    /// let orders = client.delayed_queue("orders", delayq::StringCodec)?;
    /// // Returns once a replica has it, or fails with Error::NotReplicated.
    /// orders.offer(&"o-1".to_owned(), Duration::from_secs(60)).await?;
    /// # Ok(()) }
    /// ```
    pub fn durability(mut self, durability: Durability) -> Self {
        self.durability = Some(durability);
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
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
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
        let unresponsive = self.unresponsive_timeout;
        builder.with_connection_config(|c| {
            c.connection_timeout = connect_timeout;
            c.internal_command_timeout = connect_timeout;
            // fred looks every `interval` for a command unanswered that long.
            c.unresponsive = UnresponsiveConfig {
                max_timeout: unresponsive,
                interval: unresponsive.map_or(Duration::from_secs(2), |t| {
                    (t / 4).clamp(Duration::from_millis(5), Duration::from_secs(1))
                }),
            };
            // Small request/response traffic: never wait for Nagle's algorithm.
            c.tcp.nodelay = Some(true);
        });
        if let Some(customize) = &self.customize {
            customize(&mut builder);
        }

        let settings = Settings {
            pool_size: self.pool_size,
            connect_timeout,
            blocking_timeout: self.blocking_timeout,
            max_payload: self.max_payload,
            reconnect: self.reconnect.clone(),
        };
        let (connections, subscriber) = connections::open(builder, settings).await?;
        let scheduler = Scheduler::start(connections.pool.clone(), subscriber, self.transfer.clone());
        let core = Core::new(
            connections,
            scheduler,
            self.transfer,
            self.shutdown_grace,
            self.durability,
        );
        Ok(Client {
            core: Arc::new(core),
            schedules: Default::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duration_settings_are_clamped() {
        let builder = Client::builder()
            .blocking_timeout(Duration::MAX)
            .connect_timeout(Duration::MAX)
            .unresponsive_timeout(Some(Duration::MAX))
            .shutdown_grace(Duration::MAX)
            .resync_interval(Some(Duration::MAX))
            .transfer_backoff(Duration::MAX, Duration::MAX);
        assert_eq!(builder.blocking_timeout, ClientBuilder::MAX_SETTING);
        assert_eq!(builder.connect_timeout, ClientBuilder::MAX_SETTING);
        assert_eq!(builder.unresponsive_timeout, Some(ClientBuilder::MAX_SETTING));
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
