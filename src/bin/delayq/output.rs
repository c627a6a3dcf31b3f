//! Printing what the read commands found: aligned tables, times for people.

use std::time::{Duration, SystemTime};

use delayq::QueueStatus;

/// A queue's counts and lag as JSON fields, as `inspect` and `stats` print them.
pub fn status_json(name: &str, status: &QueueStatus, now: SystemTime) -> serde_json::Map<String, serde_json::Value> {
    use serde_json::json;
    [
        ("queue", json!(name)),
        ("pending", json!(status.pending)),
        ("ready", json!(status.ready)),
        ("in_flight", json!(status.in_flight)),
        ("dead_letters", json!(status.dead_letters)),
        ("quarantined", json!(status.quarantined)),
        ("next_due_in_ms", json!(status.next_due.map(|d| millis_from(d, now)))),
        ("lag_ms", json!(status.lag_at(now).as_millis() as u64)),
        ("paused", json!(status.paused)),
        ("ids", json!(status.ids)),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_owned(), value))
    .collect()
}

/// Renders rows under headers, each column as wide as its widest cell.
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                out.push_str(cell);
            } else {
                out.push_str(cell);
                out.push_str(&" ".repeat(widths[i] - cell.chars().count() + 2));
            }
        }
        out.trim_end().to_owned()
    };
    let mut out = line(headers.to_vec());
    for row in rows {
        out.push('\n');
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}

/// A time as this machine's local time, to the millisecond.
pub fn local_time(at: SystemTime) -> String {
    chrono::DateTime::<chrono::Local>::from(at)
        .format("%Y-%m-%d %H:%M:%S%.3f %:z")
        .to_string()
}

/// RFC 3339 in UTC, for JSON.
pub fn utc_time(at: SystemTime) -> String {
    humantime::format_rfc3339_millis(at).to_string()
}

/// "in 3m12s" or "3m12s ago".
pub fn relative(at: SystemTime, now: SystemTime) -> String {
    match at.duration_since(now) {
        Ok(ahead) => format!("in {}", compact(ahead)),
        Err(behind) => format!("{} ago", compact(behind.duration())),
    }
}

/// Signed milliseconds from `now` to `at` (negative: in the past).
pub fn millis_from(at: SystemTime, now: SystemTime) -> i64 {
    match at.duration_since(now) {
        Ok(ahead) => ahead.as_millis() as i64,
        Err(behind) => -(behind.duration().as_millis() as i64),
    }
}

/// A duration in its two largest units: 450ms, 12s, 3m12s, 1h30m, 2d4h.
pub fn compact(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        return format!("{}ms", d.as_millis());
    }
    let secs = d.as_secs();
    let (days, hours, minutes, seconds) = (secs / 86_400, secs / 3_600 % 24, secs / 60 % 60, secs % 60);
    let units = [(days, "d"), (hours, "h"), (minutes, "m"), (seconds, "s")];
    let first = units.iter().position(|(n, _)| *n > 0).unwrap_or(3);
    units[first..]
        .iter()
        .take(2)
        .filter(|(n, _)| *n > 0)
        .map(|(n, unit)| format!("{n}{unit}"))
        .collect()
}

/// At most `max` characters of `text` on one line, with an ellipsis when cut.
pub fn preview(text: &str, max: usize) -> String {
    let one_line: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    if one_line.chars().count() <= max {
        return one_line;
    }
    let cut: String = one_line.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

/// Bytes as lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_people_write_them() {
        assert_eq!(compact(Duration::from_millis(450)), "450ms");
        assert_eq!(compact(Duration::from_secs(12)), "12s");
        assert_eq!(compact(Duration::from_secs(192)), "3m12s");
        assert_eq!(compact(Duration::from_secs(5_400)), "1h30m");
        assert_eq!(compact(Duration::from_secs(3_600)), "1h");
        assert_eq!(compact(Duration::from_secs(2 * 86_400 + 4 * 3_600 + 59)), "2d4h");
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        assert_eq!(relative(now + Duration::from_secs(192), now), "in 3m12s");
        assert_eq!(relative(now - Duration::from_secs(5), now), "5s ago");
        assert_eq!(millis_from(now - Duration::from_secs(5), now), -5_000);
    }

    #[test]
    fn tables_align_and_previews_stay_on_one_line() {
        let rows = vec![vec!["a".into(), "long cell".into()], vec!["bbb".into(), "x".into()]];
        assert_eq!(table(&["K", "VALUE"], &rows), "K    VALUE\na    long cell\nbbb  x");
        assert_eq!(preview("one\ntwo", 20), "one two");
        assert_eq!(preview("abcdefgh", 5), "abcd…");
    }
}
