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

/// One thread's scheduler counts (`/proc/self/task/TID/schedstat`): time on
/// a CPU, time runnable but waiting for one, and how many times it ran.
#[derive(Clone, Debug)]
pub struct ThreadTime {
    tid: u32,
    name: String,
    run_ns: u64,
    wait_ns: u64,
    slices: u64,
}

/// Every thread of this process, to tell a run that did more work from one
/// that did the same work slower (waits) or in more pieces (slices).
pub fn threads() -> Vec<ThreadTime> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    let mut all = Vec::new();
    for task in tasks.flatten() {
        let path = task.path();
        let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
            continue;
        };
        let stat = std::fs::read_to_string(path.join("schedstat")).unwrap_or_default();
        let mut numbers = stat.split_whitespace().map(|n| n.parse::<u64>().unwrap_or(0));
        let name = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
        all.push(ThreadTime {
            tid,
            name: name.trim().to_string(),
            run_ns: numbers.next().unwrap_or(0),
            wait_ns: numbers.next().unwrap_or(0),
            slices: numbers.next().unwrap_or(0),
        });
    }
    all
}

/// Per thread that ran between two snapshots: name, CPU ms, run-queue wait
/// ms and slices, busiest first; and the machine's steal time (ms) from
/// `/proc/stat`, which a VM's host reports when it ran someone else.
pub fn threads_between(before: &[ThreadTime], after: &[ThreadTime]) -> String {
    let mut rows: Vec<(u64, String)> = after
        .iter()
        .filter_map(|a| {
            let b = before.iter().find(|b| b.tid == a.tid);
            let (run, wait, slices) = match b {
                Some(b) => (a.run_ns - b.run_ns, a.wait_ns - b.wait_ns, a.slices - b.slices),
                None => (a.run_ns, a.wait_ns, a.slices),
            };
            (run > 1_000_000).then(|| {
                let ms = |ns: u64| ns as f64 / 1e6;
                (run, format!("{}: {:.0}/{:.0} ms/{}", a.name, ms(run), ms(wait), slices))
            })
        })
        .collect();
    rows.sort_by_key(|row| std::cmp::Reverse(row.0));
    let rows: Vec<String> = rows.into_iter().map(|(_, r)| r).collect();
    format!("threads (cpu/wait/slices) {}", rows.join(", "))
}

/// The machine's steal time so far, in 10 ms ticks (`/proc/stat`'s 8th
/// field of its `cpu` line).
pub fn steal_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    stat.lines()
        .next()
        .and_then(|l| l.split_whitespace().nth(8))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}
