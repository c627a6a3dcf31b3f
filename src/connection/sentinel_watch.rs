//! Following Sentinel failovers as they happen.
//!
//! fred asks the sentinels for the master only when a connection is
//! (re)established. When the old master stays up through a failover
//! (`SENTINEL FAILOVER` for maintenance, a healed partition), the client's
//! connections to it stay open and it goes on taking writes until the
//! sentinels turn it into a replica, about 8 s later; then everything written
//! there meanwhile is thrown away: offers lost, acknowledged values back.
//! Sentinels announce each switch on their `+switch-master` channel, which
//! Redisson listens to as well; on it, every connection of the client is
//! opened anew through the sentinels, until all of them reach the new master.

use std::sync::Arc;
use std::time::Duration;

use fred::clients::{Pool, SubscriberClient};
use fred::interfaces::{ClientLike, EventInterface, PubsubInterface};
use fred::prelude::{Config, ReconnectPolicy, Server, ServerConfig};
use fred::types::Builder;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The channel sentinels announce a new master on:
/// `<service> <old ip> <old port> <new ip> <new port>`.
const SWITCH_CHANNEL: &str = "+switch-master";

/// How long to wait before trying a sentinel again after it failed.
const SENTINEL_RETRY: Duration = Duration::from_secs(1);

/// Tries to reach the new master; a sentinel asked may not know it yet.
const FOLLOW_ATTEMPTS: usize = 40;
const FOLLOW_PAUSE: Duration = Duration::from_millis(250);
const RECONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The connections a switch must move.
pub(crate) struct Targets {
    pub pool: Pool,
    pub subscriber: SubscriberClient,
    /// The blocking pool's epoch (see `BlockingPool::epoch`).
    pub blocking: Arc<watch::Sender<u64>>,
}

/// Starts watching when `config` goes through sentinels; `None` otherwise.
pub(crate) fn start(
    config: &Config,
    policy: &ReconnectPolicy,
    targets: Targets,
    shutdown: CancellationToken,
) -> Option<JoinHandle<()>> {
    let ServerConfig::Sentinel {
        hosts,
        service_name,
        username,
        password,
    } = &config.server
    else {
        return None;
    };
    let (switches, mut announced) = mpsc::unbounded_channel();
    for host in hosts {
        let sentinel = Config {
            server: ServerConfig::Centralized { server: host.clone() },
            username: username.clone(),
            password: password.clone(),
            #[cfg(feature = "tls")]
            tls: config.tls.clone(),
            ..Config::default()
        };
        tokio::spawn(listen(
            sentinel,
            policy.clone(),
            service_name.clone(),
            switches.clone(),
            shutdown.clone(),
        ));
    }
    Some(tokio::spawn(async move {
        let mut followed: Option<Server> = None;
        loop {
            let master = tokio::select! {
                Some(master) = announced.recv() => master,
                _ = shutdown.cancelled() => return,
            };
            // Every sentinel announces the same switch.
            if followed.as_ref().is_some_and(|f| same(f, &master)) {
                continue;
            }
            tracing::info!(master = %master, "sentinels switched master; reconnecting");
            follow(&targets, &master, &shutdown).await;
            followed = Some(master);
        }
    }))
}

/// One sentinel's announcements, for as long as the client lives.
async fn listen(
    sentinel: Config,
    policy: ReconnectPolicy,
    service: String,
    switches: mpsc::UnboundedSender<Server>,
    shutdown: CancellationToken,
) {
    let mut builder = Builder::from_config(sentinel);
    builder.set_policy(policy);
    while !shutdown.is_cancelled() {
        let subscriber = match builder.build_subscriber_client() {
            Ok(subscriber) => subscriber,
            Err(error) => {
                tracing::warn!(%error, "cannot watch a sentinel");
                return;
            }
        };
        let mut messages = subscriber.message_rx();
        let subscribed = async {
            subscriber.init().await?;
            // Subscribed again by fred after each reconnect.
            let _resubscribe = subscriber.manage_subscriptions();
            subscriber.subscribe(SWITCH_CHANNEL).await
        };
        let ready = tokio::select! {
            ready = subscribed => ready,
            _ = shutdown.cancelled() => break,
        };
        if let Err(error) = ready {
            tracing::debug!(%error, "sentinel unreachable for now");
            crate::connection::quit(&subscriber).await;
            tokio::select! {
                _ = tokio::time::sleep(SENTINEL_RETRY) => continue,
                _ = shutdown.cancelled() => break,
            }
        }
        loop {
            let message = tokio::select! {
                message = messages.recv() => message,
                _ = shutdown.cancelled() => break,
            };
            let Ok(message) = message else {
                break; // lagged or closed: start over
            };
            let text = message.value.as_string().unwrap_or_default();
            if let Some(master) = parse_switch(&text, &service) {
                let _ = switches.send(master);
            }
        }
        crate::connection::quit(&subscriber).await;
    }
}

/// The new master in a `+switch-master` message for `service`.
fn parse_switch(message: &str, service: &str) -> Option<Server> {
    let parts: Vec<&str> = message.split_whitespace().collect();
    match parts.as_slice() {
        [name, _, _, host, port] if *name == service => Some(Server::new(*host, port.parse().ok()?)),
        _ => None,
    }
}

fn same(a: &Server, b: &Server) -> bool {
    a.host == b.host && a.port == b.port
}

/// Opens every connection anew until all of them are on `master`.
async fn follow(targets: &Targets, master: &Server, shutdown: &CancellationToken) {
    targets.blocking.send_modify(|epoch| *epoch += 1);
    for _ in 0..FOLLOW_ATTEMPTS {
        let reconnect = async {
            tokio::join!(
                targets.pool.force_reconnection(),
                targets.subscriber.force_reconnection()
            )
        };
        let _ = tokio::time::timeout(RECONNECT_TIMEOUT, reconnect).await;
        let on_master = |servers: Vec<Server>| !servers.is_empty() && servers.iter().all(|s| same(s, master));
        if on_master(targets.pool.active_connections()) && on_master(targets.subscriber.active_connections()) {
            // Blocking reads opened while the pool moved may have reached the old master.
            targets.blocking.send_modify(|epoch| *epoch += 1);
            return;
        }
        tokio::select! {
            _ = tokio::time::sleep(FOLLOW_PAUSE) => {}
            _ = shutdown.cancelled() => return,
        }
    }
    tracing::warn!(master = %master, "could not reach the new master the sentinels announced");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_new_master_of_its_own_service_only() {
        let master = parse_switch("mymaster 10.0.0.1 6379 10.0.0.2 6380", "mymaster").unwrap();
        assert_eq!((&*master.host, master.port), ("10.0.0.2", 6380));
        assert!(parse_switch("other 10.0.0.1 6379 10.0.0.2 6380", "mymaster").is_none());
        assert!(parse_switch("mymaster 10.0.0.1 6379", "mymaster").is_none());
        assert!(parse_switch("mymaster a 1 b port", "mymaster").is_none());
    }
}
