//! Elements with ids: one per id while pending, cancel, reschedule and get by
//! id, and an index that never outlives its elements for long, whoever
//! (delayq or Java) moves or removes them.

use std::time::{Duration, SystemTime};

use futures_util::{stream, StreamExt};

use delayq::format::{unpack, Format};
use delayq::fred::prelude::*;
use delayq::{QueueKeys, StringCodec};

use delayq_test_support::{eventually, redis_test};

fn s(v: &str) -> String {
    v.to_owned()
}

const HOUR: Duration = Duration::from_secs(3600);

redis_test! {
    async fn an_id_is_offered_once_while_pending_and_found_cancelled_and_replaced_by_it(client) {
        let q = client.delayed_queue("reminders", StringCodec).unwrap();
        assert!(q.offer_with_id("order-42", &s("first"), HOUR).await.unwrap());
        assert!(!q.offer_with_id("order-42", &s("second"), HOUR).await.unwrap());
        assert_eq!(q.len().await.unwrap(), 1);
        let found = q.get("order-42").await.unwrap().expect("pending");
        assert_eq!(found.value, "first");
        let left = found.due.duration_since(SystemTime::now()).unwrap();
        assert!(left > Duration::from_secs(3500) && left <= HOUR, "{left:?}");

        // Replacing: new value and due time, still one element.
        assert!(!q.replace_with_id("order-42", &s("third"), 2 * HOUR).await.unwrap());
        assert_eq!(q.read_all().await.unwrap(), [s("third")]);
        let found = q.get("order-42").await.unwrap().unwrap();
        assert!(found.due.duration_since(SystemTime::now()).unwrap() > HOUR);

        // Cancelled: gone, and the id is free again.
        assert!(q.cancel("order-42").await.unwrap());
        assert!(!q.cancel("order-42").await.unwrap());
        assert_eq!(q.get("order-42").await.unwrap(), None);
        assert_eq!(q.len().await.unwrap(), 0);
        assert!(q.offer_with_id("order-42", &s("again"), HOUR).await.unwrap());
        assert_eq!(q.status().await.unwrap().ids, 1);

        // Bad ids are refused before anything is sent.
        assert!(matches!(q.cancel("").await, Err(delayq::Error::InvalidArgument(_))));
        let long = "x".repeat(2000);
        assert!(matches!(
            q.offer_with_id(&long, &s("v"), HOUR).await,
            Err(delayq::Error::InvalidArgument(_))
        ));
    }
}

redis_test! {
    async fn equal_payloads_under_different_ids_are_different_elements(client) {
        let q = client.delayed_queue("same", StringCodec).unwrap();
        for id in ["a", "b", "c"] {
            assert!(q.offer_with_id(id, &s("payload"), HOUR).await.unwrap());
        }
        q.offer(&s("payload"), HOUR).await.unwrap(); // and one without an id
        assert_eq!(q.len().await.unwrap(), 4);
        assert!(q.cancel("b").await.unwrap());
        assert_eq!(q.len().await.unwrap(), 3);
        assert!(q.get("a").await.unwrap().is_some() && q.get("c").await.unwrap().is_some());
        assert!(q.get("b").await.unwrap().is_none());
    }
}

redis_test! {
    async fn an_element_with_an_id_is_an_ordinary_redisson_element_in_either_format(client, raw) {
        let keys = QueueKeys::new("fmt").unwrap();
        for (format, id) in [(Format::Modern, "m"), (Format::Legacy, "l")] {
            let q = client
                .delayed_queue("fmt", StringCodec)
                .unwrap()
                .without_transfer()
                .with_format(format);
            assert!(q.offer_with_id(id, &s(id), HOUR).await.unwrap());
            assert_eq!(q.get(id).await.unwrap().unwrap().value, id);
        }
        // Both layouts unpack as Redisson's, one element in the set and the list each.
        let zset = raw.zrange(keys.timeout()).await;
        let list = raw.lrange(keys.pending()).await;
        assert_eq!(zset.len(), 2);
        assert_eq!(list.len(), 2);
        let mut formats: Vec<Format> = list.iter().map(|e| unpack(e).unwrap().format()).collect();
        formats.sort_by_key(|f| f.as_str());
        assert_eq!(formats, [Format::Legacy, Format::Modern]);
        // The same id gives the same element bytes (so a retried offer is the same element).
        let q = client.delayed_queue("fmt", StringCodec).unwrap().without_transfer();
        assert!(q.cancel("m").await.unwrap());
        assert!(q.offer_with_id("m", &s("m"), HOUR).await.unwrap());
        assert!(raw.zrange(keys.timeout()).await.iter().any(|(e, _)| list.contains(e)));
        // A plain reader (as Java's readAll) sees both values.
        let mut all = q.read_all().await.unwrap();
        all.sort();
        assert_eq!(all, [s("l"), s("m")]);
    }
}

redis_test! {
    async fn a_rescheduled_element_moves_at_its_new_time(client) {
        let q = client.delayed_queue("later", StringCodec).unwrap();
        assert!(q.offer_with_id("r", &s("soon"), HOUR).await.unwrap());
        assert!(!q.reschedule("missing", Duration::ZERO).await.unwrap());
        assert!(q.reschedule("r", Duration::from_millis(100)).await.unwrap());
        // The reschedule published the new head: the transfer wakes for it.
        let got = q.destination().take_timeout(Duration::from_secs(20)).await.unwrap();
        assert_eq!(got, Some(s("soon")));
        assert_eq!(q.get("r").await.unwrap(), None);
        let at = SystemTime::now() + HOUR;
        assert!(q.offer_with_id("r", &s("x"), Duration::from_secs(1)).await.unwrap());
        assert!(q.reschedule_at("r", at).await.unwrap());
        let due = q.get("r").await.unwrap().unwrap().due;
        let off = due.duration_since(at).unwrap_or_else(|e| e.duration());
        assert!(off < Duration::from_millis(2), "{off:?}");
    }
}

redis_test! {
    async fn two_clients_offering_one_id_at_once_offer_it_once(redis) {
        let (a, b) = (redis.client().await, redis.client().await);
        let qa = a.delayed_queue("race", StringCodec).unwrap();
        let qb = b.delayed_queue("race", StringCodec).unwrap();
        for round in 0..50 {
            let id = format!("job-{round}");
            let (va, vb) = (s("a"), s("b"));
            let (x, y) = tokio::join!(qa.offer_with_id(&id, &va, HOUR), qb.offer_with_id(&id, &vb, HOUR));
            assert!(
                x.unwrap() ^ y.unwrap(),
                "exactly one of the two offers is new ({round})"
            );
        }
        assert_eq!(qa.len().await.unwrap(), 50);
        // A cancel racing a transfer: the element is either cancelled or delivered, never both.
        for round in 0..50 {
            let id = format!("due-{round}");
            assert!(qa.offer_with_id(&id, &s(&id), Duration::ZERO).await.unwrap());
            let transfer = qb.transfer_now();
            let cancel = qa.cancel(&id);
            let (moved, cancelled) = tokio::join!(transfer, cancel);
            let moved = moved.unwrap().moved;
            let cancelled = cancelled.unwrap();
            let delivered = qa.destination().try_take().await.unwrap();
            // A move by the scheduler may also have won the race.
            assert_eq!(
                cancelled,
                delivered.is_none(),
                "round {round}: moved {moved}, cancelled {cancelled}"
            );
        }
    }
}

redis_test! {
    scale async fn a_hundred_thousand_ids_leave_no_index_behind_once_transferred(client, raw) {
        let keys = QueueKeys::new("many").unwrap();
        let q = client.delayed_queue("many", StringCodec).unwrap().without_transfer();
        let n = 100_000;
        stream::iter(0..n)
            .for_each_concurrent(256, |i| {
                let q = q.clone();
                async move {
                    assert!(q
                        .offer_with_id(&format!("id-{i}"), &format!("v{i}"), Duration::ZERO)
                        .await
                        .unwrap());
                }
            })
            .await;
        let hlen: i64 = raw.client.hlen(keys.ids()).await.unwrap();
        assert_eq!(hlen, n as i64);
        // delayq's transfer drops the index entry of each element it moves.
        let mover = client.delayed_queue("many", StringCodec).unwrap();
        eventually(Duration::from_secs(120), "all transferred", || async {
            raw.llen("many").await == n
        })
        .await;
        drop(mover);
        let hlen: i64 = raw.client.hlen(keys.ids()).await.unwrap();
        assert_eq!(hlen, 0, "index entries left after every element moved");
    }
}

redis_test! {
    async fn ids_of_elements_java_removed_are_cleaned_up_as_new_ids_come(client, raw) {
        let keys = QueueKeys::new("javaside").unwrap();
        let q = client
            .delayed_queue("javaside", StringCodec)
            .unwrap()
            .without_transfer();
        for i in 0..1_000 {
            q.offer_with_id(&format!("old-{i}"), &s("v"), HOUR).await.unwrap();
        }
        // Java removes them (its transfer or its remove: the elements leave
        // both keys, and Java knows nothing of delayq's index).
        let _: i64 = raw.client.del(vec![keys.timeout(), keys.pending()]).await.unwrap();
        assert_eq!(raw.client.hlen::<i64, _>(keys.ids()).await.unwrap(), 1_000);
        // A removed id is free again at once: the offer checks the element, not the entry.
        assert!(q.offer_with_id("old-0", &s("again"), HOUR).await.unwrap());
        for i in 0..1_000 {
            q.offer_with_id(&format!("new-{i}"), &s("v"), HOUR).await.unwrap();
        }
        let left: i64 = raw.client.hlen(keys.ids()).await.unwrap();
        let stale = left - 1_001;
        // Each offer checks 3 random entries: most stale ones are gone.
        assert!(stale < 500, "{stale} of 999 stale entries left after 1,000 offers");
        // And get() drops a stale entry it meets.
        for i in 1..1_000 {
            assert_eq!(q.get(&format!("old-{i}")).await.unwrap(), None);
        }
        assert_eq!(raw.client.hlen::<i64, _>(keys.ids()).await.unwrap(), 1_001);
    }
}

redis_test! {
    async fn a_java_remove_of_an_element_with_an_id_frees_the_id(client, raw) {
        let keys = QueueKeys::new("jr").unwrap();
        let q = client.delayed_queue("jr", StringCodec).unwrap().without_transfer();
        assert!(q.offer_with_id("a", &s("x"), HOUR).await.unwrap());
        assert!(q.offer_with_id("b", &s("x"), HOUR).await.unwrap());
        // Java's RDelayedQueue.remove("x") takes the first element whose
        // payload is "x" out of both keys (ZREM + LREM), as its script does.
        let first = raw.lrange(keys.pending()).await[0].clone();
        let _: i64 = raw.client.zrem(keys.timeout(), first.to_vec()).await.unwrap();
        let _: i64 = raw.client.lrem(keys.pending(), 1, first.to_vec()).await.unwrap();
        assert_eq!(
            q.get("a").await.unwrap(),
            None,
            "the removed element is gone for delayq too"
        );
        assert_eq!(q.get("b").await.unwrap().unwrap().value, "x");
        assert!(!q.cancel("a").await.unwrap());
        assert!(
            q.offer_with_id("a", &s("again"), HOUR).await.unwrap(),
            "the id is free again"
        );
        let mut values = q.read_all().await.unwrap();
        values.sort();
        assert_eq!(values, [s("again"), s("x")]);
        assert_eq!(raw.client.hlen::<i64, _>(keys.ids()).await.unwrap(), 2);
    }
}

redis_test! {
    async fn ids_survive_a_format_migration_and_one_id_stays_one_element_across_formats(client) {
        let legacy = client
            .delayed_queue("mig", StringCodec)
            .unwrap()
            .without_transfer()
            .with_format(Format::Legacy);
        let modern = client.delayed_queue("mig", StringCodec).unwrap().without_transfer();
        assert!(legacy.offer_with_id("a", &s("1"), HOUR).await.unwrap());
        // The same id from a handle writing the other layout is the same id.
        assert!(!modern.offer_with_id("a", &s("2"), HOUR).await.unwrap());
        assert!(legacy.offer_with_id("b", &s("3"), HOUR).await.unwrap());
        legacy.offer(&s("plain"), HOUR).await.unwrap();
        let report = modern.migrate(Format::Modern, 2).await.unwrap();
        assert_eq!(report.converted, 3);
        // Found, cancelled and offered by id as before, in the new layout.
        assert_eq!(modern.get("a").await.unwrap().unwrap().value, "1");
        assert!(!modern.offer_with_id("b", &s("again"), HOUR).await.unwrap());
        assert!(modern.cancel("b").await.unwrap());
        assert_eq!(modern.len().await.unwrap(), 2);
        let formats: Vec<_> = modern
            .pending_page(0, 10)
            .await
            .unwrap()
            .into_iter()
            .map(|e| (e.format, e.id))
            .collect();
        assert!(formats.contains(&(Some(Format::Modern), Some(s("a")))), "{formats:?}");
        assert!(formats.contains(&(Some(Format::Modern), None)), "{formats:?}");
    }
}

redis_test! {
    scale async fn a_hundred_thousand_ids_java_removed_are_cleaned_by_transfers_without_new_offers(client, raw) {
        let keys = QueueKeys::new("gone").unwrap();
        let q = client.delayed_queue("gone", StringCodec).unwrap().without_transfer();
        let n = 100_000;
        stream::iter(0..n)
            .for_each_concurrent(256, |i| {
                let q = q.clone();
                async move {
                    q.offer_with_id(&format!("id-{i}"), &format!("v{i}"), HOUR)
                        .await
                        .unwrap();
                }
            })
            .await;
        // Java takes them all (its transfer or removes: both keys emptied;
        // it knows nothing of the index), and no id is offered after.
        let _: i64 = raw.client.del(vec![keys.timeout(), keys.pending()]).await.unwrap();
        assert_eq!(raw.client.hlen::<i64, _>(keys.ids()).await.unwrap(), n as i64);
        // Each delayq transfer run checks the next 500 entries.
        let mut runs = 0;
        while raw.client.exists::<i64, _>(keys.ids()).await.unwrap() == 1 {
            q.transfer_now().await.unwrap();
            runs += 1;
            assert!(
                runs <= 2 * n / 500 + 10,
                "still {} entries after {runs} runs",
                raw.client.hlen::<i64, _>(keys.ids()).await.unwrap()
            );
        }
        println!("{n} stale index entries gone after {runs} transfer runs");
    }
}

redis_test! {
    async fn two_ids_with_the_same_id_bytes_fail_rather_than_act_on_each_other(client, raw) {
        let keys = QueueKeys::new("clash").unwrap();
        let q = client.delayed_queue("clash", StringCodec).unwrap().without_transfer();
        assert!(q.offer_with_id("mine", &s("v"), HOUR).await.unwrap());
        // Make the entry say another id owns these bytes, as a SHA-1 prefix
        // collision would (entry: u16 length, id, element).
        let element = raw.lrange(keys.pending()).await[0].clone();
        let field = element[1..9].to_vec();
        let mut entry = vec![0, 5];
        entry.extend_from_slice(b"other");
        entry.extend_from_slice(&element);
        raw.cmd(
            "HSET",
            vec![
                keys.ids().into(),
                bytes::Bytes::from(field).into(),
                bytes::Bytes::from(entry).into(),
            ],
        )
        .await;
        for error in [
            q.get("mine").await.map(|_| ()).unwrap_err(),
            q.cancel("mine").await.map(|_| ()).unwrap_err(),
            q.offer_with_id("mine", &s("w"), HOUR).await.map(|_| ()).unwrap_err(),
        ] {
            assert!(error.to_string().contains("DELAYQ_ID_COLLISION"), "{error}");
        }
        assert_eq!(q.read_all().await.unwrap(), [s("v")], "nothing changed");
    }
}

/// A string codec whose first decode signals it started, waits until the
/// test releases it, then fails: the element is out of the queue for as
/// long as the test likes, and then given back.
struct HeldThenFailing {
    entered: std::sync::Arc<std::sync::atomic::AtomicBool>,
    release: std::sync::Mutex<Option<std::sync::mpsc::Receiver<()>>>,
}

impl delayq::Codec<String> for HeldThenFailing {
    fn name(&self) -> &'static str {
        "held-then-failing"
    }

    fn encode(&self, value: &String) -> Result<bytes::Bytes, delayq::error::BoxError> {
        Ok(bytes::Bytes::copy_from_slice(value.as_bytes()))
    }

    fn decode(&self, _raw: &[u8]) -> Result<String, delayq::error::BoxError> {
        let release = self.release.lock().unwrap().take();
        self.entered.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(release) = release {
            // block_in_place: this worker's queued tasks move to another
            // thread while the decode waits.
            tokio::task::block_in_place(|| release.recv_timeout(Duration::from_secs(30))).ok();
        }
        Err("refused by the test codec".into())
    }
}

/// Polls `held` (whose codec holds the removed element out until released),
/// runs `meanwhile` while the element is out, then lets the decode fail so
/// the element is given back; returns the poll's error.
async fn out_and_back<F: std::future::Future<Output = ()>>(
    held: delayq::DelayedQueue<String>,
    entered: std::sync::Arc<std::sync::atomic::AtomicBool>,
    release: std::sync::mpsc::Sender<()>,
    meanwhile: F,
) -> delayq::Error {
    let poll = tokio::spawn(async move { held.remove_first().await });
    eventually(Duration::from_secs(20), "the element polled and held", || async {
        entered.load(std::sync::atomic::Ordering::SeqCst)
    })
    .await;
    meanwhile.await;
    release.send(()).unwrap();
    poll.await.unwrap().unwrap_err()
}

/// The codec, its "decode entered" flag and its release.
fn held_then_failing() -> (
    HeldThenFailing,
    std::sync::Arc<std::sync::atomic::AtomicBool>,
    std::sync::mpsc::Sender<()>,
) {
    let (tx, rx) = std::sync::mpsc::channel();
    let entered = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let codec = HeldThenFailing {
        entered: entered.clone(),
        release: std::sync::Mutex::new(Some(rx)),
    };
    (codec, entered, tx)
}

redis_test! {
    async fn an_id_survives_a_decode_failures_give_back_while_other_id_calls_and_a_transfer_ran(redis, client) {
        let q = client.delayed_queue("held", StringCodec).unwrap().without_transfer();
        assert!(q.offer_with_id("reminder", &s("call back"), HOUR).await.unwrap());
        let (codec, entered, release) = held_then_failing();
        let held = client.delayed_queue("held", codec).unwrap().without_transfer();
        let error = out_and_back(held, entered, release, async {
            // While the element is out, every call that checks index entries
            // runs: a lookup, an id offer (it samples the index) and a
            // transfer (it sweeps the index).
            assert_eq!(q.get("reminder").await.unwrap(), None);
            assert!(q.offer_with_id("other", &s("x"), HOUR).await.unwrap());
            q.transfer_now().await.unwrap();
        })
        .await;
        assert!(
            matches!(error, delayq::Error::Decode(ref e) if e.restored()),
            "{error:?}"
        );
        // Back under its id: found, rescheduled and cancelled by it.
        assert_eq!(q.get("reminder").await.unwrap().unwrap().value, "call back");
        assert!(q.reschedule("reminder", Duration::from_millis(1)).await.unwrap());
        assert!(q.cancel("reminder").await.unwrap());
        assert_eq!(q.read_all().await.unwrap(), [s("x")]);
        // The cancelled reminder is not delivered.
        q.transfer_now().await.unwrap();
        assert_eq!(redis.raw().await.llen("held").await, 0);
        assert_eq!(q.status().await.unwrap().ids, 1);
    }
}

redis_test! {
    async fn an_id_offered_again_while_its_element_is_out_stays_with_the_newer_element(client, raw) {
        // "again-a": another value under the id; "again-b": the same value.
        for (queue, again) in [("again-a", "new"), ("again-b", "old")] {
            let q = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
            assert!(q.offer_with_id("a", &s("old"), HOUR).await.unwrap());
            let (codec, entered, release) = held_then_failing();
            let held = client.delayed_queue(queue, codec).unwrap().without_transfer();
            out_and_back(held, entered, release, async {
                // The id is free while its element is out.
                assert!(q.offer_with_id("a", &s(again), HOUR).await.unwrap());
            })
            .await;
            assert_eq!(q.get("a").await.unwrap().unwrap().value, again, "{queue}");
            let mut all = q.read_all().await.unwrap();
            all.sort();
            let keys = QueueKeys::new(queue).unwrap();
            if again == "new" {
                // The newer element keeps the id; the old one is back as a
                // plain element.
                assert_eq!(all, [s("new"), s("old")]);
                assert_eq!(raw.zcard(keys.timeout()).await, 2);
                assert!(q.cancel("a").await.unwrap());
                assert_eq!(q.read_all().await.unwrap(), [s("old")]);
            } else {
                // The same id and value: one element, not two.
                assert_eq!(all, [s("old")]);
                assert_eq!(raw.llen(keys.pending()).await, 1);
                assert!(q.cancel("a").await.unwrap());
                assert_eq!(q.len().await.unwrap(), 0);
            }
        }
    }
}

redis_test! {
    async fn ids_survive_a_lost_reply_undone_after_an_outage_in_which_other_calls_ran(redis) {
        let direct = redis.client().await;
        let proxy = delayq_test_support::fault_proxy::FaultProxy::start(redis.port()).await;
        let cut_off = delayq_test_support::without_resends(&proxy).await;
        // Scripts loaded first: a NOSCRIPT answer must not be what is lost.
        let warm = cut_off.delayed_queue("warm", StringCodec).unwrap().without_transfer();
        assert_eq!(warm.remove_first().await.unwrap(), None);
        assert_eq!(warm.remove_pending(1).await.unwrap().removed, 0);
        for queue in ["{undone-poll}", "{undone-purge}"] {
            let q = direct.delayed_queue(queue, StringCodec).unwrap().without_transfer();
            for id in ["p1", "p2"] {
                assert!(q.offer_with_id(id, &s(id), HOUR).await.unwrap());
            }
            let through = cut_off.delayed_queue(queue, StringCodec).unwrap().without_transfer();
            // The removal runs, its reply is lost and an outage follows: the
            // cancel that gives p1 back waits for the outage to end.
            proxy.arm(delayq_test_support::fault_proxy::Fault::LoseReplyThenOutage, queue);
            let error = if queue == "{undone-poll}" {
                through.remove_first().await.map(|_| ()).unwrap_err()
            } else {
                through.remove_pending(1).await.map(|_| ()).unwrap_err()
            };
            assert!(error.is_transient(), "{error:?}");
            assert_eq!(q.len().await.unwrap(), 1, "{queue}");
            // Meanwhile, from another client: a lookup, an id offer and a transfer.
            assert_eq!(q.get("p1").await.unwrap(), None);
            assert!(q.offer_with_id("p3", &s("p3"), HOUR).await.unwrap());
            q.transfer_now().await.unwrap();
            proxy.set_outage(false);
            eventually(Duration::from_secs(30), "p1 back", || async {
                q.len().await.unwrap() == 3
            })
            .await;
            for id in ["p1", "p2", "p3"] {
                assert_eq!(q.get(id).await.unwrap().unwrap().value, id, "{queue} {id}");
            }
            assert!(q.cancel("p1").await.unwrap(), "{queue}");
            let mut left = q.read_all().await.unwrap();
            left.sort();
            assert_eq!(left, [s("p2"), s("p3")], "{queue}");
        }
        cut_off.shutdown().await;
    }
}
