//! The attention order: which queues an operator should look at first, and
//! the other orders a list of queues is shown in. One rule, so that the
//! dashboard's overview and `delayq list` rank the same queues the same way.

use std::cmp::Reverse;
use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime};

use crate::error::Error;
use crate::queue::status::QueueStatus;

/// Transfer lag, or the oldest ready value's wait, above this needs
/// attention: a transfer or a consumer is behind, not merely busy.
pub const LATE: Duration = Duration::from_secs(5);

/// A pause older than this needs attention: one forgotten, not a short hold.
pub const LONG_PAUSE: Duration = Duration::from_secs(3600);

/// What a ranking knows of a queue beyond its [`QueueStatus`]: what only
/// watching it, or reading its workers and schedules, can tell.
///
/// ```
/// use delayq::attention::Signals;
///
/// let signals = Signals::new().with_untaken(true).with_unrun_schedules(false);
/// assert!(signals.untaken());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Signals {
    untaken: bool,
    unrun_schedules: bool,
}

impl Signals {
    /// Nothing known beyond the counts.
    pub fn new() -> Signals {
        Signals::default()
    }

    /// Whether ready values are left untaken (see [`untaken`]).
    pub fn with_untaken(mut self, untaken: bool) -> Signals {
        self.untaken = untaken;
        self
    }

    /// Whether the queue has schedules that no live runner fires.
    pub fn with_unrun_schedules(mut self, unrun: bool) -> Signals {
        self.unrun_schedules = unrun;
        self
    }

    /// Whether ready values are left untaken.
    pub fn untaken(&self) -> bool {
        self.untaken
    }

    /// Whether the queue has schedules that no live runner fires.
    pub fn unrun_schedules(&self) -> bool {
        self.unrun_schedules
    }
}

/// Whether a queue's ready values are left untaken, from two reads of its
/// counts some time apart: it runs (a paused queue's consumers wait on
/// purpose, and so do those of a queue at its concurrency limit), it had
/// ready values at both reads, no live worker serves it,
/// and no value left the ready list between the reads. `delivered` is how
/// many left: the ready count before, plus the values the transfer moved
/// in meanwhile, minus the ready count now. A plain consumer that takes
/// shows as values delivered; one that takes exactly as fast as a producer
/// offers straight to the ready list cannot be told from none.
///
/// ```
/// use delayq::attention::untaken;
/// use delayq::QueueStatus;
///
/// let mut now = QueueStatus::default();
/// now.ready = 3;
/// assert!(untaken(&now, 3, 0, 0), "three waited, none left, no worker");
/// assert!(!untaken(&now, 3, 1, 0), "one left: someone takes");
/// assert!(!untaken(&now, 3, 0, 1), "a live worker serves it");
/// now.in_flight = 2;
/// now.concurrency_limit = Some(2);
/// assert!(!untaken(&now, 3, 0, 0), "at its concurrency limit: they wait for room");
/// ```
pub fn untaken(now: &QueueStatus, ready_before: u64, delivered: u64, live_workers: usize) -> bool {
    let at_limit = now
        .concurrency_limit
        .is_some_and(|n| now.live_in_flight() >= u64::from(n));
    !now.paused && !at_limit && now.ready > 0 && ready_before > 0 && delivered == 0 && live_workers == 0
}

/// How much a queue needs attention. Values compare field by field, in
/// this order: dead letters; transfer lag beyond [`LATE`]; ready values
/// nobody takes; the oldest ready value's wait beyond [`LATE`] (queue
/// latency); how many ready values nobody takes; a pause beyond
/// [`LONG_PAUSE`]; quarantined elements; schedules no runner fires. A
/// paused queue's lag and latency are deliberate and do not count. The
/// greatest needs attention first; [`Attention::default`] needs none.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use delayq::attention::{Attention, Signals};
/// use delayq::QueueStatus;
///
/// let now = SystemTime::now();
/// let mut dead = QueueStatus::default();
/// dead.dead_letters = 1;
/// let mut late = QueueStatus::default();
/// late.pending = 10;
/// late.next_due = Some(now - Duration::from_secs(60));
/// let dead = Attention::of(Some(&dead), Signals::new(), now);
/// let late = Attention::of(Some(&late), Signals::new(), now);
/// assert!(dead > late, "a dead letter outranks a minute of lag");
/// assert!(late.needed());
/// assert_eq!(late.reasons(), ["lag 1m"]);
/// assert!(!Attention::of(None, Signals::new(), now).needed());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Attention {
    dead_letters: u64,
    late: Duration,
    untaken: bool,
    waiting: Duration,
    untaken_ready: u64,
    long_pause: Duration,
    quarantined: u64,
    unrun_schedules: bool,
}

impl Attention {
    /// The attention a queue needs at `now`; `None` (its counts could not
    /// be read) needs none.
    pub fn of(status: Option<&QueueStatus>, signals: Signals, now: SystemTime) -> Attention {
        let Some(s) = status else {
            return Attention::default();
        };
        let beyond = |d: Duration, limit: Duration| if d > limit { d } else { Duration::ZERO };
        let running = |d: Duration| if s.paused { Duration::ZERO } else { d };
        Attention {
            dead_letters: s.dead_letters,
            late: running(beyond(s.lag_at(now), LATE)),
            untaken: signals.untaken,
            waiting: running(beyond(s.oldest_ready_age_at(now).unwrap_or_default(), LATE)),
            untaken_ready: if signals.untaken { s.ready } else { 0 },
            long_pause: beyond(s.paused_for_at(now).unwrap_or_default(), LONG_PAUSE),
            quarantined: s.quarantined,
            unrun_schedules: signals.unrun_schedules,
        }
    }

    /// Whether the queue needs any attention.
    pub fn needed(&self) -> bool {
        *self != Attention::default()
    }

    /// Why it needs attention, most pressing first, in a few words each
    /// (`"3 dead"`, `"lag 12s"`, `"ready untaken"`, `"latency 8s"`,
    /// `"paused 2h"`, `"1 quarantined"`, `"schedules unrun"`); empty when
    /// it needs none.
    pub fn reasons(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.dead_letters > 0 {
            out.push(format!("{} dead", self.dead_letters));
        }
        if !self.late.is_zero() {
            out.push(format!("lag {}", short(self.late)));
        }
        if self.untaken {
            out.push("ready untaken".to_owned());
        }
        if !self.waiting.is_zero() {
            out.push(format!("latency {}", short(self.waiting)));
        }
        if !self.long_pause.is_zero() {
            out.push(format!("paused {}", short(self.long_pause)));
        }
        if self.quarantined > 0 {
            out.push(format!("{} quarantined", self.quarantined));
        }
        if self.unrun_schedules {
            out.push("schedules unrun".to_owned());
        }
        out
    }
}

/// A duration in its largest unit, rounded down: `12s`, `3m`, `2h`, `4d`.
fn short(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86_400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

/// The orders a list of queues is shown in. Every order but
/// [`Name`](QueueOrder::Name) puts the greatest first, and ties in name
/// order (byte order, as [`Client::queues`](crate::Client::queues) lists them).
///
/// ```
/// use std::time::SystemTime;
/// use delayq::attention::{QueueOrder, Signals};
/// use delayq::QueueStatus;
///
/// let now = SystemTime::now();
/// let mut queues = vec![("b", QueueStatus::default()), ("a", QueueStatus::default())];
/// queues[0].1.dead_letters = 2;
/// let order: QueueOrder = "attention".parse()?;
/// queues.sort_by_cached_key(|(name, status)| order.key(name, Some(status), Signals::new(), now));
/// assert_eq!(queues[0].0, "b", "the dead letters first");
/// queues.sort_by_cached_key(|(name, status)| QueueOrder::Name.key(name, Some(status), Signals::new(), now));
/// assert_eq!(queues[0].0, "a");
/// # Ok::<(), delayq::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum QueueOrder {
    /// What needs attention first ([`Attention`]).
    #[default]
    Attention,
    /// By name.
    Name,
    /// Most pending elements first.
    Pending,
    /// Most ready values first.
    Ready,
    /// Most dead letters first.
    Dead,
    /// Greatest transfer lag first.
    Lag,
}

impl QueueOrder {
    /// Every order, as [`as_str`](Self::as_str) names them.
    pub const ALL: [QueueOrder; 6] = [
        QueueOrder::Attention,
        QueueOrder::Name,
        QueueOrder::Pending,
        QueueOrder::Ready,
        QueueOrder::Dead,
        QueueOrder::Lag,
    ];

    /// Its name: `attention`, `name`, `pending`, `ready`, `dead`, `lag`.
    pub fn as_str(self) -> &'static str {
        match self {
            QueueOrder::Attention => "attention",
            QueueOrder::Name => "name",
            QueueOrder::Pending => "pending",
            QueueOrder::Ready => "ready",
            QueueOrder::Dead => "dead",
            QueueOrder::Lag => "lag",
        }
    }

    /// The key a queue sorts by in this order (ascending sorts put first
    /// what this order puts first); `status` is `None` where its counts
    /// could not be read (it sorts as an empty queue).
    pub fn key(self, name: &str, status: Option<&QueueStatus>, signals: Signals, now: SystemTime) -> OrderKey {
        let count = |f: fn(&QueueStatus) -> u64| Primary::Count(status.map_or(0, f));
        let primary = match self {
            QueueOrder::Attention => Primary::Attention(Attention::of(status, signals, now)),
            QueueOrder::Name => Primary::None,
            QueueOrder::Pending => count(|s| s.pending),
            QueueOrder::Ready => count(|s| s.ready),
            QueueOrder::Dead => count(|s| s.dead_letters),
            QueueOrder::Lag => Primary::Lag(status.map_or(Duration::ZERO, |s| s.lag_at(now))),
        };
        OrderKey {
            primary: Reverse(primary),
            name: name.to_owned(),
        }
    }
}

impl fmt::Display for QueueOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for QueueOrder {
    type Err = Error;

    fn from_str(s: &str) -> Result<QueueOrder, Error> {
        QueueOrder::ALL
            .into_iter()
            .find(|order| order.as_str() == s)
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "no queue order {s:?}: one of attention, name, pending, ready, dead, lag"
                ))
            })
    }
}

/// Where a queue sorts in a [`QueueOrder`]: compare keys of the same order
/// only (see [`QueueOrder::key`]).
///
/// ```
/// use std::time::SystemTime;
/// use delayq::attention::{QueueOrder, Signals};
///
/// let now = SystemTime::now();
/// let a = QueueOrder::Pending.key("a", None, Signals::new(), now);
/// let b = QueueOrder::Pending.key("b", None, Signals::new(), now);
/// assert!(a < b, "equal counts: by name");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct OrderKey {
    primary: Reverse<Primary>,
    name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Primary {
    None,
    Count(u64),
    Lag(Duration),
    Attention(Attention),
}

/// Whether a queue's name matches a filter as the overview filters: the
/// filter's text anywhere in the name, ignoring case; an empty filter
/// matches every name.
///
/// ```
/// use delayq::attention::name_matches;
///
/// assert!(name_matches("{shop}Orders", "orders"));
/// assert!(name_matches("заказы", "ЗАКАЗ"));
/// assert!(!name_matches("payments", "orders"));
/// ```
pub fn name_matches(name: &str, filter: &str) -> bool {
    filter.is_empty() || name.to_lowercase().contains(&filter.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn each_field_outranks_every_later_one() {
        let now = at(100_000);
        let dead = QueueStatus {
            dead_letters: 1,
            ..QueueStatus::default()
        };
        let late = QueueStatus {
            next_due: Some(at(100_000 - 6)),
            ..QueueStatus::default()
        };
        let waiting = QueueStatus {
            ready: 1,
            oldest_ready_due: Some(at(100_000 - 3600)),
            ..QueueStatus::default()
        };
        // A paused queue's lag and latency are deliberate.
        let paused = QueueStatus {
            paused: true,
            paused_since: Some(at(100_000 - 7200)),
            next_due: Some(at(0)),
            ..QueueStatus::default()
        };
        let quarantined = QueueStatus {
            quarantined: 9,
            ..QueueStatus::default()
        };
        let plain = Signals::new();
        let ranked = [
            Attention::of(Some(&dead), plain, now),
            Attention::of(Some(&late), plain, now),
            Attention::of(Some(&waiting), plain.with_untaken(true), now),
            Attention::of(Some(&waiting), plain, now),
            Attention::of(Some(&paused), plain, now),
            Attention::of(Some(&quarantined), plain, now),
            Attention::of(Some(&QueueStatus::default()), plain.with_unrun_schedules(true), now),
            Attention::of(Some(&QueueStatus::default()), plain, now),
        ];
        for pair in ranked.windows(2) {
            assert!(pair[0] > pair[1], "{:?} should outrank {:?}", pair[0], pair[1]);
        }
        assert_eq!(ranked[4].reasons(), ["paused 2h"]);
        assert_eq!(ranked[2].reasons(), ["ready untaken", "latency 1h"]);
        assert!(!ranked[7].needed());
        // Lag within LATE is no trouble.
        let on_time = QueueStatus {
            next_due: Some(at(100_000 - 5)),
            ..QueueStatus::default()
        };
        assert!(!Attention::of(Some(&on_time), plain, now).needed());
    }

    #[test]
    fn orders_parse_from_their_names_and_nothing_else() {
        for order in QueueOrder::ALL {
            assert_eq!(order.as_str().parse::<QueueOrder>().unwrap(), order);
        }
        assert!(matches!("Lag".parse::<QueueOrder>(), Err(Error::InvalidArgument(_))));
    }
}
