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

redis_test! {
    /// `schedule run-now` offers the value once and leaves the next
    /// occurrence; `schedule fires` shows it as a run by hand; `schedule
    /// edit` changes spec, zone and value, keeping counts and history, and
    /// refuses a name the queue does not hold.
    async fn the_cli_runs_now_edits_and_lists_the_fires_of_a_schedule(redis) {
        let cli = |args: &[&str]| {
            std::process::Command::new(env!("CARGO_BIN_EXE_delayq"))
                .args(args)
                .env("REDIS_URL", redis.url())
                .output()
                .expect("run delayq")
        };
        let ok = |args: &[&str]| {
            let out = cli(args);
            assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
            out
        };
        let list = || -> serde_json::Value {
            serde_json::from_slice(&ok(&["schedule", "list", "reports", "--format", "json"]).stdout).unwrap()
        };
        ok(&["schedule", "add", "reports", "nightly", "--cron", "0 2 * * *", "build"]);
        let before = list();

        let ran = ok(&["schedule", "run-now", "reports", "nightly"]);
        assert!(String::from_utf8_lossy(&ran.stderr).contains("offered"), "{ran:?}");
        let after = list();
        assert_eq!(after["schedules"][0]["next_ms"], before["schedules"][0]["next_ms"], "the next fire stays");
        assert_eq!(after["schedules"][0]["fired"], 0, "a run by hand is no occurrence");
        let inspected: serde_json::Value =
            serde_json::from_slice(&ok(&["inspect", "reports", "--format", "json"]).stdout).unwrap();
        assert_eq!(inspected["pending"], 1, "{inspected}");

        let fires = |format: &str| ok(&["schedule", "fires", "reports", "nightly", "--format", format]);
        let json: serde_json::Value = serde_json::from_slice(&fires("json").stdout).unwrap();
        let entries = json["fires"].as_array().unwrap();
        assert_eq!(entries.len(), 1, "{json}");
        assert_eq!(entries[0]["kind"], "by_hand");
        assert_eq!(entries[0]["offered"], 1);
        assert!(entries[0]["runner"].as_str().unwrap().parse::<u32>().is_ok(), "the process that asked: {json}");
        assert!(entries[0]["due_ms"].as_i64().unwrap() <= entries[0]["fired_at_ms"].as_i64().unwrap());
        let table = String::from_utf8(fires("table").stdout).unwrap();
        assert!(table.contains("KIND") && table.contains("by hand"), "{table}");

        // Spec and zone and value; then the value alone keeps the next occurrence.
        ok(&["schedule", "edit", "reports", "nightly", "--cron", "0 3 * * *", "--tz", "Europe/Paris", "rebuild"]);
        let edited = list();
        let nightly = &edited["schedules"][0];
        assert_eq!(nightly["spec"], "CRON_TZ=Europe/Paris 0 3 * * *");
        assert_eq!(nightly["value"], "rebuild");
        ok(&["schedule", "edit", "reports", "nightly", "final"]);
        let again = list();
        assert_eq!(again["schedules"][0]["value"], "final");
        assert_eq!(again["schedules"][0]["next_ms"], nightly["next_ms"]);
        assert_eq!(again["schedules"][0]["spec"], nightly["spec"]);
        let json: serde_json::Value = serde_json::from_slice(&fires("json").stdout).unwrap();
        assert_eq!(json["fires"].as_array().unwrap().len(), 1, "the history stays: {json}");

        // Refused: a name it does not hold (nothing added), nothing to change, a zone on a period.
        for args in [
            &["schedule", "edit", "reports", "weekly", "v"][..],
            &["schedule", "run-now", "reports", "weekly"][..],
            &["schedule", "fires", "reports", "weekly"][..],
        ] {
            let out = cli(args);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
            assert!(String::from_utf8_lossy(&out.stderr).contains("no schedule \"weekly\""), "{out:?}");
        }
        assert_eq!(list()["schedules"].as_array().unwrap().len(), 1);
        let nothing = cli(&["schedule", "edit", "reports", "nightly"]);
        assert_eq!(nothing.status.code(), Some(2), "{nothing:?}");
        let zone = cli(&["schedule", "edit", "reports", "nightly", "--every", "1h", "--tz", "UTC"]);
        assert_eq!(zone.status.code(), Some(2), "{zone:?}");
        assert!(String::from_utf8_lossy(&zone.stderr).contains("time zone"), "{zone:?}");
        assert_eq!(list()["schedules"][0]["value"], "final", "nothing changed");
    }
}
