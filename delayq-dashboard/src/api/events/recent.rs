//! The newest events a queue's stream keeps, read when a live view opens
//! without an id to resume from: the page starts with them, and the view
//! reads on after the newest, so nothing written once the browser has the
//! answer's headers is missed.

use delayq::fred::interfaces::ClientLike;
use delayq::fred::types::{ClusterHash, CustomCommand, Value};
use delayq::{Client, Event, QueueKeys};

/// Events a view opens with, most.
pub(crate) const RECENT: u64 = 100;

/// Up to [`RECENT`] of `queue`'s newest events, oldest first, and the id
/// to read on after (`0-0` for an empty stream).
pub(crate) async fn recent(client: &Client, queue: &str) -> delayq::Result<(Vec<Event>, String)> {
    let stream = QueueKeys::new(queue)?.events();
    let reply: Value = client
        .redis()
        .next()
        .custom(
            CustomCommand::new_static("XREVRANGE", ClusterHash::FirstKey, false),
            vec![
                Value::from(stream.as_str()),
                "+".into(),
                "-".into(),
                "COUNT".into(),
                (RECENT as i64).into(),
            ],
        )
        .await?;
    let mut events: Vec<Event> = entries(reply)
        .into_iter()
        .map(|(id, fields)| Event::decode(queue, &id, fields))
        .collect();
    let newest = events.first().map_or_else(|| "0-0".to_owned(), |e| e.stream_id.clone());
    events.reverse();
    Ok((events, newest))
}

/// `[[id, [field, value, ...]], ...]` (fields as a map under RESP3);
/// entries of another shape are left out.
fn entries(reply: Value) -> Vec<(String, Vec<(String, String)>)> {
    let Value::Array(entries) = reply else {
        return Vec::new();
    };
    entries
        .into_iter()
        .filter_map(|entry| {
            let Value::Array(pair) = entry else { return None };
            let mut pair = pair.into_iter();
            let id = pair.next()?.as_string()?;
            let fields = match pair.next()? {
                Value::Array(flat) => flat
                    .chunks(2)
                    .filter_map(|kv| Some((kv.first()?.as_string()?, kv.get(1)?.as_string()?)))
                    .collect(),
                Value::Map(map) => map
                    .inner()
                    .into_iter()
                    .filter_map(|(k, v)| Some((k.as_str_lossy().into_owned(), v.as_string()?)))
                    .collect(),
                _ => return None,
            };
            Some((id, fields))
        })
        .collect()
}
