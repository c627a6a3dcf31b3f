//! Batch handlers ([`Worker::run_batch`](super::Worker::run_batch)): the
//! values the worker's slots take, one per slot as for any handler, are
//! gathered into batches and the handler is called once per batch.
//!
//! Every value keeps what a value of a plain handler has: its own lease,
//! extended while its batch waits and runs; its own attempt count, retry
//! and dead letter; the handler timeout and a shutdown's abort. The first
//! value of a batch leads it: it waits until the batch is full or its
//! `wait` has passed, then runs the handler and hands each value its
//! outcome. A leader cut short (timeout, abort, panic) ends its batch: every
//! value in it fails that attempt and is retried; none is lost, none is
//! acked without the handler's word.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::{oneshot, Notify};

use crate::error::BoxError;

/// What a batch handler answers ([`Worker::run_batch`](super::Worker::run_batch)):
/// one outcome for the whole batch (`Result<(), E>`: every value acked, or
/// every value's attempt failed with that error), or one per value, in the
/// batch's order (`Vec<Result<(), E>>`).
///
/// ```
/// use delayq::worker::{BatchOutcome, Permanent};
///
/// // The second value is refused for good; the others are acked.
/// let each: Vec<Result<(), Permanent>> = vec![Ok(()), Err(Permanent::new("bad order")), Ok(())];
/// let outcomes = each.into_outcomes(3);
/// assert!(outcomes[0].is_ok() && outcomes[1].is_err() && outcomes[2].is_ok());
/// ```
pub trait BatchOutcome: Send + 'static {
    /// One outcome per value of a batch of `values`. A list of another
    /// length fails every value with a [`BatchError`] that says so.
    fn into_outcomes(self, values: usize) -> Vec<Result<(), BoxError>>;
}

impl<E: Into<BoxError> + Send + 'static> BatchOutcome for Result<(), E> {
    fn into_outcomes(self, values: usize) -> Vec<Result<(), BoxError>> {
        match self {
            Ok(()) => (0..values).map(|_| Ok(())).collect(),
            Err(error) => BatchError::shared(error.into(), values),
        }
    }
}

impl<E: Into<BoxError> + Send + 'static> BatchOutcome for Vec<Result<(), E>> {
    fn into_outcomes(self, values: usize) -> Vec<Result<(), BoxError>> {
        if self.len() != values {
            let error = format!(
                "the batch handler answered {} outcomes for a batch of {values} values",
                self.len()
            );
            return BatchError::shared(error.into(), values);
        }
        self.into_iter().map(|outcome| outcome.map_err(Into::into)).collect()
    }
}

/// The failure of a whole batch, as each of its values' attempts sees it:
/// the handler's one error (shared; its [`source`](std::error::Error::source)
/// is that error, so a [`Permanent`](super::Permanent) or
/// [`RetryAfter`](super::RetryAfter) in it acts on every value), a list of
/// outcomes of the wrong length, or a batch whose leading value was cut
/// short before the handler answered.
///
/// ```
/// use delayq::worker::{BatchError, BatchOutcome};
///
/// let failed: Result<(), std::io::Error> = Err(std::io::Error::other("bulk insert failed"));
/// let outcomes = failed.into_outcomes(2);
/// let error = outcomes[1].as_ref().unwrap_err();
/// assert!(error.downcast_ref::<BatchError>().is_some());
/// assert_eq!(error.to_string(), "a batch of 2 values failed: bulk insert failed");
/// ```
#[derive(Debug, Clone)]
pub struct BatchError {
    error: Arc<BoxError>,
    values: usize,
}

impl BatchError {
    fn shared(error: BoxError, values: usize) -> Vec<Result<(), BoxError>> {
        let error = Arc::new(error);
        (0..values)
            .map(|_| {
                Err(Box::new(BatchError {
                    error: Arc::clone(&error),
                    values,
                }) as BoxError)
            })
            .collect()
    }

    /// How many values the batch held.
    pub fn values(&self) -> usize {
        self.values
    }
}

impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a batch of {} values failed: {}", self.values, self.error)
    }
}

impl std::error::Error for BatchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&**self.error)
    }
}

/// A value's attempt ended because its batch did not run to an answer.
#[derive(Debug)]
struct BatchCutShort;

impl fmt::Display for BatchCutShort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("its batch ended before the handler answered (the leading value was cut short)")
    }
}

impl std::error::Error for BatchCutShort {}

type BatchFn<T> = Arc<dyn Fn(Vec<T>) -> Pin<Box<dyn Future<Output = Vec<Result<(), BoxError>>> + Send>> + Send + Sync>;
type Member<T> = (T, oneshot::Sender<Result<(), BoxError>>);

/// A batch being gathered: its values, and how its leader learns it is full.
struct Gathering<T> {
    members: Mutex<Vec<Member<T>>>,
    full: Notify,
}

/// Gathers the values of a worker's slots into batches.
pub(super) struct Batcher<T> {
    max: usize,
    wait: Duration,
    handler: BatchFn<T>,
    /// The batch new values join; none between batches.
    open: Mutex<Option<Arc<Gathering<T>>>>,
}

impl<T: Send + 'static> Batcher<T> {
    pub(super) fn new<F, Fut>(max: usize, wait: Duration, handler: F) -> Self
    where
        F: Fn(Vec<T>) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: BatchOutcome,
    {
        let handler = Arc::new(handler);
        let handler: BatchFn<T> = Arc::new(move |values: Vec<T>| {
            let count = values.len();
            let run = handler(values);
            Box::pin(async move { run.await.into_outcomes(count) })
        });
        Batcher {
            max: max.max(1),
            wait,
            handler,
            open: Mutex::new(None),
        }
    }

    /// Handles one value: joins the open batch, or opens one and leads it;
    /// answers with the value's own outcome.
    pub(super) async fn handle(self: Arc<Self>, value: T) -> Result<(), BoxError> {
        let (answer, outcome) = oneshot::channel();
        let lead = {
            let mut open = self.open.lock();
            match open.as_ref() {
                Some(gathering) => {
                    let full = {
                        let mut members = gathering.members.lock();
                        members.push((value, answer));
                        members.len() >= self.max
                    };
                    if full {
                        // The next value opens the next batch.
                        gathering.full.notify_one();
                        *open = None;
                    }
                    None
                }
                None => {
                    let gathering = Arc::new(Gathering {
                        members: Mutex::new(vec![(value, answer)]),
                        full: Notify::new(),
                    });
                    if self.max > 1 {
                        *open = Some(Arc::clone(&gathering));
                    }
                    Some(gathering)
                }
            }
        };
        if let Some(gathering) = lead {
            self.lead(gathering).await;
        }
        outcome.await.unwrap_or_else(|_| Err(Box::new(BatchCutShort)))
    }

    async fn lead(&self, gathering: Arc<Gathering<T>>) {
        // Closes the batch to newcomers whether the leader runs it or is cut
        // short while it waits (its members then fail, and are retried).
        let close = Close {
            open: &self.open,
            gathering: &gathering,
        };
        if self.max > 1 {
            let _ = tokio::time::timeout(self.wait, gathering.full.notified()).await;
        }
        drop(close);
        let members = std::mem::take(&mut *gathering.members.lock());
        let (values, answers): (Vec<T>, Vec<_>) = members.into_iter().unzip();
        let outcomes = (self.handler)(values).await;
        for (answer, outcome) in answers.into_iter().zip(outcomes) {
            let _ = answer.send(outcome);
        }
    }
}

/// Takes a batch out of the open slot, if it is still there.
struct Close<'a, T> {
    open: &'a Mutex<Option<Arc<Gathering<T>>>>,
    gathering: &'a Arc<Gathering<T>>,
}

impl<T> Drop for Close<'_, T> {
    fn drop(&mut self) {
        let mut open = self.open.lock();
        if open.as_ref().is_some_and(|o| Arc::ptr_eq(o, self.gathering)) {
            *open = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_full_batch_runs_at_once_and_each_value_gets_its_outcome() {
        let batcher = Arc::new(Batcher::new(
            3,
            Duration::from_secs(3600),
            |values: Vec<u32>| async move {
                values
                    .into_iter()
                    .map(|v| {
                        if v == 2 {
                            Err(std::io::Error::other("two"))
                        } else {
                            Ok(())
                        }
                    })
                    .collect::<Vec<_>>()
            },
        ));
        let runs: Vec<_> = (1..=3).map(|v| tokio::spawn(Arc::clone(&batcher).handle(v))).collect();
        let mut outcomes = Vec::new();
        for run in runs {
            // Full at 3: it runs without waiting out its hour.
            let outcome = tokio::time::timeout(Duration::from_secs(60), run)
                .await
                .expect("ran once full");
            outcomes.push(outcome.unwrap().map_err(|e| e.to_string()));
        }
        assert_eq!(outcomes, vec![Ok(()), Err("two".to_owned()), Ok(())]);
    }

    #[tokio::test]
    async fn a_leader_cut_short_fails_its_batch_and_the_next_value_opens_a_new_one() {
        let batcher = Arc::new(Batcher::new(10, Duration::from_secs(3600), |_: Vec<u32>| async {
            Ok::<(), std::io::Error>(())
        }));
        let leader = tokio::spawn(Arc::clone(&batcher).handle(1));
        tokio::task::yield_now().await;
        while batcher.open.lock().is_none() {
            tokio::task::yield_now().await;
        }
        let member = tokio::spawn(Arc::clone(&batcher).handle(2));
        while batcher.open.lock().as_ref().is_some_and(|g| g.members.lock().len() < 2) {
            tokio::task::yield_now().await;
        }
        leader.abort();
        let error = member.await.unwrap().unwrap_err();
        assert!(error.downcast_ref::<BatchCutShort>().is_some(), "{error}");
        assert!(batcher.open.lock().is_none(), "the cut-short batch is closed");
    }
}
