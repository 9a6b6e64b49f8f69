//! Facts about the machine the program runs on, and how to print them.

/// Bytes as KiB/MiB/GiB with one decimal.
pub fn format_bytes(bytes: u64) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.1} {}", units[unit])
    }
}

/// Memory this process may still allocate, as far as the system tells: the least of the
/// kernel's `MemAvailable`, the memory cgroup's limit less its usage (a container's limit,
/// which `MemAvailable` does not show) and the process's address-space and data-size limits
/// less what it holds (`ulimit -v`, `ulimit -d`). `None` when none of them can be read.
pub fn available_memory() -> Option<u64> {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let limits = read("/proc/self/limits");
    let status = read("/proc/self/status");
    let rlimit = |limit: &str, held: &str| {
        let limit = limit_bytes(limits.as_deref()?, limit)?;
        Some(limit.saturating_sub(status_bytes(status.as_deref()?, held)?))
    };
    [
        read("/proc/meminfo").and_then(|text| status_bytes(&text, "MemAvailable:")),
        cgroup_headroom(),
        rlimit("Max address space", "VmSize:"),
        rlimit("Max data size", "VmData:"),
    ]
    .into_iter()
    .flatten()
    .min()
}

/// The memory cgroup's limit less its usage: cgroup v2 (the process's own group, or the root
/// a container sees) or v1; `None` without a limit.
fn cgroup_headroom() -> Option<u64> {
    let own = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|text| {
            let path = text.lines().find_map(|line| line.strip_prefix("0::"))?;
            Some(format!("/sys/fs/cgroup{}", path.trim_end_matches('/')))
        });
    let candidates = [
        own.map(|dir| (format!("{dir}/memory.max"), format!("{dir}/memory.current"))),
        Some((
            "/sys/fs/cgroup/memory.max".into(),
            "/sys/fs/cgroup/memory.current".into(),
        )),
        Some((
            "/sys/fs/cgroup/memory/memory.limit_in_bytes".into(),
            "/sys/fs/cgroup/memory/memory.usage_in_bytes".into(),
        )),
    ];
    candidates.into_iter().flatten().find_map(|(limit, usage)| {
        // "max" (v2) does not parse: no limit.
        let number = |path: &str| {
            std::fs::read_to_string(path)
                .ok()?
                .trim()
                .parse::<u64>()
                .ok()
        };
        Some(number(&limit)?.saturating_sub(number(&usage)?))
    })
}

/// The value in bytes of a `/proc` line `field  N kB` (`/proc/meminfo`, `/proc/self/status`).
fn status_bytes(text: &str, field: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(field))?;
    let kib: u64 = line[field.len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

/// The soft limit in bytes of a `/proc/self/limits` line; `None` when unlimited.
fn limit_bytes(text: &str, limit: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(limit))?;
    line[limit.len()..].split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_fields_and_limits_are_read_in_bytes() {
        let status = "Name:\tfluidlab\nVmSize:\t  3896 kB\nVmData:\t   428 kB\n";
        assert_eq!(status_bytes(status, "VmSize:"), Some(3896 * 1024));
        assert_eq!(status_bytes(status, "VmData:"), Some(428 * 1024));
        assert_eq!(status_bytes(status, "VmRSS:"), None);
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max data size             1073741824           unlimited            bytes\n\
                      Max address space         unlimited            unlimited            bytes\n";
        assert_eq!(limit_bytes(limits, "Max data size"), Some(1 << 30));
        assert_eq!(limit_bytes(limits, "Max address space"), None);
    }
}
