//! `delayq dead-letter list|requeue|delete`: when each
//! value died, paging, reasons, and values named by their position.

use std::process::{Command, Output};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use delayq::fred::prelude::*;

use delayq_test_support::{deadline, redis_test, RawRedis, RedisServer};

fn delayq(redis: &RedisServer, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_delayq"))
        .args(args)
        .env("REDIS_URL", redis.url())
        .output()
        .expect("run delayq")
}

fn stdout(output: &Output) -> String {
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn json_of(output: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(output)).unwrap_or_else(|e| panic!("not JSON ({e}): {output:?}"))
}

/// Dead letters as delayq records them, each with `<ms> <reason>`; `ago`
/// minutes before now.
async fn seed(raw: &RawRedis, queue: &str, entries: &[(&str, u64, &str)]) {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
    for (value, ago, reason) in entries {
        let _: i64 = raw
            .client
            .rpush(format!("delayq_dead_letter:{{{queue}}}"), *value)
            .await
            .unwrap();
        let record = format!("{} {reason}", now - ago * 60_000);
        let _: i64 = raw
            .client
            .rpush(format!("delayq_dead_reasons:{{{queue}}}"), record)
            .await
            .unwrap();
    }
}

async fn dead(raw: &RawRedis, queue: &str) -> Vec<String> {
    raw.lrange(&format!("delayq_dead_letter:{{{queue}}}"))
        .await
        .iter()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .collect()
}

const ENTRIES: [(&str, u64, &str); 5] = [
    ("a", 50, "smtp down"),
    ("b", 40, "bad input"),
    ("c", 30, "smtp down"),
    ("d", 20, "SMTP down again"),
    ("e", 3, "bad input"),
];

redis_test! {
    async fn list_shows_when_each_died_pages_filters_and_groups_by_reason(redis, raw) {
        seed(&raw, "jobs", &ENTRIES).await;

        let text = stdout(&delayq(&redis, &["dead-letter", "list", "jobs"]));
        assert!(text.contains("DIED"), "{text}");
        let e = text
            .lines()
            .find(|l| l.starts_with("5 "))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(
            e.contains("  e  ") && e.contains("3m") && e.contains("ago") && e.contains("bad input"),
            "{e}"
        );

        // Paging: the second and third, numbered as in the whole list.
        let text = stdout(&delayq(
            &redis,
            &["dead-letter", "list", "jobs", "--offset", "1", "--limit", "2"],
        ));
        let rows: Vec<&str> = text.lines().skip(1).take(2).collect();
        assert!(rows[0].starts_with("2  b") && rows[1].starts_with("3  c"), "{text}");
        assert!(
            text.contains("(2 of 5") && text.contains("--offset 3 for more"),
            "{text}"
        );
        let doc = json_of(&delayq(
            &redis,
            &["dead-letter", "list", "jobs", "--offset", "4", "--format", "json"],
        ));
        assert_eq!(doc["values"][0]["value"], "e");
        assert_eq!(doc["values"][0]["number"], 5);
        let died = doc["values"][0]["died_at"].as_str().unwrap();
        let died = humantime::parse_rfc3339(died).unwrap();
        let ago = SystemTime::now().duration_since(died).unwrap();
        assert!(ago >= Duration::from_secs(170), "RFC 3339, 3 minutes ago: {died:?}");

        // By reason, case-insensitively.
        let doc = json_of(&delayq(
            &redis,
            &["dead-letter", "list", "jobs", "--reason", "smtp", "--format", "json"],
        ));
        let values: Vec<&str> = doc["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["value"].as_str().unwrap())
            .collect();
        assert_eq!(values, ["a", "c", "d"]);
        let text = stdout(&delayq(
            &redis,
            &["dead-letter", "list", "jobs", "--reason", "bad", "--limit", "1"],
        ));
        assert!(text.contains("2  b") && !text.contains("  e  "), "{text}");

        // Grouped: counts by reason.
        let doc = json_of(&delayq(
            &redis,
            &["dead-letter", "list", "jobs", "--group-by-reason", "--format", "json"],
        ));
        assert_eq!(doc["looked"], 5);
        let groups: Vec<(String, u64)> = doc["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| (g["reason"].as_str().unwrap().to_owned(), g["count"].as_u64().unwrap()))
            .collect();
        assert_eq!(groups[0].1 + groups[1].1 + groups[2].1, 5, "{groups:?}");
        assert!(groups.contains(&("smtp down".into(), 2)) && groups.contains(&("bad input".into(), 2)));
        let text = stdout(&delayq(&redis, &["dead-letter", "list", "jobs", "--group-by-reason"]));
        assert!(text.contains("COUNT") && text.contains("all 5 dead-lettered"), "{text}");
    }
}

redis_test! {
    async fn delete_takes_the_values_at_the_given_positions_or_all(redis, raw) {
        seed(&raw, "jobs", &ENTRIES).await;

        // Neither --index nor --all: refused.
        let out = delayq(&redis, &["dead-letter", "delete", "jobs"]);
        assert!(!out.status.success());

        let text = stdout(&delayq(
            &redis,
            &[
                "dead-letter",
                "delete",
                "jobs",
                "--index",
                "2",
                "--index",
                "4",
                "--dry-run",
            ],
        ));
        assert!(
            text.contains("would delete 2") && text.contains("#2  b") && text.contains("#4  d"),
            "{text}"
        );
        assert_eq!(
            dead(&raw, "jobs").await,
            ["a", "b", "c", "d", "e"],
            "a dry run deletes nothing"
        );

        let text = stdout(&delayq(
            &redis,
            &["dead-letter", "delete", "jobs", "--index", "2", "--index", "4"],
        ));
        assert!(text.contains("deleted 2") && text.contains("#2  b"), "{text}");
        assert_eq!(dead(&raw, "jobs").await, ["a", "c", "e"]);
        // The reasons stay with their values.
        let doc = json_of(&delayq(&redis, &["dead-letter", "list", "jobs", "--format", "json"]));
        assert_eq!(doc["values"][2]["reason"], "bad input");
        assert_eq!(doc["values"][1]["reason"], "smtp down");

        let out = delayq(&redis, &["dead-letter", "delete", "jobs", "--index", "9"]);
        assert!(!out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("no dead letter #9"),
            "{out:?}"
        );

        let doc = json_of(&delayq(
            &redis,
            &["dead-letter", "delete", "jobs", "--all", "--format", "json"],
        ));
        assert_eq!(doc["deleted"], 3);
        assert!(dead(&raw, "jobs").await.is_empty());
    }
}

redis_test! {
    async fn requeue_says_which_values_moved(redis, raw) {
        seed(&raw, "jobs", &ENTRIES).await;

        let text = stdout(&delayq(&redis, &["dead-letter", "requeue", "jobs", "--max", "2"]));
        assert!(text.contains("requeued 2") && text.contains("3 left"), "{text}");
        assert!(
            text.contains("#1  a  (smtp down)") && text.contains("#2  b  (bad input)"),
            "{text}"
        );
        assert_eq!(raw.lrange("jobs").await, ["a", "b"]);

        let doc = json_of(&delayq(
            &redis,
            &["dead-letter", "requeue", "jobs", "--index", "3", "--format", "json"],
        ));
        assert_eq!(doc["requeued"], 1);
        assert_eq!(doc["values"][0]["value"], "e");
        assert_eq!(doc["left"], 2);
        assert_eq!(raw.lrange("jobs").await, ["a", "b", "e"]);

        let doc = json_of(&delayq(
            &redis,
            &["dead-letter", "requeue", "jobs", "--all", "--format", "json"],
        ));
        let moved: Vec<&str> = doc["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["value"].as_str().unwrap())
            .collect();
        assert_eq!(moved, ["c", "d"]);
        assert_eq!(doc["left"], 0);
    }
}

redis_test! {
    /// A requeue that names no values (no --all, --max, --index or --reason)
    /// is refused before it connects: it moves nothing, as `delete` does.
    async fn requeue_without_saying_which_moves_nothing(redis, raw) {
        seed(&raw, "jobs", &ENTRIES).await;

        let out = delayq(&redis, &["dead-letter", "requeue", "jobs"]);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--all") && err.contains("--index") && err.contains("--reason"), "{err}");
        assert!(raw.lrange("jobs").await.is_empty());
        assert_eq!(dead(&raw, "jobs").await.len(), ENTRIES.len());
    }
}

redis_test! {
    /// The table's DIED gives the time with its zone, then how long ago (as
    /// `inspect` shows due times); JSON keeps `died_at` in RFC 3339.
    async fn list_shows_when_each_died_as_a_time_with_its_zone(redis, raw) {
        seed(&raw, "jobs", &ENTRIES).await;
        let in_utc = |args: &[&str]| {
            Command::new(env!("CARGO_BIN_EXE_delayq"))
                .args(args)
                .env("REDIS_URL", redis.url())
                .env("TZ", "UTC")
                .output()
                .expect("run delayq")
        };
        let doc = json_of(&in_utc(&["dead-letter", "list", "jobs", "--format", "json"]));
        let died = doc["values"][0]["died_at"].as_str().unwrap();
        assert!(died.ends_with('Z'), "{died}");
        // 2026-11-26T19:52:01.123Z as 2026-11-26 19:52:01.123 +00:00.
        let shown = format!("{} +00:00 (", died.trim_end_matches('Z').replace('T', " "));
        let text = stdout(&in_utc(&["dead-letter", "list", "jobs"]));
        let a = text
            .lines()
            .find(|l| l.starts_with("1 "))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(a.contains(&shown) && a.contains("ago)"), "{shown:?} in {a}");
    }
}

redis_test! {
    /// Without --index or --all, the error names both; --index takes a list.
    async fn delete_names_both_ways_to_choose_and_takes_a_list_of_positions(redis, raw) {
        seed(&raw, "jobs", &ENTRIES).await;

        let out = delayq(&redis, &["dead-letter", "delete", "jobs"]);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("--index") && said.contains("--all"), "{said}");
        let out = delayq(&redis, &["dead-letter", "delete", "jobs", "--index", "1", "--all"]);
        assert_eq!(out.status.code(), Some(2), "both at once: {out:?}");
        assert_eq!(dead(&raw, "jobs").await.len(), 5, "refusals delete nothing");

        let text = stdout(&delayq(&redis, &["dead-letter", "delete", "jobs", "--index", "1,3"]));
        assert!(text.contains("deleted 2"), "{text}");
        assert_eq!(dead(&raw, "jobs").await, ["b", "d", "e"]);
    }
}

redis_test! {
    /// The last page of a long list says which numbers it shows, as other pages do.
    async fn the_last_page_names_the_numbers_it_shows(redis, raw) {
        let entries: Vec<(String, u64, &str)> = (0..132).map(|i| (format!("v{i}"), 1, "x")).collect();
        let entries: Vec<(&str, u64, &str)> = entries.iter().map(|(v, a, r)| (v.as_str(), *a, *r)).collect();
        seed(&raw, "jobs", &entries).await;

        let text = stdout(&delayq(&redis, &["dead-letter", "list", "jobs", "--offset", "130"]));
        assert!(text.contains("(2 of 132") && text.contains("#131–#132"), "{text}");
        assert!(!text.contains("for more"), "nothing after the last page: {text}");
        let text = stdout(&delayq(
            &redis,
            &["dead-letter", "list", "jobs", "--offset", "10", "--limit", "5"],
        ));
        assert!(
            text.contains("#11–#15") && text.contains("--offset 15 for more"),
            "{text}"
        );
    }
}

/// `requeue --reason` and `delete --reason` act on what `list --reason`
/// shows: the first run only says how many match and does nothing; with
/// `--expect N` they act on exactly those (an equal payload that died of
/// something else stays), and refuse, doing nothing, if N no longer match.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requeue_and_delete_by_reason_say_how_many_first_and_act_only_on_the_confirmed_count() {
    deadline(async {
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        seed(
            &raw,
            "jobs",
            &[
                ("same", 50, "smtp down"),
                ("same", 40, "bad input"),
                ("c", 30, "smtp down"),
                ("d", 20, "SMTP down again"),
                ("e", 3, "bad input"),
            ],
        )
        .await;

        // First: how many, and nothing done.
        let asked = delayq(&redis, &["dead-letter", "requeue", "jobs", "--reason", "smtp"]);
        assert_eq!(asked.status.code(), Some(1), "{asked:?}");
        let said = String::from_utf8_lossy(&asked.stdout).into_owned();
        assert!(
            said.contains("3 dead-lettered value(s)") && said.contains("--expect 3"),
            "{said}"
        );
        assert_eq!(dead(&raw, "jobs").await.len(), 5);
        assert!(raw.lrange("jobs").await.is_empty());

        // A count that no longer matches: refused, nothing done.
        let stale = delayq(
            &redis,
            &["dead-letter", "requeue", "jobs", "--reason", "smtp", "--expect", "2"],
        );
        assert!(!stale.status.success(), "{stale:?}");
        assert!(
            String::from_utf8_lossy(&stale.stderr).contains("not the 2 confirmed"),
            "{stale:?}"
        );
        assert_eq!(dead(&raw, "jobs").await.len(), 5);

        // Confirmed: those three, and the equal payload that died of bad input stays.
        let done = json_of(&delayq(
            &redis,
            &[
                "dead-letter",
                "requeue",
                "jobs",
                "--reason",
                "smtp",
                "--expect",
                "3",
                "--format",
                "json",
            ],
        ));
        assert_eq!(done["requeued"], 3, "{done}");
        let requeued: Vec<String> = raw
            .lrange("jobs")
            .await
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect();
        assert_eq!(requeued, ["same", "c", "d"]);
        assert_eq!(dead(&raw, "jobs").await, ["same", "e"]);

        // Delete too: first how many, then exactly those.
        let asked = delayq(&redis, &["dead-letter", "delete", "jobs", "--reason", "bad"]);
        assert_eq!(asked.status.code(), Some(1), "{asked:?}");
        assert_eq!(dead(&raw, "jobs").await.len(), 2);
        let done = delayq(
            &redis,
            &["dead-letter", "delete", "jobs", "--reason", "bad", "--expect", "2"],
        );
        assert!(stdout(&done).contains("deleted 2"), "{done:?}");
        assert!(dead(&raw, "jobs").await.is_empty());
    })
    .await;
}

redis_test! {
    /// Reasons that differ only by an id are one row of `--group-by-reason`,
    /// and `--shape` requeues or deletes that row's dead letters: counted
    /// first, then exactly the count confirmed with `--expect`, or nothing
    /// if one more of the shape died meanwhile.
    async fn reasons_are_grouped_by_shape_and_a_shape_is_requeued_by_its_count(redis, raw) {
        let entries = [
            ("a", 9, "customer c-14 not found"),
            ("b", 8, "card declined"),
            ("c", 7, "customer c-19 not found"),
            ("d", 6, "customer c-19 not found"),
        ];
        seed(&raw, "pay", &entries).await;
        let doc = json_of(&delayq(
            &redis,
            &["dead-letter", "list", "pay", "--group-by-reason", "--format", "json"],
        ));
        assert_eq!(doc["groups"][0]["shape"], "customer c-<n> not found", "{doc}");
        assert_eq!(doc["groups"][0]["count"], 3, "{doc}");
        assert_eq!(doc["groups"][0]["reasons"], 2, "{doc}");
        assert_eq!(doc["groups"][1]["reason"], "card declined", "{doc}");
        assert_eq!(doc["groups"].as_array().unwrap().len(), 2, "{doc}");
        let text = stdout(&delayq(&redis, &["dead-letter", "list", "pay", "--group-by-reason"]));
        assert!(text.contains("customer c-<n> not found"), "{text}");
        assert!(!text.contains("customer c-14 not found  "), "one row for the shape: {text}");
        assert!(text.contains("--shape"), "says how to act on a row: {text}");

        // Listing the shape shows its members.
        let text = stdout(&delayq(
            &redis,
            &["dead-letter", "list", "pay", "--shape", "customer c-<n> not found"],
        ));
        assert!(text.contains("c-14") && text.contains("c-19") && !text.contains("card declined"), "{text}");

        let shape = ["dead-letter", "requeue", "pay", "--shape", "customer c-<n> not found"];
        let out = delayq(&redis, &shape);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("--expect 3"), "{out:?}");
        // One more of the shape dies before the confirmed run.
        seed(&raw, "pay", &[("e", 1, "customer c-77 not found")]).await;
        let out = delayq(&redis, &[&shape[..], &["--expect", "3"]].concat());
        assert!(!out.status.success(), "{out:?}");
        assert_eq!(dead(&raw, "pay").await, ["a", "b", "c", "d", "e"], "nothing moved");
        let text = stdout(&delayq(&redis, &[&shape[..], &["--expect", "4"]].concat()));
        assert!(text.contains("requeued 4"), "{text}");
        assert_eq!(dead(&raw, "pay").await, ["b"]);
        let ready: Vec<String> = raw.client.lrange("pay", 0, -1).await.unwrap();
        assert_eq!(ready, ["a", "c", "d", "e"]);
    }
}
