//! Management requests: recognising `/localhost/nfd/...` and `/localhop/nfd/...` names and
//! splitting them into module, verb and arguments.

use ndx_codec::types as tt;
use ndx_codec::{Component, Name, Reader};

use crate::MgmtError;
use crate::face::FaceQueryFilter;
use crate::params::ControlParameters;
use crate::tlv;

/// Which management prefix a request came under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// `/localhost/nfd`: applications on this host.
    Localhost,
    /// `/localhop/nfd`: neighbours one hop away.
    Localhop,
}

impl Scope {
    /// The first name component's value (`localhost` or `localhop`).
    pub fn component(self) -> &'static [u8] {
        match self {
            Self::Localhost => b"localhost",
            Self::Localhop => b"localhop",
        }
    }
}

/// A management request, from its Interest name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The prefix it came under.
    pub scope: Scope,
    /// The module (`faces`, `fib`, `rib`, `cs`, `strategy-choice`, `status`).
    pub module: String,
    /// The verb (`register`, `create`, `list`, ...).
    pub verb: String,
    /// The ControlParameters after the verb, for a command.
    pub params: Option<ControlParameters>,
    /// The FaceQueryFilter after the verb, for faces/query.
    pub filter: Option<FaceQueryFilter>,
}

fn generic_is(c: Option<Component<'_>>, value: &[u8]) -> bool {
    c.is_some_and(|c| u64::from(c.typ()) == tt::GENERIC_NAME_COMPONENT && c.value() == value)
}

/// The scope of a name under `/localhost/nfd` or `/localhop/nfd` (two GenericNameComponents),
/// `None` for any other name. Compares at most two components; allocates nothing.
pub fn is_management(name: &Name<'_>) -> Option<Scope> {
    if !generic_is(name.get(1), b"nfd") {
        return None;
    }
    [Scope::Localhost, Scope::Localhop]
        .into_iter()
        .find(|s| generic_is(name.get(0), s.component()))
}

fn text(c: Option<Component<'_>>, what: &'static str) -> Result<String, MgmtError> {
    c.filter(|c| u64::from(c.typ()) == tt::GENERIC_NAME_COMPONENT)
        .and_then(|c| core::str::from_utf8(c.value()).ok())
        .map(str::to_owned)
        .ok_or(MgmtError::BadComponent(what))
}

/// Splits a management name, `/<localhost|localhop>/nfd/<module>/<verb>[/<argument>/...]`.
///
/// The component after the verb, when it is a GenericNameComponent, must hold a whole
/// ControlParameters TLV (decoded into `params`) or a FaceQueryFilter (into `filter`):
/// anything else there is an error, which a forwarder answers with status 400. Any other
/// component type there (the version or segment of a dataset request, the
/// ParametersSha256DigestComponent of a signed Interest) leaves both `None`; so do names
/// with nothing after the verb. Components after the argument (signature components of a
/// pre-v0.3 signed command) are not looked at. Errors in the argument carry offsets counted
/// from the start of the component's value.
pub fn parse_request(name: &Name<'_>) -> Result<Request, MgmtError> {
    let scope = is_management(name).ok_or(MgmtError::NotManagement)?;
    if name.len() < 4 {
        return Err(MgmtError::TooShort(name.len()));
    }
    let module = text(name.get(2), "module")?;
    let verb = text(name.get(3), "verb")?;
    let mut request = Request {
        scope,
        module,
        verb,
        params: None,
        filter: None,
    };
    let Some(arg) = name.get(4) else {
        return Ok(request);
    };
    if u64::from(arg.typ()) != tt::GENERIC_NAME_COMPONENT {
        return Ok(request);
    }
    match Reader::new(arg.value()).peek_type() {
        Some(tlv::FACE_QUERY_FILTER) => {
            request.filter = Some(FaceQueryFilter::decode(arg.value())?);
        }
        // ControlParameters, or whatever else is there: decoding reports what is wrong
        // (wrong type, truncated, empty component).
        _ => request.params = Some(ControlParameters::decode(arg.value())?),
    }
    Ok(request)
}
