//! Message headers (`OfferOptions::header`): a small string map offered
//! beside a value and given to its handler with it, kept through every
//! give-back (nack, visibility timeout), into the dead letters and back out
//! with a requeue; the payload's bytes stay exactly the codec's, and Java's
//! keys never hold a value with headers.

use std::sync::Arc;
use std::time::Duration;

use delayq::error::BoxError;
#[cfg(feature = "tower")]
use delayq::worker::Job;
use delayq::{Error, Headers, OfferOptions, Priority, StringCodec};
use parking_lot::Mutex;
#[cfg(feature = "tower")]
use tower::service_fn;

use delayq_test_support::fault_proxy::Fault;
use delayq_test_support::{eventually, redis_test};

fn s(text: &str) -> String {
    text.to_owned()
}

/// Due now, with these headers.
fn with(headers: &[(&str, &str)]) -> OfferOptions {
    OfferOptions::after(Duration::ZERO).with_headers(headers.iter().copied().collect())
}

fn h(headers: &[(&str, &str)]) -> Headers {
    headers.iter().copied().collect()
}

redis_test! {
    /// A reliable take gets the headers with the value; the member holds
    /// the payload's bytes exactly as the codec wrote them, and Redisson's
    /// keys hold nothing (Java never sees a value with headers).
    async fn a_take_gets_the_headers_and_java_sees_nothing(client, raw) {
        let producer = client.delayed_queue("hdr-take", StringCodec).unwrap();
        let jobs = client.reliable_queue("hdr-take", StringCodec).unwrap();
        let headers = [("tenant", "acme"), ("trace", "ü-42 \"quoted\"")];
        producer.offer_with(&s("order-1"), &with(&headers)).await.unwrap();
        assert_eq!(raw.llen("hdr-take").await, 0);
        assert_eq!(raw.zcard("redisson_delay_queue_timeout:{hdr-take}").await, 0);
        let members = raw.zrange("delayq_priority_ready:{hdr-take}").await;
        assert_eq!(members.len(), 1);
        let member = &members[0].0;
        // The payload's bytes end the member, untouched.
        assert!(member.ends_with(b"order-1"), "{member:?}");
        let taken = jobs.take().await.unwrap();
        assert_eq!(taken.value(), "order-1");
        assert_eq!(taken.headers(), &h(&headers));
        assert_eq!(taken.priority(), Priority::DEFAULT);
        assert_eq!(taken.raw(), b"order-1");
        taken.ack().await.unwrap();
        // Acked: no section record is left behind.
        assert_eq!(raw.cmd("EXISTS", vec!["delayq_ttl:{hdr-take}".into()]).await.as_i64(), Some(0));
        // A plain value has none.
        producer.offer(&s("plain"), Duration::ZERO).await.unwrap();
        let plain = jobs.take().await.unwrap();
        assert!(plain.headers().is_empty());
        plain.ack().await.unwrap();
    }
}

redis_test! {
    /// Headers stay with the value through a nack (at once and with a
    /// delay), a visibility timeout, and at a priority with a TTL.
    async fn give_backs_keep_the_headers(client, raw) {
        let producer = client.delayed_queue("hdr-back", StringCodec).unwrap();
        let jobs = client.reliable_queue("hdr-back", StringCodec).unwrap();
        let short = jobs.clone().with_visibility_timeout(Duration::from_millis(300));
        let options = with(&[("k", "v")]).priority(Priority::new(4).unwrap()).ttl(Duration::from_secs(600));
        producer.offer_with(&s("x"), &options).await.unwrap();
        let first = jobs.take().await.unwrap();
        assert!(first.nack(Duration::ZERO).await.unwrap());
        let second = jobs.take().await.unwrap();
        assert_eq!((second.delivery_count(), second.headers()), (2, &h(&[("k", "v")])));
        assert!(second.nack(Duration::from_millis(200)).await.unwrap());
        assert_eq!(raw.zcard("delayq_priority_delayed:{hdr-back}").await, 1);
        tokio::time::sleep(Duration::from_millis(400)).await;
        let third = short.take().await.unwrap();
        assert_eq!((third.delivery_count(), third.headers()), (3, &h(&[("k", "v")])));
        std::mem::forget(third); // a consumer that died with it
        eventually(Duration::from_secs(60), "the reaper gives it back", || async {
            raw.zcard("delayq_priority_ready:{hdr-back}").await == 1
        })
        .await;
        let fourth = jobs.take().await.unwrap();
        assert_eq!(
            (fourth.value().as_str(), fourth.delivery_count(), fourth.priority().level()),
            ("x", 4, 4)
        );
        assert_eq!(fourth.headers(), &h(&[("k", "v")]));
        fourth.ack().await.unwrap();
    }
}

redis_test! {
    /// A dead letter keeps its headers (shown by the dead-letter page), and
    /// both requeues offer it again with them; an expired value's dead
    /// letter keeps them too.
    async fn dead_letters_and_their_requeues_keep_the_headers(client) {
        let producer = client.delayed_queue("hdr-dead", StringCodec).unwrap();
        let jobs = client.reliable_queue("hdr-dead", StringCodec).unwrap();
        producer.offer_with(&s("a"), &with(&[("n", "1")])).await.unwrap();
        producer.offer_with(&s("b"), &with(&[("n", "2")])).await.unwrap();
        producer.offer(&s("plain"), Duration::ZERO).await.unwrap();
        for _ in 0..3 {
            let taken = jobs.take().await.unwrap();
            taken.reject("bad input").await.unwrap();
        }
        let page = jobs.dead_letter_page(0, 10).await.unwrap();
        let seen: Vec<(String, Headers, Option<String>)> = page
            .iter()
            .map(|d| (d.value.as_ref().unwrap().clone(), d.headers.clone(), d.reason.clone()))
            .collect();
        let reason = Some(s("rejected: bad input"));
        assert_eq!(
            seen,
            [
                (s("a"), h(&[("n", "1")]), reason.clone()),
                (s("b"), h(&[("n", "2")]), reason.clone()),
                (s("plain"), Headers::new(), reason.clone()),
            ]
        );
        // One named exactly, then the rest in bulk.
        assert_eq!(jobs.requeue_dead_letters_exact(&[page[1].key.clone()]).await.unwrap().len(), 1);
        let back = jobs.take().await.unwrap();
        assert_eq!((back.value().as_str(), back.headers()), ("b", &h(&[("n", "2")])));
        back.ack().await.unwrap();
        assert_eq!(jobs.requeue_dead_letters(10).await.unwrap(), 2);
        let mut rest = Vec::new();
        for _ in 0..2 {
            let taken = jobs.take().await.unwrap();
            rest.push((taken.value().clone(), taken.headers().clone()));
            taken.ack().await.unwrap();
        }
        rest.sort();
        assert_eq!(rest, [(s("a"), h(&[("n", "1")])), (s("plain"), Headers::new())]);

        // Expired: dead-lettered with its headers, requeued without its TTL.
        let expiring = with(&[("n", "3")]).ttl(Duration::from_millis(200));
        producer.offer_with(&s("c"), &expiring).await.unwrap();
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert!(jobs.take_timeout(Duration::from_millis(300)).await.unwrap().is_none());
        let page = jobs.dead_letter_page(0, 10).await.unwrap();
        assert_eq!(page.len(), 1);
        assert_eq!((page[0].reason.as_deref(), &page[0].headers), (Some("expired"), &h(&[("n", "3")])));
        assert_eq!(jobs.requeue_dead_letters(10).await.unwrap(), 1);
        tokio::time::sleep(Duration::from_millis(300)).await;
        let revived = jobs.take().await.unwrap();
        assert_eq!((revived.value().as_str(), revived.headers()), ("c", &h(&[("n", "3")])));
    }
}

redis_test! {
    /// A value dead-lettered past its delivery limit keeps its headers, and
    /// so does its job id in the same record.
    async fn a_value_past_its_delivery_limit_keeps_its_headers(client) {
        let producer = client.delayed_queue("hdr-limit", StringCodec).unwrap();
        let jobs = client.reliable_queue("hdr-limit", StringCodec).unwrap().with_max_deliveries(1);
        producer.offer_with(&s("x"), &with(&[("why", "limit")])).await.unwrap();
        let first = jobs.take().await.unwrap();
        assert!(first.nack(Duration::ZERO).await.unwrap());
        assert!(jobs.take_timeout(Duration::from_millis(300)).await.unwrap().is_none());
        let page = jobs.dead_letter_page(0, 10).await.unwrap();
        assert_eq!(page.len(), 1);
        assert_eq!(page[0].headers, h(&[("why", "limit")]));
        assert!(page[0].reason.as_deref().unwrap().contains("max_deliveries 1"), "{:?}", page[0].reason);
    }
}

redis_test! {
    /// A worker's closure handler reads them with `Headers::current`.
    async fn workers_hand_the_headers_to_their_handlers(client) {
        let producer = client.delayed_queue("hdr-worker", StringCodec).unwrap();
        producer.offer_with(&s("one"), &with(&[("n", "1")])).await.unwrap();
        producer.offer(&s("two"), Duration::ZERO).await.unwrap();
        let seen: Arc<Mutex<Vec<(String, Headers, Headers)>>> = Arc::default();
        let worker = client.worker("hdr-worker", StringCodec).unwrap().concurrency(2).run({
            let seen = seen.clone();
            move |value: String| {
                let seen = seen.clone();
                async move {
                    // At the first poll (run in place), and after an
                    // `.await` that waits (the handler's own task).
                    let first = Headers::current();
                    tokio::task::yield_now().await;
                    seen.lock().push((value, first, Headers::current()));
                    Ok::<(), BoxError>(())
                }
            }
        });
        eventually(Duration::from_secs(60), "both handled", || async { seen.lock().len() == 2 }).await;
        worker.shutdown().await;
        let mut got = seen.lock().clone();
        got.sort();
        let one = h(&[("n", "1")]);
        assert_eq!(got, [(s("one"), one.clone(), one), (s("two"), Headers::new(), Headers::new())]);
        assert!(Headers::current().is_empty(), "outside a handler");
    }
}

#[cfg(feature = "tower")]
redis_test! {
    /// A tower service reads them from its `Job`.
    async fn a_tower_service_reads_the_headers_from_its_job(client) {
        let producer = client.delayed_queue("hdr-service", StringCodec).unwrap();
        producer.offer_with(&s("three"), &with(&[("n", "3")])).await.unwrap();
        let jobs: Arc<Mutex<Vec<(String, Headers)>>> = Arc::default();
        let worker = client.worker("hdr-service", StringCodec).unwrap().run_service(service_fn({
            let jobs = jobs.clone();
            move |job: Job<String>| {
                let jobs = jobs.clone();
                async move {
                    jobs.lock().push((job.value().clone(), job.headers().clone()));
                    Ok::<(), BoxError>(())
                }
            }
        }));
        eventually(Duration::from_secs(60), "the service handled it", || async { !jobs.lock().is_empty() }).await;
        worker.shutdown().await;
        assert_eq!(*jobs.lock(), [(s("three"), h(&[("n", "3")]))]);
    }
}

redis_test! {
    /// Equal payloads with different headers are different values, each
    /// with its own; a 10 KiB payload with nearly 8 KiB of headers keeps
    /// both; a blocking take gives them with `take_with_headers`.
    async fn equal_payloads_keep_their_own_headers_and_large_ones_fit(client) {
        let producer = client.delayed_queue("hdr-equal", StringCodec).unwrap();
        let consumer = client.blocking_queue("hdr-equal", StringCodec).unwrap();
        for n in ["1", "2", "3"] {
            producer.offer_with(&s("same"), &with(&[("n", n)])).await.unwrap();
        }
        let big = "p".repeat(10 * 1024);
        let long = "h".repeat(8000);
        producer.offer_with(&big, &with(&[("long", &long)])).await.unwrap();
        let rows = consumer.read_ready_entries(0, 10).await.unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[0].headers, h(&[("n", "1")]));
        for n in ["1", "2", "3"] {
            let taken = consumer.take_with_headers(Duration::from_secs(5)).await.unwrap();
            assert_eq!(taken, Some((s("same"), h(&[("n", n)]))));
        }
        let taken = consumer.take_with_headers(Duration::from_secs(5)).await.unwrap().unwrap();
        assert_eq!((taken.0.len(), taken.1.get("long").map(str::len)), (big.len(), Some(8000)));
        assert_eq!(consumer.take_with_headers(Duration::from_millis(200)).await.unwrap(), None);
    }
}

redis_test! {
    /// Headers past the limits fail the offer with a typed error, and
    /// nothing is written.
    async fn headers_past_their_limits_are_refused_and_nothing_is_written(client, raw) {
        let producer = client.delayed_queue("hdr-limits", StringCodec).unwrap();
        let many: Headers = (0..33).map(|i| (format!("k{i}"), s("v"))).collect();
        let too_many = OfferOptions::default().with_headers(many);
        assert!(matches!(producer.offer_with(&s("x"), &too_many).await, Err(Error::InvalidArgument(_))));
        let too_big = with(&[("k", &"x".repeat(Headers::MAX_BYTES))]);
        assert!(matches!(producer.offer_with(&s("x"), &too_big).await, Err(Error::InvalidArgument(_))));
        let unnamed = with(&[("", "v")]);
        assert!(matches!(producer.offer_with(&s("x"), &unnamed).await, Err(Error::InvalidArgument(_))));
        assert_eq!(raw.cmd("DBSIZE", vec![]).await.as_i64(), Some(0));
    }
}

redis_test! {
    /// A lost offer reply: fred sends the offer again (it is keyed by a
    /// request), and the value is there once, with its headers.
    async fn an_offer_whose_reply_is_lost_adds_its_value_once(proxy, client, raw) {
        let producer = client.delayed_queue("hdr-lost", StringCodec).unwrap();
        proxy.arm(Fault::LoseReply, "delayq_priority_ready:{hdr-lost}");
        producer.offer_with(&s("once"), &with(&[("k", "v")])).await.unwrap();
        assert_eq!(proxy.fired(), 1);
        assert_eq!(raw.zcard("delayq_priority_ready:{hdr-lost}").await, 1);
        let consumer = client.blocking_queue("hdr-lost", StringCodec).unwrap();
        assert_eq!(
            consumer.take_with_headers(Duration::from_secs(5)).await.unwrap(),
            Some((s("once"), h(&[("k", "v")])))
        );
        assert_eq!(consumer.try_take().await.unwrap(), None);
    }
}

redis_test! {
    /// Headers that do not read (a member written by hand) fail the take
    /// with a typed decode error, and the value is not lost: it goes back
    /// (or to the dead letters as the consumer chose), never delivered
    /// with wrong headers.
    async fn headers_that_do_not_read_are_a_typed_error_and_lose_nothing(client, raw) {
        let producer = client.delayed_queue("hdr-bad", StringCodec).unwrap();
        producer.offer_with(&s("x"), &with(&[("k", "v")])).await.unwrap();
        let members = raw.zrange("delayq_priority_ready:{hdr-bad}").await;
        let (member, score) = &members[0];
        // Same length, not JSON: `{"k":"v"}` becomes `{"k":"v"]`... kept
        // a valid section (its length holds), so only the JSON is wrong.
        let text = member.to_vec();
        let at = text.windows(9).position(|w| w == br#"{"k":"v"}"#).unwrap();
        let mut broken = text.clone();
        broken[at + 8] = b']';
        raw.cmd("DEL", vec!["delayq_priority_ready:{hdr-bad}".into()]).await;
        raw.cmd(
            "ZADD",
            vec![
                "delayq_priority_ready:{hdr-bad}".into(),
                (*score).into(),
                bytes::Bytes::from(broken).into(),
            ],
        )
        .await;
        let consumer = client.blocking_queue("hdr-bad", StringCodec).unwrap();
        match consumer.take_with_headers(Duration::from_secs(5)).await {
            Err(Error::Decode(error)) => assert!(error.restored(), "{error}"),
            other => panic!("expected a decode error, got {other:?}"),
        }
        assert_eq!(raw.zcard("delayq_priority_ready:{hdr-bad}").await, 1, "given back");
    }
}
