//! ACL users: a client connects with the user and password in its URL; a
//! wrong password is a clear error, in the library and in the CLI.

use std::time::Duration;

use delayq::fred::types::Value;
use delayq::{Client, StringCodec};

use delayq_test_support::fault_proxy::FaultProxy;
use delayq_test_support::{deadline, redis_test, RedisServer};

redis_test! {
    /// The ACL that docs/deployments.md recommends for a service that owns one
    /// queue: every command, but only that queue's keys and channel.
    async fn a_user_scoped_to_one_queue_works_on_it_and_nowhere_else(redis, raw) {
        let setuser = [
            "SETUSER",
            "orders-only",
            "on",
            ">s3cret",
            "resetkeys",
            "~orders",
            "~*{orders}*",
            "resetchannels",
            "&redisson_delay_queue_channel:{orders}",
            "+@all",
        ];
        raw.cmd("ACL", setuser.iter().map(|a| Value::from(*a)).collect()).await;
        let client = Client::builder()
            .url(format!("redis://orders-only:s3cret@127.0.0.1:{}", redis.port()))
            .blocking_timeout(Duration::from_secs(1))
            .build()
            .await
            .expect("the scoped user connects");

        // Offer, transfer (pub/sub included), reliable take and ack, status.
        let orders = client.delayed_queue("orders", StringCodec).unwrap();
        orders
            .offer(&"o-1".to_owned(), Duration::from_millis(100))
            .await
            .unwrap();
        let reliable = client.reliable_queue("orders", StringCodec).unwrap();
        let delivery = tokio::time::timeout(Duration::from_secs(10), reliable.take())
            .await
            .expect("delivered")
            .unwrap();
        assert_eq!(delivery.value(), "o-1");
        delivery.ack().await.unwrap();
        assert_eq!(orders.status().await.unwrap().pending, 0);

        // Another queue's keys are refused.
        let other = client
            .delayed_queue("payments", StringCodec)
            .unwrap()
            .without_transfer();
        let error = other
            .offer(&"p-1".to_owned(), Duration::from_secs(1))
            .await
            .expect_err("no access to another queue");
        assert!(error.to_string().contains("NOPERM"), "{error}");
        client.shutdown().await;
    }
}

redis_test! {
    /// A user whose ACL refuses one queue's channel: that queue gets no
    /// wake-ups (only checks and the resync), but every other queue of the
    /// client is subscribed and woken as usual — the refusal must not hold up
    /// the subscriptions queued behind it.
    async fn a_channel_the_acl_refuses_does_not_hold_up_the_other_queues(redis, raw) {
        let setuser = [
            "SETUSER",
            "narrow",
            "on",
            ">pw",
            "~*",
            "resetchannels",
            "&redisson_delay_queue_channel:{allowed}",
            "+@all",
        ];
        raw.cmd("ACL", setuser.iter().map(|a| Value::from(*a)).collect()).await;
        let client = Client::builder()
            .url(format!("redis://narrow:pw@127.0.0.1:{}", redis.port()))
            .resync_interval(None)
            .build()
            .await
            .unwrap();
        let refused = client.delayed_queue::<String, _>("refused", StringCodec).unwrap();
        let allowed = client.delayed_queue::<String, _>("allowed", StringCodec).unwrap();
        delayq_test_support::eventually(Duration::from_secs(60), "the allowed channel subscribed", || async {
            raw.numsub(allowed.keys().channel()).await == 1
        })
        .await;
        assert_eq!(raw.numsub(refused.keys().channel()).await, 0);
        // Another process offers: the wake-up reaches the allowed queue's transfer.
        let producer = redis.client().await;
        producer
            .delayed_queue::<String, _>("allowed", StringCodec)
            .unwrap()
            .without_transfer()
            .offer(&"woken".to_owned(), Duration::from_millis(200))
            .await
            .unwrap();
        assert_eq!(
            allowed
                .destination()
                .take_timeout(Duration::from_secs(10))
                .await
                .unwrap()
                .as_deref(),
            Some("woken")
        );
        client.shutdown().await;
        producer.shutdown().await;
    }
}

redis_test! {
    /// The same, when the replies behind a refused `SUBSCRIBE`'s error come late
    /// (a loaded machine): the `PONG` meant for the check after it must not be
    /// read as the answer to the next `SUBSCRIBE`, or a refused channel looks
    /// subscribed and the allowed one after it refused (seen as a flake of the
    /// test above under a full suite).
    async fn a_refused_channel_whose_replies_come_late_does_not_cost_the_allowed_one(redis, raw) {
        let setuser = [
            "SETUSER",
            "narrow",
            "on",
            ">pw",
            "~*",
            "resetchannels",
            "&redisson_delay_queue_channel:{allowed}",
            "+@all",
        ];
        raw.cmd("ACL", setuser.iter().map(|a| Value::from(*a)).collect()).await;
        let proxy = FaultProxy::start(redis.port()).await;
        proxy.slow_after_errors(true);
        let client = Client::builder()
            .url(format!("redis://narrow:pw@127.0.0.1:{}", proxy.port()))
            .resync_interval(None)
            .build()
            .await
            .unwrap();
        let refused = client.delayed_queue::<String, _>("refused", StringCodec).unwrap();
        let allowed = client.delayed_queue::<String, _>("allowed", StringCodec).unwrap();
        delayq_test_support::eventually(Duration::from_secs(60), "the allowed channel subscribed", || async {
            raw.numsub(allowed.keys().channel()).await == 1
        })
        .await;
        // And it stays subscribed once the stray replies have all come, and
        // after the subscriber reconnects (a refused channel taken for a
        // subscribed one would be asked for again then, with the allowed
        // one, and both refused together).
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(raw.numsub(allowed.keys().channel()).await, 1);
        assert!(raw.kill_clients("pubsub").await >= 1);
        tokio::time::sleep(Duration::from_millis(500)).await;
        delayq_test_support::eventually(
            Duration::from_secs(20),
            "the allowed channel subscribed again",
            || async { raw.numsub(allowed.keys().channel()).await == 1 },
        )
        .await;
        assert_eq!(raw.numsub(refused.keys().channel()).await, 0);
        client.shutdown().await;
    }
}

/// A server that cannot run scripts (an engine without Lua answers EVAL as
/// an unknown command, as a server with EVAL renamed away does): the
/// client says so at connect, naming the server, instead of the first
/// offer failing deep inside a service.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_scripting_is_refused_at_connect_with_a_clear_error() {
    deadline(async {
        let redis = RedisServer::start_with(&["--rename-command", "EVAL", "", "--rename-command", "EVALSHA", ""]).await;
        let error = Client::builder()
            .url(redis.url())
            .build()
            .await
            .expect_err("a server without Lua is refused");
        match &error {
            delayq::Error::ScriptingUnavailable { address, message } => {
                assert_eq!(address, &format!("127.0.0.1:{}", redis.port()));
                assert!(message.contains("unknown command"), "{message}");
            }
            other => panic!("expected ScriptingUnavailable, got {other:?}"),
        }
        assert!(error.to_string().contains("cannot run Lua scripts"), "{error}");
    })
    .await;
}

redis_test! {
    /// An ACL user without `+@scripting` is told the same at connect.
    async fn a_user_the_acl_denies_scripts_is_refused_at_connect(redis, raw) {
        let setuser = ["SETUSER", "no-lua", "on", ">pw", "~*", "&*", "+@all", "-@scripting"];
        raw.cmd("ACL", setuser.iter().map(|a| Value::from(*a)).collect()).await;
        let error = Client::builder()
            .url(format!("redis://no-lua:pw@127.0.0.1:{}", redis.port()))
            .build()
            .await
            .expect_err("a user without scripting is refused");
        assert!(
            matches!(&error, delayq::Error::ScriptingUnavailable { message, .. } if message.contains("NOPERM")),
            "{error:?}"
        );
        assert!(!error.to_string().contains("pw@"), "{error}");
    }
}
