//! The `delayq` binary, run as a separate process against a real Redis.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::harness::{deadline, RedisServer};

fn delayq(redis: &RedisServer, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_delayq"))
        .args(args)
        .env("REDIS_URL", redis.url())
        .output()
        .expect("run delayq")
}

async fn delayq_async(redis: &RedisServer, args: &[&str]) -> Output {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_delayq"))
        .args(args)
        .env("REDIS_URL", redis.url())
        .output()
        .await
        .expect("run delayq");
    output
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offer_then_take_round_trips_through_two_processes() {
    deadline(async {
        let redis = RedisServer::start().await;
        let offered = Instant::now();
        let out = delayq(&redis, &["offer", "jobs", "--delay", "800ms", "first", "second"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let out = delayq_async(&redis, &["take", "jobs", "-n", "2", "--timeout", "10s"]).await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        // Both have the same due time: they come out in Redis's tie order, as with Redisson.
        let mut got: Vec<String> = stdout(&out).lines().map(str::to_owned).collect();
        got.sort();
        assert_eq!(got, vec!["first", "second"]);
        assert!(offered.elapsed() >= Duration::from_millis(800));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn take_exits_non_zero_when_too_few_values_arrive() {
    deadline(async {
        let redis = RedisServer::start().await;
        assert!(delayq(&redis, &["offer", "q", "--delay", "0", "only"]).status.success());
        let out = delayq_async(&redis, &["take", "q", "-n", "2", "--timeout", "1s"]).await;
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(stdout(&out), "only\n");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codecs_and_formats_round_trip_on_the_command_line() {
    deadline(async {
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let cases: [(&str, &str, &[&str]); 4] = [
            ("long", "legacy", &["42", "-7"]),
            ("bytes", "modern", &["deadbeef", "00ff0a22"]),
            ("json", "legacy", &[r#"{"id":"o-1","amount":1234}"#]),
            ("string", "legacy", &["héllo ✓"]),
        ];
        for (i, (codec, format, values)) in cases.iter().enumerate() {
            let queue = format!("q{i}");
            let mut args = vec![
                "offer",
                queue.as_str(),
                "--delay",
                "0",
                "--codec",
                codec,
                "--format",
                format,
            ];
            args.extend(values.iter());
            let out = delayq(&redis, &args);
            assert!(
                out.status.success(),
                "{codec}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let pending = raw.lrange(&format!("redisson_delay_queue:{{{queue}}}")).await;
            for element in &pending {
                let fmt = delayq::format::unpack(element).unwrap().format();
                assert_eq!(fmt.as_str(), *format);
            }
            let n = values.len().to_string();
            let out = delayq_async(&redis, &["take", &queue, "-n", &n, "--timeout", "5s", "--codec", codec]).await;
            assert!(
                out.status.success(),
                "{codec}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            // Equal due times (delay 0) come out in Redis's tie order, like Redisson's.
            let mut got: Vec<String> = stdout(&out).lines().map(str::to_owned).collect();
            let mut expected: Vec<String> = values.iter().map(|v| (*v).to_owned()).collect();
            got.sort();
            expected.sort();
            assert_eq!(got, expected, "{codec}");
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_a_clear_error_with_a_non_zero_exit() {
    deadline(async {
        let redis = RedisServer::start().await;
        let out = delayq(&redis, &["offer", "q", "--delay", "-5s", "x"]);
        assert!(!out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("negative delay"),
            "{:?}",
            out
        );
        let out = delayq(&redis, &["offer", "q", "--delay", "1s", "--codec", "long", "abc"]);
        assert!(!out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("not a 64-bit integer"),
            "{:?}",
            out
        );
        let out = Command::new(env!("CARGO_BIN_EXE_delayq"))
            .args(["take", "q", "--timeout", "1s"])
            .env("REDIS_URL", "redis://127.0.0.1:1")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("cannot connect"),
            "{:?}",
            out
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jackson_values_are_typed_on_offer_and_plain_on_take() {
    deadline(async {
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let order = r#"{"id":"o-1","amount":1234,"tags":["a","b"]}"#;
        let out = delayq(
            &redis,
            &[
                "offer",
                "vq_json",
                "--delay",
                "0",
                "--codec",
                "jackson",
                "--java-class",
                "compat.Order",
                order,
            ],
        );
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        // Exactly the bytes Redisson's JsonJacksonCodec wrote for this order (compat/fixtures/4.7.0/json.json).
        let pending = raw.lrange("redisson_delay_queue:{vq_json}").await;
        let payload = delayq::format::unpack(&pending[0]).unwrap().payload.to_vec();
        assert_eq!(
            String::from_utf8(payload).unwrap(),
            r#"{"@class":"compat.Order","amount":1234,"id":"o-1","tags":["java.util.ArrayList",["a","b"]]}"#
        );
        let out = delayq_async(&redis, &["take", "vq_json", "--timeout", "5s", "--codec", "jackson"]).await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(
            stdout(&out),
            "{\"amount\":1234,\"id\":\"o-1\",\"tags\":[\"a\",\"b\"]}\n"
        );

        let out = delayq(&redis, &["offer", "q", "--delay", "0", "--codec", "jackson", "{}"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("--java-class"), "{out:?}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_rewrites_a_queue_from_the_command_line() {
    deadline(async {
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        assert!(
            delayq(&redis, &["offer", "q", "--delay", "1h", "--format", "legacy", "a", "b"])
                .status
                .success()
        );
        assert!(delayq(&redis, &["offer", "q", "--delay", "1h", "c"]).status.success());
        let out = delayq(&redis, &["migrate", "q", "--to", "modern"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(
            stdout(&out).contains("2 element(s) rewritten as modern, 1 already modern"),
            "{}",
            stdout(&out)
        );
        for element in raw.lrange("redisson_delay_queue:{q}").await {
            assert_eq!(
                delayq::format::unpack(&element).unwrap().format(),
                delayq::Format::Modern
            );
        }
    })
    .await;
}
