//! The pages and their script and style, embedded in the binary (no CDN,
//! no build step).

use axum::extract::State;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::Extension;
use std::sync::Arc;

use super::guard::Csrf;
use super::Shared;

const OVERVIEW: &str = include_str!("assets/overview.html");
const QUEUE: &str = include_str!("assets/queue.html");
const SCRIPT: &str = include_str!("assets/dashboard.js");
const STYLE: &str = include_str!("assets/dashboard.css");

/// A page with the session's CSRF token and the read-only flag filled in.
fn page(template: &str, shared: &Shared, csrf: &Csrf) -> impl IntoResponse {
    let html = template
        .replace("{{csrf}}", &csrf.0)
        .replace("{{read_only}}", if shared.read_only { "true" } else { "false" });
    ([(header::CACHE_CONTROL, "no-store")], Html(html))
}

/// `GET /`: every queue.
pub(crate) async fn overview_page(
    State(shared): State<Arc<Shared>>,
    Extension(csrf): Extension<Csrf>,
) -> impl IntoResponse {
    page(OVERVIEW, &shared, &csrf)
}

/// `GET /queue?name=N`: one queue.
pub(crate) async fn queue_page(
    State(shared): State<Arc<Shared>>,
    Extension(csrf): Extension<Csrf>,
) -> impl IntoResponse {
    page(QUEUE, &shared, &csrf)
}

/// `GET /assets/dashboard.js`.
pub(crate) async fn script() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], SCRIPT)
}

/// `GET /assets/dashboard.css`.
pub(crate) async fn style() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE)
}
