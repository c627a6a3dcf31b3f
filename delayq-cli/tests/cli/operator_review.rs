//! What a new operator found running the CLI on realistic data: queues
//! with only schedules, hints that point the wrong way, specs and times
//! shown for people, and refusals that say plainly why.

use std::process::{Command, Output};

use delayq_test_support::{redis_test, RedisServer};

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

redis_test! {
    /// A queue that has only schedules (no runner, nothing offered yet) is a
    /// queue: `list` shows it, `inspect` reads it without calling it missing,
    /// and a misspelling of it is refused with its name.
    async fn a_queue_with_only_schedules_is_listed_and_inspected_as_one(redis) {
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
    }
}

redis_test! {
    /// `inspect --limit N` says how to see the next N, and `--offset` shows them.
    async fn inspect_pages_with_offset_and_says_how_to_see_the_next_ones(redis) {
        // Due one hour apart, so the due order is the offer order.
        for i in 0..8 {
            let delay = format!("{}h", i + 1);
            ok(delayq(&redis, &["offer", "big", "--delay", &delay, &format!("v{i}")]));
        }
        let text = stdout(&ok(delayq(&redis, &["inspect", "big", "--limit", "3"])));
        assert!(
            text.contains("(3 of 8 pending shown, #1–#3; --offset 3 shows the next 3)"),
            "{text}"
        );
        let text = stdout(&ok(delayq(
            &redis,
            &["inspect", "big", "--limit", "3", "--offset", "3"],
        )));
        for shown in ["v3", "v4", "v5"] {
            assert!(text.contains(shown), "{shown} in {text}");
        }
        for hidden in ["v2", "v6"] {
            assert!(!text.contains(hidden), "{hidden} in {text}");
        }
        assert!(text.contains("--offset 6 shows the next 2"), "{text}");
        let text = stdout(&ok(delayq(&redis, &["inspect", "big", "--offset", "6"])));
        assert!(
            text.contains("v6") && text.contains("v7") && !text.contains("v5"),
            "{text}"
        );
        assert!(text.contains("#7–#8") && !text.contains("shows the next"), "{text}");
        let doc: serde_json::Value = serde_json::from_slice(
            &ok(delayq(&redis, &["inspect", "big", "--offset", "7", "--format", "json"])).stdout,
        )
        .unwrap();
        assert_eq!(doc["elements"].as_array().unwrap().len(), 1, "{doc}");
        assert_eq!(doc["elements"][0]["payload"], "v7", "{doc}");
        let text = stdout(&ok(delayq(&redis, &["inspect", "big", "--offset", "20"])));
        assert!(text.contains("no pending element after the first 20"), "{text}");
    }
}

redis_test! {
    /// Schedules show their period as people write it, and a cron spec
    /// without a zone says it is UTC; JSON keeps the spec that parses back.
    async fn schedule_specs_show_humanised_periods_and_the_zone_of_cron(redis) {
        for (name, every) in [("a-hourly", "1h"), ("b-ninety", "90m"), ("c-fast", "500ms")] {
            ok(delayq(
                &redis,
                &["schedule", "add", "specs", name, "--every", every, "x"],
            ));
        }
        ok(delayq(
            &redis,
            &["schedule", "add", "specs", "d-cron", "--cron", "0 3 * * *", "x"],
        ));
        let text = stdout(&ok(delayq(&redis, &["schedule", "list", "specs"])));
        for shown in ["every 1h ", "every 1h30m ", "every 500ms ", "0 3 * * * (UTC)"] {
            assert!(text.contains(shown), "{shown:?} in {text}");
        }
        assert!(!text.contains("3600s"), "{text}");
        let text = stdout(&ok(delayq(&redis, &["inspect", "specs"])));
        assert!(
            text.contains("every 1h30m") && text.contains("0 3 * * * (UTC)"),
            "{text}"
        );
        let doc: serde_json::Value =
            serde_json::from_slice(&ok(delayq(&redis, &["schedule", "list", "specs", "--format", "json"])).stdout)
                .unwrap();
        assert_eq!(doc["schedules"][3]["spec"], "0 3 * * *", "{doc}");
    }
}

redis_test! {
    /// `schedule list` of a misspelt queue is refused like other reads;
    /// `move-due` on a paused queue says so plainly (exit 1, as `take` does);
    /// LAG says "-" where there is none.
    async fn small_refusals_say_plainly_what_is_wrong(redis) {
        ok(delayq(
            &redis,
            &["schedule", "add", "reports", "nightly", "--cron", "0 3 * * *", "x"],
        ));
        let out = delayq(&redis, &["schedule", "list", "reprts"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(stderr(&out).contains("did you mean `reports`?"), "{out:?}");
        let out = delayq(&redis, &["schedule", "list", "nosuch"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");

        ok(delayq(&redis, &["offer", "jobs", "--delay", "1h", "a"]));
        ok(delayq(&redis, &["pause", "jobs"]));
        let out = delayq(&redis, &["move-due", "jobs"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let said = stderr(&out);
        assert!(
            said.contains("jobs is paused") && !said.contains("invalid argument"),
            "{said}"
        );
        ok(delayq(&redis, &["resume", "jobs"]));

        let text = stdout(&ok(delayq(&redis, &["stats", "jobs"])));
        let header = text.lines().next().unwrap();
        let row = text.lines().nth(1).unwrap();
        let lag_at = header.find("LAG").unwrap();
        let lag: String = row[lag_at..].split_whitespace().next().unwrap().into();
        assert_eq!(lag, "-", "{text}");
    }
}

redis_test! {
    /// `stats` (and so `list`) says how long the oldest ready value has
    /// waited where a transfer recorded its due time, "unknown" where none
    /// did, and how long a queue has been paused.
    async fn stats_show_the_oldest_ready_values_wait_and_the_pauses_age(redis) {
        let raw = redis.raw().await;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        raw.cmd("RPUSH", vec!["direct".into(), "x".into()]).await;
        raw.cmd("RPUSH", vec!["tracked".into(), "old".into()]).await;
        // What a transfer records while lateness tracking is on.
        raw.cmd(
            "ZADD",
            vec!["delayq_due:{tracked}".into(), (now - 3 * 3_600_000).into(), "old".into()],
        )
        .await;
        ok(delayq(&redis, &["offer", "held", "--delay", "1h", "a"]));
        raw.cmd("SET", vec!["delayq_paused:{held}".into(), (now - 2 * 3_600_000).into()]).await;

        let text = stdout(&ok(delayq(&redis, &["stats", "direct", "tracked", "held"])));
        let header = text.lines().next().unwrap();
        let cell = |queue: &str, column: &str| -> String {
            let at = header.find(column).unwrap_or_else(|| panic!("{text}"));
            let row = text.lines().find(|l| l.starts_with(queue)).unwrap();
            row[at..].split_whitespace().next().unwrap().into()
        };
        assert_eq!(cell("direct", "LATENCY"), "unknown", "{text}");
        assert!(cell("tracked", "LATENCY").starts_with("3h"), "{text}");
        assert_eq!(cell("held", "LATENCY"), "-", "{text}");
        let held = text.lines().find(|l| l.starts_with("held")).unwrap();
        assert!(held.contains("paused 2h"), "{text}");

        let json: serde_json::Value = serde_json::from_slice(
            &ok(delayq(&redis, &["stats", "direct", "tracked", "held", "--format", "json"])).stdout,
        )
        .unwrap();
        let queues = &json["queues"];
        assert_eq!(queues[0]["oldest_ready_age_ms"], serde_json::Value::Null, "{json}");
        assert!(queues[1]["oldest_ready_age_ms"].as_u64().unwrap() >= 3 * 3_600_000, "{json}");
        assert!(queues[2]["paused_for_ms"].as_u64().unwrap() >= 2 * 3_600_000, "{json}");

        // `inspect` says the same for one queue, and since when it is paused.
        let line = |text: &str, label: &str| -> String {
            let found = text.lines().find(|l| l.starts_with(label));
            found.unwrap_or_else(|| panic!("no {label:?} line in:\n{text}")).into()
        };
        let tracked = stdout(&ok(delayq(&redis, &["inspect", "tracked"])));
        assert!(line(&tracked, "oldest ready").contains(" 3h"), "{tracked}");
        let direct = stdout(&ok(delayq(&redis, &["inspect", "direct"])));
        assert!(line(&direct, "oldest ready").contains("unknown"), "{direct}");
        let held = stdout(&ok(delayq(&redis, &["inspect", "held"])));
        assert!(!held.contains("oldest ready"), "nothing ready: no line\n{held}");
        assert!(line(&held, "paused").contains("for 2h"), "{held}");
    }
}
