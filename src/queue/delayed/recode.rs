//! Codec migration: rewriting the payloads of pending elements in place.

use bytes::Bytes;
use fred::interfaces::ListInterface;
use fred::types::Value;

use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::{BoxError, CommandResult, Result};
use crate::wire::format::unpack;

use super::DelayedQueue;

/// Elements one recode script rewrites at most: each LSET walks the list
/// from its nearer end, so a slice deep inside a list of millions costs
/// about a millisecond at this size.
const MAX_BATCH: usize = 128;

/// Bytes (old elements and new payloads) one recode script carries at most,
/// so that a call stays short whatever the payloads' size.
const MAX_BATCH_BYTES: usize = 1 << 20;

/// Passes over the pending list at most: elements moved along the list by
/// transfers between a read and its script need another pass.
const MAX_PASSES: u32 = 10;

/// Slices of one pass whose anchor left the list (each makes the next slice
/// start one slice earlier) before the pass gives up and lets the next one
/// start over: a bound on a pass under a transfer that never stops.
const MAX_STEPS_BACK: u32 = 1_000;

/// What [`DelayedQueue::recode`] did.
///
/// ```no_run
/// # async fn demo(queue: delayq::DelayedQueue<String>) -> delayq::Result<()> {
/// let report = queue.recode(|payload| Ok(Some(payload.to_ascii_uppercase().into())), 500).await?;
/// println!("{} rewritten, {} undecodable", report.converted, report.undecodable);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct RecodeReport {
    /// Elements whose payload was rewritten, over all passes.
    pub converted: u64,
    /// Elements the rewrite left as they were: already in the target codec
    /// (first pass).
    pub already: u64,
    /// Elements whose payload the rewrite could not read, left as they are
    /// (last pass).
    pub undecodable: u64,
    /// The first of those errors, with the element's place in the pending list.
    pub first_error: Option<String>,
    /// Elements neither packed format can unpack, left as they are (last pass).
    pub malformed: u64,
    /// Elements of the pending list missing from the timeout set, left as
    /// they are (last pass).
    pub not_scheduled: u64,
    /// Elements that changed between the read and the rewrite (taken,
    /// transferred, moved along the list) in the last pass.
    pub moved: u64,
    /// Passes over the pending list.
    pub passes: u32,
}

impl<T: 'static> DelayedQueue<T> {
    /// Rewrites the payload of every pending element with `rewrite`, in
    /// place: each keeps its due time, its place in the pending list, its
    /// packed layout and its id. This is how a queue moves from one codec to
    /// another (`delayq migrate --from-codec marshalling --to-codec kryo`):
    /// `rewrite` decodes with the old codec and encodes with the new one.
    ///
    /// `rewrite` answers `Ok(Some(bytes))` for a new payload, `Ok(None)` to
    /// leave the element (already in the target codec), or an error for a
    /// payload it cannot read: that element is left as it is and counted,
    /// never dropped. It may see an element it rewrote again (when a
    /// transfer shifts the list, a slice is read again), so it must answer
    /// `Ok(None)` for a payload already in the target codec.
    ///
    /// Safe beside Java clients and transfers: the client reads a slice of
    /// the pending list (at most `batch` elements, at most 128, about 1 MiB),
    /// then one atomic script swaps each element that is still where it was
    /// read and finds where the slice's last element is now, so the next
    /// slice starts right after it: elements removed by a transfer anywhere
    /// in the list let none slide past unread. An element that moved
    /// between the read and the script is left for the next pass. Java sees
    /// the old element or the new one, never both or neither. Ready values
    /// (already in the destination list) are not touched. A lost reply is
    /// answered by the first run's answer when resent.
    pub async fn recode<F>(&self, mut rewrite: F, batch: usize) -> Result<RecodeReport>
    where
        F: FnMut(&[u8]) -> std::result::Result<Option<Bytes>, BoxError>,
    {
        let batch = batch.clamp(1, MAX_BATCH);
        let mut report = RecodeReport::default();
        loop {
            let pass = self.recode_pass(&mut rewrite, batch).await?;
            report = RecodeReport {
                converted: report.converted + pass.converted,
                already: if report.passes == 0 {
                    pass.already
                } else {
                    report.already
                },
                passes: report.passes + 1,
                ..pass
            };
            // Offers append to the pending list, so one pass reaches them;
            // only elements that moved between a read and its script need
            // another.
            if pass.moved == 0 || report.passes >= MAX_PASSES {
                return Ok(report);
            }
        }
    }

    /// One pass over the pending list, a slice per script.
    async fn recode_pass<F>(&self, rewrite: &mut F, batch: usize) -> Result<RecodeReport>
    where
        F: FnMut(&[u8]) -> std::result::Result<Option<Bytes>, BoxError>,
    {
        let mut pass = RecodeReport::default();
        let pending = self.handle.keys.pending();
        let mut start = 0i64;
        // Elements per LRANGE: `batch`, fewer once elements are seen to be
        // large, so that a read stays near MAX_BATCH_BYTES.
        let mut read_count = batch;
        let mut steps_back = 0;
        // The furthest index read so far: a slice read again after a step
        // back counts nothing twice.
        let mut reached = 0i64;
        loop {
            let slice: Vec<Bytes> = self
                .conn()?
                .lrange(pending, start, start + read_count as i64 - 1)
                .await
                .on_key(pending)?;
            let Some(_) = slice.last() else {
                return Ok(pass);
            };
            let mut args = vec![Value::from(start), Value::Null, Value::Null];
            let mut bytes = 0usize;
            let mut read = 0usize;
            for (offset, element) in slice.iter().enumerate() {
                if offset > 0 && bytes >= MAX_BATCH_BYTES {
                    break;
                }
                read = offset + 1;
                bytes += element.len();
                let first_time = start + offset as i64 >= reached;
                let Ok(unpacked) = unpack(element) else {
                    pass.malformed += u64::from(first_time);
                    continue;
                };
                match rewrite(unpacked.payload) {
                    Ok(Some(new)) if new[..] != *unpacked.payload => {
                        bytes += new.len();
                        args.push(Value::from(offset as i64));
                        args.push(Value::Bytes(element.clone()));
                        args.push(Value::Bytes(new));
                    }
                    Ok(_) => pass.already += u64::from(first_time),
                    Err(_) if !first_time => {}
                    Err(error) => {
                        pass.undecodable += 1;
                        if pass.first_error.is_none() {
                            pass.first_error = Some(format!("pending element {}: {error}", start + offset as i64));
                        }
                    }
                }
            }
            reached = reached.max(start + read as i64);
            let average = (bytes / read).max(1);
            read_count = (MAX_BATCH_BYTES / average).clamp(1, batch);
            args[1] = Value::from(read as i64);
            args[2] = Value::Bytes(slice[read - 1].clone());
            let keys = SCRIPTS.recode.keys(&self.handle.keys).build();
            // Runs even when nothing in the slice changes: it says where
            // the next slice starts.
            let value = self.handle.request(&SCRIPTS.recode, keys, args).await?;
            let [converted, moved, orphans, next] = reply::tuple::<4>(value)?;
            pass.converted += reply::int(&converted)? as u64;
            pass.moved += reply::int(&moved)? as u64;
            pass.not_scheduled += reply::int(&orphans)? as u64;
            let next = reply::int(&next)?;
            if next <= start {
                steps_back += 1;
                if steps_back > MAX_STEPS_BACK {
                    return Ok(pass);
                }
            }
            start = next;
        }
    }
}
