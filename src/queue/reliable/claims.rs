//! A consumer's claim stream: the batch claims it asks for
//! (`claim_batch.lua`, up to [`CLAIM_BATCH`] values each, up to
//! [`CLAIMS_AT_ONCE`] on their way at once, so that round trips overlap),
//! polled as a [`Stream`] of their answers, as apalis-core's
//! `Backend::poll` hands a worker its requests. A [`Worker`](crate::Worker)
//! decides when to ask and for how many; the stream owns how a claim is
//! sent, numbered and answered.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::stream::{FusedStream, FuturesUnordered, Stream, StreamExt};
use tokio::time::Instant;

use crate::error::{DecodeError, Error};

use super::claim_batch::Batch;
pub(crate) use super::claim_batch::CLAIM_BATCH;
use super::delivery::Delivery;
use super::ReliableQueue;

/// The answer of one claim.
pub(crate) struct Claim<T> {
    /// Claims are numbered from 0 in the order they were asked for; they may
    /// answer in another order (a batch's trace contexts are read in a
    /// second round trip).
    pub number: u64,
    /// When it was sent: a value's wait for a handler counts from here.
    pub sent: Instant,
    pub answer: Answer<T>,
}

/// What a claim came to.
pub(crate) enum Answer<T> {
    /// Deliveries in list order (none when every value popped went to the
    /// dead letters), and the values that could not be decoded (each given
    /// back or dead-lettered already, as the queue is set up).
    Taken(Vec<Delivery<T>>, Vec<DecodeError>),
    /// No value was ready, or the claim failed through the connection
    /// (logged; what it claimed goes back).
    Nothing,
    /// The queue is paused: nothing was taken.
    Paused,
    /// The queue's concurrency limit has no room: nothing was taken.
    Full,
    /// The claim failed (nothing was taken): [`Error::Shutdown`] once the
    /// client closes.
    Failed(Error),
}

/// Claims on their way at once: their round trips overlap, so handlers
/// never wait for one.
pub(crate) const CLAIMS_AT_ONCE: usize = 4;

type Claiming<T> = Pin<Box<dyn Future<Output = (usize, Claim<T>)> + Send>>;

/// Batch claims of one consumer on their way, as a stream of their answers
/// (see the module docs). Cancel safe: a claim dropped on its way (the
/// stream dropped) gives what it claimed back to the head, uncounted.
pub(crate) struct Claims<T> {
    queue: ReliableQueue<T>,
    on_way: FuturesUnordered<Claiming<T>>,
    /// Values asked for by the claims on their way.
    asked: usize,
    /// The number of the next claim.
    next: u64,
}

impl<T: Send + 'static> ReliableQueue<T> {
    /// A claim stream on this queue, with no claim on its way yet.
    pub(crate) fn claims(&self) -> Claims<T> {
        Claims {
            queue: self.clone(),
            on_way: FuturesUnordered::new(),
            asked: 0,
            next: 0,
        }
    }

    /// Whether the queue is paused (or its takes are switched off) now: a
    /// consumer holding values ahead, with no claim on its way to tell it,
    /// asks.
    pub(crate) async fn is_paused_now(&self) -> crate::error::Result<bool> {
        self.handle.takes_held().await
    }
}

impl<T: Send + 'static> Claims<T> {
    /// Sends a claim of up to `n` values (at most [`CLAIM_BATCH`]), unless
    /// [`CLAIMS_AT_ONCE`] are on their way already; whether it sent one.
    pub(crate) fn ask(&mut self, n: usize) -> bool {
        if n == 0 || self.on_way.len() >= CLAIMS_AT_ONCE {
            return false;
        }
        let n = n.min(CLAIM_BATCH);
        let (number, queue) = (self.next, self.queue.clone());
        self.next += 1;
        self.asked += n;
        self.on_way.push(Box::pin(async move {
            let sent = Instant::now();
            let answer = match queue.take_ready_batch(n).await {
                Ok(Batch::Taken(taken)) => {
                    let (mut deliveries, mut undecodable) = (Vec::with_capacity(taken.len()), Vec::new());
                    for delivery in taken {
                        match delivery {
                            Ok(delivery) => deliveries.push(delivery),
                            Err(error) => undecodable.push(error),
                        }
                    }
                    Answer::Taken(deliveries, undecodable)
                }
                Ok(Batch::Nothing) => Answer::Nothing,
                Ok(Batch::Paused) => Answer::Paused,
                Ok(Batch::Full) => Answer::Full,
                Err(error) => Answer::Failed(error),
            };
            (n, Claim { number, sent, answer })
        }));
        true
    }

    /// Values asked for by the claims on their way.
    pub(crate) fn asked(&self) -> usize {
        self.asked
    }

    /// Whether no claim is on its way.
    pub(crate) fn is_idle(&self) -> bool {
        self.on_way.is_empty()
    }

    /// Drops the claims on their way: each gives what it claimed back to
    /// the head, uncounted, on its own.
    pub(crate) fn abandon(&mut self) {
        self.on_way.clear();
        self.asked = 0;
    }

    /// Whether another claim may be sent now.
    pub(crate) fn has_room(&self) -> bool {
        self.on_way.len() < CLAIMS_AT_ONCE
    }
}

impl<T: Send + 'static> Stream for Claims<T> {
    type Item = Claim<T>;

    /// The next claim to answer; `None` while none is on its way (a claim
    /// asked for later is polled again).
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Claim<T>>> {
        let this = self.get_mut();
        match this.on_way.poll_next_unpin(cx) {
            Poll::Ready(Some((asked, claim))) => {
                this.asked -= asked;
                Poll::Ready(Some(claim))
            }
            other => other.map(|_| None),
        }
    }
}

impl<T: Send + 'static> FusedStream for Claims<T> {
    fn is_terminated(&self) -> bool {
        self.on_way.is_terminated()
    }
}
