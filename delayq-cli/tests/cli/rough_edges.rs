//! What the `delayq` binary prints for people (tables by
//! terminal cells, counts, durations, URLs, errors and their hints, exit
//! statuses, --help and --version), run against a real Redis.

use std::process::{Command, Output};

use unicode_width::UnicodeWidthStr;

use delayq_test_support::{redis_test, RedisServer};

fn delayq(redis: &RedisServer, args: &[&str]) -> Output {
    delayq_at(&redis.url(), args)
}

fn delayq_at(url: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_delayq"))
        .args(args)
        .env("REDIS_URL", url)
        .output()
        .expect("run delayq")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn ok(output: Output) -> Output {
    assert!(output.status.success(), "{output:?}");
    output
}

/// The terminal cell at which the `n`th blank-separated field of `line` ends.
fn field_end(line: &str, n: usize) -> usize {
    let mut fields = 0;
    let mut in_field = false;
    for (at, c) in line.char_indices() {
        if c == ' ' && in_field {
            fields += 1;
            if fields == n + 1 {
                return line[..at].width();
            }
        }
        in_field = c != ' ';
    }
    line.width()
}

redis_test! {
    async fn tables_align_wide_names_by_terminal_cells_and_counts_by_their_last_digit(redis) {
        let values: Vec<String> = (0..1_234).map(|i| format!("v{i}")).collect();
        let mut offer = vec!["offer", "📦x", "--delay", "1h"];
        offer.extend(values.iter().map(String::as_str));
        ok(delayq(&redis, &offer));
        ok(delayq(&redis, &["offer", "订单", "--delay", "1h", "one"]));
        ok(delayq(&redis, &["offer", "abcd", "--delay", "1h", "a", "b"]));
        let out = ok(delayq(&redis, &["stats", "订单", "📦x", "abcd"]));
        let text = stdout(&out);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(lines[0].starts_with("QUEUE"), "{text}");
        // PENDING is the second field: every count ends under the header's end.
        let end = field_end(lines[0], 1);
        for line in &lines[1..] {
            assert_eq!(field_end(line, 1), end, "column PENDING misaligned:\n{text}");
        }
        assert!(lines[2].contains(" 1,234 "), "thousands separated:\n{text}");
        // Machines read the JSON: a number, unchanged.
        let out = ok(delayq(&redis, &["stats", "📦x", "--format", "json"]));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["queues"][0]["pending"], 1_234, "{json}");
    }
}

redis_test! {
    async fn offers_say_when_values_are_due_as_people_write_it(redis) {
        let out = ok(delayq(&redis, &["offer", "q", "--delay", "3d", "x"]));
        assert!(stderr(&out).contains("(due in 3d)"), "not 259200s: {out:?}");
        let out = ok(delayq(&redis, &["offer", "q", "--delay", "0", "y"]));
        assert!(stderr(&out).contains("(due now)"), "not 0ns: {out:?}");
        let out = ok(delayq(&redis, &["offer", "q", "--delay", "90m", "--id", "a", "z"]));
        assert!(stderr(&out).contains("(due in 1h30m)"), "{out:?}");
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), "one\ntwo\n").unwrap();
        let path = file.path().to_str().unwrap();
        let out = ok(delayq(&redis, &["offer", "q", "--delay", "2h", "--from-file", path]));
        assert!(stderr(&out).contains("(due in 2h)"), "{out:?}");
        let text = stderr(&out) + &stderr(&ok(delayq(&redis, &["offer", "q", "--delay", "0", "w"])));
        assert!(!text.contains("ns)") && !text.contains("00s"), "{text}");
    }
}

redis_test! {
    async fn a_purge_dry_run_succeeds_and_deletes_nothing(redis) {
        ok(delayq(&redis, &["offer", "jobs", "--delay", "1h", "a", "b"]));
        let out = delayq(&redis, &["purge", "jobs"]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert!(stderr(&out).contains("would delete 2 pending element(s)"), "{out:?}");
        let raw = redis.raw().await;
        assert_eq!(
            raw.zcard("redisson_delay_queue_timeout:{jobs}").await,
            2,
            "nothing deleted"
        );
    }
}

#[test]
fn help_shows_url_as_an_optional_global_flag() {
    let help = |args: &[&str]| {
        let out = ok(Command::new(env!("CARGO_BIN_EXE_delayq")).args(args).output().unwrap());
        stdout(&out)
    };
    let top = help(&["--help"]);
    assert!(top.contains("Usage: delayq [--url URL]"), "{top}");
    for args in [
        &["stats", "--help"][..],
        &["offer", "--help"],
        &["schedule", "list", "--help"],
    ] {
        let text = help(args);
        let global = text
            .find("Global options (any command, all optional):")
            .unwrap_or_else(|| panic!("{args:?}: no global heading:\n{text}"));
        let url = text.find("--url <URL>").expect("--url listed");
        assert!(
            url > global,
            "{args:?}: --url is among the command's own options:\n{text}"
        );
        assert!(text.contains("host:port alone means redis://host:port"), "{text}");
    }
}

#[test]
fn every_command_answers_version_with_the_crates_version() {
    let expected = format!("delayq {}\n", env!("CARGO_PKG_VERSION"));
    for args in [
        &["--version"][..],
        &["-V"],
        &["stats", "--version"],
        &["schedule", "list", "--version"],
    ] {
        let out = ok(Command::new(env!("CARGO_BIN_EXE_delayq")).args(args).output().unwrap());
        assert_eq!(stdout(&out), expected, "{args:?}");
    }
}

redis_test! {
    async fn a_url_of_another_scheme_is_refused_and_host_port_alone_is_redis(redis) {
        ok(delayq(&redis, &["offer", "q", "--delay", "1h", "x"]));
        let port = redis.port();
        let out = delayq_at(&format!("http://app:s3cret@127.0.0.1:{port}"), &["stats", "q"]);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let text = stderr(&out);
        for scheme in [
            "`http://`",
            "redis://",
            "rediss://",
            "redis-cluster://",
            "redis-sentinel://",
        ] {
            assert!(text.contains(scheme), "{scheme} missing: {text}");
        }
        assert!(!text.contains("s3cret"), "{text}");
        // Without a scheme: the same server, from --url and from REDIS_URL.
        let bare = format!("127.0.0.1:{port}");
        let out = ok(delayq_at(
            "redis://127.0.0.1:1",
            &["--url", &bare, "stats", "q", "--format", "json"],
        ));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["queues"][0]["pending"], 1, "{json}");
        ok(delayq_at(&bare, &["inspect", "q"]));
    }
}

redis_test! {
    async fn connection_errors_carry_a_hint_that_fits_and_no_rust_debug_text(redis) {
        let port = redis.port();
        let cases = [
            (format!("redis://127.0.0.1:{port}/99"), "`databases` setting"),
            (format!("redis://127.0.0.1:{port}/abc"), "is a database number"),
            (format!("redis-cluster://127.0.0.1:{port}"), "not a Redis Cluster"),
            (
                format!("redis-sentinel://127.0.0.1:{port}/0?sentinelServiceName=m"),
                "not a sentinel",
            ),
            (format!("rediss://127.0.0.1:{port}"), "rediss:// speaks TLS"),
            ("redis://127.0.0.1:1".to_owned(), "is Redis running there?"),
        ];
        for (url, hint) in cases {
            let out = delayq_at(&url, &["stats", "q"]);
            assert_eq!(out.status.code(), Some(2), "{url}: {out:?}");
            let text = stderr(&out);
            let hints: Vec<&str> = text.lines().filter(|l| l.starts_with("hint: ")).collect();
            assert_eq!(hints.len(), 1, "{url}: {text}");
            assert!(hints[0].contains(hint), "{url}: wants {hint:?}: {text}");
            for debug in ["Os {", "kind:", "Custom {", "Error:"] {
                assert!(!text.contains(debug), "{url}: Rust debug text {debug:?}: {text}");
            }
        }
    }
}

redis_test! {
    async fn an_unreadable_file_is_named_once_without_a_doubled_prefix(redis) {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.txt");
        let missing = missing.to_str().unwrap();
        let out = delayq(&redis, &["offer", "q", "--delay", "1s", "--from-file", missing]);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let text = stderr(&out);
        assert!(text.contains(missing) && text.contains("nothing was offered"), "{text}");
        assert_eq!(text.matches("invalid argument").count(), 1, "{text}");
    }
}
