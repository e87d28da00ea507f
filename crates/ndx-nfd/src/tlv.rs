//! TLV-TYPE numbers of the NFD Management protocol.
//!
//! Every number was checked against ndn-cxx's `ndn-cxx/encoding/tlv-nfd.hpp` (the reference
//! for NFD), ndnd's `std/ndn/mgmt_2022/definitions.go` and python-ndn's
//! `ndn/app_support/nfd_mgmt.py`; the three agree on all of them. Numbers are reused across
//! contexts (0x80 is FaceStatus in the faces dataset, FibEntry in the FIB dataset, NfdVersion
//! in the general status, ...): the decoder of each element knows which one it reads.

// ControlParameters (ControlCommand).
/// ControlParameters, the argument of a command (in a name component) and the body of its
/// response.
pub const CONTROL_PARAMETERS: u64 = 0x68;
/// FaceId (NonNegativeInteger).
pub const FACE_ID: u64 = 0x69;
/// Cost (NonNegativeInteger).
pub const COST: u64 = 0x6a;
/// Strategy (holds a Name).
pub const STRATEGY: u64 = 0x6b;
/// Flags (NonNegativeInteger; route flags, face flags or CS flags by context).
pub const FLAGS: u64 = 0x6c;
/// ExpirationPeriod (NonNegativeInteger, milliseconds).
pub const EXPIRATION_PERIOD: u64 = 0x6d;
/// Origin (NonNegativeInteger, a route origin).
pub const ORIGIN: u64 = 0x6f;
/// Mask (NonNegativeInteger, which Flags bits a command sets).
pub const MASK: u64 = 0x70;
/// Uri (UTF-8 string, a face's remote URI).
pub const URI: u64 = 0x72;
/// LocalUri (UTF-8 string).
pub const LOCAL_URI: u64 = 0x81;
/// Capacity (NonNegativeInteger, CS capacity in packets).
pub const CAPACITY: u64 = 0x83;
/// Count (NonNegativeInteger, cs/erase).
pub const COUNT: u64 = 0x84;
/// FacePersistency (NonNegativeInteger).
pub const FACE_PERSISTENCY: u64 = 0x85;
/// BaseCongestionMarkingInterval (NonNegativeInteger, nanoseconds).
pub const BASE_CONGESTION_MARKING_INTERVAL: u64 = 0x87;
/// DefaultCongestionThreshold (NonNegativeInteger, bytes).
pub const DEFAULT_CONGESTION_THRESHOLD: u64 = 0x88;
/// Mtu (NonNegativeInteger, bytes).
pub const MTU: u64 = 0x89;

// ControlResponse.
/// ControlResponse, the Content of a command's response Data.
pub const CONTROL_RESPONSE: u64 = 0x65;
/// StatusCode (NonNegativeInteger, HTTP-like).
pub const STATUS_CODE: u64 = 0x66;
/// StatusText (UTF-8 string).
pub const STATUS_TEXT: u64 = 0x67;

// Face management (faces/list, faces/query, faces/events).
/// FaceStatus, one entry of the faces/list dataset.
pub const FACE_STATUS: u64 = 0x80;
/// ChannelStatus, one entry of the faces/channels dataset.
pub const CHANNEL_STATUS: u64 = 0x82;
/// UriScheme (UTF-8 string, in a FaceQueryFilter).
pub const URI_SCHEME: u64 = 0x83;
/// FaceScope (NonNegativeInteger).
pub const FACE_SCOPE: u64 = 0x84;
/// LinkType (NonNegativeInteger).
pub const LINK_TYPE: u64 = 0x86;
/// FaceQueryFilter, the argument of faces/query.
pub const FACE_QUERY_FILTER: u64 = 0x96;
/// FaceEventNotification, one notification of the faces/events stream.
pub const FACE_EVENT_NOTIFICATION: u64 = 0xc0;
/// FaceEventKind (NonNegativeInteger).
pub const FACE_EVENT_KIND: u64 = 0xc1;

// Counters (FaceStatus and the general status).
/// NInInterests.
pub const N_IN_INTERESTS: u64 = 0x90;
/// NInData.
pub const N_IN_DATA: u64 = 0x91;
/// NOutInterests.
pub const N_OUT_INTERESTS: u64 = 0x92;
/// NOutData.
pub const N_OUT_DATA: u64 = 0x93;
/// NInBytes.
pub const N_IN_BYTES: u64 = 0x94;
/// NOutBytes.
pub const N_OUT_BYTES: u64 = 0x95;
/// NInNacks.
pub const N_IN_NACKS: u64 = 0x97;
/// NOutNacks.
pub const N_OUT_NACKS: u64 = 0x98;
/// NSatisfiedInterests.
pub const N_SATISFIED_INTERESTS: u64 = 0x99;
/// NUnsatisfiedInterests.
pub const N_UNSATISFIED_INTERESTS: u64 = 0x9a;

// Forwarder status (status/general): the dataset's Content is these elements, unwrapped.
/// NfdVersion (UTF-8 string).
pub const NFD_VERSION: u64 = 0x80;
/// StartTimestamp (NonNegativeInteger, milliseconds since the Unix epoch).
pub const START_TIMESTAMP: u64 = 0x81;
/// CurrentTimestamp (NonNegativeInteger, milliseconds since the Unix epoch).
pub const CURRENT_TIMESTAMP: u64 = 0x82;
/// NNameTreeEntries.
pub const N_NAME_TREE_ENTRIES: u64 = 0x83;
/// NFibEntries.
pub const N_FIB_ENTRIES: u64 = 0x84;
/// NPitEntries.
pub const N_PIT_ENTRIES: u64 = 0x85;
/// NMeasurementsEntries.
pub const N_MEASUREMENTS_ENTRIES: u64 = 0x86;
/// NCsEntries (also in CsInfo).
pub const N_CS_ENTRIES: u64 = 0x87;
/// First of the counters ndnd adds to the general status (0xc8..=0xd0: NFragmentationError,
/// NOutOverMtu, NInLpInvalid, NReassemblyTimeouts, NInNetInvalid, NAcknowledged,
/// NRetransmitted, NRetxExhausted, NCongestionMarked; from DNMP, not in NFD's spec). Skipped
/// when decoding, never written.
pub const NDND_STATUS_EXTENSIONS: core::ops::RangeInclusive<u64> = 0xc8..=0xd0;

// Content store (cs/info).
/// CsInfo, the cs/info dataset's one element.
pub const CS_INFO: u64 = 0x80;
/// NHits.
pub const N_HITS: u64 = 0x81;
/// NMisses.
pub const N_MISSES: u64 = 0x82;

// FIB (fib/list).
/// FibEntry, one entry of the fib/list dataset.
pub const FIB_ENTRY: u64 = 0x80;
/// NextHopRecord (in a FibEntry).
pub const NEXT_HOP_RECORD: u64 = 0x81;

// Strategy choice (strategy-choice/list).
/// StrategyChoice, one entry of the strategy-choice/list dataset.
pub const STRATEGY_CHOICE: u64 = 0x80;

// RIB (rib/list).
/// RibEntry, one entry of the rib/list dataset.
pub const RIB_ENTRY: u64 = 0x80;
/// Route (in a RibEntry).
pub const ROUTE: u64 = 0x81;
