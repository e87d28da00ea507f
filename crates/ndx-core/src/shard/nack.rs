//! The Nack pipeline: a Nack from upstream, retried on another next hop or carried down.

use super::*;

impl<F: Frame> Shard<F> {
    #[expect(
        clippy::too_many_arguments,
        reason = "the pipeline's inputs for one packet"
    )]
    pub(super) fn on_nack(
        &mut self,
        now: u64,
        face: FaceId,
        interest: &Interest<'_>,
        inc: &Incoming<'_>,
        hashes: &mut NameHashes<'_>,
        snapshot: &FibSnapshot,
        out: &mut Actions,
    ) {
        self.counters.nacks_in += 1;
        let reason = inc.nack.unwrap_or(NackReason::Unspecified);
        let name = interest.name();
        let by_token = inc.token.and_then(|t| self.pit.by_token(t));
        let id = by_token.or_else(|| {
            let h = hashes.full();
            let (cbp, mbf) = (interest.can_be_prefix(), interest.must_be_fresh());
            self.pit.find(pit_key(h, cbp, mbf), &name, cbp, mbf)
        });
        // The Nack must answer what we sent that upstream (same Nonce).
        let Some(id) = id.filter(|&id| {
            self.pit.get(id).is_some_and(|e| {
                e.out_record(face)
                    .is_some_and(|o| Some(o.nonce) == interest.nonce() && o.nacked.is_none())
            })
        }) else {
            return self.dropped(out, face, DropReason::NackUnmatched);
        };
        if by_token == Some(id) {
            self.counters.by_token += 1;
        }
        if let Some(e) = self.pit.get_mut(id)
            && let Some(o) = e.out_records.iter_mut().find(|o| o.face == face)
        {
            o.nacked = Some(reason);
        }
        if let Some(p) = self.pending.get_mut(&face) {
            *p = p.saturating_sub(1);
        }
        // Strategy of the Interest's FIB entry.
        let (nexthops, kind) = snapshot
            .lpm_hashed(hashes)
            .map_or((&[][..], StrategyKind::BestRoute), hops);
        let Some(e) = self.pit.get(id) else { return };
        let downstream = e.in_records.first().map_or(face, |r| r.face);
        let mut ctx = Ctx {
            now,
            ingress: downstream,
            nexthops,
            pending: &self.pending,
            rng: &mut self.rng,
        };
        let Some(e) = self.pit.get_mut(id) else {
            return;
        };
        let decision = strategy::after_receive_nack(kind, &mut ctx, e);
        let nonce = e.out_records.first().map_or(0, |o| o.nonce);
        self.carry_out(now, id, decision, interest, nonce, out);
    }

    /// Nacks every downstream of entry `id`, rebuilding each one's Interest (its Nonce).
    pub(super) fn nack_downstreams(&mut self, id: PitId, reason: NackReason, out: &mut Actions) {
        let Some(e) = self.pit.get(id) else { return };
        for r in &e.in_records {
            encode_interest(
                &mut self.scratch,
                e.name_bytes(),
                e.can_be_prefix(),
                e.must_be_fresh(),
                r.nonce,
            );
            let headers = LpHeaders {
                pit_token: r.token.get(),
                nack: Some(reason),
                ..LpHeaders::default()
            };
            let range = out.push_packet(&headers, &self.scratch);
            out.send(r.face, range);
            self.counters.nacks_out += 1;
        }
    }
}

/// Encodes a minimal Interest (name, selectors, nonce) into `buf`, for a Nack to a
/// downstream whose own Interest bytes are no longer at hand.
pub(super) fn encode_interest(buf: &mut Vec<u8>, name: &[u8], cbp: bool, mbf: bool, nonce: u32) {
    let name_tlv = ndx_codec::tlv_len(types::NAME, name.len());
    let value = name_tlv + 2 * usize::from(cbp) + 2 * usize::from(mbf) + 6;
    let total = ndx_codec::tlv_len(types::INTEREST, value);
    buf.clear();
    buf.resize(total, 0);
    if let Ok(mut w) = Writer::new(buf, total) {
        let _ = w.header(types::INTEREST, value);
        let _ = w.tlv(types::NAME, name);
        if cbp {
            let _ = w.header(types::CAN_BE_PREFIX, 0);
        }
        if mbf {
            let _ = w.header(types::MUST_BE_FRESH, 0);
        }
        let _ = w.tlv(types::NONCE, &nonce.to_be_bytes());
    }
}
