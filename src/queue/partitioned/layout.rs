//! Reading and storing a partitioned queue's layout (`delayq_partitions:{Q}`).

use fred::interfaces::{ClientLike, HashesInterface};
use fred::types::{ClusterHash, CustomCommand, Value};

use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::{CommandResult, Error, Result};
use crate::queue::Core;
use crate::wire::keys::QueueKeys;
use crate::wire::partitions::{self, PartitionLayout, KEY_HASH, LAYOUT_VERSION};
use crate::wire::time;

/// Stores the layout of `name` with `count` partitions, or reads the one
/// stored with this count; [`Error::PartitionCountMismatch`] when another
/// count is stored. One script, safe to resend: a resent create answers as
/// the first run did, with the same names.
pub(crate) async fn create(core: &Core, name: &str, count: usize) -> Result<PartitionLayout> {
    let planned = PartitionLayout::plan(name, count)?;
    let keys = QueueKeys::new(name)?;
    let script_keys = SCRIPTS.partitions_create.keys(&keys).build();
    let args = vec![
        Value::from(count as i64),
        Value::from(planned.joined_names()),
        Value::from(time::now_ms()),
        Value::from(LAYOUT_VERSION as i64),
        Value::from(KEY_HASH),
    ];
    let reply = SCRIPTS
        .partitions_create
        .run(core.conn()?, name, script_keys, args)
        .await?;
    let [answer, stored_count, names, created] = reply::tuple::<4>(reply)?;
    let text = |value: Value| reply::opt_text(value).map(Option::unwrap_or_default);
    let (answer, stored_count, names, created) = (text(answer)?, text(stored_count)?, text(names)?, text(created)?);
    let stored = if answer == "occupied" {
        0
    } else {
        parse_count(name, &stored_count)?
    };
    let created = created.parse::<u64>().unwrap_or(0);
    match answer.as_str() {
        "created" | "exists" => PartitionLayout::from_stored(name, stored, &names, created),
        "occupied" => Err(Error::InvalidArgument(format!(
            "{name:?} is a plain queue holding values (its list, timeout set or pending list exists): a \
             partitioned queue of that name would hide them from its takes; drain or rename it first"
        ))),
        "mismatch" => Err(Error::PartitionCountMismatch {
            queue: name.to_owned(),
            stored,
            asked: count,
        }),
        other => Err(Error::Protocol(format!("partitions_create answered {other:?}"))),
    }
}

/// The stored layout of `name`, or `None` when it is not a partitioned queue.
pub(crate) async fn read(core: &Core, name: &str) -> Result<Option<PartitionLayout>> {
    partitions::check_name(name)?;
    let key = QueueKeys::new(name)?.partitions();
    let fields: Vec<Option<String>> = core
        .conn()?
        .hmget(&key, vec!["count", "names", "created", "version", "hash"])
        .await
        .on_key(&key)?;
    let [count, names, created, version, hash]: [Option<String>; 5] = fields
        .try_into()
        .map_err(|_| Error::Protocol(format!("HMGET {key} answered the wrong number of fields")))?;
    let Some(count) = count else {
        return Ok(None);
    };
    // A layout another version wrote may route keys another way: refused,
    // never read as this version's (its producers would disagree on where
    // a key's values go).
    let version_ok = version.as_deref() == Some(partitions::LAYOUT_VERSION.to_string().as_str());
    let hash_ok = hash.as_deref() == Some(partitions::KEY_HASH);
    if !version_ok || !hash_ok {
        return Err(Error::Protocol(format!(
            "the stored layout of partitioned queue {name:?} is version {:?} with key hash {:?}; this delayq reads version {} with {}",
            version.unwrap_or_default(),
            hash.unwrap_or_default(),
            partitions::LAYOUT_VERSION,
            partitions::KEY_HASH
        )));
    }
    let count = parse_count(name, &count)?;
    let created = created.and_then(|c| c.parse().ok()).unwrap_or(0);
    PartitionLayout::from_stored(name, count, names.as_deref().unwrap_or(""), created).map(Some)
}

/// The primary (`host:port`) serving each partition's slot, from one
/// `CLUSTER SLOTS`; `None` each on a deployment that is not a Cluster.
pub(crate) async fn nodes(core: &Core, layout: &PartitionLayout) -> Result<Vec<Option<String>>> {
    let conn = core.conn()?;
    let mut ranges: Vec<(i64, i64, String)> = Vec::new();
    if conn.is_clustered() {
        let command = CustomCommand::new_static("CLUSTER", ClusterHash::Random, false);
        let slots: Value = conn
            .custom(command, vec![Value::from("SLOTS")])
            .await
            .map_err(Error::from)?;
        if let Value::Array(entries) = slots {
            ranges = entries.into_iter().filter_map(slot_range).collect();
        }
    }
    Ok((0..layout.count())
        .map(|i| {
            let slot = i64::from(layout.slot(i));
            (ranges.iter())
                .find(|(start, end, _)| (*start..=*end).contains(&slot))
                .map(|(_, _, node)| node.clone())
        })
        .collect())
}

/// One `CLUSTER SLOTS` entry: its first slot, last slot and primary.
fn slot_range(entry: Value) -> Option<(i64, i64, String)> {
    let Value::Array(fields) = entry else { return None };
    let (start, end) = (fields.first()?.as_i64()?, fields.get(1)?.as_i64()?);
    let Value::Array(primary) = fields.get(2)? else {
        return None;
    };
    let host = primary.first()?.as_string()?;
    let port = primary.get(1)?.as_i64()?;
    Some((start, end, format!("{host}:{port}")))
}

fn parse_count(name: &str, count: &str) -> Result<usize> {
    count
        .parse::<usize>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| Error::Protocol(format!("the stored partition count of {name:?} is {count:?}")))
}
