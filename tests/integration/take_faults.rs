//! Takes through an outage and through a stalled connection: a take cut
//! short never leaves a pop behind that runs later for no one, a take with a
//! deadline returns near it, and a take whose time is up tells "unreachable"
//! from "empty".

use std::time::Duration;

use bytes::Bytes;
use delayq::fred::prelude::*;
use delayq::StringCodec;
use futures_util::future::join_all;

use delayq_test_support::fault_proxy::Fault;
use delayq_test_support::{bytes, eventually, redis_test};

redis_test! {
    async fn takes_dropped_during_a_long_outage_pop_nothing_when_redis_is_back(redis, proxy, client, raw) {
        let _: i64 = raw
            .client
            .rpush("outage", bytes(&["a", "b", "c", "d", "e", "f"]))
            .await
            .unwrap();
        let q = client.blocking_queue("outage", StringCodec).unwrap();
        // A value found: the next takes try LPOP first.
        assert_eq!(q.take().await.unwrap(), "a");
        proxy.set_outage(true);
        tokio::time::sleep(Duration::from_millis(200)).await;
        // One take alone, then four at once (joined into LPOP key n), each
        // given up by its caller while Redis cannot be reached.
        assert!(tokio::time::timeout(Duration::from_millis(300), q.take())
            .await
            .is_err());
        let four = join_all((0..4).map(|_| q.take()));
        assert!(tokio::time::timeout(Duration::from_millis(300), four).await.is_err());
        // Longer than any abandoned command is waited for before: a pop
        // queued in fred meanwhile would be written now, for no one.
        tokio::time::sleep(Duration::from_secs(7)).await;
        proxy.set_outage(false);
        eventually(Duration::from_secs(20), "the client reconnected", || async {
            client.redis().ping::<String>(None).await.is_ok()
        })
        .await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(raw.lrange("outage").await, bytes(&["b", "c", "d", "e", "f"]));
        // And takes work again, in order.
        assert_eq!(q.take().await.unwrap(), "b");
        assert_eq!(
            q.take_timeout(Duration::from_secs(5)).await.unwrap().as_deref(),
            Some("c")
        );
    }
}

redis_test! {
    async fn a_take_timeout_on_a_stalled_connection_fails_near_its_deadline_and_loses_nothing(proxy, client, raw) {
        let _: i64 = raw.client.rpush("stalled", bytes(&["a", "b", "c"])).await.unwrap();
        let q = client.blocking_queue("stalled", StringCodec).unwrap();
        assert_eq!(q.take().await.unwrap(), "a");
        // The LPOP of the next take is written and held on its way.
        proxy.set_stalled(true);
        let taken = tokio::time::timeout(Duration::from_secs(8), q.take_timeout(Duration::from_secs(1)))
            .await
            .expect("take_timeout(1 s) returns on a stalled connection, not when it heals");
        let error = taken.expect_err("a stalled connection is an error, not an empty queue");
        assert!(error.is_transient(), "{error}");
        // The pop reaches Redis when the stall ends; what it popped for a
        // take that is gone goes back to the head.
        proxy.set_stalled(false);
        // (The list reads [b, c] before the held LPOP has run too: wait for it.)
        eventually(Duration::from_secs(20), "the popped value back at the head", || async {
            raw.command_calls("lpop").await >= 2 && raw.lrange("stalled").await == bytes(&["b", "c"])
        })
        .await;
        assert_eq!(q.take().await.unwrap(), "b");
        assert_eq!(q.take().await.unwrap(), "c");
    }
}

redis_test! {
    async fn takes_that_wait_in_line_during_an_outage_report_it_not_an_empty_queue(redis, proxy, client, raw) {
        let q = client.blocking_queue("in-line", StringCodec).unwrap();
        // Found empty: the takes go (mostly) straight to waiting, and two
        // wait at a time: the others wait in line behind them.
        assert_eq!(q.take_timeout(Duration::ZERO).await.unwrap(), None);
        proxy.set_outage(true);
        let takes = (0..6).map(|_| {
            let q = q.clone();
            // 8 s: on a loaded machine a take in line whose time is up
            // before the leads have failed knows nothing yet (None); 3 s
            // was too short once with the dashboard's tests running beside.
            tokio::spawn(async move { q.take_timeout(Duration::from_secs(8)).await })
        });
        let taken = tokio::time::timeout(Duration::from_secs(30), join_all(takes))
            .await
            .expect("every take returns near its deadline");
        for taken in taken {
            let error = taken.unwrap().expect_err("Redis is unreachable: an error, not None");
            assert!(error.is_transient(), "{error}");
        }
        // Reachable and empty again: None, not a stale error.
        proxy.set_outage(false);
        eventually(Duration::from_secs(20), "the client reconnected", || async {
            client.redis().ping::<String>(None).await.is_ok()
        })
        .await;
        let takes = (0..6).map(|_| {
            let q = q.clone();
            tokio::spawn(async move { q.take_timeout(Duration::from_secs(1)).await })
        });
        for taken in join_all(takes).await {
            assert_eq!(taken.unwrap().unwrap(), None);
        }
        let _: i64 = raw.client.rpush("in-line", bytes(&["x"])).await.unwrap();
        assert_eq!(
            q.take_timeout(Duration::from_secs(5)).await.unwrap().as_deref(),
            Some("x")
        );
    }
}

redis_test! {
    /// Every connection goes silent for good (a NAT or load balancer forgot the
    /// flows; nothing is closed, so TCP never notices): an offer made then does
    /// not hang, the client replaces its connections, and offers, transfers and
    /// takes work again.
    async fn connections_that_go_silent_are_replaced_and_deliveries_resume(proxy, client, raw) {
        let delayed = client.delayed_queue("silent", StringCodec).unwrap();
        let q = client.blocking_queue("silent", StringCodec).unwrap();
        delayed
            .offer(&"before".to_owned(), Duration::from_millis(100))
            .await
            .unwrap();
        assert_eq!(
            q.take_timeout(Duration::from_secs(10)).await.unwrap().as_deref(),
            Some("before")
        );
        proxy.black_hole();
        // Sent into the void: an error (it never reached Redis), not a hang.
        let offered = tokio::time::timeout(
            Duration::from_secs(40),
            delayed.offer(&"lost".to_owned(), Duration::from_millis(100)),
        )
        .await
        .expect("an offer on a silent connection returns");
        assert!(offered.is_err(), "{offered:?}");
        // New connections work: the next offer goes through and is delivered.
        delayed
            .offer(&"after".to_owned(), Duration::from_millis(100))
            .await
            .unwrap();
        assert_eq!(
            q.take_timeout(Duration::from_secs(30)).await.unwrap().as_deref(),
            Some("after")
        );
        assert_eq!(raw.llen("silent").await, 0);
        assert_eq!(raw.zcard("redisson_delay_queue_timeout:{silent}").await, 0);
    }
}

redis_test! {
    /// fred fails a `fail_fast` command sent while the connection is down with
    /// this exact error, and nowhere else: `Error::never_sent` (src/error.rs)
    /// relies on it to keep "a value may be lost" warnings for pops that were
    /// sent. Checked here so that a fred upgrade that rewords it is noticed.
    async fn a_fail_fast_command_on_a_connection_that_is_down_fails_as_never_sent(proxy, client) {
        proxy.set_outage(true);
        let conn = client.redis().next().clone();
        eventually(Duration::from_secs(20), "fred saw the connection drop", || async {
            !conn.is_connected()
        })
        .await;
        let fail_fast = Options {
            fail_fast: true,
            max_attempts: Some(1),
            ..Options::default()
        };
        let error = conn
            .with_options(&fail_fast)
            .lpop::<Option<Bytes>, _>("down", None)
            .await
            .expect_err("the connection is down");
        assert_eq!(*error.kind(), delayq::fred::error::ErrorKind::Canceled);
        assert_eq!(error.details(), "Connection closed unexpectedly.");
    }
}

redis_test! {
    async fn a_reliable_take_timeout_on_a_stalled_connection_fails_near_its_deadline_and_loses_nothing(proxy, client, raw) {
        let _: i64 = raw.client.rpush("rstalled", bytes(&["a", "b", "c"])).await.unwrap();
        let q = client.reliable_queue("rstalled", StringCodec).unwrap();
        let first = q.take().await.unwrap();
        assert_eq!(first.value(), "a");
        assert!(first.ack().await.unwrap());
        // The LMOVE of the next take is written and held on its way.
        proxy.set_stalled(true);
        let taken = tokio::time::timeout(Duration::from_secs(8), q.take_timeout(Duration::from_secs(1)))
            .await
            .expect("take_timeout(1 s) returns on a stalled connection, not when it heals");
        let error = taken.expect_err("a stalled connection is an error, not an empty queue");
        assert!(error.is_transient(), "{error}");
        // The move runs when the stall ends; its value goes back to the head.
        proxy.set_stalled(false);
        // (The list reads [b, c] before the held LMOVE has run too: wait for it.)
        eventually(Duration::from_secs(20), "the moved value back at the head", || async {
            raw.command_calls("lmove").await >= 2 && raw.lrange("rstalled").await == bytes(&["b", "c"])
        })
        .await;
        for expected in ["b", "c"] {
            let delivery = q.take().await.unwrap();
            assert_eq!(delivery.value(), expected);
            assert!(delivery.ack().await.unwrap());
        }
    }
}

redis_test! {
    /// A reliable take dropped while its claim is on its way (a worker that
    /// stops, a `select!` that moved on): the claim ends in the background and
    /// its value goes back to the head at once, its delivery count unchanged,
    /// not after the visibility timeout with an attempt spent.
    async fn a_reliable_take_dropped_while_claiming_gives_the_value_back_uncounted(proxy, client, raw) {
        // An odd visibility timeout: its digits mark the claim's request.
        let q = client
            .reliable_queue("claimed", StringCodec)
            .unwrap()
            .with_visibility_timeout(Duration::from_millis(61_234));
        let _: i64 = raw.client.rpush("claimed", bytes(&["a", "b"])).await.unwrap();
        proxy.arm(Fault::HoldRequest, b"$5\r\n61234\r\n");
        assert!(tokio::time::timeout(Duration::from_millis(300), q.take())
            .await
            .is_err());
        eventually(Duration::from_secs(10), "the value back at the head", || async {
            proxy.fired() == 1 && raw.lrange("claimed").await == bytes(&["a", "b"])
        })
        .await;
        let again = q
            .take_timeout(Duration::from_secs(5))
            .await
            .unwrap()
            .expect("ready again at once, not after the visibility timeout");
        assert_eq!(again.value(), "a");
        assert_eq!(again.delivery_count(), 1, "the claim nobody saw is not counted");
        assert!(again.ack().await.unwrap());
        assert_eq!(q.in_flight().await.unwrap(), 0);
    }
}

redis_test! {
    async fn short_takes_on_a_link_slower_than_their_timeout_get_a_connection_in_the_end(redis, proxy, client, raw) {
        let q = client.reliable_queue("slow-link", StringCodec).unwrap();
        let plain = client.blocking_queue("slow-link-plain", StringCodec).unwrap();
        // Each new connection takes a second to open; each take waits 300 ms.
        proxy.slow_connects(true);
        let mut refused = 0;
        let (mut reliable_got, mut plain_got) = (None, None);
        for _ in 0..40 {
            if reliable_got.is_none() {
                match q.take_timeout(Duration::from_millis(300)).await {
                    Ok(got) => reliable_got = Some(got.map(|d| d.value().clone())),
                    Err(error) => {
                        assert!(error.to_string().contains("in time"), "{error}");
                        refused += 1;
                    }
                }
            }
            if plain_got.is_none() {
                match plain.take_timeout(Duration::from_millis(300)).await {
                    Ok(got) => plain_got = Some(got),
                    Err(error) => {
                        assert!(error.to_string().contains("in time"), "{error}");
                        refused += 1;
                    }
                }
            }
            if reliable_got.is_some() && plain_got.is_some() {
                break;
            }
        }
        // The first takes say they could not connect in time; the
        // connections they began are not thrown away, so later takes wait
        // on them and find the queues empty.
        assert!(refused >= 2, "the first takes cannot connect in time ({refused})");
        assert_eq!(reliable_got, Some(None), "a reliable take waited in the end");
        assert_eq!(plain_got, Some(None), "a plain take waited in the end");
        // The connections opened meanwhile are idle in the pool, not leaked:
        // a value offered now is taken on one of them.
        let _: i64 = raw.client.rpush("slow-link", "after").await.unwrap();
        let d = q.take_timeout(Duration::from_secs(5)).await.unwrap().expect("a value");
        assert_eq!(d.value(), "after");
        assert!(d.ack().await.unwrap());
    }
}
