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

/// A page with the session's CSRF token and the read-only flag filled in:
/// the only text the server writes into markup, escaped though the guard
/// only hands over tokens it could have minted. Everything else reaches the
/// page as JSON, which the script puts in as text.
fn page(template: &str, shared: &Shared, csrf: &Csrf) -> impl IntoResponse {
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
