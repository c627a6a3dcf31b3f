//! The Lua scripts of `lua/`, built as the library sends them, for tests
//! and benchmarks that run one by hand (to lose its reply, to time it, to
//! seed state with it).
//!
//! The rule is the library's (`src/connection/script.rs`): a script's first
//! line, `-- LIBS: element offer events` (or `-- LIBS: (none)`), names the
//! files of `lua/lib/` it needs in their load order; its body is those
//! files, `traces.lua` only with the `opentelemetry` feature, then the
//! script. The files are read from the repository at run time; the
//! library's unit tests hold the two builds to the same bytes for every
//! script.

use std::path::PathBuf;

use delayq::fred::types::Value;

use crate::RawRedis;

/// `lua/` of the repository.
fn lua_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../lua")
}

/// The body delayq sends for the script whose own Lua is `source` (as
/// `include_str!("../../lua/ack.lua")` gives it).
pub fn script_body(source: &str) -> String {
    let first = source.lines().next().unwrap_or_default();
    let names = first
        .strip_prefix("-- LIBS:")
        .unwrap_or_else(|| panic!("a script names its libs on its first line: {first:?}"));
    let mut body = String::new();
    for name in names.split_whitespace().filter(|n| *n != "(none)") {
        if name == "traces" && !cfg!(feature = "opentelemetry") {
            continue;
        }
        let path = lua_dir().join("lib").join(format!("{name}.lua"));
        body += &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    body + source
}

/// The SHA1 the library runs that script by (`EVALSHA`).
pub fn script_sha1(source: &str) -> String {
    delayq::fred::util::sha1_hash(&script_body(source))
}

impl RawRedis {
    /// Caches the script whose own Lua is `source` without running it, and
    /// returns its SHA1: its first call is then an `EVALSHA` that runs (not
    /// one answered `NOSCRIPT`, whose loss would be no test), and only its
    /// `EVALSHA` requests carry this SHA1 (a fault proxy's pattern).
    pub async fn load_script(&self, source: &str) -> String {
        let body = script_body(source);
        self.cmd("SCRIPT", vec!["LOAD".into(), Value::from(body.as_str())])
            .await;
        delayq::fred::util::sha1_hash(&body)
    }
}
