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
