//! The Data pipeline: PIT match by token or name, CS admission, and sending down to every
//! downstream; the end of a PIT entry.

use super::*;

impl<F: Frame> Shard<F> {
    pub(super) fn on_data(
        &mut self,
        now: u64,
        face: FaceId,
        data: &Data<'_>,
        token: Option<&[u8]>,
        snap: &FibSnapshot,
        out: &mut Actions,
    ) {
        self.counters.data_in += 1;
        let name = data.name();
        let state = self.faces.get_or_insert_with(face, FaceState::default);
        state.load.data += 1;
        if is_localhost(&name) && !state.info.local {
            return self.dropped(out, face, DropReason::Scope);
        }
        // Name hashes only when needed: a Data echoing our token for an exact-name entry
        // takes its name hash from the entry.
        let mut hashes: Option<NameHashes<'_>> = None;
        let mut name_hash: Option<u64> = None;
        self.matched.clear();
        // By our PIT token: O(1), then check the Data really answers that entry.
        if let Some(id) = token.and_then(|t| self.pit.by_token(t))
            && let Some(e) = self.pit.get(id)
            && let exact = e.name_bytes() == name.as_bytes()
            && (exact || entry_matches(e, data))
        {
            if exact {
                name_hash = Some(e.name_hash());
            }
            self.matched.push(id);
            self.counters.by_token += 1;
        }
        // By name, unless our token already found the entry: every Interest we forward
        // carries its own token, so a Data that echoes it needs no name search (NDN-DPDK's
        // rule). Upstreams that do not echo tokens are matched by name: exact entries, and
        // CanBePrefix entries at every prefix; variants no pending entry has are skipped.
        if self.matched.is_empty() {
            let h = self.match_by_name(&name, snap);
            name_hash = Some(h.full());
            hashes = Some(h);
        }
        if self.matched.is_empty() {
            return self.unsolicited(now, face, data, name_hash, out);
        }
        // Cache, indexed also under the shortest CanBePrefix Interest it satisfies (none
        // unless some pending entry has CanBePrefix).
        let alias = if self.pit.has_can_be_prefix() {
            self.matched
                .iter()
                .filter_map(|&id| self.pit.get(id))
                .filter(|e| e.can_be_prefix() && e.name_len() < name.len())
                .map(|e| e.name_len())
                .min()
        } else {
            None
        };
        let alias = alias.map(|k| {
            let h = hashes
                .get_or_insert_with(|| NameHashes::new(&self.cfg.hash_key, &name, snap.stage1()))
                .prefix(k);
            (name.prefix(k), h)
        });
        let name_hash = name_hash.unwrap_or_else(|| self.cfg.hash_key.name(&name));
        let alias = alias.as_ref().map(|(p, h)| (p, *h));
        // Where the Data lies in the lent frame being processed, if it does: found once, for
        // the CS to keep the frame and for the sends to read the Data from there.
        let lent = out.lent_part(data.wire());
        let keep = lent.filter(|_| self.keep_lent);
        let cached = self.cs.insert_maybe_kept(
            now,
            data,
            name_hash,
            alias,
            keep.map(|l| (l.input, l.start as usize)),
        );
        self.l2_drain(now, out);
        // Send to every downstream, echoing its PitToken; tokenless downstreams share bytes.
        // A Data received in a lent frame is sent from there: only the heads are written.
        let mut bare: Option<(Range<usize>, Option<LentPart>)> = None;
        let sent_before = self.counters.data_out;
        for &id in &self.matched {
            let Some(e) = self.pit.get(id) else { continue };
            for r in &e.in_records {
                if r.face == face || r.expiry < now {
                    continue;
                }
                let parts = match r.token.get() {
                    Some(t) => out.push_data(Some(t), data.wire(), lent),
                    None => bare
                        .get_or_insert_with(|| out.push_data(None, data.wire(), lent))
                        .clone(),
                };
                out.send_parts(r.face, parts);
                self.counters.data_out += 1;
            }
        }
        if self.counters.data_out == sent_before {
            self.counters.data_late += 1;
        }
        // NFD's rule for the dead-nonce list on satisfaction: a looping copy of an Interest
        // this Data satisfied finds the Data in the CS, so its nonces need remembering only
        // when the CS cannot answer it: the Data was not cached, or the Interest wants fresh
        // Data and this Data goes stale before the list would forget the nonce.
        let fresh_ns = data.freshness_ms().unwrap_or(0).saturating_mul(1_000_000);
        // By index: `finish_with` borrows the whole shard, and leaves `matched` alone.
        // The entry is read once, for both.
        let lifetime = self.cfg.dnl_lifetime_ns;
        for i in 0..self.matched.len() {
            let id = self.matched[i];
            self.finish_if(now, id, |e| {
                !cached || (e.must_be_fresh() && fresh_ns < lifetime)
            });
        }
    }

    /// The PIT entries a Data answers, found by name (into `matched`): exact entries, and
    /// CanBePrefix entries at every prefix; variants no pending entry has are skipped. Out of
    /// line: a Data that echoes our token (every upstream that echoes tokens) never comes here,
    /// and the Data pipeline keeps fewer values live across it.
    #[inline(never)]
    fn match_by_name<'n>(&mut self, name: &Name<'n>, snap: &FibSnapshot) -> NameHashes<'n> {
        let key = &self.cfg.hash_key;
        let mut h = NameHashes::new(key, name, snap.stage1());
        let full_hash = h.full();
        let cbp_any = self.pit.has_can_be_prefix();
        let mbf_any = self.pit.has_must_be_fresh();
        for (cbp, mbf) in [(false, false), (false, true), (true, false), (true, true)] {
            if (cbp && !cbp_any) || (mbf && !mbf_any) {
                continue;
            }
            if let Some(id) = self.pit.find(pit_key(full_hash, cbp, mbf), name, cbp, mbf)
                && !self.matched.contains(&id)
            {
                self.matched.push(id);
            }
        }
        for k in 1..name.len() {
            if !cbp_any {
                break;
            }
            let prefix = name.prefix(k);
            let prefix_hash = h.prefix(k);
            for mbf in [false, true] {
                if mbf && !mbf_any {
                    continue;
                }
                let key = pit_key(prefix_hash, true, mbf);
                if let Some(id) = self.pit.find(key, &prefix, true, mbf)
                    && !self.matched.contains(&id)
                {
                    self.matched.push(id);
                }
            }
        }
        h
    }

    /// A Data no pending entry asked for: cached if the policy says so, and dropped. Out of
    /// line (cold): the pipeline keeps fewer values live across it.
    #[cold]
    #[inline(never)]
    fn unsolicited(
        &mut self,
        now: u64,
        face: FaceId,
        data: &Data<'_>,
        name_hash: Option<u64>,
        out: &mut Actions,
    ) {
        if self.cfg.unsolicited == Unsolicited::Cache {
            let h = name_hash.unwrap_or_else(|| self.cfg.hash_key.name(&data.name()));
            self.cs.insert_hashed(now, data, h, None);
            self.l2_drain(now, out);
        }
        self.dropped(out, face, DropReason::Unsolicited)
    }

    /// Carries out a strategy's decision for entry `id`: forwards `interest` (with `nonce`
    /// in the out-records) to the chosen faces, or Nacks the downstreams and ends the entry.
    pub(super) fn carry_out(
        &mut self,
        now: u64,
        id: PitId,
        decision: Decision,
        interest: &Interest<'_>,
        nonce: u32,
        out: &mut Actions,
    ) {
        match decision {
            Decision::Forward(faces) => {
                let from = self
                    .pit
                    .get(id)
                    .and_then(|e| e.in_records.first())
                    .map_or(FaceId(0), |r| r.face);
                let name = interest.name();
                let fwd = Forward {
                    from,
                    local_only: is_localhost(&name)
                        || (!self.face_info(from).local && is_localhop(&name)),
                };
                self.forward_to(now, id, faces.as_slice(), interest, nonce, fwd, out);
            }
            Decision::Suppress => {}
            Decision::Nack(reason) => {
                self.nack_downstreams(id, reason, out);
                self.finish(now, id);
            }
        }
    }

    /// Erases entry `id`, remembering its nonces as dead and releasing pending counts.
    pub(super) fn finish(&mut self, now: u64, id: PitId) {
        self.finish_with(now, id, true);
    }

    /// Erases entry `id` and releases its pending counts; remembers its out-record nonces in
    /// the dead-nonce list if `remember_nonces`. Inlined: every satisfied Interest ends here.
    #[inline(always)]
    pub(super) fn finish_with(&mut self, now: u64, id: PitId, remember_nonces: bool) {
        self.finish_if(now, id, |_| remember_nonces);
    }

    /// [`finish_with`](Self::finish_with), whether to remember the nonces decided by
    /// `remember` from the live entry (read once for both).
    #[inline(always)]
    fn finish_if(
        &mut self,
        now: u64,
        id: PitId,
        remember: impl FnOnce(&crate::pit::PitEntry) -> bool,
    ) {
        let Some(e) = self.pit.get(id) else { return };
        let remember_nonces = remember(e);
        let name_hash = e.name_hash();
        let owner = e.owner();
        for o in &e.out_records {
            if remember_nonces {
                self.dnl.insert(now, name_hash, o.nonce);
            }
            if o.nacked.is_none()
                && let Some(p) = self.pending.get_mut(&o.face)
            {
                *p = p.saturating_sub(1);
            }
        }
        self.pit.erase(id);
        if let Some(f) = self.faces.get_mut(&owner)
            && f.load.pit_entries > 0
        {
            f.load.pit_entries -= 1;
            if f.load.pit_entries == 0 {
                self.shares.face_idle(&self.cfg.fairness);
            }
        }
    }
}
