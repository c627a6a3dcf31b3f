//! What a new operator found running the CLI on realistic data: queues
//! with only schedules, hints that point the wrong way, specs and times
//! shown for people, and refusals that say plainly why.

use std::process::{Command, Output};

use crate::harness::{deadline, RedisServer};

fn delayq(redis: &RedisServer, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_delayq"))
        .args(args)
        .env("REDIS_URL", redis.url())
        .output()
        .expect("run delayq")
}

fn ok(output: Output) -> Output {
    assert!(output.status.success(), "{output:?}");
    output
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn listed(redis: &RedisServer) -> Vec<String> {
    let doc: serde_json::Value =
        serde_json::from_slice(&ok(delayq(redis, &["list", "--format", "json"])).stdout).unwrap();
    doc["queues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["queue"].as_str().unwrap().to_owned())
        .collect()
}

/// A queue that has only schedules (no runner, nothing offered yet) is a
/// queue: `list` shows it, `inspect` reads it without calling it missing,
/// and a misspelling of it is refused with its name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_with_only_schedules_is_listed_and_inspected_as_one() {
    deadline(async {
        let redis = RedisServer::start().await;
        for (name, when) in [
            ("nightly", "0 3 * * *"),
            ("hourly", "0 * * * *"),
            ("weekly", "0 9 * * MON"),
        ] {
            ok(delayq(
                &redis,
                &["schedule", "add", "sched-idle", name, "--cron", when, "x"],
            ));
        }
        ok(delayq(
            &redis,
            &["schedule", "add", "{t}tagged", "often", "--every", "1h", "y"],
        ));
        assert_eq!(listed(&redis), ["sched-idle", "{t}tagged"]);

        let out = ok(delayq(&redis, &["inspect", "sched-idle"]));
        assert!(stdout(&out).contains("nightly"), "{out:?}");
        let said = stderr(&out);
        assert!(!said.contains("no key of queue"), "{said}");
        assert!(said.contains("3 schedules"), "{said}");

        let out = delayq(&redis, &["stats", "sched-idl"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(stderr(&out).contains("did you mean `sched-idle`?"), "{out:?}");
    })
    .await;
}
