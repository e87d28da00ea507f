//! Shard selection ("name dispatch"): which shard handles a packet. Pure code that the XDP
//! program mirrors bit for bit (DESIGN.md, "The data path", point 1).
//!
//! - A Data or Nack carrying one of our PIT tokens goes to the shard in the token's byte 0.
//! - Otherwise the keyed name hash picks an entry of an indirection table (NDN-DPDK's NDT),
//!   which names the shard; the table can be rewritten live to rebalance load.
//!   The hashed bytes depend on the mode:
//!   - `Prefix(k)`: the first `k` components (NDN-DPDK's NDT);
//!   - `Content`: the name without a final SegmentNameComponent (seed 000's H=Content);
//!   - `Batch(b)`: the content name plus `segment / b` as 8 little-endian bytes (seed 000's
//!     H=Batch: a popular content spreads over shards, `b` segments at a time, which matches
//!     the L2 batch size so one shard owns each batch).

use ndx_codec::{ComponentKind, Name};

use crate::hash::HashKey;
use crate::pit::token_shard;

/// How names are hashed to shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DispatchMode {
    /// The first `k` components.
    Prefix(usize),
    /// The name without its final segment component.
    Content,
    /// Content name and `segment / b`.
    Batch(u64),
}

/// Why a dispatcher could not be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DispatchError {
    /// Between 1 and 256 shards are supported (the shard is one byte of the PIT token).
    #[error("{0} shards: between 1 and 256 are supported")]
    Shards(usize),
    /// The table size must be a power of two between the number of shards and 2^16.
    #[error(
        "indirection table of {0} entries: must be a power of two, at least the shard count, at most 65536"
    )]
    Table(usize),
    /// `Batch(0)` or `Prefix(0)`.
    #[error("batch size and prefix length must be at least 1")]
    Zero,
}

/// The shard-selection function.
#[derive(Debug, Clone)]
pub struct Dispatch {
    key: HashKey,
    mode: DispatchMode,
    table: Vec<u8>,
    shards: usize,
}

impl Dispatch {
    /// A dispatcher over `shards` shards with a `table_len`-entry indirection table filled
    /// round-robin.
    pub fn new(
        key: HashKey,
        mode: DispatchMode,
        shards: usize,
        table_len: usize,
    ) -> Result<Self, DispatchError> {
        if !(1..=256).contains(&shards) {
            return Err(DispatchError::Shards(shards));
        }
        if !table_len.is_power_of_two() || table_len < shards || table_len > 1 << 16 {
            return Err(DispatchError::Table(table_len));
        }
        if matches!(mode, DispatchMode::Prefix(0) | DispatchMode::Batch(0)) {
            return Err(DispatchError::Zero);
        }
        Ok(Self {
            key,
            mode,
            table: (0..table_len).map(|i| (i % shards) as u8).collect(),
            shards,
        })
    }

    /// The mode.
    pub fn mode(&self) -> DispatchMode {
        self.mode
    }

    /// Number of shards.
    pub fn shards(&self) -> usize {
        self.shards
    }

    /// The indirection table (entry `hash & (len - 1)` names the shard).
    pub fn table(&self) -> &[u8] {
        &self.table
    }

    /// Points table entry `index` at `shard` (live rebalancing); false if out of range.
    pub fn set_entry(&mut self, index: usize, shard: u8) -> bool {
        if usize::from(shard) >= self.shards {
            return false;
        }
        match self.table.get_mut(index) {
            Some(e) => {
                *e = shard;
                true
            }
            None => false,
        }
    }

    /// The dispatch hash of a name in this mode.
    pub fn hash(&self, name: &Name<'_>) -> u64 {
        match self.mode {
            DispatchMode::Prefix(k) => self.key.name(&name.prefix(k)),
            DispatchMode::Content => self.key.name(&content_of(name).0),
            DispatchMode::Batch(b) => {
                let (content, segment) = content_of(name);
                let batch = segment.map_or(0, |s| s / b);
                self.key
                    .hash_parts(&[content.as_bytes(), &batch.to_le_bytes()])
            }
        }
    }

    /// The shard for a packet that carries no usable name (an NDNLPv2 fragment): the keyed
    /// hash of its source address picks the table entry, so every fragment of one packet
    /// reaches the same shard, which reassembles and re-dispatches the whole packet.
    ///
    /// `source` is the source IPv4 (4 bytes) or IPv6 (16 bytes) address followed by the UDP
    /// source port in network byte order, or the 6-byte source MAC for Ethernet faces.
    pub fn source_shard(&self, source: &[u8]) -> u8 {
        let h = self.key.hash(source);
        self.table[(h as usize) & (self.table.len() - 1)]
    }

    /// The shard for a packet: by our PIT token when present, else by name.
    pub fn shard(&self, name: &Name<'_>, pit_token: Option<&[u8]>) -> u8 {
        if let Some(s) = pit_token.and_then(token_shard)
            && usize::from(s) < self.shards
        {
            return s;
        }
        let h = self.hash(name);
        self.table[(h as usize) & (self.table.len() - 1)]
    }
}

/// The content name (without a final segment component) and the segment number.
pub fn content_of<'a>(name: &Name<'a>) -> (Name<'a>, Option<u64>) {
    match name.split_last() {
        Some((content, last)) => match last.kind() {
            ComponentKind::Segment(s) => (content, Some(s)),
            _ => (*name, None),
        },
        None => (*name, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndx_codec::NameBuf;

    const KEY: HashKey = HashKey::new(21, 22);

    fn shard(d: &Dispatch, uri: &str) -> u8 {
        d.shard(&NameBuf::from_uri(uri).unwrap().as_name(), None)
    }

    #[test]
    fn content_mode_keeps_a_content_on_one_shard() {
        let d = Dispatch::new(KEY, DispatchMode::Content, 8, 256).unwrap();
        let first = shard(&d, "/movie/v=1/seg=0");
        for s in 1..100 {
            assert_eq!(shard(&d, &format!("/movie/v=1/seg={s}")), first);
        }
        assert_eq!(shard(&d, "/movie/v=1"), first, "the content name itself");
    }

    #[test]
    fn batch_mode_groups_b_segments_and_spreads_batches() {
        let d = Dispatch::new(KEY, DispatchMode::Batch(16), 8, 256).unwrap();
        for batch in 0..20u64 {
            let s0 = shard(&d, &format!("/movie/seg={}", batch * 16));
            for i in 1..16 {
                assert_eq!(shard(&d, &format!("/movie/seg={}", batch * 16 + i)), s0);
            }
        }
        let used: std::collections::HashSet<u8> = (0..64)
            .map(|b| shard(&d, &format!("/movie/seg={}", b * 16)))
            .collect();
        assert!(
            used.len() >= 6,
            "64 batches of one content use {} of 8 shards",
            used.len()
        );
    }

    #[test]
    fn prefix_mode_and_tokens() {
        let d = Dispatch::new(KEY, DispatchMode::Prefix(2), 4, 64).unwrap();
        assert_eq!(shard(&d, "/a/b/c"), shard(&d, "/a/b/d/e"));
        let n = NameBuf::from_uri("/a/b/c").unwrap();
        let token = [3, 0, 0, 1, 0, 1];
        assert_eq!(d.shard(&n.as_name(), Some(&token)), 3);
        // A foreign token (wrong length, or a shard we don't have) falls back to the name.
        assert_eq!(d.shard(&n.as_name(), Some(&[1; 8])), shard(&d, "/a/b/c"));
        assert_eq!(
            d.shard(&n.as_name(), Some(&[9, 0, 0, 0, 0, 0])),
            shard(&d, "/a/b/c")
        );
    }

    #[test]
    fn uniform_enough_and_rebalanceable() {
        let mut d = Dispatch::new(KEY, DispatchMode::Prefix(3), 4, 256).unwrap();
        let mut counts = [0u32; 4];
        for i in 0..8000 {
            counts[usize::from(shard(&d, &format!("/x/{i}/y")))] += 1;
        }
        assert!(
            counts.iter().all(|&c| (1700..2300).contains(&c)),
            "{counts:?}"
        );
        let n = NameBuf::from_uri("/x/1/y").unwrap();
        let idx = d.hash(&n.as_name()) as usize & 255;
        assert!(d.set_entry(idx, 2));
        assert_eq!(shard(&d, "/x/1/y"), 2);
        assert!(!d.set_entry(idx, 4), "no shard 4");
    }

    #[test]
    fn source_dispatch_is_stable_and_spreads() {
        let d = Dispatch::new(KEY, DispatchMode::Content, 4, 64).unwrap();
        let a = [10, 0, 0, 1, 0x18, 0xdb];
        assert_eq!(d.source_shard(&a), d.source_shard(&a));
        let used: std::collections::HashSet<u8> = (0..64u8)
            .map(|i| d.source_shard(&[10, 0, 0, i, 0x18, 0xdb]))
            .collect();
        assert_eq!(used.len(), 4, "64 sources reach every shard");
    }

    #[test]
    fn bad_configurations_are_refused() {
        assert_eq!(
            Dispatch::new(KEY, DispatchMode::Content, 0, 64).unwrap_err(),
            DispatchError::Shards(0)
        );
        assert_eq!(
            Dispatch::new(KEY, DispatchMode::Content, 4, 60).unwrap_err(),
            DispatchError::Table(60)
        );
        assert_eq!(
            Dispatch::new(KEY, DispatchMode::Batch(0), 4, 64).unwrap_err(),
            DispatchError::Zero
        );
    }
}
