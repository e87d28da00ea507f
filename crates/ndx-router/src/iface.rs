//! What the router needs to know about an interface, read from sysfs (which reflects the
//! network namespace the router runs in).

use std::path::PathBuf;

use crate::config::parse_mac;
use crate::worker::IfaceInfo;

/// Why an interface cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum IfaceError {
    /// No such interface.
    #[error("interface {0:?} does not exist (see `ip link`)")]
    Missing(String),
    /// A sysfs attribute could not be read or parsed.
    #[error("interface {name:?}: cannot read {attr}: {why}")]
    Attr {
        /// Interface.
        name: String,
        /// Attribute.
        attr: &'static str,
        /// Why.
        why: String,
    },
}

fn attr(name: &str, attr: &'static str) -> Result<String, IfaceError> {
    let p = PathBuf::from("/sys/class/net").join(name).join(attr);
    std::fs::read_to_string(&p)
        .map(|s| s.trim().to_string())
        .map_err(|e| IfaceError::Attr {
            name: name.into(),
            attr,
            why: e.to_string(),
        })
}

/// Reads an interface's index, MAC address and MTU.
pub fn info(name: &str) -> Result<IfaceInfo, IfaceError> {
    if !PathBuf::from("/sys/class/net").join(name).exists() {
        return Err(IfaceError::Missing(name.into()));
    }
    let bad = |attr: &'static str, why: String| IfaceError::Attr {
        name: name.into(),
        attr,
        why,
    };
    let ifindex = attr(name, "ifindex")?
        .parse()
        .map_err(|e| bad("ifindex", format!("{e}")))?;
    let mac = parse_mac(&attr(name, "address")?).map_err(|e| bad("address", e))?;
    let mtu = attr(name, "mtu")?
        .parse()
        .map_err(|e| bad("mtu", format!("{e}")))?;
    Ok(IfaceInfo {
        name: name.into(),
        ifindex,
        mac,
        mtu,
    })
}

/// Number of receive queues (`/sys/class/net/IF/queues/rx-N`).
pub fn rx_queues(name: &str) -> Result<u32, IfaceError> {
    let dir = PathBuf::from("/sys/class/net").join(name).join("queues");
    let n = std::fs::read_dir(&dir)
        .map_err(|e| IfaceError::Attr {
            name: name.into(),
            attr: "queues",
            why: e.to_string(),
        })?
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("rx-"))
        .count();
    Ok((n as u32).max(1))
}

/// Which shards have a socket on each queue, for `shards` shards over `queues` queues.
///
/// With at least as many shards as queues, shard `s` sits on queue `s % queues` (several
/// shards share a queue through a shared UMEM); with fewer shards, shard `s` serves every
/// queue `q` with `q % shards == s`. Every queue gets at least one socket, every shard at
/// least one socket per interface, and the first shard listed for a queue is its owner, to
/// which the XDP program sends frames for shards without a socket there.
pub fn queue_plan(shards: u32, queues: u32) -> Vec<Vec<u32>> {
    (0..queues)
        .map(|q| {
            if shards >= queues {
                (0..shards).filter(|s| s % queues == q).collect()
            } else {
                vec![q % shards]
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_readable() {
        let lo = info("lo").unwrap();
        assert_eq!(lo.ifindex, 1);
        assert_eq!(lo.mac, [0; 6]);
        assert!(lo.mtu >= 1500);
        assert!(rx_queues("lo").unwrap() >= 1);
        assert!(matches!(info("nonexistent0"), Err(IfaceError::Missing(_))));
    }

    #[test]
    fn every_queue_and_shard_is_covered() {
        for shards in 1..=9 {
            for queues in 1..=9 {
                let plan = queue_plan(shards, queues);
                assert_eq!(plan.len() as u32, queues);
                assert!(plan.iter().all(|q| !q.is_empty()), "{shards}/{queues}");
                for s in 0..shards {
                    assert!(
                        plan.iter().any(|q| q.contains(&s)),
                        "shard {s} of {shards} has no socket on {queues} queues"
                    );
                }
            }
        }
        assert_eq!(queue_plan(4, 2), vec![vec![0, 2], vec![1, 3]]);
        assert_eq!(queue_plan(2, 4), vec![vec![0], vec![1], vec![0], vec![1]]);
    }
}
