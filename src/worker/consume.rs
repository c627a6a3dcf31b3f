//! The worker's loop: take when slots are free (as many ready values as
//! free slots in one script while values are ready, else one blocking
//! take), run the handler in a task of its own, settle the delivery by what
//! it returned (a success through the ack buffer, `acks`).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use futures_util::future::{FusedFuture, FutureExt};
use futures_util::stream::{FuturesUnordered, StreamExt};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::acks;
use super::failure::{Abnormal, Failure, FailureAction, Permanent};
use super::handle::Counters;
use super::{prefetch, Handler, OnError, RetryPolicy};
use crate::error::{BoxError, Error};
use crate::queue::reliable::delivery::{Delivery, DeliveryLease, Release};
use crate::queue::reliable::{Batch, ReliableQueue, CLAIM_BATCH};
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
    /// How many deliveries to claim ahead of free slots.
    pub pace: prefetch::Pace,
}

/// Longest wait at stop for a value to be given back: a dropped take's, a
/// cancelled handler's, or one taken as the worker stops.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(5);

/// Pauses after a failed take, doubling up to the last.
const TAKE_BACKOFF: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(5));

pub(crate) async fn consume<T: Send + 'static>(context: Arc<Context<T>>, concurrency: usize, stop: CancellationToken) {
    let queue = context.queue.name().to_owned();
    let slots = Arc::new(Semaphore::new(concurrency));
    let (acks, acker) = acks::start(queue.clone(), context.counters.clone());
    let mut running = JoinSet::new();
    // Give-backs of values held ahead on their way.
    let mut releases = JoinSet::new();
    // Batch takes on their way (see `take_ready_batch`), each with how many
    // values it asked for; `claiming` is their sum.
    let mut claims = FuturesUnordered::new();
    let mut claiming = 0;
    // Deliveries claimed, waiting for a slot (see `prefetch`).
    let mut buffer = prefetch::Buffer::new(context.queue.settings().visibility);
    // Whether the last batch take found nothing ready: the next take waits.
    let mut wait = false;
    let mut pause = TAKE_BACKOFF.0;
    // After a failed claim, no claim before this (the buffer is still served).
    let mut claims_from = Instant::now();
    // While values are held ahead and no claim is on its way (one would
    // say), whether the queue was paused meanwhile: `EXISTS` on its flag,
    // every PAUSE_PROBE at most.
    let mut probing: Option<Probe> = None;
    let mut probe_from = Instant::now();
    tracing::debug!(queue, concurrency, "worker started");
    loop {
        if stop.is_cancelled() {
            break;
        }
        while running.try_join_next().is_some() {}
        while releases.try_join_next().is_some() {}
        // Paused: what is held goes back once every claim on its way has
        // answered, all in one release, so that the head is in claim order
        // again (a claim answering later would put its values in front).
        let paused = context.paused.load(Ordering::Relaxed);
        if paused && claims.is_empty() {
            give_back(&context, buffer.drain(), SETTLE_TIMEOUT, &mut releases);
        }
        // Buffered deliveries to free slots, oldest first; one that waited
        // too long goes back first in line instead.
        while !paused && !buffer.is_empty() {
            let stale = buffer.stale();
            if !stale.is_empty() {
                context.pace.stalled();
                give_back(&context, stale, SETTLE_TIMEOUT, &mut releases);
                continue;
            }
            let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
                break;
            };
            // None if it went stale since `stale()`: given back next round.
            let Some(delivery) = buffer.pop() else {
                continue;
            };
            running.spawn(handle_in_slot(Arc::clone(&context), delivery, slot, acks.clone()));
        }
        if !paused && probing.is_none() && claims.is_empty() && !buffer.is_empty() && Instant::now() >= probe_from {
            let context = Arc::clone(&context);
            probing = Some(Box::pin(async move { context.queue.is_paused_now().await }));
        }
        // While values are ready, claims keep as many deliveries claimed as
        // there are free slots plus what the handlers' pace allows ahead,
        // in batches, up to CLAIMS_AT_ONCE of them on their way; only an
        // empty (or paused, or rate-limited) queue is waited on, with one
        // blocking take.
        let backing_off = Instant::now() < claims_from;
        let batching = context.limiter.is_none() && !paused && !wait;
        if batching && !backing_off && claims.len() < CLAIMS_AT_ONCE {
            let target = slots.available_permits() + context.pace.ahead();
            let held = buffer.len() + claiming;
            // Claims of a batch, or of what is left to fill when that is at
            // least half one: never a claim per freed slot while values are
            // held ahead.
            let batch = target.saturating_sub(held).min(CLAIM_BATCH);
            if batch > 0 && batch >= target.min(CLAIM_BATCH).div_ceil(2) {
                claiming += batch;
                let claim = buffer.claim_sent();
                let context = Arc::clone(&context);
                claims.push(Box::pin(async move {
                    // Its values' wait for a slot counts from here.
                    let sent = Instant::now();
                    (claim, batch, sent, context.queue.take_ready_batch(batch).await)
                }));
                continue;
            }
        }
        if (batching && !backing_off) || !claims.is_empty() || !buffer.is_empty() {
            let wake_at = [
                buffer.next_stale(),
                (probing.is_none() && !buffer.is_empty()).then_some(probe_from),
                (batching && backing_off).then_some(claims_from),
            ]
            .into_iter()
            .flatten()
            .min();
            tokio::select! {
                biased;
                _ = stop.cancelled() => break,
                Some((claim, asked, sent, taken)) = claims.next(), if !claims.is_empty() => {
                    claiming -= asked;
                    let mut taken_in = Vec::new();
                    match taken {
                        Ok(Batch::Taken(deliveries)) => {
                            pause = TAKE_BACKOFF.0;
                            for delivery in deliveries {
                                match delivery {
                                    // Given back with the rest as the worker stops.
                                    Ok(delivery) => taken_in.push(delivery),
                                    Err(error) => undecodable(&context, error),
                                }
                            }
                        }
                        Ok(Batch::Nothing) => wait = true,
                        Ok(Batch::Paused) => context.paused.store(true, Ordering::Relaxed),
                        Err(Error::Shutdown) => break,
                        Err(error) => {
                            // Waited out beside the buffer, which is still served.
                            claims_from = Instant::now() + failed_take(&queue, &error, &mut pause);
                        }
                    }
                    // Taken before a pause, not started: given back with
                    // the rest once no claim is on its way.
                    buffer.answered(claim, sent, taken_in);
                }
                probed = async { probing.as_mut().expect("a probe on its way").await }, if probing.is_some() => {
                    probing = None;
                    probe_from = Instant::now() + PAUSE_PROBE;
                    match probed {
                        Ok(true) => context.paused.store(true, Ordering::Relaxed),
                        Ok(false) => {}
                        Err(error) => tracing::debug!(queue, %error, "could not ask whether the queue is paused"),
                    }
                }
                slot = Arc::clone(&slots).acquire_owned(), if !paused && !buffer.is_empty() => {
                    let slot = slot.expect("the semaphore is never closed");
                    if let Some(delivery) = buffer.pop() {
                        running.spawn(handle_in_slot(Arc::clone(&context), delivery, slot, acks.clone()));
                    }
                }
                // A handler ended: its slot may take a claim.
                Some(_) = running.join_next(), if buffer.is_empty() && !running.is_empty() => {}
                _ = sleep_until(wake_at), if wake_at.is_some() => {}
            }
            continue;
        }
        // A take moves a value, then claims it (a paused queue's claim puts
        // it back at the head): a give-back landing between the two would
        // go behind that value. It waits for the give-backs on their way.
        if !releases.is_empty() {
            tokio::select! {
                biased;
                _ = stop.cancelled() => break,
                _ = releases.join_next() => {}
            }
            continue;
        }
        wait = false;
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
                running.spawn(handle_in_slot(Arc::clone(&context), delivery, slot, acks.clone()));
            }
            Err(Error::Shutdown) => break,
            Err(Error::Decode(error)) => undecodable(&context, error),
            Err(error) => {
                if !back_off(&queue, &error, &mut pause, &stop).await {
                    break;
                }
            }
        }
    }
    tracing::debug!(
        queue,
        in_flight = running.len(),
        buffered = buffer.len(),
        "worker stopping; letting handlers finish"
    );
    // What no handler started goes back to the head, uncounted, in one
    // release: the buffer's and what the claims on their way bring (awaited
    // within the same deadline; past it they are dropped, and what they
    // claimed goes back on its own: they are cancel safe).
    let deadline = Instant::now() + SETTLE_TIMEOUT;
    while let Ok(Some((claim, _, sent, taken))) = tokio::time::timeout_at(deadline, claims.next()).await {
        let mut taken_in = Vec::new();
        if let Ok(Batch::Taken(deliveries)) = taken {
            for delivery in deliveries {
                match delivery {
                    Ok(delivery) => taken_in.push(delivery),
                    Err(error) => undecodable(&context, error),
                }
            }
        }
        buffer.answered(claim, sent, taken_in);
    }
    drop(claims);
    let left = deadline.saturating_duration_since(Instant::now());
    give_back(&context, buffer.drain(), left, &mut releases);
    while releases.join_next().await.is_some() {}
    while running.join_next().await.is_some() {}
    // The last acks: sent before the worker reports it has stopped.
    drop(acks);
    let _ = acker.await;
    // A take dropped by the stop gives back what it popped in the background:
    // let that land before the worker reports it has stopped.
    context.queue.core().settling().settled(SETTLE_TIMEOUT).await;
}

/// Batch takes on their way at once: round trips overlap, so handlers
/// never wait for one.
const CLAIMS_AT_ONCE: usize = 4;

/// A pause probe on its way: whether the queue is paused.
type Probe = Pin<Box<dyn Future<Output = Result<bool, Error>> + Send>>;

/// How often a worker holding values ahead, with no claim on its way, asks
/// whether its queue was paused: held values go back within about this
/// long of a pause.
const PAUSE_PROBE: Duration = Duration::from_millis(100);

/// Gives deliveries no handler started back to the queue's head, uncounted,
/// in one ordered release (`DeliveryLease::release_unhandled`), in a task
/// of the worker's, within `within` (then their visibility timeout gives
/// back what is left).
fn give_back<T: Send + 'static>(
    context: &Arc<Context<T>>,
    deliveries: Vec<Delivery<T>>,
    within: Duration,
    releases: &mut JoinSet<()>,
) {
    if deliveries.is_empty() {
        return;
    }
    let queue = context.queue.name().to_owned();
    tracing::debug!(
        queue,
        values = deliveries.len(),
        "giving back values claimed ahead that no handler started"
    );
    let leases: Vec<DeliveryLease> = deliveries.into_iter().map(|d| d.into_parts().1).collect();
    releases.spawn(async move {
        let values = leases.len();
        if let Err(error) = DeliveryLease::release_unhandled(leases, within).await {
            tracing::warn!(queue, values, %error, "could not give back the values held ahead; their visibility timeout will");
        }
    });
}

/// Sleeps until `at` (never when `None`; the caller does not poll it then).
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
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

/// Logs a failed take (batched or single) and returns how long to wait
/// before the next, doubling the wait after it up to its cap.
fn failed_take(queue: &str, error: &Error, pause: &mut Duration) -> Duration {
    tracing::warn!(queue, %error, retry_in = ?*pause, "taking from the queue failed");
    let wait = *pause;
    *pause = (*pause * 2).min(TAKE_BACKOFF.1);
    wait
}

/// Waits out a failed single take; false if the worker was stopped meanwhile.
async fn back_off(queue: &str, error: &Error, pause: &mut Duration, stop: &CancellationToken) -> bool {
    let wait = failed_take(queue, error, pause);
    tokio::select! {
        _ = stop.cancelled() => false,
        _ = tokio::time::sleep(wait) => true,
    }
}

/// Handles a delivery in its slot; a success goes to the ack buffer, a
/// failure is settled in the slot, so that a retry due at once is back in
/// the queue before the slot takes again.
async fn handle_in_slot<T: Send + 'static>(
    context: Arc<Context<T>>,
    delivery: Delivery<T>,
    _slot: OwnedSemaphorePermit,
    acks: acks::Acks,
) {
    let Some(done) = run_one(&context, delivery).await else {
        return;
    };
    context.pace.ran(done.took);
    match done.result {
        Ok(()) => {
            let Done { lease, took, span, .. } = done;
            // Waits, holding the slot, while the buffer is full. The buffer
            // outlives every sender; had it ended (a panic), the lease
            // dropped here gives the value back.
            if acks.send(acks::Succeeded { lease, took, span }).await.is_err() {
                tracing::warn!(
                    queue = context.queue.name(),
                    "the ack buffer is gone; a handled value goes back to the queue"
                );
            }
        }
        Err(_) => Box::pin(settle(&context, done)).await,
    }
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
    #[cfg(feature = "opentelemetry")]
    lease.adopt_trace(&span); // the offer's span as parent and link
    Counters::add(&context.counters.handled);
    let started = Instant::now();
    let Some(result) = run_handler(context, value, attempt, &lease)
        .instrument(span.clone())
        .await
    else {
        // Cancelled by a shutdown whose grace ran out: first in line again.
        Box::pin(release_within(queue, &mut lease, Release::Head, "a cancelled value").instrument(span)).await;
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

/// The handler's result (it gets the value and its attempt), or `None`
/// when a shutdown cancelled it. Keeps the delivery's visibility deadline
/// ahead while it runs.
async fn run_handler<T: Send + 'static>(
    context: &Context<T>,
    value: T,
    attempt: u32,
    lease: &DeliveryLease,
) -> Option<Result<(), BoxError>> {
    let mut run = tokio::spawn((context.handler)(value, attempt).in_current_span());
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
                // Boxed, as are the other rare paths' futures: inline, their
                // Redis calls made every handler task 16 KB to spawn.
                extending.set(Box::pin(lease.extend(visibility)).fuse());
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
