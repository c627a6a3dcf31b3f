//! Keeps the one subscriber connection subscribed to every scheduled queue's
//! channel, in a task of its own so that slow (or failing) `SUBSCRIBE`s never
//! hold up due transfers.
//!
//! Operations run in the order they were asked for, so an unsubscribe never
//! overtakes the subscribe of a queue registered again right after. After the
//! connection comes back, every tracked channel is subscribed again and the
//! scheduler is told, so it transfers every queue (elements may have come due
//! while no message could arrive).

use std::collections::VecDeque;
use std::time::Duration;

use fred::clients::SubscriberClient;
use fred::prelude::{EventInterface, PubsubInterface};
use tokio::sync::{mpsc, oneshot};

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
                match subscriber.subscribe(channels.clone()).await {
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
                if let Err(error) = subscriber.unsubscribe(channels).await {
                    tracing::debug!(%error, "unsubscribe failed");
                }
            }
            Some(SubOp::Quit(done)) => {
                let _ = subscriber.unsubscribe_all().await;
                crate::client::quit(&subscriber).await;
                let _ = done.send(());
                return;
            }
            None => {}
        }
    }
    crate::client::quit(&subscriber).await;
}

async fn resubscribe(subscriber: &SubscriberClient, events: &mpsc::UnboundedSender<SubEvent>) {
    let mut delay = Duration::from_millis(50);
    loop {
        match subscriber.resubscribe_all().await {
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
