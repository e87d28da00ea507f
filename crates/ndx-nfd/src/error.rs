//! The crate's one error type.

/// Why a management element, name or response was refused. Each variant names the element
/// (`what`, `context`: the protocol's names, e.g. `"FaceId"` in `"ControlParameters"`) and,
/// where there is one, the byte offset from the start of the buffer handed to the decoder.
///
/// `Copy` and allocation-free, like the codec's [`ndx_codec::Error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MgmtError {
    /// The bytes are not well-formed TLV (bad VAR-NUMBER, length past the end, bad Name...).
    #[error("malformed TLV: {0}")]
    Tlv(#[from] ndx_codec::Error),
    /// The outer element is not the one expected.
    #[error(
        "expected {expected} (TLV-TYPE {expected_type:#x}), found TLV-TYPE {found:#x} at offset {offset}"
    )]
    WrongType {
        /// The element expected.
        expected: &'static str,
        /// Its TLV-TYPE.
        expected_type: u64,
        /// The TLV-TYPE found.
        found: u64,
        /// Where.
        offset: usize,
    },
    /// An unrecognised element whose TLV-TYPE is critical (below 32, or odd).
    #[error("unrecognised critical TLV-TYPE {typ:#x} in {context} at offset {offset}")]
    UnknownCritical {
        /// The TLV-TYPE found.
        typ: u64,
        /// The element it was found in.
        context: &'static str,
        /// Where.
        offset: usize,
    },
    /// A non-repeatable element appears twice.
    #[error("{what} appears twice in {context} (offset {offset})")]
    Duplicate {
        /// The repeated element.
        what: &'static str,
        /// The element it was found in.
        context: &'static str,
        /// Where the second one starts.
        offset: usize,
    },
    /// A required element is absent.
    #[error("{what} is missing from {context}")]
    Missing {
        /// The missing element.
        what: &'static str,
        /// The element it belongs in.
        context: &'static str,
    },
    /// An element that must come first (or in order) is elsewhere.
    #[error("{what} is out of order in {context} (offset {offset})")]
    OutOfOrder {
        /// The element.
        what: &'static str,
        /// The element it was found in.
        context: &'static str,
        /// Where.
        offset: usize,
    },
    /// A NonNegativeInteger whose length is not 1, 2, 4 or 8.
    #[error("{what} has invalid NonNegativeInteger length {len} (offset {offset})")]
    BadInteger {
        /// The element.
        what: &'static str,
        /// Its TLV-LENGTH.
        len: usize,
        /// Where.
        offset: usize,
    },
    /// A value too large for the field (a StatusCode above 2^32-1).
    #[error("{what} value {value} is out of range (offset {offset})")]
    OutOfRange {
        /// The element.
        what: &'static str,
        /// The value read.
        value: u64,
        /// Where.
        offset: usize,
    },
    /// A string element that is not UTF-8.
    #[error("{what} is not valid UTF-8 (offset {offset})")]
    NotUtf8 {
        /// The element.
        what: &'static str,
        /// Where.
        offset: usize,
    },
    /// Bytes after the element that should fill the input.
    #[error("{len} trailing bytes after {what}")]
    TrailingBytes {
        /// The element.
        what: &'static str,
        /// How many bytes follow it.
        len: usize,
    },
    /// The name is not under `/localhost/nfd` or `/localhop/nfd`.
    #[error("not a management name (expected /localhost/nfd/... or /localhop/nfd/...)")]
    NotManagement,
    /// The name has no module or no verb.
    #[error("a management name needs /<scope>/nfd/<module>/<verb>, this one has {0} components")]
    TooShort(usize),
    /// The module or verb component is not a GenericNameComponent in UTF-8.
    #[error("the {0} component is not a UTF-8 GenericNameComponent")]
    BadComponent(&'static str),
}
