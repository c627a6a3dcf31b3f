//! `delayq dashboard`: what the command refuses before it serves, and its help.

use delayq_test_support::RedisServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn off_loopback_the_dashboard_command_refuses_to_start_without_a_token() {
    let server = RedisServer::start().await;
    // The CLI says so and exits before it connects.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_delayq"))
        .args(["dashboard", "--listen", "0.0.0.0:0", "--url", &server.url()])
        .env_remove("DELAYQ_TOKEN")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("without a token"), "{stderr}");

    let help = |args: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_delayq"))
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    assert!(help(&["--help"]).contains("dashboard"));
    let text = help(&["dashboard", "--help"]);
    for option in [
        "--listen",
        "127.0.0.1:9090",
        "--codec",
        "--read-only",
        "--token",
        "DELAYQ_TOKEN",
        "--sample-interval",
    ] {
        assert!(
            text.contains(option),
            "{option} missing from `delayq dashboard --help`:\n{text}"
        );
    }
}

/// The dashboard's log says when Redis went away and when it came back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_logs_when_redis_goes_away_and_comes_back() {
    logs_when_redis_goes_away_and_comes_back(Some("delayq_dashboard=info")).await;
}

/// It does so without DELAYQ_LOG too: a long-running command logs at INFO
/// by default.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_delayq_log_the_dashboard_still_logs_redis_going_away_and_back() {
    logs_when_redis_goes_away_and_comes_back(None).await;
}

/// Runs `delayq dashboard` (with `DELAYQ_LOG` set to `log`, or unset),
/// stops Redis and starts it again, and waits for the WARN and INFO lines.
async fn logs_when_redis_goes_away_and_comes_back(log: Option<&str>) {
    use std::io::BufRead;
    let mut server = RedisServer::start().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_delayq"));
    match log {
        Some(filter) => command.env("DELAYQ_LOG", filter),
        None => command.env_remove("DELAYQ_LOG"),
    };
    let mut child = command
        .args([
            "dashboard",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--url",
            &server.url(),
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Killed on every way out of the test, failing ones included.
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let stderr = child.stderr.take().unwrap();
    let _child = Kill(child);
    let (lines, seen) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                return;
            }
        }
    });
    let wait_line = |want: &str| {
        let mut log = Vec::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
            match seen.recv_timeout(left) {
                Ok(line) if line.contains(want) => return line,
                Ok(line) => log.push(line),
                Err(_) => break,
            }
        }
        panic!("no log line with {want:?}:\n{}", log.join("\n"));
    };
    wait_line("delayq dashboard on http://");
    server.kill();
    let down = wait_line("Redis is unreachable");
    assert!(down.contains("WARN"), "{down}");
    server.restart().await;
    let back = wait_line("Redis is reachable again");
    assert!(back.contains("INFO") && back.contains("down_for"), "{back}");
}

/// `jdk-types.json`'s bytes of `case` written by Java's `codec`, as hex.
fn java_hex(codec: &str, case: &str) -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../compat/fixtures/jdk-types.json");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    json["codecs"][codec][case]["hex"].as_str().unwrap().to_owned()
}

const SCHEMA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../compat/fixtures/jdk-types-schema.json");

/// A schema that does not load, or a per-queue codec that does not parse,
/// is a clear error before the dashboard connects or listens: Redis here is
/// a closed port, so only a check made first can answer.
#[test]
fn a_bad_kryo_schema_or_queue_codec_stops_the_dashboard_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, r#"{"classes": {"shop.Order": {"fields": {"id": 1}}}}"#).unwrap();
    let missing = dir.path().join("missing.json");
    let (broken, missing) = (broken.to_str().unwrap(), missing.to_str().unwrap());
    let closed = format!("redis://127.0.0.1:{}", delayq_test_support::redis_server::free_port());
    let refused = |args: &[&str], want: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_delayq"))
            .args(["dashboard", "--listen", "127.0.0.1:0", "--url", &closed])
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        for part in want {
            assert!(stderr.contains(part), "{args:?}: {part:?} missing from {stderr}");
        }
        assert!(!stderr.contains("delayq dashboard on"), "{args:?} started: {stderr}");
    };
    refused(&["--kryo-schema", missing], &["--kryo-schema", missing]);
    refused(&["--kryo-schema", broken], &["--kryo-schema", broken, "Kryo schema"]);
    refused(
        &["--codec", "string", "--kryo-schema", SCHEMA],
        &["only applies to kryo"],
    );
    refused(&["--queue-codec", "orders"], &["QUEUE=CODEC"]);
    refused(&["--queue-codec", "=kryo"], &["names no queue"]);
    refused(&["--queue-codec", "orders=nope"], &["\"nope\" is not a codec"]);
}

/// `delayq dashboard --kryo-schema F --queue-codec Q=CODEC`: the queue's
/// Kryo POJOs (in LZ4 here) show their fields, java.time in ISO-8601 and
/// BigDecimal exact; a queue without a codec of its own keeps --codec.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_reads_a_queues_kryo_pojos_with_the_schema_given() {
    let server = RedisServer::start().await;
    let offer = |queue: &str, codec: &str, value: &str| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_delayq"))
            .args([
                "offer",
                queue,
                "--delay",
                "1h",
                "--codec",
                codec,
                value,
                "--url",
                &server.url(),
            ])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    };
    offer("orders", "bytes", &java_hex("lz4", "pojo_order"));
    offer("notes", "bytes", &java_hex("lz4", "pojo_order"));
    // A class the schema does not describe (kryo5.json's compat.Order).
    let kryo5 = concat!(env!("CARGO_MANIFEST_DIR"), "/../compat/fixtures/kryo5.json");
    let kryo5: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(kryo5).unwrap()).unwrap();
    let other = kryo5["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["case"] == "pojo_order")
        .unwrap()["kryo_hex"]
        .as_str()
        .unwrap()
        .to_owned();
    offer("legacy", "bytes", &other);
    let port = delayq_test_support::redis_server::free_port();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_delayq"))
        .args([
            "dashboard",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--url",
            &server.url(),
        ])
        .args([
            "--codec",
            "bytes",
            "--queue-codec",
            "orders=lz4",
            "--queue-codec",
            "legacy=kryo",
            "--kryo-schema",
            SCHEMA,
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _child = Kill(child);
    let get = |queue: &'static str| async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.ok()?;
        let request =
            format!("GET /api/queue?name={queue} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.ok()?;
        let mut reply = Vec::new();
        stream.read_to_end(&mut reply).await.ok()?;
        let reply = String::from_utf8_lossy(&reply).into_owned();
        let (_, body) = reply.split_once("\r\n\r\n")?;
        serde_json::from_str::<serde_json::Value>(body).ok()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let orders = loop {
        if let Some(page) = get("orders").await {
            break page;
        }
        assert!(std::time::Instant::now() < deadline, "the dashboard never answered");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    let shown = &orders["pending"]["elements"][0];
    assert_eq!(shown["class"], "corpus.Order", "{shown}");
    assert_eq!(
        shown["text"],
        r#"{"amount":1234,"createdAt":"2026-11-23T02:13:20.123456789","id":"o-1","tags":["a","b"],"total":12.50}"#
    );
    assert_eq!(orders["codec"], "lz4");
    // Another queue: --codec bytes, as hex, no class guessed.
    let notes = get("notes").await.unwrap();
    let shown = &notes["pending"]["elements"][0];
    assert_eq!(shown["text"], java_hex("lz4", "pojo_order"));
    assert_eq!(shown["class"], serde_json::Value::Null);
    // --codec kryo refuses a class the schema lacks: the page names it and says why.
    let legacy = get("legacy").await.unwrap();
    let shown = &legacy["pending"]["elements"][0];
    assert_eq!(shown["decoded"], false, "{shown}");
    assert_eq!(shown["class"], "compat.Order", "{shown}");
    let unread = shown["unread"].as_str().unwrap();
    assert!(
        unread.contains("compat.Order") && unread.contains("not in the Kryo schema"),
        "{unread}"
    );
}
