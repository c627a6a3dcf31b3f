//! Printing what the read commands found: aligned tables, times for people.
//!
//! Names, ids, values and error text come from Redis or from whoever wrote
//! the queue: every one goes through [`escape`] (tables do it themselves)
//! or, for `--format json`, [`json`], so that none can move the cursor,
//! retitle the window or reorder a line.

use std::borrow::Cow;
use std::time::{Duration, SystemTime};

use delayq::QueueStatus;

/// A queue's counts and lag as JSON fields, as `inspect` and `stats` print them.
pub(crate) fn status_json(
    name: &str,
    status: &QueueStatus,
    now: SystemTime,
) -> serde_json::Map<String, serde_json::Value> {
    use serde_json::json;
    [
        ("queue", json!(name)),
        ("pending", json!(status.pending)),
        ("ready", json!(status.ready)),
        // Of those: values with a priority or a TTL, which Java does not see.
        ("priority_pending", json!(status.priority_pending)),
        ("priority_ready", json!(status.priority_ready)),
        // And values offered with a group key (`offer --group`), which only
        // delayq's reliable consumers and workers take.
        ("grouped_pending", json!(status.grouped_pending)),
        ("grouped_ready", json!(status.grouped_ready)),
        ("in_flight", json!(status.in_flight)),
        // Of those, past their visibility timeout (a reaper returns them;
        // the concurrency limit does not count them).
        ("lapsed", json!(status.lapsed)),
        ("concurrency_limit", json!(status.concurrency_limit)),
        ("dead_letters", json!(status.dead_letters)),
        ("quarantined", json!(status.quarantined)),
        ("next_due_in_ms", json!(status.next_due.map(|d| millis_from(d, now)))),
        ("lag_ms", json!(status.lag_at(now).as_millis() as u64)),
        // null with ready values: unknown (no transfer recorded when the
        // oldest one fell due), never a guess.
        (
            "oldest_ready_age_ms",
            json!(status.oldest_ready_age_at(now).map(|d| d.as_millis() as u64)),
        ),
        ("paused", json!(status.paused)),
        (
            "paused_for_ms",
            json!(status.paused_for_at(now).map(|d| d.as_millis() as u64)),
        ),
        ("ids", json!(status.ids)),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_owned(), value))
    .collect()
}

/// The notes after a queue's in-flight count: against its concurrency
/// limit when one is set (the live deliveries: those past their visibility
/// timeout do not count), and the lapsed ones, which only a reaper returns.
/// Empty with neither.
pub(crate) fn in_flight_notes(s: &QueueStatus) -> String {
    let live = s.live_in_flight();
    let mut notes = Vec::new();
    if let Some(limit) = s.concurrency_limit.map(u64::from) {
        notes.push(match live.cmp(&limit) {
            std::cmp::Ordering::Less => format!("{}/{} live against the concurrency limit", count(live), count(limit)),
            std::cmp::Ordering::Equal => format!(
                "{}/{} live: concurrency limit reached, reliable takes and workers wait for room",
                count(live),
                count(limit)
            ),
            std::cmp::Ordering::Greater => format!(
                "{}/{} live: over the concurrency limit by {}, reliable takes and workers wait until {} settle",
                count(live),
                count(limit),
                count(live - limit),
                count(live - limit + 1)
            ),
        });
    }
    if s.lapsed > 0 {
        notes.push(format!(
            "{} past their visibility timeout, returned when a reliable consumer's reaper runs",
            count(s.lapsed)
        ));
    }
    if notes.is_empty() {
        String::new()
    } else {
        format!(" ({})", notes.join("; "))
    }
}

/// A queue's in-flight cell in a table: `3/8` (live against the limit)
/// with a limit, the count without; `+2 lapsed` when some are past their
/// visibility timeout.
pub(crate) fn in_flight_cell(s: &QueueStatus) -> String {
    let limit = s.concurrency_limit;
    let mut cell = match limit {
        Some(limit) => format!("{}/{}", count(s.live_in_flight()), count(u64::from(limit))),
        None => count(s.in_flight),
    };
    if s.lapsed > 0 && limit.is_some() {
        cell.push_str(&format!("+{}", count(s.lapsed)));
    }
    cell
}

/// How long the oldest ready value has waited since it fell due: "-" with
/// none ready, "unknown" where no transfer recorded its due time (offered
/// straight to the ready list, or moved while no worker tracked lateness).
pub(crate) fn oldest_ready(s: &QueueStatus, now: SystemTime) -> String {
    match s.oldest_ready_age_at(now) {
        Some(age) => compact(age),
        None if s.ready > 0 => "unknown".into(),
        None => "-".into(),
    }
}

/// Whether a terminal could take `c` for an instruction rather than text:
/// the C0 and C1 controls and DEL, the line and paragraph separators, and
/// the bidirectional marks and overrides that reorder what follows them.
fn unseen(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `c` as it is printed: itself, or an escape (`\n`, `\r`, `\t`, `\u{1b}`).
fn escape_char(c: char, out: &mut String) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if unseen(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        c => out.push(c),
    }
}

/// `text` for a terminal: every control character (C0, DEL, C1) and
/// bidirectional override as an escape (`\n`, `\u{1b}`), the rest as it is.
pub(crate) fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(unseen) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        escape_char(c, &mut out);
    }
    Cow::Owned(out)
}

/// `text` of several lines, each [escaped](escape): its line ends kept.
pub(crate) fn escape_lines(text: &str) -> String {
    text.split('\n').map(escape).collect::<Vec<_>>().join("\n")
}

/// `value` as one line of JSON for a terminal. The same JSON value, exact:
/// serde_json escapes C0 controls already; DEL, C1 controls and
/// bidirectional overrides, which it writes raw, become `\u` escapes (they
/// can only be inside strings).
pub(crate) fn json(value: &serde_json::Value) -> String {
    seen_json(value.to_string())
}

/// `value` as indented JSON of several lines, for a terminal: as [`json`]
/// does, every character a terminal could obey is a `\u` escape (a line
/// end inside a string is serde_json's `\n`, so each line is the JSON's own).
pub(crate) fn json_pretty(value: &serde_json::Value) -> String {
    let text = serde_json::to_string_pretty(value).expect("a JSON value serializes");
    text.split('\n')
        .map(|line| seen_json(line.to_owned()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// JSON text with DEL, C1 controls and bidirectional overrides as `\u`
/// escapes (serde_json escapes C0 controls itself).
fn seen_json(text: String) -> String {
    if !text.chars().any(unseen) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unseen(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Standard error for log lines: each event arrives in one write, and is
/// [escaped](escape) but for the line end that closes it.
pub(crate) struct LogWriter;

impl std::io::Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let (line, end) = match text.strip_suffix('\n') {
            Some(line) => (line, "\n"),
            None => (&*text, ""),
        };
        let mut stderr = std::io::stderr().lock();
        stderr.write_all(escape(line).as_bytes())?;
        stderr.write_all(end.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// How many terminal cells `text` takes: CJK ideographs and most emoji two,
/// combining marks none (`chars().count()` would misalign every column
/// after a name like `订单`).
pub(crate) fn width(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

/// Renders rows under headers, each column as wide as its widest cell;
/// every cell [escaped](escape).
pub(crate) fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    table_aligned(headers, &[], rows)
}

/// [`table`], with the columns headed by a name in `right` aligned to the
/// right, so that counts line up by their last digit.
pub(crate) fn table_aligned(headers: &[&str], right: &[&str], rows: &[Vec<String>]) -> String {
    let rows: Vec<Vec<Cow<'_, str>>> = rows
        .iter()
        .map(|row| row.iter().map(|cell| escape(cell)).collect())
        .collect();
    let mut widths: Vec<usize> = headers.iter().map(|h| width(h)).collect();
    for row in &rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(width(cell));
        }
    }
    let to_right: Vec<bool> = headers.iter().map(|h| right.contains(h)).collect();
    let line = |cells: Vec<&str>| {
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let pad = " ".repeat(widths[i] - width(cell));
            if i > 0 {
                out.push_str("  ");
            }
            if to_right[i] {
                out.push_str(&pad);
                out.push_str(cell);
            } else {
                out.push_str(cell);
                out.push_str(&pad);
            }
        }
        out.trim_end().to_owned()
    };
    let mut out = line(headers.to_vec());
    for row in &rows {
        out.push('\n');
        out.push_str(&line(row.iter().map(|cell| cell.as_ref()).collect()));
    }
    out
}

/// A count for people: thousands separated by commas (`200,000`).
pub(crate) fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// A schedule's spec for a table: a cron spec without a zone says it is
/// UTC (`0 3 * * * (UTC)`); JSON keeps the spec's own text, which parses back.
pub(crate) fn schedule_spec(spec: &delayq::schedule::ScheduleSpec) -> String {
    match spec.time_zone() {
        Some("UTC") => format!("{spec} (UTC)"),
        _ => spec.to_string(),
    }
}

/// A time as this machine's local time, to the millisecond.
pub(crate) fn local_time(at: SystemTime) -> String {
    chrono::DateTime::<chrono::Local>::from(at)
        .format("%Y-%m-%d %H:%M:%S%.3f %:z")
        .to_string()
}

/// RFC 3339 in UTC, for JSON.
pub(crate) fn utc_time(at: SystemTime) -> String {
    humantime::format_rfc3339_millis(at).to_string()
}

/// "in 3m12s" or "3m12s ago".
pub(crate) fn relative(at: SystemTime, now: SystemTime) -> String {
    match at.duration_since(now) {
        // Not "in 0ms": the first frame of an outage said so of its start.
        Ok(ahead) if ahead < Duration::from_millis(1) => "just now".into(),
        Ok(ahead) => format!("in {}", compact(ahead)),
        Err(behind) => format!("{} ago", compact(behind.duration())),
    }
}

/// Signed milliseconds from `now` to `at` (negative: in the past).
pub(crate) fn millis_from(at: SystemTime, now: SystemTime) -> i64 {
    match at.duration_since(now) {
        Ok(ahead) => ahead.as_millis() as i64,
        Err(behind) => -(behind.duration().as_millis() as i64),
    }
}

/// When a value offered with `delay` is due: "due now", "due in 3d".
pub(crate) fn due_after(delay: Duration) -> String {
    if delay.is_zero() {
        "due now".into()
    } else {
        format!("due in {}", compact(delay))
    }
}

/// A duration in its two largest units: 450ms, 12s, 3m12s, 1h30m, 2d4h
/// (never Debug's `259200s` or `0ns`).
pub(crate) fn compact(d: Duration) -> String {
    if !d.is_zero() && d < Duration::from_millis(1) {
        return "<1ms".into();
    }
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

/// At most `max` terminal cells of `text` [escaped](escape) (so on one
/// line), with an ellipsis when cut; an escape or a wide character is never
/// cut in two.
pub(crate) fn preview(text: &str, max: usize) -> String {
    let shown = escape(text);
    if width(&shown) <= max {
        return shown.into_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    let mut piece = String::new();
    for c in text.chars() {
        piece.clear();
        escape_char(c, &mut piece);
        used += width(&piece);
        if used > max.saturating_sub(1) {
            break;
        }
        out.push_str(&piece);
    }
    out.push('…');
    out
}

/// A value's headers in the compact form the tables print after the value,
/// `[k=v, k2=v2]` by key, or nothing for none. Not escaped: print it
/// through [`escape`] or [`preview`], as any text from the queue.
pub(crate) fn headers_text(headers: &delayq::Headers) -> Option<String> {
    if headers.is_empty() {
        return None;
    }
    let pairs: Vec<String> = headers.iter().map(|(k, v)| format!("{k}={v}")).collect();
    Some(format!("[{}]", pairs.join(", ")))
}

/// A value's headers as a JSON object of strings (`{}` for none).
pub(crate) fn headers_json(headers: &delayq::Headers) -> serde_json::Value {
    serde_json::json!(headers.as_map())
}

/// Bytes as lowercase hex.
/// A payload the codec could not show, as the tables print it: its bytes
/// as hex (at most `max` characters), led by its Java class where the codec
/// names one whose fields it could not read (a Kryo POJO without a schema:
/// `--kryo-schema` reads them), so the operator sees what it is and how to
/// read it, not only bytes.
pub(crate) fn undecoded(class: Option<&str>, payload: &[u8], max: usize) -> String {
    let bytes = preview(&hex(payload), max);
    match class {
        Some(class) => format!("<{} · fields need --kryo-schema> <{bytes}>", escape(class)),
        None => format!("<{bytes}>"),
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
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
        assert_eq!(compact(Duration::from_secs(259_200)), "3d");
        assert_eq!(compact(Duration::from_micros(300)), "<1ms");
        assert_eq!(compact(Duration::ZERO), "0ms");
        assert_eq!(due_after(Duration::ZERO), "due now");
        assert_eq!(due_after(Duration::from_secs(259_200)), "due in 3d");
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        assert_eq!(relative(now + Duration::from_secs(192), now), "in 3m12s");
        assert_eq!(relative(now - Duration::from_secs(5), now), "5s ago");
        assert_eq!(relative(now, now), "just now");
        assert_eq!(millis_from(now - Duration::from_secs(5), now), -5_000);
    }

    #[test]
    fn tables_align_and_previews_stay_on_one_line() {
        let rows = vec![vec!["a".into(), "long cell".into()], vec!["bbb".into(), "x".into()]];
        assert_eq!(table(&["K", "VALUE"], &rows), "K    VALUE\na    long cell\nbbb  x");
        assert_eq!(preview("one\ntwo", 20), "one\\ntwo");
        assert_eq!(preview("abcdefgh", 5), "abcd…");
        assert_eq!(preview("ab\u{1b}[2J", 6), "ab…", "an escape is never cut");
    }

    #[test]
    fn wide_characters_take_two_columns_and_counts_align_right() {
        // `订单` and `📦` are two cells each: the next column starts where
        // it does after four ASCII letters.
        let rows = vec![
            vec!["订单".into(), "1".into()],
            vec!["📦x".into(), "200000".into()],
            vec!["abcd".into(), "12".into()],
        ];
        assert_eq!(
            table_aligned(&["QUEUE", "N"], &["N"], &rows),
            "QUEUE       N\n订单        1\n📦x    200000\nabcd       12"
        );
        assert_eq!(preview("订单订单", 5), "订单…", "a wide character is never cut");
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_000), "1,000");
        assert_eq!(count(200_000), "200,000");
        assert_eq!(count(1_234_567), "1,234,567");
    }

    #[test]
    fn control_characters_print_as_escapes() {
        assert_eq!(escape("plain ✓"), "plain ✓");
        assert_eq!(
            escape("a\u{1b}]0;t\u{7}b\rc\u{9b}31m\u{7f}\u{202e}d"),
            "a\\u{1b}]0;t\\u{7}b\\rc\\u{9b}31m\\u{7f}\\u{202e}d"
        );
        let rows = vec![vec!["x\u{1b}[2Jy".into(), "z".into()]];
        assert_eq!(table(&["K", "V"], &rows), "K            V\nx\\u{1b}[2Jy  z");
        let value = serde_json::json!({"v": "\u{1b}\u{9b}\u{7f}\u{202e}é\\u{9b}"});
        let line = json(&value);
        assert_eq!(line, r#"{"v":"\u001b\u009b\u007f\u202eé\\u{9b}"}"#);
        let back: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(back, value, "the same JSON value");
    }

    #[test]
    fn pretty_json_keeps_its_own_lines_and_escapes_the_values() {
        let value = serde_json::json!({"v": "a\n\u{1b}[31m\u{9b}\u{202e}", "n": [1]});
        let text = json_pretty(&value);
        assert!(text.lines().count() > 3, "{text}");
        assert!(!text.chars().any(unseen_but_line_end), "{text:?}");
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value, "the same JSON value");
    }

    fn unseen_but_line_end(c: char) -> bool {
        c != '\n' && unseen(c)
    }
}
