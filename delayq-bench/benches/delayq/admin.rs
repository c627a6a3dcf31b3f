//! A plain connection for setting up data and reading server state.

use delayq::fred::prelude::*;
use delayq::fred::types::{ClusterHash, CustomCommand, Value};

pub struct Admin {
    pub client: delayq::fred::clients::Client,
}

impl Admin {
    pub async fn connect(url: &str) -> Admin {
        let client = delayq::fred::clients::Client::new(Config::from_url(url).unwrap(), None, None, None);
        client.init().await.expect("admin connection");
        Admin { client }
    }

    /// Any command, by name.
    pub async fn cmd(&self, name: &'static str, args: Vec<Value>) -> Value {
        let command = CustomCommand::new_static(name, ClusterHash::FirstKey, false);
        self.client
            .custom(command, args)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    pub async fn script_load(&self, body: &str) -> String {
        match self.cmd("SCRIPT", vec!["LOAD".into(), body.into()]).await {
            Value::String(s) => s.to_string(),
            Value::Bytes(b) => String::from_utf8(b.to_vec()).unwrap(),
            other => panic!("SCRIPT LOAD: {other:?}"),
        }
    }

    /// Time Redis spent in the command `name` since the last `CONFIG
    /// RESETSTAT` (µs, `INFO commandstats`; commands that scripts call count
    /// apart, their scripts' time includes them).
    pub async fn command_usec(&self, name: &str) -> u64 {
        self.command_times()
            .await
            .into_iter()
            .find_map(|(command, usec)| (command == name).then_some(usec))
            .unwrap_or(0)
    }

    /// Every command's time since the last `CONFIG RESETSTAT` (µs), longest first.
    pub async fn command_times(&self) -> Vec<(String, u64)> {
        (self.command_stats().await.into_iter())
            .map(|(command, _, usec)| (command, usec))
            .collect()
    }

    /// Every command's calls and time (µs) since the last `CONFIG
    /// RESETSTAT` (`INFO commandstats`), longest first.
    pub async fn command_stats(&self) -> Vec<(String, u64, u64)> {
        let text = self.info("commandstats").await;
        let mut stats: Vec<(String, u64, u64)> = text
            .lines()
            .filter_map(|line| {
                let (command, fields) = line.strip_prefix("cmdstat_")?.split_once(':')?;
                let field = |name: &str| {
                    fields
                        .split(',')
                        .find_map(|f| f.strip_prefix(name))?
                        .trim()
                        .parse()
                        .ok()
                };
                Some((command.to_owned(), field("calls=")?, field("usec=")?))
            })
            .collect();
        stats.sort_by_key(|(_, _, usec)| std::cmp::Reverse(*usec));
        stats
    }

    /// The text of an `INFO` section.
    pub async fn info(&self, section: &str) -> String {
        match self.cmd("INFO", vec![section.into()]).await {
            Value::String(s) => s.to_string(),
            Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
            other => panic!("INFO: {other:?}"),
        }
    }

    pub async fn config_set(&self, name: &str, value: &str) {
        self.cmd("CONFIG", vec!["SET".into(), name.into(), value.into()]).await;
    }

    /// The longest run, in µs, of the commands named `name` in the slow log.
    pub async fn slowest(&self, name: &str) -> u64 {
        self.durations(name).await.into_iter().max().unwrap_or(0)
    }

    /// How long, in µs, each run of the commands named `name` in the slow log took.
    pub async fn durations(&self, name: &str) -> Vec<u64> {
        let entries = match self.cmd("SLOWLOG", vec!["GET".into(), 1_000_000.into()]).await {
            Value::Array(entries) => entries,
            other => panic!("SLOWLOG GET: {other:?}"),
        };
        entries
            .into_iter()
            .filter_map(|entry| match entry {
                Value::Array(fields) if fields.len() >= 4 => {
                    let command = match &fields[3] {
                        Value::Array(args) => args.first().and_then(|a| a.as_string()).unwrap_or_default(),
                        _ => String::new(),
                    };
                    command
                        .eq_ignore_ascii_case(name)
                        .then(|| fields[2].as_u64().unwrap_or(0))
                }
                _ => None,
            })
            .collect()
    }
}
