//! The content store's second level as the shard sees it: Interests parked while their
//! batch is read, the reads and writes to submit, and their completions.

use super::*;

impl<F: Frame> Shard<F> {
    /// L2 counters (None without an L2).
    pub fn l2_counters(&self) -> Option<L2Counters> {
        self.l2.as_ref().map(|l| l.counters)
    }

    /// Whether the shard believes the L2 holds batch `batch` of content `content_key`.
    pub fn l2_holds(&self, content_key: u64, batch: u64) -> bool {
        self.l2
            .as_ref()
            .is_some_and(|l| l.holds(content_key, batch))
    }

    /// The content key of a name (keyed hash of the name without its segment component) and
    /// its batch number, as used in L2 requests; None without an L2 or a segment component.
    pub fn l2_key(&self, name: &Name<'_>) -> Option<(u64, u64)> {
        let l2 = self.l2.as_ref()?;
        let (content, seg) = content_of(name);
        Some((self.cfg.hash_key.name(&content), seg? / l2.cfg.batch))
    }

    /// Reports an L2 write asked for in [`Actions::l2_writes`]: `ok` makes the batch
    /// readable (Interests that miss L1 for it are then parked on a read).
    pub fn on_l2_written(&mut self, content_key: u64, batch: u64, ok: bool) {
        if let Some(l2) = self.l2.as_mut() {
            if ok {
                l2.written(content_key, batch);
            } else {
                l2.forget(content_key, batch);
            }
        }
    }

    /// Emits every batch being staged as an L2 write, complete or not (a clean stop, so
    /// the Data L1 evicted last are not lost).
    pub fn l2_flush_staged(&mut self, out: &mut Actions) {
        if let Some(l2) = self.l2.as_mut() {
            l2.flush_all(&mut |st| push_l2_write(out, st));
        }
    }

    /// Forgets that the L2 holds a batch (the I/O layer's log overwrote it).
    pub fn l2_forget(&mut self, content_key: u64, batch: u64) {
        if let Some(l2) = self.l2.as_mut() {
            l2.forget(content_key, batch);
        }
    }

    /// Completes L2 read `request` (from [`Actions::l2_reads`]) at `now` (ns): on success the
    /// batch's `(name hash, Data packet)` pairs go into L1 and the Interests parked on the read
    /// are answered from L1; those it cannot answer, and all of them on failure, are forwarded
    /// upstream as an ordinary CS miss. Parked entries that expired meanwhile are gone.
    pub fn on_l2_complete<'a, I>(
        &mut self,
        now: u64,
        request: u64,
        result: Result<I, L2Failure>,
        out: &mut Actions,
    ) where
        I: IntoIterator<Item = (u64, &'a [u8])>,
    {
        let mut parked = std::mem::take(&mut self.parked);
        let Some(l2) = self.l2.as_mut() else { return };
        let Some((content_key, batch)) = l2.finish_read(request, &mut parked) else {
            self.parked = parked;
            return;
        };
        match result {
            Ok(segments) => {
                for (name_hash, frame) in segments {
                    if let Ok(d) = Data::decode(frame) {
                        self.cs.insert_hashed(now, &d, name_hash, None);
                    }
                }
            }
            Err(e) => {
                l2.counters.read_failures += 1;
                if matches!(e, L2Failure::Stale | L2Failure::Corrupt) {
                    l2.forget(content_key, batch);
                }
            }
        }
        self.l2_drain(now, out);
        for (&id, span) in parked.ids.iter().zip(&parked.spans) {
            let wire = parked.wire.get(span.clone()).unwrap_or(&[]);
            self.answer_parked(now, id, wire, out);
        }
        parked.ids.clear();
        parked.spans.clear();
        parked.wire.clear();
        self.parked = parked;
    }

    /// Issues a prefetch of batch b+1 for a request of segment b*B + B-2.
    pub(super) fn l2_prefetch(&mut self, name: &Name<'_>, out: &mut Actions) {
        let Some(l2) = self.l2.as_ref() else { return };
        let b = l2.cfg.batch;
        if !l2.cfg.prefetch || b < 2 {
            return;
        }
        let (content, Some(seg)) = content_of(name) else {
            return;
        };
        if seg % b != b - 2 {
            return;
        }
        let next = seg / b + 1;
        let content_key = self.cfg.hash_key.name(&content);
        if !self
            .l2
            .as_ref()
            .is_some_and(|l| l.may_prefetch(content_key, next))
        {
            return;
        }
        // Not when L1 already holds the next batch's first segment.
        self.l2_name.clear();
        self.l2_name.extend_from_slice(content.as_bytes());
        ndx_codec::push_nni_tlv(&mut self.l2_name, types::SEGMENT_NAME_COMPONENT, next * b);
        if let Ok(first) = Name::from_value(&self.l2_name)
            && self.cs.holds(&first, self.cfg.hash_key.name(&first))
        {
            return;
        }
        if let Some(l2) = self.l2.as_mut()
            && let Some(read) = l2.prefetch(content_key, next)
        {
            out.l2_reads.push(read);
        }
    }

    /// Parks entry `id` on a read of its batch if the L2 holds it; true when parked.
    pub(super) fn l2_park(
        &mut self,
        id: PitId,
        name: &Name<'_>,
        wire: &[u8],
        out: &mut Actions,
    ) -> bool {
        let Some((content_key, batch)) = self.l2_key(name) else {
            return false;
        };
        let Some(l2) = self.l2.as_mut() else {
            return false;
        };
        match l2.park(id, wire, content_key, batch) {
            Park::NewRead(read) => {
                out.l2_reads.push(read);
                true
            }
            Park::Joined => true,
            Park::No => false,
        }
    }

    /// Stages the Data L1 evicted into batches and emits the batches that are ready.
    pub(super) fn l2_drain(&mut self, now: u64, out: &mut Actions) {
        if !self.cs.has_evicted() {
            return;
        }
        let Some(l2) = self.l2.as_mut() else { return };
        let key = self.cfg.hash_key;
        // The CS logged each Data's name: no decode. A batch the admission is sure to
        // refuse is staged without its bytes (`L2State::wants_bytes`).
        self.cs.drain_evicted_named(|hash, name, bytes| {
            let Ok(name) = Name::from_value(name) else {
                return;
            };
            let (content, Some(seg)) = content_of(&name) else {
                return;
            };
            let content_key = key.name(&content);
            let batch = seg / l2.cfg.batch;
            if l2.holds(content_key, batch) {
                // Came from the L2 (or was written already): nothing to write.
                return;
            }
            let (content, bytes) = if l2.wants_bytes(content_key, batch) {
                (content.as_bytes(), bytes)
            } else {
                (&[][..], &[][..])
            };
            l2.stage(now, (content_key, content), (seg, hash, bytes), &mut |st| {
                push_l2_write(out, st)
            });
        });
    }

    /// Answers a parked entry from L1, or forwards it upstream (`wire`: its Interest).
    pub(super) fn answer_parked(&mut self, now: u64, id: PitId, wire: &[u8], out: &mut Actions) {
        let Some(e) = self.pit.get(id) else { return };
        let Ok(name) = Name::from_value(e.name_bytes()) else {
            return;
        };
        let hit = self.cs.lookup(
            now,
            &name,
            e.name_hash(),
            e.can_be_prefix(),
            e.must_be_fresh(),
        );
        let Some(hit) = hit else {
            return self.forward_parked(now, id, wire, out);
        };
        for r in &e.in_records {
            if r.expiry < now {
                continue;
            }
            let range = out.push_tokened(r.token.get(), hit.data);
            out.send(r.face, range);
            self.counters.data_out += 1;
        }
        self.counters.cs_hits += 1;
        if let Some(l2) = self.l2.as_mut() {
            l2.counters.served += 1;
        }
        self.finish(now, id);
    }

    /// Forwards a parked entry upstream as the CS miss would have been: its Interest as
    /// received (`received`), through the ForwardingHint or the FIB and the strategy.
    pub(super) fn forward_parked(
        &mut self,
        now: u64,
        id: PitId,
        received: &[u8],
        out: &mut Actions,
    ) {
        let Some(e) = self.pit.get(id) else { return };
        let Some((ingress, nonce)) = e.in_records.first().map(|r| (r.face, r.nonce)) else {
            return;
        };
        // The wire was decoded as this Interest when it was parked.
        let Ok(Packet::Interest(interest)) = Packet::decode(received) else {
            return;
        };
        // The out-record must carry the Nonce of the bytes sent (a retransmission may have
        // changed the in-record's).
        let nonce = interest.nonce().unwrap_or(nonce);
        if let Some(l2) = self.l2.as_mut() {
            l2.counters.fallbacks += 1;
        }
        let snap = self.fib.guard();
        let key = self.cfg.hash_key;
        let found = interest
            .forwarding_hint()
            .and_then(|f| f.names().find_map(|hint| lpm(&snap, &key, &hint)))
            .or_else(|| lpm(&snap, &key, &interest.name()))
            .map(hops);
        let decision = match found {
            None => Decision::Nack(NackReason::NoRoute),
            Some((nexthops, kind)) => {
                let mut ctx = Ctx {
                    now,
                    ingress,
                    nexthops,
                    pending: &self.pending,
                    rng: &mut self.rng,
                };
                match self.pit.get_mut(id) {
                    Some(e) => strategy::after_receive_interest(kind, &mut ctx, e, true),
                    None => Decision::Suppress,
                }
            }
        };
        self.carry_out(now, id, decision, &interest, nonce, out);
    }
}

/// Appends a batch ready for L2 to the action list.
pub(super) fn push_l2_write(out: &mut Actions, st: &crate::l2::Stage2<'_>) {
    let name_at = out.l2_bytes.len();
    out.l2_bytes.extend_from_slice(st.name);
    let base = out.l2_bytes.len();
    out.l2_bytes.extend_from_slice(st.bytes);
    let seg_at = out.l2_segments.len();
    for (_, h, r) in st.segments {
        out.l2_segments.push((*h, base + r.start..base + r.end));
    }
    out.l2_writes.push(L2WriteRec {
        content_key: st.content_key,
        batch: st.batch,
        name: name_at..base,
        segments: seg_at..out.l2_segments.len(),
    });
}
