//! One exact pending element, named by its bytes: deleted, run now or
//! rescheduled, whether or not it has an id; a gone element is never
//! replaced by another one, byte-identical legacy copies are acted on one
//! at a time (or refused), and a resend acts on nothing twice.

use std::time::{Duration, SystemTime};

use bytes::Bytes;

use delayq::pending::ElementOutcome;
use delayq::{QueueKeys, StringCodec};

use delayq_test_support::{deadline, now_ms, redis_test, RedisServer};

const HOUR: Duration = Duration::from_secs(3600);

fn s(v: &str) -> String {
    v.to_owned()
}

/// A legacy element as Redisson before the random id packed it: the due
/// time as the f64 "id", so equal payloads due at the same ms are equal bytes.
fn legacy_identical(payload: &str, due_ms: i64) -> Vec<u8> {
    let mut e = (due_ms as f64).to_le_bytes().to_vec();
    e.extend((payload.len() as u64).to_le_bytes());
    e.extend(payload.as_bytes());
    e
}

redis_test! {
    async fn an_element_is_deleted_run_and_rescheduled_by_its_bytes_and_a_gone_one_changes_nothing(redis, client) {
        let q = client.delayed_queue("one", StringCodec).unwrap().without_transfer();
        for (i, v) in ["a", "b", "c", "d"].iter().enumerate() {
            q.offer(&s(v), HOUR + Duration::from_secs(i as u64)).await.unwrap();
        }
        let page = q.pending_page(0, 10).await.unwrap();
        let raw = |v: &str| {
            page.iter()
                .find(|e| e.value.as_deref().ok() == Some(v))
                .unwrap()
                .raw
                .clone()
        };

        // Delete: gone from both keys, the others stay in order.
        let b_due = page[1].due;
        assert_eq!(
            q.delete_element(&raw("b")).await.unwrap(),
            ElementOutcome::Done { due: b_due }
        );
        assert_eq!(q.read_all().await.unwrap(), [s("a"), s("c"), s("d")]);
        let keys = QueueKeys::new("one").unwrap();
        let raw_redis = redis.raw().await;
        assert_eq!(raw_redis.zcard(keys.timeout()).await, 3);

        // Run now: its payload is at the destination's tail, as a transfer leaves it.
        assert!(matches!(
            q.run_element_now(&raw("c")).await.unwrap(),
            ElementOutcome::Done { .. }
        ));
        assert_eq!(raw_redis.lrange(keys.destination()).await, [Bytes::from("c")]);
        assert_eq!(q.read_all().await.unwrap(), [s("a"), s("d")]);
        assert_eq!(raw_redis.zcard(keys.timeout()).await, 2);

        // Reschedule: new due time, same bytes, same place in the offer order.
        let soon = SystemTime::now() + Duration::from_secs(60);
        let outcome = q.reschedule_element_at(&raw("d"), soon).await.unwrap();
        let ElementOutcome::Done { due } = outcome else {
            panic!("{outcome:?}")
        };
        let page = q.pending_page(0, 10).await.unwrap();
        assert_eq!(page[0].value.as_deref().unwrap(), "d", "d is due first now");
        assert_eq!(page[0].due, due);
        assert_eq!(page[0].raw, raw("d"));
        assert_eq!(q.read_all().await.unwrap(), [s("a"), s("d")], "offer order kept");
        let relative = q.reschedule_element(&raw("d"), 2 * HOUR).await.unwrap();
        assert!(matches!(relative, ElementOutcome::Done { due } if due > SystemTime::now() + HOUR));

        // Gone (deleted, or moved by a transfer): every action says so and changes nothing.
        for gone in [raw("b"), raw("c")] {
            assert_eq!(q.delete_element(&gone).await.unwrap(), ElementOutcome::Gone);
            assert_eq!(q.run_element_now(&gone).await.unwrap(), ElementOutcome::Gone);
            assert_eq!(q.reschedule_element(&gone, HOUR).await.unwrap(), ElementOutcome::Gone);
        }
        assert_eq!(q.read_all().await.unwrap(), [s("a"), s("d")]);
        assert_eq!(raw_redis.lrange(keys.destination()).await, [Bytes::from("c")]);
        assert!(matches!(
            q.delete_element(b"").await,
            Err(delayq::Error::InvalidArgument(_))
        ));

        // Taken by a transfer between the page and the action: left alone.
        let overdue = delayq::format::pack(delayq::format::Format::Modern, b"due");
        raw_redis.seed("one", &overdue, now_ms() - 1_000).await;
        assert_eq!(q.pending_page(0, 1).await.unwrap()[0].raw, overdue);
        assert_eq!(q.transfer_now().await.unwrap().moved, 1);
        assert_eq!(q.run_element_now(&overdue).await.unwrap(), ElementOutcome::Gone);
        assert_eq!(q.delete_element(&overdue).await.unwrap(), ElementOutcome::Gone);
        assert_eq!(
            raw_redis.lrange(keys.destination()).await,
            [Bytes::from("c"), Bytes::from("due")]
        );
        assert_eq!(q.read_all().await.unwrap(), [s("a"), s("d")]);
    }
}

redis_test! {
    async fn of_equal_payloads_only_the_named_element_is_acted_on(client) {
        let q = client.delayed_queue("equal", StringCodec).unwrap().without_transfer();
        for i in 0..3 {
            q.offer(&s("same"), HOUR + Duration::from_secs(i)).await.unwrap();
        }
        let page = q.pending_page(0, 10).await.unwrap();
        assert_eq!(
            q.delete_element(&page[1].raw).await.unwrap(),
            ElementOutcome::Done { due: page[1].due }
        );
        let left = q.pending_page(0, 10).await.unwrap();
        let raws: Vec<_> = left.iter().map(|e| e.raw.clone()).collect();
        assert_eq!(raws, [page[0].raw.clone(), page[2].raw.clone()]);
        assert_eq!(q.delete_element(&page[1].raw).await.unwrap(), ElementOutcome::Gone);
        assert_eq!(q.len().await.unwrap(), 2, "a gone element takes no equal one with it");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn byte_identical_legacy_copies_are_taken_one_at_a_time_and_not_rescheduled_together() {
    deadline(async {
        let server = RedisServer::start().await;
        let client = server.client().await;
        let redis = server.raw().await;
        let keys = QueueKeys::new("twins").unwrap();
        let due = now_ms() + 3_600_000;
        let twin = legacy_identical("twin", due);
        // Two offers of Redisson before 3.21.1: one set member, two list entries.
        redis.seed("twins", &twin, due).await;
        redis.seed("twins", &twin, due).await;
        let q = client.delayed_queue("twins", StringCodec).unwrap().without_transfer();
        assert_eq!(
            q.reschedule_element(&twin, HOUR * 2).await.unwrap(),
            ElementOutcome::Copies
        );
        assert_eq!(
            redis.zrange(keys.timeout()).await,
            [(Bytes::from(twin.clone()), due)],
            "unchanged"
        );

        // Delete takes one copy; the other stays pending, due as before.
        assert!(matches!(
            q.delete_element(&twin).await.unwrap(),
            ElementOutcome::Done { .. }
        ));
        assert_eq!(redis.llen(keys.pending()).await, 1);
        assert_eq!(redis.zrange(keys.timeout()).await, [(Bytes::from(twin.clone()), due)]);
        // Now single: it may be rescheduled, then run.
        let later = SystemTime::now() + 2 * HOUR;
        assert!(matches!(
            q.reschedule_element_at(&twin, later).await.unwrap(),
            ElementOutcome::Done { .. }
        ));
        assert!(matches!(
            q.run_element_now(&twin).await.unwrap(),
            ElementOutcome::Done { .. }
        ));
        assert_eq!(redis.lrange(keys.destination()).await, [Bytes::from("twin")]);
        assert_eq!(
            (redis.llen(keys.pending()).await, redis.zcard(keys.timeout()).await),
            (0, 0)
        );

        // Run now with two copies: one copy is delivered, one stays.
        redis.seed("twins", &twin, due).await;
        redis.seed("twins", &twin, due).await;
        assert!(matches!(
            q.run_element_now(&twin).await.unwrap(),
            ElementOutcome::Done { .. }
        ));
        assert_eq!(redis.llen(keys.destination()).await, 2);
        assert_eq!(
            (redis.llen(keys.pending()).await, redis.zcard(keys.timeout()).await),
            (1, 1)
        );
    })
    .await;
}

redis_test! {
    async fn an_element_with_an_id_keeps_the_index_consistent(client) {
        let q = client.delayed_queue("indexed", StringCodec).unwrap().without_transfer();
        for id in ["r1", "d1", "x1"] {
            assert!(q.offer_with_id(id, &s(id), HOUR).await.unwrap());
        }
        let found = q.pending_by_id("r1").await.unwrap().expect("r1 pending");
        assert_eq!(found.id.as_deref(), Some("r1"));
        assert_eq!(found.value.as_deref().unwrap(), "r1");
        assert_eq!(q.pending_by_id("nope").await.unwrap().map(|e| e.raw), None);

        // Rescheduled by its bytes: still found by its id, at the new time.
        let later = SystemTime::now() + 3 * HOUR;
        let ElementOutcome::Done { due } = q.reschedule_element_at(&found.raw, later).await.unwrap() else {
            panic!("rescheduled")
        };
        assert_eq!(q.get("r1").await.unwrap().unwrap().due, due);
        assert!(q.reschedule("r1", HOUR).await.unwrap(), "the id still names it");

        // Deleted and run by their bytes: their ids leave the index and are free again.
        let d1 = q.pending_by_id("d1").await.unwrap().unwrap();
        let x1 = q.pending_by_id("x1").await.unwrap().unwrap();
        assert!(matches!(
            q.delete_element(&d1.raw).await.unwrap(),
            ElementOutcome::Done { .. }
        ));
        assert!(matches!(
            q.run_element_now(&x1.raw).await.unwrap(),
            ElementOutcome::Done { .. }
        ));
        assert_eq!(q.status().await.unwrap().ids, 1, "only r1 is indexed");
        assert!(q.pending_by_id("d1").await.unwrap().is_none());
        assert!(!q.cancel("x1").await.unwrap());
        assert!(
            q.offer_with_id("d1", &s("again"), HOUR).await.unwrap(),
            "the id is free"
        );
        assert_eq!(q.status().await.unwrap().ids, 2);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_now_waits_for_a_pause_and_refuses_a_malformed_element() {
    deadline(async {
        let server = RedisServer::start().await;
        let client = server.client().await;
        let redis = server.raw().await;
        let q = client.delayed_queue("held", StringCodec).unwrap().without_transfer();
        q.offer(&s("v"), HOUR).await.unwrap();
        let raw = q.pending_page(0, 1).await.unwrap()[0].raw.clone();
        q.pause().await.unwrap();
        assert_eq!(q.run_element_now(&raw).await.unwrap(), ElementOutcome::Paused);
        assert_eq!(q.len().await.unwrap(), 1);
        q.resume().await.unwrap();
        let junk = b"not a packed element".to_vec();
        redis.seed("held", &junk, now_ms() + 1000).await;
        assert_eq!(q.run_element_now(&junk).await.unwrap(), ElementOutcome::Malformed);
        assert!(matches!(
            q.delete_element(&junk).await.unwrap(),
            ElementOutcome::Done { .. }
        ));
        assert_eq!(q.read_all().await.unwrap(), [s("v")]);
        assert_eq!(redis.zcard(q.keys().timeout()).await, 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resent_action_after_a_lost_reply_answers_as_the_first_and_takes_no_second_copy() {
    deadline(async {
        let (server, proxy, client) = delayq_test_support::behind_proxy().await;
        let redis = server.raw().await;
        let keys = QueueKeys::new("{resent}").unwrap();
        let due = now_ms() + 3_600_000;
        let twin = legacy_identical("twin", due);
        for _ in 0..3 {
            redis.seed("{resent}", &twin, due).await;
        }
        let q = client
            .delayed_queue("{resent}", StringCodec)
            .unwrap()
            .without_transfer();
        // Script cached first: the lost reply must be the script's own.
        assert_eq!(q.delete_element(b"warm").await.unwrap(), ElementOutcome::Gone);
        for action in ["delete", "run"] {
            proxy.arm(delayq_test_support::fault_proxy::Fault::LoseReply, "{resent}");
            let fired = proxy.fired();
            let outcome = match action {
                "delete" => q.delete_element(&twin).await.unwrap(),
                _ => q.run_element_now(&twin).await.unwrap(),
            };
            assert_eq!(proxy.fired(), fired + 1, "{action}: the reply was lost and fred resent");
            assert_eq!(outcome, ElementOutcome::Done { due: delayq_time(due) }, "{action}");
        }
        assert_eq!(redis.llen(keys.pending()).await, 1, "one copy per action, not two");
        assert_eq!(redis.llen(keys.destination()).await, 1);
        assert_eq!(redis.zcard(keys.timeout()).await, 1);
    })
    .await;
}

fn delayq_time(ms: i64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_millis(ms as u64)
}
