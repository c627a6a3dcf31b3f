//! A web dashboard of every delayed queue on a server, and a Prometheus
//! `/metrics` endpoint (the CLI's `delayq dashboard`), built on delayq's
//! public API only.
//!
//! # Usage
//!
//! ```no_run
//! use delayq_dashboard::Dashboard;
//!
//! # async fn demo() -> std::io::Result<()> {
//! let client = delayq::Client::connect("redis://127.0.0.1:6379").await.map_err(std::io::Error::other)?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:9090").await?;
//! Dashboard::new(client).read_only(true).serve(listener).await
//! # }
//! ```
//!
//! A service that embeds delayq and only wants `/metrics` calls
//! [`serve_metrics`], or merges [`metrics_router`] into its own axum app.
//!
//! # What it shows
//!
//! - `/`: every queue on the server, found by `SCAN` (never `KEYS`) over
//!   Redisson's timeout sets and delayq's dead-letter lists, and in
//!   delayq's registry of queues (`delayq_queues`: queues holding only
//!   ready values have neither key; names whose keys are all gone are
//!   dropped from it as discovery finds them), with pending,
//!   ready, in flight, dead letters, quarantined, next due, transfer lag and
//!   what falls due over the next hour; refreshed by polling a JSON API.
//!   A partitioned queue (`Client::partitioned_queues`) is one row, its
//!   partitions' samples added up, marked "partitioned ×N"; its partitions
//!   have no rows of their own.
//! - `/partitioned?name=Q`: a partitioned queue read now
//!   (`PartitionedQueue::status`): its layout (count, key hash, created),
//!   each partition's slot, Cluster primary and counts, linking to the
//!   partition's own queue page, and the sums. No actions.
//! - `/queue?name=N`: pending elements in due order, a page at a time
//!   (`ZRANGE` by index), decoded with the queue's codec
//!   ([`queue_codec`](Dashboard::queue_codec), else
//!   [`codec`](Dashboard::codec); hex for what does not decode; Java
//!   objects and JSON as trees of their fields, numbers as written, with
//!   the Java class a codec names through `Codec::java_object`, and a Kryo
//!   POJO read without its schema as its class and a note, never guessed
//!   fields); the ready list's head; dead letters; history charts;
//!   the queue's lifecycle events live (`GET /api/events?queue=N`,
//!   Server-Sent Events, at most 32 views at once): while they are on, the
//!   page refreshes its counts on each event, and every 15 s otherwise.
//! - `/workers` (`?queue=N`: one queue's): every running delayq `Worker`,
//!   from its heartbeat (`Client::workers`): host, process, version,
//!   concurrency, prefetch, rate limit, started, last beat, handled and
//!   failed counts, and what each handler runs now with its lease; a worker
//!   that missed its beats is flagged silent. The overview has a workers
//!   column (live · busy/slots, silent ones flagged).
//! - `/batch?name=Q&id=BID`: a batch of jobs (`DelayedQueue::offer_batch`):
//!   its state, a bar of its members ended (handled, dead-lettered,
//!   cancelled) of its total, when it began and completed, and the queue
//!   its completion goes to; a member's job page links to it.
//! - `/metrics`: the `metrics` feature's series plus, for every discovered
//!   queue, gauges named `delayq_queue_*` (so they never share a name with
//!   the library's per-process series): `pending`, `ready`, `in_flight`,
//!   `dead_letters`, `quarantined`, `transfer_lag_seconds`, `paused` (1
//!   while the queue is paused; its lag then reads 0, so a deliberate pause
//!   fires no lag alert), `oldest_ready_age_seconds`, `ready_untaken`,
//!   `workers`, `workers_silent`, `worker_busy_slots`, `worker_slots`,
//!   `schedule_runners` and `concurrency_limit` (a queue's fleet-wide
//!   limit on delayq deliveries in flight; no line without one); counters of the server-side totals
//!   (`delayq_queue_offered_total`, `_transferred_total`, `_acked_total`,
//!   `_failed_total`, `_dead_lettered_total`, `_timed_out_total`,
//!   `_duplicates_total`, `_expired_total`, `_cancelled_total`); and the
//!   dashboard's own `delayq_dashboard_redis_up` (1 or 0) and
//!   `delayq_dashboard_sample_age_seconds` (how old those gauges are).
//!   A partition's series also carry `partition_of="Q"`; a partitioned
//!   queue has none of its own, so a sum over them counts each value once.
//!   `deploy/` ships a Grafana dashboard and alert rules on these names.
//!
//! # When Redis is down
//!
//! A probe `PING`s Redis every second (3 s deadline). While it gets no
//! answer, every API and action answers at once with HTTP 503 and a JSON
//! error saying Redis is unreachable and since when; the pages keep their
//! last numbers, greyed, under a banner saying how old they are; the
//! sampler asks nothing of Redis; the log says when Redis went away and
//! when it came back. A read that gets no reply within 3 s answers 503
//! too.
//!
//! # Actions and safety
//!
//! Unless [`read_only`](Dashboard::read_only), the queue page can requeue or
//! delete dead letters, move due elements now, pause and resume the queue, purge the pending elements
//! (the operator types the queue's name) and migrate the element format.
//! Each is a `POST` that must carry the page's CSRF token (the same value as
//! the `delayq_csrf` cookie, `SameSite=Strict`) and must not come from
//! another site (`Origin`, `Sec-Fetch-Site`); no `GET` changes anything.
//! Another site on the same host can plant cookies (cookies ignore ports),
//! so only a cookie of the shape the dashboard mints (32 lowercase hex
//! digits) counts as a token; the page gets a fresh one otherwise. Each
//! action answers within [`action_time`](Dashboard::action_time), keeping
//! the atomic steps it finished.
//! With a [`token`](Dashboard::token) every request needs it (a bearer
//! header, or `?token=` once, which sets a cookie and redirects to the same
//! path of this dashboard without it); [`serve`](Dashboard::serve)
//! refuses to listen on a non-loopback address without one. On loopback
//! without a token, requests must name a loopback host (no DNS rebinding).
//!
//! The server writes no data into markup: the pages are fixed templates
//! (only the escaped CSRF token is filled in), and the script puts what the
//! JSON API returns into the page as text, with control characters and
//! bidirectional overrides shown as escapes (`\u{1b}`), as the CLI shows
//! them.
//!
//! # Implementation
//!
//! One background task per dashboard samples every discovered queue
//! (`DelayedQueue::status` and two `ZCOUNT`s, 32 queues at a time) every
//! [`sample_interval`](Dashboard::sample_interval); the overview reads that
//! cache, so it costs the same with ten thousand queues. The history charts
//! (1h, 24h, 7d, 30d) read what the sampler keeps in Redis as each minute
//! ends: the queue's server-side totals (`QueueTotals`, every delayq
//! process counted) and its lag, oldest ready age, memory and levels, a
//! record per minute for a day and per hour for a month
//! (`delayq_dashboard_minutes:{queue}`, `delayq_dashboard_hours:{queue}`,
//! bounded and expiring; one script puts a minute and rolls its hour up,
//! so two dashboards never count twice), so a restarted dashboard shows
//! them all. The header names the Redis (`INFO` every 5 s, cached; the
//! address without its password). The HTTP layer calls the library's
//! public API like any user; its one script is that history's.

#![warn(missing_docs, unreachable_pub, missing_debug_implementations)]

mod api;
mod assets;
mod guard;
mod health;
mod history;
mod metrics;
mod periodic;
mod sampler;
mod server_info;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::routing::get;
use axum::Router;

use delayq::{Client, Codec, StringCodec};

pub use self::metrics::{install_recorder, metrics_router, serve_metrics};

/// The README's examples, compiled with the doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The dashboard of one Redis deployment: a builder, then an axum
/// [`Router`] or a server.
///
/// ```no_run
/// # async fn demo(client: delayq::Client) -> std::io::Result<()> {
/// use delayq_dashboard::Dashboard;
/// let app = Dashboard::new(client)
///     .codec(delayq::StringCodec)
///     .token(Some("s3cret".into()))
///     .router();
/// let listener = tokio::net::TcpListener::bind("0.0.0.0:9090").await?;
/// axum::serve(listener, app).await
/// # }
/// ```
pub struct Dashboard {
    client: Client,
    codec: Arc<dyn Codec<String>>,
    queue_codecs: HashMap<String, Arc<dyn Codec<String>>>,
    read_only: bool,
    token: Option<String>,
    loopback: bool,
    sample_interval: Duration,
    action_time: Duration,
    /// Set when the server shuts down: ends the open live event views.
    closing: tokio::sync::watch::Sender<bool>,
}

impl std::fmt::Debug for Dashboard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dashboard")
            .field("codec", &self.codec.name())
            .field("queue_codecs", &self.queue_codecs.len())
            .field("read_only", &self.read_only)
            .field("token", &self.token.as_ref().map(|_| "***"))
            .field("sample_interval", &self.sample_interval)
            .field("action_time", &self.action_time)
            .finish()
    }
}

impl Dashboard {
    /// A dashboard of the deployment `client` is connected to, decoding
    /// payloads as UTF-8 text ([`StringCodec`]), with actions, no token.
    pub fn new(client: Client) -> Self {
        Dashboard {
            client,
            codec: Arc::new(StringCodec),
            queue_codecs: HashMap::new(),
            read_only: false,
            token: None,
            loopback: true,
            sample_interval: Duration::from_secs(5),
            action_time: api::action::ACTION_TIME,
            closing: tokio::sync::watch::channel(false).0,
        }
    }

    /// How payloads are shown: the codec the Java side uses, as text.
    /// Payloads it cannot decode are shown as hex.
    pub fn codec(mut self, codec: impl Codec<String>) -> Self {
        self.codec = Arc::new(codec);
        self
    }

    /// How one queue's payloads are shown, in place of [`codec`](Self::codec):
    /// the codec the operator knows the queue's Java side uses, so its
    /// values are not left to detection.
    ///
    /// ```no_run
    /// # async fn demo(client: delayq::Client) {
    /// use delayq::codec::detect::AutoCodec;
    /// let app = delayq_dashboard::Dashboard::new(client)
    ///     .codec(AutoCodec::new())
    ///     .queue_codec("audit", delayq::StringCodec)
    ///     .router();
    /// # }
    /// ```
    pub fn queue_codec(mut self, queue: impl Into<String>, codec: impl Codec<String>) -> Self {
        self.queue_codecs.insert(queue.into(), Arc::new(codec));
        self
    }

    /// Without actions: no button, and no route that changes anything.
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// A token every request must carry (required off loopback).
    pub fn token(mut self, token: Option<String>) -> Self {
        self.token = token.filter(|t| !t.is_empty());
        self
    }

    /// How often every queue is sampled for the overview, the history
    /// charts and the `/metrics` gauges (default 5 s, at least 100 ms).
    pub fn sample_interval(mut self, interval: Duration) -> Self {
        self.sample_interval = interval.max(Duration::from_millis(100));
        self
    }

    /// How long one action may go on before it answers (default 60 s).
    /// Actions work in short atomic steps: one stopped by this limit keeps
    /// the steps it finished and says that more is left; pressing again
    /// goes on.
    pub fn action_time(mut self, limit: Duration) -> Self {
        self.action_time = limit;
        self
    }

    /// The routes, with the sampler started (it stops when the router and
    /// every clone of it are dropped). Call inside a Tokio runtime.
    ///
    /// Requests are checked as for a loopback listener: the `Host` must be
    /// a loopback name unless a token is set.
    ///
    /// Installs the Prometheus recorder as the process's `metrics` recorder
    /// unless one is installed already ([`install_recorder`]); with another
    /// recorder, `/metrics` says so and the rest works.
    pub fn router(self) -> Router {
        let shared = Shared::start(Shared {
            codec: self.codec,
            queue_codecs: self.queue_codecs,
            read_only: self.read_only,
            token: self.token,
            loopback: self.loopback,
            sample_interval: self.sample_interval,
            action_time: self.action_time,
            closing: self.closing,
            ..Shared::new(self.client)
        });
        let router = Router::new()
            .route("/", get(assets::overview_page))
            .route("/queue", get(assets::queue_page))
            .route("/partitioned", get(assets::partitioned_page))
            .route("/workers", get(assets::workers_page))
            .route("/job", get(assets::job_page))
            .route("/batch", get(assets::batch_page))
            .route("/search", get(assets::search_page))
            .route("/assets/dashboard.js", get(assets::script))
            .route("/assets/dashboard.css", get(assets::style))
            .route("/metrics", get(metrics::render))
            .merge(api::routes(shared.read_only));
        router
            .layer(axum::middleware::from_fn_with_state(shared.clone(), guard::check))
            .with_state(shared)
    }

    /// Serves the dashboard on `listener` until the process ends. Refuses a
    /// non-loopback address without a [`token`](Self::token).
    pub async fn serve(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        self.serve_with_shutdown(listener, std::future::pending()).await
    }

    /// [`serve`](Self::serve) until `shutdown` completes.
    ///
    /// ```no_run
    /// # async fn demo(client: delayq::Client) -> std::io::Result<()> {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// let stop = async { let _ = tokio::signal::ctrl_c().await; };
    /// delayq_dashboard::Dashboard::new(client).serve_with_shutdown(listener, stop).await
    /// # }
    /// ```
    pub async fn serve_with_shutdown(
        mut self,
        listener: tokio::net::TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let addr = listener.local_addr()?;
        check_listen(addr, self.token.is_some())?;
        self.loopback = addr.ip().is_loopback();
        // A graceful shutdown waits for every response to end: the live
        // event views (Server-Sent Events) end when told.
        let closing = self.closing.clone();
        let shutdown = async move {
            shutdown.await;
            closing.send_replace(true);
        };
        axum::serve(listener, self.router())
            .with_graceful_shutdown(shutdown)
            .await
    }
}

/// Refuses to serve a non-loopback address without a token.
///
/// ```
/// use delayq_dashboard::check_listen;
/// assert!(check_listen("127.0.0.1:9090".parse().unwrap(), false).is_ok());
/// assert!(check_listen("0.0.0.0:9090".parse().unwrap(), false).is_err());
/// assert!(check_listen("0.0.0.0:9090".parse().unwrap(), true).is_ok());
/// ```
pub fn check_listen(addr: SocketAddr, has_token: bool) -> std::io::Result<()> {
    if addr.ip().is_loopback() || has_token {
        Ok(())
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "refusing to serve the dashboard on {addr} without a token: anyone who can reach it could \
                 purge queues. Set --token or DELAYQ_TOKEN, or listen on 127.0.0.1"
            ),
        ))
    }
}

/// What every handler shares.
pub(crate) struct Shared {
    pub client: Client,
    pub codec: Arc<dyn Codec<String>>,
    /// Codecs of single queues, in place of `codec`.
    pub queue_codecs: HashMap<String, Arc<dyn Codec<String>>>,
    pub read_only: bool,
    pub token: Option<String>,
    pub loopback: bool,
    pub sample_interval: Duration,
    /// How long one action may go on.
    pub action_time: Duration,
    pub queues: parking_lot::RwLock<sampler::Queues>,
    pub metrics: Option<metrics_exporter_prometheus::PrometheusHandle>,
    /// What the Redis probe found last.
    pub health: tokio::sync::watch::Sender<health::Health>,
    /// When the dashboard started.
    pub started: SystemTime,
    /// Which Redis this is, for the pages' header.
    pub server: parking_lot::RwLock<server_info::ServerInfo>,
    /// True once the server shuts down (the live event views end).
    pub closing: tokio::sync::watch::Sender<bool>,
}

impl Shared {
    /// Read-only defaults, with the recorder installed if it can be.
    fn new(client: Client) -> Shared {
        Shared {
            codec: Arc::new(StringCodec),
            queue_codecs: HashMap::new(),
            read_only: true,
            token: None,
            loopback: false,
            sample_interval: Duration::from_secs(5),
            action_time: api::action::ACTION_TIME,
            queues: parking_lot::RwLock::new(sampler::Queues::default()),
            metrics: install_recorder().ok(),
            health: health::channel(),
            started: SystemTime::now(),
            server: parking_lot::RwLock::new(server_info::configured(&client)),
            closing: tokio::sync::watch::channel(false).0,
            client,
        }
    }

    /// The codec `queue`'s payloads are shown with.
    pub(crate) fn codec_of(&self, queue: &str) -> &dyn Codec<String> {
        match self.queue_codecs.get(queue) {
            Some(codec) => &**codec,
            None => &*self.codec,
        }
    }

    /// Shared, with the Redis probe and the sampler running.
    fn start(self) -> Arc<Shared> {
        let shared = Arc::new(self);
        health::start(&shared);
        server_info::start(&shared);
        sampler::start(&shared);
        shared
    }
}

/// Milliseconds since the Unix epoch, for JSON.
pub(crate) fn epoch_ms(at: SystemTime) -> i64 {
    match at.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_millis() as i64,
        Err(e) => -(e.duration().as_millis() as i64),
    }
}
