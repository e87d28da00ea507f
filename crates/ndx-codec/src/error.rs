//! The codec's one error type: what went wrong, and where.

use core::fmt;

/// A decoding or encoding failure: what went wrong ([`ErrorKind`]) and the byte offset where it
/// was found, counted from the start of the buffer handed to the outermost decoder.
///
/// `Copy`, allocation-free and cheap to return on the hot path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{kind} at offset {offset}")]
pub struct Error {
    /// What went wrong.
    pub kind: ErrorKind,
    /// Byte offset of the offending element (or of the end of input when input ran out).
    pub offset: usize,
}

impl Error {
    pub(crate) const fn new(kind: ErrorKind, offset: usize) -> Self {
        Self { kind, offset }
    }
}

/// The named TLV elements of NDN packet format v0.3 and NDNLPv2, for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[expect(
    missing_docs,
    reason = "each variant is the TLV element of the same name"
)]
pub enum Element {
    Packet,
    Interest,
    Data,
    Name,
    NameComponent,
    CanBePrefix,
    MustBeFresh,
    ForwardingHint,
    Nonce,
    InterestLifetime,
    HopLimit,
    ApplicationParameters,
    InterestSignatureInfo,
    InterestSignatureValue,
    MetaInfo,
    ContentType,
    FreshnessPeriod,
    FinalBlockId,
    Content,
    SignatureInfo,
    SignatureValue,
    SignatureType,
    LpPacket,
    Fragment,
    Sequence,
    FragIndex,
    FragCount,
    PitToken,
    Nack,
    NackReason,
    IncomingFaceId,
    NextHopFaceId,
    CachePolicy,
    CachePolicyType,
    CongestionMark,
    Ack,
    TxSequence,
    NonDiscovery,
    PrefixAnnouncement,
    NonNegativeInteger,
}

impl fmt::Display for Element {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// What went wrong. Every variant is `Copy` and carries the facts needed for a clear message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ErrorKind {
    /// The input ended inside a VAR-NUMBER.
    #[error("input ends inside a VAR-NUMBER")]
    TruncatedVarNumber,
    /// A VAR-NUMBER used a longer form than its value needs (e.g. `FD 00 05` for 5).
    #[error("non-minimal VAR-NUMBER encoding")]
    NonMinimalVarNumber,
    /// TLV-TYPE 0 or above 2^32-1.
    #[error("TLV-TYPE {0} is out of the valid range 1..=4294967295")]
    InvalidType(u64),
    /// A TLV-LENGTH that runs past the end of its enclosing element.
    #[error("TLV-LENGTH {length} exceeds the {remaining} bytes that remain")]
    LengthPastEnd {
        /// The TLV-LENGTH that was read.
        length: u64,
        /// How many bytes were actually left.
        remaining: usize,
    },
    /// An unrecognised (or out-of-order/repeated) element whose TLV-TYPE is critical
    /// (type < 32 or odd), which the receiver must not ignore.
    #[error("unrecognised critical TLV-TYPE {typ} in {context}")]
    UnknownCritical {
        /// The TLV-TYPE found.
        typ: u64,
        /// The element it was found in.
        context: Element,
    },
    /// Elements nested deeper than the decoder's bound.
    #[error("elements nested deeper than {0} levels")]
    TooDeep(u8),
    /// A different element was expected here.
    #[error("expected {expected}, found TLV-TYPE {found}")]
    Unexpected {
        /// The element that must come here.
        expected: Element,
        /// The TLV-TYPE that came instead.
        found: u64,
    },
    /// A required element is absent.
    #[error("{0} is missing")]
    Missing(Element),
    /// An element's TLV-LENGTH is not allowed for that element.
    #[error("{what} has invalid length {len}")]
    BadLength {
        /// The element.
        what: Element,
        /// Its TLV-LENGTH.
        len: usize,
    },
    /// An element's value breaks a rule of the spec (the element names which).
    #[error("invalid {0}")]
    Invalid(Element),
    /// Bytes after the packet that are not zero padding.
    #[error("{0} trailing bytes after the packet")]
    TrailingBytes(usize),
    /// The outer TLV is not an Interest, Data or LpPacket.
    #[error("TLV-TYPE {0} is not an NDN packet (Interest, Data or LpPacket)")]
    NotAPacket(u64),
    /// The output buffer is smaller than the encoding.
    #[error("output buffer too small: {need} bytes needed")]
    BufferTooSmall {
        /// Bytes the encoding needs.
        need: usize,
    },
    /// A value cannot be encoded as asked (e.g. an MTU too small to carry any fragment).
    #[error("cannot encode: {0}")]
    Unencodable(&'static str),
}

/// The codec's result type.
pub type Result<T, E = Error> = core::result::Result<T, E>;
