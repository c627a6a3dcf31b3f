//! `delayq schedule ...`: the CLI over recurring schedules.

use crate::harness::{deadline, RedisServer};
use crate::schedule_helpers::ms;
use std::time::SystemTime;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_adds_lists_pauses_resumes_and_removes_schedules() {
    deadline(async {
        let redis = RedisServer::start().await;
        let cli = |args: &[&str]| {
            std::process::Command::new(env!("CARGO_BIN_EXE_delayq"))
                .args(args)
                .env("REDIS_URL", redis.url())
                .output()
                .expect("run delayq")
        };
        let out = cli(&[
            "schedule",
            "add",
            "reports",
            "weekly",
            "--cron",
            "0 9 * * MON",
            "--tz",
            "America/New_York",
            "--misfire",
            "fire_once",
            "--codec",
            "json",
            r#"{"kind":"weekly"}"#,
        ]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let list = |format: &str| cli(&["schedule", "list", "reports", "--codec", "json", "--format", format]);
        let json: serde_json::Value = serde_json::from_slice(&list("json").stdout).unwrap();
        let weekly = &json["schedules"][0];
        assert_eq!(weekly["name"], "weekly");
        assert_eq!(weekly["spec"], "CRON_TZ=America/New_York 0 9 * * MON");
        assert_eq!(weekly["misfire"], "fire_once");
        assert_eq!(weekly["value"], r#"{"kind":"weekly"}"#);
        assert_eq!(weekly["paused"], false);
        assert!(weekly["next_ms"].as_i64().unwrap() > ms(SystemTime::now()));
        let table = String::from_utf8(list("table").stdout).unwrap();
        assert!(table.contains("weekly") && table.contains("0 9 * * MON"), "{table}");

        assert!(cli(&["schedule", "pause", "reports", "weekly"]).status.success());
        let json: serde_json::Value = serde_json::from_slice(&list("json").stdout).unwrap();
        assert_eq!(json["schedules"][0]["paused"], true);
        // inspect and stats show the queue's schedules too.
        let inspected: serde_json::Value =
            serde_json::from_slice(&cli(&["inspect", "reports", "--format", "json"]).stdout).unwrap();
        assert_eq!(inspected["schedules"][0]["name"], "weekly", "{inspected}");
        assert_eq!(inspected["schedules"][0]["paused"], true, "{inspected}");
        let stats: serde_json::Value =
            serde_json::from_slice(&cli(&["stats", "reports", "--format", "json"]).stdout).unwrap();
        assert_eq!(stats["queues"][0]["schedules"], 1, "{stats}");
        let table = String::from_utf8_lossy(&cli(&["inspect", "reports"]).stdout).into_owned();
        assert!(table.contains("schedules") && table.contains("weekly"), "{table}");
        assert!(cli(&["schedule", "resume", "reports", "weekly"]).status.success());
        assert!(cli(&["schedule", "remove", "reports", "weekly"]).status.success());
        assert_eq!(cli(&["schedule", "remove", "reports", "weekly"]).status.code(), Some(1));
        let json: serde_json::Value = serde_json::from_slice(&list("json").stdout).unwrap();
        assert_eq!(json["schedules"].as_array().unwrap().len(), 0);

        let bad = cli(&["schedule", "add", "reports", "x", "--cron", "99 * * * *", "v"]);
        assert_eq!(bad.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&bad.stderr).contains("does not parse"));
    })
    .await;
}
