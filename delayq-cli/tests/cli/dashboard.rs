//! `delayq dashboard`: what the command refuses before it serves, and its help.

use crate::harness::RedisServer;

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
