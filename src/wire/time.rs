//! Due times: the ZSET score is milliseconds since the Unix epoch.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::Error;

/// The largest due time a Redis score (a double) holds exactly: 2^53 - 1 ms,
/// about 285,000 years after 1970.
pub(crate) const MAX_DUE_MS: i64 = (1 << 53) - 1;

/// Milliseconds since the Unix epoch of `t` (negative before 1970).
pub(crate) fn to_ms(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
    }
}

/// The `SystemTime` of a due time in ms; saturates at the platform's range
/// instead of panicking (`SystemTime` is narrower than `i64` ms on some).
pub(crate) fn from_ms(ms: i64) -> SystemTime {
    let offset = Duration::from_millis(ms.unsigned_abs());
    let t = if ms >= 0 {
        UNIX_EPOCH.checked_add(offset)
    } else {
        UNIX_EPOCH.checked_sub(offset)
    };
    t.unwrap_or(if ms >= 0 { far_future() } else { UNIX_EPOCH })
}

/// The latest `SystemTime` [`from_ms`] saturates to: [`MAX_DUE_MS`] when the
/// platform holds it, else the epoch plus 30 years.
fn far_future() -> SystemTime {
    let exact = UNIX_EPOCH.checked_add(Duration::from_millis(MAX_DUE_MS as u64));
    exact.unwrap_or(UNIX_EPOCH + Duration::from_secs(30 * 365 * 86_400))
}

/// This host's clock, in ms since the epoch.
pub(crate) fn now_ms() -> i64 {
    to_ms(SystemTime::now())
}

/// This host's clock, in µs since the epoch.
pub(crate) fn now_us() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_micros()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_micros()).unwrap_or(i64::MAX),
    }
}

/// Largest duration sent to a script, in ms: about 142,000 years, so that
/// `now + duration` stays an exact integer in Lua's doubles.
const MAX_SCRIPT_MS: u128 = 1 << 52;

/// A duration in ms for a script, saturating instead of wrapping.
pub(crate) fn saturating_ms(d: Duration) -> i64 {
    d.as_millis().min(MAX_SCRIPT_MS) as i64
}

/// The due time `delay` after `now_ms`, or [`Error::InvalidDelay`] if it
/// cannot be stored exactly.
pub(crate) fn due_after(now_ms: i64, delay: Duration) -> Result<i64, Error> {
    let delay_ms = i64::try_from(delay.as_millis()).ok();
    match delay_ms.and_then(|d| now_ms.checked_add(d)) {
        Some(due) if due <= MAX_DUE_MS => Ok(due),
        _ => Err(Error::InvalidDelay(format!(
            "a delay of {delay:?} puts the due time past the largest exact Redis score ({MAX_DUE_MS} ms since the epoch)"
        ))),
    }
}

/// The due time of an element offered at `at`, checked against `now_ms`: a
/// time in the past is a negative delay, which Redisson also rejects.
pub(crate) fn due_at(now_ms: i64, at: SystemTime) -> Result<i64, Error> {
    let due = to_ms(at);
    if due < now_ms {
        return Err(Error::InvalidDelay(format!(
            "the due time is {} ms in the past (a negative delay); offer with Duration::ZERO to make it due now",
            now_ms.saturating_sub(due)
        )));
    }
    if due > MAX_DUE_MS {
        return Err(Error::InvalidDelay(format!(
            "the due time is past the largest exact Redis score ({MAX_DUE_MS} ms since the epoch)"
        )));
    }
    Ok(due)
}

/// Parses a score as Redis returns it ("1795293729652", or "1.7e+12" forms).
pub(crate) fn parse_score(text: &str) -> Option<i64> {
    text.parse::<i64>()
        .ok()
        .or_else(|| text.parse::<f64>().ok().filter(|f| f.is_finite()).map(|f| f as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_after_adds_and_checks_overflow() {
        assert_eq!(due_after(1_000, Duration::from_millis(1_500)).unwrap(), 2_500);
        assert!(matches!(due_after(1_000, Duration::MAX), Err(Error::InvalidDelay(_))));
        assert!(matches!(
            due_after(MAX_DUE_MS, Duration::from_millis(1)),
            Err(Error::InvalidDelay(_))
        ));
        assert_eq!(due_after(MAX_DUE_MS - 1, Duration::from_millis(1)).unwrap(), MAX_DUE_MS);
    }

    #[test]
    fn due_at_rejects_the_past() {
        let now = now_ms();
        assert!(matches!(due_at(now, from_ms(now - 1)), Err(Error::InvalidDelay(_))));
        assert_eq!(due_at(now, from_ms(now + 10)).unwrap(), now + 10);
        assert_eq!(due_at(now, from_ms(now)).unwrap(), now);
    }

    #[test]
    fn ms_round_trip_around_the_epoch() {
        for ms in [-5_000, -1, 0, 1, 1_795_293_729_652] {
            assert_eq!(to_ms(from_ms(ms)), ms);
        }
    }

    #[test]
    fn extremes_saturate_instead_of_panicking() {
        // A due time far in the past: the "ms in the past" message cannot overflow.
        let err = due_at(now_ms(), from_ms(-MAX_DUE_MS)).unwrap_err();
        assert!(err.to_string().contains("in the past"), "{err}");
        assert!(matches!(
            due_at(i64::MAX, UNIX_EPOCH - Duration::from_secs(1)),
            Err(Error::InvalidDelay(_))
        ));
        // Any i64 gives a SystemTime, at worst a saturated one.
        for ms in [i64::MIN, i64::MIN + 1, -1, 0, MAX_DUE_MS, i64::MAX] {
            let _ = to_ms(from_ms(ms));
        }
        assert_eq!(to_ms(from_ms(MAX_DUE_MS)), MAX_DUE_MS);
        assert!(matches!(
            due_after(i64::MAX, Duration::MAX),
            Err(Error::InvalidDelay(_))
        ));
        assert!(matches!(due_after(-1, Duration::MAX), Err(Error::InvalidDelay(_))));
    }

    #[test]
    fn scores_parse_in_both_notations() {
        assert_eq!(parse_score("1795293729652"), Some(1_795_293_729_652));
        assert_eq!(parse_score("1.795293729652e+12"), Some(1_795_293_729_652));
        assert_eq!(parse_score("inf"), None);
    }
}
