//! Who this process is, as the records it leaves in Redis name it (worker
//! records, schedule fires): its host's name.

/// Longest host name kept in a record.
pub(crate) const MOST_HOST_BYTES: usize = 255;

/// This machine's host name: the kernel's (Linux), else `HOSTNAME` or
/// `COMPUTERNAME`, else empty; at most [`MOST_HOST_BYTES`].
pub(crate) fn host_name() -> String {
    let found = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .unwrap_or_default();
    let mut host = found.trim().to_owned();
    if host.len() > MOST_HOST_BYTES {
        let mut end = MOST_HOST_BYTES;
        while !host.is_char_boundary(end) {
            end -= 1;
        }
        host.truncate(end);
    }
    host
}
