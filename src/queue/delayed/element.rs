//! One exact pending element, named by its packed bytes: deleted, run now or
//! rescheduled (tools and the dashboard act on a row they were shown, whether
//! or not it was offered with an id).

use std::time::{Duration, SystemTime};

use fred::types::Value;

use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::{Error, Result};
use crate::wire::time;

use super::offer::Due;
use super::DelayedQueue;

/// What a call on one exact pending element did
/// ([`DelayedQueue::delete_element`], [`run_element_now`](DelayedQueue::run_element_now),
/// [`reschedule_element`](DelayedQueue::reschedule_element)).
///
/// ```no_run
/// # async fn demo(queue: delayq::DelayedQueue<String>) -> delayq::Result<()> {
/// let page = queue.pending_page(0, 1).await?;
/// if let Some(first) = page.first() {
///     match queue.delete_element(&first.raw).await? {
///         delayq::pending::ElementOutcome::Done { .. } => println!("deleted"),
///         delayq::pending::ElementOutcome::Gone => println!("already taken by a transfer"),
///         other => println!("not deleted: {other:?}"),
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ElementOutcome {
    /// Done. `due` is the element's due time: the one it had (delete, run)
    /// or its new one (reschedule).
    Done {
        /// When it was (or is now) due.
        due: SystemTime,
    },
    /// The element is not pending (a transfer moved it, or it was removed
    /// or rescheduled under other bytes): nothing changed.
    Gone,
    /// Refused: the pending list holds byte-identical copies of it (legacy
    /// elements with equal payloads and due times), and a new due time
    /// would apply to every copy. Nothing changed.
    Copies,
    /// Refused: the queue is paused, and running an element now would move
    /// it. Nothing changed.
    Paused,
    /// Refused: no element format unpacks it, so it has no payload to
    /// deliver. Nothing changed (delete it instead).
    Malformed,
}

impl<T: 'static> DelayedQueue<T> {
    /// Removes the pending element whose packed bytes are `raw` (a
    /// [`PendingElement::raw`](super::PendingElement::raw)) from the timeout
    /// set and the pending list, as Java's `remove` would, and its id from
    /// delayq's index. It will not be delivered. Where the pending list
    /// holds byte-identical copies (legacy elements), one copy goes and the
    /// other stays pending.
    ///
    /// A resend after a lost reply answers as the first run did; a reply
    /// lost for good fails with [`Error::OutcomeUnknown`].
    pub async fn delete_element(&self, raw: &[u8]) -> Result<ElementOutcome> {
        self.act_on_element("delete", raw, None).await
    }

    /// Moves the pending element whose packed bytes are `raw` to the
    /// destination list now, as a transfer moves a due element (its payload
    /// pushed to the tail; it leaves both keys and delayq's id index), in one
    /// atomic script. Refused while the queue is paused, and for an element
    /// no format unpacks.
    pub async fn run_element_now(&self, raw: &[u8]) -> Result<ElementOutcome> {
        self.act_on_element("run", raw, None).await
    }

    /// Makes the pending element whose packed bytes are `raw` due `delay`
    /// from now. It keeps its bytes, its place in the offer order and its
    /// id. Refused for byte-identical copies ([`ElementOutcome::Copies`]).
    pub async fn reschedule_element(&self, raw: &[u8], delay: Duration) -> Result<ElementOutcome> {
        let due = self.due_after(delay)?;
        self.act_on_element("reschedule", raw, Some(due)).await
    }

    /// [`reschedule_element`](Self::reschedule_element), due at `at`.
    pub async fn reschedule_element_at(&self, raw: &[u8], at: SystemTime) -> Result<ElementOutcome> {
        let due = Due::At(time::due_at(time::now_ms(), at)?);
        self.act_on_element("reschedule", raw, Some(due)).await
    }

    async fn act_on_element(&self, action: &str, raw: &[u8], due: Option<Due>) -> Result<ElementOutcome> {
        if raw.is_empty() {
            return Err(Error::InvalidArgument("an element's bytes are empty".into()));
        }
        let keys = SCRIPTS.pending_element.keys(&self.handle.keys).build();
        let args = vec![
            Value::from(action),
            Value::Bytes(bytes::Bytes::copy_from_slice(raw)),
            due.map_or(Value::from(""), Due::arg),
        ];
        let value = self.handle.request(&SCRIPTS.pending_element, keys, args).await?;
        let reply = reply::array(value)?;
        let what = reply.first().cloned().map(reply::opt_text).transpose()?.flatten();
        Ok(match what.as_deref() {
            Some("done") => {
                let due = reply
                    .get(1)
                    .cloned()
                    .map(reply::opt_score)
                    .transpose()?
                    .flatten()
                    .ok_or_else(|| Error::Protocol("pending_element answered done without a due time".into()))?;
                ElementOutcome::Done {
                    due: time::from_ms(due),
                }
            }
            Some("gone") => ElementOutcome::Gone,
            Some("copies") => ElementOutcome::Copies,
            Some("paused") => ElementOutcome::Paused,
            Some("malformed") => ElementOutcome::Malformed,
            other => return Err(Error::Protocol(format!("pending_element answered {other:?}"))),
        })
    }
}
