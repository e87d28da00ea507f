//! ControlResponse: the Content of a command's response Data.

use crate::MgmtError;
use crate::params::ControlParameters;
use crate::status;
use crate::tlv;
use crate::wire::{Fields, nni, put_nested, read_outer, string};
use ndx_codec::{push_nni_tlv, push_tlv};

/// ControlResponse (TLV-TYPE 0x65): StatusCode, StatusText, and the ControlParameters the
/// forwarder applied (NFD and ndnd echo them on success).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlResponse {
    /// StatusCode ([`crate::status`]).
    pub code: u32,
    /// StatusText.
    pub text: String,
    /// The body: the parameters as applied (with defaults filled in), usually only on
    /// success.
    pub body: Option<ControlParameters>,
}

const CONTEXT: &str = "ControlResponse";

impl ControlResponse {
    /// A response without a body.
    pub fn new(code: u32, text: impl Into<String>) -> Self {
        Self {
            code,
            text: text.into(),
            body: None,
        }
    }

    /// A 200 "OK" response echoing `body`.
    pub fn ok(body: ControlParameters) -> Self {
        Self {
            code: status::OK,
            text: "OK".to_owned(),
            body: Some(body),
        }
    }

    /// True for status 200.
    pub fn is_ok(&self) -> bool {
        self.code == status::OK
    }

    /// Decodes a whole ControlResponse TLV. StatusCode and StatusText must come first, in
    /// that order (ndn-cxx requires it), then an optional ControlParameters body; after them
    /// unknown non-critical elements are skipped, anything else is an error.
    pub fn decode(wire: &[u8]) -> Result<Self, MgmtError> {
        let t = read_outer(wire, tlv::CONTROL_RESPONSE, CONTEXT)?;
        let mut f = Fields::of(&t, CONTEXT);
        let code = match f.next()? {
            Some(e) if e.typ == tlv::STATUS_CODE => {
                let v = nni(&e, "StatusCode")?;
                u32::try_from(v).map_err(|_| MgmtError::OutOfRange {
                    what: "StatusCode",
                    value: v,
                    offset: e.offset,
                })?
            }
            Some(e) => {
                return Err(MgmtError::OutOfOrder {
                    what: "StatusCode",
                    context: CONTEXT,
                    offset: e.offset,
                });
            }
            None => {
                return Err(MgmtError::Missing {
                    what: "StatusCode",
                    context: CONTEXT,
                });
            }
        };
        let text = match f.next()? {
            Some(e) if e.typ == tlv::STATUS_TEXT => string(&e, "StatusText")?,
            Some(e) => {
                return Err(MgmtError::OutOfOrder {
                    what: "StatusText",
                    context: CONTEXT,
                    offset: e.offset,
                });
            }
            None => {
                return Err(MgmtError::Missing {
                    what: "StatusText",
                    context: CONTEXT,
                });
            }
        };
        let mut body = None;
        while let Some(e) = f.next()? {
            match e.typ {
                tlv::CONTROL_PARAMETERS => {
                    let p = ControlParameters::decode_tlv(&e)?;
                    f.set(&mut body, &e, "ControlParameters", p)?;
                }
                _ => f.unknown(&e)?,
            }
        }
        Ok(Self { code, text, body })
    }

    /// Appends the ControlResponse TLV.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        put_nested(out, tlv::CONTROL_RESPONSE, |v| {
            push_nni_tlv(v, tlv::STATUS_CODE, u64::from(self.code));
            push_tlv(v, tlv::STATUS_TEXT, self.text.as_bytes());
            if let Some(b) = &self.body {
                b.encode_into(v);
            }
        });
    }

    /// The ControlResponse TLV, as a new vector.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }
}
