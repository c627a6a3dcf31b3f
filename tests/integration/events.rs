//! Lifecycle events (`Client::enable_events`, `Client::events`,
//! `lua/lib/events.lua`): each operation writes its event in its own script,
//! nothing is written while they are off, a resent script writes one, batch
//! runs write one each, the stream stays bounded, and a reader survives
//! reconnects, a deleted stream and bad keys.

use std::time::Duration;

use delayq::events::{Event, EventKind, Events, EventsFrom};
use delayq::fred::types::Value;
use delayq::schedule::every;
use delayq::{Client, Error, LongCodec, StringCodec};
use futures_util::StreamExt;

use delayq_test_support::fault_proxy::Fault;
use delayq_test_support::{deadline, eventually, redis_test, RawRedis};

/// Reads events until one of `kind`; returns it (others, such as the
/// transfers that run on their own, are skipped).
async fn next_of(events: &mut Events, kind: &str) -> Event {
    let found = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let event = events.next().await.expect("the stream goes on").expect("an event");
            if event.kind.name() == kind {
                return event;
            }
        }
    })
    .await;
    found.unwrap_or_else(|_| panic!("no `{kind}` event came"))
}

/// Every entry of the stream, oldest first: its id and its fields (name,
/// value, name, value, ...).
async fn entries(raw: &RawRedis, queue: &str) -> Vec<(String, Vec<Value>)> {
    let entries = raw
        .cmd(
            "XRANGE",
            vec![format!("delayq_events:{{{queue}}}").into(), "-".into(), "+".into()],
        )
        .await;
    let Value::Array(entries) = entries else {
        return Vec::new();
    };
    entries
        .into_iter()
        .map(|entry| {
            let Value::Array(mut pair) = entry else {
                panic!("an entry")
            };
            let (Value::Array(fields), id) = (pair.remove(1), pair.remove(0)) else {
                panic!("fields")
            };
            (id.as_string().unwrap(), fields)
        })
        .collect()
}

/// The `kind` field of every entry of the stream, oldest first.
async fn kinds(raw: &RawRedis, queue: &str) -> Vec<String> {
    (entries(raw, queue).await.into_iter())
        .map(|(_, fields)| fields[1].as_string().unwrap())
        .collect()
}

/// Every entry of the stream, decoded, oldest first.
async fn decoded(raw: &RawRedis, queue: &str) -> Vec<EventKind> {
    (entries(raw, queue).await.into_iter())
        .map(|(id, fields)| {
            let fields = (fields.chunks(2))
                .map(|kv| (kv[0].as_string().unwrap(), kv[1].as_string().unwrap()))
                .collect();
            Event::decode(queue, &id, fields).kind
        })
        .collect()
}

async fn exists(raw: &RawRedis, key: &str) -> bool {
    raw.cmd("EXISTS", vec![key.into()]).await.as_i64() == Some(1)
}

/// Every operation that changes a queue, once (each of the event kinds).
async fn every_operation(client: &Client, name: &str) {
    let q = client.delayed_queue(name, StringCodec).unwrap();
    q.offer(&"plain".into(), Duration::ZERO).await.unwrap();
    q.offer_with_id("job-1", &"with id".into(), Duration::from_secs(3600))
        .await
        .unwrap();
    assert!(q.reschedule("job-1", Duration::from_secs(7200)).await.unwrap());
    assert!(q.cancel("job-1").await.unwrap());
    q.offer(&"gone".into(), Duration::from_secs(3600)).await.unwrap();
    assert!(q.remove(&"gone".into()).await.unwrap());
    q.offer_all([("a".to_string(), Duration::ZERO), ("b".to_string(), Duration::ZERO)])
        .await
        .unwrap();
    q.pause().await.unwrap();
    assert!(q.resume().await.unwrap());
    let reliable = client.reliable_queue(name, StringCodec).unwrap().with_max_deliveries(1);
    let first = reliable.take().await.unwrap();
    assert!(first.ack().await.unwrap());
    let second = reliable.take().await.unwrap(); // "a"
    assert!(second.nack(Duration::ZERO).await.unwrap());
    let third = reliable.take().await.unwrap(); // "b"
    assert!(third.dead_letter().await.unwrap());
    // The second delivery of "a" is one too many: dead-lettered by the claim.
    let _ = reliable.take_timeout(Duration::from_millis(500)).await.unwrap();
    client
        .schedule("tick", every(Duration::from_millis(200)), &q, &"tick".into())
        .await
        .unwrap();
}

redis_test! {
    async fn each_operation_writes_its_event(client) {
        client
            .enable_events(&delayq::QueueKeys::new("ev").unwrap(), 1000)
            .await
            .unwrap();
        assert_eq!(
            client
                .events_max_len(&delayq::QueueKeys::new("ev").unwrap())
                .await
                .unwrap(),
            Some(1000)
        );
        let mut events = client
            .events(&delayq::QueueKeys::new("ev").unwrap())
            .unwrap()
            .from(EventsFrom::Oldest);
        every_operation(&client, "ev").await;

        let offered = next_of(&mut events, "offered").await;
        assert_eq!(offered.kind, EventKind::Offered { count: 1, id: None });
        assert_eq!(offered.queue, "ev");
        let with_id = next_of(&mut events, "offered").await;
        assert_eq!(
            with_id.kind,
            EventKind::Offered {
                count: 1,
                id: Some("job-1".into())
            }
        );
        assert!(matches!(next_of(&mut events, "rescheduled").await.kind,
            EventKind::Rescheduled { id: Some(id), due_ms } if id == "job-1" && due_ms > with_id.time_ms + 3_600_000));
        assert_eq!(
            next_of(&mut events, "cancelled").await.kind,
            EventKind::Cancelled {
                count: 1,
                id: Some("job-1".into())
            }
        );
        assert_eq!(
            next_of(&mut events, "offered").await.kind,
            EventKind::Offered { count: 1, id: None }
        );
        assert_eq!(
            next_of(&mut events, "cancelled").await.kind,
            EventKind::Cancelled { count: 1, id: None },
            "a removal by value"
        );
        assert_eq!(
            next_of(&mut events, "offered").await.kind,
            EventKind::Offered { count: 2, id: None }
        );
        next_of(&mut events, "paused").await;
        next_of(&mut events, "resumed").await;
        let claimed = next_of(&mut events, "claimed").await;
        let EventKind::Claimed {
            count: 1,
            deliveries,
            attempt: Some(1),
            jobs,
        } = claimed.kind
        else {
            panic!("{claimed:?}")
        };
        assert_eq!(deliveries.len(), 1);
        assert_eq!(deliveries[0].len(), 16, "8 bytes in hex");
        assert!(jobs.is_empty(), "a value offered without an id has no job");
        assert_eq!(
            next_of(&mut events, "acked").await.kind,
            EventKind::Acked {
                count: 1,
                deliveries,
                jobs: vec![]
            }
        );
        assert!(matches!(
            next_of(&mut events, "retried").await.kind,
            EventKind::Retried {
                attempt: 1,
                delay_ms: 0,
                ..
            }
        ));
        assert!(matches!(next_of(&mut events, "dead_lettered").await.kind,
            EventKind::DeadLettered { count: 1, reason, delivery: Some(_), .. } if reason.contains("dead_letter()")));
        assert!(matches!(next_of(&mut events, "dead_lettered").await.kind,
            EventKind::DeadLettered { count: 1, reason, delivery: None, .. } if reason.contains("max_deliveries 1")));
        assert_eq!(
            next_of(&mut events, "schedule_fired").await.kind,
            EventKind::ScheduleFired {
                schedule: "tick".into(),
                count: 1
            }
        );
        // Transfers run on their own, between the others: read again.
        let mut again = client
            .events(&delayq::QueueKeys::new("ev").unwrap())
            .unwrap()
            .from(EventsFrom::Oldest);
        assert!(matches!(next_of(&mut again, "transferred").await.kind,
            EventKind::Transferred { count, quarantined: 0 } if count >= 1));
        client.shutdown().await;
    }
}

redis_test! {
    async fn with_events_off_no_operation_writes_the_stream(raw, client) {
        every_operation(&client, "quiet").await;
        // Turned on and off again: off is off.
        client
            .enable_events(&delayq::QueueKeys::new("quiet").unwrap(), 10)
            .await
            .unwrap();
        assert!(client
            .disable_events(&delayq::QueueKeys::new("quiet").unwrap())
            .await
            .unwrap());
        assert_eq!(
            client
                .events_max_len(&delayq::QueueKeys::new("quiet").unwrap())
                .await
                .unwrap(),
            None
        );
        every_operation(&client, "quiet").await;
        tokio::time::sleep(Duration::from_millis(500)).await; // a schedule fire or two
        assert!(
            !exists(&raw, "delayq_events:{quiet}").await,
            "{:?}",
            kinds(&raw, "quiet").await
        );
        client.shutdown().await;
    }
}

redis_test! {
    /// The Worker claims and acks in batches: one event per batch, counts adding up.
    async fn a_worker_writes_one_event_per_batch(client) {
        client
            .enable_events(&delayq::QueueKeys::new("batches").unwrap(), 1000)
            .await
            .unwrap();
        let mut events = client
            .events(&delayq::QueueKeys::new("batches").unwrap())
            .unwrap()
            .from(EventsFrom::Oldest);
        let q = client.delayed_queue("batches", LongCodec).unwrap();
        q.destination().offer_all(0..200i64).await.unwrap();
        let worker = client
            .worker("batches", LongCodec)
            .unwrap()
            .concurrency(64)
            .run(|_: i64| async { Ok::<(), std::io::Error>(()) });
        let (mut claimed, mut acked, mut claims, mut acks) = (0, 0, 0, 0);
        while claimed < 200 || acked < 200 {
            let event = tokio::time::timeout(Duration::from_secs(20), events.next())
                .await
                .expect("events come")
                .unwrap()
                .unwrap();
            match event.kind {
                EventKind::Claimed { count, deliveries, .. } => {
                    assert_eq!(deliveries.len() as u64, count.min(32));
                    claimed += count;
                    claims += 1;
                }
                EventKind::Acked { count, .. } => {
                    acked += count;
                    acks += 1;
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!((claimed, acked), (200, 200));
        // 200 ready for 64 handlers: the first claim takes 64 at once.
        assert!(
            claims < 200 && acks < 200,
            "one event per batch, not per value: {claims} claims, {acks} acks"
        );
        worker.shutdown().await;
        client.shutdown().await;
    }
}

redis_test! {
    /// fred resends an ack whose reply was lost; the ack settles once, and so
    /// writes one event.
    async fn a_resent_ack_writes_one_event(proxy, client, raw) {
        client
            .enable_events(&delayq::QueueKeys::new("lost-ack").unwrap(), 1000)
            .await
            .unwrap();
        let q = client.delayed_queue("lost-ack", StringCodec).unwrap();
        q.destination().offer(&"v".to_string()).await.unwrap();
        q.destination().offer(&"w".to_string()).await.unwrap();
        let reliable = client.reliable_queue("lost-ack", StringCodec).unwrap();
        // The first ack loads the script: the lost one runs by EVALSHA (a
        // NOSCRIPT answer would mean it never ran, and nothing is resent).
        assert!(reliable.take().await.unwrap().ack().await.unwrap());
        let delivery = reliable.take().await.unwrap();
        let runs = raw.command_calls("evalsha").await;
        proxy.arm(Fault::LoseReply, "delayq_acked:{lost-ack}");
        assert!(delivery.ack().await.unwrap());
        assert_eq!(proxy.fired(), 1, "the reply was lost");
        assert!(raw.command_calls("evalsha").await >= runs + 2, "the ack ran again");
        assert_eq!(kinds(&raw, "lost-ack").await, ["claimed", "acked", "claimed", "acked"]);
    }
}

redis_test! {
    /// 10,000 values offered at once write one event per chunk, with counts
    /// adding up to 10,000.
    async fn offer_all_writes_one_event_per_chunk(raw, client) {
        client
            .enable_events(&delayq::QueueKeys::new("bulk").unwrap(), 100_000)
            .await
            .unwrap();
        let q = client.delayed_queue("bulk", LongCodec).unwrap();
        q.offer_all((0..10_000i64).map(|i| (i, Duration::from_secs(3600))))
            .await
            .unwrap();
        let mut events = client
            .events(&delayq::QueueKeys::new("bulk").unwrap())
            .unwrap()
            .from(EventsFrom::Oldest);
        let mut total = 0;
        let mut n = 0;
        while total < 10_000 {
            let event = events.next().await.unwrap().unwrap();
            let EventKind::Offered { count, id: None } = event.kind else {
                panic!("{event:?}")
            };
            total += count;
            n += 1;
        }
        assert_eq!(total, 10_000);
        assert!(n <= 10_000 / 250 + 1, "{n} events");
        assert_eq!(kinds(&raw, "bulk").await.len(), n);
    }
}

redis_test! {
    async fn maxlen_keeps_the_stream_bounded(raw, client) {
        client
            .enable_events(&delayq::QueueKeys::new("trimmed").unwrap(), 10)
            .await
            .unwrap();
        let q = client.delayed_queue("trimmed", LongCodec).unwrap();
        for i in 0..600i64 {
            q.offer_with_id(&i.to_string(), &i, Duration::from_secs(3600))
                .await
                .unwrap();
        }
        // `MAXLEN ~` trims whole nodes of the stream (100 entries each).
        let len = raw
            .cmd("XLEN", vec!["delayq_events:{trimmed}".into()])
            .await
            .as_i64()
            .unwrap();
        assert!((10..=110).contains(&len), "{len} entries kept");
        // The newest are kept.
        let newest = client
            .events(&delayq::QueueKeys::new("trimmed").unwrap())
            .unwrap()
            .from(EventsFrom::Oldest);
        let last = newest
            .take(len as usize)
            .collect::<Vec<_>>()
            .await
            .pop()
            .unwrap()
            .unwrap();
        assert_eq!(
            last.kind,
            EventKind::Offered {
                count: 1,
                id: Some("599".into())
            }
        );
    }
}

/// The next event a reading task sent.
async fn recv(rx: &mut tokio::sync::mpsc::UnboundedReceiver<Event>) -> Event {
    tokio::time::timeout(Duration::from_secs(20), rx.recv())
        .await
        .expect("the events written while the reader was cut off come")
        .unwrap()
}

/// A reader cut off from Redis reads on from its last event when it is back:
/// what was written meanwhile is neither lost nor repeated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_resumes_from_its_last_event_after_a_reconnect() {
    deadline(async {
        let (redis, proxy, reader) = delayq_test_support::behind_proxy().await;
        let writer = redis.client().await; // not through the proxy
        writer
            .enable_events(&delayq::QueueKeys::new("resumed").unwrap(), 1000)
            .await
            .unwrap();
        let q = writer.delayed_queue("resumed", LongCodec).unwrap();
        let mut events = reader.events(&delayq::QueueKeys::new("resumed").unwrap()).unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let reading = tokio::spawn(async move {
            while let Some(event) = events.next().await {
                if let Ok(event) = event {
                    let _ = tx.send(event);
                }
            }
        });
        // The reader waits: the offer comes after it started.
        let mut first = None;
        for i in 0.. {
            q.offer_with_id(&format!("before-{i}"), &i, Duration::from_secs(3600))
                .await
                .unwrap();
            if let Ok(Some(event)) = tokio::time::timeout(Duration::from_millis(300), rx.recv()).await {
                first = Some(event);
                break;
            }
        }
        let first = first.unwrap();
        proxy.set_outage(true);
        for i in 0..3 {
            q.offer_with_id(&format!("during-{i}"), &i, Duration::from_secs(3600))
                .await
                .unwrap();
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        proxy.set_outage(false);
        let mut after = Vec::new();
        while after.len() < 3 {
            after.push(recv(&mut rx).await);
        }
        assert!(after.iter().all(|e| e.stream_id > first.stream_id), "nothing repeated");
        let ids: Vec<_> = after
            .iter()
            .map(|e| match &e.kind {
                EventKind::Offered { id, .. } => id.clone().unwrap(),
                other => panic!("{other:?}"),
            })
            .collect();
        // Events of offers made before the reader got the first may follow
        // it; the three made while it was cut off come, in order.
        let during: Vec<_> = ids.iter().filter(|id| id.starts_with("during")).collect();
        assert!(during.is_empty() || during[0] == "during-0", "{ids:?}");
        let mut all = after;
        while !all
            .iter()
            .any(|e| matches!(&e.kind, EventKind::Offered { id: Some(id), .. } if id == "during-2"))
        {
            all.push(recv(&mut rx).await);
        }
        let during: Vec<_> = all
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::Offered { id: Some(id), .. } if id.starts_with("during") => Some(id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(during, ["during-0", "during-1", "during-2"]);
        reading.abort();
    })
    .await;
}

redis_test! {
    /// A stream key of another type: every instrumented operation fails before
    /// it changes anything, and a reader yields the error and goes on.
    async fn a_stream_key_of_the_wrong_type_fails_the_operation_and_loses_nothing(raw, client) {
        client
            .enable_events(&delayq::QueueKeys::new("wrong").unwrap(), 100)
            .await
            .unwrap();
        raw.cmd("HSET", vec!["delayq_events:{wrong}".into(), "f".into(), "v".into()])
            .await;
        let q = client.delayed_queue("wrong", StringCodec).unwrap();
        let failed = q.offer(&"kept".into(), Duration::from_secs(60)).await.unwrap_err();
        assert!(
            matches!(&failed, Error::WrongType { message, .. } if message.contains("delayq_events:{wrong}")),
            "{failed:?}"
        );
        let failed = q
            .offer_with_id("x", &"kept".into(), Duration::from_secs(60))
            .await
            .unwrap_err();
        assert!(matches!(&failed, Error::WrongType { .. }), "{failed:?}");
        assert_eq!(
            raw.zcard("redisson_delay_queue_timeout:{wrong}").await,
            0,
            "nothing offered"
        );
        assert!(matches!(
            client
                .enable_events(&delayq::QueueKeys::new("wrong").unwrap(), 100)
                .await,
            Err(Error::WrongType { .. })
        ));
        let mut events = client
            .events(&delayq::QueueKeys::new("wrong").unwrap())
            .unwrap()
            .from(EventsFrom::Oldest);
        assert!(matches!(events.next().await, Some(Err(Error::WrongType { .. }))));
        // Fixed by hand: the reader goes on, the operations work.
        raw.cmd("DEL", vec!["delayq_events:{wrong}".into()]).await;
        q.offer(&"now".into(), Duration::from_secs(60)).await.unwrap();
        assert_eq!(
            next_of(&mut events, "offered").await.kind,
            EventKind::Offered { count: 1, id: None }
        );
    }
}

redis_test! {
    /// A reliable take moves its value to the staging list before the claim
    /// script checks the events keys: a claim refused by a broken stream key
    /// (or switch) gives the value back to the head, so failed takes, however
    /// many, leave the queue as it was for every consumer (Java's included).
    async fn reliable_takes_refused_by_a_broken_events_key_leave_every_value_in_the_queue(raw, client) {
        let values: Vec<Value> = ["v1", "v2", "v3"].into_iter().map(Value::from).collect();
        let mut args = vec![Value::from("broken")];
        args.extend(values.iter().cloned());
        raw.cmd("RPUSH", args).await;
        client
            .enable_events(&delayq::QueueKeys::new("broken").unwrap(), 100)
            .await
            .unwrap();
        raw.cmd("SET", vec!["delayq_events:{broken}".into(), "not a stream".into()])
            .await;
        let q = client.reliable_queue("broken", StringCodec).unwrap();
        // More takes than values: each would have moved one away.
        for _ in 0..5 {
            let failed = q.take_timeout(Duration::from_millis(200)).await.unwrap_err();
            assert!(matches!(&failed, Error::WrongType { .. }), "{failed:?}");
        }
        let left: Vec<String> = raw
            .lrange("broken")
            .await
            .into_iter()
            .map(|b| String::from_utf8(b.to_vec()).unwrap())
            .collect();
        assert_eq!(left, ["v1", "v2", "v3"], "the queue as it was, in order");
        assert_eq!(raw.llen("delayq_staging:{broken}").await, 0, "nothing held in staging");

        // A switch that does not parse: the same.
        raw.cmd("DEL", vec!["delayq_events:{broken}".into()]).await;
        raw.cmd("SET", vec!["delayq_events_config:{broken}".into(), "many".into()])
            .await;
        let failed = q.take_timeout(Duration::from_millis(200)).await.unwrap_err();
        assert!(matches!(&failed, Error::EventsConfig { .. }), "{failed:?}");
        assert_eq!(raw.llen("broken").await, 3);
        assert_eq!(raw.llen("delayq_staging:{broken}").await, 0);

        // A take that waited for its value (BLMOVE on an empty queue) too.
        raw.cmd("DEL", vec!["broken".into()]).await;
        let waiting = tokio::spawn({
            let q = q.clone();
            async move { q.take_timeout(Duration::from_secs(30)).await }
        });
        eventually(Duration::from_secs(20), "the take waits in BLMOVE", || async {
            let clients = raw.cmd("CLIENT", vec!["LIST".into()]).await;
            clients.as_string().is_some_and(|s| s.contains("cmd=blmove"))
        })
        .await;
        raw.cmd("RPUSH", vec!["broken".into(), "w".into()]).await;
        let failed = waiting.await.unwrap().unwrap_err();
        assert!(matches!(&failed, Error::EventsConfig { .. }), "{failed:?}");
        assert_eq!(raw.lrange("broken").await, [bytes::Bytes::from_static(b"w")]);
        assert_eq!(raw.llen("delayq_staging:{broken}").await, 0);

        // Fixed: the values are taken in order.
        client
            .enable_events(&delayq::QueueKeys::new("broken").unwrap(), 100)
            .await
            .unwrap();
        let first = q.take_timeout(Duration::from_secs(5)).await.unwrap().expect("a value");
        assert_eq!(first.value(), "w");
    }
}

redis_test! {
    /// A switch that holds no max length: the operation fails with
    /// `Error::EventsConfig` and changes nothing; enabling again fixes it.
    async fn a_config_that_does_not_parse_fails_the_operation_and_loses_nothing(raw, client) {
        raw.cmd("SET", vec!["delayq_events_config:{badcfg}".into(), "lots".into()])
            .await;
        let q = client.delayed_queue("badcfg", StringCodec).unwrap();
        let failed = q.offer(&"v".into(), Duration::from_secs(60)).await.unwrap_err();
        assert!(
            matches!(&failed, Error::EventsConfig { key, message }
            if key == "delayq_events_config:{badcfg}" && message.contains("lots")),
            "{failed:?}"
        );
        assert!(matches!(
            client.events_max_len(&delayq::QueueKeys::new("badcfg").unwrap()).await,
            Err(Error::EventsConfig { .. })
        ));
        assert_eq!(
            raw.zcard("redisson_delay_queue_timeout:{badcfg}").await,
            0,
            "nothing offered"
        );
        client
            .enable_events(&delayq::QueueKeys::new("badcfg").unwrap(), 5)
            .await
            .unwrap();
        q.offer(&"v".into(), Duration::from_secs(60)).await.unwrap();
        assert_eq!(kinds(&raw, "badcfg").await, ["offered"]);
    }
}

redis_test! {
    /// The stream deleted by hand while a reader follows it: the reader keeps
    /// waiting and sees the events written after.
    async fn a_reader_goes_on_after_the_stream_is_deleted(raw, client) {
        client
            .enable_events(&delayq::QueueKeys::new("deleted").unwrap(), 100)
            .await
            .unwrap();
        let q = client.delayed_queue("deleted", StringCodec).unwrap();
        q.offer_with_id("one", &"v".into(), Duration::from_secs(60))
            .await
            .unwrap();
        let mut events = client
            .events(&delayq::QueueKeys::new("deleted").unwrap())
            .unwrap()
            .from(EventsFrom::Oldest);
        next_of(&mut events, "offered").await;
        let waiting = tokio::spawn(async move {
            let event = next_of(&mut events, "offered").await;
            (event, events.next().await.unwrap().unwrap())
        });
        tokio::time::sleep(Duration::from_millis(300)).await; // it waits in XREAD
        raw.cmd("DEL", vec!["delayq_events:{deleted}".into()]).await;
        eventually(Duration::from_secs(5), "deleted", || async {
            !exists(&raw, "delayq_events:{deleted}").await
        })
        .await;
        q.offer_with_id("two", &"v".into(), Duration::from_secs(60))
            .await
            .unwrap();
        q.offer_with_id("three", &"v".into(), Duration::from_secs(60))
            .await
            .unwrap();
        let (two, three) = waiting.await.unwrap();
        assert_eq!(
            two.kind,
            EventKind::Offered {
                count: 1,
                id: Some("two".into())
            }
        );
        assert_eq!(
            three.kind,
            EventKind::Offered {
                count: 1,
                id: Some("three".into())
            }
        );
    }
}

redis_test! {
    /// The actions on one element by its bytes (the dashboard's): a delete is a
    /// cancel, a run now a transfer of one, a reschedule a reschedule (no id).
    async fn actions_on_one_element_write_their_events(raw, client) {
        let q = client
            .delayed_queue("elements", StringCodec)
            .unwrap()
            .without_transfer();
        for v in ["a", "b", "c"] {
            q.offer(&v.into(), Duration::from_secs(3600)).await.unwrap();
        }
        client
            .enable_events(&delayq::QueueKeys::new("elements").unwrap(), 100)
            .await
            .unwrap();
        let page = q.pending_page(0, 10).await.unwrap();
        let bytes = |v: &str| {
            page.iter()
                .find(|e| e.value.as_deref().ok() == Some(v))
                .unwrap()
                .raw
                .clone()
        };
        q.delete_element(&bytes("a")).await.unwrap();
        q.run_element_now(&bytes("b")).await.unwrap();
        q.reschedule_element(&bytes("c"), Duration::from_secs(60))
            .await
            .unwrap();
        // Gone now: nothing done, no event.
        q.delete_element(&bytes("a")).await.unwrap();
        assert_eq!(
            kinds(&raw, "elements").await,
            ["cancelled", "transferred", "rescheduled"]
        );
        let mut events = client
            .events(&delayq::QueueKeys::new("elements").unwrap())
            .unwrap()
            .from(EventsFrom::Oldest);
        assert_eq!(
            next_of(&mut events, "cancelled").await.kind,
            EventKind::Cancelled { count: 1, id: None }
        );
        assert_eq!(
            next_of(&mut events, "transferred").await.kind,
            EventKind::Transferred {
                count: 1,
                quarantined: 0
            }
        );
        assert!(matches!(
            next_of(&mut events, "rescheduled").await.kind,
            EventKind::Rescheduled { id: None, due_ms } if due_ms > 0
        ));
    }
}

redis_test! {
    /// A delivery left unsettled past its visibility timeout: the reaper gives
    /// it back and writes `timed_out`.
    async fn a_reaped_delivery_writes_timed_out(raw, client) {
        client
            .enable_events(&delayq::QueueKeys::new("reaped").unwrap(), 100)
            .await
            .unwrap();
        let q = client
            .reliable_queue("reaped", StringCodec)
            .unwrap()
            .with_visibility_timeout(Duration::from_millis(100));
        let delayed = client.delayed_queue("reaped", StringCodec).unwrap();
        delayed.destination().offer(&"v".to_string()).await.unwrap();
        let delivery = q.take().await.unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        // This call or the client's own reaper gives it back: one event.
        q.reap_now().await.unwrap();
        let mut events = client
            .events(&delayq::QueueKeys::new("reaped").unwrap())
            .unwrap()
            .from(EventsFrom::Oldest);
        assert_eq!(
            next_of(&mut events, "timed_out").await.kind,
            EventKind::TimedOut { count: 1 }
        );
        // Settling it now finds no lease: nothing more is written.
        assert!(!delivery.ack().await.unwrap());
        assert_eq!(kinds(&raw, "reaped").await, ["claimed", "timed_out"]);
    }
}

redis_test! {
    /// Values a worker claimed ahead of its slots and gives back as it stops
    /// reached no handler: one `released` event for them all (one release,
    /// their counts unchanged), no `retried` one.
    async fn values_a_stopping_worker_held_ahead_are_released_not_retried(raw, client) {
        client
            .enable_events(&delayq::QueueKeys::new("ahead").unwrap(), 10_000)
            .await
            .unwrap();
        client
            .blocking_queue("ahead", LongCodec)
            .unwrap()
            .offer_all(0..300i64)
            .await
            .unwrap();
        let gate = std::sync::Arc::new(tokio::sync::Semaphore::new(0));
        let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let worker = client.worker("ahead", LongCodec).unwrap().concurrency(1).run({
            let (gate, runs) = (gate.clone(), runs.clone());
            move |_: i64| {
                let (gate, runs) = (gate.clone(), runs.clone());
                async move {
                    // Ten quick runs set a quick pace; the eleventh is stuck.
                    if runs.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 10 {
                        let _ = gate.acquire().await;
                    }
                    Ok::<_, delayq::error::BoxError>(())
                }
            }
        });
        let queue = client.reliable_queue("ahead", LongCodec).unwrap();
        eventually(
            Duration::from_secs(20),
            "values claimed ahead of the stuck handler",
            || async { runs.load(std::sync::atomic::Ordering::SeqCst) == 11 && queue.in_flight().await.unwrap() > 1 },
        )
        .await;
        worker.stop();
        eventually(
            Duration::from_secs(20),
            "all but the running one given back",
            || async { queue.in_flight().await.unwrap() == 1 },
        )
        .await;
        gate.close();
        worker.join().await;
        let events = decoded(&raw, "ahead").await;
        let claimed: u64 = (events.iter())
            .filter_map(|e| match e {
                EventKind::Claimed { count, .. } => Some(count),
                _ => None,
            })
            .sum();
        let released: Vec<u64> = (events.iter())
            .filter_map(|e| match e {
                EventKind::Released { count, deliveries, .. } => {
                    assert_eq!(deliveries.len() as u64, (*count).min(32));
                    Some(*count)
                }
                _ => None,
            })
            .collect();
        // Eleven ran; every other value claimed went back.
        assert_eq!(released, [claimed - 11], "one release of all the others");
        assert!(!events.iter().any(|e| e.name() == "retried"), "retried: {events:?}");
    }
}

redis_test! {
    /// `newest_events` reads the newest events the stream keeps, oldest first:
    /// what a live view opens with.
    async fn the_newest_events_come_oldest_first(client) {
        assert!(
            client
                .newest_events(&delayq::QueueKeys::new("newest").unwrap(), 2)
                .await
                .unwrap()
                .is_empty(),
            "no stream yet"
        );
        client
            .enable_events(&delayq::QueueKeys::new("newest").unwrap(), 1000)
            .await
            .unwrap();
        let queue = client.delayed_queue("newest", StringCodec).unwrap().without_transfer();
        for id in ["a", "b", "c"] {
            queue
                .offer_with_id(id, &id.to_owned(), Duration::from_secs(3600))
                .await
                .unwrap();
        }
        let all = client
            .kept_events(&delayq::QueueKeys::new("newest").unwrap(), EventsFrom::Oldest, 10)
            .await
            .unwrap();
        let newest = client
            .newest_events(&delayq::QueueKeys::new("newest").unwrap(), 2)
            .await
            .unwrap();
        assert_eq!(newest, all[all.len() - 2..].to_vec());
        let ids: Vec<_> = newest
            .iter()
            .map(|e| match &e.kind {
                EventKind::Offered { id, .. } => id.clone(),
                other => panic!("an offer: {other:?}"),
            })
            .collect();
        assert_eq!(ids, [Some("b".to_owned()), Some("c".to_owned())]);
    }
}
