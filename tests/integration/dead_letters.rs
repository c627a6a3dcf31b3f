//! Why each dead letter is one: recorded as it is dead-lettered, read beside
//! it, and kept aligned as dead letters are requeued and deleted.

use std::time::{Duration, SystemTime};

use delayq::fred::prelude::*;
use delayq::worker::{Permanent, RetryPolicy};
use delayq::StringCodec;

use delayq_test_support::{eventually, redis_test};

fn s(v: &str) -> String {
    v.to_owned()
}

redis_test! {
    async fn every_way_into_the_dead_letter_list_records_why(client, raw) {
        let ready = client.blocking_queue("jobs", StringCodec).unwrap();
        // A value dead-lettered before reasons were recorded (or by another writer).
        let _: i64 = raw.client.rpush("delayq_dead_letter:{jobs}", "old").await.unwrap();

        // Too many deliveries without an ack.
        let jobs = client
            .reliable_queue("jobs", StringCodec)
            .unwrap()
            .with_max_deliveries(1);
        ready.offer(&s("flaky")).await.unwrap();
        let first = jobs.take().await.unwrap();
        first.nack(Duration::ZERO).await.unwrap();
        assert!(jobs.take_timeout(Duration::from_secs(2)).await.unwrap().is_none());

        // The consumer says so.
        ready.offer(&s("hopeless")).await.unwrap();
        jobs.take().await.unwrap().dead_letter().await.unwrap();

        // A worker: a permanent failure, and attempts running out.
        let worker = client
            .worker("jobs", StringCodec)
            .unwrap()
            .retry(RetryPolicy::fixed(Duration::from_millis(50)).max_attempts(2))
            .run(|value: String| async move {
                if value == "permanent" {
                    Err(delayq::error::BoxError::from(Permanent::new(std::io::Error::other(
                        "no such account",
                    ))))
                } else {
                    Err(delayq::error::BoxError::from(std::io::Error::other("smtp down")))
                }
            });
        ready.offer_all([s("permanent"), s("retried")]).await.unwrap();
        eventually(Duration::from_secs(20), "five dead letters", || async {
            jobs.dead_letter_len().await.unwrap() == 5
        })
        .await;
        worker.shutdown().await;

        let page = jobs.dead_letter_page(0, 10).await.unwrap();
        let seen: Vec<(String, Option<String>)> = page
            .iter()
            .map(|d| (d.value.as_ref().unwrap().clone(), d.reason.clone()))
            .collect();
        assert_eq!(seen[0], (s("old"), None), "{seen:?}");
        let reason = |value: &str| {
            seen.iter()
                .find(|(v, _)| v == value)
                .and_then(|(_, r)| r.clone())
                .unwrap_or_else(|| panic!("{value}: {seen:?}"))
        };
        assert!(reason("flaky").contains("delivered 1 times"), "{seen:?}");
        assert_eq!(reason("hopeless"), "dead_letter() by the consumer");
        assert!(
            reason("permanent").contains("permanent") && reason("permanent").contains("no such account"),
            "{seen:?}"
        );
        assert!(
            reason("retried").contains("failed 2 attempt(s)") && reason("retried").contains("smtp down"),
            "{seen:?}"
        );
        let at = page[1].at.expect("a time");
        assert!(SystemTime::now().duration_since(at).unwrap() < Duration::from_secs(120));

        // Requeueing and deleting from the head keeps the rest aligned.
        assert_eq!(jobs.requeue_dead_letters(2).await.unwrap(), 2);
        let page = jobs.dead_letter_page(0, 10).await.unwrap();
        assert_eq!(page.len(), 3);
        for dead in &page {
            let value = dead.value.as_ref().unwrap();
            assert_eq!(dead.reason.as_deref(), Some(reason(value).as_str()), "{value}");
        }
        assert_eq!(jobs.remove_dead_letters(10).await.unwrap(), 3);
        assert_eq!(
            raw.client.exists::<i64, _>("delayq_dead_reasons:{jobs}").await.unwrap(),
            0
        );
    }
}

redis_test! {
    /// Dead letters of 64 KB: a requeue moves about 1 MiB of them per call (its
    /// script stays short; calling again moves the rest, in order), and a
    /// removal copies none of them into its script.
    async fn large_dead_letters_move_about_a_mebibyte_a_call_and_all_in_order(raw, client) {
        let jobs = client.reliable_queue("big-dead", StringCodec).unwrap();
        let value = |i: usize| format!("{i:04}{}", "x".repeat(64 * 1024));
        let values: Vec<String> = (0..100).map(value).collect();
        let _: i64 = raw
            .client
            .rpush("delayq_dead_letter:{big-dead}", values.clone())
            .await
            .unwrap();
        let first = jobs.requeue_dead_letters(10_000).await.unwrap();
        assert!((1..100).contains(&first), "{first} values of 64 KB in one call");
        let mut moved = first;
        while moved < 100 {
            let n = jobs.requeue_dead_letters(10_000).await.unwrap();
            assert!(n > 0);
            moved += n;
        }
        assert_eq!(moved, 100);
        let back: Vec<String> = raw.client.lrange("big-dead", 0, -1).await.unwrap();
        assert_eq!(back, values, "all back, in order");
        assert_eq!(jobs.dead_letter_len().await.unwrap(), 0);

        let _: i64 = raw.client.rpush("delayq_dead_letter:{big-dead}", values).await.unwrap();
        assert_eq!(jobs.remove_dead_letters(60).await.unwrap(), 60);
        assert_eq!(jobs.remove_dead_letters(10_000).await.unwrap(), 40);
        assert_eq!(jobs.dead_letter_len().await.unwrap(), 0);
        assert_eq!(jobs.remove_dead_letters(10).await.unwrap(), 0);
    }
}

redis_test! {
    /// A page of large dead letters is read about 1 MiB a script run (each
    /// run hashes what it returns: 100 values of 64 KB in one run would hold
    /// Redis for the whole 6.4 MB), and the method reads on until the page is
    /// full: every value, in order, with its reason.
    async fn a_page_of_large_dead_letters_is_read_a_mebibyte_a_run_and_comes_back_whole(raw, client) {
        let jobs = client.reliable_queue("big-page", StringCodec).unwrap();
        let values: Vec<String> = (0..100).map(|i| format!("{i:04}{}", "x".repeat(64 * 1024))).collect();
        let records: Vec<(&str, i64, &str)> = values.iter().map(|v| (v.as_str(), 1_700_000_000_000, "boom")).collect();
        seed_dead(&raw, "big-page", &[], &records).await;
        let runs = || async {
            let stats = match raw.cmd("INFO", vec!["commandstats".into()]).await {
                Value::String(s) => s.to_string(),
                other => panic!("{other:?}"),
            };
            stats
                .lines()
                .filter(|l| l.starts_with("cmdstat_evalsha:") || l.starts_with("cmdstat_eval:"))
                .map(|l| {
                    let calls = l.split("calls=").nth(1).unwrap().split(',').next().unwrap();
                    calls.parse::<u64>().unwrap()
                })
                .sum::<u64>()
        };

        let before = runs().await;
        let page = jobs.dead_letter_page(0, 100).await.unwrap();
        let scripts = runs().await - before;
        let got: Vec<&str> = page.iter().map(|d| d.value.as_ref().unwrap().as_str()).collect();
        assert_eq!(got, values.iter().map(String::as_str).collect::<Vec<_>>(), "every value, in order");
        assert!(page.iter().all(|d| d.reason.as_deref() == Some("boom")));
        assert_eq!(
            page.iter().map(|d| d.key.index()).collect::<Vec<_>>(),
            (0..100).collect::<Vec<_>>()
        );
        assert!((6..=10).contains(&scripts), "6.4 MB in runs of about 1 MiB: {scripts} runs");

        // A page from the middle, and one running past the end.
        let middle = jobs.dead_letter_page(95, 10).await.unwrap();
        assert_eq!(middle.len(), 5);
        assert_eq!(middle[0].value.as_ref().unwrap(), &values[95]);
    }
}

/// Seeds `queue`'s dead letters as delayq records them: each value with a
/// reason record `<ms> <reason>` aligned with the list's tail; values given
/// no reason go first, as if dead-lettered before reasons were recorded.
async fn seed_dead(raw: &delayq_test_support::RawRedis, queue: &str, older: &[&str], recorded: &[(&str, i64, &str)]) {
    let dead = format!("delayq_dead_letter:{{{queue}}}");
    let reasons = format!("delayq_dead_reasons:{{{queue}}}");
    for value in older {
        let _: i64 = raw.client.rpush(&dead, *value).await.unwrap();
    }
    for (value, ms, why) in recorded {
        let _: i64 = raw.client.rpush(&dead, *value).await.unwrap();
        let _: i64 = raw.client.rpush(&reasons, format!("{ms} {why}")).await.unwrap();
    }
}

/// What the dead-letter list holds, each value with its reason.
async fn dead_pairs(jobs: &delayq::ReliableQueue<String>) -> Vec<(String, Option<String>)> {
    jobs.dead_letter_page(0, 1_000)
        .await
        .unwrap()
        .into_iter()
        .map(|d| (d.value.unwrap(), d.reason))
        .collect()
}

fn pairs(list: &[(&str, Option<&str>)]) -> Vec<(String, Option<String>)> {
    list.iter().map(|(v, r)| (s(v), r.map(s))).collect()
}

redis_test! {
    /// A value named by its key is found again after values left the head
    /// (another operator's requeue), deleted alone, and the reasons stay
    /// aligned with the values left.
    async fn exact_delete_finds_its_value_after_the_head_moved_and_keeps_reasons_aligned(raw, client) {
        let jobs = client.reliable_queue("exact", StringCodec).unwrap();
        seed_dead(
            &raw,
            "exact",
            &["old"],
            &[
                ("a", 1_000, "ra"),
                ("b", 2_000, "rb"),
                ("c", 3_000, "rc"),
                ("d", 4_000, "rd"),
            ],
        )
        .await;
        let page = jobs.dead_letter_page(0, 10).await.unwrap();
        assert_eq!(page[3].value.as_ref().unwrap(), "c");
        assert_eq!(page[3].at, Some(SystemTime::UNIX_EPOCH + Duration::from_secs(3)));
        let c = page[3].key.clone();
        assert_eq!(c.index(), 3);
        assert_eq!(c.to_string().parse::<delayq::dead_letter::DeadLetterKey>().unwrap(), c);

        // Two leave the head: "c" is now at index 1.
        assert_eq!(jobs.requeue_dead_letters(2).await.unwrap(), 2);
        assert_eq!(
            jobs.delete_dead_letters_exact(std::slice::from_ref(&c)).await.unwrap(),
            vec![1]
        );
        assert_eq!(dead_pairs(&jobs).await, pairs(&[("b", Some("rb")), ("d", Some("rd"))]));

        // Gone now: refused, and nothing else is touched.
        match jobs.delete_dead_letters_exact(&[c]).await {
            Err(delayq::Error::DeadLetterChanged { indices, .. }) => assert_eq!(indices, vec![3]),
            other => panic!("{other:?}"),
        }
        assert_eq!(dead_pairs(&jobs).await, pairs(&[("b", Some("rb")), ("d", Some("rd"))]));
        assert!(matches!(
            "nonsense".parse::<delayq::dead_letter::DeadLetterKey>(),
            Err(delayq::Error::InvalidArgument(_))
        ));
    }
}

redis_test! {
    /// Equal payloads dead-lettered at different times: each key acts on
    /// exactly the one it was read as (its reason and time), and of equal values
    /// with no reason at all, two keys take two and one key takes one.
    async fn of_equal_dead_letters_each_key_acts_on_exactly_one(raw, client) {
        let jobs = client.reliable_queue("twins", StringCodec).unwrap();
        seed_dead(
            &raw,
            "twins",
            &["same", "same", "same"],
            &[("same", 1_000, "first"), ("x", 2_000, "rx"), ("same", 3_000, "second")],
        )
        .await;
        let page = jobs.dead_letter_page(0, 10).await.unwrap();
        // The one that died second, requeued: the other keeps its reason.
        let moved = jobs.requeue_dead_letters_exact(&[page[5].key.clone()]).await.unwrap();
        assert_eq!(moved, vec![5]);
        assert_eq!(raw.lrange("twins").await, delayq_test_support::bytes(&["same"]));
        assert_eq!(
            dead_pairs(&jobs).await,
            pairs(&[
                ("same", None),
                ("same", None),
                ("same", None),
                ("same", Some("first")),
                ("x", Some("rx"))
            ])
        );
        // Two of the three without a reason: two go, one stays.
        let found = jobs
            .delete_dead_letters_exact(&[page[0].key.clone(), page[2].key.clone()])
            .await
            .unwrap();
        assert_eq!(found, vec![0, 2]);
        assert_eq!(
            dead_pairs(&jobs).await,
            pairs(&[("same", None), ("same", Some("first")), ("x", Some("rx"))])
        );
        // All or none: one key of a value that is gone refuses the whole call.
        let stale = page[5].key.clone();
        assert!(matches!(
            jobs.delete_dead_letters_exact(&[page[4].key.clone(), stale]).await,
            Err(delayq::Error::DeadLetterChanged { .. })
        ));
        assert_eq!(jobs.dead_letter_len().await.unwrap(), 3);

        // After the head moved, the twin that died later sits where the key's
        // value was read: the key still takes the one it was read as.
        let later = client.reliable_queue("twins-later", StringCodec).unwrap();
        seed_dead(
            &raw,
            "twins-later",
            &[],
            &[("a", 1_000, "ra"), ("same", 2_000, "r1"), ("same", 3_000, "r2")],
        )
        .await;
        let key = later.dead_letter_page(1, 1).await.unwrap().remove(0).key;
        assert_eq!(later.remove_dead_letters(1).await.unwrap(), 1);
        assert_eq!(later.delete_dead_letters_exact(&[key]).await.unwrap(), vec![0]);
        assert_eq!(dead_pairs(&later).await, pairs(&[("same", Some("r2"))]));
    }
}

redis_test! {
    /// While another client removes dead letters from the head one by one,
    /// exact deletes of values further down each remove their own value.
    async fn exact_deletes_hold_while_the_head_is_removed_concurrently(redis, raw, client) {
        let jobs = client.reliable_queue("busy", StringCodec).unwrap();
        let names: Vec<String> = (0..200).map(|i| format!("v{i:03}")).collect();
        let recorded: Vec<(&str, i64, &str)> = names.iter().map(|n| (n.as_str(), 5_000, "why")).collect();
        seed_dead(&raw, "busy", &[], &recorded).await;
        let page = jobs.dead_letter_page(100, 100).await.unwrap();
        let other = redis.client().await;
        let remover = tokio::spawn(async move {
            let head = other.reliable_queue("busy", StringCodec).unwrap();
            for _ in 0..50 {
                assert_eq!(head.remove_dead_letters(1).await.unwrap(), 1);
            }
        });
        for dead in page.iter().filter(|d| d.key.index() % 2 == 1) {
            jobs.delete_dead_letters_exact(std::slice::from_ref(&dead.key))
                .await
                .unwrap();
        }
        remover.await.unwrap();
        let left = dead_pairs(&jobs).await;
        let expected: Vec<(String, Option<String>)> = (50..200)
            .filter(|i| *i < 100 || i % 2 == 0)
            .map(|i| (format!("v{i:03}"), Some(s("why"))))
            .collect();
        assert_eq!(left, expected);
    }
}

redis_test! {
    /// Counting by reason reads the recent reasons only, says how far it looked,
    /// and counts values with no reason recorded.
    async fn dead_letters_are_counted_by_reason_over_the_most_recent(raw, client) {
        let jobs = client.reliable_queue("grouped", StringCodec).unwrap();
        seed_dead(
            &raw,
            "grouped",
            &["o1", "o2"],
            &[
                ("a", 1_000, "smtp down"),
                ("b", 2_000, "bad input"),
                ("c", 3_000, "smtp down"),
            ],
        )
        .await;
        let all = jobs.dead_letter_reasons(100).await.unwrap();
        assert_eq!((all.total, all.looked), (5, 5));
        let seen: Vec<(Option<String>, usize)> = all.groups.iter().map(|g| (g.reason.clone(), g.count)).collect();
        assert_eq!(
            seen,
            vec![(Some(s("smtp down")), 2), (None, 2), (Some(s("bad input")), 1)]
        );
        assert_eq!(
            all.groups[0].last_at,
            Some(SystemTime::UNIX_EPOCH + Duration::from_secs(3))
        );
        let recent = jobs.dead_letter_reasons(2).await.unwrap();
        assert_eq!((recent.total, recent.looked), (5, 2));
        let seen: Vec<(Option<String>, usize)> = recent.groups.iter().map(|g| (g.reason.clone(), g.count)).collect();
        assert_eq!(seen, vec![(Some(s("bad input")), 1), (Some(s("smtp down")), 1)]);
    }
}

redis_test! {
    /// A single dead letter is removed by an LREM walking from the nearer end of
    /// the list: near either end of a long list it goes, and deep in the middle
    /// it is refused (each call stays bounded) with nothing changed.
    async fn single_dead_letters_are_removed_near_either_end_and_refused_deep_in_a_long_list(raw, client) {
        let jobs = client.reliable_queue("long-dead", StringCodec).unwrap();
        let n = 200_010;
        for chunk in (0..n).collect::<Vec<usize>>().chunks(10_000) {
            let values: Vec<String> = chunk.iter().map(|i| format!("v{i}")).collect();
            let _: i64 = raw
                .client
                .rpush("delayq_dead_letter:{long-dead}", values)
                .await
                .unwrap();
        }
        let key_at = |i: usize| {
            let jobs = &jobs;
            async move { jobs.dead_letter_page(i, 1).await.unwrap().remove(0).key }
        };
        let (middle, near_tail, near_head) = (key_at(n / 2).await, key_at(n - 3).await, key_at(2).await);
        match jobs.delete_dead_letters_exact(&[middle]).await {
            Err(delayq::Error::InvalidArgument(why)) => assert!(why.contains("from both ends"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(jobs.dead_letter_len().await.unwrap(), n);
        let found = jobs.delete_dead_letters_exact(&[near_tail, near_head]).await.unwrap();
        assert_eq!(found, vec![n - 3, 2]);
        let head: Vec<String> = raw.client.lrange("delayq_dead_letter:{long-dead}", 0, 3).await.unwrap();
        assert_eq!(head, ["v0", "v1", "v3", "v4"]);
        let tail: Vec<String> = raw
            .client
            .lrange("delayq_dead_letter:{long-dead}", -3, -1)
            .await
            .unwrap();
        let last = |i: usize| format!("v{i}");
        assert_eq!(tail, [last(n - 4), last(n - 2), last(n - 1)]);
    }
}

redis_test! {
    /// Large dead letters: a call naming more than 1 MiB of values is refused
    /// before it runs, and one whose search (the head moved) would read more
    /// than the script's 2 MiB answers "read them again" and changes nothing;
    /// read again, the same values go. Each index is read and hashed once per
    /// call however many names look through it (it used to be once per name:
    /// seconds of Redis time for 100 names of 64 KB).
    async fn exact_actions_on_large_dead_letters_stay_within_their_byte_budget(raw, client) {
        let jobs = client.reliable_queue("big-dead", StringCodec).unwrap();
        // 300 values of 20 KB, equal lengths, distinct reasons.
        let values: Vec<String> = (0..300).map(|i| format!("{i:05}{}", "x".repeat(20_000 - 5))).collect();
        let records: Vec<(&str, i64, &str)> = values.iter().map(|v| (v.as_str(), 1_700_000_000_000, "boom")).collect();
        seed_dead(&raw, "big-dead", &[], &records).await;
        let page = jobs.dead_letter_page(100, 100).await.unwrap();
        let keys: Vec<delayq::dead_letter::DeadLetterKey> = page.iter().map(|d| d.key.clone()).collect();

        // 100 × 20 KB = 2 MB named: refused before the script runs.
        match jobs.requeue_dead_letters_exact(&keys).await {
            Err(delayq::Error::InvalidArgument(why)) => assert!(why.contains("name fewer"), "{why}"),
            other => panic!("{other:?}"),
        }
        // 40 named (800 KB), then 60 values leave the head: finding them
        // means reading 40 + 60 more (2 MB): over the budget, nothing moves.
        let forty = &keys[..40];
        let _: Vec<String> = raw
            .client
            .lpop("delayq_dead_letter:{big-dead}", Some(60))
            .await
            .unwrap();
        let _: Vec<String> = raw
            .client
            .lpop("delayq_dead_reasons:{big-dead}", Some(60))
            .await
            .unwrap();
        match jobs.delete_dead_letters_exact(forty).await {
            Err(delayq::Error::InvalidArgument(why)) => assert!(why.contains("read them again"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(jobs.dead_letter_len().await.unwrap(), 240, "nothing deleted");
        // Read again: the same 40 values, now at 40..80, go.
        let again: Vec<delayq::dead_letter::DeadLetterKey> = jobs
            .dead_letter_page(40, 40)
            .await
            .unwrap()
            .iter()
            .map(|d| d.key.clone())
            .collect();
        assert_eq!(
            jobs.delete_dead_letters_exact(&again).await.unwrap(),
            (40..80).collect::<Vec<_>>()
        );
        let left: Vec<String> = raw.client.lrange("delayq_dead_letter:{big-dead}", 0, -1).await.unwrap();
        assert_eq!(left.len(), 200);
        assert!(left
            .iter()
            .all(|v| !(100..140).contains(&v[..5].parse::<usize>().unwrap())));
        let reasons: i64 = raw.client.llen("delayq_dead_reasons:{big-dead}").await.unwrap();
        assert_eq!(reasons, 200, "reasons stay aligned");
    }
}

redis_test! {
    /// Reasons that differ only by an id count as one shape, and a bulk
    /// requeue by shape moves exactly the confirmed count of them; one more
    /// of the shape dead-lettered between the count and the press stops it
    /// (nothing moves) until the operator confirms the new count.
    async fn dead_letters_of_one_reason_shape_are_counted_and_requeued_together(raw, client) {
        let jobs = client.reliable_queue("shaped", StringCodec).unwrap().without_transfer();
        seed_dead(
            &raw,
            "shaped",
            &[],
            &[
                ("a", 1_000, "customer c-14 not found"),
                ("b", 2_000, "card declined"),
                ("c", 3_000, "customer c-19 not found"),
                ("d", 4_000, "customer c-19 not found"),
            ],
        )
        .await;
        let shapes = jobs.dead_letter_reasons(100).await.unwrap().by_shape();
        let seen: Vec<(Option<&str>, usize, usize)> =
            shapes.iter().map(|g| (g.shape.as_deref(), g.count, g.reasons)).collect();
        assert_eq!(
            seen,
            vec![(Some("customer c-<n> not found"), 3, 2), (Some("card declined"), 1, 1)]
        );
        assert_eq!(shapes[0].example.as_deref(), Some("customer c-19 not found"));
        assert_eq!(shapes[0].last_at, Some(SystemTime::UNIX_EPOCH + Duration::from_secs(4)));

        let shape = shapes[0].shape.clone().unwrap();
        let like = |r: Option<&str>| r.is_some_and(|r| delayq::dead_letter::reason_shape(r) == shape);
        // One more of the shape dies after the operator saw 3.
        seed_dead(&raw, "shaped", &[], &[("e", 5_000, "customer c-77 not found")]).await;
        match jobs.requeue_dead_letters_confirmed(100, 3, like).await {
            Err(delayq::Error::DeadLetterCountChanged { confirmed: 3, matching: 4, .. }) => {}
            other => panic!("expected a refusal naming 4 matching: {other:?}"),
        }
        assert_eq!(jobs.dead_letter_len().await.unwrap(), 5, "nothing moved");
        let outcome = jobs.requeue_dead_letters_confirmed(100, 4, like).await.unwrap();
        assert_eq!((outcome.done, outcome.changed), (4, 0));
        assert_eq!(dead_pairs(&jobs).await, pairs(&[("b", Some("card declined"))]));
        let ready: Vec<String> = raw.client.lrange("shaped", 0, -1).await.unwrap();
        assert_eq!(ready, ["a", "c", "d", "e"]);
    }
}
