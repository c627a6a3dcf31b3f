//! One sample of what a soak watches: this process's RSS and heap, Redis's
//! memory, its keys by prefix (a bounded SCAN) and the sizes of the queue's
//! collections.

use std::collections::BTreeMap;

use delayq::fred::types::Value;
use delayq::QueueKeys;

use super::dashboard::mb;
use crate::admin::Admin;

/// Keys a sample looks at, at most (a SCAN with COUNT 1,000 a call).
const SCAN_AT_MOST: usize = 200_000;

pub struct Sample {
    pub rss: u64,
    pub heap: u64,
    pub allocations: u64,
    /// glibc's arenas: bytes held, and free within them (see [`malloc_arenas`]).
    pub arenas: Option<(u64, u64)>,
    pub redis_memory: u64,
    /// Redis's `connected_clients` and `number_of_cached_scripts`.
    pub redis_clients: u64,
    pub redis_scripts: u64,
    /// Keys by prefix (the text before the first `:`), and whether the scan
    /// stopped at its bound.
    pub keys: BTreeMap<String, u64>,
    pub keys_capped: bool,
    /// The queue's collections that are not empty: (what, size).
    pub collections: Vec<(&'static str, u64)>,
}

impl Sample {
    pub fn key_total(&self) -> u64 {
        self.keys.values().sum()
    }

    /// `prefix count, ...`, largest first.
    pub fn keys_text(&self) -> String {
        let mut keys: Vec<_> = self.keys.iter().collect();
        keys.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let text: Vec<String> = keys.iter().map(|(p, n)| format!("{p} {n}")).collect();
        format!(
            "{}{}",
            text.join(", "),
            if self.keys_capped { " (scan capped)" } else { "" }
        )
    }

    pub fn collections_text(&self) -> String {
        let text: Vec<String> = self.collections.iter().map(|(w, n)| format!("{w} {n}")).collect();
        let arenas = match self.arenas {
            Some((held, free)) => format!("; malloc arenas {:.1} MB, {:.1} MB of it free", mb(held), mb(free)),
            None => String::new(),
        };
        format!(
            "{}; Redis: {} clients, {} cached scripts{arenas}",
            text.join(", "),
            self.redis_clients,
            self.redis_scripts
        )
    }
}

/// What glibc's allocator holds: bytes taken from the system for its arenas
/// (not counting big blocks it maps one by one), and how much of that is
/// free — freed by the program, kept by the allocator. RSS creeps with the
/// second while the heap in use stays flat.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn malloc_arenas() -> Option<(u64, u64)> {
    /// glibc's `struct mallinfo2` (2.33 and later): ten `size_t` fields.
    #[repr(C)]
    struct MallInfo2 {
        arena: usize,
        ordblks: usize,
        smblks: usize,
        hblks: usize,
        hblkhd: usize,
        usmblks: usize,
        fsmblks: usize,
        uordblks: usize,
        fordblks: usize,
        keepcost: usize,
    }
    unsafe extern "C" {
        fn mallinfo2() -> MallInfo2;
    }
    // SAFETY: mallinfo2 takes nothing and returns a struct by value.
    let info = unsafe { mallinfo2() };
    Some((info.arena as u64, info.fordblks as u64))
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn malloc_arenas() -> Option<(u64, u64)> {
    None
}

/// This process's resident memory, from `/proc/self/statm` (pages of 4 KiB).
pub fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse::<u64>().ok())
        .unwrap_or(0)
        * 4096
}

pub async fn sample(admin: &Admin, keys: &QueueKeys) -> Sample {
    let (heap, allocations) = crate::heap::in_use();
    let rss = rss();
    let (keys_by_prefix, keys_capped) = keys_by_prefix(admin).await;
    let info = text(admin.cmd("INFO", vec![]).await);
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    };
    Sample {
        rss,
        heap,
        allocations,
        arenas: malloc_arenas(),
        redis_memory: field("used_memory"),
        redis_clients: field("connected_clients"),
        redis_scripts: field("number_of_cached_scripts"),
        keys: keys_by_prefix,
        keys_capped,
        collections: collections(admin, keys).await,
    }
}

fn text(value: Value) -> String {
    match value {
        Value::String(s) => s.to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
        other => format!("{other:?}"),
    }
}

/// Keys by prefix (a SCAN bounded by [`SCAN_AT_MOST`]); whether it stopped at the bound.
pub async fn keys_by_prefix(admin: &Admin) -> (BTreeMap<String, u64>, bool) {
    let mut by_prefix = BTreeMap::new();
    let mut cursor = "0".to_owned();
    let mut seen = 0;
    loop {
        let (next, keys) = scan_page(admin, &cursor, "*").await;
        for key in keys {
            let prefix = key.split(':').next().unwrap_or("").to_owned();
            *by_prefix.entry(prefix).or_insert(0) += 1;
        }
        seen += 1000;
        cursor = next;
        if cursor == "0" {
            return (by_prefix, false);
        }
        if seen >= SCAN_AT_MOST {
            return (by_prefix, true);
        }
    }
}

/// One `SCAN cursor MATCH pattern COUNT 1000`: the next cursor and the keys.
pub async fn scan_page(admin: &Admin, cursor: &str, pattern: &str) -> (String, Vec<String>) {
    let reply = admin
        .cmd(
            "SCAN",
            vec![
                cursor.into(),
                "MATCH".into(),
                pattern.into(),
                "COUNT".into(),
                1000.into(),
            ],
        )
        .await;
    let Value::Array(mut parts) = reply else {
        return ("0".into(), Vec::new());
    };
    let keys = match parts.pop() {
        Some(Value::Array(keys)) => keys.into_iter().map(text).collect(),
        _ => Vec::new(),
    };
    (parts.pop().map(text).unwrap_or_else(|| "0".into()), keys)
}

/// The sizes of the queue's collections (Redisson's and delayq's) that are not empty.
pub async fn collections(admin: &Admin, keys: &QueueKeys) -> Vec<(&'static str, u64)> {
    let sizes: [(&'static str, &'static str, &str); 13] = [
        ("timeout", "ZCARD", keys.timeout()),
        ("pending", "LLEN", keys.pending()),
        ("ready", "LLEN", keys.destination()),
        ("staging", "LLEN", keys.staging()),
        ("leases", "ZCARD", keys.leases()),
        ("acked", "ZCARD", keys.acked()),
        ("counts", "HLEN", keys.counts()),
        ("counts_expiry", "ZCARD", keys.counts_expiry()),
        ("due", "ZCARD", keys.due()),
        ("ids", "HLEN", keys.ids()),
        ("dead", "LLEN", keys.dead_letter()),
        ("dead_reasons", "LLEN", keys.dead_reasons()),
        ("quarantine", "LLEN", keys.quarantine()),
    ];
    let mut out = Vec::new();
    for (what, command, key) in sizes {
        let n = admin.cmd(command, vec![key.into()]).await.as_u64().unwrap_or(0);
        if n > 0 {
            out.push((what, n));
        }
    }
    out
}
