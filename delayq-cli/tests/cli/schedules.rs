//! `delayq schedule ...`: the CLI over recurring schedules.

use delayq_test_support::redis_test;
use delayq_test_support::schedules::ms;
use std::time::SystemTime;

redis_test! {
    async fn the_cli_adds_lists_pauses_resumes_and_removes_schedules(redis) {
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
        // Its last schedule gone, the queue has no key left: listing it is
        // refused as for any name no queue has; a queue that exists lists none.
        let gone = list("json");
        assert_eq!(gone.status.code(), Some(1), "{gone:?}");
        assert!(
            String::from_utf8_lossy(&gone.stderr).contains("no queue `reports`"),
            "{gone:?}"
        );
        assert!(cli(&["offer", "reports", "--delay", "1h", "v"]).status.success());
        let json: serde_json::Value = serde_json::from_slice(&list("json").stdout).unwrap();
        assert_eq!(json["schedules"].as_array().unwrap().len(), 0);

        let bad = cli(&["schedule", "add", "reports", "x", "--cron", "99 * * * *", "v"]);
        assert_eq!(bad.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&bad.stderr).contains("does not parse"));
    }
}

redis_test! {
    /// `schedule list` says when each schedule last fired ("never" before its
    /// first fire) and whether any process runs the queue's schedules, from
    /// the runners' heartbeats: a command that only adds a schedule is no runner.
    async fn schedule_list_shows_the_last_fire_and_whether_a_runner_is_alive(redis) {
        let cli = |args: &[&str]| {
            std::process::Command::new(env!("CARGO_BIN_EXE_delayq"))
                .args(args)
                .env("REDIS_URL", redis.url())
                .output()
                .expect("run delayq")
        };
        let list = |format: &str| {
            let out = cli(&["schedule", "list", "ticks", "--format", format]);
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8(out.stdout).unwrap()
        };
        let json = || serde_json::from_str::<serde_json::Value>(&list("json")).unwrap();
        let add = cli(&["schedule", "add", "ticks", "tick", "--every", "1s", "t"]);
        assert!(add.status.success(), "{}", String::from_utf8_lossy(&add.stderr));
        let table = list("table");
        let header = table.lines().next().unwrap();
        assert!(header.contains("LAST FIRED"), "{table}");
        assert!(table.lines().nth(1).unwrap().contains("never"), "{table}");
        assert!(table.contains("runners: none alive"), "{table}");
        assert_eq!(json()["runners"], serde_json::json!([]));

        let mut runner = std::process::Command::new(env!("CARGO_BIN_EXE_delayq"))
            .args(["schedule", "run", "ticks", "--no-transfer", "--timeout", "120s"])
            .env("REDIS_URL", redis.url())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start delayq schedule run");
        let fired = wait_until(|| {
            let doc = json();
            (doc["schedules"][0]["fired"].as_u64().unwrap() >= 1 && doc["runners"].as_array().unwrap().len() == 1)
                .then_some(doc)
        })
        .await;
        runner.kill().unwrap();
        runner.wait().unwrap();
        let last = fired["schedules"][0]["last_fired_ms"].as_i64().unwrap();
        assert!(last <= ms(SystemTime::now()), "{fired}");
        assert!(
            fired["schedules"][0]["last_fired"].as_str().unwrap().ends_with('Z'),
            "{fired}"
        );
        let table = list("table");
        let row = table.lines().nth(1).unwrap();
        assert!(!row.contains("never") && row.contains(" ago)"), "{table}");
    }
}

/// Polls `check` until it gives a value (generous: a loaded machine is slow, never wrong).
async fn wait_until<T>(mut check: impl FnMut() -> Option<T>) -> T {
    for _ in 0..600 {
        if let Some(found) = check() {
            return found;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the schedule never fired with a live runner");
}
