//! The worker's loop: take when a slot is free, run the handler in a task of
//! its own, settle the delivery by what it returned; while values are ready,
//! the slot's task takes the next one itself.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use futures_util::future::{FusedFuture, FutureExt};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::failure::{Abnormal, Failure, FailureAction, Permanent};
use super::handle::Counters;
use super::{Handler, OnError, RetryPolicy};
use crate::error::{BoxError, DecodeError, Error};
use crate::queue::reliable::delivery::{Delivery, DeliveryLease, Release};
use crate::queue::reliable::{Ready, ReliableQueue};
use crate::telemetry::{self, DeadLettered, Handled};

pub(crate) struct Context<T> {
    pub queue: ReliableQueue<T>,
    pub handler: Handler<T>,
    pub retry: RetryPolicy,
    pub handler_timeout: Option<Duration>,
    pub on_error: Option<OnError>,
    pub counters: Arc<Counters>,
    /// Cancels handlers still running when a shutdown's grace is over.
    pub abort: CancellationToken,
    /// The queue's shared rate limit, if set.
    pub limiter: Option<super::rate_limit::Limiter>,
    /// Set when a slot's take found the queue paused: slots take nothing
    /// more (each take would move a value out and back, and values moved at
    /// once come back in claim order, not move order) and the consume loop's
    /// one take waits for the resume. Cleared when that take delivers.
    pub paused: AtomicBool,
}

/// Longest wait at stop for a value to be given back: a dropped take's, a
/// cancelled handler's, or one taken as the worker stops.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(5);

/// Pauses after a failed take, doubling up to the last.
const TAKE_BACKOFF: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(5));

pub(crate) async fn consume<T: Send + 'static>(context: Arc<Context<T>>, concurrency: usize, stop: CancellationToken) {
    let queue = context.queue.name().to_owned();
    let slots = Arc::new(Semaphore::new(concurrency));
    let mut running = JoinSet::new();
    let mut pause = TAKE_BACKOFF.0;
    tracing::debug!(queue, concurrency, "worker started");
    loop {
        while running.try_join_next().is_some() {}
        let slot = tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            slot = Arc::clone(&slots).acquire_owned() => slot.expect("the semaphore is never closed"),
        };
        // A take cancelled here gives back a value the server moved for it,
        // also while it was being claimed (to the head, uncounted).
        let taken = tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            taken = take(&context) => taken,
        };
        match taken {
            Ok(None) => {}
            Ok(Some(delivery)) => {
                pause = TAKE_BACKOFF.0;
                context.paused.store(false, Ordering::Relaxed);
                running.spawn(handle_then_take_ready(
                    Arc::clone(&context),
                    delivery,
                    slot,
                    stop.clone(),
                ));
            }
            Err(Error::Shutdown) => break,
            Err(Error::Decode(error)) => undecodable(&context, error),
            Err(error) => {
                tracing::warn!(queue, %error, retry_in = ?pause, "taking from the queue failed");
                tokio::select! {
                    _ = stop.cancelled() => break,
                    _ = tokio::time::sleep(pause) => {}
                }
                pause = (pause * 2).min(TAKE_BACKOFF.1);
            }
        }
    }
    tracing::debug!(
        queue,
        in_flight = running.len(),
        "worker stopping; letting handlers finish"
    );
    while running.join_next().await.is_some() {}
    // A take dropped by the stop gives back what it popped in the background:
    // let that land before the worker reports it has stopped.
    context.queue.core().settling().settled(SETTLE_TIMEOUT).await;
}

/// Takes the next value; with a rate limit, once one is ready, a permit
/// first, and `None` (permit given back) when the value was gone by then.
async fn take<T: Send + 'static>(context: &Context<T>) -> Result<Option<Delivery<T>>, Error> {
    match &context.limiter {
        Some(limiter) => limiter.take(&context.queue).await,
        None => context.queue.take().await.map(Some),
    }
}

fn undecodable<T: 'static>(context: &Context<T>, error: crate::error::DecodeError) {
    Counters::add(&context.counters.undecodable);
    let action = if error.restored() {
        Counters::add(&context.counters.dead_lettered);
        FailureAction::DeadLettered
    } else {
        FailureAction::Unsettled
    };
    tracing::warn!(queue = context.queue.name(), %error, ?action, "a value could not be decoded");
    report(context, 0, Box::new(error), action);
}

/// Handles a delivery in its slot, then, while values are ready and the
/// worker is not stopping, takes and handles the next ones in the same slot
/// (`LMOVE` and claim on the shared connections, never a blocking move): a
/// busy queue is taken from by every slot at once, while an idle worker
/// waits with the consume loop's one blocking take, as does a worker of a
/// paused queue. Rate-limited slots take turns through the loop instead.
async fn handle_then_take_ready<T: Send + 'static>(
    context: Arc<Context<T>>,
    delivery: Delivery<T>,
    _slot: OwnedSemaphorePermit,
    stop: CancellationToken,
) {
    let mut handled = run_one(&context, delivery).await;
    // `None`: the slot is done (see `take_and_run`).
    while let Some(done) = handled.take() {
        // Checked before each take, not raced with it: a take of a ready
        // value does not wait for one (`LMOVE`, then claim.lua); only a
        // shutdown whose grace is over cuts one short (see `take_and_run`).
        let stopping = || stop.is_cancelled() || context.paused.load(Ordering::Relaxed);
        if context.limiter.is_some() || stopping() {
            settle(&context, done).await;
            return;
        }
        if done.result.is_err() {
            // A failed value is settled first, so that a retry due at once
            // is back in the queue before this slot takes again.
            settle(&context, done).await;
            if stopping() {
                return;
            }
            handled = reported(&context, take_and_run(&context, &stop).await);
            continue;
        }
        // The ack and the next move go out together, pipelined on the shared
        // connections: a round trip less per value. The next handler starts
        // as soon as its value is claimed, while a slow ack (retrying through
        // an outage) goes on beside it, so the new lease never waits on it.
        // One handler at a time: the slot holds both.
        let ((), next) = tokio::join!(settle(&context, done), take_and_run(&context, &stop));
        // Reported once the ack has ended: a hook of the user's that panics
        // cannot drop an ack under way (its delivery would go back unacked).
        handled = reported(&context, next);
    }
}

/// A slot's next handled value; an undecodable one is reported (the
/// `on_error` hook runs) and ends the slot.
fn reported<T: 'static>(context: &Context<T>, next: Result<Option<Done>, DecodeError>) -> Option<Done> {
    next.unwrap_or_else(|error| {
        undecodable(context, error);
        None
    })
}

/// Takes a ready value and runs the handler on it. `Ok(None)`: the slot is
/// done (nothing was ready, the queue is paused, the take failed and the
/// consume loop takes over, the handler was cancelled, or the worker is
/// stopping and a value taken then went back). `Err`: a value that could
/// not be decoded went back (or to the dead letters), for the caller to
/// report; the slot stops and the consume loop takes next, one take at a
/// time while undecodable values keep coming.
async fn take_and_run<T: Send + 'static>(
    context: &Context<T>,
    stop: &CancellationToken,
) -> Result<Option<Done>, DecodeError> {
    // Cut short once a shutdown's grace is over: a claim queued in fred
    // through an outage would hold the stop until Redis is back. A take
    // dropped then gives back what it took (it is cancel safe).
    let taken = tokio::select! {
        biased;
        _ = context.abort.cancelled() => return Ok(None),
        taken = context.queue.take_ready() => taken,
    };
    match taken {
        Ok(Ready::Taken(delivery)) if stop.is_cancelled() => {
            release_unhandled(context, delivery).await;
            Ok(None)
        }
        Ok(Ready::Taken(delivery)) => Ok(run_one(context, delivery).await),
        Ok(Ready::Nothing) => Ok(None),
        Ok(Ready::Paused) => {
            context.paused.store(true, Ordering::Relaxed);
            Ok(None)
        }
        Err(Error::Decode(error)) => Err(error),
        // The consume loop's take meets it too, and backs off.
        Err(error) => {
            tracing::debug!(queue = context.queue.name(), %error, "a slot's take failed; the consume loop takes over");
            Ok(None)
        }
    }
}

/// Releases a delivery taken as the worker was stopping, before a handler
/// saw it: first in line again, its delivery count as it was before.
async fn release_unhandled<T: 'static>(context: &Context<T>, delivery: Delivery<T>) {
    let (_, mut lease) = delivery.into_parts();
    release_within(
        context.queue.name(),
        &mut lease,
        Release::Unhandled,
        "a value taken as the worker stopped",
    )
    .await;
}

/// Releases `what` to `to`, waiting [`SETTLE_TIMEOUT`] at most, as a stop
/// waits for nothing longer: with Redis out of reach the release goes on
/// trying in the background, and its visibility timeout is the last resort.
async fn release_within(queue: &str, lease: &mut DeliveryLease, to: Release, what: &str) {
    match tokio::time::timeout(SETTLE_TIMEOUT, lease.release(to)).await {
        Ok(Ok(_)) => {}
        Ok(Err(error)) => {
            tracing::warn!(queue, %error, "could not give back {what}; its visibility timeout will")
        }
        Err(_) => {
            tracing::warn!(
                queue,
                "Redis did not answer the give-back of {what} in time; its visibility timeout will"
            )
        }
    }
}

/// A handler's run, to settle.
struct Done {
    lease: DeliveryLease,
    result: Result<(), BoxError>,
    attempt: u32,
    took: Duration,
    span: tracing::Span,
}

/// Runs the handler for one delivery; `None` when a shutdown cancelled it
/// (its value is given back then).
async fn run_one<T: Send + 'static>(context: &Context<T>, delivery: Delivery<T>) -> Option<Done> {
    let queue = context.queue.name();
    let attempt = delivery.delivery_count();
    let span = tracing::info_span!("delayq.handle", queue, attempt, lateness_ms = tracing::field::Empty);
    if let Some(lateness) = delivery.lateness() {
        span.record("lateness_ms", lateness.as_millis() as u64);
    }
    let (value, mut lease) = delivery.into_parts();
    Counters::add(&context.counters.handled);
    let started = Instant::now();
    let Some(result) = run_handler(context, value, &lease).instrument(span.clone()).await else {
        // Cancelled by a shutdown whose grace ran out: first in line again.
        release_within(queue, &mut lease, Release::Head, "a cancelled value")
            .instrument(span)
            .await;
        return None;
    };
    Some(Done {
        lease,
        result,
        attempt,
        took: started.elapsed(),
        span,
    })
}

/// Settles a handled delivery by its handler's result: an ack, a retry or
/// a dead letter.
async fn settle<T: 'static>(context: &Context<T>, done: Done) {
    let Done {
        mut lease,
        result,
        attempt,
        took,
        span,
    } = done;
    match result {
        Ok(()) => match lease.ack().await {
            Ok(acked) => {
                Counters::add(&context.counters.succeeded);
                telemetry::handled(context.queue.name(), Handled::Ok, took);
                if acked {
                    tracing::debug!(parent: &span, ?took, "handled");
                } else {
                    tracing::warn!(parent: &span, ?took, "handled, but too late: the visibility timeout had given the value back");
                }
            }
            Err(error) => {
                tracing::warn!(parent: &span, %error, "handled, but the ack failed; the value may be delivered again");
            }
        },
        Err(error) => settle_failure(context, &mut lease, attempt, error, took, &span).await,
    }
}

/// The handler's result, or `None` when a shutdown cancelled it. Keeps the
/// delivery's visibility deadline ahead while it runs.
async fn run_handler<T: Send + 'static>(
    context: &Context<T>,
    value: T,
    lease: &DeliveryLease,
) -> Option<Result<(), BoxError>> {
    let mut run = tokio::spawn((context.handler)(value).in_current_span());
    let visibility = context.queue.settings().visibility;
    let every = visibility / 3;
    let mut extend = tokio::time::interval_at(Instant::now() + every, every);
    // An extension under way, polled beside the handler: awaited inline it
    // held up the handler's timeout and a shutdown's abort for as long as
    // Redis took to answer (an outage: as long as that lasted).
    let mut extending = std::pin::pin!(futures_util::future::Fuse::terminated());
    let timeout = async {
        match context.handler_timeout {
            Some(limit) => tokio::time::sleep(limit).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(timeout);
    loop {
        tokio::select! {
            joined = &mut run => return Some(match joined {
                Ok(result) => result,
                Err(error) => {
                    Counters::add(&context.counters.panicked);
                    Err(Box::new(Abnormal::Panicked(panic_message(error))))
                }
            }),
            _ = extend.tick(), if extending.is_terminated() => {
                extending.set(lease.extend(visibility).fuse());
            }
            extended = &mut extending => match extended {
                Ok(true) => {}
                // Given back by the reaper: another consumer may be handling
                // the value now (its ack, not ours, will count).
                Ok(false) => tracing::warn!("the delivery's visibility timeout lapsed while its handler ran; the value may be handled twice"),
                Err(error) => tracing::debug!(%error, "could not extend the visibility timeout"),
            },
            _ = &mut timeout => {
                stop_handler(run).await;
                Counters::add(&context.counters.timed_out);
                let limit = context.handler_timeout.unwrap_or_default();
                return Some(Err(Box::new(Abnormal::TimedOut(limit))));
            }
            _ = context.abort.cancelled() => {
                stop_handler(run).await;
                return None;
            }
        }
    }
}

/// How long a cancelled handler may take to stop before its value is
/// settled anyway.
const HANDLER_STOP_WAIT: Duration = Duration::from_secs(5);

/// Cancels a handler and waits until it has stopped (a handler stops at its
/// next `.await`): settled before, its value could be taken and handled
/// again while it still runs, past the worker's concurrency. A handler that
/// blocks its thread cannot be stopped; after [`HANDLER_STOP_WAIT`] it is
/// left to finish alone, and said so.
async fn stop_handler(mut run: tokio::task::JoinHandle<Result<(), BoxError>>) {
    run.abort();
    if tokio::time::timeout(HANDLER_STOP_WAIT, &mut run).await.is_err() {
        tracing::warn!(
            "a cancelled handler has not stopped (does it block its thread?); its value is settled while it runs on"
        );
    }
}

async fn settle_failure<T: 'static>(
    context: &Context<T>,
    lease: &mut DeliveryLease,
    attempt: u32,
    error: BoxError,
    took: Duration,
    span: &tracing::Span,
) {
    let queue = context.queue.name();
    let permanent = Permanent::is_in(&*error);
    let planned = if permanent || !context.retry.retries_after(attempt) {
        FailureAction::DeadLettered
    } else {
        FailureAction::Retry {
            after: context.retry.next_delay(attempt),
        }
    };
    let to = match planned {
        FailureAction::Retry { after } => Release::After(after),
        _ if permanent => Release::DeadLetter(format!("permanent failure at attempt {attempt}: {error}")),
        _ => Release::DeadLetter(format!("failed {attempt} attempt(s), the last: {error}")),
    };
    let action = match lease.release(to).await {
        Ok(_) => planned,
        Err(settle_error) => {
            tracing::warn!(parent: span, error = %settle_error, "could not settle a failed value; its visibility timeout will give it back");
            FailureAction::Unsettled
        }
    };
    match action {
        FailureAction::Retry { .. } => {
            Counters::add(&context.counters.retried);
            telemetry::retried(queue);
            telemetry::handled(queue, Handled::Retry, took);
        }
        FailureAction::DeadLettered => {
            Counters::add(&context.counters.dead_lettered);
            let reason = if permanent {
                DeadLettered::Permanent
            } else {
                DeadLettered::Attempts
            };
            telemetry::dead_lettered(queue, reason);
            telemetry::handled(queue, Handled::DeadLetter, took);
        }
        _ => telemetry::handled(queue, Handled::Unsettled, took),
    }
    tracing::warn!(parent: span, error = %error, ?action, "handler failed");
    report(context, attempt, error, action);
}

fn report<T: 'static>(context: &Context<T>, attempt: u32, error: BoxError, action: FailureAction) {
    if let Some(hook) = &context.on_error {
        hook(&Failure {
            queue: context.queue.name().to_owned(),
            attempt,
            error,
            action,
        });
    }
}

fn panic_message(error: tokio::task::JoinError) -> String {
    if !error.is_panic() {
        return error.to_string();
    }
    let payload = error.into_panic();
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "(no message)".to_owned()
    }
}
