//! Several `delayq` processes on one queue: schedules fired once per occurrence
//! across runners killed and restarted, transfers by four processes, and a
//! transfer on a host whose clock is fast.

use std::process::Stdio;
use std::time::Duration;

use delayq::{LongCodec, StringCodec};
use tokio::time::Instant;

use delayq_test_support::schedules::{assert_each_occurrence_once, info, ms, scores};
use delayq_test_support::{redis_test, wait_for, RedisServer};

/// Generous: a loaded 2-core machine may be slow, never wrong.
const WITHIN: Duration = Duration::from_secs(60);

redis_test! {
    /// The key test: 4 `delayq schedule run` processes, one killed mid-way, then
    /// all of them, then one started again.
    async fn four_processes_one_killed_then_restarted_offer_each_occurrence_once_and_miss_none(redis, raw) {
        let observer = redis.client().await;
        let cli = |args: &[&str]| {
            std::process::Command::new(env!("CARGO_BIN_EXE_delayq"))
                .args(args)
                .env("REDIS_URL", redis.url())
                .output()
                .expect("run delayq")
        };
        let added = cli(&[
            "schedule",
            "add",
            "jobs",
            "tick",
            "--every",
            "1s",
            "--misfire",
            "fire_all",
            "tick",
        ]);
        assert!(added.status.success(), "{}", String::from_utf8_lossy(&added.stderr));
        let first = ms(info(&observer, "jobs", "tick").await.next.unwrap());
        let spawn = || {
            tokio::process::Command::new(env!("CARGO_BIN_EXE_delayq"))
                .args(["schedule", "run", "jobs", "--no-transfer"])
                .env("REDIS_URL", redis.url())
                .stderr(std::process::Stdio::null())
                .kill_on_drop(true)
                .spawn()
                .expect("start delayq schedule run")
        };
        let fired = || async { info(&observer, "jobs", "tick").await.fired };

        let mut runners: Vec<_> = (0..4).map(|_| spawn()).collect();
        wait_for(WITHIN, "3 occurrences", || async { (fired().await >= 3).then_some(()) }).await;
        runners[0].kill().await.unwrap(); // SIGKILL mid-way
        let before = fired().await;
        wait_for(WITHIN, "3 more with 3 processes", || async {
            (fired().await >= before + 3).then_some(())
        })
        .await;
        for runner in &mut runners[1..] {
            runner.kill().await.unwrap();
        }
        tokio::time::sleep(Duration::from_millis(2500)).await; // occurrences pass with nobody running
        let down = fired().await;
        let mut restarted = spawn();
        wait_for(WITHIN, "the restarted runner catches up and carries on", || async {
            (fired().await >= down + 4).then_some(())
        })
        .await;
        let paused = cli(&["schedule", "pause", "jobs", "tick"]);
        assert!(paused.status.success());
        restarted.kill().await.unwrap();

        let info = info(&observer, "jobs", "tick").await;
        let scores = scores(&raw, "jobs").await;
        println!("4 processes: {} occurrences fired, each once", scores.len());
        assert_each_occurrence_once(&scores, first, 1000, &info);
        observer.shutdown().await;
    }
}

redis_test! {
    async fn four_transferring_processes_deliver_each_of_ten_thousand_elements_once(redis, raw, client) {
        const N: i64 = 10_000;
        let q = client.delayed_queue("shared", LongCodec).unwrap().without_transfer();
        let items: Vec<(i64, Duration)> = (0..N)
            .map(|i| (i, Duration::from_millis(1_000 + fastrand::u64(0..2500))))
            .collect();
        q.offer_all(items).await.unwrap();
        let mut processes = Vec::new();
        for _ in 0..4 {
            processes.push(
                tokio::process::Command::new(env!("CARGO_BIN_EXE_delayq"))
                    .args(["transfer", "shared", "--until-empty", "--timeout", "60s"])
                    .env("REDIS_URL", redis.url())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap(),
            );
        }
        let mut moved_by = Vec::new();
        for p in processes {
            let out = p.wait_with_output().await.unwrap();
            assert!(out.status.success());
            moved_by.push(
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .last()
                    .unwrap_or_default()
                    .to_owned(),
            );
        }
        let all: Vec<i64> = raw
            .lrange("shared")
            .await
            .iter()
            .map(|b| std::str::from_utf8(b).unwrap().parse().unwrap())
            .collect();
        let unique: std::collections::HashSet<i64> = all.iter().copied().collect();
        assert_eq!(
            all.len() as i64,
            N,
            "as many elements as offered (no duplicates, none lost)"
        );
        assert_eq!(unique.len() as i64, N, "each element exactly once");
        eprintln!("four transferring processes: {moved_by:?}");
        let movers = moved_by.iter().filter(|line| !line.starts_with("moved 0 ")).count();
        assert!(movers >= 2, "the work was shared: {moved_by:?}");
    }
}

fn s(v: &str) -> String {
    v.to_owned()
}

fn faketime() -> &'static str {
    let found = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|dir| dir.join("faketime").is_file()))
        .unwrap_or(false);
    assert!(
        found,
        "faketime not found: run ./scripts/test.sh, which installs it (Debian package faketime)"
    );
    "faketime"
}

/// Offers one element due in 3 s, then runs `delayq transfer` on a host whose
/// clock is 4 s fast; returns how long after the offer it arrived.
async fn arrival_with_skewed_transfer(redis: &RedisServer, queue: &str, clock: &str) -> Duration {
    let client = redis.client().await;
    let q = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
    let offered = Instant::now();
    q.offer(&s("x"), Duration::from_secs(3)).await.unwrap();
    let mut transfer = tokio::process::Command::new(faketime())
        .args([
            "-f",
            "+4s",
            env!("CARGO_BIN_EXE_delayq"),
            "--clock",
            clock,
            "transfer",
            queue,
            "--until-empty",
            "--timeout",
            "20s",
        ])
        .env("REDIS_URL", redis.url())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let got = q.destination().take_timeout(Duration::from_secs(15)).await.unwrap();
    let arrived = offered.elapsed();
    assert_eq!(got, Some(s("x")));
    transfer.wait().await.unwrap();
    arrived
}

redis_test! {
    async fn the_server_clock_keeps_a_skewed_worker_from_delivering_early(redis) {
        // With its own clock 4 s fast, a worker moves a 3 s element at once...
        let local = arrival_with_skewed_transfer(&redis, "skew-local", "local").await;
        assert!(
            local < Duration::from_millis(2_500),
            "skewed local clock delivered after {local:?}"
        );
        // ...with the server's clock it waits the full 3 s.
        let server = arrival_with_skewed_transfer(&redis, "skew-server", "server").await;
        assert!(
            server >= Duration::from_secs(3),
            "server clock delivered after {server:?}"
        );
        eprintln!("clock skew +4s, 3s delay: local clock delivered after {local:?}, server clock after {server:?}");
    }
}

redis_test! {
    /// The totals live on the server: what the `delayq` process offers and
    /// moves and what this process acks, fails and dead-letters add up in
    /// one hash, each counted once, whichever process did it.
    async fn the_totals_count_every_processs_work_once(redis) {
        let client = redis.client().await;
        let cli = |args: &[&str]| {
            let output = std::process::Command::new(env!("CARGO_BIN_EXE_delayq"))
                .args(args)
                .env("REDIS_URL", redis.url())
                .output()
                .expect("run delayq");
            assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
        };
        let queue = client.delayed_queue("totals", StringCodec).unwrap().without_transfer();
        for v in ["a", "b", "c"] {
            queue.offer(&v.to_owned(), Duration::ZERO).await.unwrap();
        }
        cli(&["offer", "totals", "--delay", "0", "d", "e"]);
        cli(&["move-due", "totals"]);
        let jobs = client.reliable_queue("totals", StringCodec).unwrap();
        for _ in 0..3 {
            assert!(jobs.take().await.unwrap().ack().await.unwrap());
        }
        let failing = jobs.take().await.unwrap();
        let value = failing.value().clone();
        assert!(failing.nack(Duration::ZERO).await.unwrap());
        // Given back to the tail: the fifth value comes first.
        let fifth = jobs.take().await.unwrap();
        let again = jobs.take().await.unwrap();
        assert_eq!(again.value(), &value);
        assert!(again.reject("broken").await.unwrap());
        assert!(fifth.ack().await.unwrap());

        let totals = queue.status().await.unwrap().totals;
        assert_eq!(
            (totals.offered, totals.transferred, totals.acked, totals.failed, totals.dead_lettered, totals.timed_out),
            (5, 5, 4, 2, 1, 0),
            "{totals:?}"
        );
        client.shutdown().await;
    }
}
