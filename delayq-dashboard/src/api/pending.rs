//! The queue page's pending elements: a page of them in due order (the
//! `pending` section of `GET /api/queue`), search by id and by text, a jump
//! to a due time, and the actions on one element.
//!
//! Every element shown carries its packed bytes as hex (`raw`): that names
//! it exactly for an action, whether or not it has a delayq id (equal
//! payloads are different elements; a byte-identical legacy copy is acted on
//! one at a time). An action on an element a transfer took meanwhile
//! answers 409 and changes nothing.

use std::hash::Hasher;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use bytes::Bytes;
use serde::Deserialize;
use serde_json::{json, Value};

use delayq::{DelayedQueue, ElementOutcome, PendingElement, QueueStatus};

use super::action::{act, done, failed, paused};
use super::{error, hex, show};
use crate::health::{guarded, unavailable, REDIS_WAIT};
use crate::sampler::view;
use crate::{epoch_ms, Shared};

/// Pending elements per page of the queue page, most.
pub(crate) const MAX_PAGE: usize = 500;
/// Elements one text search looks at, most: it says how far it got, and
/// the page goes on from there.
pub(crate) const SCAN: usize = 10_000;
/// Matches one text search returns, most.
pub(crate) const MATCHES: usize = 50;
/// Packed elements up to this size go to the page whole (hex), to name them
/// for an action; a larger one is named by a digest of its bytes and its due
/// time, and found again among the elements due at that ms, so that a page
/// of large values does not travel twice.
const RAW_INLINE: usize = 8 * 1024;
/// Elements due at the same ms an action looks through for a digest, most.
const TIES: usize = 1_000;
/// Elements read per script run of a text search.
const SCAN_STEP: usize = 1_000;
/// A text search stops after this long (and says how far it looked), well
/// within the time a read may take.
const SCAN_TIME: Duration = Duration::from_millis(1_500);

pub(crate) fn routes(read_only: bool) -> Router<Arc<Shared>> {
    let router = Router::new()
        .route("/api/pending/search", get(search))
        .route("/api/pending/jump", get(jump));
    if read_only {
        return router;
    }
    router
        .route("/api/actions/element-delete", post(element_delete))
        .route("/api/actions/element-run", post(element_run))
        .route("/api/actions/element-reschedule", post(element_reschedule))
}

/// The `pending` field of `GET /api/queue`: `limit` elements from
/// `offset` in due order, each decoded with the dashboard's codec.
pub(crate) async fn page(
    shared: &Shared,
    name: &str,
    offset: usize,
    limit: usize,
    status: &QueueStatus,
) -> delayq::Result<Value> {
    let page = view(&shared.client, name)?.pending_page(offset, limit).await?;
    let elements: Vec<Value> = page
        .iter()
        .enumerate()
        .map(|(i, element)| element_json(shared, element, offset + i))
        .collect();
    Ok(json!({"offset": offset, "limit": limit, "total": status.pending, "elements": elements}))
}

/// One pending element as the page shows it; `rank` is its place in due
/// order when it was read (0 is the next due).
fn element_json(shared: &Shared, element: &PendingElement<Bytes>, rank: usize) -> Value {
    let mut shown = match &element.value {
        Ok(payload) => show(&*shared.codec, payload),
        Err(_) => json!({"text": hex(&element.raw), "decoded": false, "error": "no element format unpacks it"}),
    };
    shown["due_ms"] = json!(epoch_ms(element.due));
    shown["id"] = json!(element.id);
    shown["format"] = json!(element.format.map_or("malformed", |f| f.as_str()));
    shown["size"] = json!(element.raw.len());
    shown["raw"] = json!(handle(&element.raw, epoch_ms(element.due)));
    shown["rank"] = json!(rank);
    shown
}

/// `GET /api/pending/search` parameters: `id` (exact, through the id index)
/// or `text` (a substring of the decoded payload or of the id, in any case,
/// from rank `from`).
#[derive(Debug, Deserialize)]
pub(crate) struct SearchQuery {
    name: String,
    #[serde(default)]
    id: String,
    #[serde(default)]
    text: String,
    #[serde(default)]
    from: usize,
}

/// Finds pending elements: by id (two lookups), or by text in a bounded scan
/// in due order that answers how far it looked and where to go on.
pub(crate) async fn search(State(shared): State<Arc<Shared>>, Query(query): Query<SearchQuery>) -> Response {
    let work = async {
        if !query.id.is_empty() {
            search_id(&shared, &query).await
        } else if !query.text.is_empty() {
            search_text(&shared, &query).await
        } else {
            Err(delayq::Error::InvalidArgument("search for an id or a text".into()))
        }
    };
    answer(&shared, guarded(&shared, Some(REDIS_WAIT), work).await)
}

async fn search_id(shared: &Shared, query: &SearchQuery) -> delayq::Result<Value> {
    let queue = view(&shared.client, &query.name)?;
    let Some(element) = queue.pending_by_id(&query.id).await? else {
        return Ok(json!({"matches": [], "message": format!("no pending element has the id {:?}", query.id)}));
    };
    // Its page: where elements due before it end (an equal due time may
    // put it a few places further).
    let rank = due_before(&queue, element.due).await?;
    Ok(json!({"matches": [element_json(shared, &element, rank)], "message": "found by its id"}))
}

async fn search_text(shared: &Shared, query: &SearchQuery) -> delayq::Result<Value> {
    let queue = view(&shared.client, &query.name)?;
    let total = queue.len().await?;
    // Case-insensitive: an operator types "ord-42" for "ORD-42".
    let needle = query.text.to_lowercase();
    let (started, mut at, mut matches) = (Instant::now(), query.from, Vec::new());
    while at < total && at - query.from < SCAN && matches.len() < MATCHES && started.elapsed() < SCAN_TIME {
        let step = SCAN_STEP.min(SCAN - (at - query.from));
        let page = queue.pending_page(at, step).await?;
        if page.is_empty() {
            break;
        }
        for element in &page {
            if matches.len() == MATCHES {
                break;
            }
            let text = match &element.value {
                Ok(payload) => shared.codec.decode(payload).unwrap_or_else(|_| hex(payload)),
                Err(_) => hex(&element.raw),
            };
            at += 1;
            let id = element.id.as_deref().unwrap_or_default();
            if text.to_lowercase().contains(&needle) || id.to_lowercase().contains(&needle) {
                matches.push(element_json(shared, element, at - 1));
            }
        }
    }
    let complete = at >= total;
    let looked = if at > query.from {
        format!(
            "looked at elements {}–{} of {}",
            thousands(query.from + 1),
            thousands(at),
            thousands(total)
        )
    } else {
        format!(
            "nothing to look at from element {} of {}",
            thousands(query.from + 1),
            thousands(total)
        )
    };
    let found = match matches.len() {
        0 => "no match".to_owned(),
        1 => "1 match".to_owned(),
        n => format!("{n} matches"),
    };
    Ok(json!({
        "matches": matches,
        "from": query.from,
        "to": at,
        "total": total,
        "complete": complete,
        "message": format!("{found}; {looked}{}", if complete { "" } else { "; continue from there" }),
    }))
}

/// `GET /api/pending/jump` parameters: `at_ms`, a due time.
#[derive(Debug, Deserialize)]
pub(crate) struct JumpQuery {
    name: String,
    at_ms: i64,
}

/// The rank of the first element due at `at_ms` or later: the page offset
/// that starts there (one `ZCOUNT`, whatever the queue's size).
pub(crate) async fn jump(State(shared): State<Arc<Shared>>, Query(query): Query<JumpQuery>) -> Response {
    let work = async {
        let queue = view(&shared.client, &query.name)?;
        let at = SystemTime::UNIX_EPOCH + Duration::from_millis(query.at_ms.max(0) as u64);
        let offset = due_before(&queue, at).await?;
        let total = queue.len().await?;
        Ok(json!({"offset": offset, "total": total}))
    };
    answer(&shared, guarded(&shared, Some(REDIS_WAIT), work).await)
}

/// How many elements are due before `at` (to the ms).
async fn due_before(queue: &DelayedQueue<Bytes>, at: SystemTime) -> delayq::Result<usize> {
    let before = at
        .checked_sub(Duration::from_millis(1))
        .unwrap_or(SystemTime::UNIX_EPOCH);
    Ok(queue.count_due_by(&[before]).await?.first().copied().unwrap_or(0) as usize)
}

fn answer(shared: &Shared, read: Result<delayq::Result<Value>, crate::health::Unavailable>) -> Response {
    match read {
        Ok(Ok(value)) => Json(value).into_response(),
        Ok(Err(e)) => failed(e),
        Err(why) => unavailable(shared, why),
    }
}

/// The form the element actions post: the queue, the element's packed
/// bytes as hex (`raw` of the page), and for a reschedule a `delay`
/// ("10m", "1h30m") or a due time `at_ms`.
#[derive(Debug, Deserialize)]
pub(crate) struct ElementForm {
    name: String,
    element: String,
    #[serde(default)]
    delay: String,
    #[serde(default)]
    at_ms: Option<i64>,
}

/// Deletes one pending element (what Redisson's `remove` does to both
/// keys; its id, if any, leaves the index too).
pub(crate) async fn element_delete(State(shared): State<Arc<Shared>>, Form(form): Form<ElementForm>) -> Response {
    act(&shared, element_action(&shared, form, Action::Delete)).await
}

/// Moves one pending element to the destination now, as a transfer would.
pub(crate) async fn element_run(State(shared): State<Arc<Shared>>, Form(form): Form<ElementForm>) -> Response {
    act(&shared, element_action(&shared, form, Action::Run)).await
}

/// Gives one pending element a new due time (its bytes and id stay).
pub(crate) async fn element_reschedule(State(shared): State<Arc<Shared>>, Form(form): Form<ElementForm>) -> Response {
    act(&shared, element_action(&shared, form, Action::Reschedule)).await
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Delete,
    Run,
    Reschedule,
}

async fn element_action(shared: &Shared, form: ElementForm, action: Action) -> Response {
    let Some(named) = Named::parse(&form.element) else {
        return error(
            StatusCode::BAD_REQUEST,
            "`element` must name an element as the page does (its bytes as hex)".into(),
        );
    };
    let when = match action {
        Action::Reschedule => match (form.at_ms, form.delay.trim()) {
            (Some(ms), "") => When::At(SystemTime::UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64)),
            (None, delay) if !delay.is_empty() => match parse_delay(delay) {
                Some(delay) => When::After(delay),
                None => {
                    return error(
                        StatusCode::BAD_REQUEST,
                        format!("{delay:?} is not a delay: write e.g. 90s, 10m, 1h30m or 2d"),
                    )
                }
            },
            _ => return error(StatusCode::BAD_REQUEST, "give a delay (e.g. 10m) or a due time".into()),
        },
        _ => When::Now,
    };
    let run = async {
        let queue = view(&shared.client, &form.name)?;
        let Some(raw) = named.resolve(&queue).await? else {
            return Ok(ElementOutcome::Gone);
        };
        match (action, when) {
            (Action::Delete, _) => queue.delete_element(&raw).await,
            (Action::Run, _) => queue.run_element_now(&raw).await,
            (Action::Reschedule, When::After(delay)) => queue.reschedule_element(&raw, delay).await,
            (Action::Reschedule, When::At(at)) => queue.reschedule_element_at(&raw, at).await,
            (Action::Reschedule, When::Now) => unreachable!("a reschedule has a due time"),
        }
    };
    let gone = || {
        error(
            StatusCode::CONFLICT,
            "that element is no longer pending: a transfer moved it, or it was removed or rescheduled \
             meanwhile; nothing changed"
                .into(),
        )
    };
    match run.await {
        Ok(ElementOutcome::Done { due }) => {
            let (message, due_ms) = match action {
                Action::Delete => (
                    "deleted the element; it will not be delivered".to_owned(),
                    epoch_ms(due),
                ),
                Action::Run => (
                    format!("moved the element to {} now; consumers take it next", form.name),
                    epoch_ms(due),
                ),
                Action::Reschedule => (format!("rescheduled the element: due {}", describe(due)), epoch_ms(due)),
            };
            done(message, json!({"due_ms": due_ms}))
        }
        Ok(ElementOutcome::Gone) => gone(),
        Ok(ElementOutcome::Copies) => error(
            StatusCode::CONFLICT,
            "the pending list holds byte-identical copies of that element (legacy elements with equal \
             payloads and due times): a new due time would apply to all of them, so nothing changed; \
             delete or run them one at a time instead"
                .into(),
        ),
        Ok(ElementOutcome::Paused) => error(StatusCode::CONFLICT, paused(&form.name)),
        Ok(ElementOutcome::Malformed) => error(
            StatusCode::CONFLICT,
            "no element format unpacks that element, so there is no value to deliver; nothing changed \
             (delete it instead)"
                .into(),
        ),
        Ok(_) => gone(),
        Err(e) => failed(e),
    }
}

/// How the page names an element: its packed bytes, or for a large one a
/// digest of them and its due time ([`handle`]).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Named {
    Bytes(Vec<u8>),
    Digest { digest: u64, due_ms: i64 },
}

/// The name the page gets for an element: its bytes as hex, or
/// `~<digest>@<due ms>` when they are longer than [`RAW_INLINE`].
fn handle(raw: &[u8], due_ms: i64) -> String {
    if raw.len() <= RAW_INLINE {
        hex(raw)
    } else {
        format!("~{:016x}@{due_ms}", digest(raw))
    }
}

/// The dashboard names and finds an element in the same process: the std
/// hasher with its fixed keys is enough (the action itself then goes by
/// the exact bytes found).
fn digest(raw: &[u8]) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    hasher.write(raw);
    hasher.finish()
}

impl Named {
    fn parse(text: &str) -> Option<Named> {
        match text.strip_prefix('~') {
            Some(rest) => {
                let (digest, due) = rest.split_once('@')?;
                Some(Named::Digest {
                    digest: u64::from_str_radix(digest, 16).ok()?,
                    due_ms: due.parse().ok()?,
                })
            }
            None => unhex(text).map(Named::Bytes),
        }
    }

    /// The element's packed bytes: as named, or the element due at its ms
    /// whose digest matches (`None`: not pending at that due time now, or
    /// not among the first [`TIES`] due then).
    async fn resolve(self, queue: &DelayedQueue<Bytes>) -> delayq::Result<Option<Vec<u8>>> {
        let (digest_of, due_ms) = match self {
            Named::Bytes(raw) => return Ok(Some(raw)),
            Named::Digest { digest, due_ms } => (digest, due_ms),
        };
        let at = SystemTime::UNIX_EPOCH + Duration::from_millis(due_ms.max(0) as u64);
        let mut rank = due_before(queue, at).await?;
        let mut looked = 0;
        while looked < TIES {
            let page = queue.pending_page(rank, 100).await?;
            for element in &page {
                if epoch_ms(element.due) != due_ms {
                    return Ok(None);
                }
                if digest(&element.raw) == digest_of {
                    return Ok(Some(element.raw.to_vec()));
                }
            }
            if page.len() < 100 {
                break;
            }
            (rank, looked) = (rank + page.len(), looked + page.len());
        }
        Ok(None)
    }
}

#[derive(Debug, Clone, Copy)]
enum When {
    Now,
    After(Duration),
    At(SystemTime),
}

/// A due time as the answer says it: relative to now.
fn describe(due: SystemTime) -> String {
    match due.duration_since(SystemTime::now()) {
        Ok(ahead) => format!("in {}", delay_text(ahead)),
        Err(_) => "now".into(),
    }
}

fn delay_text(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0 => "under a second".into(),
        1..=119 => format!("{s}s"),
        120..=3_599 => format!("{}m", s / 60),
        3_600..=172_799 => format!("{}h{}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d{}h", s / 86_400, s % 86_400 / 3600),
    }
}

/// "90s", "10m", "1h30m", "2d", "500ms": a sum of whole numbers with units.
fn parse_delay(text: &str) -> Option<Duration> {
    let mut total = Duration::ZERO;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        let n: u64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
        let ms = match rest[..unit].trim() {
            "ms" => 1,
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            _ => return None,
        };
        total = total.checked_add(Duration::from_millis(n.checked_mul(ms)?))?;
        rest = &rest[unit..];
    }
    Some(total)
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if text.is_empty() || !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// 12345 -> "12,345", as the page writes counts.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_and_hex_parse_or_are_refused() {
        assert_eq!(parse_delay("10m"), Some(Duration::from_secs(600)));
        assert_eq!(parse_delay("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_delay("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_delay("2d"), Some(Duration::from_secs(172_800)));
        for bad in ["", "10", "m", "10x", "-5m", "1.5h"] {
            assert_eq!(parse_delay(bad), None, "{bad:?}");
        }
        assert_eq!(unhex("00ff10"), Some(vec![0, 255, 16]));
        for bad in ["", "0", "zz", "0é"] {
            assert_eq!(unhex(bad), None, "{bad:?}");
        }
        assert_eq!(thousands(200_000), "200,000");
        let big = vec![7u8; RAW_INLINE + 1];
        let named = handle(&big, 1_700_000_000_123);
        assert!(named.starts_with('~') && named.ends_with("@1700000000123"), "{named}");
        assert_eq!(
            Named::parse(&named),
            Some(Named::Digest {
                digest: digest(&big),
                due_ms: 1_700_000_000_123
            })
        );
        assert_eq!(Named::parse(&handle(b"ab", 1)), Some(Named::Bytes(b"ab".to_vec())));
        for bad in ["~", "~zz@1", "~12@", "~12@x", "~12"] {
            assert_eq!(Named::parse(bad), None, "{bad:?}");
        }
        assert_eq!(thousands(999), "999");
    }
}
