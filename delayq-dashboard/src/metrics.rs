//! `GET /metrics`: Prometheus text of the `metrics` facade's series, with
//! per-queue gauges of every discovered queue.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

use delayq::{Client, QueueStatus};

use super::sampler::WorkerCounts;
use super::Shared;

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Installs the Prometheus recorder as the process's `metrics` recorder
/// (once; later calls return the same handle), so delayq's series and the
/// dashboard's gauges can be rendered. Fails if another recorder was
/// installed first: then serve that recorder's output yourself.
///
/// ```no_run
/// let handle = delayq_dashboard::install_recorder().expect("no other recorder");
/// println!("{}", handle.render());
/// ```
pub fn install_recorder() -> std::io::Result<PrometheusHandle> {
    if let Some(handle) = HANDLE.get() {
        return Ok(handle.clone());
    }
    static LOCK: parking_lot::Mutex<()> = parking_lot::Mutex::new(());
    let _guard = LOCK.lock();
    if let Some(handle) = HANDLE.get() {
        return Ok(handle.clone());
    }
    let handle = PrometheusBuilder::new()
        .install_recorder()
        .map_err(|e| std::io::Error::other(format!("cannot install the Prometheus recorder: {e}")))?;
    // The recorder keeps histograms as summaries; upkeep keeps them bounded.
    let upkeep = handle.clone();
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move {
            let mut tick = tokio::time::interval(std::time::Duration::from_secs(5));
            loop {
                tick.tick().await;
                upkeep.run_upkeep();
            }
        });
    }
    let _ = HANDLE.set(handle.clone());
    Ok(handle)
}

/// A router with only `GET /metrics`, for a service that embeds delayq:
/// merge it into the service's axum app. It installs the recorder (see
/// [`install_recorder`]) and samples every queue on the server for the
/// per-queue gauges, like the dashboard; no page, no action.
///
/// ```no_run
/// # async fn demo(client: delayq::Client) -> std::io::Result<()> {
/// let app = axum::Router::new()
///     .route("/healthz", axum::routing::get(|| async { "ok" }))
///     .merge(delayq_dashboard::metrics_router(client));
/// let listener = tokio::net::TcpListener::bind("0.0.0.0:9100").await?;
/// axum::serve(listener, app).await
/// # }
/// ```
pub fn metrics_router(client: Client) -> Router {
    let shared = Shared::start(Shared::new(client));
    Router::new().route("/metrics", get(render)).with_state(shared)
}

/// Serves `GET /metrics` on `addr` until the process ends: the one call a
/// service that embeds delayq needs for Prometheus.
///
/// ```no_run
/// # async fn demo() -> std::io::Result<()> {
/// let client = delayq::Client::connect("redis://127.0.0.1:6379").await.map_err(std::io::Error::other)?;
/// tokio::spawn(delayq_dashboard::serve_metrics("0.0.0.0:9100".parse().unwrap(), client.clone()));
/// # Ok(()) }
/// ```
pub async fn serve_metrics(addr: SocketAddr, client: Client) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    axum::serve(listener, metrics_router(client)).await
}

/// The Prometheus text.
pub(crate) async fn render(State(shared): State<Arc<Shared>>) -> impl IntoResponse {
    let mut body = match &shared.metrics {
        Some(handle) => handle.render(),
        None => "# another metrics recorder is installed in this process; delayq cannot render it\n".to_owned(),
    };
    // The dashboard's own lines, rendered here rather than through the
    // process-wide recorder: each dashboard of a process has its own.
    body.push_str(&queue_gauges_text(&shared));
    body.push_str(&super::health::metrics_text(&shared));
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        body,
    )
}

/// The per-queue gauge families, each rendered from the dashboard's own
/// samples: a queue gone from discovery has no line. Named `delayq_queue_*`:
/// the library's own process metrics (`delayq_pending`, `delayq_ready`,
/// `delayq_transferred_total`, ...: what one process saw or did) keep their
/// names, so a query over both never adds a queue's count twice.
const FAMILIES: [(&str, &str); 17] = [
    ("delayq_queue_pending", "Pending elements (timeout set) of the queue."),
    ("delayq_queue_ready", "Values in the queue's ready list."),
    (
        "delayq_queue_grouped_pending",
        "Of delayq_queue_pending, values offered with a group key not due yet (delayq's group keys; Java does not see them).",
    ),
    (
        "delayq_queue_grouped_ready",
        "Of delayq_queue_ready, values offered with a group key waiting in their key's line (delayq's reliable consumers take them; Java does not see them).",
    ),
    (
        "delayq_queue_in_flight",
        "Values taken by reliable consumers and not yet acknowledged.",
    ),
    ("delayq_queue_dead_letters", "Values in the queue's dead-letter list."),
    ("delayq_queue_quarantined", "Malformed elements set aside by transfers."),
    (
        "delayq_queue_paused",
        "1 while the queue is paused for delayq's processes.",
    ),
    (
        "delayq_queue_transfer_lag_seconds",
        "How overdue the queue's head is (0 while paused).",
    ),
    (
        "delayq_queue_oldest_ready_age_seconds",
        "How long the queue's oldest ready value has waited since it fell due (0: none ready; no line while unknown).",
    ),
    (
        "delayq_queue_ready_untaken",
        "1 while the queue has ready values, no live worker, and none left the ready list since the last sample.",
    ),
    ("delayq_queue_workers", "delayq workers of the queue that beat lately."),
    (
        "delayq_queue_workers_silent",
        "delayq workers of the queue that missed their last beats (died, hang, or lost Redis).",
    ),
    (
        "delayq_queue_worker_busy_slots",
        "Handlers the queue's live workers run now.",
    ),
    (
        "delayq_queue_worker_slots",
        "Handler slots (concurrency) of the queue's live workers.",
    ),
    (
        "delayq_queue_concurrency_limit",
        "Most delayq deliveries the queue admits in flight across every process (no line while it has no limit; Java's consumers neither read nor count against it).",
    ),
    (
        "delayq_queue_schedule_runners",
        "Processes running the queue's schedules that beat lately (no line while the queue has no schedule).",
    ),
];

/// The per-queue counter families: the server-side totals
/// ([`delayq::QueueTotals`]), counted by every delayq process's scripts.
const COUNTERS: [(&str, &str); 9] = [
    (
        "delayq_queue_offered_total",
        "Elements delayq's processes offered to the queue.",
    ),
    (
        "delayq_queue_transferred_total",
        "Elements delayq's transfers moved to the ready list as they fell due.",
    ),
    (
        "delayq_queue_acked_total",
        "Reliable deliveries acknowledged (handled).",
    ),
    (
        "delayq_queue_failed_total",
        "Reliable deliveries nacked: handler failures, retried or dead-lettered.",
    ),
    (
        "delayq_queue_dead_lettered_total",
        "Values moved to the dead-letter list.",
    ),
    (
        "delayq_queue_timed_out_total",
        "Deliveries whose lease ran out before a settle.",
    ),
    (
        "delayq_queue_duplicates_total",
        "Values a deduplication window answered as duplicates (not offered).",
    ),
    (
        "delayq_queue_expired_total",
        "Values offered with a TTL not taken within it (dead-lettered or dropped).",
    ),
    (
        "delayq_queue_cancelled_total",
        "Jobs stopped by a cancel: dropped by the take that reached them, or settled as cancelled after their handler stopped.",
    ),
];

/// One sampled queue, as the gauges read it.
struct Sampled<'a> {
    name: &'a str,
    /// The partitioned queue it is a partition of.
    partition_of: Option<&'a str>,
    status: &'a QueueStatus,
    at: SystemTime,
    workers: WorkerCounts,
    untaken: bool,
    runners: Option<usize>,
}

/// The server-side counts of every queue this dashboard samples, as gauges
/// and counters labelled `queue`; `delayq_queue_paused` is 1 while it is
/// paused, and its lag reads 0 meanwhile.
///
/// A partitioned queue has no series of its own: each of its partitions'
/// series carries `partition_of="Q"` beside its `queue`, so every value is
/// in exactly one series, `sum(delayq_queue_ready)` counts it once, and
/// `sum by (partition_of) (delayq_queue_ready{partition_of!=""})` is each
/// partitioned queue's.
pub(crate) fn queue_gauges_text(shared: &Shared) -> String {
    let queues = shared.queues.read();
    let sampled: Vec<Sampled> = queues
        .entries
        .iter()
        .filter_map(|(name, e)| {
            Some(Sampled {
                name,
                partition_of: queues.partition_of.get(name).map(|(queue, _)| queue.as_str()),
                status: e.status.as_ref()?,
                at: e.sampled_at?,
                workers: WorkerCounts::of(&e.workers),
                untaken: e.untaken,
                runners: e.runners,
            })
        })
        .collect();
    let mut out = String::new();
    if sampled.is_empty() {
        return out;
    }
    for (family, help) in FAMILIES {
        let _ = writeln!(out, "# HELP {family} {help}\n# TYPE {family} gauge");
        for queue in &sampled {
            let (status, workers) = (queue.status, queue.workers);
            let value = match family {
                // No line rather than a made-up number while ready values'
                // due time is unknown.
                "delayq_queue_oldest_ready_age_seconds" if status.ready == 0 => 0.0,
                "delayq_queue_oldest_ready_age_seconds" => match status.oldest_ready_age_at(queue.at) {
                    Some(age) => age.as_secs_f64(),
                    None => continue,
                },
                "delayq_queue_concurrency_limit" => match status.concurrency_limit {
                    Some(limit) => f64::from(limit),
                    None => continue,
                },
                "delayq_queue_schedule_runners" => match queue.runners {
                    Some(runners) => runners as f64,
                    None => continue,
                },
                "delayq_queue_ready_untaken" => f64::from(u8::from(queue.untaken)),
                "delayq_queue_workers" => workers.alive as f64,
                "delayq_queue_workers_silent" => workers.silent as f64,
                "delayq_queue_worker_busy_slots" => workers.busy as f64,
                "delayq_queue_worker_slots" => workers.slots as f64,
                "delayq_queue_pending" => status.pending as f64,
                "delayq_queue_ready" => status.ready as f64,
                "delayq_queue_grouped_pending" => status.grouped_pending as f64,
                "delayq_queue_grouped_ready" => status.grouped_ready as f64,
                "delayq_queue_in_flight" => status.in_flight as f64,
                "delayq_queue_dead_letters" => status.dead_letters as f64,
                "delayq_queue_quarantined" => status.quarantined as f64,
                "delayq_queue_paused" => f64::from(u8::from(status.paused)),
                // A deliberate pause is no transfer failure: no lag to
                // alert on while it lasts (delayq_queue_pending shows what
                // accumulates).
                _ if status.paused => 0.0,
                _ => status.lag_at(queue.at).as_secs_f64(),
            };
            let _ = writeln!(out, "{family}{{{}}} {value}", labels(queue));
        }
    }
    for (family, help) in COUNTERS {
        let _ = writeln!(out, "# HELP {family} {help}\n# TYPE {family} counter");
        for queue in &sampled {
            let t = queue.status.totals;
            let value = match family {
                "delayq_queue_offered_total" => t.offered,
                "delayq_queue_transferred_total" => t.transferred,
                "delayq_queue_acked_total" => t.acked,
                "delayq_queue_failed_total" => t.failed,
                "delayq_queue_dead_lettered_total" => t.dead_lettered,
                "delayq_queue_timed_out_total" => t.timed_out,
                "delayq_queue_expired_total" => t.expired,
                "delayq_queue_cancelled_total" => t.cancelled,
                _ => t.duplicates,
            };
            let _ = writeln!(out, "{family}{{{}}} {value}", labels(queue));
        }
    }
    out
}

/// A queue's labels: `queue="N"`, and `partition_of="Q"` on a partition.
fn labels(queue: &Sampled) -> String {
    match queue.partition_of {
        Some(of) => format!("queue=\"{}\",partition_of=\"{}\"", label(queue.name), label(of)),
        None => format!("queue=\"{}\"", label(queue.name)),
    }
}

/// A Prometheus label value: backslash, quote and newline escaped.
fn label(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn label_values_are_escaped() {
        assert_eq!(super::label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
