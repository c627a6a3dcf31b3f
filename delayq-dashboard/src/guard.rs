//! Who may ask what: the token, the loopback `Host` rule, and for every
//! action a same-site request carrying the session's CSRF token.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::Shared;

/// The cookie that holds the session's CSRF token.
pub(crate) const CSRF_COOKIE: &str = "delayq_csrf";
/// The header an action carries the CSRF token in.
pub(crate) const CSRF_HEADER: &str = "x-csrf-token";
/// The cookie that holds the dashboard token after `?token=`.
const TOKEN_COOKIE: &str = "delayq_token";

/// The session's CSRF token, for the pages to embed.
#[derive(Clone)]
pub(crate) struct Csrf(pub String);

/// Runs before every handler.
pub(crate) async fn check(State(shared): State<Arc<Shared>>, mut request: Request, next: Next) -> Response {
    let headers = request.headers().clone();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");

    // A page served on loopback without a token must be asked for by a
    // loopback name: a site whose name rebinds to 127.0.0.1 gets nothing.
    if shared.token.is_none() && shared.loopback && !is_loopback_host(host) {
        return refuse(
            StatusCode::FORBIDDEN,
            "this dashboard answers only to 127.0.0.1, [::1] or localhost",
        );
    }

    if let Some(token) = &shared.token {
        let query_token = request.uri().query().and_then(|q| query_param(q, "token"));
        if let Some(given) = query_token.filter(|_| request.method() == Method::GET) {
            if !same(&given, token) {
                return refuse(StatusCode::UNAUTHORIZED, "wrong token");
            }
            // Keep it in a cookie and take it out of the address bar.
            let path = same_site_path(request.uri().path());
            let rest: Vec<&str> = request
                .uri()
                .query()
                .unwrap_or("")
                .split('&')
                .filter(|p| !p.starts_with("token=") && !p.is_empty())
                .collect();
            let location = if rest.is_empty() {
                path
            } else {
                format!("{path}?{}", rest.join("&"))
            };
            let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, location)]).into_response();
            if let Ok(cookie) =
                HeaderValue::from_str(&format!("{TOKEN_COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict"))
            {
                response.headers_mut().append(header::SET_COOKIE, cookie);
            }
            return response;
        }
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| h.strip_prefix("Bearer "))
            .map(str::to_owned);
        // Every cookie of the name: one planted by another site on this host
        // does not shadow the right one.
        let presented =
            bearer.is_some_and(|p| same(&p, token)) || cookies(&headers, TOKEN_COOKIE).any(|p| same(&p, token));
        if !presented {
            return refuse(
                StatusCode::UNAUTHORIZED,
                "this dashboard needs its token: open it once as /?token=TOKEN, or send Authorization: Bearer TOKEN",
            );
        }
    }

    let safe = matches!(*request.method(), Method::GET | Method::HEAD);
    // Any site on this host can plant cookies (cookies ignore ports), more
    // than one of a name too: only values of the shape this guard mints
    // count; the page gets a fresh one when none does.
    let sessions: Vec<String> = cookies(&headers, CSRF_COOKIE).filter(|c| is_minted(c)).collect();
    if !safe {
        if let Some(why) = cross_site(&headers, host) {
            return refuse(StatusCode::FORBIDDEN, why);
        }
        let sent = headers.get(CSRF_HEADER).and_then(|h| h.to_str().ok()).unwrap_or("");
        if !sessions.iter().any(|s| same(s, sent)) {
            return refuse(
                StatusCode::FORBIDDEN,
                "missing or wrong CSRF token: reload the dashboard page and try again",
            );
        }
    }

    let (csrf, fresh) = match sessions.into_iter().next() {
        Some(token) => (token, false),
        None => (new_token(), true),
    };
    request.extensions_mut().insert(Csrf(csrf.clone()));
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    if fresh
        && let Ok(cookie) = HeaderValue::from_str(&format!("{CSRF_COOKIE}={csrf}; Path=/; HttpOnly; SameSite=Strict"))
    {
        headers.append(header::SET_COOKIE, cookie);
    }
    headers.insert("x-frame-options", HeaderValue::from_static("DENY"));
    headers.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    headers.insert("referrer-policy", HeaderValue::from_static("same-origin"));
    headers.insert(
        "content-security-policy",
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
        ),
    );
    response
}

/// Why a state-changing request looks cross-site, if it does.
fn cross_site(headers: &HeaderMap, host: &str) -> Option<&'static str> {
    if let Some(site) = headers.get("sec-fetch-site").and_then(|h| h.to_str().ok())
        && site != "same-origin"
        && site != "none"
    {
        return Some("cross-site request refused (Sec-Fetch-Site)");
    }
    if let Some(origin) = headers.get(header::ORIGIN).and_then(|h| h.to_str().ok()) {
        let ours = [format!("http://{host}"), format!("https://{host}")];
        if !ours.iter().any(|o| o == origin) {
            return Some("cross-site request refused (Origin is not this dashboard)");
        }
    }
    None
}

/// `path` as a path on this dashboard: a browser reads `//host/..` (and
/// `/\host/..`) in a `Location` as another site.
fn same_site_path(path: &str) -> String {
    format!("/{}", path.trim_start_matches(['/', '\\']))
}

/// Whether `token` has the shape [`new_token`] gives: 32 lowercase hex digits.
fn is_minted(token: &str) -> bool {
    token.len() == 32 && token.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn is_loopback_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(name, _)| name)
    };
    name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn refuse(status: StatusCode, why: &'static str) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], why).into_response()
}

/// The values of every cookie named `name`, in the order sent.
fn cookies<'a>(headers: &'a HeaderMap, name: &'a str) -> impl Iterator<Item = String> + 'a {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|h| h.to_str().ok())
        .flat_map(|h| h.split(';'))
        .filter_map(move |pair| {
            let (key, value) = pair.trim().split_once('=')?;
            (key == name).then(|| value.to_owned())
        })
}

/// A query parameter's value (percent-decoded).
pub(crate) fn query_param(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        (key == name).then(|| percent_decode(value))
    })
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => match (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            ) {
                (Some(high), Some(low)) => {
                    out.push(high << 4 | low);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Equal, in time that does not depend on where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// 128 random bits from the OS, as hex.
fn new_token() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the OS random source works");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_names_pass_the_host_rule() {
        for host in [
            "127.0.0.1:9090",
            "localhost:9090",
            "[::1]:9090",
            "LOCALHOST",
            "127.0.0.1",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in ["evil.example:9090", "10.0.0.1:9090", "", "localhost.evil.example"] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }

    #[test]
    fn redirects_stay_on_this_site() {
        assert_eq!(same_site_path("//evil.example/"), "/evil.example/");
        assert_eq!(same_site_path("/\\evil.example/"), "/evil.example/");
        assert_eq!(same_site_path("/queue"), "/queue");
        assert_eq!(same_site_path(""), "/");
    }

    #[test]
    fn only_minted_csrf_tokens_are_taken() {
        assert!(is_minted(&new_token()));
        for planted in [
            "0123456789abcdef0123456789abcdef0",
            "0123456789ABCDEF0123456789ABCDEF",
            "\"><i/id=pwned>aaaaaaaaaaaaaaaaaaaaaaaa",
            "",
        ] {
            assert!(!is_minted(planted), "{planted}");
        }
    }

    #[test]
    fn query_params_are_decoded() {
        assert_eq!(query_param("name=a%7Bb%7D&x=1", "name").as_deref(), Some("a{b}"));
        assert_eq!(query_param("x=1", "name"), None);
        assert_eq!(percent_decode("100%"), "100%");
    }
}
