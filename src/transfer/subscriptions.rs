//! Keeps the one subscriber connection subscribed to every scheduled queue's
//! channel, in a task of its own so that slow (or failing) `SUBSCRIBE`s never
//! hold up due transfers.
//!
//! Operations run in the order they were asked for, so an unsubscribe never
//! overtakes the subscribe of a queue registered again right after. After the
//! connection comes back, every tracked channel is subscribed again and the
//! scheduler is told, so it transfers every queue (elements may have come due
//! while no message could arrive).
//!
//! A connection can also die silently (a NAT or firewall dropping its state,
//! a peer that stops answering): nothing arrives, and nothing says so. So the
//! subscriber is sent a `PING` (answered inside subscribed mode too) every
//! [`PING_EVERY`] while idle; one unanswered within [`PING_TIMEOUT`], like a
//! `SUBSCRIBE` unanswered within [`COMMAND_TIMEOUT`], forces a reconnection,
//! after which every channel is subscribed again and every queue transferred.

use std::collections::VecDeque;
use std::time::Duration;

use fred::clients::SubscriberClient;
use fred::prelude::{ClientLike, EventInterface, PubsubInterface};
use fred::types::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::time::MissedTickBehavior;

/// How often an idle subscriber connection is checked.
pub(crate) const PING_EVERY: Duration = Duration::from_secs(3);
/// How long a check may wait for its `PONG` before the connection is deemed dead.
pub(crate) const PING_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a `SUBSCRIBE` or `UNSUBSCRIBE` may wait for its reply.
pub(crate) const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

pub(crate) enum SubOp {
    Subscribe(Vec<String>),
    Unsubscribe(Vec<String>),
    Quit(oneshot::Sender<()>),
}

pub(crate) enum SubEvent {
    /// These channels are now subscribed: transfer their queues.
    Subscribed(Vec<String>),
    /// The connection came back and every channel was subscribed again.
    Resubscribed,
}

pub(crate) async fn run(
    subscriber: SubscriberClient,
    mut ops: mpsc::UnboundedReceiver<SubOp>,
    events: mpsc::UnboundedSender<SubEvent>,
) {
    let mut reconnects = subscriber.reconnect_rx();
    let mut queue: VecDeque<SubOp> = VecDeque::new();
    let mut retry_delay = Duration::from_millis(50);
    let mut keepalive = tokio::time::interval(PING_EVERY);
    keepalive.set_missed_tick_behavior(MissedTickBehavior::Delay);
    keepalive.reset();
    loop {
        if queue.is_empty() {
            tokio::select! {
                op = ops.recv() => match op {
                    Some(op) => queue.push_back(op),
                    None => break,
                },
                reconnected = reconnects.recv() => {
                    if reconnected.is_ok() {
                        resubscribe(&subscriber, &events).await;
                    }
                    continue;
                }
                _ = keepalive.tick() => {
                    check_alive(&subscriber).await;
                    continue;
                }
            }
        }
        // Take every operation already waiting, and merge neighbours of the same kind.
        while let Ok(op) = ops.try_recv() {
            queue.push_back(op);
        }
        // Quitting wins over work still queued (a subscribe retrying while Redis is down).
        if let Some(at) = queue.iter().position(|op| matches!(op, SubOp::Quit(_))) {
            let quit = queue.remove(at);
            queue.clear();
            queue.push_back(quit.expect("position is in range"));
        }
        match queue.pop_front() {
            Some(SubOp::Subscribe(mut channels)) => {
                while let Some(SubOp::Subscribe(more)) = queue.front_mut() {
                    channels.append(more);
                    queue.pop_front();
                }
                let subscribed = tokio::time::timeout(COMMAND_TIMEOUT, subscribe(&subscriber, channels.clone())).await;
                match subscribed.unwrap_or_else(|_| Err(timed_out(&subscriber, "SUBSCRIBE"))) {
                    Ok(()) => {
                        retry_delay = Duration::from_millis(50);
                        let _ = events.send(SubEvent::Subscribed(channels));
                    }
                    Err(error) => {
                        tracing::warn!(%error, channels = channels.len(), "subscribe failed; retrying");
                        queue.push_front(SubOp::Subscribe(channels));
                        tokio::time::sleep(retry_delay).await;
                        retry_delay = (retry_delay * 2).min(Duration::from_secs(2));
                    }
                }
            }
            Some(SubOp::Unsubscribe(mut channels)) => {
                while let Some(SubOp::Unsubscribe(more)) = queue.front_mut() {
                    channels.append(more);
                    queue.pop_front();
                }
                let unsubscribed = tokio::time::timeout(COMMAND_TIMEOUT, subscriber.unsubscribe(channels)).await;
                if let Err(error) = unsubscribed.unwrap_or_else(|_| Err(timed_out(&subscriber, "UNSUBSCRIBE"))) {
                    tracing::debug!(%error, "unsubscribe failed");
                }
            }
            Some(SubOp::Quit(done)) => {
                let _ = subscriber.unsubscribe_all().await;
                crate::connection::quit(&subscriber).await;
                let _ = done.send(());
                return;
            }
            None => {}
        }
    }
    crate::connection::quit(&subscriber).await;
}

/// Subscribes, and returns once Redis has: fred answers a `SUBSCRIBE` as
/// soon as it is written (the confirmations come out of band), so a publish
/// racing it would be lost after the check run that follows had found
/// nothing. The connection answers in order, so a `PONG` after the
/// `SUBSCRIBE` means it took effect.
async fn subscribe(subscriber: &SubscriberClient, channels: Vec<String>) -> Result<(), fred::error::Error> {
    subscriber.subscribe(channels).await?;
    subscriber.ping::<Value>(None).await.map(drop)
}

/// Pings the subscriber; a `PING` left unanswered means the connection died
/// without a word, so it is replaced (the reconnection then resubscribes).
async fn check_alive(subscriber: &SubscriberClient) {
    match tokio::time::timeout(PING_TIMEOUT, subscriber.ping::<Value>(None)).await {
        Ok(Ok(_)) => {}
        // Disconnected: fred is reconnecting already.
        Ok(Err(error)) => tracing::debug!(%error, "subscriber ping failed"),
        Err(_) => {
            timed_out(subscriber, "PING");
        }
    }
}

/// Replaces the subscriber connection after `command` got no reply in time
/// (in a task of its own: the reconnection is reported through `reconnect_rx`).
fn timed_out(subscriber: &SubscriberClient, command: &str) -> fred::error::Error {
    tracing::warn!(command, "subscriber connection unresponsive; reconnecting");
    let subscriber = subscriber.clone();
    tokio::spawn(async move {
        if let Err(error) = subscriber.force_reconnection().await {
            tracing::debug!(%error, "subscriber reconnection failed; fred keeps retrying");
        }
    });
    fred::error::Error::new(
        fred::error::ErrorKind::Timeout,
        format!("{command} unanswered; reconnecting"),
    )
}

async fn resubscribe(subscriber: &SubscriberClient, events: &mpsc::UnboundedSender<SubEvent>) {
    let mut delay = Duration::from_millis(50);
    loop {
        // Not fred's `resubscribe_all`: it also sends a `PSUBSCRIBE` without
        // patterns, whose error reply is then read as the next command's.
        let channels: Vec<String> = subscriber.tracked_channels().iter().map(|c| c.to_string()).collect();
        let resubscribed = async {
            if channels.is_empty() {
                return Ok(());
            }
            subscribe(subscriber, channels).await
        };
        match tokio::time::timeout(COMMAND_TIMEOUT, resubscribed)
            .await
            .unwrap_or_else(|_| Err(timed_out(subscriber, "SUBSCRIBE")))
        {
            Ok(()) => {
                tracing::debug!("subscriber reconnected; channels subscribed again");
                let _ = events.send(SubEvent::Resubscribed);
                return;
            }
            Err(error) => {
                tracing::warn!(%error, "resubscribe after reconnect failed; retrying");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(2));
            }
        }
    }
}
