//! delayq's benchmark: every scenario of BENCHMARKS.md against its own
//! loopback `redis-server`, each with a baseline measured in the same run.
//!
//! Run with `./scripts/bench.sh` (installs what it needs) or
//! `cargo bench -p delayq-bench`; `--only NAME[,NAME]` runs some scenarios
//! (the names in [`SCENARIOS`]; `large` runs only the backlog drains with
//! 1 KB and 10 KB payloads). The soak runs only when named: `--only soak
//! --soak-minutes 30 --soak-rate 1000 [--soak-dashboard]` (see `soak/mod.rs`).

mod admin;
mod backlog;
mod big_queue;
mod bulk_offers;
mod codecs;
mod consumers;
mod dashboard;
mod decoders;
mod dedup;
mod durable;
mod events;
mod groups;
mod heap;
mod java_codecs;
mod java_order;
mod job_history;
mod jobs;
mod lateness;
mod lateness_parts;
mod limits;
mod many_queues;
mod measure;
mod memory;
mod offers;
mod partitioned;
mod priorities;
mod rate_limit;
mod redis_benchmark;
mod redisson;
mod reliable;
mod report;
mod resp;
mod scenario;
mod soak;
mod takes;

use std::time::Instant;

pub use delayq_test_support::RedisServer;
use scenario::{Context, Scenario};

/// Counts the heap in use, for the soak (a few uncontended atomics per allocation).
#[global_allocator]
static ALLOCATOR: heap::Counting = heap::Counting;

/// Every scenario, in the order they run.
const SCENARIOS: &[&dyn Scenario] = &[
    &offers::Offers,
    &bulk_offers::BulkOffers,
    &lateness::DeliveryLateness,
    &backlog::BacklogDrain,
    &backlog::LargePayloadDrains,
    &many_queues::QueuesInOneClient,
    &takes::TakeThroughput,
    &memory::MemoryPerElement,
    &reliable::ReliableScripts,
    &codecs::Codecs,
    &java_codecs::JavaCodecs,
    &rate_limit::RateLimit,
    &dashboard::DashboardAtScale,
    &big_queue::TenMillionElements,
    &consumers::Consumers,
    &events::LifecycleEvents,
    &limits::QueueLimits,
    &dedup::DedupWindows,
    &job_history::JobHistories,
    &priorities::Priorities,
    &jobs::JobResultsAndBatches,
    &decoders::HostileDecoders,
    &durable::DurableOffers,
    &groups::Groups,
    &partitioned::PartitionedQueues,
    &soak::SoakRun,
];

fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|m| m.trim_start_matches([' ', '\t', ':']).to_owned())
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let redis = std::process::Command::new("redis-server")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    format!("{cores} cores, {model}; {redis}")
}

/// The names `--only` gives, if it is given.
fn only() -> Option<Vec<String>> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == "--only")?;
    Some(
        args.get(at + 1)
            .map(|list| list.split(',').map(str::to_owned).collect())
            .unwrap_or_default(),
    )
}

fn main() {
    // `cargo test --all-targets` runs bench targets too, without `--bench`:
    // the multi-minute benchmark only runs under `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        eprintln!("the delayq benchmark runs with `cargo bench -p delayq-bench` (or ./scripts/bench.sh)");
        return;
    }
    // DELAYQ_BENCH_WORKERS: the runtime's worker threads (2), 0 for a
    // current-thread runtime, to see what the runtime's own wake-ups cost.
    let runtime = match std::env::var("DELAYQ_BENCH_WORKERS").ok().and_then(|w| w.parse().ok()) {
        Some(0) => tokio::runtime::Builder::new_current_thread().enable_all().build(),
        workers => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers.unwrap_or(2))
            .enable_all()
            .build(),
    }
    .unwrap();
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == soak::DASHBOARD_CHILD_FLAG) {
        let port = args[i + 2].parse().expect("the dashboard's port");
        return runtime.block_on(soak::dashboard_child(&args[i + 1], port));
    }
    let only = only();
    if let Some(unknown) = only
        .iter()
        .flatten()
        .find(|n| !SCENARIOS.iter().any(|s| s.selected_by(n)))
    {
        let names: Vec<&str> = SCENARIOS.iter().map(|s| s.name()).collect();
        eprintln!("no scenario {unknown:?}; --only takes {}", names.join(", "));
        std::process::exit(2);
    }
    if !runtime.block_on(run(only)) {
        std::process::exit(1);
    }
}

/// Runs the scenarios `only` names (without it, all but the soak), in the
/// order of [`SCENARIOS`]; false when one saw a violation.
async fn run(only: Option<Vec<String>>) -> bool {
    let started = Instant::now();
    eprintln!("delayq benchmark on {}", machine());
    let mut ctx = Context::default();
    let mut rows = Vec::new();
    for scenario in SCENARIOS {
        let wanted = match &only {
            Some(names) => names.iter().any(|n| scenario.selected_by(n)),
            None => scenario.by_default(),
        };
        if wanted {
            rows.extend(scenario.run(&mut ctx).await);
        }
    }
    println!("Machine: {}", machine());
    println!();
    report::print(&rows);
    eprintln!("benchmark took {:.0} s", started.elapsed().as_secs_f64());
    !ctx.violation
}

/// The `delayq` binary of the same build (`delayq-cli`, a member of this
/// workspace): beside this benchmark's own directory in the target folder.
/// `scripts/bench.sh` builds it first; without it the CLI rows are left out.
fn cli_binary() -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let binary = exe.parent()?.parent()?.join("delayq");
    binary.is_file().then_some(binary)
}
