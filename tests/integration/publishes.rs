//! What each path that schedules an element publishes on the queue's
//! channel, seen by a plain subscriber as Redisson's transfer sees it: the
//! element's due time, exactly when the element is the new head of the
//! timeout set (Redisson's rule: `ZRANGE 0 0` is the element, not merely an
//! element with the same score), as text a Java `Long` parses. Offers,
//! bulk offers, offers with an id, reschedules, schedule fires, nacks with
//! a delay and restores all go through `lua/lib/offer.lua`; a resume
//! publishes the head whatever it is.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use delayq::format::Format;
use delayq::fred::clients::SubscriberClient;
use delayq::fred::prelude::*;
use delayq::fred::types::{Builder, Message, Value};
use delayq::{Clock, LongCodec, QueueKeys, StringCodec};
use tokio::sync::broadcast;

use delayq_test_support::{now_ms, redis_test, RawRedis, RedisServer};

const HOUR: Duration = Duration::from_secs(3600);

fn s(v: &str) -> String {
    v.to_owned()
}

fn at(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms as u64)
}

/// A plain subscriber of one queue's channel.
struct Channel {
    subscriber: SubscriberClient,
    messages: broadcast::Receiver<Message>,
    channel: String,
    /// A channel of the watcher's own, for marks.
    marks: String,
    /// Marks published so far.
    sent: u64,
    raw: RawRedis,
}

impl Channel {
    async fn watch(redis: &RedisServer, queue: &str) -> Channel {
        let channel = QueueKeys::new(queue).unwrap().channel().to_owned();
        let marks = format!("delayq-test-marks:{queue}");
        let subscriber = Builder::from_config(Config::from_url(&redis.url()).unwrap())
            .build_subscriber_client()
            .unwrap();
        subscriber.init().await.unwrap();
        let messages = subscriber.message_rx();
        subscriber
            .subscribe(vec![channel.clone(), marks.clone()])
            .await
            .unwrap();
        let mut watching = Channel {
            subscriber,
            messages,
            channel,
            marks,
            sent: 0,
            raw: redis.raw().await,
        };
        // A first mark seen back: the subscription is live on the server
        // before the test publishes anything (a loaded machine showed a
        // first publish missed).
        let before = watching.published().await;
        assert!(before.is_empty(), "{before:?}");
        watching
    }

    /// The messages published on the queue's channel since the last call,
    /// in order. Waits for no time: a mark published on the watcher's own
    /// channel comes after them (Redis sends a subscriber its messages in
    /// the order they were published).
    ///
    /// Never waits on a mark the server did not hand to the subscriber:
    /// PUBLISH says how many subscribers got it, and a mark that reached
    /// none (the subscription not live, or the connection being made
    /// again) is published again; so is one not seen back within a second.
    async fn published(&mut self) -> Vec<String> {
        self.sent += 1;
        let mark = self.sent.to_string();
        let mut seen = Vec::new();
        loop {
            let receivers: i64 = self.raw.client.publish(&self.marks, mark.as_str()).await.unwrap();
            if receivers == 0 {
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
            let waited = tokio::time::timeout(Duration::from_secs(1), async {
                loop {
                    let message = self.messages.recv().await.unwrap();
                    let text = message.value.as_string().unwrap();
                    if *message.channel == *self.marks && text == mark {
                        return;
                    }
                    if *message.channel == *self.channel {
                        seen.push(text);
                    }
                }
            })
            .await;
            if waited.is_ok() {
                return seen;
            }
        }
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        let subscriber = self.subscriber.clone();
        tokio::spawn(async move {
            let _ = subscriber.quit().await;
        });
    }
}

/// The head of a timeout set: its member and its score as Redis writes it.
async fn head(raw: &RawRedis, queue: &str) -> (Bytes, String) {
    let keys = QueueKeys::new(queue).unwrap();
    let reply = raw
        .cmd(
            "ZRANGE",
            vec![keys.timeout().into(), 0.into(), 0.into(), "WITHSCORES".into()],
        )
        .await;
    let Value::Array(pair) = reply else {
        panic!("ZRANGE: {reply:?}")
    };
    (
        pair[0].as_bytes().unwrap().to_vec().into(),
        pair[1].as_string().unwrap(),
    )
}

fn payload(element: &[u8]) -> String {
    String::from_utf8(delayq::format::unpack(element).unwrap().payload.to_vec()).unwrap()
}

/// A modern element whose 8 id bytes are all `id`: all zeros sorts before
/// every other element of its score, all 0xff after (in practice).
fn element_with_id(id: u8, payload: &str) -> Vec<u8> {
    let mut e = vec![8u8];
    e.extend([id; 8]);
    e.extend((payload.len() as u64).to_le_bytes());
    e.extend(payload.as_bytes());
    e
}

/// A due time an hour ahead, whole seconds (room for steps either side).
fn base() -> i64 {
    (now_ms() / 1000 + 3600) * 1000
}

redis_test! {
    async fn offers_and_bulk_offers_publish_the_due_time_of_each_new_head(redis, raw, client) {
        let q = client.delayed_queue("offers", StringCodec).unwrap().without_transfer();
        let mut channel = Channel::watch(&redis, "offers").await;
        let t = base();

        q.offer_at(&s("a"), at(t + 2000)).await.unwrap();
        assert_eq!(channel.published().await, [(t + 2000).to_string()]);
        q.offer_at(&s("b"), at(t + 3000)).await.unwrap();
        assert_eq!(channel.published().await, Vec::<String>::new(), "not the head");
        q.offer_at(&s("c"), at(t + 1000)).await.unwrap();
        assert_eq!(channel.published().await, [(t + 1000).to_string()]);
        // A tie it loses is no new head: an element of the same score that
        // sorts first (all-zero id bytes) stays the head.
        raw.seed("offers", &element_with_id(0, "z"), t).await;
        assert_eq!(
            channel.published().await,
            Vec::<String>::new(),
            "seeded as Java's transfer would see it"
        );
        q.offer_at(&s("d"), at(t)).await.unwrap();
        assert_eq!(payload(&head(&raw, "offers").await.0), "z");
        assert_eq!(channel.published().await, Vec::<String>::new(), "a tie it loses");

        // A bulk offer: one publish, the earliest of its values, when that
        // is the new head; none when it is not.
        q.offer_all([(s("e"), HOUR * 3), (s("f"), HOUR / 2), (s("g"), HOUR / 3)])
            .await
            .unwrap();
        let (member, score) = head(&raw, "offers").await;
        assert_eq!(payload(&member), "g");
        assert_eq!(channel.published().await, [score]);
        q.offer_all([(s("h"), HOUR * 5), (s("i"), HOUR * 4)]).await.unwrap();
        assert_eq!(channel.published().await, Vec::<String>::new());
    }
}

redis_test! {
    async fn offers_and_reschedules_by_id_publish_only_a_new_head_and_never_on_a_tie_they_lose(redis, raw, client) {
        let q = client.delayed_queue("ids", StringCodec).unwrap().without_transfer();
        let mut channel = Channel::watch(&redis, "ids").await;
        let t = base();

        assert!(q.offer_with_id_at("k", &s("k"), at(t + 1000)).await.unwrap());
        assert_eq!(channel.published().await, [(t + 1000).to_string()]);
        assert!(q.offer_with_id_at("l", &s("l"), at(t + 2000)).await.unwrap());
        assert_eq!(channel.published().await, Vec::<String>::new(), "not the head");

        // Tied with the head, sorting after it: the head stays, no publish.
        raw.seed("ids", &element_with_id(0, "z"), t).await;
        assert!(q.offer_with_id_at("m", &s("m"), at(t)).await.unwrap());
        assert_eq!(payload(&head(&raw, "ids").await.0), "z");
        assert_eq!(channel.published().await, Vec::<String>::new(), "offer: a tie it loses");
        // Tied with the head, sorting before it: the new head, published.
        raw.seed("ids", &element_with_id(0xff, "y"), t - 1000).await;
        assert!(q.offer_with_id_at("n", &s("n"), at(t - 1000)).await.unwrap());
        assert_eq!(payload(&head(&raw, "ids").await.0), "n");
        assert_eq!(
            channel.published().await,
            [(t - 1000).to_string()],
            "offer: a tie it wins"
        );

        // Reschedules: to the head, published; elsewhere, not.
        assert!(q.reschedule_at("l", at(t - 2000)).await.unwrap());
        assert_eq!(channel.published().await, [(t - 2000).to_string()]);
        assert!(q.reschedule_at("k", at(t + 5000)).await.unwrap());
        assert_eq!(channel.published().await, Vec::<String>::new(), "not the head");
        raw.seed("ids", &element_with_id(0, "x"), t - 3000).await;
        assert!(q.reschedule_at("k", at(t - 3000)).await.unwrap());
        assert_eq!(payload(&head(&raw, "ids").await.0), "x");
        assert_eq!(
            channel.published().await,
            Vec::<String>::new(),
            "reschedule: a tie it loses"
        );
        // A replace is an offer too.
        assert!(!q.replace_with_id("k", &s("k2"), Duration::from_secs(60)).await.unwrap());
        let (member, score) = head(&raw, "ids").await;
        assert_eq!(payload(&member), "k2");
        assert_eq!(channel.published().await, [score]);
    }
}

redis_test! {
    async fn a_schedule_fire_publishes_its_occurrence_when_it_is_the_new_head(redis, raw) {
        let mut channel = Channel::watch(&redis, "fired").await;
        let keys = QueueKeys::new("fired").unwrap();
        // Fired as a runner does when the occurrence is due (no client runs
        // the schedule: each fire is this test's).
        let fire = |next: i64, then: i64, token: &'static str, value: &'static str| {
            let body = delayq_test_support::script_body(include_str!("../../lua/schedule_fire.lua"));
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
                "job".into(),
                "r1".into(),
                next.to_string().into(),
                then.to_string().into(),
                0.into(),
                token.into(),
                "a-runner".into(),
                "a-host".into(),
                "on_time".into(),
                next.to_string().into(),
                Value::Bytes(delayq::format::pack(Format::Modern, value.as_bytes())),
            ];
            raw.cmd("EVAL", args)
        };
        let t = now_ms() - 10_000;
        let record = format!(r#"{{"rev":"r1","next_ms":"{t}"}}"#);
        raw.cmd("HSET", vec![keys.schedules().into(), "job".into(), record.into()])
            .await;
        raw.seed("fired", &element_with_id(0, "later"), t + 60 * 60_000).await;
        let Value::Array(reply) = fire(t, t + 1000, "token-1", "one").await else {
            panic!("schedule_fire: not an array")
        };
        assert_eq!(reply[0].as_string().unwrap(), "fired");
        assert_eq!(channel.published().await, [t.to_string()]);
        let Value::Array(reply) = fire(t + 1000, t + 2000, "token-2", "two").await else {
            panic!("schedule_fire: not an array")
        };
        assert_eq!(reply[0].as_string().unwrap(), "fired");
        assert_eq!(channel.published().await, Vec::<String>::new(), "not the head");
        assert_eq!(raw.zcard(keys.timeout()).await, 3);
    }
}

redis_test! {
    async fn a_nack_with_a_delay_publishes_when_the_value_is_the_new_head(redis, raw, client) {
        let mut channel = Channel::watch(&redis, "jobs").await;
        let q = client.reliable_queue("jobs", StringCodec).unwrap();
        client
            .blocking_queue("jobs", StringCodec)
            .unwrap()
            .offer_all([s("a"), s("b"), s("c")])
            .await
            .unwrap();

        let a = q.take().await.unwrap();
        assert!(a.nack(HOUR).await.unwrap());
        let (member, score) = head(&raw, "jobs").await;
        assert_eq!(payload(&member), "a");
        assert_eq!(channel.published().await, [score]);
        let b = q.take().await.unwrap();
        assert!(b.nack(HOUR * 2).await.unwrap());
        assert_eq!(channel.published().await, Vec::<String>::new(), "not the head");
        // At once: back to the destination, nothing scheduled or published.
        let c = q.take().await.unwrap();
        assert!(c.nack(Duration::ZERO).await.unwrap());
        assert_eq!(channel.published().await, Vec::<String>::new(), "not scheduled");
        let c = q.take().await.unwrap();
        assert!(c.nack(HOUR / 2).await.unwrap());
        let (member, score) = head(&raw, "jobs").await;
        assert_eq!(payload(&member), "c");
        assert_eq!(channel.published().await, [score]);
    }
}

redis_test! {
    async fn a_restore_publishes_when_a_restored_element_is_the_new_head_and_never_on_a_tie_it_loses(redis, raw, client) {
        let strings = client
            .delayed_queue("restored", StringCodec)
            .unwrap()
            .without_transfer();
        let longs = client.delayed_queue("restored", LongCodec).unwrap().without_transfer();
        let mut channel = Channel::watch(&redis, "restored").await;
        let t = base();
        // Not a number: a poll of the longs cannot decode it and puts it back.
        strings.offer_at(&s("x"), at(t)).await.unwrap();
        assert_eq!(channel.published().await, [t.to_string()]);
        let restored = async || {
            let error = longs.remove_first().await.unwrap_err();
            assert!(
                matches!(error, delayq::Error::Decode(ref e) if e.restored()),
                "{error:?}"
            );
        };

        // Alone: the new head, published.
        restored().await;
        assert_eq!(channel.published().await, [t.to_string()]);
        // Tied with the head, sorting after it: no publish.
        raw.seed("restored", &element_with_id(0, "0"), t).await;
        restored().await;
        assert_eq!(payload(&head(&raw, "restored").await.0), "0");
        assert_eq!(channel.published().await, Vec::<String>::new(), "a tie it loses");
        // Later than the head: no publish.
        raw.seed("restored", &element_with_id(0xff, "1"), t - 1000).await;
        restored().await;
        assert_eq!(channel.published().await, Vec::<String>::new(), "not the head");
        assert_eq!(strings.read_all().await.unwrap(), [s("x"), s("0"), s("1")]);
    }
}

redis_test! {
    async fn resume_publishes_the_head_when_it_ends_a_pause(redis, raw, client) {
        let q = client.delayed_queue("paused", StringCodec).unwrap().without_transfer();
        let mut channel = Channel::watch(&redis, "paused").await;
        let t = base();

        // Nothing pending: nothing to publish.
        q.pause().await.unwrap();
        assert!(q.resume().await.unwrap());
        assert_eq!(channel.published().await, Vec::<String>::new());
        q.pause().await.unwrap();
        // An offer during a pause publishes as ever; the resume publishes
        // the head again, whoever offered it.
        q.offer_at(&s("a"), at(t + 1000)).await.unwrap();
        assert_eq!(channel.published().await, [(t + 1000).to_string()]);
        raw.seed("paused", &element_with_id(0, "b"), t).await;
        assert!(q.resume().await.unwrap());
        assert_eq!(channel.published().await, [t.to_string()]);
        // Not paused: nothing.
        assert!(!q.resume().await.unwrap());
        assert_eq!(channel.published().await, Vec::<String>::new());
    }
}

redis_test! {
    /// Under the server's clock a due time is worked out in Lua: past the year
    /// 5138 (10^14 ms) it must still be a whole number of ms, stored exactly
    /// and published as Java's `LongCodec` writes it (Redisson's transfer
    /// parses it as a `Long`), as the producer's clock gives it.
    async fn due_times_on_the_server_clock_stay_whole_numbers_far_ahead(redis, raw) {
        let client = redis.client_builder().clock(Clock::Server).build().await.unwrap();
        let q = client.delayed_queue("far", StringCodec).unwrap().without_transfer();
        let mut channel = Channel::watch(&redis, "far").await;
        let far = Duration::from_secs(10_000 * 365 * 24 * 3600);

        q.offer(&s("a"), far).await.unwrap();
        let (_, score) = head(&raw, "far").await;
        assert_eq!(channel.published().await, std::slice::from_ref(&score));
        let first: i64 = score.parse().expect("a whole number of ms");
        // One bulk chunk counts from one server time: 1 ms apart stays 1 ms apart.
        q.offer_all([
            (s("b"), far - Duration::from_secs(3600)),
            (s("c"), far - Duration::from_millis(3_600_001)),
        ])
        .await
        .unwrap();
        let scores = raw.zrange(QueueKeys::new("far").unwrap().timeout()).await;
        let (b, c) = (scores[1].1, scores[0].1);
        assert_eq!(b - c, 1, "{scores:?}");
        assert!(c < first);
        let published = channel.published().await;
        assert_eq!(published, [c.to_string()]);
        assert_eq!(published[0].parse::<i64>().unwrap(), c);
    }
}
