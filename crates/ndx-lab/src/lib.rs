//! ndx-lab: the experiments of issue 5 (hierarchical content store, seed 000) that do not
//! need the forwarding shard, and the cluster topology of seed 002 (`ndx lb`).
//!
//! | module | what |
//! |---|---|
//! | [`rng`] | seeded PRNG and Zipf sampler |
//! | [`workload`] | Seq, Unif and Real request streams (Table 3) |
//! | [`model`] | eq. 1-11: hit ratio (Che's approximation, FIFO and LRU forms) and throughput |
//! | [`cluster`] | seed 002's cluster in network namespaces: consumer, front end (`ndx lb`), internal routers (ndx, ndnd), producer |
//! | [`csr`] | seed 002's experiments on that cluster: load balancing (Fig. 6-8), weights (Fig. 9), live scaling (Fig. 14) |
//! | [`catalogue`] | names and Data packets of every chunk (real `ndx-codec` packets) |
//! | [`hitratio`] | measured (real `ndx_core::Cs`) vs model L1 hit ratio (Fig. 5a) |
//! | [`hcs`] | HCS service loop: L1 `Cs` + `ndx_hcs::EmulatedL2`, serial vs prefetch (Fig. 4, 6, 9a) |
//! | [`shards`] | per-shard load under H=Content vs H=Batch with `ndx_core::Dispatch` (Fig. 8) |
//! | [`report`] | tables, CSV and gnuplot output |

#![deny(missing_docs)]

pub mod catalogue;
pub mod cluster;
pub mod csr;
pub mod hcs;
pub mod hitratio;
pub mod model;
pub mod report;
pub mod rng;
pub mod shards;
pub mod workload;
