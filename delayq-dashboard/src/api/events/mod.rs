//! `GET /api/events?queue=NAME`: a queue's lifecycle events as Server-Sent
//! Events, for the queue page's live view (and to refresh its counts when
//! something happens instead of polling).
//!
//! The answer is `text/event-stream`:
//! - each event: `id: <stream id>` and one `data: <JSON>` line, the event as
//!   the library serializes it (`queue`, `stream_id`, `time_ms`, `kind` and
//!   the kind's fields; serde escapes what users wrote). A browser's
//!   `EventSource` sends the last id back as `Last-Event-ID` when it
//!   reconnects and the stream reads on after it (`?after=ID` does the same
//!   for a client that opens a new connection itself). Without either it
//!   opens with the newest [`RECENT`](recent::RECENT) events the stream
//!   keeps, oldest first, then reads on after them;
//! - `event: enabled` (`{"queue", "enabled": true, "max_len"}`) or `event:
//!   disabled` (`{"queue", "enabled": false, "message"}`) first, and again
//!   whenever the queue's switch flips (read every [`STATE_EVERY`]), so the
//!   page knows whether events cover its counts;
//! - `event: error` (`{"error"}`) when Redis goes away or a read fails; the
//!   connection stays and reads on (the library resumes after the last id),
//!   and the state event comes again once Redis is back;
//! - a `: keep-alive` comment every [`KEEP_ALIVE`].
//!
//! Each connection holds one connection of the client's blocking pool
//! while it waits (`XREAD BLOCK`), so at most [`MAX_CLIENTS`] are served at
//! once; more answer 503. An unknown queue answers 404, a bad name or id
//! 400, and Redis down 503, as the other APIs do. Nothing here writes.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{self, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Router};
use futures_util::stream::{self, Stream, StreamExt};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};

use delayq::events::{Event, Events, EventsFrom};

use super::error;
use super::known::known;

mod recent;
use crate::health::{self, guarded, unavailable, Health, REDIS_WAIT};
use crate::sampler::view;
use crate::Shared;

/// Live event views served at once (each holds a blocking connection).
pub(crate) const MAX_CLIENTS: usize = 32;
/// Time between keep-alive comments.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// Time between reads of the queue's events switch.
const STATE_EVERY: Duration = Duration::from_secs(15);
/// How long a browser waits before it reconnects a dropped stream.
const RETRY: Duration = Duration::from_secs(3);

/// The permits of live views: one set per dashboard.
#[derive(Clone)]
struct Clients(Arc<Semaphore>);

/// Read-only: the same route either way.
pub(crate) fn routes(_read_only: bool) -> Router<Arc<Shared>> {
    Router::new()
        .route("/api/events", get(events))
        .layer(Extension(Clients(Arc::new(Semaphore::new(MAX_CLIENTS)))))
}

/// `GET /api/events` parameters.
#[derive(Debug, Deserialize)]
pub(crate) struct EventsQuery {
    queue: String,
    /// Read on after this stream id (`Last-Event-ID` wins when both are given).
    after: Option<String>,
}

/// The live events of one queue (see the module's documentation).
async fn events(
    State(shared): State<Arc<Shared>>,
    Extension(clients): Extension<Clients>,
    headers: HeaderMap,
    Query(query): Query<EventsQuery>,
) -> Response {
    let resume = headers
        .get("last-event-id")
        .map(|v| v.to_str().unwrap_or("?").to_owned())
        .or(query.after.clone())
        .filter(|id| !id.is_empty());
    let from = match resume {
        None => None,
        Some(id) if stream_id(&id) => Some(id),
        Some(id) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("{id:?} is not a stream id (<ms>-<seq>)"),
            )
        }
    };
    let Ok(permit) = clients.0.clone().try_acquire_owned() else {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("this dashboard serves {MAX_CLIENTS} live event views at once: close one, or try again later"),
        );
    };
    let name = query.queue;
    let checked = match guarded(&shared, Some(REDIS_WAIT), check(&shared, &name, from)).await {
        Ok(checked) => checked,
        Err(why) => return unavailable(&shared, why),
    };
    let (max_len, recent, after) = match checked {
        Ok(Some(found)) => found,
        Ok(None) => return error(StatusCode::NOT_FOUND, format!("no queue {name}")),
        Err(delayq::Error::InvalidQueueName { name, reason }) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("invalid queue name {name:?}: {reason}"),
            )
        }
        Err(_) if !shared.health.borrow().up => {
            let health = shared.health.borrow().clone();
            return unavailable(&shared, health::Unavailable::Down(health));
        }
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    };
    let events = match delayq::QueueKeys::new(&name).and_then(|keys| shared.client.events(&keys)) {
        Ok(events) => events.from(EventsFrom::After(after)),
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    };
    let mut live = Live {
        health: shared.health.subscribe(),
        closing: shared.closing.subscribe(),
        shared,
        name,
        events,
        max_len,
        ready: VecDeque::new(),
        tick: tokio::time::interval_at(tokio::time::Instant::now() + STATE_EVERY, STATE_EVERY),
        _permit: permit,
    };
    live.health.borrow_and_update();
    let state = live.state();
    live.ready.push_back(sse::Event::default().retry(RETRY));
    live.ready.push_back(state);
    live.ready.extend(recent.iter().filter_map(message));
    Sse::new(live.into_stream())
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE).text("keep-alive"))
        .into_response()
}

/// What a known queue's view opens with: the max length of its events
/// (`None`: off), the events to send first and the id to read on after
/// (`after`, or the newest event's, read with the newest events).
type Opening = (Option<u64>, Vec<Event>, String);

/// The [`Opening`] of `name`; `None`: delayq knows no such queue.
async fn check(shared: &Shared, name: &str, after: Option<String>) -> delayq::Result<Option<Opening>> {
    let status = view(&shared.client, name)?.status().await?;
    if !known(shared, name, &status).await? {
        return Ok(None);
    }
    let max_len = shared.client.events_max_len(&delayq::QueueKeys::new(name)?).await?;
    Ok(Some(match after {
        Some(after) => (max_len, Vec::new(), after),
        None => {
            let (recent, newest) = recent::recent(&shared.client, name).await?;
            (max_len, recent, newest)
        }
    }))
}

/// An event's message: its stream id and its JSON.
fn message(event: &Event) -> Option<sse::Event> {
    match sse::Event::default().id(&event.stream_id).json_data(event) {
        Ok(message) => Some(message),
        Err(e) => {
            tracing::warn!(queue = %event.queue, error = %e, "an event did not serialize");
            None
        }
    }
}

/// `<ms>-<seq>` or `<ms>`, as Redis takes a stream id.
fn stream_id(id: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit());
    match id.split_once('-') {
        Some((ms, seq)) => digits(ms) && digits(seq),
        None => digits(id),
    }
}

/// One live view: what it reads and what it has yet to send.
struct Live {
    shared: Arc<Shared>,
    name: String,
    events: Events,
    health: watch::Receiver<Health>,
    /// True once the server shuts down: the view ends.
    closing: watch::Receiver<bool>,
    /// The events switch as last sent.
    max_len: Option<u64>,
    ready: VecDeque<sse::Event>,
    tick: tokio::time::Interval,
    /// Given back when the browser goes away (the stream is dropped).
    _permit: OwnedSemaphorePermit,
}

impl Live {
    fn into_stream(self) -> impl Stream<Item = Result<sse::Event, Infallible>> + Send {
        stream::unfold(self, |mut live| async move {
            let next = live.next().await?;
            Some((Ok(next), live))
        })
        .boxed()
    }

    /// The next message; `None` once the client shuts down.
    async fn next(&mut self) -> Option<sse::Event> {
        loop {
            if let Some(ready) = self.ready.pop_front() {
                return Some(ready);
            }
            if *self.closing.borrow() {
                return None;
            }
            tokio::select! {
                biased;
                _ = self.closing.changed() => {}
                item = self.events.next() => match item? {
                    Ok(event) => if let Some(message) = message(&event) {
                        return Some(message);
                    },
                    Err(e) => return Some(failed(e.to_string())),
                },
                changed = self.health.changed() => {
                    if changed.is_err() {
                        return None; // the dashboard is gone
                    }
                    let health = self.health.borrow_and_update().clone();
                    if !health.up {
                        let why = health.error.as_deref().unwrap_or("no reply");
                        return Some(failed(format!("Redis is unreachable: {why}")));
                    }
                    // Back: say the switch again (it may have flipped meanwhile).
                    self.reread().await;
                    return Some(self.state());
                }
                _ = self.tick.tick() => {
                    let before = self.max_len;
                    if self.reread().await && self.max_len != before {
                        return Some(self.state());
                    }
                }
            }
        }
    }

    /// Reads the events switch again; false if Redis did not say.
    async fn reread(&mut self) -> bool {
        let Ok(keys) = delayq::QueueKeys::new(&self.name) else {
            return false;
        };
        let read = guarded(&self.shared, Some(REDIS_WAIT), self.shared.client.events_max_len(&keys)).await;
        match read {
            Ok(Ok(max_len)) => {
                self.max_len = max_len;
                true
            }
            _ => false,
        }
    }

    /// `enabled` or `disabled`, as the switch reads now.
    fn state(&self) -> sse::Event {
        let name = &self.name;
        let data = match self.max_len {
            Some(max_len) => ("enabled", json!({"queue": name, "enabled": true, "max_len": max_len})),
            None => (
                "disabled",
                json!({"queue": name, "enabled": false,
                       "message": format!("events are off for this queue: delayq events enable {name}")}),
            ),
        };
        sse::Event::default().event(data.0).data(data.1.to_string())
    }
}

/// An `error` message.
fn failed(message: String) -> sse::Event {
    sse::Event::default()
        .event("error")
        .data(json!({ "error": message }).to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn stream_ids_are_digits_dash_digits() {
        for good in ["0-0", "1700000000000-3", "1700000000000"] {
            assert!(super::stream_id(good), "{good}");
        }
        for bad in ["", "-", "1-", "-1", "1-2-3", "$", "+", "a-1", "1 -1", "1\n-1"] {
            assert!(!super::stream_id(bad), "{bad:?}");
        }
    }
}
