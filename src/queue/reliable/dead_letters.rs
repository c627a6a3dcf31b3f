//! The dead-letter list: reading it and requeueing from it.

use bytes::Bytes;
use fred::interfaces::ListInterface;
use fred::types::Value;

use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::{CommandResult, Error, Result};
use crate::wire::codec;

use super::ReliableQueue;

impl<T: 'static> ReliableQueue<T> {
    /// Values in the dead-letter list.
    pub async fn dead_letter_len(&self) -> Result<usize> {
        let n: i64 = self
            .handle
            .core
            .conn()?
            .llen(self.handle.keys.dead_letter())
            .await
            .on_key(self.handle.keys.dead_letter())?;
        Ok(n as usize)
    }

    /// The dead-lettered values, oldest first, without removing them.
    pub async fn dead_letters(&self) -> Result<Vec<T>> {
        let raw: Vec<Bytes> = self
            .handle
            .core
            .conn()?
            .lrange(self.handle.keys.dead_letter(), 0, -1)
            .await
            .on_key(self.handle.keys.dead_letter())?;
        Ok(codec::decode_all(&*self.handle.codec, raw)?)
    }

    /// Up to `count` dead-lettered values from index `start` (0 is the
    /// oldest), without removing any: one `LRANGE`, for paging a long list.
    ///
    /// ```no_run
    /// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// let oldest = queue.dead_letters_range(0, 50).await?;
    /// # Ok(()) }
    /// ```
    pub async fn dead_letters_range(&self, start: usize, count: usize) -> Result<Vec<T>> {
        if count == 0 {
            return Ok(Vec::new());
        }
        let first = i64::try_from(start).unwrap_or(i64::MAX);
        let last = first.saturating_add(i64::try_from(count - 1).unwrap_or(i64::MAX));
        let raw: Vec<Bytes> = self
            .handle
            .core
            .conn()?
            .lrange(self.handle.keys.dead_letter(), first, last)
            .await
            .on_key(self.handle.keys.dead_letter())?;
        Ok(codec::decode_all(&*self.handle.codec, raw)?)
    }

    /// Deletes up to `max` dead-lettered values, oldest first (one `LPOP`
    /// with a count, at most 10,000; `0` deletes nothing), and returns how
    /// many it deleted. Sent once: a lost reply is an error, never a second
    /// deletion.
    ///
    /// ```no_run
    /// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// while queue.remove_dead_letters(1_000).await? > 0 {}
    /// # Ok(()) }
    /// ```
    pub async fn remove_dead_letters(&self, max: usize) -> Result<usize> {
        if max == 0 {
            return Ok(0);
        }
        let max = max.min(crate::queue::MAX_BATCH);
        let script = &SCRIPTS.remove_dead_letters;
        let keys = script.keys(&self.handle.keys).build();
        let value = script
            .run(
                self.handle.core.conn()?,
                self.name(),
                keys,
                vec![Value::from(max as i64)],
            )
            .await?;
        Ok(reply::int(&value)? as usize)
    }

    /// Moves up to `max` dead-lettered values back to the queue's tail, to
    /// start over at delivery count 1; returns how many moved. At most 10,000
    /// and about 1 MiB of payload per call (one script run, kept short: call
    /// again for the rest); `0` moves nothing.
    pub async fn requeue_dead_letters(&self, max: usize) -> Result<usize> {
        let keys = SCRIPTS.requeue_dead_letters.keys(&self.handle.keys).build();
        if max == 0 {
            return Ok(0);
        }
        let max = max.min(crate::queue::MAX_BATCH) as i64;
        let value = crate::connection::request::Request::new(self.name())
            .apply(
                self.handle.core.conn()?,
                self.handle.core.settling(),
                &SCRIPTS.requeue_dead_letters,
                keys,
                vec![Value::from(max)],
            )
            .await?;
        Ok(reply::int(&value)? as usize)
    }

    /// Up to `count` dead letters from index `start` (0 is the oldest), each
    /// with why it is one: the reason recorded when it was dead-lettered (a
    /// worker's last error, too many deliveries, undecodable, the consumer's
    /// `dead_letter()`) and when, or `None` for values dead-lettered before
    /// delayq recorded reasons (or by another writer). Reads only; at most
    /// 100 values a call, read about 1 MiB of them per script run (large
    /// values take several runs, so a page of them is not one atomic read:
    /// each value's [`key`](DeadLetter::key) still names exactly it).
    ///
    /// ```no_run
    /// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// for dead in queue.dead_letter_page(0, 50).await? {
    ///     println!("{:?}: {}", dead.value.as_ref().ok(), dead.reason.as_deref().unwrap_or("not recorded"));
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn dead_letter_page(&self, start: usize, count: usize) -> Result<Vec<DeadLetter<T>>> {
        let count = count.min(crate::queue::MAX_BATCH);
        let mut page = Vec::with_capacity(count);
        // Each run returns about 1 MiB of values and says when it stopped
        // short; large values take several runs (not one atomic read: each
        // value's key finds it again if the list moves in between).
        while page.len() < count {
            let more = self
                .read_dead_letters(start + page.len(), count - page.len(), &mut page)
                .await?;
            if !more {
                break;
            }
        }
        Ok(page)
    }

    /// One run of `dead_letter_page.lua`: appends up to `count` dead letters
    /// from `start` to `page`; true when it stopped at its byte budget with
    /// more to read.
    async fn read_dead_letters(&self, start: usize, count: usize, page: &mut Vec<DeadLetter<T>>) -> Result<bool> {
        read_dead_letter_run(
            &self.handle.core,
            &self.handle.keys,
            &*self.handle.codec,
            start,
            count,
            page,
        )
        .await
    }

    /// Moves the dead letters named by `keys` (read by
    /// [`dead_letter_page`](Self::dead_letter_page)) back to the queue's
    /// tail, in list order, all or none, and returns the index each was found
    /// at, in the order given. A value is looked for where it was read and up
    /// to 100 places nearer the head (values left the head meanwhile); of
    /// equal values each key takes exactly one. Fails with
    /// [`Error::DeadLetterChanged`] naming those not found (nothing moves),
    /// and with [`Error::InvalidArgument`] for more than 100 keys or a value
    /// more than 100,000 places from both ends (each call is one bounded
    /// script run). A lost reply is resent harmlessly: the request is keyed.
    ///
    /// ```no_run
    /// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// let page = queue.dead_letter_page(0, 10).await?;
    /// let keys: Vec<_> = page.iter().map(|dead| dead.key.clone()).collect();
    /// queue.requeue_dead_letters_exact(&keys).await?;
    /// # Ok(()) }
    /// ```
    pub async fn requeue_dead_letters_exact(&self, keys: &[DeadLetterKey]) -> Result<Vec<usize>> {
        self.act_on_dead_letters("requeue", keys).await
    }

    /// Deletes the dead letters named by `keys`, all or none, as
    /// [`requeue_dead_letters_exact`](Self::requeue_dead_letters_exact)
    /// moves them; returns the index each was found at.
    pub async fn delete_dead_letters_exact(&self, keys: &[DeadLetterKey]) -> Result<Vec<usize>> {
        self.act_on_dead_letters("delete", keys).await
    }

    async fn act_on_dead_letters(&self, mode: &str, keys: &[DeadLetterKey]) -> Result<Vec<usize>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        if keys.len() > MAX_NAMED {
            return Err(Error::InvalidArgument(format!(
                "{} dead letters named; at most {MAX_NAMED} per call",
                keys.len()
            )));
        }
        // The script reads at most 2 MiB of values (named ones and those
        // around them): the named ones may hold half of that.
        let named: usize = keys.iter().map(|key| key.len).sum();
        if named > MAX_NAMED_BYTES {
            return Err(Error::InvalidArgument(format!(
                "the {} dead letters named hold {named} bytes; one call names at most {MAX_NAMED_BYTES}: name fewer at once",
                keys.len()
            )));
        }
        let mut args = vec![Value::from(mode), Value::from(WINDOW as i64), Value::from(REACH as i64)];
        for key in keys {
            args.push(Value::from(key.index as i64));
            args.push(Value::from(key.len as i64));
            args.push(Value::from(key.digest.as_str()));
        }
        let script_keys = SCRIPTS.dead_letter_act.keys(&self.handle.keys).build();
        let value = crate::connection::request::Request::new(self.name())
            .apply(
                self.handle.core.conn()?,
                self.handle.core.settling(),
                &SCRIPTS.dead_letter_act,
                script_keys,
                args,
            )
            .await?;
        let mut answer = reply::array(value)?.into_iter();
        let tag = answer.next().map(reply::opt_text).transpose()?.flatten();
        let numbers = answer
            .map(|v| reply::int(&v).map(|n| n as usize))
            .collect::<Result<Vec<_>>>()?;
        match tag.as_deref() {
            Some("done") => Ok(numbers),
            Some("missing") => Err(Error::DeadLetterChanged {
                queue: self.name().to_owned(),
                indices: numbers,
            }),
            Some("far") => Err(Error::InvalidArgument(format!(
                "dead letter #{} is {} places from both ends of the list; single dead letters are requeued or deleted within {REACH} of an end (requeue or delete from the head instead)",
                numbers.first().copied().unwrap_or_default(),
                numbers.get(1).copied().unwrap_or_default(),
            ))),
            Some("budget") => Err(Error::InvalidArgument(format!(
                "the named dead letters and those around them pass {} bytes, more than one bounded call reads; \
                 nothing changed: read them again (they may have moved) or name fewer at once",
                numbers.first().copied().unwrap_or_default(),
            ))),
            _ => Err(Error::Protocol("dead_letter_act answered an unknown shape".into())),
        }
    }

    /// The keys of the dead letters among the `most_recent` (at most
    /// 100,000) whose recorded reason `filter` accepts (`None`: none
    /// recorded), oldest first: read in pages of at most 1,000, each one
    /// bounded script run, and never removed.
    ///
    /// ```no_run
    /// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// let smtp = queue.dead_letter_keys_where(10_000, |reason| reason == Some("smtp timeout")).await?;
    /// println!("{} dead letters died of smtp timeouts", smtp.len());
    /// # Ok(()) }
    /// ```
    pub async fn dead_letter_keys_where(
        &self,
        most_recent: usize,
        filter: impl Fn(Option<&str>) -> bool,
    ) -> Result<Vec<DeadLetterKey>> {
        let total = self.dead_letter_len().await?;
        let mut at = total.saturating_sub(most_recent.min(MAX_REASONS));
        let mut keys = Vec::new();
        while at < total {
            let page = self.dead_letter_page(at, (total - at).min(SCAN_STEP)).await?;
            if page.is_empty() {
                break;
            }
            at += page.len();
            keys.extend(
                page.into_iter()
                    .filter(|dead| filter(dead.reason.as_deref()))
                    .map(|dead| dead.key),
            );
        }
        Ok(keys)
    }

    /// Requeues exactly the dead letters that `filter` picks by their
    /// recorded reason among the `most_recent` (at most 100,000), if they
    /// are still the `confirmed` many the operator was shown; otherwise
    /// fails with [`Error::DeadLetterCountChanged`] and does nothing. What
    /// dies meanwhile, or an equal payload with another reason, is never
    /// touched: each value is named by its key (bytes and reason record)
    /// and moved in list order, at most 100 per bounded script run. Values
    /// that change between two runs (requeued or deleted by someone else)
    /// stop it: [`BulkOutcome::changed`] says how many were left.
    ///
    /// ```no_run
    /// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// let smtp = |reason: Option<&str>| reason == Some("smtp timeout");
    /// let seen = queue.dead_letter_keys_where(10_000, smtp).await?.len();
    /// // ... the operator confirms `seen` ...
    /// let outcome = queue.requeue_dead_letters_confirmed(10_000, seen, smtp).await?;
    /// println!("requeued {}", outcome.done);
    /// # Ok(()) }
    /// ```
    pub async fn requeue_dead_letters_confirmed(
        &self,
        most_recent: usize,
        confirmed: usize,
        filter: impl Fn(Option<&str>) -> bool,
    ) -> Result<BulkOutcome> {
        let keys = self.confirmed_keys(most_recent, confirmed, filter).await?;
        self.act_on_all_named("requeue", keys).await
    }

    /// Deletes exactly the dead letters that `filter` picks, as
    /// [`requeue_dead_letters_confirmed`](Self::requeue_dead_letters_confirmed)
    /// requeues them.
    pub async fn delete_dead_letters_confirmed(
        &self,
        most_recent: usize,
        confirmed: usize,
        filter: impl Fn(Option<&str>) -> bool,
    ) -> Result<BulkOutcome> {
        let keys = self.confirmed_keys(most_recent, confirmed, filter).await?;
        self.act_on_all_named("delete", keys).await
    }

    async fn confirmed_keys(
        &self,
        most_recent: usize,
        confirmed: usize,
        filter: impl Fn(Option<&str>) -> bool,
    ) -> Result<Vec<DeadLetterKey>> {
        let keys = self.dead_letter_keys_where(most_recent, filter).await?;
        if keys.len() != confirmed {
            return Err(Error::DeadLetterCountChanged {
                queue: self.name().to_owned(),
                confirmed,
                matching: keys.len(),
            });
        }
        Ok(keys)
    }

    /// Acts on any number of named dead letters in runs of at most 100
    /// (each all or none), in list order: each run removes values below the
    /// rest, so the rest are looked for that many places nearer the head.
    async fn act_on_all_named(&self, mode: &str, mut keys: Vec<DeadLetterKey>) -> Result<BulkOutcome> {
        keys.sort_by_key(|key| key.index);
        let (mut done, mut rest) = (0, &keys[..]);
        while !rest.is_empty() {
            let (mut n, mut bytes) = (0, 0);
            while n < rest.len() && n < MAX_NAMED && (n == 0 || bytes + rest[n].len <= MAX_NAMED_BYTES) {
                bytes += rest[n].len;
                n += 1;
            }
            let run: Vec<DeadLetterKey> = rest[..n]
                .iter()
                .map(|key| DeadLetterKey {
                    index: key.index.saturating_sub(done),
                    ..key.clone()
                })
                .collect();
            match self.act_on_dead_letters(mode, &run).await {
                Ok(_) => {
                    done += n;
                    rest = &rest[n..];
                }
                Err(Error::DeadLetterChanged { .. }) => {
                    return Ok(BulkOutcome {
                        done,
                        changed: rest.len(),
                    })
                }
                Err(e) => return Err(e),
            }
        }
        Ok(BulkOutcome { done, changed: 0 })
    }

    /// The dead letters counted by reason, over at most the `most` recent
    /// (at most 100,000): one read of their reasons, never their values.
    /// Groups are sorted by count, largest first.
    ///
    /// ```no_run
    /// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// let reasons = queue.dead_letter_reasons(10_000).await?;
    /// for group in &reasons.groups {
    ///     println!("{} × {}", group.count, group.reason.as_deref().unwrap_or("not recorded"));
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn dead_letter_reasons(&self, most: usize) -> Result<DeadLetterReasons> {
        let most = most.min(MAX_REASONS);
        let keys = SCRIPTS.dead_letter_reasons.keys(&self.handle.keys).build();
        let value = SCRIPTS
            .dead_letter_reasons
            .run(
                self.handle.core.conn()?,
                self.name(),
                keys,
                vec![Value::from(most as i64)],
            )
            .await?;
        let mut flat = reply::array(value)?.into_iter();
        let (Some(total), Some(looked)) = (flat.next(), flat.next()) else {
            return Err(Error::Protocol("dead_letter_reasons returned a short reply".into()));
        };
        let (total, looked) = (reply::int(&total)? as usize, reply::int(&looked)? as usize);
        // By reason through a map: reasons often carry ids (a handler's
        // error text), so 100,000 records may hold as many groups.
        let mut groups: Vec<ReasonGroup> = Vec::new();
        let mut group_of: std::collections::HashMap<Option<String>, usize> = std::collections::HashMap::new();
        let mut recorded = 0;
        for record in flat {
            recorded += 1;
            let Record { at, reason, .. } = parse_record(reply::opt_bytes(record)?.as_deref());
            match group_of.get(&reason) {
                Some(&i) => {
                    let group = &mut groups[i];
                    group.count += 1;
                    group.last_at = at.or(group.last_at);
                }
                None => {
                    group_of.insert(reason.clone(), groups.len());
                    groups.push(ReasonGroup {
                        reason,
                        count: 1,
                        last_at: at,
                    });
                }
            }
        }
        if looked > recorded {
            groups.push(ReasonGroup {
                reason: None,
                count: looked - recorded,
                last_at: None,
            });
        }
        groups.sort_by_key(|g| std::cmp::Reverse(g.count));
        Ok(DeadLetterReasons { total, looked, groups })
    }
}

/// Most dead letters one exact requeue or delete names.
const MAX_NAMED: usize = 100;
/// Bytes of the values one exact requeue or delete may name (the script
/// reads at most twice that, searching).
const MAX_NAMED_BYTES: usize = 1024 * 1024;
/// How far nearer the head than where it was read a named value is looked for.
const WINDOW: usize = 100;
/// How far from the nearer end of the list a single dead letter may be
/// removed (each removal is an `LREM` that walks from that end).
const REACH: usize = 100_000;
/// Dead letters read per page by [`ReliableQueue::dead_letter_keys_where`].
const SCAN_STEP: usize = 1_000;
/// Most reasons [`ReliableQueue::dead_letter_reasons`] reads.
const MAX_REASONS: usize = 100_000;

/// What a dead letter's reason record says.
#[derive(Debug, Default, PartialEq)]
struct Record {
    at: Option<std::time::SystemTime>,
    reason: Option<String>,
    job: Option<String>,
    headers: crate::Headers,
}

/// A reason record, `<ms> <reason>`: when and why; a value offered with
/// headers has `\x1d`, `H`, 5 digits of length and the headers' JSON
/// first (`lua/lib/element.lua`), and a job's dead letter has
/// `\x1e<length>:<id>` before the reason (`lua/lib/jobs.lua`). Read as
/// bytes: headers that do not read (not UTF-8, not a JSON object of
/// strings) are shown as part of the reason, never dropped, and a record
/// that is not UTF-8 reads with replacement characters instead of failing
/// its page.
fn parse_record(record: Option<&[u8]>) -> Record {
    let Some(bytes) = record else {
        return Record::default();
    };
    let whole = || Record {
        reason: Some(String::from_utf8_lossy(bytes).into_owned()),
        ..Record::default()
    };
    let Some(space) = bytes.iter().position(|&b| b == b' ') else {
        return whole();
    };
    let Some(ms) = std::str::from_utf8(&bytes[..space])
        .ok()
        .and_then(|ms| ms.parse::<i64>().ok())
    else {
        return whole();
    };
    let (headers, why) = split_headers(&bytes[space + 1..]);
    let why = String::from_utf8_lossy(why);
    let (job, why) = split_job(&why);
    Record {
        at: Some(crate::wire::time::from_ms(ms)),
        reason: Some(why.to_owned()),
        job,
        headers,
    }
}

/// The headers at the start of a reason, and the reason after them.
fn split_headers(why: &[u8]) -> (crate::Headers, &[u8]) {
    let Some(rest) = why.strip_prefix(b"\x1d") else {
        return (crate::Headers::new(), why);
    };
    let Some(len) = crate::queue::headers::parse_len(rest) else {
        return (crate::Headers::new(), why);
    };
    let Some(json) = rest.get(6..6 + len) else {
        return (crate::Headers::new(), why);
    };
    match crate::Headers::decode(json) {
        Ok(headers) => (headers, &rest[6 + len..]),
        Err(_) => (crate::Headers::new(), why),
    }
}

/// The job id at the start of a reason, and the reason after it.
fn split_job(why: &str) -> (Option<String>, &str) {
    let Some(rest) = why.strip_prefix('\x1e') else {
        return (None, why);
    };
    let Some((len, rest)) = rest.split_once(':') else {
        return (None, why);
    };
    match len.parse::<usize>() {
        Ok(len) if rest.is_char_boundary(len.min(rest.len())) && len <= rest.len() => {
            (Some(rest[..len].to_owned()), &rest[len..])
        }
        _ => (None, why),
    }
}

/// What a confirmed bulk requeue or delete did
/// ([`ReliableQueue::requeue_dead_letters_confirmed`]).
///
/// ```no_run
/// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
/// let outcome = queue.delete_dead_letters_confirmed(10_000, 3, |reason| reason == Some("bad input")).await?;
/// if outcome.changed > 0 {
///     println!("deleted {}; {} changed meanwhile and were left", outcome.done, outcome.changed);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BulkOutcome {
    /// How many were requeued or deleted.
    pub done: usize,
    /// How many of the confirmed were left because values among them
    /// changed meanwhile (requeued, deleted or moved by someone else); 0
    /// when all were done.
    pub changed: usize,
}

/// One dead letter as [`ReliableQueue::dead_letter_page`] reads it.
///
/// ```no_run
/// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
/// let oldest = queue.dead_letter_page(0, 1).await?;
/// if let Some(dead) = oldest.first() {
///     println!("dead since {:?} because {:?}", dead.at, dead.reason);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct DeadLetter<T> {
    /// The value, or why the queue's codec cannot decode it (bytes kept).
    pub value: std::result::Result<T, crate::error::DecodeError>,
    /// The value's bytes.
    pub raw: Bytes,
    /// Why it was dead-lettered, when recorded.
    pub reason: Option<String>,
    /// When it was dead-lettered (the Redis server's clock), when recorded.
    pub at: Option<std::time::SystemTime>,
    /// The id of its job, when it was offered with one on a queue that
    /// keeps job history ([`ReliableQueue::set_job_history`];
    /// [`ReliableQueue::job`] reads the job's history).
    pub job: Option<String>,
    /// The headers it was offered with ([`OfferOptions::header`](crate::OfferOptions::header));
    /// a requeue offers it again with them. Empty for a value offered
    /// without (or dead-lettered by a delayq from before headers).
    pub headers: crate::Headers,
    /// What names exactly this dead letter for
    /// [`ReliableQueue::requeue_dead_letters_exact`] and
    /// [`ReliableQueue::delete_dead_letters_exact`].
    pub key: DeadLetterKey,
}

/// Names one dead letter exactly: the index it was read at, and a digest of
/// its bytes and its reason record (which holds when it died), so that of
/// equal values dead-lettered apart each is told from the others. Written
/// and parsed as `index:length:digest` (for a web form or a command line).
///
/// ```
/// let key: delayq::dead_letter::DeadLetterKey = "3:5:0123456789abcdef0123456789abcdef01234567".parse().unwrap();
/// assert_eq!(key.index(), 3);
/// assert_eq!(key.to_string().parse::<delayq::dead_letter::DeadLetterKey>().unwrap(), key);
/// assert!("3:x".parse::<delayq::dead_letter::DeadLetterKey>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DeadLetterKey {
    index: usize,
    len: usize,
    digest: String,
}

impl DeadLetterKey {
    /// The index (0 is the oldest) the dead letter was read at.
    pub fn index(&self) -> usize {
        self.index
    }
}

impl std::fmt::Display for DeadLetterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.index, self.len, self.digest)
    }
}

impl std::str::FromStr for DeadLetterKey {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        let bad = || Error::InvalidArgument(format!("not a dead-letter key (index:length:digest): {text:?}"));
        let mut parts = text.split(':');
        let (Some(index), Some(len), Some(digest), None) = (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        let digest_ok = digest.len() == 40 && digest.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        match (index.parse(), len.parse(), digest_ok) {
            (Ok(index), Ok(len), true) => Ok(DeadLetterKey {
                index,
                len,
                digest: digest.to_owned(),
            }),
            _ => Err(bad()),
        }
    }
}

/// The dead letters counted by reason, as
/// [`ReliableQueue::dead_letter_reasons`] reads them.
///
/// ```no_run
/// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
/// let reasons = queue.dead_letter_reasons(10_000).await?;
/// println!("{} dead letters, the {} most recent counted:", reasons.total, reasons.looked);
/// for group in &reasons.groups {
///     println!("{:>6}  {}", group.count, group.reason.as_deref().unwrap_or("(not recorded)"));
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DeadLetterReasons {
    /// Dead letters in all.
    pub total: usize,
    /// How many of the most recent were counted (less than `total` when capped).
    pub looked: usize,
    /// One per reason, largest count first; `reason: None` counts values
    /// without a recorded reason.
    pub groups: Vec<ReasonGroup>,
}

/// Dead letters that share a reason, one of [`DeadLetterReasons::groups`].
///
/// ```no_run
/// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
/// let reasons = queue.dead_letter_reasons(10_000).await?;
/// println!("{} dead letters, the {} most recent counted:", reasons.total, reasons.looked);
/// for group in &reasons.groups {
///     println!("{:>6}  {}", group.count, group.reason.as_deref().unwrap_or("(not recorded)"));
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReasonGroup {
    /// The reason, or `None`: not recorded.
    pub reason: Option<String>,
    /// How many of those counted have it.
    pub count: usize,
    /// When the latest of them died, when recorded.
    pub last_at: Option<std::time::SystemTime>,
}

/// One run of `dead_letter_page.lua` on the queue of `keys`: appends up to
/// `count` dead letters from `start` to `page`; true when it stopped at its
/// byte budget with more to read. Needs no queue handle (a reliable handle
/// starts a reaper; a read-only search wants none).
pub(crate) async fn read_dead_letter_run<T: 'static>(
    core: &crate::queue::Core,
    keys: &crate::wire::keys::QueueKeys,
    codec: &dyn crate::wire::codec::Codec<T>,
    start: usize,
    count: usize,
    page: &mut Vec<DeadLetter<T>>,
) -> Result<bool> {
    let script_keys = SCRIPTS.dead_letter_page.keys(keys).build();
    let args = vec![Value::from(start as i64), Value::from(count as i64)];
    let script = &SCRIPTS.dead_letter_page;
    let value = script.run(core.conn()?, keys.destination(), script_keys, args).await?;
    let mut flat = reply::array(value)?;
    let more = flat.len() % 3 == 1;
    if more {
        flat.pop();
    }
    if more && flat.is_empty() {
        return Err(Error::Protocol(
            "dead_letter_page stopped before its first value".into(),
        ));
    }
    for (i, entry) in flat.chunks(3).enumerate() {
        let [raw, reason, digest] = entry else {
            return Err(Error::Protocol("dead_letter_page returned a partial entry".into()));
        };
        let raw = reply::bytes(raw.clone())?;
        let Record {
            at,
            reason,
            job,
            headers,
        } = parse_record(reply::opt_bytes(reason.clone())?.as_deref());
        let key = DeadLetterKey {
            index: start + i,
            len: raw.len(),
            digest: reply::opt_text(digest.clone())?.unwrap_or_default(),
        };
        page.push(DeadLetter {
            value: codec::decode(codec, raw.clone()),
            raw,
            reason,
            at,
            job,
            headers,
            key,
        });
    }
    Ok(more)
}
