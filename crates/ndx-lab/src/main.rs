//! `ndx-lab`: seed 000's HCS experiments and seed 002's cluster experiments. `ndx-lab
//! <experiment> --help` for options.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use ndx_core::DispatchMode;
use ndx_hcs::{DelayMode, MemoryMode};
use ndx_lab::catalogue::Catalogue;
use ndx_lab::cluster::{IrKind, Tools};
use ndx_lab::csr;
use ndx_lab::hcs::{self, HcsConfig};
use ndx_lab::hitratio::{self, Design, HitRatioConfig, parse_replacement};
use ndx_lab::model;
use ndx_lab::report::{self, Table};
use ndx_lab::shards;
use ndx_lab::workload::{Kind, WorkloadConfig};

#[derive(Parser, Debug)]
#[command(
    name = "ndx-lab",
    about = "Hierarchical content store (seed 000) and cluster front end (seed 002) experiments"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Args, Debug, Clone)]
struct Common {
    /// Contents in the catalogue (default: 1000; 200 for throughput and l2emu, which hold
    /// 8 KB chunks twice in DRAM).
    #[arg(long)]
    contents: Option<u32>,
    /// Chunks per content = Real stream length (default: 100; 1280 for dispatch, as the paper).
    #[arg(long)]
    chunks: Option<u32>,
    /// Batch size B (chunks).
    #[arg(long, default_value_t = 10)]
    batch: u32,
    /// Real: Zipf skew.
    #[arg(long, default_value_t = 1.0)]
    alpha: f64,
    /// Real: download arrivals per second.
    #[arg(long, default_value_t = 1.0)]
    lambda: f64,
    /// Real: chunks per second of one download.
    #[arg(long, default_value_t = 8.0)]
    rate: f64,
    /// Workload seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Results directory (default under `target/`, which git ignores).
    #[arg(long, default_value = "target/lab-results")]
    out: PathBuf,
}

impl Common {
    fn with_defaults(mut self, contents: u32, chunks: u32) -> Self {
        self.contents.get_or_insert(contents);
        self.chunks.get_or_insert(chunks);
        self
    }

    fn chunks(&self) -> u32 {
        self.chunks.unwrap_or(100)
    }

    fn contents(&self) -> u32 {
        self.contents.unwrap_or(1000)
    }

    fn workload(&self, kind: Kind) -> WorkloadConfig {
        WorkloadConfig {
            kind,
            contents: self.contents(),
            chunks_per_content: self.chunks(),
            chunk_rate: self.rate,
            arrival_rate: self.lambda,
            alpha: self.alpha,
            seed: self.seed,
        }
    }
}

/// Options of the cluster experiments (seed 002): root, network namespaces, real processes.
#[derive(Args, Debug, Clone)]
struct ClusterCommon {
    /// The `ndx` binary (default: the `ndx` next to this program, else the one on PATH).
    #[arg(long)]
    ndx: Option<PathBuf>,
    /// The `ndnd` binary (for `ndnd fw` internal routers).
    #[arg(long, default_value = "/opt/ndx-interop/go/ndnd")]
    ndnd: PathBuf,
    /// Data payload bytes (NDNLPv2-fragmented on the 1500-byte links; the paper's chunks are
    /// 4400 bytes).
    #[arg(long, default_value_t = 8000)]
    payload: usize,
    /// Interests in flight per download (`ndx gen -w`; the paper's pipeline size is 16).
    #[arg(long, default_value_t = 16)]
    window: usize,
    /// Warm-up before each measurement, seconds.
    #[arg(long, default_value_t = 1)]
    warmup: u64,
    /// Measurement window, seconds.
    #[arg(long, default_value_t = 5)]
    duration: u64,
    /// Longest wait, before each run, for other jobs to leave the machine (under 0.15 CPUs
    /// outside the experiment's processes), seconds; a run they disturbed is measured again
    /// (up to 3 times). 0: never wait.
    #[arg(long, default_value_t = 300)]
    wait_quiet: u64,
    /// Scratch directory for configurations, sockets and logs (default: a fresh one under
    /// /tmp, removed after a successful run).
    #[arg(long)]
    scratch: Option<PathBuf>,
    /// Results directory (default under `target/`, which git ignores).
    #[arg(long, default_value = "target/lab-results")]
    out: PathBuf,
}

impl ClusterCommon {
    fn tools(&self) -> Result<Tools, String> {
        let ndx = match &self.ndx {
            Some(p) => p.clone(),
            None => std::env::current_exe()
                .ok()
                .and_then(|e| e.parent().map(|d| d.join("ndx")))
                .filter(|p| p.is_file())
                .unwrap_or_else(|| PathBuf::from("ndx")),
        };
        let ndnd = self.ndnd.is_file().then(|| self.ndnd.clone());
        Ok(Tools { ndx, ndnd })
    }

    /// The setup, and whether the scratch directory is ours to remove.
    fn setup(&self) -> Result<(csr::Setup, bool), String> {
        if !csr::is_root() {
            return Err("the cluster experiments need root (network namespaces, XDP, tc)".into());
        }
        let (scratch, ours) = match &self.scratch {
            Some(p) => (p.clone(), false),
            None => (
                std::env::temp_dir().join(format!("ndx-lab-cluster-{}", std::process::id())),
                true,
            ),
        };
        std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
        Ok((
            csr::Setup {
                tools: self.tools()?,
                scratch,
                payload: self.payload,
                window: self.window,
                warmup: self.warmup,
                duration: self.duration,
                wait_quiet: self.wait_quiet,
            },
            ours,
        ))
    }
}

fn parse_ir_kind(s: &str) -> Result<IrKind, String> {
    match s {
        "ndx" => Ok(IrKind::Ndx),
        "ndnd" => Ok(IrKind::Ndnd),
        _ => Err(format!("unknown router {s:?}: expected ndx or ndnd")),
    }
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Cluster load balancing: throughput vs downloads for 1..N internal routers, per-router
    /// share and CPU, front-end CPU, and a per-router cost model (seed 002 Fig. 6, 7, 8).
    ClusterLoad {
        #[command(flatten)]
        common: ClusterCommon,
        /// Numbers of internal routers (ndx, pinned round robin on the CPUs).
        #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
        irs: Vec<usize>,
        /// Numbers of concurrent downloads.
        #[arg(long, value_delimiter = ',', default_value = "1,2,3,4")]
        downloads: Vec<usize>,
        /// Routers in the cost model's table (one core each, front end on one more).
        #[arg(long, default_value_t = 16)]
        model_irs: usize,
    },
    /// Uniform vs weighted hash space with two rate-limited internal routers (seed 002 Fig. 9).
    ClusterWeights {
        #[command(flatten)]
        common: ClusterCommon,
        /// Egress limit of internal routers 1 and 2 (tc tbf on their eth0), Mbit/s.
        #[arg(long, default_value_t = 100)]
        limit_mbit: u32,
        /// The weighted split of routers 1, 2, 3.
        #[arg(long, value_delimiter = ',', default_value = "1,1,2")]
        weights: Vec<u32>,
        /// What router 3 (unlimited) runs: ndnd or ndx (1 and 2 are ndnd: tc shapes only a
        /// kernel-socket sender's egress).
        #[arg(long, default_value = "ndnd", value_parser = parse_ir_kind)]
        ir3: IrKind,
        /// Numbers of concurrent downloads.
        #[arg(long, value_delimiter = ',', default_value = "1,2,3,4")]
        downloads: Vec<usize>,
    },
    /// Live scale-out and scale-in (1 -> 2 -> 3 -> 2 -> 1 routers) during downloads that allow
    /// no retransmission; throughput sampled over time (seed 002 Fig. 14).
    ClusterScaling {
        #[command(flatten)]
        common: ClusterCommon,
        /// Concurrent downloads (`ndx get --max-retries 0`).
        #[arg(long, default_value_t = 3)]
        downloads: usize,
        /// Seconds between two changes of the router set.
        #[arg(long, default_value_t = 3.0)]
        step: f64,
        /// Sampling period, seconds.
        #[arg(long, default_value_t = 0.5)]
        sample: f64,
        /// Object size per download, MB (enough to outlast the 5 steps).
        #[arg(long, default_value_t = 800)]
        object_mb: usize,
        /// Largest congestion window of each download.
        #[arg(long, default_value_t = 16)]
        max_cwnd: u32,
        /// The front end's drain time for removed routers, ms (above the 2 s Interest lifetime).
        #[arg(long, default_value_t = 3000)]
        drain_ms: u64,
        /// Smallest retransmission timeout of each download, ms (above the CPU stalls of a
        /// loaded 2-core machine, so that a retransmission means a loss).
        #[arg(long, default_value_t = 1000)]
        min_rto_ms: u64,
        /// Retransmissions allowed per segment; 0 is the paper's setting (one loss fails the
        /// download).
        #[arg(long, default_value_t = 3)]
        max_retries: u32,
        /// What the internal routers run: ndx or ndnd.
        #[arg(long, default_value = "ndx", value_parser = parse_ir_kind)]
        ir: IrKind,
        /// Egress limit of every internal router, Mbit/s (tc tbf; needs --ir ndnd): makes
        /// each router a bottleneck, so throughput follows the number of routers.
        #[arg(long, default_value_t = 0)]
        limit_mbit: u32,
    },
    /// Measured (real Cs) vs model L1 hit ratio for Seq, Real, Unif over L1 sizes (Fig. 5a).
    Hitratio {
        #[command(flatten)]
        common: Common,
        /// L1 replacement: fifo, lru, clock.
        #[arg(long, default_value = "fifo")]
        policy: String,
        /// Design: serial or prefetch.
        #[arg(long, default_value = "serial")]
        design: Design,
        /// L1 sizes as fractions of the catalogue.
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "0.01,0.02,0.05,0.1,0.2,0.5,1"
        )]
        l1_frac: Vec<f64>,
        /// Workloads.
        #[arg(long, value_delimiter = ',', default_value = "seq,real,unif")]
        workloads: Vec<Kind>,
        /// Measured requests per point (default: 4 |C|).
        #[arg(long)]
        measure: Option<u64>,
    },
    /// HCS throughput (L1 Cs + emulated L2), serial vs prefetch, vs L1 size and vs tau (Fig. 6, 9a).
    Throughput {
        #[command(flatten)]
        common: Common,
        /// Chunk payload |c| in bytes.
        #[arg(long, default_value_t = 8192)]
        chunk_bytes: usize,
        /// L2 throughputs (Gbit/s) for the tau sweep (at the default L1 fraction).
        #[arg(long, value_delimiter = ',', default_value = "4,8,16,32,64")]
        tau: Vec<f64>,
        /// L1 fractions for the L1 sweep (at tau = 4 Gbit/s).
        #[arg(long, value_delimiter = ',', default_value = "0.02,0.05,0.1,0.2,0.5")]
        l1_frac: Vec<f64>,
        /// L1 fraction for the tau sweep (paper: 1 GB / 10 GB).
        #[arg(long, default_value_t = 0.1)]
        default_frac: f64,
        /// Measured requests per point.
        #[arg(long, default_value_t = 200_000)]
        measure: u64,
        /// Time cap per point, seconds.
        #[arg(long, default_value_t = 2.0)]
        max_secs: f64,
        /// Serial design's delay technique: busy, sleep, deadline.
        #[arg(long, default_value = "busy")]
        delay: String,
        /// Multi-shard run: total number of shards (serve one shard's requests only).
        #[arg(long, default_value_t = 1)]
        shards: usize,
        /// Multi-shard run: which shard this process is.
        #[arg(long, default_value_t = 0)]
        shard_index: u8,
        /// Multi-shard run: dispatch by `content` or `batch`.
        #[arg(long, default_value = "content")]
        dispatch: String,
    },
    /// Emulated L2 accuracy: observed vs target tau, busy vs sleep, static vs dynamic (Fig. 4).
    L2emu {
        #[command(flatten)]
        common: Common,
        /// Chunk payload |c| in bytes.
        #[arg(long, default_value_t = 8192)]
        chunk_bytes: usize,
        /// Target L2 throughputs, Gbit/s.
        #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16,32,64")]
        tau: Vec<f64>,
        /// L1 fraction of the catalogue.
        #[arg(long, default_value_t = 0.1)]
        l1_frac: f64,
        /// Time cap per point, seconds.
        #[arg(long, default_value_t = 0.5)]
        max_secs: f64,
    },
    /// Requests per shard under H=Content vs H=Batch (ndx_core::Dispatch) (Fig. 8a).
    Dispatch {
        #[command(flatten)]
        common: Common,
        /// Shard counts.
        #[arg(long, value_delimiter = ',', default_value = "2,4,8,16")]
        shards: Vec<usize>,
        /// Requests dispatched (after the ramp).
        #[arg(long, default_value_t = 1_000_000)]
        requests: u64,
        /// Indirection table entries.
        #[arg(long, default_value_t = 4096)]
        table: usize,
    },
}

fn parse_delay(s: &str) -> Result<DelayMode, String> {
    match s {
        "busy" => Ok(DelayMode::BusyWait),
        "sleep" => Ok(DelayMode::Sleep),
        "deadline" => Ok(DelayMode::Deadline),
        _ => Err(format!(
            "unknown delay {s:?}: expected busy, sleep or deadline"
        )),
    }
}

fn shard_filter(
    shards: usize,
    index: u8,
    mode: &str,
    batch: u32,
) -> Result<Option<hcs::ShardFilter>, String> {
    if shards <= 1 {
        return Ok(None);
    }
    let mode = match mode {
        "content" => DispatchMode::Content,
        "batch" => DispatchMode::Batch(u64::from(batch)),
        _ => {
            return Err(format!(
                "unknown dispatch {mode:?}: expected content or batch"
            ));
        }
    };
    if usize::from(index) >= shards {
        return Err(format!("--shard-index {index} with {shards} shards"));
    }
    let dispatch = ndx_core::Dispatch::new(
        ndx_lab::catalogue::LAB_KEY,
        mode,
        shards,
        4096.max(shards.next_power_of_two()),
    )
    .map_err(|e| e.to_string())?;
    Ok(Some(hcs::ShardFilter {
        dispatch,
        shard: index,
    }))
}

fn progress(s: &str) {
    eprintln!("  .. {s}");
}

fn emit(common: &Common, name: &str, table: &Table, gp: &str) -> Result<(), String> {
    print!("{}", table.render());
    let (csv, script) = report::write(&common.out, name, table, gp)
        .map_err(|e| format!("writing results to {}: {e}", common.out.display()))?;
    println!("wrote {} and {}", csv.display(), script.display());
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The L2 store (ndx-hcs) reports through `tracing`: the same lines as ndx's (RUST_LOG).
    if let Err(e) = ndx_log::init("ndx-lab", None) {
        eprintln!("ndx-lab: {e}");
        return ExitCode::from(2);
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ndx-lab: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.cmd {
        Cmd::Hitratio {
            common,
            policy,
            design,
            l1_frac,
            workloads,
            measure,
        } => hitratio_cmd(&common, &policy, design, &l1_frac, workloads, measure),
        Cmd::Throughput {
            common,
            chunk_bytes,
            tau,
            l1_frac,
            default_frac,
            measure,
            max_secs,
            delay,
            shards,
            shard_index,
            dispatch,
        } => throughput_cmd(
            &common.clone().with_defaults(200, 100),
            chunk_bytes,
            &tau,
            &l1_frac,
            default_frac,
            measure,
            max_secs,
            parse_delay(&delay)?,
            shard_filter(shards, shard_index, &dispatch, common.batch)?,
        ),
        Cmd::L2emu {
            common,
            chunk_bytes,
            tau,
            l1_frac,
            max_secs,
        } => l2emu_cmd(
            &common.with_defaults(200, 100),
            chunk_bytes,
            &tau,
            l1_frac,
            max_secs,
        ),
        Cmd::Dispatch {
            common,
            shards,
            requests,
            table,
        } => dispatch_cmd(&common.with_defaults(781, 1280), &shards, requests, table),
        Cmd::ClusterLoad {
            common,
            irs,
            downloads,
            model_irs,
        } => cluster_load_cmd(&common, &irs, &downloads, model_irs),
        Cmd::ClusterWeights {
            common,
            limit_mbit,
            weights,
            ir3,
            downloads,
        } => {
            let weights: [u32; 3] = weights
                .try_into()
                .map_err(|_| "--weights takes three weights".to_owned())?;
            cluster_weights_cmd(
                &common,
                &csr::WeightsOptions {
                    ir3,
                    limit_mbit,
                    weights,
                    downloads,
                },
            )
        }
        Cmd::ClusterScaling {
            common,
            downloads,
            step,
            sample,
            object_mb,
            max_cwnd,
            drain_ms,
            min_rto_ms,
            max_retries,
            ir,
            limit_mbit,
        } => cluster_scaling_cmd(
            &common,
            &csr::ScalingOptions {
                downloads,
                step_secs: step,
                sample_secs: sample,
                object_mb,
                max_cwnd,
                drain_ms,
                min_rto_ms,
                max_retries,
                kind: ir,
                limit_mbit,
            },
        ),
    }
}

fn emit_to(out: &std::path::Path, name: &str, table: &Table, gp: &str) -> Result<(), String> {
    print!("{}", table.render());
    let (csv, script) = report::write(out, name, table, gp)
        .map_err(|e| format!("writing results to {}: {e}", out.display()))?;
    println!("wrote {} and {}", csv.display(), script.display());
    Ok(())
}

/// Runs a cluster experiment with its setup; removes the scratch directory when it is ours
/// and the run succeeded (else says where the logs are).
fn with_setup<T>(
    common: &ClusterCommon,
    f: impl FnOnce(&csr::Setup) -> Result<T, String>,
) -> Result<T, String> {
    let (setup, ours) = common.setup()?;
    eprintln!(
        "ndx: {}, ndnd: {}, scratch: {}",
        setup.tools.ndx.display(),
        setup
            .tools
            .ndnd
            .as_ref()
            .map_or("none".into(), |p| p.display().to_string()),
        setup.scratch.display()
    );
    match f(&setup) {
        Ok(v) => {
            if ours {
                let _ = std::fs::remove_dir_all(&setup.scratch);
            }
            Ok(v)
        }
        Err(e) => Err(format!(
            "{e}
(logs in {})",
            setup.scratch.display()
        )),
    }
}

fn print_notes(notes: &[String]) {
    for n in notes {
        println!("- {n}");
    }
}

fn cluster_load_cmd(
    common: &ClusterCommon,
    irs: &[usize],
    downloads: &[usize],
    model_irs: usize,
) -> Result<(), String> {
    if irs.iter().any(|&n| !(1..=16).contains(&n)) || downloads.contains(&0) {
        return Err("--irs takes 1..=16 routers and --downloads at least 1".into());
    }
    let r = with_setup(common, |s| csr::cluster_load(s, irs, downloads, model_irs))?;
    let gp = "set multiplot layout 1,2\nset xlabel 'downloads'\nset ylabel 'Mbit/s (payload)'\n\
              plot for [n=1:8] 'cluster-load.csv' using ($1 == n ? $2 : 1/0):3 with linespoints title sprintf('%d IR', n)\n\
              set ylabel 'CPU (1 = one core)'\n\
              plot 'cluster-load.csv' using ($1 == 3 ? $2 : 1/0):8 with linespoints title 'IR1', \\\n\
                   '' using ($1 == 3 ? $2 : 1/0):11 with linespoints title 'IR2', \\\n\
                   '' using ($1 == 3 ? $2 : 1/0):14 with linespoints title 'IR3', \\\n\
                   '' using ($1 == 3 ? $2 : 1/0):(column('lb_cpu')) with linespoints title 'front end (XDP)'\n\
              unset multiplot";
    emit_to(&common.out, "cluster-load", &r.measured, gp)?;
    let gp = "set xlabel 'internal routers (one core each)'\nset ylabel 'Mbit/s (payload)'\n\
              plot 'cluster-load-model.csv' using 1:2 with lines title 'N x router', \\\n\
                   '' using 1:3 with lines title 'front end (one core)', \\\n\
                   '' using 1:4 with linespoints title 'predicted'";
    emit_to(&common.out, "cluster-load-model", &r.model, gp)?;
    print_notes(&r.notes);
    Ok(())
}

fn cluster_weights_cmd(common: &ClusterCommon, o: &csr::WeightsOptions) -> Result<(), String> {
    let r = with_setup(common, |s| csr::cluster_weights(s, o))?;
    let gp = "set xlabel 'downloads'\nset ylabel 'Mbit/s (payload)'\n\
              plot for [m in 'uniform weighted'] 'cluster-weights.csv' using (strcol(1) eq m ? $3 : 1/0):4 with linespoints title m";
    print!("{}", r.capacity.render());
    emit_to(&common.out, "cluster-weights", &r.measured, gp)?;
    print_notes(&r.notes);
    Ok(())
}

fn cluster_scaling_cmd(common: &ClusterCommon, o: &csr::ScalingOptions) -> Result<(), String> {
    let r = with_setup(common, |s| csr::cluster_scaling(s, o))?;
    let gp = "set xlabel 'time (s)'\nset ylabel 'Mbit/s (IP, to the consumers)'\nset y2label 'routers'\n\
              set y2tics 1\nset y2range [0:4]\n\
              plot 'cluster-scaling.csv' using 1:3 with linespoints title 'throughput', \\\n\
                   '' using 1:2 axes x1y2 with steps title 'routers in the hash space'";
    emit_to(&common.out, "cluster-scaling", &r.samples, gp)?;
    for (i, d) in r.downloads.iter().enumerate() {
        println!(
            "download {}: {} ({})",
            i + 1,
            if d.ok { "completed" } else { "FAILED" },
            d.summary
        );
    }
    print_notes(&r.notes);
    Ok(())
}

fn hitratio_cmd(
    common: &Common,
    policy: &str,
    design: Design,
    l1_frac: &[f64],
    kinds: Vec<Kind>,
    measure: Option<u64>,
) -> Result<(), String> {
    let replacement = parse_replacement(policy).map_err(|e| e.to_string())?;
    let w = common.workload(Kind::Real);
    let c = w.catalogue();
    eprintln!("building catalogue: {c} chunks");
    let cat = Catalogue::build(common.contents(), common.chunks(), Some(16))
        .map_err(|e| e.to_string())?;
    let cfg = HitRatioConfig {
        workload: w,
        kinds: kinds.clone(),
        batch: common.batch,
        l1_sizes: l1_frac
            .iter()
            .map(|f| ((f * c as f64).round() as u64).max(u64::from(common.batch)))
            .collect(),
        replacement,
        design,
        measure: measure.unwrap_or(4 * c),
    };
    let rows = hitratio::run(&cfg, &cat, &mut progress);
    let mut t = Table::new(&[
        "workload",
        "l1_chunks",
        "l1_frac",
        "measured",
        "model",
        "abs_err",
    ]);
    for r in &rows {
        t.push(vec![
            r.kind.to_string(),
            r.l1.to_string(),
            format!("{:.3}", r.l1 as f64 / c as f64),
            format!("{:.5}", r.measured),
            format!("{:.5}", r.model),
            format!("{:.2e}", (r.measured - r.model).abs()),
        ]);
    }
    let gp = "set logscale x\nset xlabel '|L1| / |C|'\nset ylabel 'L1 hit ratio'\n\
              plot for [w in 'seq real unif'] 'hitratio.csv' using (strcol(1) eq w ? $3 : 1/0):4 with points title w.' measured', \\\n\
                   for [w in 'seq real unif'] 'hitratio.csv' using (strcol(1) eq w ? $3 : 1/0):5 with lines title w.' model'";
    emit(common, "hitratio", &t, gp)?;
    println!(
        "policy {policy} (model: {} form), design {design}, B = {}, |C| = {c} chunks, {} measured requests per point",
        hitratio::model_policy(replacement),
        common.batch,
        cfg.measure
    );
    for k in kinds {
        println!("RMSE_{k} = {:.2e}", hitratio::rmse_of(&rows, k));
    }
    println!(
        "paper (NFD-HCS, FIFO, serial): RMSE_seq = 1e-6, RMSE_real = 1.6e-2, RMSE_unif = 4e-4"
    );
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn throughput_cmd(
    common: &Common,
    chunk_bytes: usize,
    taus: &[f64],
    l1_fracs: &[f64],
    default_frac: f64,
    measure: u64,
    max_secs: f64,
    delay: DelayMode,
    shard: Option<hcs::ShardFilter>,
) -> Result<(), String> {
    let w = common.workload(Kind::Real);
    let c = w.catalogue();
    eprintln!(
        "building catalogue: {c} chunks of {chunk_bytes} B ({} MB)",
        (c * chunk_bytes as u64) >> 20
    );
    let cat = Catalogue::build(common.contents(), common.chunks(), Some(chunk_bytes))
        .map_err(|e| e.to_string())?;
    let l1_of = |f: f64| ((f * c as f64).round() as u64).max(u64::from(common.batch));
    let costs = hcs::calibrate(
        &cat,
        l1_of(default_frac),
        common.batch,
        ndx_core::Replacement::Fifo,
    );
    eprintln!(
        "calibrated: d_L1.lookup = {:.2} us, d_L1.insert (batch) = {:.2} us",
        costs.lookup * 1e6,
        costs.insert_batch * 1e6
    );
    let mut points: Vec<(f64, f64)> = l1_fracs.iter().map(|&f| (f, 4.0)).collect();
    points.extend(taus.iter().map(|&t| (default_frac, t)));
    let mut t = Table::new(&[
        "sweep",
        "design",
        "l1_frac",
        "tau_gbps",
        "hit",
        "kchunks_s",
        "gbps",
        "model_serial_gbps",
        "model_parallel_gbps",
        "prefetch_vs_serial",
        "cpu_share",
        "gbps_per_cpu",
    ]);
    for (n, &(frac, tau)) in points.iter().enumerate() {
        let sweep = if n < l1_fracs.len() { "l1" } else { "tau" };
        let mut serial_gbps = 0.0;
        for design in [Design::Serial, Design::Prefetch] {
            let cfg = HcsConfig {
                workload: w,
                batch: common.batch,
                l1: l1_of(frac),
                replacement: ndx_core::Replacement::Fifo,
                tau_bps: tau * 1e9,
                delay,
                memory: MemoryMode::Static,
                design,
                measure,
                max_time: Duration::from_secs_f64(max_secs),
                shard: shard.clone(),
            };
            let r = hcs::run(&cfg, &cat).map_err(|e| e.to_string())?;
            let gbps = r.gbps(chunk_bytes);
            let d = model::Delays {
                l1_lookup: costs.lookup,
                l1_insert: costs.insert_batch,
                l2_read: model::l2_read_delay(common.batch, chunk_bytes as f64, tau * 1e9),
            };
            let to_gbps = |x: f64| x * chunk_bytes as f64 * 8.0 / 1e9;
            let ratio = if design == Design::Serial {
                serial_gbps = gbps;
                String::new()
            } else {
                format!("{:.2}", gbps / serial_gbps.max(1e-12))
            };
            progress(&format!(
                "{sweep} {design} |L1|/|C|={frac} tau={tau}: hit {:.4}, {:.1} kchunks/s, {gbps:.2} Gbps ({} requests)",
                r.hit_ratio,
                r.chunks_per_s() / 1e3,
                r.served
            ));
            t.push(vec![
                sweep.into(),
                design.to_string(),
                format!("{frac}"),
                format!("{tau}"),
                format!("{:.4}", r.hit_ratio),
                format!("{:.1}", r.chunks_per_s() / 1e3),
                format!("{gbps:.2}"),
                format!(
                    "{:.2}",
                    to_gbps(model::throughput_chunks(r.hit_ratio, d, false))
                ),
                format!(
                    "{:.2}",
                    to_gbps(model::throughput_chunks(r.hit_ratio, d, true))
                ),
                ratio,
                format!("{:.2}", r.cpu_share),
                format!("{:.2}", gbps / r.cpu_share),
            ]);
        }
    }
    let gp = "set multiplot layout 1,2\nset ylabel 'Gbit/s'\n\
              set xlabel '|L1|/|C| (tau = 4 Gbit/s)'\nset logscale x\n\
              plot for [d in 'serial prefetch'] 'throughput.csv' using (strcol(1) eq 'l1' && strcol(2) eq d ? $3 : 1/0):7 with linespoints title d\n\
              set xlabel 'tau_{L2} (Gbit/s)'\n\
              plot for [d in 'serial prefetch'] 'throughput.csv' using (strcol(1) eq 'tau' && strcol(2) eq d ? $4 : 1/0):7 with linespoints title d, \\\n\
                   'throughput.csv' using (strcol(1) eq 'tau' && strcol(2) eq 'serial' ? $4 : 1/0):8 with lines title 'model serial (eq. 10)', \\\n\
                   'throughput.csv' using (strcol(1) eq 'tau' && strcol(2) eq 'serial' ? $4 : 1/0):9 with lines title 'model parallel (eq. 11)'\n\
              unset multiplot";
    t.group_by(&[0, 1]);
    emit(common, "throughput", &t, gp)?;
    if let Some(f) = &shard {
        println!(
            "shard {} of {} ({:?}): only the requests dispatched to it",
            f.shard,
            f.dispatch.shards(),
            f.dispatch.mode()
        );
    }
    println!(
        "|c| = {chunk_bytes} B, B = {}, |C| = |L2| = {c} chunks, single thread, serial delay = {delay:?}, memory static; \
         d_L1.lookup = {:.2} us, d_L1.insert = {:.2} us per batch; paper: NFD-HCS ~4 Gbit/s single thread at tau = 4",
        common.batch,
        costs.lookup * 1e6,
        costs.insert_batch * 1e6
    );
    Ok(())
}

fn l2emu_cmd(
    common: &Common,
    chunk_bytes: usize,
    taus: &[f64],
    l1_frac: f64,
    max_secs: f64,
) -> Result<(), String> {
    let w = common.workload(Kind::Real);
    let c = w.catalogue();
    eprintln!("building catalogue: {c} chunks of {chunk_bytes} B");
    let cat = Catalogue::build(common.contents(), common.chunks(), Some(chunk_bytes))
        .map_err(|e| e.to_string())?;
    let mut t = Table::new(&[
        "delay",
        "memory",
        "target_gbps",
        "observed_l2_gbps",
        "observed_over_target",
        "hcs_gbps",
        "l2_reads",
        "cpu_share",
    ]);
    for delay in [DelayMode::BusyWait, DelayMode::Sleep] {
        for memory in [MemoryMode::Static, MemoryMode::Dynamic] {
            for &tau in taus {
                let cfg = HcsConfig {
                    workload: w,
                    batch: common.batch,
                    l1: ((l1_frac * c as f64) as u64).max(u64::from(common.batch)),
                    replacement: ndx_core::Replacement::Fifo,
                    tau_bps: tau * 1e9,
                    delay,
                    memory,
                    design: Design::Serial,
                    measure: 2_000_000,
                    shard: None,
                    max_time: Duration::from_secs_f64(max_secs),
                };
                let r = hcs::run(&cfg, &cat).map_err(|e| e.to_string())?;
                let obs = r.observed_l2_gbps();
                progress(&format!(
                    "{delay:?} {memory:?} tau={tau}: observed L2 {obs:.2} Gbps, HCS {:.2} Gbps",
                    r.gbps(chunk_bytes)
                ));
                t.push(vec![
                    format!("{delay:?}"),
                    format!("{memory:?}"),
                    format!("{tau}"),
                    format!("{obs:.2}"),
                    format!("{:.3}", obs / tau),
                    format!("{:.2}", r.gbps(chunk_bytes)),
                    r.l2_reads.to_string(),
                    format!("{:.2}", r.cpu_share),
                ]);
            }
        }
    }
    let gp = "set logscale xy\nset xlabel 'target tau (Gbit/s)'\nset ylabel 'observed L2 Gbit/s'\n\
              plot for [d in 'BusyWait Sleep'] for [m in 'Static Dynamic'] 'l2emu.csv' using (strcol(1) eq d && strcol(2) eq m ? $3 : 1/0):4 with linespoints title d.'/'.m, x with lines title 'target'";
    emit(common, "l2emu", &t, gp)?;
    println!("observed L2 throughput = bytes read / time the loop waited for them (serial design)");
    Ok(())
}

fn dispatch_cmd(
    common: &Common,
    shard_counts: &[usize],
    requests: u64,
    table: usize,
) -> Result<(), String> {
    let w = common.workload(Kind::Real);
    eprintln!("building names: {} chunks", w.catalogue());
    let cat =
        Catalogue::build(common.contents(), common.chunks(), None).map_err(|e| e.to_string())?;
    let mut t = Table::new(&[
        "shards",
        "mode",
        "max_over_mean",
        "min_over_mean",
        "content_over_batch",
    ]);
    for &n in shard_counts {
        let mut content_imb = 0.0;
        for mode in [
            DispatchMode::Content,
            DispatchMode::Batch(u64::from(common.batch)),
        ] {
            let load = shards::shard_loads(
                &w,
                &cat,
                mode,
                n,
                table.max(n.next_power_of_two()),
                requests,
            )
            .map_err(|e| e.to_string())?;
            let imb = load.imbalance();
            let (name, ratio) = match mode {
                DispatchMode::Content => {
                    content_imb = imb;
                    ("content", String::new())
                }
                _ => ("batch", format!("{:.2}", content_imb / imb)),
            };
            progress(&format!("{n} shards {name}: {:?}", load.per_shard));
            t.push(vec![
                n.to_string(),
                name.into(),
                format!("{imb:.3}"),
                format!("{:.3}", load.min_ratio()),
                ratio,
            ]);
        }
    }
    let gp = "set xlabel 'shards'\nset ylabel 'most loaded / mean'\nset logscale x 2\n\
              plot for [m in 'content batch'] 'dispatch.csv' using (strcol(2) eq m ? $1 : 1/0):3 with linespoints title 'H='.m";
    t.group_by(&[1]);
    emit(common, "dispatch", &t, gp)?;
    println!(
        "{requests} Real requests, alpha = {}, {} contents x {} chunks; paper: at 16 shards the most loaded core carries 3x more under H=Content than under H=Batch",
        common.alpha,
        common.contents(),
        common.chunks()
    );
    Ok(())
}
