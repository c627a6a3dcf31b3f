//! `delayq search`: values by id or text across queues and states, a
//! budget per run with the cursor to go on, the text --codec decodes.

use std::process::{Command, Output};
use std::time::Duration;

use delayq::fred::interfaces::ListInterface;
use delayq_test_support::{redis_test, RedisServer};

fn delayq(redis: &RedisServer, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_delayq"))
        .args(args)
        .env("REDIS_URL", redis.url())
        .output()
        .expect("run delayq")
}

fn ok(output: Output) -> String {
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

fn json(redis: &RedisServer, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["search", "--format", "json"];
    all.extend_from_slice(args);
    serde_json::from_str(&ok(delayq(redis, &all))).unwrap()
}

redis_test! {
    /// Pending, ready and dead values of two queues (one named in Cyrillic
    /// and emoji) are found by text in any case and by id; --queue and
    /// --state narrow the search; the table fits 100 columns with control
    /// characters escaped; a search that finds nothing says so.
    async fn search_finds_values_across_queues_and_states(redis, raw) {
        let long = format!("Заказ ORD-42 {}\u{1b}[31m", "подробности ".repeat(20));
        ok(delayq(&redis, &["offer", "заказы-📦", "--delay", "1h", &long, "other"]));
        ok(delayq(&redis, &["offer", "заказы-📦", "--delay", "2h", "--id", "ord-43", "with an id"]));
        let _: () = raw.client.rpush("заказы-📦", "ready ord-44").await.unwrap();
        let _: () = raw.client.rpush("delayq_dead_letter:{mail}", vec!["bounced ORD-45", "fine"]).await.unwrap();

        let table = ok(delayq(&redis, &["search", "ord-4"]));
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 6, "{table}");
        assert!(lines[0].starts_with("QUEUE") && lines[0].contains("VALUE"), "{table}");
        assert!(lines[1].starts_with("mail") && lines[1].contains("dead") && lines[1].ends_with("bounced ORD-45"), "{table}");
        assert!(lines[2].starts_with("заказы-📦") && lines[2].contains("Заказ ORD-42") && lines[2].ends_with('…'), "{table}");
        assert!(lines[3].contains("ord-43") && lines[3].ends_with("with an id"), "{table}");
        assert!(lines[4].contains("ready") && lines[4].ends_with("ready ord-44"), "{table}");
        assert_eq!(lines[5], "4 matches; searched 6 of 6 values (all)");
        for line in &lines {
            assert!(unicode_width::UnicodeWidthStr::width(*line) <= 100, "{line}");
        }
        assert!(!table.contains('\u{1b}'));

        // The whole value, exact, in JSON.
        let doc = json(&redis, &["ORD-42"]);
        assert_eq!(doc["matches"][0]["value"], long.as_str());
        assert_eq!(doc["matches"][0]["queue"], "заказы-📦");
        assert_eq!(doc["complete"], true);
        // By id: through the index, first.
        let doc = json(&redis, &["ord-43"]);
        assert_eq!(doc["matches"].as_array().unwrap().len(), 1, "{doc}");
        assert_eq!(doc["matches"][0]["by_id"], true);
        assert_eq!(doc["matches"][0]["id"], "ord-43");
        // Narrowed.
        let doc = json(&redis, &["ord", "--queue", "заказы-📦", "--state", "ready", "--state", "dead"]);
        assert_eq!(doc["matches"].as_array().unwrap().len(), 1, "{doc}");
        assert_eq!(doc["matches"][0]["state"], "ready");
        assert_eq!(doc["total"], 1);
        // Nothing.
        let out = ok(delayq(&redis, &["search", "no such order"]));
        assert_eq!(out, "no match for \"no such order\"; searched 6 of 6 values (all)\n");
        // A misspelt queue is refused, as by every command.
        let out = delayq(&redis, &["search", "x", "--queue", "maill"]);
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&out.stderr).contains("did you mean `mail`?"), "{out:?}");
        // A cursor no search printed.
        let out = delayq(&redis, &["search", "x", "--from", "nonsense"]);
        assert_eq!(out.status.code(), Some(2), "bad input: {out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("is not a search cursor"), "{out:?}");
    }
}

redis_test! {
    /// 20,000 values: a run looks at its budget, says how far it got and
    /// prints the command line to go on with; going on finds the rest.
    async fn a_search_says_how_far_it_looked_and_goes_on_from_its_cursor(redis) {
        let client = redis.client().await;
        let queue = client.delayed_queue::<String, _>("big", delayq::StringCodec).unwrap().without_transfer();
        queue
            .offer_all((0..20_000u32).map(|i| {
                let value = if i == 15_000 { "needle".to_owned() } else { format!("v{i}") };
                (value, Duration::from_secs(3600) + Duration::from_millis(u64::from(i)))
            }))
            .await
            .unwrap();
        client.shutdown().await;
        let first = ok(delayq(&redis, &["search", "NEEDLE"]));
        let (head, cursor) = first.trim_end().split_once("; continue with --from ").unwrap_or_else(|| panic!("{first}"));
        assert_eq!(head, "no match for \"NEEDLE\"; searched 10,000 of 20,000 values");
        let second = ok(delayq(&redis, &["search", "NEEDLE", "--from", cursor]));
        assert!(second.contains("#15,001 due in"), "{second}");
        assert!(second.ends_with("1 match; searched 20,000 of 20,000 values (all)\n"), "{second}");
        let small = ok(delayq(&redis, &["search", "NEEDLE", "--budget", "500"]));
        assert!(small.starts_with("no match for \"NEEDLE\"; searched 500 of 20,000 values; continue"), "{small}");
    }
}

redis_test! {
    /// --codec: the text is matched as decoded, not in the stored bytes
    /// (LZ4 stores this value's run of x's as a back-reference).
    async fn search_matches_the_decoded_text_of_compressed_values(redis) {
        let value = format!("{}ord-99", "x".repeat(200));
        ok(delayq(&redis, &["offer", "lz", "--delay", "1h", "--codec", "lz4/string", &value]));
        let needle = format!("{}ORD-99", "x".repeat(50));
        let raw = json(&redis, &[&needle]);
        assert_eq!(raw["matches"].as_array().unwrap().len(), 0, "not in the bytes: {raw}");
        let decoded = json(&redis, &[&needle, "--codec", "lz4/string"]);
        assert_eq!(decoded["matches"][0]["value"], value.as_str(), "{decoded}");
    }
}
