//! The Interest pipeline: scope, loops, the CS, the PIT with its per-face shares, the
//! strategy, and forwarding with PIT tokens.

use super::*;

impl<F: Frame> Shard<F> {
    #[expect(
        clippy::too_many_arguments,
        reason = "the pipeline's inputs for one packet"
    )]
    pub(super) fn on_interest(
        &mut self,
        now: u64,
        face: FaceId,
        interest: &Interest<'_>,
        inc: &Incoming<'_>,
        hashes: &mut NameHashes<'_>,
        snapshot: &FibSnapshot,
        out: &mut Actions,
    ) {
        self.counters.interests_in += 1;
        let state = self.faces.get_or_insert_with(face, FaceState::default);
        state.load.interests += 1;
        let (info, held) = (state.info, state.load.pit_entries);
        if interest.hop_limit() == Some(0) && !info.local {
            return self.dropped(out, face, DropReason::HopLimit);
        }
        let name = interest.name();
        let localhost = is_localhost(&name);
        if localhost && !info.local {
            return self.dropped(out, face, DropReason::Scope);
        }
        let name_hash = hashes.full();
        let (cbp, mbf) = (interest.can_be_prefix(), interest.must_be_fresh());

        // Content store first, as NDN-DPDK's PIT-CS lookup: a hit is answered whatever the
        // PIT and dead-nonce list hold (see benches/results/design-history.md, "Interest pipeline order").
        if let Some(hit) = self.cs.lookup(now, &name, name_hash, cbp, mbf) {
            self.counters.cs_hits += 1;
            self.counters.data_out += 1;
            let range = out.push_tokened(inc.token, hit.data);
            out.send(face, range);
            if self.l2.is_some() {
                self.l2_prefetch(&name, out);
            }
            return;
        }

        let nonce = interest.nonce().unwrap_or_else(|| {
            // A Nonce-less Interest (allowed on local faces) gets one.
            crate::strategy::next_random(&mut self.rng) as u32
        });
        let key = pit_key(name_hash, cbp, mbf);

        // Loop detection: the dead-nonce list, then the pending entry's records.
        let existing = self.pit.find(key, &name, cbp, mbf);
        let looped = self.dnl.contains(now, name_hash, nonce)
            || existing.and_then(|id| self.pit.get(id)).is_some_and(|e| {
                let same_face_same_nonce =
                    e.in_record(face).is_some_and(|r| r.nonce == nonce) && info.multi_access;
                e.has_nonce_elsewhere(nonce, face) || same_face_same_nonce
            });
        if looped {
            if !info.multi_access {
                self.nack_interest(now, face, interest, inc.token, NackReason::Duplicate, out);
            }
            return self.dropped(out, face, DropReason::Loop);
        }

        if self.l2.is_some() {
            self.l2_prefetch(&name, out);
        }

        let lifetime_ms = interest
            .effective_lifetime_ms()
            .min(self.cfg.max_lifetime_ms);
        let expiry = now + lifetime_ms * 1_000_000;
        // In-record: one per downstream face (a new entry is created with it).
        let record = InRecord {
            face,
            nonce,
            expiry,
            token: TokenBuf::new(inc.token),
        };
        let (id, fresh) = match existing {
            Some(id) => (id, false),
            None => {
                // The face's share of the PIT (fair.rs); joining an entry is always allowed.
                if !self.shares.allows(held) {
                    if let Some(f) = self.faces.get_mut(&face) {
                        f.load.pit_quota += 1;
                    }
                    self.nack_interest(now, face, interest, inc.token, NackReason::Congestion, out);
                    return self.dropped(out, face, DropReason::PitQuota);
                }
                match self.pit.insert_recorded(key, &name, cbp, mbf, &record) {
                    Ok(id) => {
                        if let Some(f) = self.faces.get_mut(&face) {
                            f.load.pit_entries += 1;
                            if f.load.pit_entries == 1 {
                                self.shares.face_active(&self.cfg.fairness);
                            }
                        }
                        (id, true)
                    }
                    Err(PitFull(_)) => {
                        self.nack_interest(
                            now,
                            face,
                            interest,
                            inc.token,
                            NackReason::Congestion,
                            out,
                        );
                        return self.dropped(out, face, DropReason::PitFull);
                    }
                }
            }
        };
        // A new entry was created with its in-record (and its expiry); a pending one gets
        // this face's, new or renewed, and lives as long as its longest.
        let mut retransmission = false;
        if !fresh {
            let Some(e) = self.pit.get_mut(id) else {
                return;
            };
            match e.in_records.iter_mut().find(|r| r.face == face) {
                Some(r) => {
                    *r = record;
                    retransmission = true;
                }
                None => e.in_records.push(record),
            }
            let entry_expiry = e
                .in_records
                .iter()
                .map(|r| r.expiry)
                .max()
                .unwrap_or(expiry);
            self.pit.set_expiry(id, entry_expiry);
        }
        if !fresh && !retransmission {
            // Another downstream for a pending Interest: aggregate.
            self.pit.note_aggregated();
            self.counters.aggregated += 1;
            return;
        }
        if !fresh && self.l2.as_ref().is_some_and(|l| l.is_parked(id)) {
            // A retransmission of an Interest parked on an L2 read: the read answers it.
            self.counters.suppressed += 1;
            return;
        }
        // L1 missed: if the L2 holds the batch, park the entry on a batch read. A
        // retransmission of an entry that went upstream looks again: its batch may have been
        // written since (it was being staged), or its read failed or was answered after the
        // batch left L1, and the upstream may be gone.
        if self.l2.is_some() && self.l2_park(id, &name, interest.wire(), out) {
            return;
        }

        // FIB: a ForwardingHint's delegations first, then the name itself. The next hops are
        // borrowed from the snapshot, which outlives the packet.
        let mut found: Option<(&[crate::face::NextHop], StrategyKind)> = None;
        if let Some(hint) = interest.forwarding_hint() {
            found = hint
                .names()
                .find_map(|h| lpm(snapshot, &self.cfg.hash_key, &h))
                .map(hops);
        }
        if found.is_none() {
            found = snapshot.lpm_hashed(hashes).map(hops);
        }
        // NextHopFaceId from a local application overrides the FIB.
        let chosen;
        if let Some(nh) = inc.next_hop.filter(|_| info.local) {
            chosen = [crate::face::NextHop {
                face: FaceId(nh as u32),
                cost: 0,
            }];
            found = Some((&chosen, StrategyKind::BestRoute));
        }
        let Some((nexthops, kind)) = found else {
            return self.refuse(now, face, interest, inc.token, id, NackReason::NoRoute, out);
        };
        let Some(e) = self.pit.get_mut(id) else {
            return;
        };
        let fwd = Forward {
            from: face,
            local_only: localhost || (!info.local && is_localhop(&name)),
        };
        // The next hops to send to: one at most in the usual case (a new entry, best-route),
        // picked without a strategy context or face list.
        let one: [FaceId; 1];
        let list: strategy::FaceList;
        let faces: &[FaceId] = if fresh && kind == StrategyKind::BestRoute {
            match strategy::best_route_fresh(now, face, nexthops, e) {
                Some(up) => {
                    one = [up];
                    &one
                }
                None => {
                    return self.refuse(
                        now,
                        face,
                        interest,
                        inc.token,
                        id,
                        NackReason::NoRoute,
                        out,
                    );
                }
            }
        } else {
            let mut ctx = Ctx {
                now,
                ingress: face,
                nexthops,
                pending: &self.pending,
                rng: &mut self.rng,
            };
            match strategy::after_receive_interest(kind, &mut ctx, e, fresh) {
                Decision::Forward(faces) => {
                    list = faces;
                    list.as_slice()
                }
                Decision::Suppress => {
                    self.counters.suppressed += 1;
                    return;
                }
                Decision::Nack(reason) => {
                    return self.refuse(now, face, interest, inc.token, id, reason, out);
                }
            }
        };
        self.forward_to(now, id, faces, interest, nonce, fwd, out);
    }

    /// Gives up on the Interest from `face` that entry `id` holds: Nacks it with `reason`,
    /// erases the entry, and counts the drop as [`DropReason::NoRoute`].
    #[expect(
        clippy::too_many_arguments,
        reason = "the pipeline's inputs for one packet"
    )]
    #[cold]
    #[inline(never)]
    fn refuse(
        &mut self,
        now: u64,
        face: FaceId,
        interest: &Interest<'_>,
        token: Option<&[u8]>,
        id: PitId,
        reason: NackReason,
        out: &mut Actions,
    ) {
        self.nack_interest(now, face, interest, token, reason, out);
        self.finish(now, id);
        self.dropped(out, face, DropReason::NoRoute);
    }

    /// Sends `interest` to each of `faces` for entry `id`, with `nonce` in the out-records.
    /// An Interest that carries a Nonce leaves as received (HopLimit decremented); one that
    /// arrived without (allowed from local applications) leaves with `nonce`, the one its
    /// in-record holds, added (see [`Shard::forward_nonced`]).
    #[inline(always)]
    #[expect(
        clippy::too_many_arguments,
        reason = "the pipeline's state for one send"
    )]
    pub(super) fn forward_to(
        &mut self,
        now: u64,
        id: PitId,
        faces: &[FaceId],
        interest: &Interest<'_>,
        nonce: u32,
        fwd: Forward,
        out: &mut Actions,
    ) {
        if interest.nonce().is_none() {
            return self.forward_nonced(now, id, faces, interest, nonce, fwd, out);
        }
        let hop_patch = interest.hop_limit_offset().map(|o| o - interest.offset());
        for &up in faces {
            self.forward_interest(now, id, up, interest.wire(), hop_patch, nonce, fwd, out);
        }
    }

    /// [`Shard::forward_to`] for an Interest without a Nonce: re-encoded once with `nonce`
    /// (as NFD does; ndnd drops Interests without one), then sent like any other. The nonce is
    /// the one generated on arrival and kept in the in-record, so it lands in the out-records
    /// and, when the entry ends, in the dead-nonce list: a copy that loops back is caught.
    #[expect(
        clippy::too_many_arguments,
        reason = "the pipeline's state for one send"
    )]
    #[cold]
    #[inline(never)]
    pub(super) fn forward_nonced(
        &mut self,
        now: u64,
        id: PitId,
        faces: &[FaceId],
        interest: &Interest<'_>,
        nonce: u32,
        fwd: Forward,
        out: &mut Actions,
    ) {
        let mut buf = std::mem::take(&mut self.nonced);
        buf.clear();
        buf.resize(interest.with_nonce_len(), 0);
        match interest.encode_with_nonce(nonce, &mut buf) {
            Ok(n) => {
                buf.truncate(n);
                // The Interest decoded before, so its re-encoding does: only to find HopLimit.
                let hop_patch = Interest::decode(&buf)
                    .ok()
                    .and_then(|i| i.hop_limit_offset());
                for &up in faces {
                    self.forward_interest(now, id, up, &buf, hop_patch, nonce, fwd, out);
                }
            }
            // Unreachable for a decoded Interest; dropped (counted) rather than sent bare.
            Err(_) => self.counters.drops[drop_index(DropReason::Malformed)] += 1,
        }
        self.nonced = buf;
    }

    /// Sends the Interest `wire` (HopLimit at `hop_patch` in it) to `up` for entry `id`, in
    /// an LpPacket with the entry's PitToken, and records the send. Inlined into each
    /// [`Shard::forward_to`], its one hot caller (no call with its eight arguments).
    #[expect(
        clippy::too_many_arguments,
        reason = "the pipeline's state for one send"
    )]
    #[inline(always)]
    pub(super) fn forward_interest(
        &mut self,
        now: u64,
        id: PitId,
        up: FaceId,
        wire: &[u8],
        hop_patch: Option<usize>,
        nonce: u32,
        fwd: Forward,
        out: &mut Actions,
    ) {
        let token = self.pit.token(id);
        let up_info = self.face_info(up);
        let local_up = up_info.local;
        if fwd.local_only && !local_up {
            // `/localhost` never leaves the machine, and `/localhop` goes one hop, whatever
            // the FIB says.
            return;
        }
        let range = if up_info.local_fields {
            let headers = LpHeaders {
                pit_token: Some(&token),
                incoming_face_id: Some(u64::from(fwd.from.0)),
                ..LpHeaders::default()
            };
            out.push_packet(&headers, wire)
        } else {
            push_interest(out, &token, wire)
        };
        if let Some(off) = hop_patch
            && !local_up
        {
            // The Interest is the LpPacket's last element: patch its HopLimit in place.
            let at = range.end - wire.len() + off;
            if let Some(b) = out.bytes.get_mut(at) {
                *b = b.saturating_sub(1);
            }
        }
        out.send(up, range);
        self.counters.interests_out += 1;
        let Some(e) = self.pit.get_mut(id) else {
            return;
        };
        let rec = OutRecord {
            face: up,
            nonce,
            sent_at: now,
            nacked: None,
        };
        match e.out_records.iter_mut().find(|o| o.face == up) {
            Some(o) => *o = rec,
            None => {
                e.out_records.push(rec);
                *self.pending.get_or_insert_with(up, || 0) += 1;
            }
        }
    }

    /// Sends a Nack carrying `interest` back to `face`.
    /// Answers `interest` from `face` with a Nack, unless the face is past its Nack rate
    /// ([`Fairness`]; counted).
    pub(super) fn nack_interest(
        &mut self,
        now: u64,
        face: FaceId,
        interest: &Interest<'_>,
        token: Option<&[u8]>,
        reason: NackReason,
        out: &mut Actions,
    ) {
        if let Some(f) = self.faces.get_mut(&face)
            && !f.bucket.take_nack(now, &self.cfg.fairness)
        {
            f.load.nacks_limited += 1;
            self.counters.nacks_limited += 1;
            return;
        }
        let headers = LpHeaders {
            pit_token: token,
            nack: Some(reason),
            ..LpHeaders::default()
        };
        let range = out.push_packet(&headers, interest.wire());
        out.send(face, range);
        self.counters.nacks_out += 1;
    }
}

/// Longest Interest [`push_interest`] writes itself: its LpPacket's TLV-VALUE (the PitToken
/// element, 8 bytes, and the Fragment's, 2 + the Interest's) fits a one-byte TLV-LENGTH.
const SHORT_INTEREST: usize = 252 - 2 - PIT_TOKEN_LEN - 2;

/// [`Actions::push_tokened`] with one of our tokens, for a forwarded Interest: an Interest of
/// at most [`SHORT_INTEREST`] bytes (nearly all) goes behind a 12-byte head built in one
/// array (every TLV-TYPE and TLV-LENGTH one byte), without the general head's length
/// arithmetic; a longer one through `push_tokened`. The same bytes either way.
#[inline(always)]
fn push_interest(out: &mut Actions, token: &crate::pit::PitToken, wire: &[u8]) -> Range<usize> {
    let len = wire.len();
    if len > SHORT_INTEREST {
        return out.push_tokened(Some(token), wire);
    }
    let start = out.bytes.len();
    let mut head = [
        types::LP_PACKET as u8,
        (2 + PIT_TOKEN_LEN + 2 + len) as u8,
        types::LP_PIT_TOKEN as u8,
        PIT_TOKEN_LEN as u8,
        0,
        0,
        0,
        0,
        0,
        0,
        types::LP_FRAGMENT as u8,
        len as u8,
    ];
    // The token as one copy (taking it apart byte by byte spilled each byte).
    head[4..4 + PIT_TOKEN_LEN].copy_from_slice(token);
    out.bytes.reserve(head.len() + len);
    out.bytes.extend_from_slice(&head);
    out.bytes.extend_from_slice(wire);
    start..out.bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `push_interest` writes what `push_tokened` writes, on either side of its length bound.
    #[test]
    fn push_interest_writes_what_push_tokened_writes() {
        let token: crate::pit::PitToken = [1, 2, 3, 4, 5, 6];
        for len in (0..=SHORT_INTEREST + 20).chain([1000, 8800]) {
            let wire: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let (mut fast, mut general) = (Actions::new(), Actions::new());
            // Something before, as in a burst's arena.
            fast.bytes.extend_from_slice(&[9; 7]);
            general.bytes.extend_from_slice(&[9; 7]);
            let r = push_interest(&mut fast, &token, &wire);
            let g = general.push_tokened(Some(&token), &wire);
            assert_eq!(r, g, "range, {len} bytes");
            assert_eq!(fast.bytes, general.bytes, "bytes, {len} bytes");
            let lp = LpPacket::decode(&fast.bytes[r]).expect("an LpPacket");
            assert_eq!(lp.pit_token(), Some(&token[..]));
            assert_eq!(lp.fragment(), Some(&wire[..]));
        }
    }
}
