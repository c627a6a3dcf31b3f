//! Making a first connection, and closing one without waiting forever.

use std::time::Duration;

use fred::prelude::{ClientLike, Options};

use crate::error::{Error, Result};

/// How long closing one connection may take.
const QUIT_TIMEOUT: Duration = Duration::from_secs(2);

/// Closes a connection without waiting forever: fred's QUIT has no timeout of
/// its own, and one sent while the connection is being re-established (a
/// cut, a failover) can be left unanswered.
pub(crate) async fn quit<C: ClientLike>(client: &C) {
    let options = Options {
        timeout: Some(QUIT_TIMEOUT),
        max_attempts: Some(1),
        ..Options::default()
    };
    let _ = client.with_options(&options).quit().await;
}

pub(crate) async fn quit_pool(pool: &fred::clients::Pool) {
    futures_util::future::join_all(pool.clients().iter().map(quit)).await;
}

/// Connects `client`; failing to reach `address` at all (refused,
/// unreachable, no answer in time) is [`Error::Connect`], other failures
/// (authentication, TLS...) are [`Error::Redis`].
pub(crate) async fn connect<C: ClientLike>(client: &C, timeout: Duration, address: &str) -> Result<()> {
    // init() subscribes to the connect event before connecting; connect() then
    // wait_for_connect() can miss an event that fires in between.
    let error = match tokio::time::timeout(timeout, client.init()).await {
        Ok(Ok(_)) => return Ok(()),
        Ok(Err(error)) => error,
        Err(_) => {
            quit(client).await;
            fred::error::Error::new(
                fred::error::ErrorKind::Timeout,
                format!("no connection within {timeout:?}"),
            )
        }
    };
    if unreachable(&error) {
        Err(Error::Connect {
            address: address.to_owned(),
            source: crate::error::RedisError(error),
        })
    } else {
        Err(error.into())
    }
}

/// Fails with [`Error::ScriptingUnavailable`] when the server answers a
/// one-line script with an error that says it cannot run scripts at all:
/// every queue operation is a script, and a server without Lua should be
/// told at connect, not by the first offer deep in a service. Anything else
/// (no answer in time, `BUSY` with another script, `LOADING`) lets the
/// connect go on: the operations report it themselves.
pub(crate) async fn check_scripting(client: &fred::clients::Client, timeout: Duration, address: &str) -> Result<()> {
    use fred::interfaces::LuaInterface;
    let options = Options {
        timeout: Some(timeout),
        max_attempts: Some(1),
        ..Options::default()
    };
    let reply = client
        .with_options(&options)
        .eval::<fred::types::Value, _, _, _>("return 1", Vec::<String>::new(), Vec::<String>::new())
        .await;
    match reply {
        Err(error) if cannot_script(&error) => Err(Error::ScriptingUnavailable {
            address: address.to_owned(),
            message: error.details().to_owned(),
        }),
        _ => Ok(()),
    }
}

/// Whether a script's error reply says the server runs no scripts: the
/// command unknown (no Lua engine, or renamed away), refused by the ACL,
/// or scripting switched off.
fn cannot_script(error: &fred::error::Error) -> bool {
    use fred::error::ErrorKind;
    if matches!(error.kind(), ErrorKind::IO | ErrorKind::Timeout | ErrorKind::Canceled) {
        return false;
    }
    let details = error.details().to_ascii_lowercase();
    if details.starts_with("busy") || details.starts_with("loading") {
        return false;
    }
    details.contains("unknown command")
        || details.starts_with("noperm")
        || details.contains("no permissions")
        || details.contains("scripting")
        || details.contains("lua")
}

/// Whether a failed first connection means the server was not reached:
/// refused, unreachable, unresolved, or no answer in time. fred reports TLS
/// handshake failures as I/O errors too; they are not "unreachable" (the CLI
/// has its own hints for them).
fn unreachable(error: &fred::error::Error) -> bool {
    use fred::error::ErrorKind;
    const TLS: [&str; 6] = ["Certificate", "AlertReceived", "Handshake", "InvalidData", "tls", "TLS"];
    match error.kind() {
        ErrorKind::Timeout | ErrorKind::Canceled => true,
        ErrorKind::IO => !TLS.iter().any(|mark| error.details().contains(mark)),
        _ => false,
    }
}

/// Where a configuration connects, for messages: `host:port`, or the nodes or
/// sentinels it starts from (no credentials).
pub(crate) fn address(server: Option<&fred::types::config::ServerConfig>) -> String {
    use fred::types::config::ServerConfig;
    let list = |hosts: &[fred::prelude::Server]| hosts.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
    match server {
        Some(ServerConfig::Centralized { server }) => server.to_string(),
        Some(ServerConfig::Clustered { hosts, .. }) => format!("cluster nodes {}", list(hosts)),
        Some(ServerConfig::Sentinel {
            hosts, service_name, ..
        }) => {
            format!("sentinels {} (service {service_name})", list(hosts))
        }
        #[allow(unreachable_patterns)] // fred's `unix-sockets` feature adds a variant
        _ => "the configured server".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fred::error::{Error as FredError, ErrorKind};
    use fred::prelude::Config;

    #[test]
    fn unreachable_means_not_reached_not_refused_by_tls_or_auth() {
        let io = |details: &str| FredError::new(ErrorKind::IO, details.to_owned());
        assert!(unreachable(&io(
            "Os { code: 111, kind: ConnectionRefused, message: \"Connection refused\" }"
        )));
        assert!(unreachable(&FredError::new(ErrorKind::Timeout, "no connection")));
        assert!(!unreachable(&io(
            "Custom { kind: InvalidData, error: InvalidCertificate(UnknownIssuer) }"
        )));
        assert!(!unreachable(&FredError::new(ErrorKind::Auth, "WRONGPASS")));
    }

    #[test]
    fn addresses_name_servers_not_credentials() {
        let config = Config::from_url("redis://app:s3cret@10.0.0.1:6380/2").unwrap();
        assert_eq!(address(Some(&config.server)), "10.0.0.1:6380");
        let sentinel =
            Config::from_url("redis-sentinel://u:p@10.0.0.1:26379/0?sentinelServiceName=mymaster&node=10.0.0.2:26379")
                .unwrap();
        let named = address(Some(&sentinel.server));
        assert!(named.contains("10.0.0.1:26379") && named.contains("10.0.0.2:26379") && named.contains("mymaster"));
        assert!(!named.contains("p@"), "{named}");
    }
}
