//! Prefix registration with a local forwarder: `rib/register` over its Unix socket, answered
//! before the producer reports ready.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ndx_codec::{Interest, NameBuf, Packet};
use ndx_nfd::{ControlParameters, ControlResponse, Scope, command_interest, origin};

use crate::error::AppError;
use crate::face::{Face, Peer};
use ndx_codec::rng::Rng;

/// Commands sent before giving up (each with a fresh nonce and time).
const ATTEMPTS: u32 = 3;
/// How long each command waits for its response.
const WAIT: Duration = Duration::from_secs(2);

/// Registers `prefix` (origin app, cost 0, on the face the command arrives on) and waits for
/// the forwarder's answer: `Ok` with its response on status 200, an error naming the status
/// otherwise, a Nack or no answer at all. Packets other than the answer are dropped (nothing
/// else is expected before the route exists).
pub(crate) fn register(face: &mut Face, prefix: &NameBuf) -> Result<ControlResponse, AppError> {
    let params = ControlParameters {
        name: Some(prefix.clone()),
        origin: Some(origin::APP),
        cost: Some(0),
        ..ControlParameters::default()
    };
    let mut rng = Rng::from_entropy();
    let mut last_name = String::new();
    for _ in 0..ATTEMPTS {
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let wire = command_interest(
            Scope::Localhost,
            "rib",
            "register",
            &params,
            rng.next_u32(),
            now_ms,
        );
        let name = Interest::decode(&wire)?.name().to_buf();
        last_name = name.to_string();
        face.send(Peer::Stream, &wire, None, None)?;
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            let Some(p) = face.recv(left)? else {
                continue;
            };
            match Packet::decode(&p.packet) {
                Ok(Packet::Data(d)) if d.name() == name.as_name() => {
                    let r = ndx_nfd::parse_command_response(d.content()).map_err(|e| {
                        AppError::BadResponse {
                            prefix: prefix.to_string(),
                            reason: e.to_string(),
                        }
                    })?;
                    return if r.is_ok() {
                        Ok(r)
                    } else {
                        Err(AppError::Registration {
                            prefix: prefix.to_string(),
                            code: r.code,
                            text: r.text,
                        })
                    };
                }
                Ok(Packet::Interest(i)) if i.name() == name.as_name() => {
                    if let Some(reason) = p.lp.nack {
                        return Err(AppError::Nack {
                            name: last_name,
                            reason,
                            target: face.local_endpoint()?,
                        });
                    }
                }
                _ => {}
            }
        }
    }
    Err(AppError::Timeout {
        name: last_name,
        attempts: ATTEMPTS,
        target: face.local_endpoint()?,
    })
}
