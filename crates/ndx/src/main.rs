//! The `ndx` command line: a thin layer over the library crates.
//!
//! Exit codes ([`EXIT_CODES`], also in `--help`, the man page and the README): 0 success;
//! 1 the command ran but found bad input (`dissect` met a malformed packet, every other packet
//! still printed; a configuration that does not parse or validate, for `check` and `run`
//! alike; a request the router or front end refused); 2 usage or I/O error (bad arguments, an
//! unreadable file, no router at the control socket, `run` failing to attach). A command
//! whose standard output is a pipe closed by its reader (`ndx face list | head`) stops
//! quietly with 0 (see `out`).
//!
//! Logging (`ndx_log`): `--log-level` over `RUST_LOG` over `info`. Long-running commands
//! (`run`, `lb run`) log through `tracing`; one-shot commands print their results on standard
//! output and their errors as one `ndx: ...` line on standard error: that is output, not
//! logging.

mod capture;
mod check;
mod ctl;
mod dissect;
mod docs;
mod hex;
mod lb;
mod out;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// Large tables (CS slots, PIT, FIB, indexes) on transparent huge pages; everything else is
/// the system allocator's (`ndx-mem`; `tables.huge_pages = false` turns the advice off).
#[global_allocator]
static ALLOC: ndx_mem::HugePages = ndx_mem::HugePages;

/// What the exit codes mean (`--help`, the man page).
pub(crate) const EXIT_CODES: &str = "\
Exit status:
  0  success
  1  bad input found: a malformed packet (dissect), a configuration that does not parse or
     validate (check, run, lb check, lb run), a request the router or front end refused
  2  usage or I/O error: bad arguments, an unreadable file, no router or front end at the
     control socket, run/lb run unable to attach

Logging: --log-level, else RUST_LOG, else info; journald priorities under systemd.";

/// ndx: a Named Data Networking router for Linux.
#[derive(Debug, Parser)]
#[command(name = "ndx", version, about, long_about = None, after_help = EXIT_CODES)]
struct Cli {
    /// What to log: a level (error, warn, info, debug, trace, off) or directives such as
    /// `info,ndx_hcs=debug`; overrides RUST_LOG (default: info).
    #[arg(long, global = true, value_name = "FILTER")]
    log_level: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Decode NDN packets (hex lines, or a pcap/pcapng capture) and print their TLV trees.
    Dissect(dissect::Args),
    /// Run the router: attach to the configured interfaces and forward until SIGINT/SIGTERM
    /// (SIGHUP reloads the configuration file).
    Run(RunArgs),
    /// Check a router configuration file and print what it sets up.
    Check(CheckArgs),
    /// Show a running router's counters (total and per shard), faces and routes.
    Status(ctl::StatusArgs),
    /// List, add or remove faces of a running router.
    Face(ctl::FaceArgs),
    /// List, add or remove routes of a running router, or set a prefix's strategy.
    Route(ctl::RouteArgs),
    /// Apply the configuration file to a running router (faces, routes, strategies and the
    /// live settings; keys that need a restart are refused): exit 0 applied, 1 refused, 2 the
    /// router cannot be reached.
    Reload(ctl::ReloadArgs),
    /// Serve a file as a versioned, segmented NDN object (a producer) on UDP, or through a
    /// local forwarder's Unix socket with `--forwarder unix://PATH` (the prefix is registered).
    Put(ndx_app::PutOptions),
    /// Fetch a segmented object with a congestion window, verify it and report throughput (a
    /// consumer), over UDP or a local forwarder's Unix socket (`-t unix://PATH`).
    Get(ndx_app::GetOptions),
    /// Answer every Interest under a prefix with a Data of N bytes (a benchmark producer), on
    /// UDP or through a local forwarder (`--forwarder unix://PATH`).
    Serve(ndx_app::ServeOptions),
    /// Send Interests as fast as a window allows and count the Data (a traffic generator),
    /// over UDP or a local forwarder's Unix socket (`-t unix://PATH`).
    Gen(ndx_app::GenOptions),
    /// The cluster front end (seed 002): an XDP load balancer that spreads Interests over
    /// internal routers by name hash (`ndx lb run`), and its control (`status`, `add`,
    /// `remove`, `weight`).
    Lb(lb::Args),
    /// Print a shell completion script on standard output (what `cargo xtask dist` ships).
    #[command(hide = true)]
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Write the man pages (ndx.1 and one per subcommand) into a directory.
    #[command(hide = true)]
    Man {
        /// The directory (created if missing).
        dir: std::path::PathBuf,
    },
}

#[derive(Debug, clap::Args)]
struct CheckArgs {
    /// The configuration file.
    #[arg(long, short = 'c')]
    config: std::path::PathBuf,
    /// Print the parsed configuration as JSON (`"ok": false` and `"error"` when invalid).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// The configuration file.
    #[arg(long, short = 'c')]
    config: std::path::PathBuf,
    /// Number of shard workers (overrides router.shards).
    #[arg(long)]
    shards: Option<usize>,
}

/// `ndx run`: start, forward until SIGINT/SIGTERM, stop cleanly (the XDP program is detached
/// on every exit path: bpf_link attachments die with the process, SIGKILL included).
fn run(args: &RunArgs) -> Result<u8, Box<dyn std::error::Error>> {
    let mut cfg = ndx_router::config::Config::load(&args.config)?;
    if let Some(n) = args.shards {
        if !(1..=ndx_router::config::MAX_SHARDS).contains(&n) || cfg.dispatch_table < n {
            return Err(format!(
                "--shards {n}: between 1 and {} (and at most router.dispatch_table)",
                ndx_router::config::MAX_SHARDS
            )
            .into());
        }
        cfg.shards = n;
    }
    let mut router = ndx_router::Router::start(cfg)?;
    // Reloads (SIGHUP, `ndx reload`) read the same file, whatever the working directory.
    router.set_config_file(std::path::absolute(&args.config)?, args.shards);
    router.notify_systemd(true);
    let stop = router.stop_flag();
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())?;
    }
    signal_hook::flag::register(signal_hook::consts::SIGHUP, router.reload_flag())?;
    for line in router.describe().lines() {
        tracing::info!("{}", line.strip_prefix("ndx: ").unwrap_or(line));
    }
    tracing::info!("forwarding; SIGINT or SIGTERM stops, SIGHUP reloads the configuration");
    router.run();
    let report = router.shutdown();
    tracing::info!(
        "stopped after {:.1} s: {} frames in, {} out, {} Interests, {} Data, {} CS hits",
        report.uptime.as_secs_f64(),
        report.total.get("rx_frames").unwrap_or(0),
        report.total.get("tx_frames").unwrap_or(0),
        report.total.get("interests_in").unwrap_or(0),
        report.total.get("data_in").unwrap_or(0),
        report.total.get("cs_hits").unwrap_or(0),
    );
    Ok(0)
}

/// How a producer is reachable, for its ready line.
fn attached(p: &ndx_app::Producer, prefix: &ndx_app::NameBuf) -> String {
    match p.endpoint() {
        e @ ndx_app::Endpoint::Unix(_) => format!("through {e} ({prefix} registered)"),
        e => format!("on {e}"),
    }
}

/// `ndx put`: announces the versioned name once ready (bound, or registered with the
/// forwarder), then serves until the duration ends (or forever).
fn put(opts: &ndx_app::PutOptions) -> Result<u8, Box<dyn std::error::Error>> {
    let content = ndx_app::read_input(opts.input.as_deref())?;
    let mut producer = ndx_app::Producer::put(opts, &content)?;
    if let Some(name) = producer.versioned_name() {
        out::eprint(format_args!(
            "serving {name} ({} bytes) {}",
            content.len(),
            attached(&producer, &opts.prefix)
        ));
    }
    let report = producer.run(&std::sync::atomic::AtomicBool::new(false))?;
    out::eprint(format_args!("{report:?}"));
    Ok(0)
}

/// `ndx serve`: announces the prefix once ready, then answers until the duration ends.
fn serve(opts: &ndx_app::ServeOptions) -> Result<u8, Box<dyn std::error::Error>> {
    let mut producer = ndx_app::Producer::serve(opts)?;
    out::eprint(format_args!(
        "answering under {} {}",
        opts.prefix,
        attached(&producer, &opts.prefix)
    ));
    let report = producer.run(&std::sync::atomic::AtomicBool::new(false))?;
    out::eprint(format_args!("{report:?}"));
    Ok(0)
}

fn check(args: &CheckArgs) -> Result<u8, Box<dyn std::error::Error>> {
    use std::fmt::Write;
    let c = match ndx_router::config::Config::load(&args.config) {
        Ok(c) => c,
        Err(e) if args.json && check::bad_content(&e) => {
            out::println(check::refused(&args.config, &e))?;
            return Ok(1);
        }
        Err(e) => return Err(e.into()),
    };
    if args.json {
        let thp = ndx_mem::thp_mode();
        out::println(check::router(&args.config, &c, thp.as_deref()))?;
        return Ok(0);
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: ok: {} shard(s), dispatch {:?}, {} interface(s), {} face(s), {} route(s)",
        args.config.display(),
        c.shards,
        c.dispatch,
        c.interfaces.len(),
        c.faces.len(),
        c.routes.len()
    );
    if let (Some(l2), Some(core)) = (&c.l2, &c.shard.l2) {
        let _ = writeln!(s, "  {}", l2.describe(core));
    }
    if c.keep_frames {
        let _ = writeln!(
            s,
            "  CS keeps Data in their receive frames: up to {} of each queue's {} frames, shared \
             by its shards (cs.keep_frames)",
            (c.frames - c.frames / 4) / 2,
            c.frames
        );
    } else {
        let _ = writeln!(s, "  CS copies every Data (cs.keep_frames = false)");
    }
    let thp = ndx_mem::thp_mode().unwrap_or_else(|| "absent".into());
    let _ = match (c.huge_pages, thp.as_str()) {
        (false, _) => writeln!(s, "  tables on base pages (tables.huge_pages = false)"),
        (true, "madvise" | "always") => writeln!(s, "  tables on huge pages (THP {thp})"),
        (true, _) => writeln!(
            s,
            "  tables.huge_pages: the kernel's THP mode is {thp}, so the tables get base pages \
             (echo madvise > /sys/kernel/mm/transparent_hugepage/enabled)"
        ),
    };
    out::print(s)?;
    Ok(0)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(e) = ndx_log::init("ndx", cli.log_level.as_deref()) {
        out::eprint(format_args!("ndx: {e}"));
        return ExitCode::from(2);
    }
    let result: Result<u8, Box<dyn std::error::Error>> = match cli.command {
        Command::Dissect(args) => dissect::run(&args).map_err(Into::into),
        Command::Run(args) => run(&args),
        Command::Check(args) => check(&args),
        Command::Status(args) => ctl::status(&args),
        Command::Face(args) => ctl::face(&args),
        Command::Route(args) => ctl::route(&args),
        Command::Reload(args) => ctl::reload(&args),
        Command::Put(opts) => put(&opts),
        Command::Get(opts) => ndx_app::get(&opts)
            .map(|r| {
                out::eprint(r);
                0
            })
            .map_err(Into::into),
        Command::Serve(opts) => serve(&opts),
        Command::Gen(opts) => match ndx_app::generate(&opts) {
            Ok(r) => out::println(r).map(|()| 0).map_err(Into::into),
            Err(e) => Err(e.into()),
        },
        Command::Lb(args) => lb::main(&args),
        Command::Completions { shell } => docs::completions(Cli::command(), shell),
        Command::Man { dir } => docs::man(Cli::command(), &dir),
    };
    match result {
        Ok(outcome) => ExitCode::from(outcome),
        Err(e) if out::is_closed_pipe(e.as_ref()) => ExitCode::SUCCESS,
        Err(e) => {
            out::eprint(ndx_log::fatal("ndx", &e));
            ExitCode::from(exit_code(e.as_ref()))
        }
    }
}

/// The exit code of a failed command ([`EXIT_CODES`]): 1 for bad input (a configuration's
/// content, a refused request), 2 for the rest.
fn exit_code(e: &(dyn std::error::Error + 'static)) -> u8 {
    let refused = matches!(
        e.downcast_ref::<ndx_router::client::ClientError>(),
        Some(ndx_router::client::ClientError::Refused(_))
    );
    if refused || check::bad_content(e) {
        1
    } else {
        2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
