//! Reading and storing a partitioned queue's layout (`delayq_partitions:{Q}`).

use fred::interfaces::HashesInterface;
use fred::types::Value;

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

fn parse_count(name: &str, count: &str) -> Result<usize> {
    count
        .parse::<usize>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| Error::Protocol(format!("the stored partition count of {name:?} is {count:?}")))
}
