//! The history kept in Redis at falling resolution, per queue and for the
//! whole server: a record per minute for a day, one per hour for a month,
//! written by the sampler as each minute ends and read back by any
//! dashboard (a restarted one, another one) for the charts' ranges.
//!
//! A record holds the queue's totals as they stood at the minute's last
//! sample (the server-side counts of [`delayq::QueueTotals`], so every
//! process is counted; the cancelled jobs' last, absent from the records
//! of a dashboard that predates it), the values that left the ready list in the minute
//! (estimated from the samples: any consumer, Java's too), the transfer
//! lag's median and 99th percentile, the oldest ready value's age, the
//! memory the queue's keys use and its levels (ready, pending, dead
//! letters). The flows a chart shows per period are the differences of
//! consecutive totals, so a record written twice counts nothing twice.
//!
//! Keys, in the queue's cluster slot: `delayq_dashboard_minutes:{queue}`
//! (HASH: hour number → that hour's minute records, the last 25 hours kept,
//! expires a day after the last write) and `delayq_dashboard_hours:{queue}`
//! (HASH: day number → that day's hour records, the last 32 days, expires
//! after a month); the whole server's are `delayq_dashboard_server_minutes:{s}`
//! and `delayq_dashboard_server_hours:{s}`. One script (`history.lua`) puts a
//! minute and rolls its hour up from the minutes kept, atomically: two
//! dashboards writing the same minute leave one record (the last written),
//! and the hour is computed again from its minutes. A record is about 80
//! bytes of JSON: a busy queue's history measured 134 KB for a day of
//! minutes (1,560 records) and 44 KB for a month of hours (776).

use std::sync::LazyLock;
use std::time::Duration;

use serde_json::{json, Value};

use delayq::fred::interfaces::HashesInterface;
use delayq::fred::types::scripts::Script;
use delayq::{Client, QueueKeys};

/// Hours of minute records kept (a day, and the hour under way).
pub(crate) const MINUTE_HOURS: i64 = 25;
/// Days of hour records kept (a month, and the day under way).
pub(crate) const HOUR_DAYS: i64 = 32;
const MINUTES_EXPIRE: Duration = Duration::from_secs(25 * 3_600);
const HOURS_EXPIRE: Duration = Duration::from_secs(32 * 86_400);

static PUT: LazyLock<Script> = LazyLock::new(|| Script::from_lua(include_str!("history.lua")));

/// Whose history: one queue's, or the whole server's.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Series<'a> {
    Queue(&'a str),
    Server,
}

impl Series<'_> {
    /// The minutes and hours keys, in one cluster slot.
    pub(crate) fn keys(self) -> delayq::Result<[String; 2]> {
        Ok(match self {
            Series::Queue(name) => {
                let keys = QueueKeys::new(name)?;
                [keys.companion("dashboard_minutes"), keys.companion("dashboard_hours")]
            }
            // A prefix no queue's companion keys have: no queue name collides.
            Series::Server => [
                "delayq_dashboard_server_minutes:{s}".to_owned(),
                "delayq_dashboard_server_hours:{s}".to_owned(),
            ],
        })
    }
}

/// One period of a series as stored: a JSON array, in this order (the
/// script reads the items by position).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Record {
    /// Minutes (or, for an hour record, hours) since the Unix epoch.
    pub at: i64,
    /// offered, transferred, acked, failed, dead-lettered, timed out: the
    /// totals as of the period's last sample.
    pub totals: [u64; 6],
    /// Values that left the ready list in the period (estimated).
    pub delivered: u64,
    pub lag_p50_ms: Option<u64>,
    pub lag_p99_ms: Option<u64>,
    pub oldest_ready_ms: Option<u64>,
    pub memory_bytes: Option<u64>,
    pub ready: u64,
    pub pending: u64,
    pub dead_letters: u64,
    /// Jobs cancelled, the total as of the period's last sample; `None` in
    /// a record written before the total was kept.
    pub cancelled: Option<u64>,
}

/// The totals' names, in [`Record::totals`]' order.
pub(crate) const TOTALS: [&str; 6] = [
    "offered",
    "transferred",
    "acked",
    "failed",
    "dead_lettered",
    "timed_out",
];

impl Record {
    pub(crate) fn to_json(self) -> String {
        let mut items = vec![json!(self.at)];
        items.extend(self.totals.iter().map(|t| json!(t)));
        items.extend([
            json!(self.delivered),
            json!(self.lag_p50_ms),
            json!(self.lag_p99_ms),
            json!(self.oldest_ready_ms),
            json!(self.memory_bytes),
            json!(self.ready),
            json!(self.pending),
            json!(self.dead_letters),
            json!(self.cancelled),
        ]);
        Value::Array(items).to_string()
    }

    /// A stored record; `None` for anything else (not ours, or a later
    /// version's shorter one): skipped, the rest still shows.
    pub(crate) fn parse(value: &Value) -> Option<Record> {
        let items = value.as_array()?;
        if items.len() < 15 {
            return None;
        }
        // Lua's cjson may write a whole number as a float (`1e+14` style
        // only past 10^14, `3.0` never): read both.
        let n = |i: usize| items[i].as_u64().or_else(|| items[i].as_f64().map(|f| f as u64));
        let mut totals = [0; 6];
        for (k, total) in totals.iter_mut().enumerate() {
            *total = n(1 + k)?;
        }
        Some(Record {
            at: items[0].as_i64().or_else(|| items[0].as_f64().map(|f| f as i64))?,
            totals,
            delivered: n(7).unwrap_or(0),
            lag_p50_ms: n(8),
            lag_p99_ms: n(9),
            oldest_ready_ms: n(10),
            memory_bytes: n(11),
            ready: n(12).unwrap_or(0),
            pending: n(13).unwrap_or(0),
            dead_letters: n(14).unwrap_or(0),
            cancelled: items.get(15).and_then(|_| n(15)),
        })
    }
}

/// Keeps a finished minute of `series` and rolls its hour up.
pub(crate) async fn put(client: &Client, series: Series<'_>, minute: &Record) -> delayq::Result<()> {
    let keys = series.keys()?;
    let args = vec![
        minute.to_json(),
        MINUTE_HOURS.to_string(),
        HOUR_DAYS.to_string(),
        MINUTES_EXPIRE.as_millis().to_string(),
        HOURS_EXPIRE.as_millis().to_string(),
    ];
    // Safe to resend: a minute written again replaces itself.
    let _: i64 = PUT
        .evalsha_with_reload(client.redis().next(), keys.to_vec(), args)
        .await?;
    Ok(())
}

/// A chart's time range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Range {
    Hour,
    Day,
    Week,
    Month,
}

impl Range {
    pub(crate) fn parse(text: &str) -> Option<Range> {
        Some(match text {
            "1h" => Range::Hour,
            "24h" => Range::Day,
            "7d" => Range::Week,
            "30d" => Range::Month,
            _ => return None,
        })
    }

    /// Minutes per stored record (1, or 60 for hour records), records in
    /// the range, and records per point shown (at most 120 points).
    fn shape(self) -> (i64, i64, i64) {
        match self {
            Range::Hour => (1, 60, 1),
            Range::Day => (1, 1_440, 12),
            Range::Week => (60, 168, 2),
            Range::Month => (60, 720, 6),
        }
    }

    /// Milliseconds per point.
    pub(crate) fn step_ms(self) -> i64 {
        let (unit, _, group) = self.shape();
        unit * group * 60_000
    }
}

/// One point of a chart: the flows in its period (`None` where the totals
/// before it are unknown), the peaks and the levels at its end.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Point {
    pub at_ms: i64,
    pub flows: [Option<u64>; 6],
    pub delivered: u64,
    pub lag_p50_ms: Option<u64>,
    pub lag_p99_ms: Option<u64>,
    pub oldest_ready_ms: Option<u64>,
    pub memory_bytes: Option<u64>,
    pub ready: u64,
    pub pending: u64,
    pub dead_letters: u64,
    /// Jobs cancelled in the period (`None` where a record on either side
    /// predates the total).
    pub cancelled: Option<u64>,
}

impl Point {
    pub(crate) fn json(&self) -> Value {
        let mut point = json!({
            "t_ms": self.at_ms,
            "delivered": self.delivered,
            "lag_p50_ms": self.lag_p50_ms,
            "lag_p99_ms": self.lag_p99_ms,
            "oldest_ready_ms": self.oldest_ready_ms,
            "memory_bytes": self.memory_bytes,
            "ready": self.ready,
            "pending": self.pending,
            "dead_letters": self.dead_letters,
            "cancelled": self.cancelled,
        });
        for (name, flow) in TOTALS.iter().zip(self.flows) {
            point[*name] = json!(flow);
        }
        point
    }
}

/// The records of `series` for `range` ending before the minute `now`
/// (minutes since the epoch), as chart points: the flows are differences
/// of consecutive totals (a total that fell, its key gone and counted
/// again, counts from zero: no negative flow), grouped to at most 120
/// points (flows summed, peaks at their highest, levels at the last).
pub(crate) async fn read(client: &Client, series: Series<'_>, range: Range, now: i64) -> delayq::Result<Vec<Point>> {
    let [minutes_key, hours_key] = series.keys()?;
    let (unit, count, group) = range.shape();
    let end = now.div_euclid(unit); // the period under way: not finished
    let start = end - count;
    let redis = client.redis().next();
    // The fields that hold [start - 1, end): the record before the range
    // gives its first flows.
    let (key, per_field) = if unit == 1 { (minutes_key, 60) } else { (hours_key, 24) };
    let fields: Vec<i64> = ((start - 1).div_euclid(per_field)..=end.div_euclid(per_field)).collect();
    let raw: Vec<Option<String>> = redis.hmget(&key, fields).await?;
    let mut records: Vec<Record> = raw
        .iter()
        .flatten()
        .filter_map(|text| serde_json::from_str::<Value>(text).ok())
        .filter_map(|v| v.as_array().cloned())
        .flatten()
        .filter_map(|v| Record::parse(&v))
        .filter(|r| r.at >= start - 1 && r.at < end)
        .collect();
    records.sort_by_key(|r| r.at);
    records.dedup_by_key(|r| r.at);
    Ok(points(&records, start, unit, group))
}

/// Chart points of `records` (sorted, one per period) from period `start`.
pub(crate) fn points(records: &[Record], start: i64, unit: i64, group: i64) -> Vec<Point> {
    let mut out: Vec<Point> = Vec::new();
    let mut p50 = (0u64, 0u64);
    for (i, record) in records.iter().enumerate() {
        if record.at < start {
            continue;
        }
        let previous = i.checked_sub(1).map(|p| records[p]);
        let mut flows = [None; 6];
        let mut cancelled = None;
        if let Some(previous) = previous {
            for (k, flow) in flows.iter_mut().enumerate() {
                *flow = Some(record.totals[k].saturating_sub(previous.totals[k]));
            }
            if let (Some(now), Some(before)) = (record.cancelled, previous.cancelled) {
                cancelled = Some(now.saturating_sub(before));
            }
        }
        let bucket = (record.at - start).div_euclid(group) * group + start;
        let at_ms = bucket * unit * 60_000;
        if out.last().is_none_or(|p| p.at_ms != at_ms) {
            p50 = (0, 0);
            out.push(Point {
                at_ms,
                ..Point::default()
            });
        }
        let point = out.last_mut().expect("pushed above");
        for (sum, flow) in point.flows.iter_mut().zip(flows) {
            if let Some(flow) = flow {
                *sum = Some(sum.unwrap_or(0) + flow);
            }
        }
        if let Some(flow) = cancelled {
            point.cancelled = Some(point.cancelled.unwrap_or(0) + flow);
        }
        point.delivered += record.delivered;
        if let Some(v) = record.lag_p50_ms {
            p50 = (p50.0 + v, p50.1 + 1);
            point.lag_p50_ms = Some(p50.0 / p50.1);
        }
        let peak = |a: Option<u64>, b: Option<u64>| a.max(b);
        point.lag_p99_ms = peak(point.lag_p99_ms, record.lag_p99_ms);
        point.oldest_ready_ms = peak(point.oldest_ready_ms, record.oldest_ready_ms);
        point.memory_bytes = peak(point.memory_bytes, record.memory_bytes);
        point.ready = record.ready;
        point.pending = record.pending;
        point.dead_letters = record.dead_letters;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(at: i64, offered: u64) -> Record {
        Record {
            at,
            totals: [offered, 0, 0, 0, 0, 0],
            ..Record::default()
        }
    }

    #[test]
    fn a_record_reads_back_as_written() {
        let written = Record {
            at: 29_000_000,
            totals: [1, 2, 3, 4, 5, 6],
            delivered: 7,
            lag_p50_ms: Some(8),
            lag_p99_ms: None,
            oldest_ready_ms: Some(10),
            memory_bytes: Some(123_456_789),
            ready: 12,
            pending: 13,
            dead_letters: 14,
            cancelled: Some(15),
        };
        let value: Value = serde_json::from_str(&written.to_json()).unwrap();
        assert_eq!(Record::parse(&value), Some(written));
        assert_eq!(Record::parse(&json!({"minute": 1})), None);
        // An older dashboard's record (15 items): no cancelled total.
        let mut older = value.as_array().unwrap().clone();
        older.truncate(15);
        assert_eq!(
            Record::parse(&Value::Array(older)),
            Some(Record {
                cancelled: None,
                ..written
            })
        );
    }

    #[test]
    fn cancelled_flows_start_where_both_records_have_the_total() {
        let with = |at: i64, cancelled: Option<u64>| Record {
            cancelled,
            ..record(at, 0)
        };
        let records = [with(9, None), with(10, Some(4)), with(11, Some(6)), with(12, Some(9))];
        let cancelled: Vec<Option<u64>> = points(&records, 10, 1, 1).iter().map(|p| p.cancelled).collect();
        assert_eq!(
            cancelled,
            [None, Some(2), Some(3)],
            "no jump from an older record's missing total"
        );
        let grouped: Vec<Option<u64>> = points(&records, 10, 1, 3).iter().map(|p| p.cancelled).collect();
        assert_eq!(grouped, [Some(5)]);
    }

    #[test]
    fn flows_are_differences_of_totals_grouped_and_never_negative() {
        // The record before the range gives the first flow; a total that
        // fell (its key expired and counted again) counts from zero.
        let records = [
            record(9, 100),
            record(10, 103),
            record(11, 110),
            record(12, 2),
            record(13, 5),
        ];
        let points = points(&records, 10, 1, 2);
        let offered: Vec<(i64, Option<u64>)> = points.iter().map(|p| (p.at_ms / 60_000, p.flows[0])).collect();
        assert_eq!(offered, [(10, Some(3 + 7)), (12, Some(3))]); // 110 → 2: a total that fell counts 0, then 2 → 5
                                                                 // Without the record before, the first period's flows are unknown.
        let points = super::points(&records[1..], 10, 1, 1);
        assert_eq!(points[0].flows[0], None);
        assert_eq!(points[1].flows[0], Some(7));
    }

    use delayq::fred::interfaces::ClientLike;

    fn minute(at: i64, offered: u64, delivered: u64, lag_p99_ms: u64) -> Record {
        Record {
            at,
            totals: [offered, offered, 0, 0, 0, 0],
            delivered,
            lag_p99_ms: Some(lag_p99_ms),
            ready: offered,
            cancelled: Some(offered / 2),
            ..Record::default()
        }
    }

    async fn stored(client: &Client, key: &str, field: i64) -> Vec<Record> {
        let raw: Option<String> = client.redis().next().hget(key, field.to_string()).await.unwrap();
        let value: Value = serde_json::from_str(&raw.expect("the field is kept")).unwrap();
        value
            .as_array()
            .unwrap()
            .iter()
            .map(|v| Record::parse(v).unwrap())
            .collect()
    }

    /// Two dashboards write the same minute: one record stays (the last
    /// written), and the hour is rolled up again from the minutes kept:
    /// totals and levels of its last minute, flows summed, peaks highest.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_minute_written_twice_is_kept_once_and_its_hour_rolls_up() {
        let server = delayq_test_support::RedisServer::start().await;
        let (first, second) = (server.client().await, server.client().await);
        let series = Series::Queue("rolled");
        let [minutes_key, hours_key] = series.keys().unwrap();
        // Hour 9 (minutes 540..600), then hour 10 (600..660).
        put(&first, series, &minute(540, 5, 1, 1)).await.unwrap();
        put(&first, series, &minute(600, 10, 1, 5)).await.unwrap();
        put(&first, series, &minute(601, 15, 2, 50)).await.unwrap();
        put(&second, series, &minute(601, 16, 2, 50)).await.unwrap();
        put(&second, series, &minute(602, 30, 3, 7)).await.unwrap();

        let minutes = stored(&first, &minutes_key, 10).await;
        assert_eq!(
            minutes.iter().map(|m| (m.at, m.totals[0])).collect::<Vec<_>>(),
            [(600, 10), (601, 16), (602, 30)]
        );
        let hours = stored(&first, &hours_key, 0).await;
        assert_eq!(hours.len(), 2, "{hours:?}");
        let hour = hours[1];
        assert_eq!(
            (hour.at, hour.totals[0], hour.delivered, hour.lag_p99_ms, hour.ready),
            (10, 30, 6, Some(50), 30)
        );
        assert_eq!(
            hour.cancelled,
            Some(15),
            "the hour keeps its last minute's cancelled total"
        );

        // Read back by another client (a restarted dashboard): the flows are
        // differences of totals, the first one's unknown (none before it).
        let points = read(&second, series, Range::Hour, 660).await.unwrap();
        let offered: Vec<Option<u64>> = points.iter().map(|p| p.flows[0]).collect();
        assert_eq!(offered, [None, Some(6), Some(14)]);
        assert_eq!(points[1].at_ms, 601 * 60_000);
        // The hours: hour 10 flows from hour 9's totals.
        let points = read(&second, series, Range::Month, 11 * 60).await.unwrap();
        let last = points.last().unwrap();
        assert_eq!(
            (last.flows[0], last.delivered, last.lag_p99_ms),
            (Some(25), 7, Some(50))
        );
    }

    /// Whatever writes for however long, a series keeps at most a day and
    /// an hour of minutes and a month and a day of hours, and both keys
    /// expire when no dashboard writes.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_series_stays_bounded_and_expires() {
        let server = delayq_test_support::RedisServer::start().await;
        let client = server.client().await;
        let series = Series::Server;
        let [minutes_key, hours_key] = series.keys().unwrap();
        let redis = client.redis().next();
        let usage = |key: String| async move {
            let bytes: Option<u64> = redis
                .custom(
                    delayq::fred::types::CustomCommand::new_static(
                        "MEMORY",
                        delayq::fred::types::ClusterHash::FirstKey,
                        false,
                    ),
                    vec!["USAGE".to_owned(), key],
                )
                .await
                .unwrap();
            bytes.unwrap_or(0)
        };
        // A minute in each of 40 days and 1,600 minutes on end (a busy
        // queue's numbers), then one minute in each of the next 800 hours.
        let start = 29_000_000_i64;
        for day in 0..40 {
            put(&client, series, &minute(start + day * 1_440, day as u64, 0, 0))
                .await
                .unwrap();
        }
        let busy = start + 40 * 1_440;
        for m in 0..1_600 {
            let mut record = minute(busy + m, 123_456_789 + 1_000 * m as u64, 1_000, 2_345);
            (record.oldest_ready_ms, record.memory_bytes) = (Some(12_345), Some(987_654_321));
            put(&client, series, &record).await.unwrap();
        }
        let kept: usize = {
            let all: std::collections::HashMap<String, String> = redis.hgetall(&minutes_key).await.unwrap();
            all.values()
                .map(|v| serde_json::from_str::<Vec<Value>>(v).unwrap().len())
                .sum()
        };
        assert!(
            kept as i64 <= (MINUTE_HOURS + 1) * 60 && kept >= 24 * 60,
            "{kept} minutes kept"
        );
        println!(
            "a day of minutes: {kept} records, {} bytes",
            usage(minutes_key.clone()).await
        );
        let late = busy + 1_600;
        for hour in 0..800 {
            put(&client, series, &minute(late + hour * 60, 100 + hour as u64, 0, 0))
                .await
                .unwrap();
        }
        let minute_fields: i64 = redis.hlen(&minutes_key).await.unwrap();
        let hour_fields: i64 = redis.hlen(&hours_key).await.unwrap();
        assert!(minute_fields <= MINUTE_HOURS + 1, "{minute_fields} hours of minutes");
        assert!(hour_fields <= HOUR_DAYS + 1, "{hour_fields} days of hours");
        assert_eq!(minute_fields, MINUTE_HOURS + 1, "the last day and an hour are all kept");
        for key in [&minutes_key, &hours_key] {
            let ttl: i64 = delayq::fred::interfaces::KeysInterface::pttl(redis, key).await.unwrap();
            assert!(ttl > 0, "{key} expires: {ttl}");
        }
        let hours: std::collections::HashMap<String, String> = redis.hgetall(&hours_key).await.unwrap();
        let kept: usize = hours
            .values()
            .map(|v| serde_json::from_str::<Vec<Value>>(v).unwrap().len())
            .sum();
        assert!(
            kept as i64 <= (HOUR_DAYS + 1) * 24 && kept >= 30 * 24,
            "{kept} hours kept"
        );
        println!(
            "a month of hours: {kept} records, {} bytes",
            usage(hours_key.clone()).await
        );
    }
}
