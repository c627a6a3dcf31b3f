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
    // A name no partitioned queue can have (braces, a line break, empty)
    // has no layout: tools ask this of every queue they read.
    if partitions::check_name(name).is_err() {
        return Ok(None);
    }
    let key = QueueKeys::new(name)?.partitions();
    let fields: Vec<Option<String>> = core
        .conn()?
        .hmget(
            &key,
            vec!["count", "names", "created", "version", "hash", "generation", "retired"],
        )
        .await
        .on_key(&key)?;
    let [count, names, created, version, hash, generation, retired]: [Option<String>; 7] = fields
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
    let generation = match generation {
        None => 1,
        Some(g) => g
            .parse::<u32>()
            .map_err(|_| Error::Protocol(format!("the stored generation of partitioned queue {name:?} is {g:?}")))?,
    };
    PartitionLayout::from_stored_generation(
        name,
        count,
        names.as_deref().unwrap_or(""),
        created,
        generation,
        retired.as_deref().unwrap_or(""),
    )
    .map(Some)
}

/// Stores the next generation of `name`'s layout with `count` partitions
/// (a re-partition), or reads the layout when it already has `count` and
/// nothing to change. Resend-safe; a change that another client's beat
/// is read again and tried once more.
pub(crate) async fn change(core: &Core, name: &str, count: usize) -> Result<PartitionLayout> {
    partitions::check_count(count)?;
    let keys = QueueKeys::new(name)?;
    for _ in 0..3 {
        let Some(current) = read(core, name).await? else {
            return Err(Error::NotPartitioned { queue: name.to_owned() });
        };
        if current.count() == count {
            return Ok(current);
        }
        let next = current.next(count)?;
        let args = vec![
            Value::from(current.generation() as i64),
            Value::from(count as i64),
            Value::from(next.joined_names()),
            Value::from(next.joined_retired()),
            Value::from(next.generation() as i64),
            Value::from(time::now_ms()),
        ];
        let script_keys = SCRIPTS.partitions_change.keys(&keys).build();
        let reply = SCRIPTS
            .partitions_change
            .run(core.conn()?, name, script_keys, args)
            .await?;
        let [answer, _] = reply::tuple::<2>(reply)?;
        match reply::opt_text(answer)?.unwrap_or_default().as_str() {
            "changed" => return Ok(next),
            "moved" => continue,
            "missing" => return Err(Error::NotPartitioned { queue: name.to_owned() }),
            other => return Err(Error::Protocol(format!("partitions_change answered {other:?}"))),
        }
    }
    Err(Error::InvalidArgument(format!(
        "the layout of partitioned queue {name:?} kept changing under this re-partition: try again"
    )))
}

/// Drops `names` from the stored layout's retired partitions (sealed and
/// seen empty: whatever generation it is now); the layout as it is after.
pub(crate) async fn retire(core: &Core, layout: &PartitionLayout, names: &[String]) -> Result<PartitionLayout> {
    let keys = QueueKeys::new(layout.queue())?;
    let args = vec![Value::from(names.join("\n"))];
    let script_keys = SCRIPTS.partitions_retire.keys(&keys).build();
    let reply = SCRIPTS
        .partitions_retire
        .run(core.conn()?, layout.queue(), script_keys, args)
        .await?;
    let [answer, _] = reply::tuple::<2>(reply)?;
    match reply::opt_text(answer)?.unwrap_or_default().as_str() {
        "retired" => read(core, layout.queue()).await?.ok_or_else(|| Error::NotPartitioned {
            queue: layout.queue().to_owned(),
        }),
        "missing" => Err(Error::NotPartitioned {
            queue: layout.queue().to_owned(),
        }),
        other => Err(Error::Protocol(format!("partitions_retire answered {other:?}"))),
    }
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
