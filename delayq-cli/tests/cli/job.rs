//! `delayq job QUEUE ID`: where a job is and its attempts, as a table (user
//! text escaped for the terminal) and as JSON.

use std::time::Duration;

use crate::run::delayq;
use delayq::StringCodec;
use delayq_test_support::redis_test;

/// How many places in `text` have `shape`: `d` a digit, `+` a sign.
fn shapes(text: &str, shape: &str) -> usize {
    let bytes = text.as_bytes();
    (0..bytes.len().saturating_sub(shape.len() - 1))
        .filter(|&at| {
            shape.bytes().zip(&bytes[at..]).all(|(want, &got)| match want {
                b'd' => got.is_ascii_digit(),
                b'+' => got == b'+' || got == b'-',
                _ => got == want,
            })
        })
        .count()
}

redis_test! {
    async fn the_cli_shows_a_jobs_state_and_attempts_escaped(redis) {
        let client = redis.client().await;
        let queue = "billing";
        let id = "order-\u{1b}[31m42";
        let dq = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
        let rq = client.reliable_queue(queue, StringCodec).unwrap().without_transfer();
        let out = delayq(&redis, &["job", queue, "--history", "on=2h"]).await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stdout).contains("on for billing"));
        assert_eq!(rq.job_history().await.unwrap(), Some(Duration::from_secs(7200)));
        dq.offer_with_id(id, &"charge".to_string(), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        let delivery = rq.take().await.unwrap();
        assert!(delivery.reject("card \u{1b}[2Jdeclined").await.unwrap());

        let out = delayq(&redis, &["job", queue, id]).await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(!text.contains('\u{1b}'), "an escape reached the terminal: {text:?}");
        assert!(text.contains("order-\\u{1b}[31m42"), "{text}");
        assert!(text.contains("dead-lettered"), "{text}");
        assert!(text.contains("rejected: card \\u{1b}[2Jdeclined"), "{text}");
        assert!(text.contains("attempts: 1"), "{text}");
        // Times as every other command prints them (local, with the
        // offset), each beside how long ago: never RFC 3339's T...Z.
        assert_eq!(shapes(&text, "dddd-dd-ddTdd:dd"), 0, "{text}");
        assert!(shapes(&text, "dddd-dd-dd dd:dd:dd.ddd +dd:dd") >= 2, "the state's time and the attempt's start: {text}");
        assert!(text.contains(" ago)"), "{text}");

        let out = delayq(&redis, &["job", queue, id, "--format", "json"]).await;
        assert!(out.status.success());
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["id"], id);
        assert_eq!(json["state"]["name"], "dead_lettered");
        assert_eq!(json["attempts_total"], 1);
        assert_eq!(json["attempts"][0]["outcome"], "rejected");

        // An id with no trace: said so, exit status 1.
        let out = delayq(&redis, &["job", queue, "nobody"]).await;
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&out.stdout).contains("unknown"));
        client.shutdown().await;
    }
}

redis_test! {
    /// A queue without history: `job` says so and still finds a pending job
    /// by its id; `--history off` drops the histories.
    async fn the_cli_says_when_a_queue_keeps_no_history(redis) {
        let client = redis.client().await;
        let queue = "plain";
        let dq = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
        dq.offer_with_id("later", &"v".to_string(), Duration::from_secs(3600)).await.unwrap();
        let out = delayq(&redis, &["job", queue, "later"]).await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("pending, due"), "{text}");
        assert!(text.contains("job history: off for plain"), "{text}");
        let out = delayq(&redis, &["job", queue, "later", "--format", "json"]).await;
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["history"]["on"], false);

        let out = delayq(&redis, &["job", queue, "--history", "on"]).await;
        assert!(out.status.success());
        assert_eq!(dq.job_history().await.unwrap(), Some(Duration::from_secs(24 * 3600)));
        let out = delayq(&redis, &["job", queue, "--history", "off", "--format", "json"]).await;
        assert!(out.status.success());
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["history"]["on"], false);
        assert_eq!(dq.job_history().await.unwrap(), None);
        let out = delayq(&redis, &["job", queue, "--history", "maybe"]).await;
        assert_eq!(out.status.code(), Some(2), "a bad switch is a usage error");
        client.shutdown().await;
    }
}

redis_test! {
    /// `get` on an id that left the pending set says where it went (still
    /// exit status 1: nothing is pending under it).
    async fn get_on_an_id_that_left_the_pending_set_says_where_it_went(redis) {
        let client = redis.client().await;
        let queue = "refunds";
        let dq = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
        let rq = client.reliable_queue(queue, StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(Duration::from_secs(3600))).await.unwrap();
        dq.offer_with_id("r-9", &"refund".to_string(), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        assert!(rq.take().await.unwrap().reject("account closed").await.unwrap());

        let out = delayq(&redis, &["get", queue, "r-9"]).await;
        assert_eq!(out.status.code(), Some(1));
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("no element with id \"r-9\" is pending in refunds"), "{said}");
        assert!(said.contains("dead-lettered") && said.contains("rejected: account closed"), "{said}");
        assert!(said.contains("delayq job refunds r-9"), "{said}");
        // An id never seen says only that.
        let out = delayq(&redis, &["get", queue, "nobody"]).await;
        assert_eq!(out.status.code(), Some(1));
        assert!(!String::from_utf8_lossy(&out.stderr).contains("delayq job"));
        client.shutdown().await;
    }
}
