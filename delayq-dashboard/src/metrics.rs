//! `GET /metrics`: Prometheus text of the `metrics` facade's series, with
//! per-queue gauges of every discovered queue.

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
    body.push_str(&super::health::metrics_text(&shared));
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        body,
    )
}

/// The server-side counts of one queue as gauges labelled `queue`;
/// `delayq_paused` is 1 while it is paused, and its lag reads 0 meanwhile.
pub(crate) fn set_queue_gauges(name: &str, status: &QueueStatus, at: SystemTime) {
    let q = name.to_owned();
    metrics::gauge!("delayq_pending", "queue" => q.clone()).set(status.pending as f64);
    metrics::gauge!("delayq_ready", "queue" => q.clone()).set(status.ready as f64);
    metrics::gauge!("delayq_in_flight", "queue" => q.clone()).set(status.in_flight as f64);
    metrics::gauge!("delayq_dead_letters", "queue" => q.clone()).set(status.dead_letters as f64);
    metrics::gauge!("delayq_quarantined", "queue" => q.clone()).set(status.quarantined as f64);
    metrics::gauge!("delayq_paused", "queue" => q.clone()).set(if status.paused { 1.0 } else { 0.0 });
    // A deliberate pause is no transfer failure: no lag to alert on while
    // it lasts (delayq_pending shows what accumulates).
    let lag = if status.paused {
        0.0
    } else {
        status.lag_at(at).as_secs_f64()
    };
    metrics::gauge!("delayq_transfer_lag_seconds", "queue" => q).set(lag);
}
