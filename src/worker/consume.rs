//! The worker's loop, a [`Consumer`] that keeps its handler slots busy from
//! its queue's claim stream, in named steps:
//!
//! - [`serve_buffer`](Consumer::serve_buffer): deliveries claimed ahead go to
//!   free slots, oldest first; those that waited too long go back instead;
//! - [`probe`](Consumer::probe): while values are held ahead and no claim is
//!   on its way (one would say), asks now and then whether the queue was
//!   paused;
//! - [`claim`](Consumer::claim): while values are ready, keeps as many
//!   claimed as there are free slots plus what the handlers' pace allows
//!   ahead (`prefetch`);
//! - [`wait_for_news`](Consumer::wait_for_news): a claim's answer, a probe's,
//!   a free slot, a handler's end, a deadline;
//! - [`take_one`](Consumer::take_one): an empty, paused or rate-limited queue
//!   is waited on with one take at a time;
//! - [`finish`](Consumer::finish): at the stop, handlers end and what no
//!   handler started goes back.
//!
//! On a pause and at the stop, what is held goes back to the head in one
//! ordered release once the claims on their way have answered. Each
//! slot runs in a task of its own, one delivery after another (`handling`).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::StreamExt;
use futures_util::FutureExt;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::handle::Counters;
use super::handling::{self, Succeeded};
use super::{prefetch, Handler, OnError, RetryPolicy};
use crate::error::Error;
use crate::queue::priority::PRIORITY_ROUND;
use crate::queue::reliable::{
    AckSink, Answer, Claim, Claims, Delivery, Ready, ReliableQueue, CLAIM_BATCH, FULL_WAIT, FULL_WAIT_MOST,
};

/// What a running worker's loop and its handler tasks share.
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
    /// Set when a claim, a probe or a take found the queue paused: nothing
    /// more is claimed or started (each take would move a value out and
    /// back), what is held goes back, and the loop's one take waits for the
    /// resume. Cleared when that take delivers.
    pub paused: AtomicBool,
    /// How many deliveries to claim ahead of free slots.
    pub pace: prefetch::Pace,
    /// The deliveries its handlers run now, for its heartbeat.
    pub busy: Arc<super::presence::Busy>,
    /// Told when an ack batch or a failed value's settle of this worker's
    /// has landed: room under the queue's concurrency limit, which a claim
    /// that found none waits for.
    pub room: Arc<Notify>,
    /// The jobs its handlers run, for its cancel poll.
    pub jobs: Arc<super::job_context::Watch>,
    /// Whether its handler slots are shared with other workers' (the
    /// partitions of a `PartitionedWorker`): an idle take then waits for a
    /// value before it holds a slot, so that a worker waiting on an empty
    /// partition keeps no slot from the others.
    pub shared_slots: bool,
    /// With shared slots: the most one claim reserves, so that every
    /// partition's loop claims beside the others (one taking every free
    /// slot for its claim made the others wait for its handlers).
    pub slot_share: usize,
    /// Whether a claim reserves its slots first: shared slots and
    /// `prefetch(0)`, which promises nothing held ahead. With values
    /// claimed ahead anyway, a value claimed for a slot another partition
    /// took waits in the buffer as any value ahead does, and claims go
    /// without waiting for slots (reserving cost a partitioned worker a
    /// quarter of its rate in bench 24).
    pub reserve_slots: bool,
}

/// Longest wait at stop for a value to be given back: a dropped take's, a
/// cancelled handler's, or one held ahead as the worker stops.
pub(super) const SETTLE_TIMEOUT: Duration = Duration::from_secs(5);

/// Pause of a take with shared slots that found the concurrency limit full.
const FULL_PAUSE_SHARED: Duration = Duration::from_millis(50);

/// Pauses after a failed take, doubling up to the last.
const TAKE_BACKOFF: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(5));

/// How often a worker holding values ahead, with no claim on its way, asks
/// whether its queue was paused: held values go back within about this
/// long of a pause.
const PAUSE_PROBE: Duration = Duration::from_millis(100);

/// Runs a worker's loop until `stop`, then lets its handlers finish.
/// `slots` holds a permit per handler that may run (shared by the
/// partitions of a `PartitionedWorker`).
pub(crate) async fn consume<T: Send + 'static>(
    context: Arc<Context<T>>,
    slots: Arc<Semaphore>,
    stop: CancellationToken,
) {
    Consumer::new(context, slots, stop).run().await
}

/// A worker's loop and what it holds (see the module docs).
struct Consumer<T: Send + 'static> {
    context: Arc<Context<T>>,
    stop: CancellationToken,
    /// A permit per handler that may run.
    slots: Arc<Semaphore>,
    /// The handler tasks.
    running: JoinSet<()>,
    /// Give-backs of values held ahead, on their way.
    releases: JoinSet<()>,
    /// The queue's claim stream: batch claims on their way.
    claims: Claims<T>,
    /// Deliveries claimed, waiting for a slot (slots take from it too).
    buffer: Arc<prefetch::Shared<T>>,
    /// Where handlers send what succeeded, and the sink's task.
    acks: AckSink<Succeeded>,
    acker: JoinHandle<()>,
    probe: Probe,
    backoff: Backoff,
    /// Whether the last claim found nothing ready: the next take waits.
    idle: bool,
    /// Whether the last claim found the concurrency limit full: the next
    /// waits for an ack of this worker's to land, or its pause
    /// (`full_wait`) for room another process made.
    full: bool,
    full_wait: Duration,
    /// With shared slots: the permits taken for what is claimed and held
    /// (`reserve`), so that values claimed for free slots find them free.
    reserved: Option<OwnedSemaphorePermit>,
}

/// Whether the queue was paused, asked while values are held ahead and no
/// claim is on its way: `EXISTS` on its flag, every [`PAUSE_PROBE`] at most.
struct Probe {
    on_way: Option<Probing>,
    next: Instant,
}

/// A pause probe on its way: whether the queue is paused.
type Probing = Pin<Box<dyn Future<Output = Result<bool, Error>> + Send>>;

/// The wait after failed takes: claims wait it out beside the buffer (which
/// is still served), a single take in place.
struct Backoff {
    pause: Duration,
    claims_from: Instant,
}

impl Backoff {
    /// Logs a failed take and returns how long to wait before the next,
    /// doubling the wait after it up to its cap.
    fn failed(&mut self, queue: &str, error: &Error) -> Duration {
        tracing::warn!(queue, %error, retry_in = ?self.pause, "taking from the queue failed");
        let wait = self.pause;
        self.pause = (self.pause * 2).min(TAKE_BACKOFF.1);
        wait
    }

    /// A take delivered: the next failure waits the shortest pause again.
    fn reset(&mut self) {
        self.pause = TAKE_BACKOFF.0;
    }
}

impl<T: Send + 'static> Consumer<T> {
    fn new(context: Arc<Context<T>>, slots: Arc<Semaphore>, stop: CancellationToken) -> Self {
        let (acks, acker) = context.queue.ack_sink(handling::acked(&context));
        Consumer {
            slots,
            running: JoinSet::new(),
            releases: JoinSet::new(),
            claims: context.queue.claims(),
            buffer: Arc::new(prefetch::Shared::new(context.queue.visibility_timeout())),
            acks,
            acker,
            probe: Probe {
                on_way: None,
                next: Instant::now(),
            },
            backoff: Backoff {
                pause: TAKE_BACKOFF.0,
                claims_from: Instant::now(),
            },
            idle: false,
            full: false,
            full_wait: FULL_WAIT,
            reserved: None,
            context,
            stop,
        }
    }

    async fn run(mut self) {
        tracing::debug!(
            queue = self.name(),
            concurrency = self.slots.available_permits(),
            "worker started"
        );
        loop {
            if self.stop.is_cancelled() {
                break;
            }
            while self.running.try_join_next().is_some() {}
            while self.releases.try_join_next().is_some() {}
            if self.paused() {
                self.buffer.close();
                self.give_back_held();
            } else {
                self.buffer.open();
                self.serve_buffer();
                self.probe();
                if self.claim() {
                    continue;
                }
            }
            self.release_surplus();
            // Idle slots wait for the claims on their way, or end.
            self.buffer.expect(!self.claims.is_idle());
            let go_on = if self.claiming() || self.full || !self.claims.is_idle() || !self.buffer.lock().is_empty() {
                self.wait_for_news().await
            } else {
                self.take_one().await
            };
            if !go_on {
                break;
            }
        }
        self.finish().await
    }

    fn name(&self) -> &str {
        self.context.queue.name()
    }

    fn paused(&self) -> bool {
        self.context.paused.load(Ordering::Relaxed)
    }

    /// Whether values are claimed in batches now: not while rate limited,
    /// paused, after a claim found nothing, or backing off a failure.
    fn claiming(&self) -> bool {
        self.context.limiter.is_none() && !self.paused() && !self.idle && Instant::now() >= self.backoff.claims_from
    }

    /// Paused: what is held goes back once every claim on its way has
    /// answered, all in one release, so that the head is in claim order
    /// again (a claim answering later would put its values in front).
    fn give_back_held(&mut self) {
        if self.claims.is_idle() {
            let held = self.buffer.lock().drain();
            self.give_back(held, SETTLE_TIMEOUT);
        }
    }

    /// Step `buffer`: buffered deliveries to free slots, oldest first. Once
    /// one has waited too long, everything held goes back to the head in one
    /// release, in claim order, when no claim is on its way (as on a pause:
    /// giving back the stale ones first and the rest later put the later
    /// values in front of the earlier), and nothing more is claimed ahead
    /// until a handler finishes: the pace was wrong.
    fn serve_buffer(&mut self) {
        while !self.buffer.lock().is_empty() {
            if self.buffer.lock().any_stale() {
                self.context.pace.stalled();
                if self.claims.is_idle() {
                    let held = self.buffer.lock().drain();
                    self.give_back(held, SETTLE_TIMEOUT);
                }
                return;
            }
            let Some(slot) = self
                .reserved_one()
                .or_else(|| Arc::clone(&self.slots).try_acquire_owned().ok())
            else {
                break;
            };
            // None if it went stale since `any_stale()`: given back next round.
            let next = self.buffer.lock().pop(Instant::now());
            if let Some(delivery) = next {
                self.start(delivery, slot);
            }
        }
    }

    /// Step `probe`: sends a pause probe when values are held ahead, no
    /// claim is on its way, and the last probe is [`PAUSE_PROBE`] old.
    fn probe(&mut self) {
        if self.probe.on_way.is_none()
            && self.claims.is_idle()
            && !self.buffer.lock().is_empty()
            && Instant::now() >= self.probe.next
        {
            let context = Arc::clone(&self.context);
            self.probe.on_way = Some(Box::pin(async move { context.queue.is_paused_now().await }));
        }
    }

    /// Step `claims`: while values are ready, keeps as many deliveries
    /// claimed as there are free slots plus what the handlers' pace allows
    /// ahead, in batches of the claim stream. Claims a batch, or what is
    /// left to fill when that is at least half one: never a claim per
    /// freed slot while values are held ahead. Whether it sent a claim.
    fn claim(&mut self) -> bool {
        if !self.claiming() || !self.claims.has_room() {
            return false;
        }
        // Under a concurrency limit, at most half the room the last claim
        // left: a value held here holds a slot of the fleet's while it
        // waits, so near the limit nothing is held ahead.
        let ahead = match self.context.queue.limit_room() {
            Some(room) => self.context.pace.ahead().min(usize::try_from(room / 2).unwrap_or(0)),
            None => self.context.pace.ahead(),
        };
        let free = if self.context.reserve_slots {
            self.reserve();
            self.reserved_count()
        } else {
            self.slots.available_permits()
        };
        let target = free + self.buffer.idle_slots() + ahead;
        let held = self.buffer.lock().len() + self.claims.asked();
        let batch = target.saturating_sub(held).min(CLAIM_BATCH);
        let sent = batch > 0 && batch >= target.min(CLAIM_BATCH).div_ceil(2) && self.claims.ask(batch);
        if !sent {
            self.release_surplus();
        }
        sent
    }

    /// With shared slots, takes free permits of the pool (up to a claim
    /// batch in all) before a claim: every partition's loop saw the same
    /// free permits and claimed for them, so values were held in a buffer
    /// for slots another partition took, with `prefetch(0)` too.
    fn reserve(&mut self) {
        let most = CLAIM_BATCH.min(self.context.slot_share.max(1));
        let want = most
            .saturating_sub(self.reserved_count())
            .min(self.slots.available_permits());
        let Ok(want) = u32::try_from(want) else { return };
        if want == 0 {
            return;
        }
        // Fails when another loop took some meanwhile: it claims for them.
        if let Ok(permits) = Arc::clone(&self.slots).try_acquire_many_owned(want) {
            match &mut self.reserved {
                Some(reserved) => reserved.merge(permits),
                None => self.reserved = Some(permits),
            }
        }
    }

    fn reserved_count(&self) -> usize {
        self.reserved.as_ref().map_or(0, OwnedSemaphorePermit::num_permits)
    }

    /// One reserved permit, for a buffered delivery.
    fn reserved_one(&mut self) -> Option<OwnedSemaphorePermit> {
        let reserved = self.reserved.as_mut()?;
        if reserved.num_permits() > 1 {
            return reserved.split(1);
        }
        self.reserved.take()
    }

    /// Gives the pool back what is reserved beyond the values held and
    /// asked for (a claim answered fewer, a slot task took a buffered
    /// value with its own permit, the buffer went back).
    fn release_surplus(&mut self) {
        let keep = self.buffer.lock().len() + self.claims.asked();
        let Some(reserved) = self.reserved.as_mut() else { return };
        let surplus = reserved.num_permits().saturating_sub(keep);
        if surplus == 0 {
            return;
        }
        if surplus == reserved.num_permits() {
            self.reserved = None;
        } else {
            drop(reserved.split(surplus));
        }
    }

    /// Step `wait_for_news`: waits for a claim's answer, a probe's, a free
    /// slot for a buffered delivery, a handler's end (its slot may claim),
    /// or the next deadline (a buffered delivery going stale, the next
    /// probe, the end of a back-off). False once the worker stops.
    async fn wait_for_news(&mut self) -> bool {
        let paused = self.paused();
        let backing_off =
            !paused && self.context.limiter.is_none() && !self.idle && Instant::now() < self.backoff.claims_from;
        let (next_stale, held) = {
            let buffer = self.buffer.lock();
            // While claims are on their way, their answers wake the loop: a
            // stale buffer waits for them (see `serve_buffer`).
            let next_stale = buffer.next_stale().filter(|_| self.claims.is_idle());
            (next_stale, !buffer.is_empty())
        };
        let wake_at = [
            next_stale,
            // A probe goes only while no claim is on its way (see `probe`):
            // its deadline meanwhile, long past, woke the loop at once,
            // round after round, about once per value handled.
            (self.probe.on_way.is_none() && held && self.claims.is_idle()).then_some(self.probe.next),
            backing_off.then_some(self.backoff.claims_from),
        ]
        .into_iter()
        .flatten()
        .min();
        // Shared slots, all taken (by other partitions' handlers, which no
        // step here waits for): the claim waits for a free one. Without
        // this a partition with values waited for nothing, for ever, once
        // the others held every slot.
        let wait_for_slot =
            self.context.shared_slots && self.claiming() && self.claims.is_idle() && self.reserved.is_none() && !held;
        tokio::select! {
            biased;
            _ = self.stop.cancelled() => return false,
            Some(claim) = self.claims.next(), if !self.claims.is_idle() => return self.taken_in(claim),
            probed = async { self.probe.on_way.as_mut().expect("a probe on its way").await }, if self.probe.on_way.is_some() => {
                self.probe.on_way = None;
                self.probe.next = Instant::now() + PAUSE_PROBE;
                match probed {
                    Ok(true) => self.context.paused.store(true, Ordering::Relaxed),
                    Ok(false) => {}
                    Err(error) => tracing::debug!(queue = self.name(), %error, "could not ask whether the queue is paused"),
                }
            }
            slot = Arc::clone(&self.slots).acquire_owned(), if !paused && !self.buffer.lock().is_empty() => {
                let slot = slot.expect("the semaphore is never closed");
                let next = self.buffer.lock().pop(Instant::now());
                if let Some(delivery) = next {
                    self.start(delivery, slot);
                }
            }
            Some(_) = self.running.join_next(), if self.buffer.lock().is_empty() && !self.running.is_empty() => {}
            slot = Arc::clone(&self.slots).acquire_owned(), if wait_for_slot => {
                self.reserved = Some(slot.expect("the semaphore is never closed"));
            }
            // Slots took from the buffer: there may be room to claim.
            _ = self.buffer.taken(), if held => {}
            // A settle of ours landed: room under the concurrency limit.
            _ = self.context.room.notified(), if self.full => {
                self.full = false;
                self.backoff.claims_from = Instant::now();
            }
            _ = sleep_until(wake_at), if wake_at.is_some() => {}
        }
        true
    }

    /// A claim's answer into the buffer (in claim order; taken before a
    /// pause and not started, it goes back with the rest once no claim is
    /// on its way). False when the client has shut down.
    fn taken_in(&mut self, Claim { number, sent, answer }: Claim<T>) -> bool {
        let mut taken = Vec::new();
        match answer {
            Answer::Taken(deliveries, undecodable) => {
                self.backoff.reset();
                (self.full, self.full_wait) = (false, FULL_WAIT);
                taken = deliveries;
                for error in undecodable {
                    handling::undecodable(&self.context, error);
                }
            }
            // Not full any more (a `full` left set would keep the loop off
            // `take_one`, the only step that waits for a value or a resume).
            Answer::Nothing => (self.idle, self.full) = (true, false),
            // At the concurrency limit: claims wait for an ack of ours to
            // land, or for the pause (room made elsewhere is not told).
            Answer::Full => {
                self.full = true;
                // An ack that landed before this answer made no room for
                // it: its signal, kept by the `Notify`, is dropped.
                let _ = self.context.room.notified().now_or_never();
                self.backoff.claims_from = Instant::now() + self.full_wait;
                self.full_wait = (self.full_wait * 2).min(FULL_WAIT_MOST);
            }
            Answer::Paused => {
                self.full = false;
                self.context.paused.store(true, Ordering::Relaxed)
            }
            Answer::Failed(Error::Shutdown) => return false,
            // Waited out beside the buffer, which is still served.
            Answer::Failed(error) => {
                // The failure's back-off, not cut short by an ack.
                self.full = false;
                self.backoff.claims_from = Instant::now() + self.backoff.failed(self.context.queue.name(), &error)
            }
        }
        let waiting = {
            let mut buffer = self.buffer.lock();
            buffer.answered(number, sent, taken);
            buffer.waiting()
        };
        self.buffer.filled(waiting, self.context.pace.quick());
        true
    }

    /// Step `take_one`: one take, with a free slot, for a queue that is
    /// empty (it waits for a value), paused (it waits for the resume) or
    /// rate limited (it waits for a permit). False once the worker stops.
    async fn take_one(&mut self) -> bool {
        // A take moves a value, then claims it (a paused queue's claim puts
        // it back at the head): a give-back landing between the two would
        // go behind that value. It waits for the give-backs on their way.
        if !self.releases.is_empty() {
            tokio::select! {
                biased;
                _ = self.stop.cancelled() => return false,
                _ = self.releases.join_next() => return true,
            }
        }
        if self.paused() {
            // Known paused (a claim or a probe said so): wait for the resume.
            // A take now would move a value out of the list and back (its
            // claim refuses), for nothing, and another reader of the list
            // could see it missing meanwhile.
            let resumed = tokio::select! {
                biased;
                _ = self.stop.cancelled() => return false,
                resumed = self.context.queue.wait_while_paused(None) => resumed,
            };
            match resumed {
                Ok(()) => self.context.paused.store(false, Ordering::Relaxed),
                Err(error) => {
                    tracing::debug!(queue = self.name(), %error, "could not ask whether the queue was resumed")
                }
            }
            return true;
        }
        self.idle = false;
        if self.context.shared_slots && self.context.limiter.is_none() {
            // Shared slots: wait for a value first, holding none.
            let ready = tokio::select! {
                biased;
                _ = self.stop.cancelled() => return false,
                ready = self.context.queue.wait_ready(None) => ready,
            };
            if let Err(error) = ready {
                if matches!(error, Error::Shutdown) {
                    return false;
                }
                let wait = self.backoff.failed(self.context.queue.name(), &error);
                tokio::select! {
                    _ = self.stop.cancelled() => return false,
                    _ = tokio::time::sleep(wait) => {}
                }
                return true;
            }
        }
        let slot = tokio::select! {
            biased;
            _ = self.stop.cancelled() => return false,
            slot = Arc::clone(&self.slots).acquire_owned() => slot.expect("the semaphore is never closed"),
        };
        // A take cancelled here gives back a value the server moved for it,
        // also while it was being claimed (to the head, uncounted).
        let taken = if self.context.queue.marked_now() && self.context.limiter.is_none() {
            match self.claim_or_wait().await {
                Some(taken) => taken,
                None => return !self.stop.is_cancelled(),
            }
        } else {
            tokio::select! {
                biased;
                _ = self.stop.cancelled() => return false,
                taken = take(&self.context) => taken,
            }
        };
        match taken {
            Ok(None) => {}
            Ok(Some(delivery)) => {
                self.backoff.reset();
                self.context.paused.store(false, Ordering::Relaxed);
                self.start(delivery, slot);
            }
            Err(Error::Shutdown) => return false,
            Err(Error::Decode(error)) => handling::undecodable(&self.context, error),
            Err(error) => {
                let wait = self.backoff.failed(self.context.queue.name(), &error);
                tokio::select! {
                    _ = self.stop.cancelled() => return false,
                    _ = tokio::time::sleep(wait) => {}
                }
            }
        }
        true
    }

    /// [`take_one`](Self::take_one)'s take on a queue with groups or
    /// priority values: a claim of what is ready now, run to its end; when
    /// nothing is, a wait that takes nothing, ended by a settle of ours (it
    /// frees a key's slot, which no blocking read sees), a value in the
    /// list, or the end of a round ([`PRIORITY_ROUND`]: values in sets no
    /// blocking read watches, and other processes' settles). `None` when the
    /// loop should simply go on (it claims again). A take raced against the
    /// settles as a whole was dropped mid-claim whenever a settle landed,
    /// and the value it had claimed went back: one key's values ran at a
    /// few a second, each claimed, given back and claimed again.
    async fn claim_or_wait(&mut self) -> Option<Result<Option<Delivery<T>>, Error>> {
        let ready = tokio::select! {
            biased;
            _ = self.stop.cancelled() => return None,
            ready = self.context.queue.take_ready() => ready,
        };
        let full = match ready {
            Ok(Ready::Taken(delivery)) => return Some(Ok(Some(delivery))),
            Ok(Ready::Paused) => {
                self.context.paused.store(true, Ordering::Relaxed);
                return None;
            }
            Ok(Ready::Full) => true,
            Ok(Ready::Nothing) => false,
            Err(error) => return Some(Err(error)),
        };
        let waited = tokio::select! {
            biased;
            _ = self.stop.cancelled() => return None,
            _ = self.context.room.notified() => Ok(()),
            // At the queue's concurrency limit (values may be in the list):
            // room made by another process is seen by asking again.
            _ = tokio::time::sleep(FULL_WAIT_MOST), if full => Ok(()),
            waited = self.context.queue.wait_ready(Some(Instant::now() + PRIORITY_ROUND)), if !full => waited,
        };
        match waited {
            Ok(()) => None,
            Err(error) => Some(Err(error)),
        }
    }

    /// Runs `delivery`'s handler in `slot`, in a slot task that goes on
    /// with the next buffered ones.
    fn start(&mut self, delivery: Delivery<T>, slot: tokio::sync::OwnedSemaphorePermit) {
        let handling = handling::handle_in_slot(
            Arc::clone(&self.context),
            delivery,
            slot,
            self.acks.clone(),
            Arc::clone(&self.buffer),
        );
        self.running.spawn(handling);
    }

    /// Gives deliveries no handler started back to the queue's head,
    /// uncounted, in one ordered release, in a task of the worker's, within
    /// `within` (then their visibility timeout gives back what is left).
    fn give_back(&mut self, deliveries: Vec<Delivery<T>>, within: Duration) {
        if deliveries.is_empty() {
            return;
        }
        let (queue, values) = (self.context.queue.clone(), deliveries.len());
        tracing::debug!(
            queue = queue.name(),
            values,
            "giving back values claimed ahead that no handler started"
        );
        self.releases.spawn(async move {
            if let Err(error) = queue.release_unhandled(deliveries, within).await {
                tracing::warn!(queue = queue.name(), values, %error, "could not give back the values held ahead; their visibility timeout will");
            }
        });
    }

    /// Step `finish`: what no handler started goes back to the head,
    /// uncounted, in one release (the buffer's and what the claims on their
    /// way bring, awaited within the same deadline; past it they are
    /// dropped, and what they claimed goes back on its own: they are cancel
    /// safe); the handlers finish and their last acks are sent before the
    /// worker reports it has stopped.
    async fn finish(mut self) {
        tracing::debug!(
            queue = self.name(),
            in_flight = self.running.len(),
            buffered = self.buffer.lock().len(),
            "worker stopping; letting handlers finish"
        );
        self.buffer.close();
        let deadline = Instant::now() + SETTLE_TIMEOUT;
        while !self.claims.is_idle() {
            let Ok(Some(Claim { number, sent, answer })) = tokio::time::timeout_at(deadline, self.claims.next()).await
            else {
                break;
            };
            let mut taken = Vec::new();
            if let Answer::Taken(deliveries, undecodable) = answer {
                taken = deliveries;
                for error in undecodable {
                    handling::undecodable(&self.context, error);
                }
            }
            self.buffer.lock().answered(number, sent, taken);
        }
        self.claims.abandon();
        self.reserved = None;
        let held = self.buffer.lock().drain();
        self.give_back(held, deadline.saturating_duration_since(Instant::now()));
        while self.releases.join_next().await.is_some() {}
        while self.running.join_next().await.is_some() {}
        let Consumer {
            context, acks, acker, ..
        } = self;
        drop(acks);
        let _ = acker.await;
        // A take dropped by the stop gives back what it popped in the
        // background: let that land before the worker reports it has stopped.
        context.queue.settled(SETTLE_TIMEOUT).await;
    }
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
        // A value was ready (see `take_one`): take it without waiting; one
        // gone by now is `None`, and the loop waits again without the slot.
        None if context.shared_slots => match context.queue.take_ready().await? {
            Ready::Taken(delivery) => Ok(Some(delivery)),
            Ready::Full => {
                tokio::time::sleep(FULL_PAUSE_SHARED).await;
                Ok(None)
            }
            Ready::Paused => {
                context.paused.store(true, Ordering::Relaxed);
                Ok(None)
            }
            Ready::Nothing => Ok(None),
        },
        None => context.queue.take().await.map(Some),
    }
}
