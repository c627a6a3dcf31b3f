//! Message headers: a small map of strings offered beside a value and given
//! to its handler with it ([`Delivery::headers`](crate::Delivery::headers)).
//!
//! The payload's bytes stay exactly what the codec wrote: the headers live
//! in the value's member of delayq's priority sets (`lua/lib/priority.lua`,
//! a length-prefixed JSON object after the level digit and any TTL header),
//! then, while a delivery is out, in the queue's section store, and in a
//! dead letter's reason record, so every give-back, retry, dead letter and
//! requeue keeps them.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::{Error, Result};

/// No headers, for a value offered without.
pub(crate) static EMPTY: Headers = Headers(BTreeMap::new());

/// The headers of a value: at most [`Headers::MAX_ENTRIES`] string pairs,
/// at most [`Headers::MAX_BYTES`] bytes as JSON, keys in sorted order.
///
/// Offer them with [`OfferOptions::header`](crate::OfferOptions::header);
/// a handler reads them from its
/// [`Delivery::headers`](crate::Delivery::headers). A value offered with
/// headers lives in delayq's keys of the queue (as a value with a
/// priority above the default does): **a Java client never sees it**.
///
/// ```
/// use delayq::Headers;
///
/// let mut headers = Headers::new();
/// headers.insert("tenant", "acme");
/// headers.insert("source", "checkout");
/// assert_eq!(headers.get("tenant"), Some("acme"));
/// assert_eq!(headers.len(), 2);
/// let keys: Vec<&str> = headers.iter().map(|(k, _)| k).collect();
/// assert_eq!(keys, ["source", "tenant"]);
///
/// let same: Headers = [("tenant", "acme"), ("source", "checkout")].into_iter().collect();
/// assert_eq!(same, headers);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Headers(BTreeMap<String, String>);

impl Headers {
    /// Most entries an offer may carry.
    pub const MAX_ENTRIES: usize = 32;
    /// Most bytes the headers may take as a JSON object.
    pub const MAX_BYTES: usize = 8192;
    /// The W3C `traceparent` header: a value offered with headers, a TTL or
    /// a priority inside a span carries its trace context as this header
    /// (feature `opentelemetry`; unless the caller set one), and its
    /// handler's span continues that trace.
    pub const TRACEPARENT: &'static str = "traceparent";
    /// The W3C `tracestate` header, beside [`TRACEPARENT`](Self::TRACEPARENT)
    /// when the span has one.
    pub const TRACESTATE: &'static str = "tracestate";

    /// No headers.
    pub fn new() -> Headers {
        Headers::default()
    }

    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// Sets `key` to `value`; returns the value it replaced. The limits are
    /// checked at the offer ([`Error::InvalidArgument`] past them).
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<String>) -> Option<String> {
        self.0.insert(key.into(), value.into())
    }

    /// Removes `key`; returns its value.
    pub fn remove(&mut self, key: &str) -> Option<String> {
        self.0.remove(key)
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entries, by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// As a map.
    pub fn as_map(&self) -> &BTreeMap<String, String> {
        &self.0
    }

    /// The JSON object the scripts carry; [`Error::InvalidArgument`] past
    /// the limits or for an empty key.
    pub(crate) fn encode(&self) -> Result<String> {
        if self.0.len() > Headers::MAX_ENTRIES {
            return Err(Error::InvalidArgument(format!(
                "at most {} headers, not {}",
                Headers::MAX_ENTRIES,
                self.0.len()
            )));
        }
        if self.0.keys().any(String::is_empty) {
            return Err(Error::InvalidArgument("a header's name is not empty".into()));
        }
        let json = serde_json::to_string(&self.0).expect("a map of strings serializes");
        if json.len() > Headers::MAX_BYTES {
            return Err(Error::InvalidArgument(format!(
                "headers take at most {} bytes as JSON, not {}",
                Headers::MAX_BYTES,
                json.len()
            )));
        }
        Ok(json)
    }

    /// Headers read back from Redis: a JSON object of strings within the
    /// limits, else a message saying what is wrong.
    pub(crate) fn decode(json: &[u8]) -> std::result::Result<Headers, String> {
        if json.len() > Headers::MAX_BYTES {
            return Err(format!(
                "headers of {} bytes (at most {})",
                json.len(),
                Headers::MAX_BYTES
            ));
        }
        let map: BTreeMap<String, String> =
            serde_json::from_slice(json).map_err(|e| format!("headers are not a JSON object of strings: {e}"))?;
        if map.len() > Headers::MAX_ENTRIES {
            return Err(format!("{} headers (at most {})", map.len(), Headers::MAX_ENTRIES));
        }
        if map.contains_key("") {
            return Err("a header's name is empty".into());
        }
        Ok(Headers(map))
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for Headers {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Headers {
        Headers(iter.into_iter().map(|(k, v)| (k.into(), v.into())).collect())
    }
}

impl From<BTreeMap<String, String>> for Headers {
    fn from(map: BTreeMap<String, String>) -> Headers {
        Headers(map)
    }
}

impl<'a> IntoIterator for &'a Headers {
    type Item = (&'a String, &'a String);
    type IntoIter = std::collections::btree_map::Iter<'a, String, String>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

tokio::task_local! {
    /// The headers of the value a Worker's handler handles: shared, so
    /// that the handler's first poll (in place) and its task, if it waits,
    /// hold them without a copy; `None` for none (most values).
    static CURRENT: Option<Arc<Headers>>;
}

/// A value's headers, as a handler's scope holds them.
pub(crate) fn shared(headers: Headers) -> Option<Arc<Headers>> {
    (!headers.is_empty()).then(|| Arc::new(headers))
}

/// Runs a Worker's handler with its value's headers at hand
/// ([`Headers::current`]).
pub(crate) fn scope<F: std::future::Future>(
    headers: Option<Arc<Headers>>,
    handling: F,
) -> impl std::future::Future<Output = F::Output> {
    CURRENT.scope(headers, handling)
}

/// Runs `poll` (a Worker handler's first poll, in place) with `headers`
/// at hand, as [`scope`] does for the polls of a task.
pub(crate) fn poll_scoped<R>(headers: Option<Arc<Headers>>, poll: impl FnOnce() -> R) -> R {
    CURRENT.sync_scope(headers, poll)
}

impl Headers {
    /// The headers of the value that the calling [`Worker`](crate::Worker)
    /// handler handles (a closure handler gets the value alone; a tower
    /// service reads [`Job::headers`](crate::worker::Job::headers)).
    /// Empty outside a handler's task, in a task the handler spawned, and
    /// for a value offered without headers.
    ///
    /// ```no_run
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let worker = client.worker("orders", delayq::StringCodec)?;
    /// let handle = worker.run(|order: String| async move {
    ///     let tenant = delayq::Headers::current().get("tenant").map(str::to_owned);
    ///     println!("{order} for {tenant:?}");
    ///     Ok::<(), std::io::Error>(())
    /// });
    /// # handle.shutdown().await;
    /// # Ok(()) }
    /// ```
    pub fn current() -> Headers {
        (CURRENT.try_with(|headers| headers.as_deref().cloned()).ok().flatten()).unwrap_or_default()
    }
}

/// A member section's headers (`lua/lib/priority.lua`): after any TTL
/// header, `H`, 5 digits of length, then the JSON; `None` when it has none.
pub(crate) fn section_headers(section: &[u8]) -> Option<&[u8]> {
    let rest = match section.first() {
        Some(b'T' | b't') if section.len() >= 14 => &section[14..],
        _ => section,
    };
    let len = parse_len(rest)?;
    rest.get(6..6 + len)
}

/// The length of a headers part (`H` and 5 digits) at the start of `bytes`.
pub(crate) fn parse_len(bytes: &[u8]) -> Option<usize> {
    if bytes.first() != Some(&b'H') || bytes.len() < 6 || !bytes[1..6].iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(&bytes[1..6]).ok()?.parse().ok()
}

/// The script argument for headers: `H` then the JSON (empty: none).
pub(crate) fn offer_arg(headers: &Headers) -> Result<String> {
    if headers.is_empty() {
        return Ok(String::new());
    }
    Ok(format!("H{}", headers.encode()?))
}

const TRACEPARENT: &str = Headers::TRACEPARENT;
const TRACESTATE: &str = Headers::TRACESTATE;

/// The script argument for an offer into the priority sets, given the
/// caller's `headers` and their [`offer_arg`] (`untraced`, already checked):
/// with the current span's trace context as `traceparent` (and
/// `tracestate`) when there is one and the caller set none (feature
/// `opentelemetry`), unless that would pass the limits (then `untraced`).
#[cfg_attr(not(feature = "opentelemetry"), allow(unused_variables))]
pub(crate) fn with_trace(headers: &Headers, untraced: String) -> String {
    #[cfg(feature = "opentelemetry")]
    if let (false, Some(context)) = (
        headers.0.contains_key(TRACEPARENT),
        crate::telemetry::trace_context::current(),
    ) {
        let mut traced = headers.clone();
        let (parent, state) = match context.split_once(' ') {
            Some((parent, state)) => (parent, Some(state)),
            None => (context.as_str(), None),
        };
        traced.insert(TRACEPARENT, parent);
        if let Some(state) = state {
            traced.insert(TRACESTATE, state);
        }
        if let Ok(arg) = offer_arg(&traced) {
            return arg;
        }
    }
    untraced
}

/// The trace context a value's headers carry, as the traces store keeps
/// one (`traceparent`, then a space and `tracestate`).
#[cfg_attr(not(feature = "opentelemetry"), allow(dead_code))]
pub(crate) fn trace_of(headers: &Headers) -> Option<String> {
    let parent = headers.get(TRACEPARENT)?;
    Some(match headers.get(TRACESTATE) {
        Some(state) if !state.is_empty() => format!("{parent} {state}"),
        _ => parent.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_and_keep_their_limits() {
        let headers: Headers = [("a", "1"), ("b", "ü\"\n")].into_iter().collect();
        let json = headers.encode().unwrap();
        assert_eq!(Headers::decode(json.as_bytes()).unwrap(), headers);
        let many: Headers = (0..33).map(|i| (format!("k{i}"), "v")).collect();
        assert!(matches!(many.encode(), Err(Error::InvalidArgument(_))));
        let big: Headers = [("k", "x".repeat(9000))].into_iter().collect();
        assert!(matches!(big.encode(), Err(Error::InvalidArgument(_))));
        let unnamed: Headers = [("", "v")].into_iter().collect();
        assert!(matches!(unnamed.encode(), Err(Error::InvalidArgument(_))));
        assert!(Headers::decode(b"[1]").is_err());
        assert!(Headers::decode(br#"{"a":1}"#).is_err());
    }

    #[test]
    fn a_section_reads_its_headers_after_a_ttl_header() {
        assert_eq!(section_headers(b"H00002{}"), Some(&b"{}"[..]));
        assert_eq!(
            section_headers(b"T1764000000000H00007{\"a\":1}"),
            Some(&b"{\"a\":1}"[..])
        );
        assert_eq!(section_headers(b"T1764000000000"), None);
        assert_eq!(section_headers(b"H00009{}"), None);
        assert_eq!(offer_arg(&Headers::new()).unwrap(), "");
    }
}
