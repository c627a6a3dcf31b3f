//! `delayq workers [QUEUE]`: the workers of a queue, or of every queue, as
//! their heartbeats describe them.

use std::sync::Arc;
use std::time::Duration;

use crate::run::delayq;
use delayq::{QueueKeys, StringCodec};
use delayq_test_support::{redis_test, wait_for};
use tokio::sync::Notify;

const WITHIN: Duration = Duration::from_secs(30);

redis_test! {
    /// A worker on a queue named in Cyrillic and CJK, with a terminal
    /// escape in it: the table names the queue escaped (the escape never
    /// reaches the terminal), the worker with its settings and what its
    /// handler runs; the JSON has it all; once it stops, no workers.
    async fn the_cli_lists_workers_and_what_they_run(redis) {
        let queue = "заказы-订单\u{1b}[31m";
        let client = redis.client().await;
        let (entered, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
        let worker = {
            let (entered, release) = (Arc::clone(&entered), Arc::clone(&release));
            client
                .worker(queue, StringCodec)
                .unwrap()
                .concurrency(4)
                .prefetch(0)
                .heartbeat(Duration::from_millis(100))
                .run(move |_: String| {
                    let (entered, release) = (Arc::clone(&entered), Arc::clone(&release));
                    async move {
                        entered.notify_one();
                        release.notified().await;
                        Ok::<(), std::io::Error>(())
                    }
                })
        };
        let producer = client.delayed_queue(queue, StringCodec).unwrap();
        producer.offer(&"job".to_string(), Duration::ZERO).await.unwrap();
        entered.notified().await;
        let keys = QueueKeys::new(queue).unwrap();
        let seen = wait_for(WITHIN, "the worker beats, busy", || async {
            let workers = client.workers(&keys).await.unwrap();
            workers.into_iter().find(|w| w.busy == 1)
        })
        .await;
        let delivery = seen.running[0].delivery.clone();

        let out = delayq(&redis, &["workers", queue]).await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let table = String::from_utf8(out.stdout).unwrap();
        assert!(!table.contains('\u{1b}'), "{table:?}");
        assert!(table.contains("заказы-订单\\u{1b}[31m"), "{table}");
        for expected in [seen.id.as_str(), "alive", "1/4", &seen.pid.to_string(), delivery.as_str()] {
            assert!(table.contains(expected), "{expected:?} in\n{table}");
        }
        assert!(table.contains("LEASE EXPIRES"), "{table}");
        // Failures are counted in runs (each retry counts): the header says
        // so, or "FAILED 163" reads as 163 failed values.
        assert!(table.contains("FAILED RUNS"), "{table}");

        // Every queue: only those with workers, here the one.
        producer.offer(&"waits".to_string(), Duration::from_secs(3600)).await.unwrap();
        client.delayed_queue("idle", StringCodec).unwrap().offer(&"x".to_string(), Duration::from_secs(60)).await.unwrap();
        let out = delayq(&redis, &["workers", "--format", "json"]).await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let queues = json["queues"].as_array().unwrap();
        assert_eq!(queues.len(), 1, "{json}");
        assert_eq!(queues[0]["queue"], queue);
        let listed = &queues[0]["workers"][0];
        assert_eq!(listed["id"], seen.id.as_str());
        assert_eq!(listed["concurrency"], 4);
        assert_eq!(listed["prefetch"], 0);
        assert_eq!(listed["silent"], false);
        assert_eq!(listed["running"][0]["delivery"], delivery.as_str());
        assert_eq!(listed["running"][0]["attempt"], 1);

        let refused = delayq(&redis, &["workers", "no-such-queue"]).await;
        assert!(!refused.status.success());
        assert!(String::from_utf8_lossy(&refused.stderr).contains("no queue `no-such-queue`"));

        release.notify_one();
        worker.shutdown().await;
        let out = delayq(&redis, &["workers"]).await;
        assert_eq!(String::from_utf8(out.stdout).unwrap(), "no workers on any queue\n");
        client.shutdown().await;
    }
}
