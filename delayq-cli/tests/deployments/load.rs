//! Load for failover tests: values coming due over a few seconds, handled by
//! a reliable Worker, with every delivery's time recorded so a test can tell
//! what was lost, what came twice and how long delivery paused.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use delayq::worker::WorkerHandle;
use delayq::{Client, StringCodec};
use parking_lot::Mutex;
use tokio::time::Instant;

use crate::redis_server::eventually;

/// How many values a failover test moves.
pub const VALUES: usize = 2_000;

pub struct Load {
    started: Instant,
    queue: String,
    producer: Client,
    consumer: Client,
    worker: WorkerHandle,
    deliveries: Arc<Mutex<Vec<(String, Instant)>>>,
}

/// What came out of a disrupted run.
#[derive(Debug)]
pub struct Outcome {
    pub lost: usize,
    pub handled_twice: usize,
    /// The longest gap between deliveries from the disruption until every
    /// value had come once (redeliveries after that are not a pause).
    pub longest_pause: Duration,
    pub left_pending: usize,
    pub left_ready: usize,
    pub dead_letters: usize,
}

impl Outcome {
    /// Nothing lost, and nothing left pending, ready or dead-lettered.
    pub fn assert_nothing_lost(&self) {
        assert_eq!(self.lost, 0, "{self:?}");
        assert_eq!(
            (self.left_pending, self.left_ready, self.dead_letters),
            (0, 0, 0),
            "{self:?}"
        );
    }
}

impl Load {
    /// Offers [`VALUES`] values due from 0.5 s to 4.5 s from now (through a
    /// producer that runs no transfer), then starts a 4-handler Worker on a
    /// second client, whose scheduler does the transfer.
    pub async fn start(url: &str, queue: &str) -> Load {
        let started = Instant::now();
        let producer = Client::connect(url).await.expect("producer connects");
        let delayed = producer.delayed_queue(queue, StringCodec).unwrap().without_transfer();
        let spread = 4_000 / VALUES as u64;
        delayed
            .offer_all((0..VALUES).map(|i| (format!("v-{i}"), Duration::from_millis(500 + i as u64 * spread))))
            .await
            .unwrap();
        let consumer = Client::builder()
            .url(url)
            .blocking_timeout(Duration::from_secs(1))
            .build()
            .await
            .expect("consumer connects");
        let deliveries = Arc::new(Mutex::new(Vec::new()));
        let worker = consumer
            .worker(queue, StringCodec)
            .unwrap()
            .concurrency(4)
            .visibility_timeout(Duration::from_secs(5))
            .run({
                let deliveries = deliveries.clone();
                move |value: String| {
                    deliveries.lock().push((value, Instant::now()));
                    async { Ok::<_, delayq::error::BoxError>(()) }
                }
            });
        Load {
            started,
            queue: queue.to_owned(),
            producer,
            consumer,
            worker,
            deliveries,
        }
    }

    /// Waits until `count` deliveries have been handled.
    pub async fn wait_handled(&self, count: usize) {
        eventually(Duration::from_secs(30), "deliveries to start", || async {
            self.deliveries.lock().len() >= count
        })
        .await;
        eprintln!(
            "{}: {} handled {:?} after the offers began",
            self.queue,
            self.deliveries.lock().len(),
            self.started.elapsed()
        );
    }

    /// Waits (up to `within` after `disrupted`) for every value, stops the
    /// worker and counts what was lost and what came twice.
    pub async fn finish(self, disrupted: Instant, within: Duration) -> Outcome {
        // Every value seen, and nothing left to redeliver.
        let delayed = self
            .consumer
            .delayed_queue(&self.queue, StringCodec)
            .unwrap()
            .without_transfer();
        loop {
            if self.distinct() == VALUES
                && let Ok(status) = delayed.status().await
                && status.pending + status.ready + status.in_flight == 0
            {
                break;
            }
            if disrupted.elapsed() > within {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let distinct = self.distinct();
        let report = self.worker.shutdown().await;
        let log = self.deliveries.lock().clone();
        // Pauses while values were still due: up to the first delivery of the last new value.
        let mut firsts = HashSet::new();
        let complete = log
            .iter()
            .filter(|(v, _)| firsts.insert(v.as_str()))
            .map(|(_, t)| *t)
            .max()
            .unwrap_or(disrupted);
        let mut times: Vec<Instant> = log
            .iter()
            .map(|(_, t)| *t)
            .filter(|t| *t >= disrupted && *t <= complete)
            .collect();
        times.insert(0, disrupted);
        let longest_pause = times.windows(2).map(|w| w[1] - w[0]).max().unwrap_or_default();
        let reliable = self.consumer.reliable_queue(&self.queue, StringCodec).unwrap();
        let outcome = Outcome {
            lost: VALUES - distinct,
            handled_twice: log.len() - distinct,
            longest_pause,
            left_pending: delayed.len().await.unwrap(),
            left_ready: reliable.len().await.unwrap(),
            dead_letters: reliable.dead_letter_len().await.unwrap(),
        };
        eprintln!(
            "{}: {VALUES} values, {} lost, {} handled twice, longest pause from the disruption on {:?}; {report:?}",
            self.queue, outcome.lost, outcome.handled_twice, outcome.longest_pause
        );
        self.consumer.shutdown().await;
        self.producer.shutdown().await;
        outcome
    }

    fn distinct(&self) -> usize {
        let log = self.deliveries.lock();
        log.iter().map(|(v, _)| v.as_str()).collect::<HashSet<_>>().len()
    }
}
