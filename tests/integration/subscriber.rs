//! The subscriber connection going silently dead (no FIN, no RST: a NAT or
//! firewall dropping its state, a frozen peer), or slow to subscribe:
//! wake-ups must not be lost until the resync.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use delayq::StringCodec;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use delayq_test_support::{eventually, redis_test, RedisServer};

/// A TCP proxy in front of Redis that can black-hole the connections that
/// subscribed so far: their bytes are read and dropped both ways, and their
/// sockets stay open, so neither side notices anything but silence.
/// Connections made afterwards pass.
struct Blackhole {
    port: u16,
    state: Arc<ProxyState>,
}

#[derive(Default)]
struct ProxyState {
    /// Connections accepted so far.
    accepted: AtomicU64,
    /// Subscriber connections numbered below this are black-holed.
    frozen_below: AtomicU64,
    /// How long a `SUBSCRIBE` is held before it is passed on (ms).
    subscribe_delay_ms: AtomicU64,
}

impl Blackhole {
    async fn start(redis_port: u16) -> Blackhole {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(ProxyState::default());
        let shared = state.clone();
        tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    return;
                };
                let number = shared.accepted.fetch_add(1, Ordering::SeqCst);
                let state = shared.clone();
                tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(("127.0.0.1", redis_port)).await else {
                        return;
                    };
                    let subscriber = Arc::new(AtomicBool::new(false));
                    let frozen = {
                        let (state, subscriber) = (state.clone(), subscriber.clone());
                        move || subscriber.load(Ordering::SeqCst) && number < state.frozen_below.load(Ordering::SeqCst)
                    };
                    let (mut client_read, mut client_write) = client.into_split();
                    let (mut server_read, mut server_write) = server.into_split();
                    let upstream = {
                        let frozen = frozen.clone();
                        let state = state.clone();
                        async move {
                            let mut buf = vec![0u8; 64 * 1024];
                            loop {
                                let n = match client_read.read(&mut buf).await {
                                    Ok(0) | Err(_) => return,
                                    Ok(n) => n,
                                };
                                if buf[..n].windows(9).any(|w| w.eq_ignore_ascii_case(b"SUBSCRIBE")) {
                                    subscriber.store(true, Ordering::SeqCst);
                                    let delay = state.subscribe_delay_ms.load(Ordering::SeqCst);
                                    tokio::time::sleep(Duration::from_millis(delay)).await;
                                }
                                if !frozen() && server_write.write_all(&buf[..n]).await.is_err() {
                                    return;
                                }
                            }
                        }
                    };
                    let downstream = async move {
                        let mut buf = vec![0u8; 64 * 1024];
                        loop {
                            let n = match server_read.read(&mut buf).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => n,
                            };
                            if !frozen() && client_write.write_all(&buf[..n]).await.is_err() {
                                return;
                            }
                        }
                    };
                    // Either side closing closes both.
                    tokio::select! {
                        _ = upstream => {}
                        _ = downstream => {}
                    }
                });
            }
        });
        Blackhole { port, state }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// A client through the proxy with no resync: only its subscriber's own
    /// mechanisms can deliver a lost wake-up.
    async fn client_without_resync(&self, redis: &RedisServer) -> delayq::Client {
        redis
            .client_builder()
            .url(self.url())
            .resync_interval(None)
            .build()
            .await
            .unwrap()
    }

    /// Holds every `SUBSCRIBE` this long before Redis gets it.
    fn delay_subscribes(&self, by: Duration) {
        self.state
            .subscribe_delay_ms
            .store(by.as_millis() as u64, Ordering::SeqCst);
    }

    /// Black-holes every subscriber connection made so far.
    fn freeze_subscribers(&self) {
        let accepted = self.state.accepted.load(Ordering::SeqCst);
        self.state.frozen_below.store(accepted, Ordering::SeqCst);
    }
}

redis_test! {
    async fn an_offer_made_after_the_subscriber_connection_went_silently_dead_is_delivered(redis, raw) {
        let proxy = Blackhole::start(redis.port()).await;
        // No resync: only the subscriber's own health check can notice.
        let client = proxy.client_without_resync(&redis).await;
        let q = client.delayed_queue("q", StringCodec).unwrap();
        eventually(Duration::from_secs(20), "subscribed", || async {
            raw.numsub(q.keys().channel()).await == 1
        })
        .await;
        // The run that follows the subscribe is over (it must not pick up the offer below).
        eventually(Duration::from_secs(20), "first transfer run", || async {
            client.stats().transfer_runs >= 1
        })
        .await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        proxy.freeze_subscribers();
        // Another process offers; its wake-up is published into the black hole.
        let producer = redis.client().await;
        let offers = producer
            .delayed_queue::<String, _>("q", StringCodec)
            .unwrap()
            .without_transfer();
        offers.offer(&s("after"), Duration::from_millis(200)).await.unwrap();
        let started = std::time::Instant::now();
        assert_eq!(
            q.destination().take_timeout(Duration::from_secs(15)).await.unwrap(),
            Some(s("after")),
            "delivered well before any 60 s resync"
        );
        eprintln!("delivered {:.1} s after the offer", started.elapsed().as_secs_f64());
        // The dead connection was replaced: subscribed again through a live one.
        eventually(Duration::from_secs(20), "subscribed again", || async {
            raw.numsub(q.keys().channel()).await >= 1
        })
        .await;
        client.shutdown().await;
        producer.shutdown().await;
    }
}

redis_test! {
    /// fred answers a `SUBSCRIBE` once it is written, before Redis runs it. The
    /// run that follows a subscription must wait for Redis: were it to find the
    /// queue empty first, an offer published before the `SUBSCRIBE` took effect
    /// would wake nobody until the resync.
    async fn an_offer_published_while_the_subscribe_is_on_its_way_is_delivered(redis, raw) {
        let proxy = Blackhole::start(redis.port()).await;
        proxy.delay_subscribes(Duration::from_millis(1500));
        let client = proxy.client_without_resync(&redis).await;
        let q = client.delayed_queue("q", StringCodec).unwrap();
        // The run after the subscription; then, at once, another process offers.
        eventually(Duration::from_secs(20), "first transfer run", || async {
            client.stats().transfer_runs >= 1
        })
        .await;
        let producer = redis.client().await;
        let offers = producer
            .delayed_queue::<String, _>("q", StringCodec)
            .unwrap()
            .without_transfer();
        offers.offer(&s("raced"), Duration::from_millis(100)).await.unwrap();
        assert_eq!(
            raw.numsub(q.keys().channel()).await,
            1,
            "the subscription took effect before that run"
        );
        assert_eq!(
            q.destination().take_timeout(Duration::from_secs(10)).await.unwrap(),
            Some(s("raced")),
            "delivered without a resync"
        );
        client.shutdown().await;
        producer.shutdown().await;
    }
}

fn s(v: &str) -> String {
    v.to_owned()
}

redis_test! {
    /// A burst of wake-ups (an `offer_all` over many queues, a restart's heads)
    /// is taken whole: fred buffers 32 pub/sub messages by default, and a lost
    /// message makes the transfer check every queue of the client — 100,000
    /// check runs for a client with 100,000 queues.
    async fn a_burst_of_wake_ups_does_not_make_the_transfer_check_every_queue(raw, client) {
        let queues: Vec<_> = (0..2_000)
            .map(|i| {
                client
                    .delayed_queue::<String, _>(&format!("q{i}"), StringCodec)
                    .unwrap()
            })
            .collect();
        eventually(Duration::from_secs(60), "every queue's first run", || async {
            client.stats().transfer_runs >= 2_000
        })
        .await;
        eventually(Duration::from_secs(10), "the last subscription", || async {
            raw.numsub(queues[1_999].keys().channel()).await == 1
        })
        .await;
        let before = client.stats().transfer_runs;
        // 1,000 wake-ups in one go, for an hour from now: none needs a run.
        let in_an_hour = std::time::SystemTime::now() + Duration::from_secs(3_600);
        let due = in_an_hour.duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
        raw.cmd(
            "EVAL",
            vec![
                "for i = 1, 1000 do redis.call('publish', KEYS[1], ARGV[1]) end return 1".into(),
                1.into(),
                queues[0].keys().channel().into(),
                due.to_string().into(),
            ],
        )
        .await;
        // Then one due at once on another queue: its run says the burst was read.
        raw.cmd("PUBLISH", vec![queues[1].keys().channel().into(), "0".into()])
            .await;
        eventually(Duration::from_secs(20), "the run after the burst", || async {
            client.stats().transfer_runs > before
        })
        .await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        let runs = client.stats().transfer_runs - before;
        assert!(
            runs < 100,
            "{runs} transfer runs after a burst of wake-ups (2,000 means every queue was checked)"
        );
        client.shutdown().await;
    }
}
