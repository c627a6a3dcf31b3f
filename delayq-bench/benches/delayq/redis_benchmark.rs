//! The baselines measured with `redis-benchmark` against the same server.

use std::process::Command;

/// Runs `redis-benchmark -q` with `args` and returns its requests per second.
pub fn requests_per_second(port: u16, args: &[&str]) -> f64 {
    let port = port.to_string();
    let output = Command::new("redis-benchmark")
        .args(["-h", "127.0.0.1", "-p", &port, "-q"])
        .args(args)
        .output()
        .expect("redis-benchmark (Debian package redis-tools; scripts/bench.sh installs it)");
    let text = String::from_utf8_lossy(&output.stdout);
    // "<command>: 123456.78 requests per second, p50=..." (the last line; progress lines use \r)
    let line = text
        .rsplit(['\n', '\r'])
        .find(|l| l.contains("requests per second"))
        .unwrap_or_else(|| {
            panic!(
                "redis-benchmark printed no rate: {text} {}",
                String::from_utf8_lossy(&output.stderr)
            )
        });
    let before = line.split(" requests per second").next().unwrap();
    before
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("cannot read a rate in {line:?}"))
}
