//! Forwarder-wide datasets: the general status (status/general) and CsInfo (cs/info).

use ndx_codec::Tlv;

use crate::MgmtError;
use crate::tlv;
use crate::wire::{Fields, put_nested, read_outer};
use ndx_codec::{push_nni_tlv, push_tlv};

/// The general status (status/general): the dataset's Content is these elements directly,
/// with no enclosing TLV. Timestamps are milliseconds since the Unix epoch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ForwarderStatus {
    /// NfdVersion (UTF-8).
    pub nfd_version: String,
    /// StartTimestamp.
    pub start_timestamp: u64,
    /// CurrentTimestamp.
    pub current_timestamp: u64,
    /// NNameTreeEntries.
    pub n_name_tree_entries: u64,
    /// NFibEntries.
    pub n_fib_entries: u64,
    /// NPitEntries.
    pub n_pit_entries: u64,
    /// NMeasurementsEntries.
    pub n_measurements_entries: u64,
    /// NCsEntries.
    pub n_cs_entries: u64,
    /// NInInterests.
    pub n_in_interests: u64,
    /// NInData.
    pub n_in_data: u64,
    /// NInNacks.
    pub n_in_nacks: u64,
    /// NOutInterests.
    pub n_out_interests: u64,
    /// NOutData.
    pub n_out_data: u64,
    /// NOutNacks.
    pub n_out_nacks: u64,
    /// NSatisfiedInterests.
    pub n_satisfied_interests: u64,
    /// NUnsatisfiedInterests.
    pub n_unsatisfied_interests: u64,
}

/// The general status's integer fields after NfdVersion, in NFD's order.
const GENERAL: [(u64, &str); 15] = [
    (tlv::START_TIMESTAMP, "StartTimestamp"),
    (tlv::CURRENT_TIMESTAMP, "CurrentTimestamp"),
    (tlv::N_NAME_TREE_ENTRIES, "NNameTreeEntries"),
    (tlv::N_FIB_ENTRIES, "NFibEntries"),
    (tlv::N_PIT_ENTRIES, "NPitEntries"),
    (tlv::N_MEASUREMENTS_ENTRIES, "NMeasurementsEntries"),
    (tlv::N_CS_ENTRIES, "NCsEntries"),
    (tlv::N_IN_INTERESTS, "NInInterests"),
    (tlv::N_IN_DATA, "NInData"),
    (tlv::N_IN_NACKS, "NInNacks"),
    (tlv::N_OUT_INTERESTS, "NOutInterests"),
    (tlv::N_OUT_DATA, "NOutData"),
    (tlv::N_OUT_NACKS, "NOutNacks"),
    (tlv::N_SATISFIED_INTERESTS, "NSatisfiedInterests"),
    (tlv::N_UNSATISFIED_INTERESTS, "NUnsatisfiedInterests"),
];

const GENERAL_STATUS: &str = "GeneralStatus";

impl ForwarderStatus {
    fn numbers(&self) -> [u64; 15] {
        [
            self.start_timestamp,
            self.current_timestamp,
            self.n_name_tree_entries,
            self.n_fib_entries,
            self.n_pit_entries,
            self.n_measurements_entries,
            self.n_cs_entries,
            self.n_in_interests,
            self.n_in_data,
            self.n_in_nacks,
            self.n_out_interests,
            self.n_out_data,
            self.n_out_nacks,
            self.n_satisfied_interests,
            self.n_unsatisfied_interests,
        ]
    }

    /// Appends the general status's elements (the whole dataset Content), in NFD's order.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        push_tlv(out, tlv::NFD_VERSION, self.nfd_version.as_bytes());
        for ((typ, _), v) in GENERAL.iter().zip(self.numbers()) {
            push_nni_tlv(out, *typ, v);
        }
    }

    /// Decodes the general status from the dataset's reassembled Content. Every field is
    /// required; the counters ndnd adds (`tlv::NDND_STATUS_EXTENSIONS`) are skipped.
    pub fn decode(content: &[u8]) -> Result<Self, MgmtError> {
        let mut f = Fields::over(content, 0, GENERAL_STATUS);
        let mut version = None;
        let mut n: [Option<u64>; 15] = [None; 15];
        while let Some(e) = f.next()? {
            if e.typ == tlv::NFD_VERSION {
                f.set_string(&mut version, &e, "NfdVersion")?;
            } else if let Some(i) = GENERAL.iter().position(|&(t, _)| t == e.typ) {
                f.set_nni(&mut n[i], &e, GENERAL[i].1)?;
            } else if !tlv::NDND_STATUS_EXTENSIONS.contains(&e.typ) {
                f.unknown(&e)?;
            }
        }
        let mut v = [0; 15];
        for (i, x) in n.into_iter().enumerate() {
            v[i] = f.required(x, GENERAL[i].1)?;
        }
        let [
            start_timestamp,
            current_timestamp,
            n_name_tree_entries,
            n_fib_entries,
            n_pit_entries,
            n_measurements_entries,
            n_cs_entries,
            n_in_interests,
            n_in_data,
            n_in_nacks,
            n_out_interests,
            n_out_data,
            n_out_nacks,
            n_satisfied_interests,
            n_unsatisfied_interests,
        ] = v;
        Ok(Self {
            nfd_version: f.required(version, "NfdVersion")?,
            start_timestamp,
            current_timestamp,
            n_name_tree_entries,
            n_fib_entries,
            n_pit_entries,
            n_measurements_entries,
            n_cs_entries,
            n_in_interests,
            n_in_data,
            n_in_nacks,
            n_out_interests,
            n_out_data,
            n_out_nacks,
            n_satisfied_interests,
            n_unsatisfied_interests,
        })
    }
}

/// CsInfo (TLV-TYPE 0x80): the cs/info dataset's one element.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CsInfo {
    /// Capacity, in packets.
    pub capacity: u64,
    /// Flags ([`crate::cs_flags`]).
    pub flags: u64,
    /// NCsEntries.
    pub n_cs_entries: u64,
    /// NHits.
    pub n_hits: u64,
    /// NMisses.
    pub n_misses: u64,
}

const CS_INFO: &str = "CsInfo";

impl CsInfo {
    /// Appends the CsInfo TLV, in NFD's order.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        put_nested(out, tlv::CS_INFO, |v| {
            push_nni_tlv(v, tlv::CAPACITY, self.capacity);
            push_nni_tlv(v, tlv::FLAGS, self.flags);
            push_nni_tlv(v, tlv::N_CS_ENTRIES, self.n_cs_entries);
            push_nni_tlv(v, tlv::N_HITS, self.n_hits);
            push_nni_tlv(v, tlv::N_MISSES, self.n_misses);
        });
    }

    /// Decodes a whole CsInfo TLV (every field required).
    pub fn decode(wire: &[u8]) -> Result<Self, MgmtError> {
        Self::decode_tlv(&read_outer(wire, tlv::CS_INFO, CS_INFO)?)
    }

    fn decode_tlv(t: &Tlv<'_>) -> Result<Self, MgmtError> {
        let mut f = Fields::of(t, CS_INFO);
        let (mut capacity, mut flags, mut entries, mut hits, mut misses) =
            (None, None, None, None, None);
        while let Some(e) = f.next()? {
            match e.typ {
                tlv::CAPACITY => f.set_nni(&mut capacity, &e, "Capacity")?,
                tlv::FLAGS => f.set_nni(&mut flags, &e, "Flags")?,
                tlv::N_CS_ENTRIES => f.set_nni(&mut entries, &e, "NCsEntries")?,
                tlv::N_HITS => f.set_nni(&mut hits, &e, "NHits")?,
                tlv::N_MISSES => f.set_nni(&mut misses, &e, "NMisses")?,
                _ => f.unknown(&e)?,
            }
        }
        Ok(Self {
            capacity: f.required(capacity, "Capacity")?,
            flags: f.required(flags, "Flags")?,
            n_cs_entries: f.required(entries, "NCsEntries")?,
            n_hits: f.required(hits, "NHits")?,
            n_misses: f.required(misses, "NMisses")?,
        })
    }
}
