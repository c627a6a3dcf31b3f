//! One delivery in a worker's handler slot: the handler is polled once in
//! the slot's task, and one that waits goes on in a task of its own, its
//! visibility deadline kept ahead meanwhile (during the first poll, by the
//! worker's lease keeper, `presence::keep_leases`), within the handler
//! timeout and the shutdown's grace; then the delivery is settled
//! by what it returned: a success through the queue's ack sink, a failure
//! by a retry or a dead letter (`RetryPolicy`, `Permanent`), reported to
//! the error hook.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::{FusedFuture, FutureExt};
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;
use tracing::Instrument;

use super::consume::{Context, SETTLE_TIMEOUT};
use super::failure::{Abnormal, Failure, FailureAction, Permanent, RetryAfter};
use super::handle::Counters;
use super::job_context::JobContext;
use super::prefetch::Shared;
use super::presence::Shown;
use crate::error::{BoxError, DecodeError, Error};
use crate::queue::reliable::{AckSink, Delivery, DeliveryLease};
use crate::telemetry::{self, DeadLettered, Handled};

/// A delivery whose handler succeeded, on its way through the ack sink.
pub(super) struct Succeeded {
    took: Duration,
    span: tracing::Span,
}

/// The ack sink's report of a batch of a worker's acks: counted and
/// logged as the handlers' successes, the metrics once per batch.
pub(super) fn acked<T: 'static>(
    context: &Context<T>,
) -> impl Fn(Vec<Succeeded>, Result<&[bool], &Error>) + Send + Sync + use<T> {
    let (queue, counters, room) = (
        context.queue.name().to_owned(),
        Arc::clone(&context.counters),
        Arc::clone(&context.room),
    );
    move |batch, outcome| match outcome {
        Ok(acked) => {
            room.notify_one();
            Counters::add_many(&counters.succeeded, batch.len());
            telemetry::handled_all(&queue, Handled::Ok, batch.iter().map(|s| s.took));
            for (Succeeded { took, span }, acked) in batch.into_iter().zip(acked) {
                if *acked {
                    tracing::debug!(parent: &span, ?took, "handled");
                } else {
                    tracing::warn!(parent: &span, ?took, "handled, but too late: the visibility timeout had given the value back");
                }
            }
        }
        // Acked on the primary, not confirmed by the replicas the queue's
        // durability asks for: done, and said so.
        Err(error @ Error::NotReplicated { .. }) => {
            room.notify_one();
            Counters::add_many(&counters.succeeded, batch.len());
            telemetry::handled_all(&queue, Handled::Ok, batch.iter().map(|s| s.took));
            for Succeeded { span, .. } in batch {
                tracing::warn!(parent: &span, %error, "handled and acked, but the ack may be lost in a failover");
            }
        }
        Err(error) => {
            for Succeeded { span, .. } in batch {
                tracing::warn!(parent: &span, %error, "handled, but the ack failed; the value may be delivered again");
            }
        }
    }
}

/// Counts and reports a value that could not be decoded (given back, or
/// dead-lettered as a worker's queue is set up, by the take).
pub(super) fn undecodable<T: 'static>(context: &Context<T>, error: DecodeError) {
    Counters::add(&context.counters.undecodable);
    Counters::add(&context.counters.failed);
    let action = if error.restored() {
        Counters::add(&context.counters.dead_lettered);
        FailureAction::DeadLettered
    } else {
        FailureAction::Unsettled
    };
    tracing::warn!(queue = context.queue.name(), %error, ?action, "a value could not be decoded");
    report(context, 0, Box::new(error), action);
}

/// Handles a delivery in its slot, then the next ones the worker holds
/// ahead, oldest first, while there are any: a slot's task ends when the
/// buffer is empty, closed (a pause, the stop), or its handler was
/// cancelled.
pub(super) async fn handle_in_slot<T: Send + 'static>(
    context: Arc<Context<T>>,
    mut delivery: Delivery<T>,
    _slot: OwnedSemaphorePermit,
    acks: AckSink<Succeeded>,
    buffer: Arc<Shared<T>>,
) {
    // Each value's steps are inline here, not async fns of their own: a
    // future is copied whole into its caller's as it starts, and those
    // nested futures were kilobytes a value, most of a busy worker's
    // memcpy. The rare paths (a failure, a cancel, a handler that waits)
    // are boxed for the same reason.
    let queue = context.queue.name();
    loop {
        let attempt = delivery.delivery_count();
        let span = tracing::info_span!("delayq.handle", queue, attempt, lateness_ms = tracing::field::Empty);
        if let Some(lateness) = delivery.lateness() {
            span.record("lateness_ms", lateness.as_millis() as u64);
        }
        let lease_until = delivery.leased_at() + context.queue.visibility_timeout();
        // One clock read for both: shown running since, and the handler's time.
        let started = Instant::now();
        let shown = context.busy.enter(
            delivery.id(),
            attempt,
            delivery.job_id(),
            started,
            lease_until,
            delivery.lease_member().clone(),
        );
        // A value with a job: its context, watched for a cancel while it runs.
        let job = delivery.job_id().map(|id| {
            JobContext::new(
                id,
                Arc::clone(context.queue.core()),
                Arc::clone(context.queue.shared_keys()),
                delivery.lease_member().clone(),
            )
        });
        let watched = job.as_ref().map(|job| context.jobs.enter(delivery.id(), job));
        let headers = delivery.take_headers();
        let (value, mut lease) = delivery.into_parts();
        #[cfg(feature = "opentelemetry")]
        lease.adopt_trace(&span); // the offer's span as parent and link
        Counters::add(&context.counters.handled);
        let ran = run_handler(
            &context,
            (value, attempt, headers),
            job.as_ref(),
            &lease,
            &shown,
            started,
            &buffer,
        )
        .instrument(span.clone())
        .await;
        drop(shown);
        drop(watched);
        let Some(result) = ran else {
            // Cancelled by a shutdown whose grace ran out: first in line again.
            Box::pin(give_back_first(queue, &mut lease).instrument(span)).await;
            return;
        };
        let finished = Instant::now();
        let took = finished - started;
        context.pace.ran(took);
        if !super::prefetch::is_quick(took) {
            buffer.spread();
        }
        // The clock for the next take's staleness check: read again only
        // after a wait (a full ack sink, a failure's settling).
        // A run_job handler's result goes with its ack.
        if let (Ok(()), Some(kept)) = (&result, job.as_ref().and_then(JobContext::take_result)) {
            lease.set_result(kept);
        }
        let now = match result {
            // Waits, holding the slot, while the sink is full. The sink
            // outlives every sender; had it ended (a panic), the lease
            // dropped here gives the value back.
            Ok(()) => match acks.send(lease, Succeeded { took, span }).await {
                Ok(false) => finished,
                Ok(true) => Instant::now(),
                Err(_) => {
                    tracing::warn!(queue, "the ack sink is gone; a handled value goes back to the queue");
                    Instant::now() // it may have waited before the sink went
                }
            },
            // Settled in the slot, so that a retry due at once is back in
            // the queue before the slot takes again.
            // A failure costs the slot a round trip however quick the
            // handler: one more idle slot wakes while values wait, as for
            // a slow handler (quick failures woke too few slots otherwise).
            Err(error) => {
                let cancelled = job.as_ref().is_some_and(JobContext::is_cancelled);
                if !cancelled || !Box::pin(settle_cancelled(&context, &mut lease, &error, &span)).await {
                    Box::pin(settle_failure(&context, &mut lease, attempt, error, took, &span)).await;
                }
                buffer.spread();
                Instant::now()
            }
        };
        // Slots shared with other partitions' loops: the slot goes back
        // after each value, to the loop that has waited longest for one
        // (the semaphore is first come, first served); keeping it for this
        // partition's next value let one backlog hold the whole budget.
        if context.shared_slots {
            return;
        }
        match buffer.take_next(now).await {
            Some(next) => delivery = next,
            None => return,
        }
    }
}

/// Settles a value whose job's cancel its handler saw, and which then
/// failed: dropped, neither retried nor dead-lettered. `false` when no
/// cancel is asked after all (the caller settles it as a failure).
async fn settle_cancelled<T: 'static>(
    context: &Context<T>,
    lease: &mut DeliveryLease,
    error: &BoxError,
    span: &tracing::Span,
) -> bool {
    match lease.cancel_settle().await {
        Ok(None) => false,
        Ok(Some(_)) => {
            context.room.notify_one();
            Counters::add(&context.counters.cancelled);
            tracing::info!(parent: span, %error, "the job stopped on its cancel");
            true
        }
        Err(settle_error) => {
            tracing::warn!(parent: span, error = %settle_error, "could not settle a cancelled job; its visibility timeout will give it back, and the take that reaches it drops it");
            true
        }
    }
}

/// Gives a cancelled handler's value back first in line, waiting
/// [`SETTLE_TIMEOUT`] at most, as a stop waits for nothing longer: with
/// Redis out of reach the release goes on trying in the background, and its
/// visibility timeout is the last resort.
async fn give_back_first(queue: &str, lease: &mut DeliveryLease) {
    match tokio::time::timeout(SETTLE_TIMEOUT, lease.give_back_first()).await {
        Ok(Ok(_)) => {}
        Ok(Err(error)) => {
            tracing::warn!(queue, %error, "could not give back a cancelled value; its visibility timeout will")
        }
        Err(_) => tracing::warn!(
            queue,
            "Redis did not answer the give-back of a cancelled value in time; its visibility timeout will"
        ),
    }
}

/// The handler's result (it gets the value and its attempt), or `None`
/// when a shutdown cancelled it. Keeps the delivery's visibility deadline
/// ahead while it runs.
async fn run_handler<T: Send + 'static>(
    context: &Context<T>,
    (value, attempt, headers): (T, u32, crate::Headers),
    job: Option<&JobContext>,
    lease: &DeliveryLease,
    shown: &Shown,
    started: Instant,
    buffer: &Shared<T>,
) -> Option<Result<(), BoxError>> {
    let panicked = |panic| {
        Counters::add(&context.counters.panicked);
        Some(Err::<(), BoxError>(Box::new(Abnormal::Panicked(panic_text(panic)))))
    };
    // The handler's own code before its first `.await` runs here: a panic
    // in it is the handler's, not the worker's.
    let mut handling =
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (context.handler)(value, attempt))) {
            Ok(handling) => handling,
            Err(panic) => return panicked(panic),
        };
    // Polled once in place first: a handler done at once (no `.await` that
    // waits) needs no task, timers or wake-ups of its own. That was a task,
    // a timer and a cross-thread wake per value, most of a quick handler's
    // cost. One that waits goes on in a task of its own, as below. The
    // headers are at hand in both, shared (none: nothing to share).
    let headers = crate::queue::headers::shared(headers);
    let first = std::future::poll_fn(|cx| {
        let poll = || {
            crate::queue::headers::poll_scoped(headers.clone(), || {
                JobContext::poll_scoped(job, || handling.as_mut().poll(cx))
            })
        };
        std::task::Poll::Ready(std::panic::catch_unwind(std::panic::AssertUnwindSafe(poll)))
    })
    .await;
    match first {
        Ok(std::task::Poll::Ready(result)) => return Some(in_time(context, result, started)),
        Ok(std::task::Poll::Pending) => buffer.spread(),
        Err(panic) => return panicked(panic),
    }
    // Boxed: each value's future is moved into its caller's when it
    // starts, so its size is a copy per value; inline, this rare path's
    // timers and select made it most of the worker's memcpy.
    Box::pin(run_on(
        context,
        JobContext::scope(job.cloned(), crate::queue::headers::scope(headers, handling)),
        lease,
        shown,
    ))
    .await
}

/// A handler that waited at its first poll, run on in a task of its own.
async fn run_on<T: Send + 'static>(
    context: &Context<T>,
    handling: impl Future<Output = Result<(), BoxError>> + Send + 'static,
    lease: &DeliveryLease,
    shown: &Shown,
) -> Option<Result<(), BoxError>> {
    let mut run = tokio::spawn(handling.in_current_span());
    let visibility = context.queue.visibility_timeout();
    let every = visibility / 3;
    let mut extend = tokio::time::interval_at(Instant::now() + every, every);
    // An extension under way, polled beside the handler: awaited inline it
    // held up the handler's timeout and a shutdown's abort for as long as
    // Redis took to answer (an outage: as long as that lasted).
    let mut extending = std::pin::pin!(futures_util::future::Fuse::terminated());
    let mut extension_sent = Instant::now();
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
                extension_sent = Instant::now();
                extending.set(Box::pin(lease.extend(visibility)).fuse());
            }
            extended = &mut extending => match extended {
                Ok(true) => shown.extended(extension_sent + visibility),
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

/// Settles a failed run: a retry through the delayed queue (after the
/// policy's delay, or the handler's [`RetryAfter`]), or a dead letter (the
/// last attempt, or a [`Permanent`] error).
async fn settle_failure<T: 'static>(
    context: &Context<T>,
    lease: &mut DeliveryLease,
    attempt: u32,
    error: BoxError,
    took: Duration,
    span: &tracing::Span,
) {
    let queue = context.queue.name();
    Counters::add(&context.counters.failed);
    let permanent = Permanent::is_in(&*error);
    let planned = if permanent || !context.retry.retries_after(attempt) {
        FailureAction::DeadLettered
    } else {
        FailureAction::Retry {
            // The handler's own delay, when it asked for one.
            after: RetryAfter::find(&*error).unwrap_or_else(|| context.retry.next_delay(attempt)),
        }
    };
    let outcome = match error.downcast_ref::<Abnormal>() {
        Some(Abnormal::Panicked(_)) => "panicked",
        Some(Abnormal::TimedOut(_)) => "handler_timeout",
        None => "failed",
    };
    lease.record_failure(crate::queue::jobs::Ending::failed(
        outcome,
        &*error,
        crate::worker::Backtraced::find,
    ));
    let released = match planned {
        FailureAction::Retry { after } => lease.retry_after(after).await,
        _ if permanent => (lease.dead_letter(format!("permanent failure at attempt {attempt}: {error}"))).await,
        _ => {
            lease
                .dead_letter(format!("failed {attempt} attempt(s), the last: {error}"))
                .await
        }
    };
    let action = match released {
        Ok(_) => {
            // Its lease is gone: room under a concurrency limit.
            context.room.notify_one();
            planned
        }
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

/// Tells the error hook, if any.
pub(super) fn report<T: 'static>(context: &Context<T>, attempt: u32, error: BoxError, action: FailureAction) {
    if let Some(hook) = &context.on_error {
        hook(&Failure {
            queue: context.queue.name().to_owned(),
            attempt,
            error,
            action,
        });
    }
}

/// A handler's result from its first poll: past the handler timeout (it
/// blocked its thread, so no timer could stop it) it counts as timed out, as
/// it would have had it run in a task of its own.
fn in_time<T: Send + 'static>(
    context: &Context<T>,
    result: Result<(), BoxError>,
    started: Instant,
) -> Result<(), BoxError> {
    match context.handler_timeout {
        Some(limit) if started.elapsed() > limit => {
            Counters::add(&context.counters.timed_out);
            Err(Box::new(Abnormal::TimedOut(limit)))
        }
        _ => result,
    }
}

fn panic_message(error: tokio::task::JoinError) -> String {
    if !error.is_panic() {
        return error.to_string();
    }
    panic_text(error.into_panic())
}

/// A panic's message, when it has one.
fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "(no message)".to_owned()
    }
}
