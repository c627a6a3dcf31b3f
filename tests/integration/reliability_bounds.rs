//! Reliable consumption at scale and over time: identical payloads, 100,000
//! deliveries in flight, bounded bookkeeping (acked ids, count records,
//! stray copies), one reaper per queue, and durations that must saturate.

use std::time::Duration;

use bytes::Bytes;
use delayq::fred::prelude::*;
use delayq::fred::types::Value;
use delayq::StringCodec;

use delayq_test_support::fault_proxy::{Fault, FaultProxy};
use delayq_test_support::{eventually, now_ms, redis_test, RawRedis};

fn s(v: &str) -> String {
    v.to_owned()
}

/// Seeds `n` deliveries straight into the inflight set, as if claimed:
/// ids `start..start + n`, count 1, value `prefix` + i, all due at `deadline_ms`.
async fn seed_in_flight(raw: &RawRedis, inflight: &str, start: i64, n: i64, prefix: &str, deadline_ms: i64) {
    const SEED: &str = r#"
local start, n, deadline, prefix = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], ARGV[4]
local batch = {}
for i = start, start + n - 1 do
  batch[#batch + 1] = deadline
  batch[#batch + 1] = string.format('%08d', i) .. '0000000001' .. prefix .. i
  if #batch >= 2000 then
    redis.call('zadd', KEYS[1], unpack(batch))
    batch = {}
  end
end
if #batch > 0 then
  redis.call('zadd', KEYS[1], unpack(batch))
end
return n
"#;
    let args = vec![
        SEED.into(),
        1.into(),
        inflight.into(),
        start.into(),
        n.into(),
        deadline_ms.into(),
        prefix.into(),
    ];
    raw.cmd("EVAL", args).await;
}

async fn hlen(raw: &RawRedis, key: &str) -> usize {
    raw.client.hlen::<i64, _>(key).await.unwrap() as usize
}

redis_test! {
    async fn identical_payloads_taken_at_once_are_each_delivery_one(raw, client) {
        let q = client.reliable_queue("jobs", StringCodec).unwrap();
        let same: Vec<String> = (0..12).map(|_| s("refresh:42")).collect();
        let _: i64 = raw.client.rpush("jobs", same).await.unwrap();

        let mut held = Vec::new();
        for _ in 0..12 {
            held.push(q.take().await.unwrap());
        }
        let counts: Vec<u32> = held.iter().map(|d| d.delivery_count()).collect();
        assert_eq!(counts, vec![1; 12], "every delivery is its own first");
        assert_eq!(q.in_flight().await.unwrap(), 12);
        assert_eq!(q.dead_letter_len().await.unwrap(), 0);

        // One of them fails: only that copy counts on.
        let failed = held.pop().unwrap();
        assert!(failed.nack(Duration::ZERO).await.unwrap());
        let again = q.take().await.unwrap();
        assert_eq!((again.value().as_str(), again.delivery_count()), ("refresh:42", 2));
        held.push(again);

        for d in held {
            assert!(d.ack().await.unwrap(), "each acked once");
        }
        assert_eq!(q.in_flight().await.unwrap(), 0);
        assert_eq!(q.dead_letter_len().await.unwrap(), 0);
        assert_eq!(raw.llen("jobs").await, 0);
        assert_eq!(raw.llen(q.keys().staging()).await, 0);
        assert_eq!(hlen(&raw, q.keys().counts()).await, 0, "no count record left");
    }
}

redis_test! {
    scale async fn a_hundred_thousand_deliveries_in_flight_leave_claim_ack_and_reap_working(raw, client) {
        let q = client
            .reliable_queue("busy", StringCodec)
            .unwrap()
            .with_visibility_timeout(Duration::from_secs(60));
        seed_in_flight(&raw, q.keys().leases(), 0, 100_000, "busy:", now_ms() + 3_600_000).await;
        // 2,500 more whose deadline passed: more than one reap call returns.
        seed_in_flight(&raw, q.keys().leases(), 200_000, 2_500, "late:", 1).await;
        assert_eq!(q.in_flight().await.unwrap(), 102_500);

        q.reap_now().await.unwrap();
        assert_eq!(q.in_flight().await.unwrap(), 100_000);
        assert_eq!(raw.llen("busy").await, 2_500, "every timed-out delivery is back");
        assert_eq!(hlen(&raw, q.keys().counts()).await, 2_500, "each with its count");

        // A timed-out value counts on; a fresh one starts at 1.
        let late = q.take().await.unwrap();
        assert!(late.value().starts_with("late:"));
        assert_eq!(late.delivery_count(), 2);
        let _: i64 = raw.client.lpush("busy", "fresh").await.unwrap();
        let fresh = q.take().await.unwrap();
        assert_eq!((fresh.value().as_str(), fresh.delivery_count()), ("fresh", 1));
        assert_eq!(q.in_flight().await.unwrap(), 100_002);
        assert!(fresh.extend(Duration::from_secs(120)).await.unwrap());
        assert!(late.nack(Duration::ZERO).await.unwrap());
        assert!(fresh.ack().await.unwrap());
        assert_eq!(q.in_flight().await.unwrap(), 100_000);
        assert_eq!(raw.llen("busy").await, 2_500);
        assert_eq!(raw.llen(q.keys().staging()).await, 0);
    }
}

redis_test! {
    async fn stray_copies_return_in_bounded_batches_and_claims_still_find_theirs(raw, client) {
        let q = client
            .reliable_queue("jobs", StringCodec)
            .unwrap()
            // Long enough that a loaded machine acks each delivery within
            // it; the strays' grace is as long.
            .with_visibility_timeout(Duration::from_secs(3));
        // 5,000 copies left by consumers that died between BLMOVE and claim.
        let strays: Vec<String> = (0..5_000).map(|i| format!("stray:{i}")).collect();
        for chunk in strays.chunks(1000) {
            let _: i64 = raw.client.rpush(q.keys().staging(), chunk.to_vec()).await.unwrap();
        }
        // Claims look near the tail only, and still find their copy.
        let _: i64 = raw.client.rpush("jobs", "live").await.unwrap();
        let live = q.take().await.unwrap();
        assert_eq!(live.value(), "live");
        assert!(live.ack().await.unwrap());

        let mut seen = std::collections::HashSet::new();
        while seen.len() < 5_000 {
            let d = q
                .take_timeout(Duration::from_secs(10))
                .await
                .unwrap()
                .expect("the strays come back");
            assert!(d.value().starts_with("stray:"));
            assert!(seen.insert(d.value().clone()), "{} came twice", d.value());
            assert!(d.ack().await.unwrap());
        }
        assert_eq!(raw.llen(q.keys().staging()).await, 0);
        assert_eq!(q.in_flight().await.unwrap(), 0);
    }
}

redis_test! {
    async fn acked_ids_stay_bounded_and_a_retried_ack_still_succeeds(raw, client) {
        let q = client.reliable_queue("jobs", StringCodec).unwrap();
        let acked = q.keys().acked().to_owned();
        // The set at its cap (100,000 ids acked just now), plus 10 acked an hour ago.
        const FILL: &str = r#"
local now = tonumber(ARGV[1])
for i = 1, 100000, 1000 do
  local batch = {}
  for j = i, i + 999 do
    batch[#batch + 1] = now
    batch[#batch + 1] = string.format('%08d', j)
  end
  redis.call('zadd', KEYS[1], unpack(batch))
end
for j = 1, 10 do
  redis.call('zadd', KEYS[1], now - 3600000, 'old' .. string.format('%05d', j))
end
return redis.call('zcard', KEYS[1])
"#;
        raw.cmd(
            "EVAL",
            vec![FILL.into(), 1.into(), acked.as_str().into(), now_ms().into()],
        )
        .await;
        assert_eq!(raw.zcard(&acked).await, 100_010);

        let ack = delayq_test_support::script_body(include_str!("../../lua/ack.lua"));
        for i in 0..10 {
            let _: i64 = raw.client.rpush("jobs", format!("job:{i}")).await.unwrap();
            let d = q.take().await.unwrap();
            let members = raw.zrange(q.keys().leases()).await;
            assert_eq!(members.len(), 1);
            let member = members[0].0.clone();
            // The first ack runs, and its reply is lost...
            let first = raw
                .cmd(
                    "EVAL",
                    vec![
                        ack.as_str().into(),
                        2.into(),
                        q.keys().leases().into(),
                        acked.as_str().into(),
                        Value::Bytes(member),
                        300_000.into(),
                        100_000.into(),
                    ],
                )
                .await;
            assert_eq!(first.as_i64(), Some(1));
            // ... so the client sends it again: still a success.
            assert!(d.ack().await.unwrap(), "a retried ack reports true");
            assert!(
                raw.zcard(&acked).await <= 100_010 - i,
                "the set shrinks towards its cap"
            );
        }
        assert!(raw.zcard(&acked).await <= 100_000, "at most the cap");
        let old: Vec<Bytes> = raw.zrange(&acked).await.into_iter().map(|(m, _)| m).collect();
        assert!(
            !old.iter().any(|m| m.starts_with(b"old")),
            "ids past the window are gone"
        );
        let ttl: i64 = raw.client.pttl(&acked).await.unwrap();
        assert!(ttl > 0 && ttl <= 300_000, "the set expires when acks stop ({ttl} ms)");
    }
}

redis_test! {
    async fn a_count_record_is_consumed_by_the_next_claim_or_expires_after_its_window(raw, client) {
        let q = client
            .reliable_queue("jobs", StringCodec)
            .unwrap()
            .with_visibility_timeout(Duration::from_millis(400))
            .with_count_memory(Duration::from_millis(300));
        let (counts, expiry) = (q.keys().counts().to_owned(), q.keys().counts_expiry().to_owned());
        let _: i64 = raw.client.rpush("jobs", "job").await.unwrap();
        // Deliveries taken under a long lease, so that a loaded machine's
        // late settle is still in time; `q` keeps the reaper's short grace
        // and the records' short memory.
        let long = q.clone().with_visibility_timeout(Duration::from_secs(30));

        // Given back, then claimed again: the record carries the count and goes.
        let d = long.take().await.unwrap();
        assert!(d.nack(Duration::ZERO).await.unwrap());
        assert_eq!((hlen(&raw, &counts).await, raw.zcard(&expiry).await), (1, 1));
        let d = long.take().await.unwrap();
        assert_eq!(d.delivery_count(), 2);
        assert_eq!((hlen(&raw, &counts).await, raw.zcard(&expiry).await), (0, 0));

        // Given back, then taken by a plain consumer (as Java's take would):
        // nobody claims the record, and it expires.
        assert!(d.nack(Duration::ZERO).await.unwrap());
        assert_eq!(hlen(&raw, &counts).await, 1);
        let plain = client.blocking_queue("jobs", StringCodec).unwrap();
        assert_eq!(plain.take().await.unwrap(), "job");
        eventually(Duration::from_secs(20), "the count record expires", || async {
            hlen(&raw, &counts).await == 0 && raw.zcard(&expiry).await == 0
        })
        .await;
        // The value offered again later starts over.
        let _: i64 = raw.client.rpush("jobs", "job").await.unwrap();
        let d = long.take().await.unwrap();
        assert_eq!(d.delivery_count(), 1);
        assert!(d.ack().await.unwrap());
    }
}

redis_test! {
    async fn extend_by_duration_max_keeps_the_delivery(raw, client) {
        let q = client
            .reliable_queue("jobs", StringCodec)
            .unwrap()
            // Short, so the reap below would return it were it not extended (long
            // enough for a loaded machine to extend it in time).
            .with_visibility_timeout(Duration::from_secs(2));
        let huge = client
            .reliable_queue("jobs", StringCodec)
            .unwrap()
            .with_visibility_timeout(Duration::MAX)
            .with_count_memory(Duration::MAX);
        let _: i64 = raw.client.rpush("jobs", vec!["long", "longer"]).await.unwrap();
        let d = q.take().await.unwrap();
        assert!(d.extend(Duration::MAX).await.unwrap());
        let e = huge.take().await.unwrap();
        let deadlines: Vec<i64> = raw
            .zrange(q.keys().leases())
            .await
            .into_iter()
            .map(|(_, at)| at)
            .collect();
        assert!(deadlines.iter().all(|&at| at > now_ms() + 3_600_000), "{deadlines:?}");
        tokio::time::sleep(Duration::from_millis(2_300)).await;
        q.reap_now().await.unwrap();
        assert_eq!(q.in_flight().await.unwrap(), 2, "neither went back");
        assert!(q.take_timeout(Duration::from_secs(2)).await.unwrap().is_none());
        assert!(e.nack(Duration::MAX).await.unwrap(), "a huge nack delay saturates too");
        assert!(d.ack().await.unwrap());
    }
}

redis_test! {
    async fn one_reaper_per_queue_however_many_handles(redis, client) {
        let monitor = redis.monitor().await;
        let base = client
            .reliable_queue("jobs", StringCodec)
            .unwrap()
            .with_visibility_timeout(Duration::from_millis(200));
        let mark = base.keys().staging_mark().to_owned();
        let mut handles = vec![base.clone()];
        for _ in 0..10 {
            handles.push(client.reliable_queue("jobs", StringCodec).unwrap());
            handles.push(base.clone());
            handles.push(base.clone().with_visibility_timeout(Duration::from_millis(300)));
        }
        let reaps = |entries: Vec<delayq_test_support::Monitored>| {
            entries
                .iter()
                .filter(|e| e.from_lua && e.name() == "hmget" && e.args.get(1).is_some_and(|k| k == mark.as_bytes()))
                .count()
        };
        let started = tokio::time::Instant::now();
        tokio::time::sleep(Duration::from_secs(1)).await;
        let seen = reaps(monitor.entries().await);
        let elapsed = started.elapsed();
        // One reaper reaps every 50 ms (a quarter of the shortest timeout);
        // 31 would reap about 31 times as often.
        let one = (elapsed.as_millis() / 50) as usize + 2;
        assert!(seen >= 1, "the reaper runs");
        assert!(seen <= one, "{seen} reap runs in {elapsed:?}: more than one reaper");

        drop(handles);
        drop(base);
        tokio::time::sleep(Duration::from_millis(300)).await;
        let stopped = reaps(monitor.entries().await);
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(
            reaps(monitor.entries().await),
            stopped,
            "no reaper once the last handle is gone"
        );
    }
}

redis_test! {
    async fn a_nack_resent_after_its_reply_was_lost_gets_the_first_answer_and_gives_back_once(raw, client) {
        let q = client.reliable_queue("jobs", StringCodec).unwrap();
        let _: i64 = raw.client.rpush("jobs", "job").await.unwrap();
        let d = q.take().await.unwrap();
        let member = raw.zrange(q.keys().leases()).await[0].0.clone();
        let nack = delayq_test_support::script_body(include_str!("../../lua/nack.lua"));
        let k = q.keys();
        let request = "delayq_request:{jobs}:test-nack";
        let (events_config, events, stats) = (k.events_config(), k.events(), k.stats());
        let (jobs, jobs_expiry) = (k.jobs(), k.jobs_expiry());
        let (priority_ready, priority_delayed, priority_marker) =
            (k.priority_ready(), k.priority_delayed(), k.priority_marker());
        let send = || {
            let keys = [
                k.leases(),
                k.destination(),
                k.timeout(),
                k.pending(),
                k.channel(),
                k.dead_letter(),
                k.counts(),
                k.counts_expiry(),
                k.dead_reasons(),
                &events_config,
                &events,
                &stats,
                k.ids(),
                &jobs,
                &jobs_expiry,
                &priority_ready,
                &priority_delayed,
                &priority_marker,
                request,
            ];
            let mut args: Vec<Value> = vec![nack.as_str().into(), (keys.len() as i64).into()];
            args.extend(keys.iter().map(|k| Value::from(*k)));
            args.extend([
                Value::Bytes(member.clone()),
                0.into(),
                "unused".into(),
                60_000.into(),
                "".into(),
            ]);
            raw.cmd("EVAL", args)
        };
        // The first send runs and its reply is lost; the resend of the same
        // request reports what happened, and gives nothing back twice.
        assert_eq!(send().await.as_i64(), Some(1));
        assert_eq!(send().await.as_i64(), Some(1));
        assert_eq!(raw.lrange("jobs").await, vec![Bytes::from("job")]);
        assert_eq!(q.in_flight().await.unwrap(), 0);
        // The failure is counted by the run that gave the value back, once.
        let failed = raw.cmd("HGET", vec![k.stats().into(), "failed".into()]).await;
        assert_eq!(failed.as_string().as_deref(), Some("1"), "{failed:?}");
        drop(d);
        let again = q.take().await.unwrap();
        assert_eq!(again.delivery_count(), 2);
        assert!(again.ack().await.unwrap());
    }
}

/// A delayq client through the proxy; `resend: false` makes fred send each
/// command once, so only delayq's own retries remain.
async fn through(proxy: &FaultProxy, resend: bool) -> delayq::Client {
    delayq::Client::builder()
        .url(proxy.url())
        .blocking_timeout(Duration::from_secs(1))
        .customize(move |b| {
            if !resend {
                b.with_connection_config(|c| c.max_command_attempts = 1);
            }
        })
        .build()
        .await
        .expect("connect through the proxy")
}

redis_test! {
    async fn ack_and_nack_whose_reply_is_lost_still_report_true(redis, raw) {
        let proxy = FaultProxy::start(redis.port()).await;
        for resend in [true, false] {
            let name = format!("lost-{resend}");
            let client = through(&proxy, resend).await;
            let q = client.reliable_queue(&name, StringCodec).unwrap();
            let _: i64 = raw.client.rpush(&name, vec!["a", "b"]).await.unwrap();

            // The ack runs, its reply is lost, the ack is sent again.
            let a = q.take().await.unwrap();
            let fired = proxy.fired();
            proxy.arm(Fault::LoseReply, q.keys().acked());
            assert!(a.ack().await.unwrap(), "resend {resend}: the retried ack reports true");
            assert_eq!(proxy.fired(), fired + 1);

            // The nack runs, its reply is lost, the same request is sent again.
            let b = q.take().await.unwrap();
            let request = format!("delayq_request:{{{name}}}");
            proxy.arm(Fault::LoseReply, &request);
            assert!(
                b.nack(Duration::ZERO).await.unwrap(),
                "resend {resend}: the retried nack reports true"
            );
            assert_eq!(proxy.fired(), fired + 2);
            assert_eq!(raw.lrange(&name).await, vec![Bytes::from("b")], "given back once");
            let b = q.take().await.unwrap();
            assert_eq!(b.delivery_count(), 2);
            assert!(b.ack().await.unwrap());
            assert_eq!(q.in_flight().await.unwrap(), 0);
            client.shutdown().await;
        }
    }
}

redis_test! {
    async fn a_new_equal_job_does_not_inherit_the_count_of_one_waiting_out_its_retry(raw, client) {
        let q = client
            .reliable_queue("equal-jobs", StringCodec)
            .unwrap()
            .with_max_deliveries(2);
        // Job A, "x", fails twice; its second failure retries in 60 s.
        let _: i64 = raw.client.rpush("equal-jobs", "x").await.unwrap();
        let a = q.take().await.unwrap();
        assert_eq!(a.delivery_count(), 1);
        assert!(a.nack(Duration::ZERO).await.unwrap());
        let a = q.take().await.unwrap();
        assert_eq!(a.delivery_count(), 2);
        assert!(a.nack(Duration::from_secs(60)).await.unwrap());
        // Job B, another "x", offered meanwhile: its first delivery is 1 (it
        // used to take A's count and go straight to the dead-letter list).
        let _: i64 = raw.client.rpush("equal-jobs", "x").await.unwrap();
        let b = q
            .take_timeout(Duration::from_secs(10))
            .await
            .unwrap()
            .expect("B delivered");
        assert_eq!(b.delivery_count(), 1);
        assert!(b.ack().await.unwrap());
        assert_eq!(q.dead_letter_len().await.unwrap(), 0);
        // A's count is still waiting for A, and is ready when A is back.
        let counts: std::collections::HashMap<String, String> = raw.client.hgetall(q.keys().counts()).await.unwrap();
        assert_eq!(counts.len(), 1, "{counts:?}");
        assert!(counts.values().next().unwrap().starts_with("2:1:"), "{counts:?}");
    }
}

redis_test! {
    async fn counts_of_many_equal_copies_stay_one_small_record(raw, client) {
        let q = client
            .reliable_queue("many-equal", StringCodec)
            .unwrap()
            .with_max_deliveries(0);
        let copies: Vec<&str> = vec!["same"; 300];
        let _: i64 = raw.client.rpush("many-equal", copies).await.unwrap();
        let mut taken = Vec::new();
        for _ in 0..300 {
            let d = q.take().await.unwrap();
            assert_eq!(d.delivery_count(), 1);
            taken.push(d);
        }
        for d in taken {
            assert!(d.nack(Duration::ZERO).await.unwrap());
        }
        // 300 copies given back with count 1: one entry, not 300.
        let counts: std::collections::HashMap<String, String> = raw.client.hgetall(q.keys().counts()).await.unwrap();
        let record = counts.values().next().unwrap();
        assert!(record.starts_with("1:300:") && !record.contains(' '), "{record}");
        for _ in 0..300 {
            let d = q.take().await.unwrap();
            assert_eq!(d.delivery_count(), 2);
            assert!(d.ack().await.unwrap());
        }
        let counts: std::collections::HashMap<String, String> = raw.client.hgetall(q.keys().counts()).await.unwrap();
        assert!(counts.is_empty(), "{counts:?}");
    }
}
