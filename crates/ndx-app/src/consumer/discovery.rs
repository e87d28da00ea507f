//! Version discovery. Without a version in the prefix, each round sends two Interests, both
//! CanBePrefix + MustBeFresh: one for the prefix (answered with a segment by ndnd put,
//! python-ndn producers and `ndx put`) and one for `/prefix/32=metadata` (RDR, answered by
//! ndnputchunks, `ndnd put` and `ndx put`); the first useful answer wins. A metadata answer
//! names the versioned prefix, whose segment 0 is then fetched.

use std::time::Instant;

use ndx_codec::{Data, NackReason, Name, NameBuf, Reader, types as tt};

use super::{Discovered, Fetch, Reply, TICK, classify, congestion_backoff, nack_error};
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
    ///
    /// A round ends with the first useful Data, when its retransmission timer expires, or when
    /// every name has been Nacked. Then: NoRoute (or a Nack without a known reason) for any
    /// name ends discovery at once with that Nack; Congestion is retried after a backoff that
    /// doubles from 1 ms (up to 10 s, as ndncatchunks), Duplicate at once (every round has new
    /// nonces). When the retries run out, the error is [`AppError::Congestion`] if the last
    /// round was answered with Nack Congestion, else [`AppError::Timeout`].
    fn exchange(&mut self, names: &[NameBuf], can_be_prefix: bool) -> Result<Found, AppError> {
        let prefix_len = self.consumer.opts.prefix.len();
        let target = self.consumer.opts.target.clone();
        let mut attempts = 0;
        let mut congested_rounds = 0;
        let mut last_congested = false;
        loop {
            if attempts > self.consumer.opts.discovery_retries {
                let name = names[0].to_string();
                return Err(if last_congested {
                    AppError::Congestion {
                        name,
                        attempts,
                        target,
                    }
                } else {
                    AppError::Timeout {
                        name,
                        attempts,
                        target,
                    }
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
            let mut deadline = sent + self.rtt.rto();
            // Every name Nacked: no more Nacks to wait for, the round ends at `deadline`
            // (now, or after a congestion backoff; a late Data still wins meanwhile).
            let mut answered = false;
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
                    } if !answered => {
                        let Some(i) = names.iter().position(|n| *n == name) else {
                            continue;
                        };
                        if nonce != nonces.get(i).copied() || nacked[i].is_some() {
                            continue;
                        }
                        self.counters.nacks += 1;
                        nacked[i] = Some(reason);
                        if nacked.iter().any(Option::is_none) {
                            continue;
                        }
                        answered = true;
                        let fatal = nacked.iter().zip(names).find(|(r, _)| {
                            !matches!(r, Some(NackReason::Congestion | NackReason::Duplicate))
                        });
                        if let Some((r, n)) = fatal {
                            let reason = r.unwrap_or(NackReason::Unspecified);
                            return Err(nack_error(n.to_string(), reason, attempts, target));
                        }
                        deadline = Instant::now();
                        if nacked.contains(&Some(NackReason::Congestion)) {
                            deadline += congestion_backoff(congested_rounds);
                            congested_rounds += 1;
                        }
                    }
                    _ => {}
                }
            }
            last_congested = nacked.contains(&Some(NackReason::Congestion));
            if !answered {
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
