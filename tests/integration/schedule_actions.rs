//! What an operator does with a schedule beyond pause and resume: read its
//! recent fires (on time, late, missed, by hand, and which runner), run it
//! now, and edit its spec, zone or value keeping its counts and history.

use std::time::{Duration, SystemTime};

use delayq::events::EventKind;
use delayq::fred::types::Value;
use delayq::schedule::{every, FireKind, Misfire, ScheduleEdit, ScheduleSpec, FIRES_KEPT};
use delayq::{Error, StringCodec};

use delayq_test_support::schedules::{info, ms, scores};
use delayq_test_support::{redis_test, wait_for, RawRedis};

/// Generous: a loaded 2-core machine may be slow, never wrong.
const WITHIN: Duration = Duration::from_secs(60);

const HOUR_MS: i64 = 3_600_000;

/// A schedule that never fires during a test (next New Year's Day).
const YEARLY: &str = "0 0 1 1 *";

/// Moves a stored schedule's next occurrence, as if no process had run it
/// for a while.
async fn set_next(raw: &RawRedis, queue: &str, name: &str, next_ms: i64) {
    let key = delayq::QueueKeys::new(queue).unwrap().schedules();
    let stored = raw.cmd("HGET", vec![key.as_str().into(), name.into()]).await;
    let mut record: serde_json::Value = serde_json::from_slice(stored.as_bytes().unwrap()).unwrap();
    record["next_ms"] = serde_json::Value::String(next_ms.to_string());
    raw.cmd(
        "HSET",
        vec![key.as_str().into(), name.into(), Value::from(record.to_string())],
    )
    .await;
}

/// The stored history of one schedule, as the scripts wrote it (`None`: no field).
async fn stored_fires(raw: &RawRedis, queue: &str, name: &str) -> Option<Vec<serde_json::Value>> {
    let key = delayq::QueueKeys::new(queue).unwrap().companion("schedule_fires");
    let stored = raw.cmd("HGET", vec![key.as_str().into(), name.into()]).await;
    stored.as_bytes().map(|b| serde_json::from_slice(b).unwrap())
}

fn schedules(client: &delayq::Client, queue: &str) -> delayq::schedule::Schedules {
    client.schedules(&delayq::QueueKeys::new(queue).unwrap()).unwrap()
}

redis_test! {
    /// Hourly schedules whose runner was away: each policy's fire is
    /// recorded as it went, whatever the runner's speed (the occurrences are
    /// half an hour or more past a 1 s window, or 10 s into a 1 h one).
    async fn each_fire_is_recorded_on_time_late_or_missed_with_its_runner(redis, raw) {
        let saver = redis.client().await;
        let queue = saver.delayed_queue("hist", StringCodec).unwrap().without_transfer();
        let strict = || every(Duration::from_secs(3600)).misfire_after(Duration::from_secs(1));
        let specs = [
            ("skipped", strict().misfire(Misfire::Skip)),
            ("caught-up", strict().misfire(Misfire::FireOnce)),
            ("on-time", every(Duration::from_secs(3600)).misfire_after(Duration::from_secs(3600))),
        ];
        for (name, spec) in specs {
            saver.schedule(name, spec, &queue, &name.to_string()).await.unwrap();
        }
        saver.shutdown().await;
        let now = ms(SystemTime::now());
        // Occurrences at -2.5 h, -1.5 h and -0.5 h, the next at +0.5 h.
        let away = now - 5 * HOUR_MS / 2;
        set_next(&raw, "hist", "skipped", away).await;
        set_next(&raw, "hist", "caught-up", away).await;
        set_next(&raw, "hist", "on-time", now - 10_000).await;

        let runner = redis.client().await;
        runner.run_schedules(&delayq::QueueKeys::new("hist").unwrap()).unwrap();
        let schedules = schedules(&runner, "hist");
        for name in ["skipped", "caught-up", "on-time"] {
            wait_for(WITHIN, "fired", || async {
                let fires = schedules.fires(name).await.unwrap();
                (!fires.is_empty()).then_some(())
            })
            .await;
        }
        let alive = wait_for(WITHIN, "the runner beats", || async {
            let runners = schedules.runners().await.unwrap();
            (!runners.is_empty()).then_some(runners)
        })
        .await;
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();

        let skipped = schedules.fires("skipped").await.unwrap();
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        assert_eq!((skipped[0].kind, skipped[0].offered, skipped[0].missed), (FireKind::Missed, 0, 3));
        assert_eq!(ms(skipped[0].due), away, "a fire that offers nothing is due at the first skipped");
        assert!(skipped[0].late_by() >= Duration::from_secs(9000));

        let late = schedules.fires("caught-up").await.unwrap();
        assert_eq!(late.len(), 1, "{late:?}");
        assert_eq!((late[0].kind, late[0].offered, late[0].missed), (FireKind::Late, 1, 2));
        assert_eq!(ms(late[0].due), away + 2 * HOUR_MS, "the latest missed one, offered late");
        assert!(late[0].late_by() >= Duration::from_secs(1800));

        let on_time = schedules.fires("on-time").await.unwrap();
        assert_eq!(on_time.len(), 1, "{on_time:?}");
        assert_eq!((on_time[0].kind, on_time[0].offered, on_time[0].missed), (FireKind::OnTime, 1, 0));
        assert_eq!(ms(on_time[0].due), now - 10_000);
        assert!(on_time[0].late_by() >= Duration::from_secs(10));
        assert!(on_time[0].fired_at >= on_time[0].due);

        for fire in [&skipped[0], &late[0], &on_time[0]] {
            assert_eq!(fire.runner, alive[0].id, "the runner as its heartbeats name it");
            assert_eq!(fire.host, host.trim());
        }
        // The counts agree with the history.
        let caught = info(&runner, "hist", "caught-up").await;
        assert_eq!((caught.fired, caught.missed), (1, 2));
        assert_eq!(scores(&raw, "hist").await.len(), 2, "caught-up and on-time offered one each");
        runner.shutdown().await;
    }
}

redis_test! {
    async fn run_now_offers_one_value_and_keeps_the_next_fire_and_counts(raw, client) {
        let queue = client.delayed_queue("by-hand", StringCodec).unwrap().without_transfer();
        client.schedule("report", YEARLY, &queue, &"build".to_string()).await.unwrap();
        client.enable_events(&delayq::QueueKeys::new("by-hand").unwrap(), 100).await.unwrap();
        let schedules = schedules(&client, "by-hand");
        let before = info(&client, "by-hand", "report").await;
        assert!(schedules.pause("report").await.unwrap());

        let due = schedules.run_now("report").await.unwrap();
        let scores = scores(&raw, "by-hand").await;
        assert_eq!(scores, vec![ms(due)], "one value, due when it ran");
        let keys = delayq::QueueKeys::new("by-hand").unwrap();
        let pending = raw.lrange(keys.pending()).await;
        assert_eq!(pending.len(), 1);
        assert_eq!(delayq::format::unpack(&pending[0]).unwrap().payload, b"build");

        let after = info(&client, "by-hand", "report").await;
        assert_eq!(after.next, before.next, "its next occurrence does not move");
        assert_eq!((after.fired, after.missed, after.revision), (before.fired, before.missed, before.revision));
        assert!(after.paused, "a paused schedule runs by hand and stays paused");

        let fires = schedules.fires("report").await.unwrap();
        assert_eq!(fires.len(), 1);
        assert_eq!((fires[0].kind, fires[0].offered), (FireKind::ByHand, 1));
        assert_eq!(fires[0].due, due);
        assert_eq!(fires[0].runner, std::process::id().to_string());

        let events = client.newest_events(&keys, 10).await.unwrap();
        assert!(
            events.iter().any(|e| e.kind == EventKind::ScheduleRun { schedule: "report".into() }),
            "{events:?}"
        );
        let missing = schedules.run_now("nope").await;
        assert!(
            matches!(&missing, Err(Error::NoSuchSchedule { queue, name }) if queue == "by-hand" && name == "nope"),
            "{missing:?}"
        );
        assert_eq!(raw.zcard(keys.timeout()).await, 1, "nothing offered for a name it does not hold");
    }
}

redis_test! {
    /// The history keeps the last 20 fires, newest first, whatever the
    /// number of runs; a remove takes it with the schedule.
    async fn the_fire_history_keeps_the_last_twenty_and_goes_with_the_schedule(raw, client) {
        let queue = client.delayed_queue("capped", StringCodec).unwrap().without_transfer();
        client.schedule("job", YEARLY, &queue, &"v".to_string()).await.unwrap();
        let schedules = schedules(&client, "capped");
        let mut dues = Vec::new();
        for _ in 0..FIRES_KEPT + 5 {
            dues.push(schedules.run_now("job").await.unwrap());
        }
        assert_eq!(raw.zcard(delayq::QueueKeys::new("capped").unwrap().timeout()).await, 25);
        let fires = schedules.fires("job").await.unwrap();
        assert_eq!(FIRES_KEPT, 20);
        assert_eq!(fires.len(), FIRES_KEPT);
        assert_eq!(stored_fires(&raw, "capped", "job").await.unwrap().len(), FIRES_KEPT, "bounded in Redis");
        let newest_first: Vec<SystemTime> = dues.iter().rev().take(FIRES_KEPT).copied().collect();
        assert_eq!(fires.iter().map(|f| f.due).collect::<Vec<_>>(), newest_first);

        assert!(schedules.remove("job").await.unwrap());
        assert_eq!(stored_fires(&raw, "capped", "job").await, None);
        assert!(schedules.fires("job").await.unwrap().is_empty());
        // Added again under its name: a new schedule, with no history.
        client.schedule("job", YEARLY, &queue, &"v".to_string()).await.unwrap();
        assert!(schedules.fires("job").await.unwrap().is_empty());
    }
}

redis_test! {
    async fn an_edit_changes_spec_zone_and_value_and_keeps_counts_and_history(raw, client) {
        let queue = client.delayed_queue("edits", StringCodec).unwrap().without_transfer();
        let saved = client
            .schedule("daily", every(Duration::from_secs(3600)).misfire(Misfire::FireOnce), &queue, &"old".to_string())
            .await
            .unwrap();
        // One fire by a runner, on time (10 s into its 60 s window), then stopped.
        set_next(&raw, "edits", "daily", ms(SystemTime::now()) - 10_000).await;
        let runner = client.clone();
        runner.run_schedules(&delayq::QueueKeys::new("edits").unwrap()).unwrap();
        let schedules = schedules(&client, "edits");
        let fired = wait_for(WITHIN, "fired once", || async {
            let info = info(&client, "edits", "daily").await;
            (info.fired == 1).then_some(info)
        })
        .await;
        assert!(schedules.pause("daily").await.unwrap());

        // The value only: the next occurrence stays.
        let edited = schedules
            .edit("daily", ScheduleEdit::new().value(&queue, &"new".to_string()).unwrap())
            .await
            .unwrap();
        assert_eq!(&edited.payload[..], b"new");
        assert_eq!(edited.next, fired.next);
        assert_eq!((edited.fired, edited.missed, edited.paused), (1, 0, true));
        assert!(edited.revision > saved.revision);
        assert_eq!(edited.spec.misfire_policy(), Misfire::FireOnce);

        // Another timing, in a zone: its first occurrence after now; the
        // misfire policy stays unless given.
        let spec = ScheduleSpec::cron("0 9 * * *").unwrap();
        let edited = schedules
            .edit("daily", ScheduleEdit::new().spec(spec).time_zone("Europe/Paris"))
            .await
            .unwrap();
        assert_eq!(edited.spec.to_string(), "CRON_TZ=Europe/Paris 0 9 * * *");
        assert_eq!(edited.spec.misfire_policy(), Misfire::FireOnce);
        let expected = ScheduleSpec::cron("CRON_TZ=Europe/Paris 0 9 * * *").unwrap();
        assert_eq!(edited.spec, expected.misfire(Misfire::FireOnce));
        let next = edited.next.unwrap();
        assert!(next > SystemTime::now() && next <= SystemTime::now() + Duration::from_secs(86_400));
        assert_eq!(&edited.payload[..], b"new");
        assert_eq!((edited.fired, edited.paused), (1, true));
        assert_eq!(schedules.fires("daily").await.unwrap().len(), 1, "the history stays");
        // The zone alone.
        let edited = schedules.edit("daily", ScheduleEdit::new().time_zone("Asia/Tokyo")).await.unwrap();
        assert_eq!(edited.spec.time_zone(), Some("Asia/Tokyo"));

        // Refused, nothing changed: a name it does not hold, a zone on a period, an unknown zone.
        let before = info(&client, "edits", "daily").await;
        let missing = schedules.edit("weekly", ScheduleEdit::new().payload("x")).await;
        assert!(matches!(missing, Err(Error::NoSuchSchedule { .. })), "{missing:?}");
        assert!(schedules.get("weekly").await.unwrap().is_none(), "an edit adds nothing");
        let zone_on_period = schedules
            .edit("daily", ScheduleEdit::new().spec(every(Duration::from_secs(60))).time_zone("UTC"))
            .await;
        assert!(matches!(zone_on_period, Err(Error::InvalidArgument(_))), "{zone_on_period:?}");
        let bad_zone = schedules.edit("daily", ScheduleEdit::new().time_zone("Mars/Olympus")).await;
        assert!(matches!(bad_zone, Err(Error::InvalidArgument(_))), "{bad_zone:?}");
        let after = info(&client, "edits", "daily").await;
        assert_eq!((after.revision, after.spec, after.payload), (before.revision, before.spec, before.payload));
        client.shutdown().await;
    }
}
