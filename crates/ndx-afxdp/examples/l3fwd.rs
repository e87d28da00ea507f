//! AF_XDP layer-3 forwarder, the ceiling of ndx's unique-name path:
//! `l3fwd <if_a> <peer_a ip:port> <if_b> <peer_b ip:port> <seconds>`.
//!
//! UDP frames received on `if_a` leave on `if_b` towards `peer_b` and the other way round,
//! with the headers ndx writes (see `ndx_afxdp::l3fwd`). Runs for `seconds` or until
//! SIGINT/SIGTERM, then prints its counters: frames forwarded and dropped per direction.
//! The peers must be in the neighbour table (the forwarder takes every frame, ARP included).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use ndx_afxdp::l3fwd::{Config, DirStats, L3Fwd, Side};

const USAGE: &str = "usage: l3fwd <if_a> <peer_a ip:port> <if_b> <peer_b ip:port> <seconds>";

fn line(name: &str, d: &DirStats, secs: f64) -> String {
    format!(
        "{name}: rx {} forwarded {} ({:.0} pps) dropped {} (not_udp {} too_long {} tx_full {})",
        d.rx,
        d.forwarded,
        d.forwarded as f64 / secs.max(1e-9),
        d.dropped(),
        d.not_udp,
        d.too_long,
        d.tx_full
    )
}

fn main() -> ExitCode {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 6 {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    }
    let peer = |s: &str| {
        s.parse::<SocketAddr>()
            .map_err(|_| format!("{s:?} is not an ip:port (e.g. 10.77.1.1:6363)"))
    };
    let secs = a[5]
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0)
        .ok_or_else(|| format!("{:?} is not a positive number of seconds", a[5]));
    let (pa, pb, secs) = match (peer(&a[2]), peer(&a[4]), secs) {
        (Ok(pa), Ok(pb), Ok(s)) => (pa, pb, s),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
            eprintln!("l3fwd: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let side_a = Side {
        ifname: a[1].clone(),
        peer: pa,
    };
    let side_b = Side {
        ifname: a[3].clone(),
        peer: pb,
    };
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        if let Err(e) = signal_hook::flag::register(sig, Arc::clone(&stop)) {
            eprintln!("l3fwd: signal handler: {e}");
            return ExitCode::FAILURE;
        }
    }
    let mut fwd = match L3Fwd::open(&side_a, &side_b, Config::default()) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("l3fwd: {e}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!(
        "l3fwd: {} -> {} as {:?}; {} -> {} as {:?}",
        side_a.ifname,
        side_b.ifname,
        fwd.headers(1),
        side_b.ifname,
        side_a.ifname,
        fwd.headers(0)
    );
    let st = fwd.run(&stop, Some(Instant::now() + Duration::from_secs_f64(secs)));
    let t = st.elapsed.as_secs_f64();
    println!(
        "l3fwd: {t:.2}s; slowest 256 loop turns {:.3} ms",
        st.slowest_256_turns.as_secs_f64() * 1e3
    );
    println!("{}", line("a_to_b", &st.a_to_b, t));
    println!("{}", line("b_to_a", &st.b_to_a, t));
    println!("kernel a: {:?}", st.kernel_a);
    println!("kernel b: {:?}", st.kernel_b);
    ExitCode::SUCCESS
}
