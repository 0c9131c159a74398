//! How many connections the process's open-file limit can hold.

/// The connection cap when none is set and the open-file limit allows it.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;

/// Descriptors kept for everything but client connections: stdio, the
/// runtime's poller, the listener, signal handling, the store's connections
/// and name lookups, with room to spare.
const RESERVED: u64 = 64;

/// The soft limit on open files (`RLIMIT_NOFILE`), where the platform tells
/// it without unsafe code: from `/proc/self/limits` on Linux. `None` when
/// unlimited or unknown.
pub fn open_files() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    parse_limits(&text)
}

/// The soft value of the `Max open files` row.
fn parse_limits(text: &str) -> Option<u64> {
    let row = text.lines().find(|l| l.starts_with("Max open files"))?;
    row["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Connections that `limit` open files can hold when each takes
/// `per_connection` descriptors (the client's, and the upstream's one the
/// proxy opens for it), after the reserve; at least one.
pub fn connections_within(limit: u64, per_connection: u64) -> usize {
    let fit = limit.saturating_sub(RESERVED) / per_connection.max(1);
    usize::try_from(fit).unwrap_or(usize::MAX).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_soft_limit() {
        let text = "Limit                     Soft Limit           Hard Limit           Units     \n\
                    Max processes             96365                96365                processes \n\
                    Max open files            1024                 524288               files     \n";
        assert_eq!(parse_limits(text), Some(1024));
        let unlimited =
            "Max open files            unlimited            unlimited            files\n";
        assert_eq!(parse_limits(unlimited), None);
        assert_eq!(parse_limits("nothing"), None);
        if cfg!(target_os = "linux") {
            assert!(open_files().is_some());
        }
    }

    #[test]
    fn leaves_room_for_upstream_connections() {
        assert_eq!(connections_within(1024, 2), 480);
        assert_eq!(connections_within(1024, 3), 320);
        assert_eq!(connections_within(1_048_576, 2), 524_256);
        assert_eq!(connections_within(32, 2), 1);
    }
}
