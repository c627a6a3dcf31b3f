//! Paging through the pending elements in due order, for tools and dashboards.

use std::time::SystemTime;

use bytes::Bytes;
use fred::types::Value;

use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::{DecodeError, Error, Result};
use crate::wire::codec;
use crate::wire::format::{self, Format, Malformed};
use crate::wire::time;

use super::DelayedQueue;

/// One pending element as [`DelayedQueue::pending_page`] reads it: when it is
/// due, its layout, the id it was offered under, and its value, or why it
/// could not be read (the raw bytes are kept either way).
///
/// ```no_run
/// # async fn demo(queue: delayq::DelayedQueue<String>) -> delayq::Result<()> {
/// for element in queue.pending_page(0, 20).await? {
///     match &element.value {
///         Ok(value) => println!("{:?} {:?} {value}", element.due, element.id),
///         Err(error) => println!("{:?} unreadable: {error}", element.due),
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct PendingElement<T> {
    /// When it is due.
    pub due: SystemTime,
    /// Its layout, or `None` for an element no format can unpack.
    pub format: Option<Format>,
    /// The id it was offered under ([`DelayedQueue::offer_with_id`]), if any.
    pub id: Option<String>,
    /// The packed element as stored.
    pub raw: Bytes,
    /// The decoded value; a payload the codec cannot read (or a malformed
    /// element) is an error that keeps the bytes.
    pub value: std::result::Result<T, PendingError>,
}

/// Why a pending element could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PendingError {
    /// No element format matches its bytes.
    #[error(transparent)]
    Malformed(#[from] Malformed),
    /// Its payload does not decode with the queue's codec.
    #[error(transparent)]
    Decode(#[from] DecodeError),
}

impl<T: 'static> DelayedQueue<T> {
    /// Most elements one [`pending_page`](Self::pending_page) call returns (one script run).
    pub const MAX_PAGE: usize = 1_000;

    /// Up to `count` pending elements (at most [`MAX_PAGE`](Self::MAX_PAGE)) in due order,
    /// starting at rank `start` (0 is the next due). Reads only, and costs
    /// what the page costs whatever the queue's size, so a tool can page
    /// through a queue of millions. Elements may move between two pages (a
    /// transfer, an offer), as in any paging of a live queue.
    pub async fn pending_page(&self, start: usize, count: usize) -> Result<Vec<PendingElement<T>>> {
        let count = count.min(Self::MAX_PAGE);
        if count == 0 {
            return Ok(Vec::new());
        }
        let keys = SCRIPTS.pending_page.keys(&self.handle.keys).build();
        let args = vec![Value::from(start as i64), Value::from(count as i64)];
        let value = self.run(&SCRIPTS.pending_page, keys, args).await?;
        let flat = reply::array(value)?;
        let mut page = Vec::with_capacity(flat.len() / 3);
        for triple in flat.chunks(3) {
            let [element, score, id] = triple else {
                return Err(Error::Protocol("pending_page returned a partial element".into()));
            };
            let raw = reply::bytes(element.clone())?;
            let due = reply::opt_score(score.clone())?
                .ok_or_else(|| Error::Protocol("pending_page returned an element without a due time".into()))?;
            page.push(self.pending_element(raw, due, reply::opt_text(id.clone())?));
        }
        Ok(page)
    }

    /// The pending element offered under `id`
    /// ([`offer_with_id`](Self::offer_with_id)), as [`pending_page`](Self::pending_page)
    /// shows it (its raw bytes name it for
    /// [`delete_element`](Self::delete_element) and the like), or `None`.
    /// Two lookups, whatever the queue's size.
    pub async fn pending_by_id(&self, id: &str) -> Result<Option<PendingElement<T>>> {
        super::ids::check_id(id)?;
        let keys = SCRIPTS.get_id.keys(&self.handle.keys).build();
        let value = self.run(&SCRIPTS.get_id, keys, vec![Value::from(id)]).await?;
        if matches!(value, Value::Null | Value::Boolean(false)) {
            return Ok(None);
        }
        let [element, score] = reply::tuple::<2>(value)?;
        let due = reply::opt_score(score)?
            .ok_or_else(|| Error::Protocol("get_id returned an element without a due time".into()))?;
        Ok(Some(self.pending_element(
            reply::bytes(element)?,
            due,
            Some(id.to_owned()),
        )))
    }

    /// One pending element read: its layout and value, or why not.
    fn pending_element(&self, raw: Bytes, due_ms: i64, id: Option<String>) -> PendingElement<T> {
        let (format, value) = match format::unpack(&raw) {
            Ok(element) => {
                let payload = Bytes::copy_from_slice(element.payload);
                (
                    Some(element.format()),
                    codec::decode(&*self.handle.codec, payload).map_err(PendingError::from),
                )
            }
            Err(malformed) => (None, Err(PendingError::from(malformed))),
        };
        PendingElement {
            due: time::from_ms(due_ms),
            format,
            id,
            raw,
            value,
        }
    }
}
