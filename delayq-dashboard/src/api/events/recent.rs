//! The newest events a queue's stream keeps, read when a live view opens
//! without an id to resume from: the page starts with them, and the view
//! reads on after the newest, so nothing written once the browser has the
//! answer's headers is missed.

use delayq::events::Event;
use delayq::Client;

/// Events a view opens with, most.
pub(crate) const RECENT: usize = 100;

/// Up to [`RECENT`] of `queue`'s newest events, oldest first, and the id
/// to read on after (`0-0` for an empty stream).
pub(crate) async fn recent(client: &Client, queue: &str) -> delayq::Result<(Vec<Event>, String)> {
    let events = client.newest_events(&delayq::QueueKeys::new(queue)?, RECENT).await?;
    let newest = events.last().map_or_else(|| "0-0".to_owned(), |e| e.stream_id.clone());
    Ok((events, newest))
}
