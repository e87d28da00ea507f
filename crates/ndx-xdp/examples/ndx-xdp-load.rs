//! Loads the XDP program, prints its verifier statistics, and optionally attaches it to an
//! interface until killed: `ndx-xdp-load [IFACE [skb|driver] [frags]]`.

use ndx_core::DispatchMode;
use ndx_xdp::{AttachMode, NdxXdp, XdpConfig};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut config = XdpConfig::new(1, 2, DispatchMode::Content, 4, 256);
    config.frags = args.iter().any(|a| a == "frags");
    let mut xdp = match NdxXdp::load(&config) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    println!("{:?}", xdp.program_stats().expect("program info"));
    if let Some(iface) = args.first().filter(|a| *a != "frags") {
        let mode = if args.iter().any(|a| a == "skb") {
            AttachMode::Skb
        } else {
            AttachMode::Driver
        };
        let _link = xdp.attach(iface.as_str(), mode).unwrap_or_else(|e| {
            eprintln!("attach: {e}");
            std::process::exit(1);
        });
        println!("attached");
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
}
