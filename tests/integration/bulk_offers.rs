//! Bulk offers (`DelayedQueue::offer_all`, `lua/offer_all.lua`): what a
//! Java client sees is what the same values offered one by one leave;
//! one publish per chunk whose head is new; collisions; lost replies and
//! requests; large payloads; 100,000 values; wrong key types; a failure part
//! way says exactly how many values are queued.

use std::time::Duration;

use bytes::Bytes;
use delayq::format::{pack_with_id, unpack, ElementId, Format};
use delayq::fred::prelude::*;
use delayq::fred::types::Value;
use delayq::{Clock, Error, LongCodec, QueueKeys, StringCodec};

use delayq_test_support::fault_proxy::{Fault, FaultProxy};
use delayq_test_support::{deadline, eventually, now_ms, redis_test, Monitored, RawRedis, RedisServer};

const HOUR: Duration = Duration::from_secs(3600);

/// What a Java client of the queue reads: the pending list (format,
/// payload) in order, and each pending element's score.
#[derive(Debug)]
struct JavaView {
    pending: Vec<(Format, Bytes)>,
    scores: Vec<i64>,
}

async fn java_view(raw: &RawRedis, queue: &str) -> JavaView {
    let keys = QueueKeys::new(queue).unwrap();
    let list = raw.lrange(keys.pending()).await;
    let zset = raw.zrange(keys.timeout()).await;
    assert_eq!(list.len(), zset.len(), "{queue}: pending list and timeout set disagree");
    let mut pending = Vec::new();
    let mut scores = Vec::new();
    for element in &list {
        let unpacked = unpack(element).expect("a Redisson element");
        pending.push((unpacked.format(), Bytes::copy_from_slice(unpacked.payload)));
        let (_, score) = zset.iter().find(|(m, _)| m == element).expect("in the timeout set");
        scores.push(*score);
    }
    JavaView { pending, scores }
}

fn payloads(view: &JavaView) -> Vec<Bytes> {
    view.pending.iter().map(|(_, p)| p.clone()).collect()
}

fn b(v: &str) -> Bytes {
    Bytes::copy_from_slice(v.as_bytes())
}

/// Loads the bulk-offer script into the server's cache (an offer_all on
/// another queue), so that MONITOR sees each chunk once (no `NOSCRIPT`
/// EVALSHA before an EVAL) and each request reaches Redis as EVALSHA.
async fn warm(client: &delayq::Client) {
    let q = client.delayed_queue("warm", StringCodec).unwrap().without_transfer();
    q.offer_all([("warm".to_owned(), HOUR)]).await.unwrap();
}

/// The offer_all scripts MONITOR saw on a queue's keys (EVALSHA or EVAL).
fn bulk_scripts<'a>(seen: &'a [Monitored], queue: &str) -> Vec<&'a Monitored> {
    let pending = QueueKeys::new(queue).unwrap().pending().as_bytes().to_vec();
    seen.iter()
        .filter(|e| !e.from_lua && matches!(e.name().as_str(), "evalsha" | "eval"))
        .filter(|e| e.args.get(6).is_some_and(|k| k.starts_with(b"delayq_request:")) && e.args.contains(&pending))
        .collect()
}

/// The messages published on a queue's channel.
fn published(seen: &[Monitored], queue: &str) -> Vec<i64> {
    let channel = QueueKeys::new(queue).unwrap().channel().as_bytes().to_vec();
    seen.iter()
        .filter(|e| e.name() == "publish" && e.args[1] == channel)
        .map(|e| String::from_utf8_lossy(&e.args[2]).parse().unwrap())
        .collect()
}

redis_test! {
    async fn offer_all_leaves_what_offers_one_by_one_leave_in_both_formats(raw, client) {
        // Equal payloads, an empty one, non-ASCII, equal and distinct delays.
        let items: Vec<(String, Duration)> = (0..300)
            .map(|i| {
                let value = match i % 10 {
                    0 => "same".to_owned(),
                    1 => String::new(),
                    2 => format!("héllo ✓ {i}"),
                    _ => format!("v{i}"),
                };
                (value, HOUR + Duration::from_secs((i % 7) * 60))
            })
            .collect();
        for format in [Format::Modern, Format::Legacy] {
            let one_by_one = client
                .delayed_queue(&format!("single-{format}"), StringCodec)
                .unwrap()
                .without_transfer()
                .with_format(format);
            let bulk = client
                .delayed_queue(&format!("bulk-{format}"), StringCodec)
                .unwrap()
                .without_transfer()
                .with_format(format);
            let before = now_ms();
            for (value, delay) in &items {
                one_by_one.offer(value, *delay).await.unwrap();
            }
            bulk.offer_all(items.iter().map(|(v, d)| (v, *d))).await.unwrap();
            let after = now_ms();

            let single = java_view(&raw, one_by_one.name()).await;
            let bulked = java_view(&raw, bulk.name()).await;
            let expected: Vec<(Format, Bytes)> = items.iter().map(|(v, _)| (format, b(v))).collect();
            assert_eq!(single.pending, expected, "{format}: one by one");
            assert_eq!(
                bulked.pending, expected,
                "{format}: the same elements in the same order"
            );
            for (view, name) in [(&single, "one by one"), (&bulked, "bulk")] {
                for (i, score) in view.scores.iter().enumerate() {
                    let delay = items[i].1.as_millis() as i64;
                    assert!(
                        (before + delay..=after + delay).contains(score),
                        "{format} {name}: score of element {i}"
                    );
                }
            }
            // Each element's id is random and its layout the queue's format.
            let list = raw.lrange(bulk.keys().pending()).await;
            let header = if format == Format::Modern { 17 } else { 16 };
            for (element, (value, _)) in list.iter().zip(&items) {
                assert_eq!(element.len(), header + value.len());
            }
            let distinct: std::collections::HashSet<&Bytes> = list.iter().collect();
            assert_eq!(distinct.len(), items.len());
            let values: Vec<String> = items.iter().map(|(v, _)| v.clone()).collect();
            assert_eq!(bulk.read_all().await.unwrap(), values);
        }
    }
}

redis_test! {
    async fn each_chunk_publishes_once_and_only_when_it_holds_the_new_head(redis, raw, client) {
        let q = client.delayed_queue("pub", LongCodec).unwrap().without_transfer();
        warm(&client).await;
        let monitor = redis.monitor().await;

        // Each value is due before every earlier one: every chunk brings a new head.
        let n = 2_500i64;
        q.offer_all((0..n).map(|i| (i, HOUR + Duration::from_secs((n - i) as u64))))
            .await
            .unwrap();
        let seen = monitor.entries().await;
        let scripts = bulk_scripts(&seen, "pub").len();
        let messages = published(&seen, "pub");
        assert!(scripts > 1, "{scripts} scripts");
        assert_eq!(messages.len(), scripts, "one publish per chunk");
        assert!(messages.windows(2).all(|w| w[1] < w[0]), "{messages:?}");
        let head = raw.zrange(q.keys().timeout()).await[0].1;
        assert_eq!(*messages.last().unwrap(), head);

        // Nothing earlier than the head: no publish.
        q.offer_all((0..n).map(|i| (i, 2 * HOUR))).await.unwrap();
        let seen = monitor.entries().await;
        assert_eq!(published(&seen, "pub").len(), scripts);

        // One value in the middle becomes the head: one publish, its due time.
        q.offer_all([(1, 3 * HOUR), (2, Duration::from_secs(60)), (3, 3 * HOUR)])
            .await
            .unwrap();
        let seen = monitor.entries().await;
        let messages = published(&seen, "pub");
        assert_eq!(messages.len(), scripts + 1);
        let head = raw.zrange(q.keys().timeout()).await[0].1;
        assert_eq!(*messages.last().unwrap(), head);
        assert_eq!(q.len().await.unwrap(), 2 * n as usize + 3);
    }
}

/// Runs `lua/offer_all.lua` by hand: (start, [(due, element)]) -> its reply.
async fn run_chunk(raw: &RawRedis, queue: &str, request: &str, start: i64, chunk: &[(&str, &[u8])]) -> Value {
    let keys = QueueKeys::new(queue).unwrap();
    let body = delayq_test_support::script_body(include_str!("../../lua/offer_all.lua"));
    let mut args: Vec<Value> = vec![
        body.into(),
        4.into(),
        keys.timeout().into(),
        keys.pending().into(),
        keys.channel().into(),
        request.into(),
        start.into(),
    ];
    for (due, element) in chunk {
        args.push((*due).into());
        args.push(Value::Bytes(Bytes::copy_from_slice(element)));
    }
    raw.client
        .custom::<Value, Value>(
            delayq::fred::types::CustomCommand::new_static("EVAL", delayq::fred::types::ClusterHash::FirstKey, false),
            args,
        )
        .await
        .unwrap_or_else(|e| Value::String(format!("error: {e}").into()))
}

redis_test! {
    async fn the_script_stops_at_collisions_and_adds_nothing_twice(redis, raw) {
        let q = "by-hand";
        let request = "delayq_request:{by-hand}:test";
        let e = |i: u8| pack_with_id(ElementId::Modern([i; 8]), format!("v{i}").as_bytes());
        let view = || async { java_view(&raw, q).await };
        // A pending element with the bytes the chunk's second element has.
        raw.seed(q, &e(2), 5_000).await;
        let chunk = [("1000", &e(1)[..]), ("2000", &e(2)[..]), ("3000", &e(3)[..])];
        assert_eq!(run_chunk(&raw, q, request, 0, &chunk).await, Value::Integer(1));
        let after_collision = view().await;
        assert_eq!(payloads(&after_collision), [b("v2"), b("v1")]);
        // The same chunk again (a resend): nothing changes.
        assert_eq!(run_chunk(&raw, q, request, 0, &chunk).await, Value::Integer(1));
        assert_eq!(payloads(&view().await), [b("v2"), b("v1")]);
        // Re-packed from the collision on: element 0 is not added twice.
        let repacked = pack_with_id(ElementId::Modern([22; 8]), b"v2");
        let chunk = [("1000", &e(1)[..]), ("2000", &repacked[..]), ("3000", &e(3)[..])];
        assert_eq!(run_chunk(&raw, q, request, 0, &chunk).await, Value::Integer(3));
        let state = view().await;
        assert_eq!(payloads(&state), [b("v2"), b("v1"), b("v2"), b("v3")]);
        assert_eq!(state.scores, [5_000, 1_000, 2_000, 3_000]);
        // Added already, or early (its predecessor is not): nothing changes.
        assert_eq!(run_chunk(&raw, q, request, 1, &chunk[1..]).await, Value::Integer(3));
        assert_eq!(
            run_chunk(&raw, q, request, 5, &[("10", &e(9)[..])]).await,
            Value::Integer(3)
        );
        assert_eq!(view().await.pending.len(), 4);
        // A repeat inside the chunk stops it there.
        let chunk = [
            ("4000", &e(4)[..]),
            ("4000", &e(5)[..]),
            ("4000", &e(4)[..]),
            ("4000", &e(6)[..]),
        ];
        assert_eq!(run_chunk(&raw, q, request, 3, &chunk).await, Value::Integer(5));
        assert_eq!(payloads(&view().await)[4..], [b("v4"), b("v5")]);
        // Legacy elements collide the same way; the server's clock spelling.
        let legacy = pack_with_id(ElementId::Legacy(1.5e18), b"old");
        raw.seed(q, &legacy, 9_000).await;
        assert_eq!(
            run_chunk(&raw, q, request, 5, &[("100", &legacy[..])]).await,
            Value::Integer(5)
        );
        let monitor = redis.monitor().await;
        let other = pack_with_id(ElementId::Legacy(-7.0), b"old");
        let before = now_ms();
        let chunk = [("+60000", &other[..]), ("50", &e(7)[..])];
        assert_eq!(run_chunk(&raw, q, request, 5, &chunk).await, Value::Integer(7));
        let state = view().await;
        assert_eq!(
            state.pending[state.pending.len() - 2..],
            [(Format::Legacy, b("old")), (Format::Modern, b("v7"))]
        );
        let server = state.scores[state.scores.len() - 2];
        assert!((before + 60_000..=now_ms() + 60_000).contains(&server), "{server}");
        // The new head (50) is published, once.
        assert_eq!(published(&monitor.entries().await, q), [50]);
        // A key of the wrong type: an error, nothing written.
        let keys = QueueKeys::new("typed").unwrap();
        let _: () = raw.client.set(keys.pending(), "x", None, None, false).await.unwrap();
        let reply = run_chunk(&raw, "typed", "delayq_request:{typed}:t", 0, &[("1", &e(1)[..])]).await;
        assert!(format!("{reply:?}").contains("WRONGTYPE"), "{reply:?}");
        assert_eq!(raw.zcard(keys.timeout()).await, 0);
    }
}

/// offer_all of a, b, c where b's first packing collides with a pending
/// element: fastrand's generator is seeded so that the test knows the id
/// the client will draw (single-threaded runtime: nothing else draws).
#[tokio::test]
async fn a_collided_value_is_packed_again_in_its_place() {
    deadline(async {
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let client = redis.client().await;
        warm(&client).await;
        for format in [Format::Modern, Format::Legacy] {
            let name = format!("collide-{format}");
            let q = client
                .delayed_queue(&name, StringCodec)
                .unwrap()
                .without_transfer()
                .with_format(format);
            let monitor = redis.monitor().await;
            fastrand::seed(7);
            let _request_id = (fastrand::u64(..), fastrand::u64(..));
            let _a = ElementId::random(format);
            let id_of_b = ElementId::random(format);
            let colliding = pack_with_id(id_of_b, b"b");
            raw.seed(&name, &colliding, now_ms() + 10 * 3_600_000).await;
            fastrand::seed(7);
            q.offer_all([("a", HOUR), ("b", HOUR), ("c", HOUR)].map(|(v, d)| (v.to_owned(), d)))
                .await
                .unwrap();
            let seen = monitor.entries().await;
            assert_eq!(bulk_scripts(&seen, &name).len(), 2, "{format}: sent again from b");
            let list = raw.lrange(q.keys().pending()).await;
            assert_eq!(list.len(), 4);
            assert_eq!(list[0], colliding);
            assert_ne!(list[2], colliding, "{format}: b re-packed");
            let view = java_view(&raw, &name).await;
            assert_eq!(
                view.pending,
                ["b", "a", "b", "c"].map(|v| (format, b(v))),
                "{format}: b keeps its place"
            );
        }
    })
    .await;
}

/// A server, a proxy in front of it, and a delayq client through the proxy.
async fn behind_proxy(attempts: Option<u32>) -> (RedisServer, FaultProxy, delayq::Client) {
    let redis = RedisServer::start().await;
    let proxy = FaultProxy::start(redis.port()).await;
    let mut builder = delayq::Client::builder().url(proxy.url());
    if let Some(attempts) = attempts {
        builder = builder.customize(move |b| {
            b.with_connection_config(|c| c.max_command_attempts = attempts);
        });
    }
    let client = builder.build().await.expect("connect through the proxy");
    (redis, proxy, client)
}

fn numbered(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("v-{i:05}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_reply_or_request_leaves_each_value_once_in_order() {
    deadline(async {
        let (redis, proxy, client) = behind_proxy(None).await;
        let raw = redis.raw().await;
        let values = numbered(5_000);
        for (fault, name) in [(Fault::LoseReply, "lost-reply"), (Fault::LoseRequest, "lost-request")] {
            let q = client.delayed_queue(name, StringCodec).unwrap().without_transfer();
            let fired = proxy.fired();
            // A chunk in the middle: fred resends it and those after it.
            proxy.arm(fault, "v-02500");
            q.offer_all(values.iter().map(|v| (v, HOUR))).await.unwrap();
            assert_eq!(proxy.fired(), fired + 1, "{fault:?}");
            let view = java_view(&raw, name).await;
            let expected: Vec<Bytes> = values.iter().map(|v| b(v)).collect();
            assert_eq!(payloads(&view), expected, "{fault:?}");
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chunk_whose_reply_was_lost_adds_nothing_again_after_its_values_moved_on() {
    deadline(async {
        // No resends by fred: offer_all's own rounds send the chunk again.
        let (redis, proxy, client) = behind_proxy(Some(1)).await;
        let raw = redis.raw().await;
        let values = numbered(5_000);
        let q = client.delayed_queue("moved", StringCodec).unwrap().without_transfer();
        warm(&client).await;
        proxy.arm(Fault::LoseReplyThenOutage, "v-02500");
        let offering = {
            let q = q.clone();
            let values = values.clone();
            tokio::spawn(async move { q.offer_all(values.iter().map(|v| (v, Duration::ZERO))).await })
        };
        eventually(Duration::from_secs(20), "the fault fired", || async {
            proxy.fired() == 1
        })
        .await;
        // While the client cannot reach Redis, another one moves what is due,
        // the lost chunk's values included.
        let direct = redis.client().await;
        let _mover = direct.delayed_queue("moved", StringCodec).unwrap().with_transfer();
        let keys = QueueKeys::new("moved").unwrap();
        // The proxy counts the fault as it forwards the chunk, which Redis
        // may run a moment later: waited for, not read once.
        eventually(Duration::from_secs(30), "the lost chunk ran and moved on", || async {
            raw.zcard(keys.timeout()).await == 0 && raw.lrange(keys.destination()).await.contains(&b("v-02500"))
        })
        .await;
        proxy.set_outage(false);
        offering.await.unwrap().unwrap();
        eventually(Duration::from_secs(30), "all moved", || async {
            raw.zcard(keys.timeout()).await == 0 && raw.llen(keys.pending()).await == 0
        })
        .await;
        let mut all: Vec<Bytes> = raw.lrange(keys.destination()).await;
        all.sort();
        let expected: Vec<Bytes> = values.iter().map(|v| b(v)).collect();
        assert_eq!(all, expected, "each value exactly once");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_given_up_says_which_values_may_be_queued_and_no_more_land_later() {
    deadline(async {
        // No resends by fred, and commands that wait for a connection fail
        // after 500 ms: offer_all's own rounds keep trying for 30 s.
        let redis = RedisServer::start().await;
        let proxy = FaultProxy::start(redis.port()).await;
        let client = delayq::Client::builder()
            .url(proxy.url())
            .customize(|b| {
                b.with_connection_config(|c| c.max_command_attempts = 1);
                b.with_performance_config(|p| p.default_command_timeout = Duration::from_millis(500));
            })
            .build()
            .await
            .unwrap();
        let raw = redis.raw().await;
        warm(&client).await;
        let values = numbered(5_000);
        let q = client
            .delayed_queue("given-up", StringCodec)
            .unwrap()
            .without_transfer();
        // The chunk holding v-02500 runs, its reply is lost, and Redis stays
        // out of reach for longer than offer_all tries.
        proxy.arm(Fault::LoseReplyThenOutage, "v-02500");
        let error = q.offer_all(values.iter().map(|v| (v, HOUR))).await.unwrap_err();
        let Error::PartlyOffered { offered, unknown, .. } = error else {
            panic!("{error:?}")
        };
        assert!(offered <= 2_500 && offered + unknown > 2_500, "{offered} + {unknown}");
        proxy.set_outage(false);
        // The call is cancelled once Redis answers: nothing lands after that.
        eventually(Duration::from_secs(30), "the call cancelled", || async {
            let Value::Array(keys) = raw.cmd("KEYS", vec!["delayq_request:{given-up}*".into()]).await else {
                return false;
            };
            for key in keys {
                if let Value::Bytes(record) = raw.cmd("GET", vec![key]).await {
                    // cmsgpack {'cancelled'[, outcome]}: array, str8 header, text.
                    if record.get(2..11) == Some(&b"cancelled"[..]) {
                        return true;
                    }
                }
            }
            false
        })
        .await;
        let queued = payloads(&java_view(&raw, "given-up").await);
        let expected: Vec<Bytes> = values[..queued.len()].iter().map(|v| b(v)).collect();
        assert_eq!(queued, expected, "a prefix of the values, in order");
        assert!(
            (offered..=offered + unknown).contains(&queued.len()),
            "{} queued; {offered} + {unknown} said",
            queued.len()
        );
        q.offer_all([("after".to_owned(), HOUR)]).await.unwrap();
        assert_eq!(q.len().await.unwrap(), queued.len() + 1);
    })
    .await;
}

redis_test! {
    async fn chunks_that_run_out_of_order_after_a_script_flush_land_in_order(raw, client) {
        let q = client.delayed_queue("flushed", LongCodec).unwrap().without_transfer();
        // Each flush makes the chunks in flight fail with NOSCRIPT and each
        // falls back to EVAL on its own: they may run in any order.
        let flushing = tokio::spawn(async move {
            loop {
                raw.cmd("SCRIPT", vec!["FLUSH".into()]).await;
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        });
        let n = 20_000i64;
        q.offer_all((0..n).map(|i| (i, HOUR))).await.unwrap();
        flushing.abort();
        assert_eq!(q.read_all().await.unwrap(), (0..n).collect::<Vec<_>>());
    }
}

redis_test! {
    async fn large_payloads_go_in_chunks_bounded_by_bytes(redis, raw, client) {
        let q = client.delayed_queue("large", StringCodec).unwrap().without_transfer();
        let values: Vec<String> = (0..300)
            .map(|i| format!("{i:03}{}", "x".repeat(10 * 1024 + (i * 37) % 10_000)))
            .collect();
        let monitor = redis.monitor().await;
        q.offer_all(values.iter().map(|v| (v, HOUR))).await.unwrap();
        let seen = monitor.entries().await;
        let scripts = bulk_scripts(&seen, "large");
        assert!(scripts.len() >= 5, "{}", scripts.len());
        for script in scripts {
            // Arguments from the 8th: due, element, due, element...
            let bytes: usize = script.args[8..].iter().skip(1).step_by(2).map(Vec::len).sum();
            assert!(bytes <= 256 * 1024, "{bytes} bytes of elements in one script");
        }
        let expected: Vec<Bytes> = values.iter().map(|v| b(v)).collect();
        assert_eq!(payloads(&java_view(&raw, "large").await), expected);
    }
}

redis_test! {
    scale async fn a_hundred_thousand_values_in_one_call_are_each_there_once_and_delivered_once(raw, client) {
        let n = 100_000i64;
        let pending = client.delayed_queue("many", LongCodec).unwrap().without_transfer();
        pending.offer_all((0..n).map(|i| (i, HOUR))).await.unwrap();
        assert_eq!(pending.read_all().await.unwrap(), (0..n).collect::<Vec<_>>());
        assert_eq!(raw.zcard(pending.keys().timeout()).await, n as usize);

        let due = client.delayed_queue("many-due", LongCodec).unwrap().with_transfer();
        due.offer_all((0..n).map(|i| (i, Duration::ZERO))).await.unwrap();
        let destination = due.keys().destination().to_owned();
        eventually(Duration::from_secs(240), "all delivered", || async {
            raw.llen(&destination).await == n as usize
        })
        .await;
        let mut delivered: Vec<i64> = raw
            .lrange(&destination)
            .await
            .iter()
            .map(|v| std::str::from_utf8(v).unwrap().parse().unwrap())
            .collect();
        delivered.sort();
        assert_eq!(delivered, (0..n).collect::<Vec<_>>());
        assert_eq!(due.len().await.unwrap(), 0);
    }
}

redis_test! {
    async fn a_key_of_the_wrong_type_fails_the_call_with_nothing_written(raw, client) {
        for (name, broken) in [("typed-list", 0), ("typed-set", 1)] {
            let q = client.delayed_queue(name, StringCodec).unwrap().without_transfer();
            let key = [q.keys().pending(), q.keys().timeout()][broken].to_owned();
            let _: () = raw.client.set(&key, "x", None, None, false).await.unwrap();
            let error = q
                .offer_all(numbered(3_000).iter().map(|v| (v, HOUR)))
                .await
                .unwrap_err();
            assert!(matches!(error, Error::WrongType { .. }), "{error:?}");
            let other = [q.keys().timeout(), q.keys().pending()][broken];
            let exists: i64 = raw.client.exists(other).await.unwrap();
            assert_eq!(exists, 0, "{name}: nothing written");
        }
    }
}

redis_test! {
    async fn a_failure_part_way_says_exactly_how_many_values_are_queued(raw, client) {
        let q = client.delayed_queue("oom", StringCodec).unwrap().without_transfer();
        // Room for a few chunks of 10 KB values, not for all of them.
        let used: i64 = raw.info_field("memory", "used_memory").await.parse().unwrap();
        raw.cmd(
            "CONFIG",
            vec!["SET".into(), "maxmemory-policy".into(), "noeviction".into()],
        )
        .await;
        let limit = used + 14 * 1024 * 1024;
        raw.cmd("CONFIG", vec!["SET".into(), "maxmemory".into(), limit.into()])
            .await;
        let values: Vec<String> = (0..2_000).map(|i| format!("{i:04}{}", "x".repeat(10 * 1024))).collect();
        let error = q.offer_all(values.iter().map(|v| (v, HOUR))).await.unwrap_err();
        raw.cmd("CONFIG", vec!["SET".into(), "maxmemory".into(), 0.into()])
            .await;
        let Error::PartlyOffered {
            offered,
            unknown,
            ref source,
            ..
        } = error
        else {
            panic!("{error:?}")
        };
        assert!(source.to_string().contains("OOM"), "{source}");
        assert_eq!(unknown, 0);
        assert!(offered > 0 && offered < values.len(), "{offered}");
        let expected: Vec<Bytes> = values[..offered].iter().map(|v| b(v)).collect();
        assert_eq!(payloads(&java_view(&raw, "oom").await), expected);
    }
}

redis_test! {
    async fn on_the_server_clock_due_times_come_from_redis(redis, raw) {
        let client = redis.client_builder().clock(Clock::Server).build().await.unwrap();
        let q = client
            .delayed_queue("server-clock", LongCodec)
            .unwrap()
            .without_transfer();
        let before = now_ms();
        q.offer_all((0..2_500).map(|i| (i, Duration::from_secs(600 + i as u64))))
            .await
            .unwrap();
        let after = now_ms();
        let view = java_view(&raw, "server-clock").await;
        assert_eq!(view.pending.len(), 2_500);
        for (i, score) in view.scores.iter().enumerate() {
            let delay = (600 + i as i64) * 1000;
            assert!((before + delay..=after + delay).contains(score), "{i}: {score}");
        }
    }
}
