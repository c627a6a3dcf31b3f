//! A plain fred client of a test's server, for seeding state as Java would
//! leave it and for checking what delayq wrote.

use bytes::Bytes;
use delayq::fred::prelude::*;
use delayq::fred::types::{CustomCommand, Value};

use crate::RedisServer;

impl RedisServer {
    /// A plain fred client for inspecting and seeding Redis directly.
    pub async fn raw(&self) -> RawRedis {
        // Reconnects, so tests that cut every connection keep their inspector.
        let policy = ReconnectPolicy::new_constant(0, 20);
        let client =
            delayq::fred::clients::Client::new(Config::from_url(&self.url()).unwrap(), None, None, Some(policy));

        client.init().await.expect("raw client connects");
        RawRedis { client }
    }
}

/// Direct access to Redis, for seeding state as Java would leave it and for
/// checking what delayq wrote.
pub struct RawRedis {
    pub client: delayq::fred::clients::Client,
}

impl RawRedis {
    /// Any command, by name and arguments.
    pub async fn cmd(&self, name: &'static str, args: Vec<Value>) -> Value {
        self.client
            .custom::<Value, Value>(
                CustomCommand::new_static(name, delayq::fred::types::ClusterHash::FirstKey, false),
                args,
            )
            .await
            .unwrap_or_else(|e| panic!("{name} failed: {e}"))
    }

    /// Calls of `command` (lowercase) the server counted (`INFO commandstats`).
    pub async fn command_calls(&self, command: &str) -> i64 {
        let stats = self
            .cmd("INFO", vec!["commandstats".into()])
            .await
            .as_string()
            .unwrap_or_default();
        let prefix = format!("cmdstat_{command}:calls=");
        stats
            .lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .and_then(|rest| rest.split(',').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }

    pub async fn llen(&self, key: &str) -> usize {
        self.client.llen::<i64, _>(key).await.unwrap() as usize
    }

    pub async fn zcard(&self, key: &str) -> usize {
        self.client.zcard::<i64, _>(key).await.unwrap() as usize
    }

    pub async fn lrange(&self, key: &str) -> Vec<Bytes> {
        self.client.lrange(key, 0, -1).await.unwrap()
    }

    /// ZRANGE key 0 -1 WITHSCORES as (member, score).
    pub async fn zrange(&self, key: &str) -> Vec<(Bytes, i64)> {
        let value = self
            .cmd("ZRANGE", vec![key.into(), 0.into(), (-1).into(), "WITHSCORES".into()])
            .await;
        let items = match value {
            Value::Array(items) => items,
            other => panic!("zrange: {other:?}"),
        };
        items
            .chunks(2)
            .map(|pair| {
                let member = pair[0].as_bytes().unwrap().to_vec();
                let score = pair[1].as_str().unwrap().parse::<f64>().unwrap() as i64;
                (Bytes::from(member), score)
            })
            .collect()
    }

    /// Adds a packed element as a Java offer would: ZADD + RPUSH, without publishing.
    pub async fn seed(&self, queue: &str, element: &[u8], due_ms: i64) {
        let keys = delayq::QueueKeys::new(queue).unwrap();
        let _: i64 = self
            .client
            .zadd(
                keys.timeout(),
                None,
                None,
                false,
                false,
                (due_ms as f64, element.to_vec()),
            )
            .await
            .unwrap();
        let _: i64 = self.client.rpush(keys.pending(), element.to_vec()).await.unwrap();
    }

    /// Number of subscribers of a channel.
    pub async fn numsub(&self, channel: &str) -> i64 {
        match self.cmd("PUBSUB", vec!["NUMSUB".into(), channel.into()]).await {
            Value::Array(items) => items[1].as_i64().unwrap(),
            other => panic!("numsub: {other:?}"),
        }
    }

    /// One field of `INFO section`.
    pub async fn info_field(&self, section: &'static str, field: &str) -> String {
        let info: String = self
            .client
            .info(Some(match section {
                "clients" => delayq::fred::types::InfoKind::Clients,
                "persistence" => delayq::fred::types::InfoKind::Persistence,
                "memory" => delayq::fred::types::InfoKind::Memory,
                other => panic!("unknown INFO section {other}"),
            }))
            .await
            .unwrap();
        info.lines()
            .find_map(|line| line.strip_prefix(field).and_then(|rest| rest.strip_prefix(':')))
            .unwrap_or_else(|| panic!("no {field} in INFO {section}"))
            .trim()
            .to_owned()
    }

    /// `CLIENT KILL TYPE <kind>` (normal, pubsub...); returns how many were killed.
    pub async fn kill_clients(&self, kind: &str) -> i64 {
        self.cmd(
            "CLIENT",
            vec!["KILL".into(), "TYPE".into(), kind.into(), "SKIPME".into(), "yes".into()],
        )
        .await
        .as_i64()
        .unwrap()
    }
}
