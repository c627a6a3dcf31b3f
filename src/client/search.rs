//! Search across queues: by id or by text, through the pending elements,
//! the ready values and the dead letters, a bounded number of values per
//! call, continued by a cursor.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use fred::interfaces::ListInterface;

use super::Client;
use crate::error::{Error, Result};
use crate::queue::reliable::{read_dead_letter_run, DeadLetter};
use crate::wire::codec::BytesCodec;
use crate::wire::keys::QueueKeys;

/// Values one call looks at unless [`Search::budget`] says otherwise.
pub const DEFAULT_BUDGET: usize = 10_000;
/// The most values one call may look at.
pub const MAX_BUDGET: usize = 100_000;
/// Matches one call returns unless [`Search::limit`] says otherwise.
pub const DEFAULT_LIMIT: usize = 50;
/// The most matches one call may return.
pub const MAX_LIMIT: usize = 1_000;
/// Pending elements or dead letters read per script run (each run is
/// bounded: `pending_page` by count, `dead_letter_page` by count and bytes).
const STEP: usize = 1_000;
/// Ready values read per `LRANGE` (whole values, with no script to cap their
/// bytes: fewer at a time).
const READY_STEP: usize = 100;

/// Where a value is: the three places a search looks, in the order it
/// looks in each queue.
///
/// ```
/// use delayq::search::ValueState;
///
/// assert_eq!("dead".parse::<ValueState>()?, ValueState::Dead);
/// assert_eq!(ValueState::Ready.as_str(), "ready");
/// # Ok::<(), delayq::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ValueState {
    /// In the delayed queue, not due yet (or due and not moved yet).
    Pending,
    /// In the destination list, ready to take.
    Ready,
    /// In the dead-letter list.
    Dead,
}

impl ValueState {
    /// Every state, in the order a search looks.
    pub const ALL: [ValueState; 3] = [ValueState::Pending, ValueState::Ready, ValueState::Dead];

    /// `pending`, `ready` or `dead`.
    pub fn as_str(self) -> &'static str {
        match self {
            ValueState::Pending => "pending",
            ValueState::Ready => "ready",
            ValueState::Dead => "dead",
        }
    }
}

impl fmt::Display for ValueState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ValueState {
    type Err = Error;

    fn from_str(s: &str) -> Result<ValueState> {
        ValueState::ALL
            .into_iter()
            .find(|state| state.as_str() == s)
            .ok_or_else(|| Error::InvalidArgument(format!("no value state {s:?}: one of pending, ready, dead")))
    }
}

/// How a payload reads for a search: the text it is matched as.
type Render = Arc<dyn Fn(&str, &[u8]) -> String + Send + Sync>;

/// What to look for, and where: a search for [`Client::search`].
///
/// A value matches when the text, ignoring case, occurs in its payload as
/// [rendered](Search::render) (by default the payload's bytes read as UTF-8,
/// an invalid sequence as U+FFFD: raw bytes, not a codec's decoding) or in
/// the id it was offered with. A pending element offered under exactly the
/// text as its id is also found through the id index, first, whatever the
/// queue's size. Dead-letter reasons are not searched.
///
/// ```
/// use delayq::search::{Search, ValueState};
///
/// let search = Search::new("ORD-42")
///     .queue("orders")
///     .states(&[ValueState::Pending, ValueState::Dead])
///     .budget(50_000)
///     .limit(20)
///     .render(|_queue, payload| String::from_utf8_lossy(payload).to_uppercase());
/// assert_eq!(search.text(), "ORD-42");
/// ```
#[derive(Clone)]
pub struct Search {
    text: String,
    needle: String,
    queues: Option<Vec<String>>,
    states: Vec<ValueState>,
    budget: usize,
    limit: usize,
    render: Render,
}

impl fmt::Debug for Search {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Search")
            .field("text", &self.text)
            .field("queues", &self.queues)
            .field("states", &self.states)
            .field("budget", &self.budget)
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl Search {
    /// A search for `text` in every queue, every state.
    pub fn new(text: impl Into<String>) -> Search {
        let text = text.into();
        Search {
            needle: text.to_lowercase(),
            text,
            queues: None,
            states: ValueState::ALL.to_vec(),
            budget: DEFAULT_BUDGET,
            limit: DEFAULT_LIMIT,
            render: Arc::new(|_, payload| String::from_utf8_lossy(payload).into_owned()),
        }
    }

    /// The text looked for.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Only in `queue` (call again to add more). Without it: every queue
    /// [`Client::queues`] lists (one `SCAN` of the keyspace per call).
    pub fn queue(mut self, queue: impl Into<String>) -> Search {
        self.queues.get_or_insert_with(Vec::new).push(queue.into());
        self
    }

    /// Only in these queues (a caller that knows them saves the `SCAN`).
    pub fn queues<I: IntoIterator<Item = S>, S: Into<String>>(mut self, queues: I) -> Search {
        self.queues = Some(queues.into_iter().map(Into::into).collect());
        self
    }

    /// Only in these states (empty: every state).
    pub fn states(mut self, states: &[ValueState]) -> Search {
        self.states = if states.is_empty() {
            ValueState::ALL.to_vec()
        } else {
            ValueState::ALL.into_iter().filter(|s| states.contains(s)).collect()
        };
        self
    }

    /// How many values one call looks at, most (default
    /// [`DEFAULT_BUDGET`], at most [`MAX_BUDGET`], at least 1).
    pub fn budget(mut self, values: usize) -> Search {
        self.budget = values.clamp(1, MAX_BUDGET);
        self
    }

    /// How many matches one call returns, most (default [`DEFAULT_LIMIT`],
    /// at most [`MAX_LIMIT`], at least 1).
    pub fn limit(mut self, matches: usize) -> Search {
        self.limit = matches.clamp(1, MAX_LIMIT);
        self
    }

    /// The text a payload is matched as, given its queue's name and its
    /// bytes: a tool passes the decoding it shows (a codec, a schema), so
    /// that what matches is what an operator reads.
    pub fn render(mut self, render: impl Fn(&str, &[u8]) -> String + Send + Sync + 'static) -> Search {
        self.render = Arc::new(render);
        self
    }

    fn matches(&self, text: &str, id: Option<&str>) -> bool {
        text.to_lowercase().contains(&self.needle) || id.is_some_and(|id| id.to_lowercase().contains(&self.needle))
    }
}

/// Where a search goes on: the queue, the state and the position in it
/// where the last call stopped, and how many values were looked at so far.
/// Its text form (`Display`, `FromStr`) is what a tool hands back to go on.
///
/// ```
/// use delayq::search::SearchCursor;
///
/// let text = "6:orders.pending.10001.10000";
/// let cursor: SearchCursor = text.parse()?;
/// assert_eq!(cursor.queue(), "orders");
/// assert_eq!(cursor.searched(), 10_000);
/// assert_eq!(cursor.to_string(), text);
/// # Ok::<(), delayq::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchCursor {
    queue: String,
    state: ValueState,
    position: usize,
    searched: u64,
}

impl SearchCursor {
    /// The queue the search goes on in.
    pub fn queue(&self) -> &str {
        &self.queue
    }

    /// The state it goes on in.
    pub fn state(&self) -> ValueState {
        self.state
    }

    /// The position it goes on from: an index from the ready list's head
    /// or the dead-letter list's oldest; for pending elements 1 + the rank
    /// in due order (0: before the lookup of the text as an id).
    pub fn position(&self) -> usize {
        self.position
    }

    /// Values looked at by the calls before.
    pub fn searched(&self) -> u64 {
        self.searched
    }
}

/// `<name length>:<name>.<state>.<position>.<searched>`: the length makes
/// any name (dots, colons, any character) read back whole.
impl fmt::Display for SearchCursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}.{}.{}.{}",
            self.queue.len(),
            self.queue,
            self.state,
            self.position,
            self.searched
        )
    }
}

impl FromStr for SearchCursor {
    type Err = Error;

    fn from_str(s: &str) -> Result<SearchCursor> {
        let bad = || Error::InvalidArgument(format!("{s:?} is not a search cursor (as a search printed it)"));
        let (len, rest) = s.split_once(':').ok_or_else(bad)?;
        let len: usize = len.parse().map_err(|_| bad())?;
        let queue = rest.get(..len).ok_or_else(bad)?;
        let mut fields = rest
            .get(len..)
            .ok_or_else(bad)?
            .strip_prefix('.')
            .ok_or_else(bad)?
            .split('.');
        let (Some(state), Some(position), Some(searched), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(bad());
        };
        Ok(SearchCursor {
            queue: queue.to_owned(),
            state: state.parse().map_err(|_| bad())?,
            position: position.parse().map_err(|_| bad())?,
            searched: searched.parse().map_err(|_| bad())?,
        })
    }
}

/// One value a search found.
///
/// ```no_run
/// use delayq::search::Search;
/// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
/// let page = client.search(&Search::new("ord-42"), None).await?;
/// for found in &page.matches {
///     println!("{} {} #{}: {}", found.queue, found.state, found.position, found.text);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SearchMatch {
    /// Its queue.
    pub queue: String,
    /// Where it is.
    pub state: ValueState,
    /// Its position when it was read: its rank in due order (0 is the next
    /// due), its index from the ready list's head (0 is taken next), or its
    /// dead-letter index (0 is the oldest).
    pub position: usize,
    /// The id it was offered with (pending elements, and the dead letters
    /// of values offered with an id).
    pub id: Option<String>,
    /// Found through the id index: its id is exactly the text.
    pub by_id: bool,
    /// Its payload's bytes (a pending element's unpacked value; the packed
    /// element where it does not unpack).
    pub payload: Bytes,
    /// The payload as the search rendered it.
    pub text: String,
    /// When it is due (pending elements only).
    pub due: Option<SystemTime>,
    /// Why it was dead-lettered, where recorded (dead letters only).
    pub reason: Option<String>,
}

/// What one call of [`Client::search`] found, and how far it looked.
///
/// ```no_run
/// use delayq::search::Search;
/// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
/// let search = Search::new("ord-42");
/// let mut page = client.search(&search, None).await?;
/// while page.matches.is_empty() {
///     let Some(next) = page.next.clone() else { break };
///     println!("searched {} of {}, continuing", page.searched, page.total);
///     page = client.search(&search, Some(&next)).await?;
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SearchPage {
    /// The matches of this call, in the order looked at.
    pub matches: Vec<SearchMatch>,
    /// Values looked at, this call and the calls before it.
    pub searched: u64,
    /// Values in the searched queues and states, counted as this call began
    /// (queues change meanwhile: an estimate).
    pub total: u64,
    /// Where to go on, or `None` when everything was looked at.
    pub next: Option<SearchCursor>,
}

impl Client {
    /// Looks for `search`'s text from `from` (or the start): the first call
    /// looks the text up as an exact id in every queue's index (pending
    /// elements offered with an id), then each call goes through each
    /// queue in name order and, in each, its pending elements in due order,
    /// its ready values from the head, its dead letters from the oldest.
    /// Stops after [`Search::budget`] values (10,000 unless set) or
    /// [`Search::limit`] matches and returns a cursor to go on from: each
    /// call's cost is bounded whatever the queues' sizes (script runs of at
    /// most 1,000 elements or about 1 MiB, `LRANGE`s of 100 values, one
    /// status and, at the first call, two id lookups per queue searched, and the `SCAN` of
    /// [`Client::queues`] unless the search names its queues). Reads only.
    ///
    /// Queues change while a search goes on: a value that moves between
    /// two calls (due, taken, requeued) may be missed or found twice, as in
    /// any paging of a live queue.
    ///
    /// ```no_run
    /// use delayq::search::{Search, ValueState};
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let search = Search::new("ord-42").states(&[ValueState::Dead]);
    /// let page = client.search(&search, None).await?;
    /// println!("{} found; searched {} of {}", page.matches.len(), page.searched, page.total);
    /// if let Some(next) = &page.next {
    ///     let more = client.search(&search, Some(next)).await?;
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn search(&self, search: &Search, from: Option<&SearchCursor>) -> Result<SearchPage> {
        if search.text.is_empty() {
            return Err(Error::InvalidArgument("search for a text or an id, not nothing".into()));
        }
        let mut queues = match &search.queues {
            Some(queues) => queues.clone(),
            None => self.queues().await?,
        };
        queues.sort();
        queues.dedup();
        // Values per queue and state, in the order searched: the total, and
        // whether anything is left where a call stops.
        let mut counts = Vec::with_capacity(queues.len() * search.states.len());
        for name in &queues {
            let status = self
                .delayed_queue::<Bytes, _>(name, BytesCodec)?
                .without_transfer()
                .status()
                .await?;
            for state in &search.states {
                counts.push(match state {
                    ValueState::Pending => status.pending,
                    ValueState::Ready => status.ready,
                    ValueState::Dead => status.dead_letters,
                });
            }
        }
        let total: u64 = counts.iter().sum();
        let mut walk = Walk {
            search,
            matches: Vec::new(),
            looked: 0,
        };
        // An exact id is looked up in every queue's index first (two lookups
        // a queue, whatever its size), so the first call finds it however many
        // values the walk would read before reaching its queue.
        if from.is_none() && search.states.contains(&ValueState::Pending) {
            for name in &queues {
                if walk.matches.len() >= search.limit {
                    break;
                }
                walk.by_id(self, name).await?;
            }
        }
        let start = from.map(|c| (c.queue.as_str(), c.state, c.position));
        let mut next = None;
        'queues: for (q, name) in queues.iter().enumerate() {
            if start.is_some_and(|(from, _, _)| name.as_str() < from) {
                continue;
            }
            for (s, &state) in search.states.iter().enumerate() {
                let position = match start {
                    Some((from, at, _)) if from == name && state < at => continue,
                    Some((from, at, p)) if from == name && state == at => p,
                    _ => 0,
                };
                if let Some(stopped) = walk.state(self, name, state, position).await? {
                    // Stopped at the very end (as counted): nothing to go on with.
                    let at = q * search.states.len() + s;
                    let read = match state {
                        ValueState::Pending => stopped.saturating_sub(1),
                        _ => stopped,
                    } as u64;
                    let left = counts[at].saturating_sub(read) + counts[at + 1..].iter().sum::<u64>();
                    if left > 0 {
                        next = Some((name.clone(), state, stopped));
                    }
                    break 'queues;
                }
            }
        }
        let searched = from.map_or(0, |c| c.searched) + walk.looked as u64;
        Ok(SearchPage {
            matches: walk.matches,
            searched,
            total: total.max(searched),
            next: next.map(|(queue, state, position)| SearchCursor {
                queue,
                state,
                position,
                searched,
            }),
        })
    }
}

/// A value a walk looked at: what a match keeps of it beside its place.
struct Looked {
    payload: Bytes,
    id: Option<String>,
    due: Option<SystemTime>,
    reason: Option<String>,
}

/// One call's progress.
struct Walk<'a> {
    search: &'a Search,
    matches: Vec<SearchMatch>,
    looked: usize,
}

impl Walk<'_> {
    fn full(&self) -> bool {
        self.looked >= self.search.budget || self.matches.len() >= self.search.limit
    }

    /// Looks through one state of one queue from `position`; `Some(where
    /// it stopped)` when the budget or the limit ran out first.
    async fn state(
        &mut self,
        client: &Client,
        name: &str,
        state: ValueState,
        position: usize,
    ) -> Result<Option<usize>> {
        match state {
            ValueState::Pending => self.pending(client, name, position).await,
            ValueState::Ready => self.ready(client, name, position).await,
            ValueState::Dead => self.dead(client, name, position).await,
        }
    }

    /// Keeps a value looked at when its rendered text or its id matches;
    /// the match is built only then (most values looked at do not match).
    fn consider(&mut self, name: &str, state: ValueState, position: usize, value: Looked) {
        let text = (self.search.render)(name, &value.payload);
        if self.search.matches(&text, value.id.as_deref()) {
            self.matches.push(SearchMatch {
                queue: name.to_owned(),
                state,
                position,
                id: value.id,
                by_id: false,
                payload: value.payload,
                text,
                due: value.due,
                reason: value.reason,
            });
        }
    }

    /// The pending element whose id is exactly the search's text, through
    /// the queue's id index; a text that cannot be an id is no error here.
    async fn by_id(&mut self, client: &Client, name: &str) -> Result<()> {
        let search = self.search;
        let queue = client.delayed_queue::<Bytes, _>(name, BytesCodec)?.without_transfer();
        match queue.pending_by_id(&search.text).await {
            Ok(Some(element)) => {
                let payload = element
                    .value
                    .as_ref()
                    .map_or_else(|_| element.raw.clone(), Bytes::clone);
                self.matches.push(SearchMatch {
                    queue: name.to_owned(),
                    state: ValueState::Pending,
                    position: queue.count_due_by(&[element.due]).await?[0].saturating_sub(1) as usize,
                    text: (search.render)(name, &payload),
                    id: element.id,
                    by_id: true,
                    payload,
                    due: Some(element.due),
                    reason: None,
                });
                Ok(())
            }
            Ok(None) | Err(Error::InvalidArgument(_)) => Ok(()),
            Err(other) => Err(other),
        }
    }

    /// Scans the pending elements in due order. `position` 0 and 1 both
    /// start at rank 0, from 1 on it is 1 + the rank the scan goes on from
    /// (cursors of earlier versions, where 0 came before an id lookup that is
    /// now made for every queue at the first call, stay valid).
    async fn pending(&mut self, client: &Client, name: &str, position: usize) -> Result<Option<usize>> {
        let search = self.search;
        let queue = client.delayed_queue::<Bytes, _>(name, BytesCodec)?.without_transfer();
        if position == 0 && self.full() {
            return Ok(Some(0));
        }
        let mut rank = position.saturating_sub(1);
        loop {
            if self.full() {
                return Ok(Some(rank + 1));
            }
            let want = STEP.min(search.budget - self.looked);
            let page = queue.pending_page(rank, want).await?;
            if page.is_empty() {
                return Ok(None);
            }
            for element in page {
                if self.full() {
                    return Ok(Some(rank + 1));
                }
                self.looked += 1;
                rank += 1;
                // Found through the index at the first call.
                if element.id.as_deref() == Some(search.text.as_str()) {
                    continue;
                }
                let payload = element
                    .value
                    .as_ref()
                    .map_or_else(|_| element.raw.clone(), Bytes::clone);
                let looked = Looked {
                    payload,
                    id: element.id,
                    due: Some(element.due),
                    reason: None,
                };
                self.consider(name, ValueState::Pending, rank - 1, looked);
            }
        }
    }

    async fn ready(&mut self, client: &Client, name: &str, mut position: usize) -> Result<Option<usize>> {
        let keys = QueueKeys::new(name)?;
        loop {
            if self.full() {
                return Ok(Some(position));
            }
            let want = READY_STEP.min(self.search.budget - self.looked);
            let values: Vec<Bytes> = client
                .redis()
                .next()
                .lrange(keys.destination(), position as i64, (position + want - 1) as i64)
                .await?;
            if values.is_empty() {
                return Ok(None);
            }
            for payload in values {
                if self.full() {
                    return Ok(Some(position));
                }
                self.looked += 1;
                position += 1;
                let looked = Looked {
                    payload,
                    id: None,
                    due: None,
                    reason: None,
                };
                self.consider(name, ValueState::Ready, position - 1, looked);
            }
        }
    }

    async fn dead(&mut self, client: &Client, name: &str, mut position: usize) -> Result<Option<usize>> {
        let keys = QueueKeys::new(name)?;
        loop {
            if self.full() {
                return Ok(Some(position));
            }
            let want = STEP.min(self.search.budget - self.looked);
            // One script run: `want` values or about 1 MiB, whichever is less.
            let mut page: Vec<DeadLetter<Bytes>> = Vec::new();
            read_dead_letter_run(&client.core, &keys, &BytesCodec, position, want, &mut page).await?;
            if page.is_empty() {
                return Ok(None);
            }
            for letter in page {
                if self.full() {
                    return Ok(Some(position));
                }
                self.looked += 1;
                position += 1;
                let looked = Looked {
                    payload: letter.raw,
                    // A job's dead letter keeps its id (in its reason
                    // record): matched and named like a pending one's.
                    id: letter.job,
                    due: None,
                    reason: letter.reason,
                };
                self.consider(name, ValueState::Dead, position - 1, looked);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_read_back_whole_whatever_the_name() {
        for name in ["orders", "a.b.c", "7:x.dead.1.2", "заказы-📦", ""] {
            let cursor = SearchCursor {
                queue: name.to_owned(),
                state: ValueState::Ready,
                position: 12,
                searched: 345,
            };
            assert_eq!(cursor.to_string().parse::<SearchCursor>().unwrap(), cursor);
        }
        for bad in [
            "",
            "3:ab.pending.1.2",
            "2:ab.lost.1.2",
            "2:ab.pending.1",
            "x:ab.pending.1.2",
            "2:ab.pending.1.2.3",
        ] {
            assert!(bad.parse::<SearchCursor>().is_err(), "{bad}");
        }
    }

    #[test]
    fn text_matches_in_any_case_in_the_payload_or_the_id() {
        let search = Search::new("Ord-42");
        assert!(search.matches("{\"order\":\"ORD-42\"}", None));
        assert!(search.matches("nothing", Some("ord-42-a")));
        assert!(!search.matches("ord-4", Some("42")));
    }
}
