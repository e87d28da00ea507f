//! Raw AF_XDP reflector: `reflector <ifname> <queue> <seconds> [--sink]`;
//! prints pps. With `--sink` it only receives (one-way baseline).

use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(ifname), Some(queue), Some(secs)) = (args.get(1), args.get(2), args.get(3)) else {
        eprintln!("usage: reflector <ifname> <queue> <seconds> [--sink]");
        return ExitCode::from(2);
    };
    let (Ok(queue), Ok(secs)) = (queue.parse::<u32>(), secs.parse::<f64>()) else {
        eprintln!("queue and seconds must be numbers");
        return ExitCode::from(2);
    };
    let turn_around = args.get(4).map(String::as_str) != Some("--sink");
    match ndx_afxdp::reflector::run(ifname, queue, Duration::from_secs_f64(secs), turn_around) {
        Ok(st) => {
            println!(
                "reflector: rx {} tx {} dropped {} in {:.2}s active: {:.0} pps; {:?}",
                st.rx_packets,
                st.tx_packets,
                st.dropped,
                st.active.as_secs_f64(),
                st.rx_pps(),
                st.kernel
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("reflector: {e}");
            ExitCode::FAILURE
        }
    }
}
