//! The program's per-CPU counters, summed.

use core::fmt;

/// A struct of named `u64` counters in the order of a program's counter map: the fields,
/// `COUNT`, `from_slice` (map order) and `iter` (`(label, value)` pairs). Used for both
/// programs' counter sets.
macro_rules! counters {
    ($name:ident, $doc:literal, $($(#[doc = $d:literal])* $field:ident = $label:literal,)*) => {
        #[doc = $doc]
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct $name {
            $($(#[doc = $d])* pub $field: u64,)*
        }

        impl $name {
            /// Number of counters (entries of the program's counter map).
            pub const COUNT: usize = [$($label),*].len();

            pub(crate) fn from_slice(v: &[u64]) -> Self {
                let mut it = v.iter().copied();
                Self { $($field: it.next().unwrap_or(0),)* }
            }

            /// `(label, value)` pairs, in map order.
            pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> {
                [$(($label, self.$field)),*].into_iter()
            }
        }
    };
}

pub(crate) use counters;

counters! {
    XdpCounters, "The program's counters summed over CPUs (same order as the C enum in ndx.c).",
    /// Not NDN: passed to the kernel untouched.
    passed_not_ndn = "passed-not-ndn",
    /// IPv4 fragments: passed.
    passed_ip_fragment = "passed-ip-fragment",
    /// NDN over UDP/IPv4.
    udp4 = "udp4",
    /// NDN over UDP/IPv6.
    udp6 = "udp6",
    /// NDN over Ethernet.
    ether = "ether",
    /// Interests.
    interest = "interest",
    /// Data.
    data = "data",
    /// Nacks.
    nack = "nack",
    /// NDNLPv2 fragments (FragCount > 1).
    fragment = "fragment",
    /// LpPackets without a Fragment.
    lp_other = "lp-other",
    /// Unparseable NDN, sent by source (user space drops it).
    malformed = "malformed",
    /// Names too long to hash in XDP, sent by source (user space re-dispatches).
    name_too_long = "name-too-long",
    /// Shard chosen by PIT token.
    by_token = "by-token",
    /// Shard chosen by name hash.
    by_name = "by-name",
    /// Shard chosen by source.
    by_source = "by-source",
    /// Redirected to an AF_XDP socket.
    redirected = "redirected",
    /// Empty XSKMAP entry (or queue beyond the map): passed to the kernel.
    redirect_failed = "redirect-failed",
    /// bpf_xdp_adjust_meta failed: redirected without metadata.
    meta_failed = "meta-failed",
    /// `redirect_all` frames.
    raw = "raw",
    /// NDN frames sent to shard 0 without parsing (`classify` off: one shard).
    unclassified = "unclassified",
}

/// The one-shard path's counters (`C_U_*` in ndx.c), after the named ones: UDP/IPv4,
/// UDP/IPv6 and Ethernet, each redirected then failed.
const ONE_SHARD: usize = 6;
/// The classifying path's counters (`C_K` in ndx.c), after those: one per encapsulation (3),
/// kind (6, as [`crate::Kind`]'s values), how (3: token, name, source) and outcome (2:
/// redirected, failed), at `((encap * 6 + kind) * 3 + how) * 2 + failed`.
const CLASSIFIED: usize = 3 * 6 * 3 * 2;

/// Entries of the program's counter map (`ndx_stats`): the [`XdpCounters::COUNT`] named
/// counters in their order, then the per-frame ones that [`XdpCounters::from_raw`] folds into
/// them.
pub(crate) const RAW_COUNT: usize = XdpCounters::COUNT + ONE_SHARD + CLASSIFIED;

impl XdpCounters {
    /// The counters from the program's raw map (`RAW_COUNT` entries, summed over CPUs).
    ///
    /// The program increments one counter per NDN frame instead of one per property: with
    /// `classify` off (one shard) by encapsulation and redirect outcome, with it on by
    /// encapsulation, kind, how and outcome. They are folded here into `udp4`/`udp6`/
    /// `ether`, the kinds, `by-token`/`by-name`/`by-source`, `unclassified`, `redirected` and
    /// `redirect-failed`, which keep their meaning. A shorter slice (an older object's map)
    /// folds what it has.
    pub(crate) fn from_raw(raw: &[u64]) -> Self {
        let mut c = Self::from_slice(raw);
        let at = |i: usize| raw.get(Self::COUNT + i).copied().unwrap_or(0);
        for i in 0..ONE_SHARD {
            let v = at(i);
            c.unclassified += v;
            c.count_encap(i / 2, v);
            c.count_outcome(i % 2 == 1, v);
        }
        for i in 0..CLASSIFIED {
            let v = at(ONE_SHARD + i);
            c.count_encap(i / 36, v);
            match (i / 6) % 6 {
                1 => c.interest += v,
                2 => c.data += v,
                3 => c.nack += v,
                4 => c.fragment += v,
                5 => c.lp_other += v,
                _ => c.malformed += v,
            }
            match (i / 2) % 3 {
                0 => c.by_token += v,
                1 => c.by_name += v,
                _ => c.by_source += v,
            }
            c.count_outcome(i % 2 == 1, v);
        }
        c
    }

    fn count_encap(&mut self, encap: usize, v: u64) {
        match encap {
            0 => self.udp4 += v,
            1 => self.udp6 += v,
            _ => self.ether += v,
        }
    }

    fn count_outcome(&mut self, failed: bool, v: u64) {
        if failed {
            self.redirect_failed += v;
        } else {
            self.redirected += v;
        }
    }
}

impl fmt::Display for XdpCounters {
    /// One `label value` line per non-zero counter.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (label, v) in self.iter().filter(|(_, v)| *v != 0) {
            writeln!(f, "{label:>20} {v}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_order_matches_fields_and_display_skips_zeros() {
        let v: Vec<u64> = (1..=XdpCounters::COUNT as u64).collect();
        let c = XdpCounters::from_slice(&v);
        assert_eq!(c.passed_not_ndn, 1);
        assert_eq!(c.unclassified, XdpCounters::COUNT as u64);
        assert_eq!(XdpCounters::COUNT, 20);
        let d = XdpCounters {
            data: 5,
            ..Default::default()
        }
        .to_string();
        assert_eq!(d.trim(), "data 5");
    }

    #[test]
    fn the_per_frame_counters_fold_into_the_named_ones() {
        let mut raw = vec![0u64; RAW_COUNT];
        raw[1] = 4; // passed-ip-fragment, kept as is
        raw[11] = 2; // name-too-long, kept as is
        // One shard: udp4 ok/failed, udp6 ok/failed, ether ok/failed.
        raw[XdpCounters::COUNT..][..ONE_SHARD].copy_from_slice(&[7, 1, 5, 2, 3, 4]);
        let k = |encap: usize, kind: usize, how: usize, failed: usize| {
            XdpCounters::COUNT + ONE_SHARD + ((encap * 6 + kind) * 3 + how) * 2 + failed
        };
        raw[k(0, 1, 1, 0)] = 100; // udp4 Interest by name, redirected
        raw[k(1, 2, 0, 0)] = 30; // udp6 Data by token, redirected
        raw[k(2, 3, 1, 1)] = 6; // Ethernet Nack by name, failed
        raw[k(0, 4, 2, 0)] = 5; // udp4 fragment by source
        raw[k(0, 5, 2, 1)] = 3; // udp4 LpOther by source, failed
        raw[k(1, 0, 2, 0)] = 8; // udp6 malformed by source
        raw[k(2, 2, 1, 0)] = 9; // Ethernet Data by name
        let c = XdpCounters::from_raw(&raw);
        assert_eq!((c.passed_ip_fragment, c.name_too_long), (4, 2));
        assert_eq!((c.udp4, c.udp6, c.ether), (8 + 108, 7 + 38, 7 + 15));
        assert_eq!(c.unclassified, 22);
        assert_eq!(
            (
                c.interest,
                c.data,
                c.nack,
                c.fragment,
                c.lp_other,
                c.malformed
            ),
            (100, 39, 6, 5, 3, 8)
        );
        assert_eq!((c.by_token, c.by_name, c.by_source), (30, 115, 16));
        assert_eq!(c.redirected, 7 + 5 + 3 + 100 + 30 + 5 + 8 + 9);
        assert_eq!(c.redirect_failed, 1 + 2 + 4 + 6 + 3);
        assert_eq!(c.udp4 + c.udp6 + c.ether, c.redirected + c.redirect_failed);
        assert_eq!(XdpCounters::from_raw(&raw[..XdpCounters::COUNT]).udp4, 0);
    }
}
