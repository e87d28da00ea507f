//! The weighted hash space: a table of cells, each naming the router slot that receives the
//! Interests whose name hash falls in it.
//!
//! [`rebalance`] computes a new table from the current one and the routers' weights:
//!
//! - each slot's share is its weight's, rounded by largest remainder ([`targets`]): the counts
//!   add up to the table's length exactly, deterministically;
//! - a cell keeps its router while that router is not above its share: only the cells that
//!   must move (those of routers above their share, of routers that left, and unassigned
//!   ones) move, which keeps the other routers' caches and pending Interests where they are;
//! - a router above its share gives up cells spread evenly over the ones it had, and the
//!   freed cells are handed out, in cell order, to the router furthest from its share (the
//!   largest remaining fraction of its deficit), so each router's new cells are interleaved
//!   with the others' rather than one contiguous run, and any prefix of a table rebuilt from
//!   scratch is balanced too.

use std::collections::HashMap;

/// The slot of a cell that no router receives: no active router has a weight above zero.
/// The XDP program drops (and counts) Interests hashed to such a cell.
pub const NO_ROUTER: u32 = u32::MAX;

/// How many cells of a `table_len`-cell table each `(slot, weight)` receives, in the order of
/// `weights`: proportional to the weight, rounded by largest remainder (ties go to the lower
/// slot), so they add up to `table_len` exactly, unless every weight is 0 (then all are 0).
pub fn targets(table_len: u32, weights: &[(u32, u32)]) -> Vec<u32> {
    let total: u128 = weights.iter().map(|&(_, w)| u128::from(w)).sum();
    if total == 0 {
        return vec![0; weights.len()];
    }
    let n = u128::from(table_len);
    let mut out: Vec<u32> = weights
        .iter()
        .map(|&(_, w)| (n * u128::from(w) / total) as u32)
        .collect();
    let given: u64 = out.iter().map(|&t| u64::from(t)).sum();
    let left = u64::from(table_len) - given;
    let mut order: Vec<usize> = (0..weights.len()).collect();
    // Largest remainder first; equal remainders by slot, so the result does not depend on
    // the order of `weights`.
    order.sort_by_key(|&i| {
        let rem = n * u128::from(weights[i].1) % total;
        (std::cmp::Reverse(rem), weights[i].0)
    });
    for &i in order.iter().take(left as usize) {
        out[i] += 1;
    }
    out
}

/// The table that gives each `(slot, weight)` its [`targets`] share while moving the fewest
/// cells from `current` (see the module documentation). Cells of slots not in `weights`,
/// of weight-0 slots and [`NO_ROUTER`] cells are reassigned; when every weight is 0 (or
/// `weights` is empty) every cell becomes [`NO_ROUTER`].
///
/// # Panics
///
/// If a slot appears twice in `weights` or is [`NO_ROUTER`].
pub fn rebalance(current: &[u32], weights: &[(u32, u32)]) -> Vec<u32> {
    let table_len = u32::try_from(current.len()).expect("a table of at most 2^32 - 1 cells");
    let target = targets(table_len, weights);
    let mut index: HashMap<u32, usize> = HashMap::with_capacity(weights.len());
    for (i, &(slot, _)) in weights.iter().enumerate() {
        assert!(slot != NO_ROUTER, "NO_ROUTER is not a slot");
        assert!(index.insert(slot, i).is_none(), "slot {slot} given twice");
    }
    if target.iter().all(|&t| t == 0) {
        return vec![NO_ROUTER; current.len()];
    }
    let mut count = vec![0u64; weights.len()];
    for cell in current {
        if let Some(&i) = index.get(cell) {
            count[i] += 1;
        }
    }
    // Keep min(count, target) cells of each slot, spread evenly over the cells it has
    // (keep its j-th cell when floor((j+1)·t/c) steps past floor(j·t/c)).
    let mut next = vec![NO_ROUTER; current.len()];
    let mut seen = vec![0u64; weights.len()];
    let mut kept = vec![0u64; weights.len()];
    let mut freed = Vec::new();
    for (cell, owner) in current.iter().enumerate() {
        let keep = match index.get(owner) {
            Some(&i) => {
                let (j, t, c) = (seen[i], u64::from(target[i]), count[i]);
                seen[i] += 1;
                (j + 1) * t / c > j * t / c
            }
            None => false,
        };
        if keep {
            let i = index[owner];
            kept[i] += 1;
            next[cell] = *owner;
        } else {
            freed.push(cell);
        }
    }
    // Hand the freed cells out, in cell order, to the slot with the largest remaining
    // fraction of its deficit (ties: the larger deficit, then the earlier entry).
    let deficit: Vec<u64> = (0..weights.len())
        .map(|i| u64::from(target[i]) - kept[i])
        .collect();
    let mut left = deficit.clone();
    for cell in freed {
        let mut best: Option<usize> = None;
        for i in 0..weights.len() {
            if left[i] == 0 {
                continue;
            }
            best = match best {
                None => Some(i),
                Some(b) => {
                    // left[i]/deficit[i] vs left[b]/deficit[b], exactly.
                    let lhs = left[i] * deficit[b];
                    let rhs = left[b] * deficit[i];
                    if lhs > rhs || (lhs == rhs && deficit[i] > deficit[b]) {
                        Some(i)
                    } else {
                        Some(b)
                    }
                }
            };
        }
        let i = best.expect("the freed cells are exactly the deficits");
        left[i] -= 1;
        next[cell] = weights[i].0;
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn counts(table: &[u32], slot: u32) -> usize {
        table.iter().filter(|&&s| s == slot).count()
    }

    /// The fewest cells that must change: every owner's cells above its target.
    fn minimum_moves(current: &[u32], weights: &[(u32, u32)]) -> usize {
        let t = targets(current.len() as u32, weights);
        let mut owners: HashMap<u32, usize> = HashMap::new();
        for &c in current {
            *owners.entry(c).or_default() += 1;
        }
        let all_zero = t.iter().all(|&x| x == 0);
        owners
            .iter()
            .map(|(&slot, &c)| {
                let target = match weights.iter().position(|&(s, _)| s == slot) {
                    Some(i) => t[i] as usize,
                    None if slot == NO_ROUTER && all_zero => current.len(),
                    None => 0,
                };
                c.saturating_sub(target)
            })
            .sum()
    }

    #[test]
    fn targets_are_largest_remainder() {
        assert_eq!(targets(10, &[(0, 1), (1, 1), (2, 1)]), vec![4, 3, 3]);
        assert_eq!(targets(10, &[(2, 1), (1, 1), (0, 1)]), vec![3, 3, 4]);
        assert_eq!(targets(4096, &[(0, 1), (1, 3)]), vec![1024, 3072]);
        assert_eq!(targets(64, &[(0, 0), (1, 0)]), vec![0, 0]);
        assert_eq!(targets(64, &[(0, 0), (1, 5)]), vec![0, 64]);
        assert_eq!(targets(7, &[]), Vec::<u32>::new());
    }

    #[test]
    fn a_table_built_from_scratch_is_balanced_in_every_prefix() {
        let t = rebalance(&[NO_ROUTER; 4096], &[(0, 1), (1, 1), (2, 1), (3, 1)]);
        for k in 1..=1024 {
            for slot in 0..4 {
                assert_eq!(counts(&t[..4 * k], slot), k, "prefix {}", 4 * k);
            }
        }
        let t = rebalance(&[NO_ROUTER; 4096], &[(0, 1), (1, 2)]);
        for k in (30..=4096).step_by(30) {
            let one = counts(&t[..k], 0) as f64;
            assert!(
                (one / k as f64 - 1.0 / 3.0).abs() < 0.02,
                "prefix {k}: {one}"
            );
        }
    }

    #[test]
    fn a_new_router_gets_cells_spread_over_the_table() {
        let two = rebalance(&[NO_ROUTER; 4096], &[(0, 1), (1, 1)]);
        let three = rebalance(&two, &[(0, 1), (1, 1), (2, 1)]);
        assert_eq!(counts(&three, 2), 1365);
        let moved = two.iter().zip(&three).filter(|(a, b)| a != b).count();
        assert_eq!(moved, 1365, "only the new router's cells move");
        // No long run of the new router's cells, and every quarter gets its share.
        let longest = three
            .chunk_by(|a, b| a == b && *a == 2)
            .map(<[u32]>::len)
            .max()
            .unwrap();
        assert!(longest <= 2, "longest run {longest}");
        for q in three.chunks(1024) {
            let n = counts(q, 2);
            assert!((330..=353).contains(&n), "quarter share {n}");
        }
    }

    #[test]
    fn removing_a_router_moves_only_its_cells() {
        let three = rebalance(&[NO_ROUTER; 999], &[(0, 1), (1, 1), (5, 1)]);
        let two = rebalance(&three, &[(0, 1), (5, 1)]);
        assert_eq!(counts(&two, 1), 0);
        for (a, b) in three.iter().zip(&two) {
            if *a != 1 {
                assert_eq!(a, b, "a cell of a remaining router moved");
            }
        }
        assert_eq!(
            rebalance(&two, &[(0, 0), (5, 0)]),
            vec![NO_ROUTER; 999],
            "no weight: no router"
        );
    }

    proptest! {
        #[test]
        fn rebalance_is_exact_minimal_and_idempotent(
            len in prop_oneof![Just(64usize), Just(256), 1usize..300],
            current_raw in proptest::collection::vec(0u32..12, 300),
            weights_raw in proptest::collection::btree_map(0u32..10, 0u32..20, 0..8),
        ) {
            // Slots 10 and 11 are routers that left; some cells are unassigned.
            let current: Vec<u32> = current_raw[..len]
                .iter()
                .map(|&s| if s == 11 { NO_ROUTER } else { s })
                .collect();
            let weights: Vec<(u32, u32)> = weights_raw.into_iter().collect();
            let next = rebalance(&current, &weights);
            let t = targets(len as u32, &weights);
            prop_assert_eq!(next.len(), len);
            let all_zero = t.iter().all(|&x| x == 0);
            if all_zero {
                prop_assert!(next.iter().all(|&s| s == NO_ROUTER));
            } else {
                prop_assert_eq!(t.iter().map(|&x| x as usize).sum::<usize>(), len);
                prop_assert!(next.iter().all(|s| weights.iter().any(|(w, _)| w == s)));
            }
            for (i, &(slot, w)) in weights.iter().enumerate() {
                prop_assert_eq!(counts(&next, slot), t[i] as usize, "slot {}", slot);
                if w == 0 {
                    prop_assert_eq!(counts(&next, slot), 0);
                }
            }
            let moved = current.iter().zip(&next).filter(|(a, b)| a != b).count();
            prop_assert_eq!(moved, minimum_moves(&current, &weights));
            prop_assert_eq!(rebalance(&next, &weights), next.clone());
        }

        #[test]
        fn targets_follow_the_weights(
            len in 1u32..70000,
            weights in proptest::collection::vec(0u32..1001, 1..64),
        ) {
            let ws: Vec<(u32, u32)> = weights.iter().enumerate().map(|(i, &w)| (i as u32, w)).collect();
            let t = targets(len, &ws);
            let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
            if total > 0 {
                prop_assert_eq!(t.iter().map(|&x| u64::from(x)).sum::<u64>(), u64::from(len));
                for (i, &w) in weights.iter().enumerate() {
                    let exact = f64::from(len) * f64::from(w) / total as f64;
                    prop_assert!((f64::from(t[i]) - exact).abs() < 1.0, "{} vs {}", t[i], exact);
                }
            }
        }
    }
}
