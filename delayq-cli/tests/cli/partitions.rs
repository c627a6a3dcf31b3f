//! `delayq partition create|show` and `delayq offer` to a partitioned queue
//! (issue 47, item 2) on one server: the layout is made once and its count
//! refused when changed, `show` prints each partition's name, slot and
//! counts (table and JSON), offers go round robin or to a key's partition,
//! and commands that act on one queue point at the partitions.

use crate::run::{delayq, text};
use delayq::StringCodec;
use delayq_test_support::redis_test;

redis_test! {
    async fn partition_create_show_and_offers_by_key_or_round_robin(redis, client) {
        let created = delayq(&redis, &["partition", "create", "cp-orders", "3"]).await;
        assert!(created.status.success(), "{}", text(&created.stderr));
        assert!(text(&created.stdout).contains("3 partitions"), "{}", text(&created.stdout));
        let again = delayq(&redis, &["partition", "create", "cp-orders", "3"]).await;
        assert!(again.status.success());
        let other = delayq(&redis, &["partition", "create", "cp-orders", "4"]).await;
        assert_eq!(other.status.code(), Some(1));
        assert!(text(&other.stderr).contains("has 3 partitions, not 4"), "{}", text(&other.stderr));
        let braces = delayq(&redis, &["partition", "create", "{t}x", "3"]).await;
        assert!(!braces.status.success());

        let rr = delayq(&redis, &["offer", "cp-orders", "--delay", "1h", "a", "b", "c", "d", "e", "f"]).await;
        assert!(rr.status.success(), "{}", text(&rr.stderr));
        assert!(text(&rr.stderr).contains("round robin over 3 partitions"), "{}", text(&rr.stderr));
        let keyed = delayq(&redis, &["offer", "cp-orders", "--delay", "1h", "--partition-key", "cust-7", "k1", "k2"]).await;
        assert!(keyed.status.success(), "{}", text(&keyed.stderr));
        let queue = client.partitioned_queue("cp-orders", StringCodec).await.unwrap().without_transfer();
        let partition = queue.partition_for_key("cust-7");
        assert!(text(&keyed.stderr).contains(&format!("partition {partition} of 3")), "{}", text(&keyed.stderr));
        let pending = queue.partition(partition).unwrap().read_all().await.unwrap();
        assert!(pending.ends_with(&["k1".to_owned(), "k2".to_owned()]), "{pending:?}");

        let shown = delayq(&redis, &["partition", "show", "cp-orders", "--format", "json"]).await;
        assert!(shown.status.success(), "{}", text(&shown.stderr));
        let json: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
        assert_eq!(json["count"], 3);
        assert_eq!(json["pending"], 8);
        let names: Vec<&str> = json["partitions"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(names, queue.names());
        assert!(json["partitions"].as_array().unwrap().iter().all(|p| p["node"].is_null()), "no Cluster here");
        let table = delayq(&redis, &["partition", "show", "cp-orders"]).await;
        assert!(text(&table.stdout).contains(&queue.names()[2]), "{}", text(&table.stdout));

        // `list` keeps a row per partition, marks each, and sums the queue.
        let list = delayq(&redis, &["list"]).await;
        assert!(
            text(&list.stdout).contains("partitioned queue cp-orders: 3 partitions (3 listed above), ready 0, pending 8"),
            "{}",
            text(&list.stdout)
        );
        let list = delayq(&redis, &["list", "--format", "json"]).await;
        let json: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
        let marked = (json["queues"].as_array().unwrap().iter())
            .filter(|q| q["partition_of"]["queue"] == "cp-orders")
            .count();
        assert_eq!(marked, 3);
        let none = delayq(&redis, &["partition", "show", "cp-none"]).await;
        assert_eq!(none.status.code(), Some(1));
        let plain_key = delayq(&redis, &["offer", "cp-plain", "--delay", "0", "--partition-key", "k", "v"]).await;
        assert!(!plain_key.status.success());
        assert!(text(&plain_key.stderr).contains("needs a partitioned queue"), "{}", text(&plain_key.stderr));
        let by_id = delayq(&redis, &["offer", "cp-orders", "--delay", "0", "--id", "x", "v"]).await;
        assert!(!by_id.status.success());
        let inspect = delayq(&redis, &["inspect", "cp-orders"]).await;
        assert_eq!(inspect.status.code(), Some(1));
        assert!(text(&inspect.stderr).contains("is a partitioned queue of 3 partitions"), "{}", text(&inspect.stderr));
        // A partition is a queue of its own for every command.
        let partition_inspect = delayq(&redis, &["inspect", &queue.names()[partition]]).await;
        assert!(partition_inspect.status.success(), "{}", text(&partition_inspect.stderr));
    }
}

redis_test! {
    /// `delayq take Q` on a partitioned queue takes from its partitions as
    /// one queue: values offered round robin and by key all come, a key's
    /// in offer order.
    async fn take_on_a_partitioned_queue_takes_from_every_partition(redis) {
        let created = delayq(&redis, &["partition", "create", "cp-take", "3"]).await;
        assert!(created.status.success(), "{}", text(&created.stderr));
        let rr = delayq(&redis, &["offer", "cp-take", "--delay", "0", "a", "b", "c"]).await;
        assert!(rr.status.success(), "{}", text(&rr.stderr));
        let keyed = delayq(&redis, &["offer", "cp-take", "--delay", "0", "--partition-key", "cust-7", "k1", "k2"]).await;
        assert!(keyed.status.success(), "{}", text(&keyed.stderr));
        let taken = delayq(&redis, &["take", "cp-take", "--count", "5", "--timeout", "20s"]).await;
        assert!(taken.status.success(), "{}", text(&taken.stderr));
        let lines: Vec<String> = text(&taken.stdout).lines().map(str::to_owned).collect();
        let mut sorted = lines.clone();
        sorted.sort();
        assert_eq!(sorted, ["a", "b", "c", "k1", "k2"], "{lines:?}");
        let (k1, k2) = (lines.iter().position(|l| l == "k1"), lines.iter().position(|l| l == "k2"));
        assert!(k1 < k2, "a key's values in offer order: {lines:?}");
        let empty = delayq(&redis, &["take", "cp-take", "--timeout", "200ms"]).await;
        assert_eq!(empty.status.code(), Some(1), "{}", text(&empty.stderr));
    }
}

redis_test! {
    /// A partitioned queue just created holds no keys but its layout: `list`
    /// showed nothing of it (and said the database held no queues). It now
    /// shows its line, with no partition listed; a filter that does not
    /// match its name leaves it out.
    async fn list_shows_a_new_partitioned_queue_before_it_has_values(redis) {
        let created = delayq(&redis, &["partition", "create", "cp-new", "4"]).await;
        assert!(created.status.success(), "{}", text(&created.stderr));
        let list = delayq(&redis, &["list"]).await;
        assert!(list.status.success(), "{}", text(&list.stderr));
        assert!(
            text(&list.stdout).contains("partitioned queue cp-new: 4 partitions (0 listed above), ready 0, pending 0"),
            "{}\n{}",
            text(&list.stdout),
            text(&list.stderr)
        );
        assert!(!text(&list.stderr).contains("holds no delayq queues"), "{}", text(&list.stderr));
        let json = delayq(&redis, &["list", "--format", "json"]).await;
        let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        assert_eq!(json["partitioned"][0]["queue"], "cp-new");
        assert_eq!(json["partitioned"][0]["count"], 4);
        let other = delayq(&redis, &["list", "--filter", "zzz"]).await;
        assert!(other.status.success(), "{}", text(&other.stderr));
        assert!(!text(&other.stdout).contains("cp-new"), "{}", text(&other.stdout));
    }
}

redis_test! {
    /// `stats Q` on a partitioned queue is one row, its partitions' counts
    /// added up (it was refused); beside a plain queue and, as for any
    /// name, a misspelt one is still refused.
    async fn stats_of_a_partitioned_queue_is_one_row_summed(redis, client) {
        let queue = client.create_partitioned_queue("cp-stats", 3, StringCodec).await.unwrap().without_transfer();
        for i in 0..7 {
            queue.offer(&format!("v{i}"), std::time::Duration::from_secs(3600)).await.unwrap();
        }
        client.delayed_queue("cp-plain", StringCodec).unwrap().without_transfer()
            .offer(&"p".to_owned(), std::time::Duration::from_secs(3600)).await.unwrap();
        let stats = delayq(&redis, &["stats", "cp-stats", "cp-plain", "--format", "json"]).await;
        assert!(stats.status.success(), "{}", text(&stats.stderr));
        let json: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
        assert_eq!(json["queues"][0]["queue"], "cp-stats", "{json}");
        assert_eq!(json["queues"][0]["pending"], 7, "{json}");
        assert_eq!(json["queues"][1]["queue"], "cp-plain", "{json}");
        assert_eq!(json["queues"][1]["pending"], 1, "{json}");
        let table = delayq(&redis, &["stats", "cp-stats"]).await;
        assert!(table.status.success(), "{}", text(&table.stderr));
        let row = text(&table.stdout).lines().find(|l| l.starts_with("cp-stats")).unwrap_or_default().to_owned();
        assert!(row.split_whitespace().nth(1) == Some("7"), "{}", text(&table.stdout));
        let typo = delayq(&redis, &["stats", "cp-stats", "cp-plian"]).await;
        assert_eq!(typo.status.code(), Some(1));
        assert!(text(&typo.stderr).contains("cp-plain"), "{}", text(&typo.stderr));
    }
}

redis_test! {
    /// `partition repartition` makes a new generation and shows the old
    /// partitions as retired with what they hold; `partition retire` keeps
    /// them while they hold values (exit status 2) and drops them once
    /// drained; `take` drains them; `stats` counts them.
    async fn repartition_then_retire_once_drained(redis, client) {
        let queue = client.create_partitioned_queue("cp-rp", 2, StringCodec).await.unwrap();
        queue.offer_all((0..6).map(|i| (format!("old-{i}"), std::time::Duration::ZERO))).await.unwrap();
        let old = queue.names();
        let changed = delayq(&redis, &["partition", "repartition", "cp-rp", "3"]).await;
        assert!(changed.status.success(), "{}", text(&changed.stderr));
        let out = text(&changed.stdout);
        assert!(out.contains("3 partitions (generation 2)"), "{out}");
        assert!(out.contains("retired partitions"), "{out}");
        assert!(out.contains(&old[0]) && out.contains(&old[1]), "{out}");
        let json = delayq(&redis, &["partition", "show", "cp-rp", "--format", "json"]).await;
        let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        assert_eq!(json["generation"], 2);
        assert_eq!(json["retired"].as_array().unwrap().len(), 2);
        let held: u64 = (json["retired"].as_array().unwrap().iter())
            .map(|p| p["ready"].as_u64().unwrap() + p["pending"].as_u64().unwrap())
            .sum();
        assert_eq!(held, 6, "{json}");
        let offered = delayq(&redis, &["offer", "cp-rp", "--delay", "0s", "new-1", "new-2"]).await;
        assert!(offered.status.success(), "{}", text(&offered.stderr));
        let stats = delayq(&redis, &["stats", "cp-rp", "--format", "json"]).await;
        let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
        let total = stats["queues"][0]["ready"].as_u64().unwrap() + stats["queues"][0]["pending"].as_u64().unwrap();
        assert_eq!(total, 8, "{stats}");

        let kept = delayq(&redis, &["partition", "retire", "cp-rp"]).await;
        assert_eq!(kept.status.code(), Some(3), "{}", text(&kept.stderr));
        assert!(text(&kept.stdout).contains("kept"), "{}", text(&kept.stdout));

        let taken = delayq(&redis, &["take", "cp-rp", "-n", "8", "--timeout", "10s"]).await;
        assert!(taken.status.success(), "{}", text(&taken.stderr));
        let out = text(&taken.stdout);
        for v in ["old-0", "old-5", "new-1", "new-2"] {
            assert!(out.contains(v), "{v} not taken: {out}");
        }
        let retired = delayq(&redis, &["partition", "retire", "cp-rp", "--format", "json"]).await;
        assert!(retired.status.success(), "{}", text(&retired.stderr));
        let json: serde_json::Value = serde_json::from_slice(&retired.stdout).unwrap();
        assert_eq!(json["retired"].as_array().unwrap().len(), 2, "{json}");
        let layout = client.partition_layout("cp-rp").await.unwrap().unwrap();
        assert!(layout.retired().is_empty());
        assert_eq!(layout.count(), 3);
    }
}

redis_test! {
    /// `delayq partition show Q | head -1`: the reader goes away before the
    /// rows are written. The command ends quietly (141, as a shell reports
    /// SIGPIPE), not with a panic about a broken pipe under the output.
    async fn a_reader_that_goes_away_ends_the_output_quietly(redis, client) {
        client.create_partitioned_queue("cp-pipe", 64, StringCodec).await.unwrap();
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_delayq"))
            .args(["partition", "show", "cp-pipe"])
            .env("REDIS_URL", redis.url())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run delayq");
        // The read end closed before anything is read.
        drop(child.stdout.take());
        let out = child.wait_with_output().await.unwrap();
        let stderr = text(&out.stderr);
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert_eq!(out.status.code(), Some(141), "{stderr}");
    }
}
