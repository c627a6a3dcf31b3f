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
        Some(handle) => without_queue_gauges(&handle.render()),
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
/// samples: a queue gone from discovery has no line (the process-wide
/// recorder could not forget it; the library also sets `delayq_pending`
/// and `delayq_ready` there, which these replace).
const FAMILIES: [(&str, &str); 13] = [
    ("delayq_pending", "Pending elements (timeout set) of the queue."),
    ("delayq_ready", "Values in the queue's ready list."),
    (
        "delayq_in_flight",
        "Values taken by reliable consumers and not yet acknowledged.",
    ),
    ("delayq_dead_letters", "Values in the queue's dead-letter list."),
    ("delayq_quarantined", "Malformed elements set aside by transfers."),
    ("delayq_paused", "1 while the queue is paused for delayq's processes."),
    (
        "delayq_transfer_lag_seconds",
        "How overdue the queue's head is (0 while paused).",
    ),
    (
        "delayq_oldest_ready_age_seconds",
        "How long the queue's oldest ready value has waited since it fell due (0: none ready; no line while unknown).",
    ),
    (
        "delayq_ready_untaken",
        "1 while the queue has ready values, no live worker, and none left the ready list since the last sample.",
    ),
    ("delayq_workers", "delayq workers of the queue that beat lately."),
    (
        "delayq_workers_silent",
        "delayq workers of the queue that missed their last beats (died, hang, or lost Redis).",
    ),
    ("delayq_worker_busy_slots", "Handlers the queue's live workers run now."),
    (
        "delayq_worker_slots",
        "Handler slots (concurrency) of the queue's live workers.",
    ),
];

/// The recorder's text without the families the dashboard renders itself.
fn without_queue_gauges(text: &str) -> String {
    let ours = |name: &str| FAMILIES.iter().any(|(family, _)| *family == name);
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let name = match line.strip_prefix("# ") {
            Some(comment) => comment.split_whitespace().nth(1).unwrap_or(""),
            None => line.split(['{', ' ']).next().unwrap_or(""),
        };
        if !ours(name) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The server-side counts of every queue this dashboard samples, as gauges
/// labelled `queue`; `delayq_paused` is 1 while it is paused, and its lag
/// reads 0 meanwhile.
pub(crate) fn queue_gauges_text(shared: &Shared) -> String {
    let queues = shared.queues.read();
    let sampled: Vec<(&String, &QueueStatus, SystemTime, WorkerCounts, bool)> = queues
        .entries
        .iter()
        .filter_map(|(name, e)| {
            Some((
                name,
                e.status.as_ref()?,
                e.sampled_at?,
                WorkerCounts::of(&e.workers),
                e.untaken,
            ))
        })
        .collect();
    let mut out = String::new();
    for (family, help) in FAMILIES {
        if sampled.is_empty() {
            break;
        }
        let _ = writeln!(out, "# HELP {family} {help}\n# TYPE {family} gauge");
        for (name, status, at, workers, untaken) in &sampled {
            let value = match family {
                // No line rather than a made-up number while ready values'
                // due time is unknown.
                "delayq_oldest_ready_age_seconds" if status.ready == 0 => 0.0,
                "delayq_oldest_ready_age_seconds" => match status.oldest_ready_age_at(*at) {
                    Some(age) => age.as_secs_f64(),
                    None => continue,
                },
                "delayq_ready_untaken" => f64::from(u8::from(*untaken)),
                "delayq_workers" => workers.alive as f64,
                "delayq_workers_silent" => workers.silent as f64,
                "delayq_worker_busy_slots" => workers.busy as f64,
                "delayq_worker_slots" => workers.slots as f64,
                "delayq_pending" => status.pending as f64,
                "delayq_ready" => status.ready as f64,
                "delayq_in_flight" => status.in_flight as f64,
                "delayq_dead_letters" => status.dead_letters as f64,
                "delayq_quarantined" => status.quarantined as f64,
                "delayq_paused" => f64::from(u8::from(status.paused)),
                // A deliberate pause is no transfer failure: no lag to
                // alert on while it lasts (delayq_pending shows what
                // accumulates).
                _ if status.paused => 0.0,
                _ => status.lag_at(*at).as_secs_f64(),
            };
            let _ = writeln!(out, "{family}{{queue=\"{}\"}} {value}", label(name));
        }
    }
    out
}

/// A Prometheus label value: backslash, quote and newline escaped.
fn label(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_recorders_queue_gauges_give_way_to_the_dashboards() {
        let recorded = "# TYPE delayq_pending gauge\n\
                        delayq_pending{queue=\"gone\"} 3\n\
                        # HELP delayq_ready Ready values.\n\
                        delayq_ready{queue=\"gone\"} 1\n\
                        # TYPE delayq_pending_total counter\n\
                        delayq_pending_total{queue=\"q\"} 2\n\
                        # TYPE delayq_transferred_total counter\n\
                        delayq_transferred_total{queue=\"q\"} 9\n";
        assert_eq!(
            super::without_queue_gauges(recorded),
            "# TYPE delayq_pending_total counter\n\
             delayq_pending_total{queue=\"q\"} 2\n\
             # TYPE delayq_transferred_total counter\n\
             delayq_transferred_total{queue=\"q\"} 9\n"
        );
        assert_eq!(super::label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
