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
use fred::prelude::Options;
use fred::prelude::{ClientLike, EventInterface, PubsubInterface};
use fred::types::{ClusterHash, Value};
use fred::util::redis_keyslot;
use tokio::sync::mpsc;
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
    /// Unsubscribe, close the connection and end the task.
    Quit,
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
        if let Some(at) = queue.iter().position(|op| matches!(op, SubOp::Quit)) {
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
                match subscribe_in_time(&subscriber, channels.clone()).await {
                    Ok(()) => {
                        retry_delay = Duration::from_millis(50);
                        let _ = events.send(SubEvent::Subscribed(channels));
                    }
                    Err(error) if refused(&error) => {
                        // Redis said no (an ACL, say), to one channel or more of the
                        // batch: subscribe them one by one, so only those miss out.
                        resync(&subscriber).await;
                        let done = subscribe_each(&subscriber, channels, &mut queue).await;
                        let _ = events.send(SubEvent::Subscribed(done));
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
            Some(SubOp::Quit) => {
                // Bounded: with Redis gone fred would hold it until a reconnect.
                let _ = tokio::time::timeout(COMMAND_TIMEOUT, subscriber.unsubscribe_all()).await;
                crate::connection::quit(&subscriber).await;
                return;
            }
            None => {}
        }
    }
    crate::connection::quit(&subscriber).await;
}

/// Channels per `SUBSCRIBE`: Redis answers each with a confirmation, and a
/// reply of hundreds of thousands would pass its pub/sub output limit.
const SUBSCRIBE_BATCH: usize = 10_000;

/// Subscribes, and returns once Redis has: fred answers a `SUBSCRIBE` as
/// soon as it is written (the confirmations come out of band), so a publish
/// racing it would be lost after the check run that follows had found
/// nothing. The connection answers in order, so a `PONG` after the
/// `SUBSCRIBE` means it took effect (and an error reply to the `SUBSCRIBE`
/// arrives as the `PING`'s).
async fn subscribe(subscriber: &SubscriberClient, channels: Vec<String>) -> Result<(), fred::error::Error> {
    for batch in channels.chunks(SUBSCRIBE_BATCH) {
        subscriber.subscribe(batch.to_vec()).await?;
    }
    ping(subscriber).await
}

async fn subscribe_in_time(subscriber: &SubscriberClient, channels: Vec<String>) -> Result<(), fred::error::Error> {
    tokio::time::timeout(COMMAND_TIMEOUT, subscribe(subscriber, channels))
        .await
        .unwrap_or_else(|_| Err(timed_out(subscriber, "SUBSCRIBE")))
}

/// Whether Redis answered with an error (not a connection that failed):
/// the same `SUBSCRIBE` would be refused again.
fn refused(error: &fred::error::Error) -> bool {
    use fred::error::ErrorKind;
    matches!(
        error.kind(),
        ErrorKind::InvalidArgument | ErrorKind::InvalidCommand | ErrorKind::Auth
    ) || ["NOPERM", "ERR"]
        .iter()
        .any(|prefix| error.details().starts_with(prefix))
}

/// Subscribes `channels` one at a time after Redis refused them together.
/// Returns those it is done with: subscribed, or refused (logged, and left
/// to the resync; fred stops tracking them, so a reconnect does not ask
/// again). On a connection error the rest go back to the front of `queue`.
async fn subscribe_each(
    subscriber: &SubscriberClient,
    channels: Vec<String>,
    queue: &mut VecDeque<SubOp>,
) -> Vec<String> {
    let mut done = Vec::with_capacity(channels.len());
    let mut rest = channels.into_iter();
    while let Some(channel) = rest.next() {
        match subscribe_in_time(subscriber, vec![channel.clone()]).await {
            Ok(()) => done.push(channel),
            Err(error) if refused(&error) => {
                tracing::error!(%error, channel, "Redis refused to subscribe to the queue's channel; its queue is transferred only by checks and the resync");
                resync(subscriber).await;
                let _ = tokio::time::timeout(COMMAND_TIMEOUT, subscriber.unsubscribe(channel.clone())).await;
                done.push(channel);
            }
            Err(error) => {
                tracing::warn!(%error, "subscribe failed; retrying");
                let mut left = vec![channel];
                left.extend(rest);
                queue.push_front(SubOp::Subscribe(left));
                break;
            }
        }
    }
    done
}

/// `PING` on the subscriber's connection. On a cluster fred sends a
/// keyless command to any node; this one goes where the `SUBSCRIBE`s went
/// (fred routes those by the client's id).
async fn ping(subscriber: &SubscriberClient) -> Result<(), fred::error::Error> {
    subscriber
        .with_options(&same_node(subscriber))
        .ping::<Value>(None)
        .await
        .map(drop)
}

/// Options that send a keyless command where the subscriber's `SUBSCRIBE`s
/// went (see [`ping`]).
fn same_node(subscriber: &SubscriberClient) -> Options {
    Options {
        cluster_hash: Some(ClusterHash::Custom(redis_keyslot(subscriber.id().as_bytes()))),
        ..Default::default()
    }
}

/// After a refused `SUBSCRIBE`: its error reply was read as the `PING`'s,
/// so the `PING`'s own `PONG` is still on its way, and would be read as the
/// reply of whatever is sent next (under load a refused channel then looked
/// subscribed and the next, allowed one refused). fred drops a reply that
/// comes while nothing waits for one: so ping with a message of our own
/// until the reply is that message, pausing between tries to let the stray
/// reply come and go. Bounded by [`COMMAND_TIMEOUT`].
async fn resync(subscriber: &SubscriberClient) {
    static NONCE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let resynced = async {
        let mut pause = Duration::from_millis(10);
        loop {
            tokio::time::sleep(pause).await;
            let nonce = format!(
                "delayq-resync-{}",
                NONCE.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            );
            let reply = subscriber
                .with_options(&same_node(subscriber))
                .ping::<Value>(Some(nonce.clone()))
                .await;
            if let Ok(reply) = reply
                && echoes(&reply, &nonce)
            {
                return;
            }
            pause = (pause * 2).min(Duration::from_millis(500));
        }
    };
    if tokio::time::timeout(COMMAND_TIMEOUT, resynced).await.is_err() {
        timed_out(subscriber, "PING");
    }
}

/// Whether a `PING msg` reply is `msg`: a bulk string outside subscribed
/// mode, `["pong", msg]` inside it.
fn echoes(reply: &Value, nonce: &str) -> bool {
    match reply {
        Value::Array(parts) => parts.iter().any(|part| echoes(part, nonce)),
        other => other.as_str().is_some_and(|text| text == nonce),
    }
}

/// Pings the subscriber; a `PING` left unanswered means the connection died
/// without a word, so it is replaced (the reconnection then resubscribes).
async fn check_alive(subscriber: &SubscriberClient) {
    match tokio::time::timeout(PING_TIMEOUT, ping(subscriber)).await {
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
        let resubscribed = if channels.is_empty() {
            Ok(())
        } else {
            subscribe_in_time(subscriber, channels.clone()).await
        };
        match resubscribed {
            Err(error) if refused(&error) => {
                // One channel or more refused now (an ACL changed meanwhile):
                // one by one, so only those miss out.
                tracing::warn!(%error, "Redis refused some channels again after a reconnect; subscribing them one by one");
                resync(subscriber).await;
                let mut left = VecDeque::new();
                subscribe_each(subscriber, channels, &mut left).await;
                if left.is_empty() {
                    let _ = events.send(SubEvent::Resubscribed);
                    return;
                }
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(2));
            }
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
