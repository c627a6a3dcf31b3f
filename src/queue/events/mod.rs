//! Lifecycle events: the switch of a queue's event stream, and the reader
//! that follows it.
//!
//! The scripts write the events (`lua/lib/events.lua`); this module turns
//! them on and off (`delayq_events_config:{q}`, a STRING holding the
//! stream's max length) and reads them (`delayq_events:{q}`, a Redis Stream)
//! with `XREAD BLOCK` on the blocking pool.

mod event;

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use fred::interfaces::{ClientLike, KeysInterface};
use fred::types::{ClusterHash, CustomCommand, Value};
use futures_util::stream::{self, BoxStream, Stream, StreamExt};

pub use event::{Event, EventKind};

use crate::error::{CommandResult, Error, Result};
use crate::queue::Core;
use crate::wire::keys::QueueKeys;

/// The max length of a queue's event stream unless given
/// ([`Client::enable_events`](crate::Client::enable_events)).
pub const DEFAULT_EVENTS_MAX_LEN: u64 = 10_000;

/// Most entries one `XREAD` returns.
const READ_COUNT: i64 = 100;
/// Pause after a failed read before the next (never spins).
const ERROR_PAUSE: Duration = Duration::from_secs(1);

/// Where a reader of events starts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum EventsFrom {
    /// With the first event written after the reader starts (the default).
    #[default]
    Now,
    /// With the oldest event the stream still keeps.
    Oldest,
    /// With the first event after this stream id (an [`Event::stream_id`]).
    After(String),
}

/// Turns `queue`'s events on: from now on every delayq script that changes
/// it writes an event to its stream, kept to about `max_len` entries.
pub(crate) async fn enable(core: &Core, keys: &QueueKeys, max_len: u64) -> Result<()> {
    if max_len == 0 {
        return Err(Error::InvalidArgument(
            "the events' max length must be at least 1".into(),
        ));
    }
    let conn = core.conn()?;
    let stream = keys.events();
    // Refused at once rather than by each operation later.
    let found: String = conn
        .custom(
            CustomCommand::new_static("TYPE", ClusterHash::FirstKey, false),
            vec![stream.as_str()],
        )
        .await
        .on_key(&stream)?;
    if found != "none" && found != "stream" {
        return Err(Error::WrongType {
            message: format!("{stream} holds a {found}, not a stream (the events)"),
            key: stream,
        });
    }
    let _: Value = conn
        .set(keys.events_config(), max_len.to_string(), None, None, false)
        .await
        .on_key(&keys.events_config())?;
    Ok(())
}

/// Turns `queue`'s events off; the stream stays (readers see its history).
/// Returns whether they were on.
pub(crate) async fn disable(core: &Core, keys: &QueueKeys) -> Result<bool> {
    let n: i64 = core
        .conn()?
        .del(keys.events_config())
        .await
        .on_key(&keys.events_config())?;
    Ok(n == 1)
}

/// Whether `queue`'s events are on, and the stream's max length.
pub(crate) async fn max_len(core: &Core, keys: &QueueKeys) -> Result<Option<u64>> {
    let config = keys.events_config();
    let value: Option<String> = core.conn()?.get(&config).await.on_key(&config)?;
    value
        .map(|v| {
            v.parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| Error::EventsConfig {
                    key: config.clone(),
                    message: format!("{config} holds {v:?}, not a max length"),
                })
        })
        .transpose()
}

/// Up to `count` kept events from `from`, oldest first, without waiting
/// (`XRANGE`; [`EventsFrom::Now`] reads none).
pub(crate) async fn kept(core: &Core, keys: &QueueKeys, from: &EventsFrom, count: usize) -> Result<Vec<Event>> {
    let start = match from {
        EventsFrom::Now => return Ok(Vec::new()),
        EventsFrom::Oldest => "-".to_owned(),
        EventsFrom::After(id) => format!("({id}"),
    };
    range(core, keys, "XRANGE", [start.as_str(), "+"], count).await
}

/// The newest `count` events `keys`' stream keeps, oldest first.
pub(crate) async fn newest(core: &Core, keys: &QueueKeys, count: usize) -> Result<Vec<Event>> {
    let mut events = range(core, keys, "XREVRANGE", ["+", "-"], count).await?;
    events.reverse();
    Ok(events)
}

/// One `XRANGE` or `XREVRANGE` read of `keys`' stream, in its order.
async fn range(
    core: &Core,
    keys: &QueueKeys,
    command: &'static str,
    [from, to]: [&str; 2],
    count: usize,
) -> Result<Vec<Event>> {
    let stream = keys.events();
    let reply: Value = core
        .conn()?
        .custom(
            CustomCommand::new_static(command, ClusterHash::FirstKey, false),
            vec![
                Value::from(stream.as_str()),
                from.into(),
                to.into(),
                "COUNT".into(),
                (count as i64).into(),
            ],
        )
        .await
        .on_key(&stream)?;
    crate::connection::reply::array(reply)?
        .into_iter()
        .map(|entry| {
            let (id, fields) = entry_of(entry)?;
            Ok(Event::decode(keys.destination(), &id, fields))
        })
        .collect()
}

/// A queue's events, as a [`Stream`] (from [`Client::events`](crate::Client::events)).
///
/// It waits with `XREAD BLOCK` on a connection of the client's blocking
/// pool (never on the shared connections), and reads on from the last event
/// it returned after a reconnect, so it neither skips nor repeats one (as
/// long as the stream still keeps it: `MAXLEN` trims the oldest). A read
/// that fails is returned as an `Err` item and the stream goes on a second
/// later: a stream key of the wrong type gives [`Error::WrongType`] each
/// time; a stream deleted by hand is simply empty until events come again.
/// It ends when the client shuts down.
pub struct Events {
    core: Arc<Core>,
    keys: Arc<QueueKeys>,
    from: EventsFrom,
    reading: Option<BoxStream<'static, Result<Event>>>,
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Events")
            .field("queue", &self.keys.destination())
            .field("from", &self.from)
            .finish_non_exhaustive()
    }
}

impl Events {
    pub(crate) fn new(core: Arc<Core>, keys: QueueKeys) -> Events {
        Events {
            core,
            keys: Arc::new(keys),
            from: EventsFrom::Now,
            reading: None,
        }
    }

    /// Where to start (before the first poll; [`EventsFrom::Now`] unless set).
    pub fn from(mut self, from: EventsFrom) -> Events {
        self.from = from;
        self
    }

    fn start(&self) -> BoxStream<'static, Result<Event>> {
        let last = match &self.from {
            EventsFrom::Now => None,
            EventsFrom::Oldest => Some("0-0".to_owned()),
            EventsFrom::After(id) => Some(id.clone()),
        };
        let reader = Reader {
            core: self.core.clone(),
            keys: self.keys.clone(),
            last,
            ready: VecDeque::new(),
            failed: false,
        };
        stream::unfold(reader, |mut reader| async move {
            let item = reader.next().await?;
            Some((item, reader))
        })
        .boxed()
    }
}

impl Stream for Events {
    type Item = Result<Event>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.reading.is_none() {
            let reading = self.start();
            self.reading = Some(reading);
        }
        self.reading.as_mut().expect("set above").poll_next_unpin(cx)
    }
}

struct Reader {
    core: Arc<Core>,
    keys: Arc<QueueKeys>,
    /// The id read on from; `None` until "now" is known.
    last: Option<String>,
    ready: VecDeque<Event>,
    failed: bool,
}

impl Reader {
    /// The next event or error; `None` once the client shuts down.
    async fn next(&mut self) -> Option<Result<Event>> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(Ok(event));
            }
            if self.failed {
                tokio::select! {
                    _ = tokio::time::sleep(ERROR_PAUSE) => {}
                    _ = self.core.shutdown_begun() => return None,
                }
            }
            match self.read().await {
                Ok(()) => self.failed = false,
                Err(Error::Shutdown) => return None,
                Err(error) => {
                    self.failed = true;
                    return Some(Err(error));
                }
            }
        }
    }

    /// Reads the next entries into `ready` (waits until there are some).
    async fn read(&mut self) -> Result<()> {
        let stream = self.keys.events();
        let last = match &self.last {
            Some(last) => last.clone(),
            None => {
                let now = self.newest(&stream).await?;
                self.last.insert(now).clone()
            }
        };
        let argv = |seconds: f64| {
            vec![
                Value::from("COUNT"),
                Value::from(READ_COUNT),
                Value::from("BLOCK"),
                Value::from((seconds * 1000.0) as i64),
                Value::from("STREAMS"),
                Value::from(stream.as_str()),
                Value::from(last.as_str()),
            ]
        };
        let reply = self.core.blocking().wait("XREAD", &stream, None, argv, None).await?;
        let Some(reply) = reply else { return Ok(()) };
        for (id, fields) in entries(reply)? {
            self.ready
                .push_back(Event::decode(self.keys.destination(), &id, fields));
            self.last = Some(id);
        }
        Ok(())
    }

    /// The id of the stream's newest entry ("0-0" when there is none): "now".
    async fn newest(&self, stream: &str) -> Result<String> {
        let reply: Value = self
            .core
            .conn()?
            .custom(
                CustomCommand::new_static("XREVRANGE", ClusterHash::FirstKey, false),
                vec![Value::from(stream), "+".into(), "-".into(), "COUNT".into(), 1.into()],
            )
            .await
            .on_key(stream)?;
        let newest = crate::connection::reply::array(reply)?.into_iter().next();
        match newest {
            Some(entry) => Ok(entry_of(entry)?.0),
            None => Ok("0-0".to_owned()),
        }
    }
}

/// A stream entry: its id and its fields, in order.
type Entry = (String, Vec<(String, String)>);

/// The entries of an `XREAD` reply for one stream (RESP2: `[[key,
/// entries]]`; RESP3: `{key: entries}`).
fn entries(reply: Value) -> Result<Vec<Entry>> {
    let per_stream = match reply {
        Value::Map(map) => map.inner().into_iter().next().map(|(_, entries)| entries),
        Value::Array(streams) => match streams.into_iter().next() {
            Some(Value::Array(pair)) => pair.into_iter().nth(1),
            _ => None,
        },
        Value::Null => return Ok(Vec::new()),
        other => return Err(Error::Protocol(format!("XREAD answered {other:?}"))),
    };
    let Some(entries) = per_stream else {
        return Ok(Vec::new());
    };
    crate::connection::reply::array(entries)?
        .into_iter()
        .map(entry_of)
        .collect()
}

/// One stream entry: `[id, [field, value, ...]]`.
fn entry_of(entry: Value) -> Result<Entry> {
    let [id, fields] = crate::connection::reply::tuple::<2>(entry)?;
    let id = text(id)?;
    let flat = match fields {
        Value::Map(map) => map
            .inner()
            .into_iter()
            .flat_map(|(k, v)| [Value::from(k.as_str_lossy().into_owned()), v])
            .collect(),
        other => crate::connection::reply::array(other)?,
    };
    let mut pairs = Vec::with_capacity(flat.len() / 2);
    let mut it = flat.into_iter();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        pairs.push((text(k)?, text(v)?));
    }
    Ok((id, pairs))
}

fn text(value: Value) -> Result<String> {
    match value {
        Value::Bytes(b) => Ok(String::from_utf8_lossy(&b).into_owned()),
        Value::String(s) => Ok(s.to_string()),
        Value::Integer(i) => Ok(i.to_string()),
        other => Err(Error::Protocol(format!("a stream entry holds {other:?}"))),
    }
}
