//! The pages and their script and style, embedded in the binary (no CDN,
//! no build step). Each is written as parts, one per part of the pages
//! (`assets/js/*.js`, `assets/queue/*.html`, `assets/css/*.css`), joined
//! at compile time into one page, one script and one style sheet.

use axum::extract::State;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::Extension;
use std::sync::Arc;

use super::guard::Csrf;
use super::Shared;

const OVERVIEW: &str = include_str!("assets/overview.html");
const WORKERS: &str = include_str!("assets/workers.html");
const JOB: &str = include_str!("assets/job.html");
const BATCH: &str = include_str!("assets/batch.html");
const SEARCH: &str = include_str!("assets/search.html");
const PARTITIONED: &str = include_str!("assets/partitioned.html");
const QUEUE: &str = concat!(
    include_str!("assets/queue/head.html"),
    include_str!("assets/queue/events.html"),
    include_str!("assets/queue/dead_letters.html"),
    include_str!("assets/queue/pending.html"),
    include_str!("assets/queue/tail.html"),
);
const SCRIPT: &str = concat!(
    include_str!("assets/js/common.js"),
    include_str!("assets/js/theme.js"),
    include_str!("assets/js/keys.js"),
    include_str!("assets/js/payload.js"),
    include_str!("assets/js/charts.js"),
    include_str!("assets/js/history.js"),
    include_str!("assets/js/overview.js"),
    include_str!("assets/js/schedules.js"),
    include_str!("assets/js/pending.js"),
    include_str!("assets/js/dead_letters.js"),
    include_str!("assets/js/events.js"),
    include_str!("assets/js/groups.js"),
    include_str!("assets/js/queue.js"),
    include_str!("assets/js/partitioned.js"),
    include_str!("assets/js/workers.js"),
    include_str!("assets/js/job.js"),
    include_str!("assets/js/batch.js"),
    include_str!("assets/js/search.js"),
    include_str!("assets/js/boot.js"),
);
const STYLE: &str = concat!(
    include_str!("assets/css/dashboard.css"),
    include_str!("assets/css/dead_letters.css"),
    include_str!("assets/css/pending.css"),
    include_str!("assets/css/schedules.css"),
    include_str!("assets/css/events.css"),
    include_str!("assets/css/payload.css"),
    include_str!("assets/css/batch.css"),
    include_str!("assets/css/groups.css"),
);

/// A page with the session's CSRF token and the read-only flag filled in:
/// the only text the server writes into markup, escaped though the guard
/// only hands over tokens it could have minted. Everything else reaches the
/// page as JSON, which the script puts in as text.
fn page(template: &str, shared: &Shared, csrf: &Csrf) -> impl IntoResponse + use<> {
    let html = template
        .replace("{{csrf}}", &escape_html(&csrf.0))
        .replace("{{read_only}}", if shared.read_only { "true" } else { "false" });
    ([(header::CACHE_CONTROL, "no-store")], Html(html))
}

/// `text` safe inside an element or a quoted attribute value.
fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
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

/// `GET /partitioned?name=Q`: one partitioned queue, its partitions.
pub(crate) async fn partitioned_page(
    State(shared): State<Arc<Shared>>,
    Extension(csrf): Extension<Csrf>,
) -> impl IntoResponse {
    page(PARTITIONED, &shared, &csrf)
}

/// `GET /workers`: the workers of every queue (`?queue=N`: of one).
pub(crate) async fn workers_page(
    State(shared): State<Arc<Shared>>,
    Extension(csrf): Extension<Csrf>,
) -> impl IntoResponse {
    page(WORKERS, &shared, &csrf)
}

/// `GET /job?name=Q&id=ID`: one job's history.
pub(crate) async fn job_page(State(shared): State<Arc<Shared>>, Extension(csrf): Extension<Csrf>) -> impl IntoResponse {
    page(JOB, &shared, &csrf)
}

/// `GET /batch?name=Q&id=BID`: one batch's state and counts.
pub(crate) async fn batch_page(
    State(shared): State<Arc<Shared>>,
    Extension(csrf): Extension<Csrf>,
) -> impl IntoResponse {
    page(BATCH, &shared, &csrf)
}

/// `GET /search?text=T`: values by id or text across every queue.
pub(crate) async fn search_page(
    State(shared): State<Arc<Shared>>,
    Extension(csrf): Extension<Csrf>,
) -> impl IntoResponse {
    page(SEARCH, &shared, &csrf)
}

/// `GET /assets/dashboard.js`.
pub(crate) async fn script() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], SCRIPT)
}

/// `GET /assets/dashboard.css`.
pub(crate) async fn style() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE)
}

#[cfg(test)]
mod tests {
    #[test]
    fn markup_is_escaped() {
        assert_eq!(
            super::escape_html(r#"a"><i id='x'>&"#),
            "a&quot;&gt;&lt;i id=&#39;x&#39;&gt;&amp;"
        );
    }
}
