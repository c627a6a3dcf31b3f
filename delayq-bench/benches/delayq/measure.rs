//! Process CPU and memory from /proc, and latency percentiles.

use std::time::Duration;

/// CPU time (user + system) a process has used so far: to the nanosecond
/// for this process, in 10 ms ticks for another (`/proc/PID/stat`).
pub fn cpu_time(pid: Option<u32>) -> Duration {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/stat"),
        None => return own_cpu_time(),
    };
    let stat = std::fs::read_to_string(path).unwrap_or_default();
    // Fields after the command name (which may contain spaces) start after ')'.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    // utime and stime are fields 14 and 15 of stat; 12 and 13 after the name.
    let total = ticks(11) + ticks(12);
    Duration::from_millis(total * 1000 / clock_ticks_per_second())
}

/// This process's CPU time, every thread's, from the kernel's nanosecond
/// count: `/proc/self/stat`'s 10 ms ticks were 0.2 µs a value over 50,000
/// values, as large as the steps a benchmark looks for.
pub fn own_cpu_time() -> Duration {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a valid timespec for the call to write.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) };
    assert_eq!(
        status,
        0,
        "CLOCK_PROCESS_CPUTIME_ID: {}",
        std::io::Error::last_os_error()
    );
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

fn clock_ticks_per_second() -> u64 {
    // Linux has reported 100 on every common architecture for decades.
    100
}

/// Resident memory of this process, in bytes.
pub fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

/// CPU used by this process and by Redis between `start` and `stop`.
pub struct CpuWindow {
    wall: std::time::Instant,
    ours: Duration,
    redis: Duration,
    redis_pid: Option<u32>,
}

impl CpuWindow {
    pub fn start(redis_pid: Option<u32>) -> Self {
        CpuWindow {
            wall: std::time::Instant::now(),
            ours: cpu_time(None),
            redis: cpu_time(redis_pid),
            redis_pid,
        }
    }

    /// CPU seconds used by this process and Redis together since `start`.
    pub fn seconds_used(&self) -> f64 {
        (cpu_time(None) - self.ours + cpu_time(self.redis_pid) - self.redis).as_secs_f64()
    }

    /// (our CPU %, Redis CPU %) of one core over the window.
    pub fn stop(&self) -> (f64, f64) {
        let wall = self.wall.elapsed().as_secs_f64().max(1e-9);
        let ours = (cpu_time(None) - self.ours).as_secs_f64() / wall * 100.0;
        let redis = (cpu_time(self.redis_pid) - self.redis).as_secs_f64() / wall * 100.0;
        (ours, redis)
    }
}

/// p50, p99 and max of latencies in ms.
pub fn percentiles(mut values: Vec<f64>) -> (f64, f64, f64) {
    if values.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    values.sort_by(|a, b| a.total_cmp(b));
    let at = |q: f64| values[((values.len() as f64 - 1.0) * q).round() as usize];
    (at(0.50), at(0.99), *values.last().unwrap())
}

/// Milliseconds since the epoch, with sub-millisecond precision.
pub fn now_ms_f64() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        * 1000.0
}

/// The median of some measurements.
pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}
