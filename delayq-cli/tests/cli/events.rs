//! `delayq events`: turning a queue's events on and off, printing them
//! (escaped for the terminal, or as JSON lines) and following them.

use std::io::{BufRead, BufReader};
use std::time::Duration;

use delayq::StringCodec;

use delayq_test_support::redis_test;

redis_test! {
    async fn the_cli_enables_prints_follows_and_disables_events(redis) {
        let cli = |args: &[&str]| {
            std::process::Command::new(env!("CARGO_BIN_EXE_delayq"))
                .args(args)
                .env("REDIS_URL", redis.url())
                .output()
                .expect("run delayq")
        };
        let out = cli(&["events", "enable", "watched", "--max-len", "50"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let client = redis.client().await;
        assert_eq!(
            client
                .events_max_len(&delayq::QueueKeys::new("watched").unwrap())
                .await
                .unwrap(),
            Some(50)
        );
        let q = client.delayed_queue("watched", StringCodec).unwrap();
        // An id that would colour the terminal if printed raw.
        q.offer_with_id("red\u{1b}[31m", &"v".into(), Duration::from_secs(3600))
            .await
            .unwrap();
        assert!(q.cancel("red\u{1b}[31m").await.unwrap());

        let text = String::from_utf8(cli(&["events", "watched"]).stdout).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].contains("offered") && lines[0].contains("id=red\\u{1b}[31m"),
            "{text}"
        );
        assert!(lines[1].contains("cancelled"), "{text}");
        assert!(!text.contains('\u{1b}'), "escaped: {text:?}");

        let json = String::from_utf8(cli(&["events", "watched", "--format", "json"]).stdout).unwrap();
        let first: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
        assert_eq!(first["kind"], "offered");
        assert_eq!(first["id"], "red\u{1b}[31m", "the same text, JSON-escaped");
        assert_eq!(first["queue"], "watched");
        // Paging on from a printed id.
        let after = first["stream_id"].as_str().unwrap();
        let rest = String::from_utf8(cli(&["events", "watched", "--after", after]).stdout).unwrap();
        assert_eq!(rest.lines().count(), 1, "{rest}");

        // --follow prints the kept ones, then what comes.
        let mut follower = std::process::Command::new(env!("CARGO_BIN_EXE_delayq"))
            .args(["events", "watched", "--follow", "--format", "json"])
            .env("REDIS_URL", redis.url())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = follower.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if tx.send(line.unwrap()).is_err() {
                    break;
                }
            }
        });
        for _ in 0..2 {
            rx.recv_timeout(Duration::from_secs(20)).unwrap();
        }
        q.pause().await.unwrap();
        let line = rx.recv_timeout(Duration::from_secs(20)).unwrap();
        follower.kill().unwrap();
        let _ = follower.wait();
        let paused: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(paused["kind"], "paused", "{line}");

        let out = cli(&["events", "disable", "watched"]);
        assert!(out.status.success());
        assert_eq!(
            client
                .events_max_len(&delayq::QueueKeys::new("watched").unwrap())
                .await
                .unwrap(),
            None
        );
        let out = cli(&["events", "enable", "watched", "--max-len", "0"]);
        assert_eq!(out.status.code(), Some(2), "a max length of 0 is refused");
    }
}
