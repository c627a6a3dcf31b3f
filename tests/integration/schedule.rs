//! Recurring schedules: each occurrence offered exactly once however many
//! clients and processes run the schedule, misfire policies, pause / resume /
//! remove / list, and fired values that are ordinary Redisson elements.

use std::time::{Duration, SystemTime};

use delayq::format::Format;
use delayq::fred::types::Value;
use delayq::schedule::{every, Misfire, ScheduleInfo, ScheduleSpec};
use delayq::{Error, StringCodec};

use delayq_test_support::schedules::{assert_each_occurrence_once, info, ms, scores};
use delayq_test_support::{eventually, redis_test, wait_for, RawRedis, RedisServer};

/// Generous: a loaded 2-core machine may be slow, never wrong.
const WITHIN: Duration = Duration::from_secs(60);

redis_test! {
    async fn several_clients_running_one_schedule_offer_each_occurrence_once(redis, raw) {
        let clients = [redis.client().await, redis.client().await, redis.client().await];
        let spec = || every(Duration::from_millis(500)).misfire(Misfire::FireAll);
        let value = "tick".to_string();
        let mut first = None;
        let mut revision = None;
        // Every process of a fleet saves the same schedule at start-up: one record.
        for client in &clients {
            let queue = client.delayed_queue("ticks", StringCodec).unwrap().without_transfer();
            let saved = client.schedule("tick", spec(), &queue, &value).await.unwrap();
            assert_eq!(
                *revision.get_or_insert(saved.revision),
                saved.revision,
                "the same definition keeps the record"
            );
            let next = ms(saved.next.unwrap());
            assert_eq!(*first.get_or_insert(next), next);
        }
        eventually(WITHIN, "8 occurrences fired", || async {
            info(&clients[0], "ticks", "tick").await.fired >= 8
        })
        .await;
        assert!(clients[1]
            .schedules(&delayq::QueueKeys::new("ticks").unwrap())
            .unwrap()
            .pause("tick")
            .await
            .unwrap());
        // A fire in flight when the pause landed is either before it or sees it.
        let info = info(&clients[0], "ticks", "tick").await;
        assert!(info.paused);
        let scores = scores(&raw, "ticks").await;
        assert_each_occurrence_once(&scores, first.unwrap(), 500, &info);

        // Ordinary Redisson elements: what Java's readAll() unpacks, and what the transfer moves.
        assert_eq!(payloads(&raw, "ticks").await, vec![value.clone(); scores.len()]);
        let moved = clients[0].delayed_queue("ticks", StringCodec).unwrap();
        let taker = clients[2].blocking_queue("ticks", StringCodec).unwrap();
        for _ in 0..scores.len() {
            assert_eq!(taker.take().await.unwrap(), value);
        }
        assert_eq!(moved.len().await.unwrap(), 0);
        for client in clients {
            client.shutdown().await;
        }
    }
}

redis_test! {
    async fn a_cron_schedule_with_seconds_fires_on_whole_seconds_once_each(redis, raw) {
        let clients = [redis.client().await, redis.client().await];
        for client in &clients {
            let queue = client.delayed_queue("cron", StringCodec).unwrap().without_transfer();
            client
                .schedule("every-second", "* * * * * *", &queue, &"s".to_string())
                .await
                .unwrap();
        }
        eventually(WITHIN, "3 occurrences", || async {
            info(&clients[0], "cron", "every-second").await.fired >= 3
        })
        .await;
        clients[0]
            .schedules(&delayq::QueueKeys::new("cron").unwrap())
            .unwrap()
            .pause("every-second")
            .await
            .unwrap();
        let info = info(&clients[1], "cron", "every-second").await;
        let scores = scores(&raw, "cron").await;
        assert!(scores.iter().all(|s| s % 1000 == 0), "whole seconds: {scores:?}");
        assert_each_occurrence_once(&scores, scores[0], 1000, &info);
        for client in clients {
            client.shutdown().await;
        }
    }
}

/// Moves a stored schedule's next occurrence into the past, as if no
/// process had run it for a while.
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

redis_test! {
    async fn missed_occurrences_follow_the_misfire_policy_after_a_restart(redis, raw) {
        for (policy, queue) in [
            (Misfire::Skip, "skip"),
            (Misfire::FireOnce, "once"),
            (Misfire::FireAll, "all"),
        ] {
            // Saved by a process that then stops.
            let client = redis.client().await;
            let handle = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
            let spec = every(Duration::from_secs(10))
                .misfire(policy)
                .misfire_after(Duration::from_secs(9));
            client.schedule("job", spec, &handle, &"run".to_string()).await.unwrap();
            client.shutdown().await;
            // Nobody ran it for a minute: occurrences at -61 s, -51 s, ...,
            // -11 s are missed (over 9 s late), the one at -1 s is on time —
            // whenever within 8 s the restarted runner gets to them.
            let old = ms(SystemTime::now()) - 61_000;
            set_next(&raw, queue, "job", old).await;

            let client = redis.client().await;
            client.run_schedules(&delayq::QueueKeys::new(queue).unwrap()).unwrap();
            wait_for(WITHIN, "caught up", || async {
                let info = info(&client, queue, "job").await;
                (info.next.map(ms) == Some(old + 70_000)).then_some(())
            })
            .await;
            client
                .schedules(&delayq::QueueKeys::new(queue).unwrap())
                .unwrap()
                .pause("job")
                .await
                .unwrap();
            let info = self::info(&client, queue, "job").await;
            let scores = scores(&raw, queue).await;
            let offsets: Vec<i64> = scores.iter().map(|s| (s - old) / 1000).collect();
            let (expected, missed): (Vec<i64>, u64) = match policy {
                Misfire::Skip => (vec![60], 6),
                Misfire::FireOnce => (vec![50, 60], 5),
                Misfire::FireAll => ((0..=60).step_by(10).collect(), 0),
            };
            assert_eq!(
                offsets, expected,
                "{policy:?}: offered occurrences (s after the first missed)"
            );
            assert_eq!((info.fired, info.missed), (expected.len() as u64, missed), "{policy:?}");
            assert_eq!(info.last_fired.map(ms), Some(old + 60_000));
            // Whatever the policy, the values are ordinary elements.
            assert!(payloads(&raw, queue).await.iter().all(|v| v == "run"));
            client.shutdown().await;
        }
    }
}

/// The payloads of the pending elements, unpacked as Java's readAll() does.
async fn payloads(raw: &RawRedis, queue: &str) -> Vec<String> {
    let keys = delayq::QueueKeys::new(queue).unwrap();
    raw.lrange(keys.pending())
        .await
        .iter()
        .map(|e| String::from_utf8(delayq::format::unpack(e).unwrap().payload.to_vec()).unwrap())
        .collect()
}

redis_test! {
    async fn schedules_are_listed_paused_resumed_replaced_and_removed(raw, client) {
        let queue = client
            .delayed_queue("mail", StringCodec)
            .unwrap()
            .without_transfer()
            .with_format(Format::Legacy);
        let nightly = ScheduleSpec::cron("30 2 * * *")
            .unwrap()
            .in_time_zone("Europe/Paris")
            .unwrap();
        client
            .schedule("nightly", nightly.clone(), &queue, &"digest".to_string())
            .await
            .unwrap();
        let added = client
            .schedule("often", every(Duration::from_millis(300)), &queue, &"ping".to_string())
            .await
            .unwrap();
        let schedules = client.schedules(&delayq::QueueKeys::new("mail").unwrap()).unwrap();
        let list = schedules.list().await.unwrap();
        let names: Vec<_> = list.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["nightly", "often"]);
        assert_eq!(list[0].spec, nightly);
        assert_eq!(list[0].spec.to_string(), "CRON_TZ=Europe/Paris 30 2 * * *");
        assert_eq!(&list[0].payload[..], b"digest");
        assert_eq!(list[0].format, Format::Legacy);
        let next = list[0].next.unwrap();
        assert!(next > SystemTime::now() && next < SystemTime::now() + Duration::from_secs(86_400 + 3600));

        eventually(WITHIN, "fires", || async {
            info(&client, "mail", "often").await.fired >= 2
        })
        .await;
        // Legacy elements, as Redisson <= 3.21.0 writes them.
        let keys = delayq::QueueKeys::new("mail").unwrap();
        for (member, _) in raw.zrange(keys.timeout()).await {
            let element = delayq::format::unpack(&member).unwrap();
            assert_eq!((element.format(), element.payload), (Format::Legacy, &b"ping"[..]));
        }

        assert!(schedules.pause("often").await.unwrap());
        let paused = info(&client, "mail", "often").await;
        assert!(paused.paused);
        tokio::time::sleep(Duration::from_millis(1200)).await;
        assert_eq!(
            info(&client, "mail", "often").await.fired,
            paused.fired,
            "nothing fires while paused"
        );
        assert!(schedules.resume("often").await.unwrap());
        eventually(WITHIN, "fires again after resume", || async {
            info(&client, "mail", "often").await.fired > paused.fired
        })
        .await;
        let resumed = info(&client, "mail", "often").await;
        assert_eq!(
            resumed.missed, 0,
            "occurrences passed while paused are skipped, not missed"
        );

        // The same definition keeps the record; another one replaces it.
        let again = client
            .schedule("often", every(Duration::from_millis(300)), &queue, &"ping".to_string())
            .await
            .unwrap();
        assert_eq!(again.revision, added.revision);
        assert!(again.fired >= resumed.fired);
        let replaced = client
            .schedule("often", every(Duration::from_secs(3600)), &queue, &"pong".to_string())
            .await
            .unwrap();
        assert!(replaced.revision > added.revision);
        assert_eq!(&replaced.payload[..], b"pong");

        assert!(schedules.remove("often").await.unwrap());
        assert!(schedules.get("often").await.unwrap().is_none());
        assert!(!schedules.pause("often").await.unwrap());
        assert!(!schedules.remove("often").await.unwrap());
        assert_eq!(schedules.list().await.unwrap().len(), 1);
        client.shutdown().await;
    }
}

redis_test! {
    async fn bad_specs_and_names_are_invalid_arguments(redis, client) {
        let queue = client.delayed_queue("q", StringCodec).unwrap();
        let value = "v".to_string();
        for spec in ["61 * * * *", "not cron", "CRON_TZ=Nowhere/Else * * * * *"] {
            let result = client.schedule("x", spec, &queue, &value).await;
            assert!(matches!(result, Err(Error::InvalidArgument(_))), "{spec}: {result:?}");
        }
        let result = client.schedule("", every(Duration::from_secs(1)), &queue, &value).await;
        assert!(matches!(result, Err(Error::InvalidArgument(_))));
        let result = client.schedule("x", every(Duration::ZERO), &queue, &value).await;
        assert!(matches!(result, Err(Error::InvalidArgument(_))));
        assert!(client
            .schedules(&delayq::QueueKeys::new("q").unwrap())
            .unwrap()
            .list()
            .await
            .unwrap()
            .is_empty());

        // At most 1,000 schedules per queue, so every schedule script stays bounded.
        let raw = redis.raw().await;
        let mut fields: Vec<Value> = vec![delayq::QueueKeys::new("full").unwrap().schedules().into()];
        for i in 0..1000 {
            fields.push(format!("s{i}").into());
            fields.push("{}".into());
        }
        raw.cmd("HSET", fields).await;
        let full = client.delayed_queue("full", StringCodec).unwrap();
        let result = client
            .schedule("one-more", every(Duration::from_secs(1)), &full, &value)
            .await;
        assert!(matches!(result, Err(Error::InvalidArgument(_))), "{result:?}");
        client.shutdown().await;
    }
}

/// A schedule's stored record, as a runner reads it.
async fn record(raw: &RawRedis, queue: &str, name: &str) -> serde_json::Value {
    let key = delayq::QueueKeys::new(queue).unwrap().schedules();
    let stored = raw.cmd("HGET", vec![key.as_str().into(), name.into()]).await;
    serde_json::from_slice(stored.as_bytes().expect("the record exists")).unwrap()
}

/// Saves a schedule from a client that stops at once: nothing runs it.
async fn save_only(redis: &RedisServer, queue: &str, name: &str, spec: &str, value: &str) -> ScheduleInfo {
    let client = redis.client().await;
    let handle = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
    let info = client.schedule(name, spec, &handle, &value.to_string()).await.unwrap();
    client.shutdown().await;
    info
}

/// Runs `lua/schedule_fire.lua` as a runner that read `held` does when its
/// next occurrence is due: offers `value` then. Returns the reply's tag.
async fn fire_as(raw: &RawRedis, queue: &str, name: &str, held: &serde_json::Value, value: &str) -> String {
    let keys = delayq::QueueKeys::new(queue).unwrap();
    let body = delayq_test_support::script_body(include_str!("../../lua/schedule_fire.lua"));
    let next = held["next_ms"].as_str().unwrap();
    let after = (next.parse::<i64>().unwrap() + 86_400_000).to_string();
    let element = delayq::format::pack(Format::Modern, value.as_bytes());
    let args: Vec<Value> = vec![
        body.into(),
        7.into(),
        keys.schedules().into(),
        keys.timeout().into(),
        keys.pending().into(),
        keys.channel().into(),
        keys.events_config().into(),
        keys.events().into(),
        keys.companion("schedule_fires").into(),
        name.into(),
        held["rev"].as_str().unwrap().into(),
        next.into(),
        after.into(),
        0.into(),
        "0123456789abcdef".into(),
        "a-runner".into(),
        "a-host".into(),
        "on_time".into(),
        next.into(),
        Value::Bytes(element),
    ];
    let Value::Array(reply) = raw.cmd("EVAL", args).await else {
        panic!("schedule_fire: not an array")
    };
    reply[0].as_string().unwrap()
}

redis_test! {
    /// The ABA of a compare-and-set: a schedule removed and added again under
    /// its name, with the same next occurrence (two schedules of one cron
    /// expression have the same ones), must not pass for the old one in a
    /// process that still holds the old record (runners read records every 2 s).
    async fn a_schedule_removed_and_added_again_is_never_fired_or_resumed_as_the_old_one(redis, raw) {
        let yearly = "0 0 1 1 *";
        let old = save_only(&redis, "aba", "job", yearly, "old").await;
        // Due a second ago, as the stale runner read it.
        let due = ms(SystemTime::now()) - 1_000;
        set_next(&raw, "aba", "job", due).await;
        let held = record(&raw, "aba", "job").await;

        let client = redis.client().await;
        let schedules = client.schedules(&delayq::QueueKeys::new("aba").unwrap()).unwrap();
        assert!(schedules.remove("job").await.unwrap());
        let new = save_only(&redis, "aba", "job", yearly, "new").await;
        assert_eq!(new.next, old.next, "the same occurrences");
        assert!(new.revision > old.revision, "{} after {}", new.revision, old.revision);
        set_next(&raw, "aba", "job", due).await;
        assert_eq!(record(&raw, "aba", "job").await["next_ms"], held["next_ms"]);

        // The stale runner's fire: the old value under the new schedule.
        assert_eq!(fire_as(&raw, "aba", "job", &held, "old").await, "stale");
        assert!(payloads(&raw, "aba").await.is_empty());
        // A runner that reads the new record fires the new value at that occurrence.
        client.run_schedules(&delayq::QueueKeys::new("aba").unwrap()).unwrap();
        eventually(WITHIN, "the new schedule fired", || async {
            info(&client, "aba", "job").await.fired >= 1
        })
        .await;
        assert_eq!(payloads(&raw, "aba").await, ["new"]);
        assert_eq!(scores(&raw, "aba").await, [due]);

        // A resume that read the old record does not resume the new one (its
        // next occurrence would come from the old spec).
        assert!(schedules.pause("job").await.unwrap());
        set_next(&raw, "aba", "job", due).await;
        let body = delayq_test_support::script_body(include_str!("../../lua/schedule_set.lua"));
        let keys = delayq::QueueKeys::new("aba").unwrap();
        let resumed = raw
            .cmd(
                "EVAL",
                vec![
                    body.into(),
                    3.into(),
                    keys.schedules().into(),
                    keys.companion("schedule_fires").into(),
                    "delayq_request:{aba}:stale-resume".into(),
                    "resume".into(),
                    "job".into(),
                    held["next_ms"].as_str().unwrap().into(),
                    held["rev"].as_str().unwrap().into(),
                    (due + 60_000).to_string().into(),
                ],
            )
            .await;
        assert_eq!(resumed.as_i64(), Some(0), "the old record's resume is refused");
        let paused = record(&raw, "aba", "job").await;
        assert_eq!(
            (paused["paused"].as_bool(), &paused["next_ms"]),
            (Some(true), &held["next_ms"])
        );
        client.shutdown().await;
    }
}

redis_test! {
    /// Records as earlier versions wrote them (rev "1", "2", ..., no fire
    /// tokens) load and fire, keep their revision when saved again with the
    /// same definition, and take a new one, larger than any of theirs, when replaced.
    async fn records_written_by_earlier_versions_load_fire_and_are_replaced(redis, raw) {
        let yearly = "0 0 1 1 *";
        save_only(&redis, "earlier", "job", yearly, "v").await;
        let written = record(&raw, "earlier", "job").await;
        let due = ms(SystemTime::now()) - 1_000;
        let earlier = serde_json::json!({
            "def": written["def"],
            "rev": "1",
            "next_ms": due.to_string(),
            "paused": false,
            "fired": 0,
            "missed": 0,
        });
        let key = delayq::QueueKeys::new("earlier").unwrap().schedules();
        raw.cmd(
            "HSET",
            vec![key.as_str().into(), "job".into(), earlier.to_string().into()],
        )
        .await;

        let client = redis.client().await;
        let queue = client.delayed_queue("earlier", StringCodec).unwrap().without_transfer();
        let again = client.schedule("job", yearly, &queue, &"v".to_string()).await.unwrap();
        assert_eq!(again.revision, 1, "the same definition keeps the record");
        eventually(WITHIN, "the earlier record fired", || async {
            info(&client, "earlier", "job").await.fired == 1
        })
        .await;
        assert_eq!(payloads(&raw, "earlier").await, ["v"]);
        assert_eq!(scores(&raw, "earlier").await, [due]);
        let replaced = client.schedule("job", yearly, &queue, &"w".to_string()).await.unwrap();
        assert!(replaced.revision > 1_000_000, "{}", replaced.revision);
        assert_eq!((replaced.fired, &replaced.payload[..]), (1, &b"w"[..]));
        client.shutdown().await;
    }
}

redis_test! {
    /// Due times are whole milliseconds: a period of 1.9 ms fires every 2 ms,
    /// never every 1 ms; below 1 ms, a period is refused.
    async fn a_period_with_a_fraction_of_a_millisecond_never_fires_more_often_than_asked(raw, client) {
        let queue = client
            .delayed_queue("fraction", StringCodec)
            .unwrap()
            .without_transfer();
        let spec = every(Duration::from_micros(1900)).misfire(Misfire::FireAll);
        let saved = client.schedule("fast", spec, &queue, &"f".to_string()).await.unwrap();
        assert_eq!(saved.spec.to_string(), "every 2ms");
        eventually(WITHIN, "10 occurrences", || async {
            info(&client, "fraction", "fast").await.fired >= 10
        })
        .await;
        assert!(client
            .schedules(&delayq::QueueKeys::new("fraction").unwrap())
            .unwrap()
            .pause("fast")
            .await
            .unwrap());
        let info = info(&client, "fraction", "fast").await;
        let scores = scores(&raw, "fraction").await;
        assert_each_occurrence_once(&scores, ms(saved.next.unwrap()), 2, &info);

        let result = client
            .schedule("faster", every(Duration::from_micros(900)), &queue, &"f".to_string())
            .await;
        assert!(matches!(result, Err(Error::InvalidArgument(_))), "{result:?}");
        client.shutdown().await;
    }
}

redis_test! {
    /// Each process running a queue's schedules beats in
    /// `delayq_schedule_runners:{N}` (a bounded, expiring sorted set), so a
    /// dashboard can tell schedules that fire from schedules nobody runs: a
    /// runner shows while it runs, per queue, a dead one's old beat does not
    /// count and is dropped, and a runner that stops takes its beat back.
    async fn schedule_runners_beat_while_they_run_and_are_gone_once_they_stop(redis, raw) {
        let observer = redis.client().await;
        let runners = |queue: &'static str| {
            let schedules = observer.schedules(&delayq::QueueKeys::new(queue).unwrap()).unwrap();
            async move { schedules.runners().await.unwrap() }
        };
        assert_eq!(runners("beats").await, []);

        let first = redis.client().await;
        let queue = first.delayed_queue("beats", StringCodec).unwrap().without_transfer();
        let hourly = every(Duration::from_secs(3600));
        first
            .schedule("hourly", hourly, &queue, &"h".to_string())
            .await
            .unwrap();
        eventually(WITHIN, "the first runner beats", || async {
            runners("beats").await.len() == 1
        })
        .await;
        let seen = runners("beats").await;
        assert!(seen[0].id.starts_with(&format!("{}-", std::process::id())), "{seen:?}");
        // Beats are per queue: another queue's schedules have no runner.
        assert_eq!(runners("others").await, []);

        let second = redis.client().await;
        second.run_schedules(&delayq::QueueKeys::new("beats").unwrap()).unwrap();
        eventually(WITHIN, "two runners", || async { runners("beats").await.len() == 2 }).await;

        // A killed process's beat, long stale: never counted, and dropped by the next beat.
        let key = "delayq_schedule_runners:{beats}";
        let old = ms(SystemTime::now()) - 10 * 60_000;
        raw.cmd("ZADD", vec![key.into(), old.into(), "dead-1".into()]).await;
        assert_eq!(runners("beats").await.len(), 2);
        eventually(WITHIN, "the stale beat dropped", || async {
            raw.cmd("ZSCORE", vec![key.into(), "dead-1".into()]).await.is_null()
        })
        .await;
        let ttl = raw.cmd("PTTL", vec![key.into()]).await.as_i64().unwrap();
        assert!(ttl > 0, "the heartbeat key expires: {ttl}");

        first.shutdown().await;
        eventually(WITHIN, "the stopped runner gone", || async {
            let left = runners("beats").await;
            left.len() == 1 && left[0].id != seen[0].id
        })
        .await;
        second.shutdown().await;
        eventually(WITHIN, "no runner", || async { runners("beats").await.is_empty() }).await;
        observer.shutdown().await;
    }
}
