//! What the machine can hold: available memory (`/proc/meminfo`, and the address-space limit
//! of `/proc/self/limits`, e.g. `ulimit -v`) and this process's use (`/proc/self/statm`).
//! Linux only; elsewhere every figure is unknown (`None`) and the checks are skipped.

use std::fs;

/// The memory this process may use, bytes: the smaller of the available memory and the
/// address-space limit.
pub fn memory_limit() -> Option<u64> {
    [mem_available(), address_space_limit()]
        .into_iter()
        .flatten()
        .min()
}

/// `MemAvailable` of `/proc/meminfo`, bytes.
pub fn mem_available() -> Option<u64> {
    meminfo("MemAvailable:")
}

/// `MemTotal` of `/proc/meminfo`, bytes.
pub fn mem_total() -> Option<u64> {
    meminfo("MemTotal:")
}

fn meminfo(field: &str) -> Option<u64> {
    let text = fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The soft `Max address space` of `/proc/self/limits`, bytes (`None` when unlimited).
pub fn address_space_limit() -> Option<u64> {
    let text = fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max address space"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// (virtual size, resident size) of this process, bytes.
pub fn usage() -> Option<(u64, u64)> {
    let text = fs::read_to_string("/proc/self/statm").ok()?;
    let mut it = text.split_whitespace().map(|v| v.parse::<u64>().ok());
    let (size, rss) = (it.next()??, it.next()??);
    Some((size * 4096, rss * 4096))
}

/// `n` bytes in GiB or MiB, for messages.
pub fn human(n: u64) -> String {
    if n >= 1 << 30 {
        format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.0} MiB", (n as f64 / (1u64 << 20) as f64).max(1.0))
    }
}
