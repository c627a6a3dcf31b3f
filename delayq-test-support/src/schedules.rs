//! Helpers of the schedule tests, shared by the library's and the CLI's.

use std::time::{SystemTime, UNIX_EPOCH};

use delayq::schedule::ScheduleInfo;
use delayq::Client;

use crate::RawRedis;

pub fn ms(at: SystemTime) -> i64 {
    at.duration_since(UNIX_EPOCH).unwrap().as_millis() as i64
}

pub async fn info(client: &Client, queue: &str, name: &str) -> ScheduleInfo {
    client
        .schedules(&delayq::QueueKeys::new(queue).unwrap())
        .unwrap()
        .get(name)
        .await
        .unwrap()
        .expect("schedule exists")
}

/// The due times of the pending elements (nothing transfers in these tests).
pub async fn scores(raw: &RawRedis, queue: &str) -> Vec<i64> {
    let keys = delayq::QueueKeys::new(queue).unwrap();
    let mut scores: Vec<i64> = raw.zrange(keys.timeout()).await.into_iter().map(|(_, s)| s).collect();
    scores.sort_unstable();
    scores
}

/// Every occurrence from `first` to the last one fired, once each.
pub fn assert_each_occurrence_once(scores: &[i64], first: i64, period_ms: i64, info: &ScheduleInfo) {
    assert!(!scores.is_empty(), "something fired");
    assert_eq!(scores[0], first, "the first occurrence fired");
    for pair in scores.windows(2) {
        assert_eq!(
            pair[1] - pair[0],
            period_ms,
            "consecutive occurrences, none twice, none missed: {scores:?}"
        );
    }
    assert_eq!(scores.len() as u64, info.fired, "the record counts what was offered");
    assert_eq!(Some(*scores.last().unwrap()), info.last_fired.map(ms));
    assert_eq!(info.missed, 0);
}
