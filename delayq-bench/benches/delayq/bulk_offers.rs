//! Scenario 1b: bulk offers (`DelayedQueue::offer_all`), in elements per
//! second, against the single-offer ceiling of the same run (scenario 1's
//! redis-benchmark of the offer script, pipelined); the longest bulk script
//! (SLOWLOG), with small and 10 KB payloads and on a timeout set of
//! 10,000,000 members; and `delayq offer --from-file`.

use std::io::Write;
use std::time::Duration;

use bytes::Bytes;
use delayq::{BytesCodec, Client, LongCodec, QueueKeys};
use tokio::time::Instant;

use crate::admin::Admin;
use crate::report::{rate, thousands, Row};
use crate::scenario::{Context, Rows, Scenario};
use crate::RedisServer;

/// Elements per measured `offer_all` call.
pub const ELEMENTS: i64 = 1_000_000;
/// Runs of each side; the medians are compared.
const RUNS: usize = 3;
/// The large-payload run: this many values of 10 KB.
const LARGE: usize = 20_000;
const LARGE_SIZE: usize = 10 * 1024;
/// Members of the timeout set the longest script is measured on.
pub const BIG_SET: i64 = 10_000_000;

/// Server time of the bulk scripts of a run, from SLOWLOG, in µs.
#[derive(Default, Clone, Copy)]
pub struct Scripts {
    pub median_us: u64,
    pub p99_us: u64,
    pub longest_us: u64,
}

impl Scripts {
    fn of(mut durations: Vec<u64>) -> Scripts {
        durations.sort_unstable();
        let at = |q: f64| durations.get(((durations.len() as f64 * q) as usize).min(durations.len().saturating_sub(1)));
        Scripts {
            median_us: at(0.5).copied().unwrap_or(0),
            p99_us: at(0.99).copied().unwrap_or(0),
            longest_us: durations.last().copied().unwrap_or(0),
        }
    }

    fn merge(self, other: Scripts) -> Scripts {
        Scripts {
            median_us: self.median_us.max(other.median_us),
            p99_us: self.p99_us.max(other.p99_us),
            longest_us: self.longest_us.max(other.longest_us),
        }
    }
}

pub struct Bulk {
    /// offer_all, elements/s (median), and the single-offer ceiling (median).
    pub rate: f64,
    pub ceiling: f64,
    /// 10 KB payloads, elements/s.
    pub large_rate: f64,
    /// Bulk scripts: small payloads (every run), 10 KB payloads, and both
    /// on a timeout set of BIG_SET members (the worse of the two).
    pub small: Scripts,
    pub large: Scripts,
    pub big_set: Scripts,
    /// `delayq offer --from-file` of ELEMENTS lines, values/s (whole process).
    pub cli_rate: Option<f64>,
}

pub async fn run(redis: &RedisServer) -> Bulk {
    let admin = Admin::connect(&redis.url()).await;
    let sha = admin.script_load(&crate::offers::offer_script()).await;
    admin.config_set("slowlog-max-len", "100000").await;
    let (mut ours, mut ceiling, mut durations) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..RUNS {
        let name = format!("bulk-{run}");
        let (rate, scripts) = measured(&admin, || small(redis, &name)).await;
        eprintln!(
            "  offer_all: {rate:.0}/s, longest script {} µs",
            scripts.iter().max().unwrap_or(&0)
        );
        ours.push(rate);
        durations.extend(scripts);
        drop_queue(&admin, &name).await;
        let name = format!("bulk-ceiling-{run}");
        ceiling.push(crate::offers::ceiling_once(redis, &sha, &name));
        drop_queue(&admin, &name).await;
    }
    let (large_rate, large_scripts) = measured(&admin, || large(redis, "bulk-large", LARGE)).await;
    let large_scripts = Scripts::of(large_scripts);
    drop_queue(&admin, "bulk-large").await;
    eprintln!(
        "  10 KB payloads: {large_rate:.0}/s, longest script {} µs",
        large_scripts.longest_us
    );
    let cli_rate = cli(redis).await;
    drop_queue(&admin, "bulk-cli").await;

    eprintln!("  loading a timeout set of {BIG_SET} members...");
    let big = QueueKeys::new("bulk-big").unwrap();
    let now = crate::measure::now_ms_f64() as i64;
    crate::backlog::load_sized(&admin, &big, now + 1_800_000, now + 7_200_000, BIG_SET, 16).await;
    let (_, small_on_big) = measured(&admin, || small_n(redis, "bulk-big", 200_000)).await;
    let (_, large_on_big) = measured(&admin, || large(redis, "bulk-big", 5_000)).await;
    let (small_on_big, large_on_big) = (Scripts::of(small_on_big), Scripts::of(large_on_big));
    drop_queue(&admin, "bulk-big").await;
    eprintln!(
        "  on {BIG_SET} members: scripts median / p99 / longest {} / {} / {} µs (small), {} / {} / {} µs (10 KB)",
        small_on_big.median_us,
        small_on_big.p99_us,
        small_on_big.longest_us,
        large_on_big.median_us,
        large_on_big.p99_us,
        large_on_big.longest_us
    );

    Bulk {
        rate: crate::measure::median(ours),
        ceiling: crate::measure::median(ceiling),
        large_rate,
        small: Scripts::of(durations),
        large: large_scripts,
        big_set: small_on_big.merge(large_on_big),
        cli_rate,
    }
}

/// Runs `f` (which returns elements/s) with every command logged; returns
/// its rate and the server time of each script it ran, in µs.
async fn measured<F, Fut>(admin: &Admin, f: F) -> (f64, Vec<u64>)
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = f64>,
{
    admin.config_set("slowlog-log-slower-than", "0").await;
    admin.cmd("SLOWLOG", vec!["RESET".into()]).await;
    let rate = f().await;
    admin.config_set("slowlog-log-slower-than", "10000").await;
    let mut durations = admin.durations("evalsha").await;
    durations.extend(admin.durations("eval").await);
    (rate, durations)
}

async fn client(redis: &RedisServer) -> Client {
    Client::builder().url(redis.url()).build().await.unwrap()
}

async fn small(redis: &RedisServer, name: &str) -> f64 {
    small_n(redis, name, ELEMENTS).await
}

/// offer_all of `n` longs, due in an hour: elements/s, encoding included.
async fn small_n(redis: &RedisServer, name: &str, n: i64) -> f64 {
    let client = client(redis).await;
    let queue = client.delayed_queue(name, LongCodec).unwrap().without_transfer();
    let started = Instant::now();
    queue
        .offer_all((0..n).map(|i| (i, Duration::from_secs(3600))))
        .await
        .unwrap();
    let rate = n as f64 / started.elapsed().as_secs_f64();
    client.shutdown().await;
    rate
}

/// offer_all of `n` payloads of 10 KB: elements/s.
async fn large(redis: &RedisServer, name: &str, n: usize) -> f64 {
    let client = client(redis).await;
    let queue = client
        .delayed_queue::<Bytes, _>(name, BytesCodec)
        .unwrap()
        .without_transfer();
    let payloads: Vec<Bytes> = (0..n)
        .map(|i| {
            let mut p = format!("{i:08}").into_bytes();
            p.resize(LARGE_SIZE, b'x');
            Bytes::from(p)
        })
        .collect();
    let started = Instant::now();
    queue
        .offer_all(payloads.iter().map(|p| (p, Duration::from_secs(3600))))
        .await
        .unwrap();
    let rate = n as f64 / started.elapsed().as_secs_f64();
    client.shutdown().await;
    rate
}

/// `delayq offer bulk-cli --from-file` of ELEMENTS lines: values/s of the
/// whole process (start, reading and checking the file, offering).
async fn cli(redis: &RedisServer) -> Option<f64> {
    let binary = crate::cli_binary()?;
    let mut file = tempfile::NamedTempFile::new().unwrap();
    {
        let mut out = std::io::BufWriter::new(file.as_file_mut());
        for i in 0..ELEMENTS {
            writeln!(out, "{i}").unwrap();
        }
    }
    let started = Instant::now();
    let output = tokio::process::Command::new(binary)
        .args(["offer", "bulk-cli", "--delay", "1h", "--codec", "long", "--from-file"])
        .arg(file.path())
        .env("REDIS_URL", redis.url())
        .output()
        .await
        .unwrap();
    let seconds = started.elapsed().as_secs_f64();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    eprintln!("  CLI: {}", String::from_utf8_lossy(&output.stderr).trim());
    Some(ELEMENTS as f64 / seconds)
}

async fn drop_queue(admin: &Admin, name: &str) {
    let keys = QueueKeys::new(name).unwrap();
    admin
        .cmd(
            "DEL",
            vec![keys.timeout().into(), keys.pending().into(), keys.destination().into()],
        )
        .await;
}

/// Scenario 1b. Bulk offers: `offer_all` of 1,000,000 against the single-offer ceiling, script times, and
/// the CLI's `--from-file`.
pub struct BulkOffers;

impl Scenario for BulkOffers {
    fn name(&self) -> &'static str {
        "bulk"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            let mut rows = Vec::new();
            eprintln!(
                "1b. bulk offers ({} per offer_all, against the single-offer ceiling)...",
                thousands(ELEMENTS as u64)
            );
            let redis = RedisServer::start().await;
            let b = run(&redis).await;
            let scenario = "1b. bulk offers";
            let ratio = b.rate / b.ceiling;
            rows.push(
                Row::new(
                    scenario,
                    &format!("elements/s, offer_all of {}", thousands(ELEMENTS as u64)),
                )
                .values(
                    format!("{} (median of 3)", rate(b.rate)),
                    format!(
                        "{} (single-offer ceiling: redis-benchmark EVALSHA, pipelined)",
                        rate(b.ceiling)
                    ),
                )
                .ratio(ratio)
                .target("≥ 3× ceiling", ratio >= 3.0),
            );
            rows.push(
                Row::new(scenario, "elements/s, offer_all of 20,000 × 10 KB")
                    .values(rate(b.large_rate), "—".into())
                    .ratio(b.large_rate / b.ceiling),
            );
            let ms = |us: u64| format!("{:.2} ms", us as f64 / 1000.0);
            let big = thousands(BIG_SET as u64);
            for (what, scripts) in [
                ("small values".to_owned(), b.small),
                ("10 KB values".to_owned(), b.large),
                (format!("both, on a timeout set of {big}"), b.big_set),
            ] {
                rows.push(
                    Row::new(scenario, &format!("script time, {what}: median / p99 / longest"))
                        .values(
                            format!(
                                "{} / {} / {}",
                                ms(scripts.median_us),
                                ms(scripts.p99_us),
                                ms(scripts.longest_us)
                            ),
                            "—".into(),
                        )
                        .target(
                            "longest script ≤ 10 ms",
                            scripts.longest_us > 0 && scripts.longest_us <= 10_000,
                        ),
                );
            }
            if let Some(cli) = b.cli_rate {
                rows.push(
                    Row::new(
                        scenario,
                        &format!(
                            "delayq offer --from-file, {} lines (whole process)",
                            thousands(ELEMENTS as u64)
                        ),
                    )
                    .values(rate(cli), "—".into())
                    .ratio(cli / b.ceiling),
                );
            }
            rows
        })
    }
}
