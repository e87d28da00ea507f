//! Version discovery. Without a version in the prefix, each round sends two Interests, both
//! CanBePrefix + MustBeFresh: one for the prefix (answered with a segment by ndnd put,
//! python-ndn producers and `ndx put`) and one for `/prefix/32=metadata` (RDR, answered by
//! ndnputchunks, `ndnd put` and `ndx put`); the first useful answer wins. A metadata answer
//! names the versioned prefix, whose segment 0 is then fetched.

use std::time::Instant;

use ndx_codec::{Data, NackReason, Name, NameBuf, Reader, types as tt};

use super::{Discovered, Fetch, Reply, TICK, classify};
use crate::error::{AppError, VerifyError};
use crate::get::Discovery;

/// The RDR keyword component's value.
const METADATA_KEYWORD: &[u8] = b"metadata";

/// What one discovery exchange found.
enum Found {
    /// A segment of the object.
    Segment(Discovered),
    /// An RDR metadata packet naming this versioned prefix.
    Metadata(NameBuf),
}

impl Fetch<'_> {
    /// Finds the version and returns the first segment received.
    pub(super) fn discover(&mut self) -> Result<Discovered, AppError> {
        let prefix = self.consumer.opts.prefix.clone();
        if prefix
            .as_name()
            .last()
            .and_then(|c| c.as_version())
            .is_some()
        {
            return self.first_segment(prefix, Discovery::Explicit);
        }
        let mut rdr = prefix.clone();
        rdr.push(tt::KEYWORD_NAME_COMPONENT as u16, METADATA_KEYWORD)?;
        match self.exchange(&[prefix, rdr], true)? {
            Found::Segment(d) => Ok(d),
            Found::Metadata(versioned) => self.first_segment(versioned, Discovery::Metadata),
        }
    }

    /// Fetches `versioned/seg=0`.
    fn first_segment(
        &mut self,
        versioned: NameBuf,
        how: Discovery,
    ) -> Result<Discovered, AppError> {
        let mut name = versioned;
        name.push_segment(0);
        match self.exchange(&[name], false)? {
            Found::Segment(d) => Ok(Discovered { how, ..d }),
            // Only CanBePrefix exchanges look for metadata.
            Found::Metadata(n) => Err(AppError::Verify {
                name: n.to_string(),
                reason: VerifyError::BadMetadata("unexpected metadata packet".into()),
            }),
        }
    }

    /// Sends `names` (with CanBePrefix as given, MustBeFresh) until one is answered, retrying
    /// up to `discovery_retries` times.
    fn exchange(&mut self, names: &[NameBuf], can_be_prefix: bool) -> Result<Found, AppError> {
        let prefix_len = self.consumer.opts.prefix.len();
        let mut attempts = 0;
        loop {
            if attempts > self.consumer.opts.discovery_retries {
                return Err(AppError::Timeout {
                    name: names[0].to_string(),
                    attempts,
                    target: self.consumer.opts.target.clone(),
                });
            }
            if attempts > 0 {
                self.counters.retransmissions += names.len() as u64;
            }
            attempts += 1;
            let mut nonces = Vec::with_capacity(names.len());
            for n in names {
                nonces.push(self.consumer.send_interest(n, can_be_prefix, true)?);
            }
            let mut nacked: Vec<Option<NackReason>> = vec![None; names.len()];
            let sent = Instant::now();
            let deadline = sent + self.rtt.rto();
            let mut resend = false;
            while let Some(wait) = deadline.checked_duration_since(Instant::now()) {
                let Some((packet, lp)) = self.consumer.recv(wait.min(TICK))? else {
                    continue;
                };
                match classify(&packet, &lp) {
                    Reply::Data(d)
                        if names
                            .iter()
                            .any(|n| d.matches_name(&n.as_name(), can_be_prefix)) =>
                    {
                        if attempts == 1 {
                            self.rtt.sample(sent.elapsed());
                            self.stats.add(sent.elapsed());
                        }
                        if lp.congestion_mark.is_some_and(|m| m > 0) {
                            self.counters.marks += 1;
                        }
                        if can_be_prefix && is_metadata(&d, prefix_len) {
                            return self.metadata(&d).map(Found::Metadata);
                        }
                        return self.segment(&d, can_be_prefix).map(Found::Segment);
                    }
                    Reply::Nack {
                        name,
                        nonce,
                        reason,
                    } => {
                        let Some(i) = names.iter().position(|n| *n == name) else {
                            continue;
                        };
                        if nonce != nonces.get(i).copied() {
                            continue;
                        }
                        self.counters.nacks += 1;
                        nacked[i] = Some(reason);
                        if nacked.iter().all(Option::is_some) {
                            let fatal = nacked.iter().zip(names).find(|(r, _)| {
                                !matches!(r, Some(NackReason::Congestion | NackReason::Duplicate))
                            });
                            if let Some((r, n)) = fatal {
                                return Err(AppError::Nack {
                                    name: n.to_string(),
                                    reason: r.unwrap_or(NackReason::Unspecified),
                                    target: self.consumer.opts.target.clone(),
                                });
                            }
                            resend = true;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            if !resend {
                self.counters.timeouts += 1;
                self.rtt.backoff();
            }
        }
    }

    /// A segment answering discovery: signature, segment number, FinalBlockId.
    fn segment(&self, d: &Data<'_>, can_be_prefix: bool) -> Result<Discovered, AppError> {
        let (seg, fbi) = self.check(d)?;
        let last = fbi.ok_or_else(|| Self::verify_err(d, VerifyError::MissingFinalBlockId))?;
        if seg > last {
            return Err(Self::verify_err(
                d,
                VerifyError::PastFinalBlock { seg, last },
            ));
        }
        let n = d.name();
        Ok(Discovered {
            how: if can_be_prefix {
                Discovery::CanBePrefix
            } else {
                Discovery::Explicit
            },
            versioned: n.prefix(n.len() - 1).to_buf(),
            last_seg: last,
            seg,
            content: d.content().to_vec(),
        })
    }

    /// The versioned name in an RDR metadata packet (its content starts with a Name TLV).
    fn metadata(&self, d: &Data<'_>) -> Result<NameBuf, AppError> {
        self.check_signature(d)?;
        let bad = |why: &str| Self::verify_err(d, VerifyError::BadMetadata(why.to_owned()));
        let name = Reader::new(d.content())
            .read()
            .ok()
            .filter(|t| t.typ == tt::NAME)
            .and_then(|t| Name::decode(t.wire).ok())
            .ok_or_else(|| bad("content does not start with a Name"))?;
        if !self.consumer.opts.prefix.as_name().is_prefix_of(&name)
            || name.last().and_then(|c| c.as_version()).is_none()
        {
            return Err(bad(&format!(
                "{name} is not a versioned name under {}",
                self.consumer.opts.prefix
            )));
        }
        Ok(name.to_buf())
    }
}

/// Whether `d` is an RDR metadata packet for a prefix of `prefix_len` components.
fn is_metadata(d: &Data<'_>, prefix_len: usize) -> bool {
    d.name().get(prefix_len).is_some_and(|c| {
        u64::from(c.typ()) == tt::KEYWORD_NAME_COMPONENT && c.value() == METADATA_KEYWORD
    })
}
