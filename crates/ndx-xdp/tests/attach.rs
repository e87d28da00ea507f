//! The program on real veth pairs in throwaway network namespaces: attach in SKB and
//! driver mode, real traffic reaches it, detach on drop, the `xdp.frags` variant at MTU
//! 9000, and a SIGKILLed process leaves nothing attached. Root only.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::pair::*;
use common::*;
use ndx_codec::{DataRepr, InterestRepr, NameBuf};
use ndx_core::DispatchMode;
use ndx_xdp::{AttachMode, NdxXdp, XdpConfig};

fn config(frags: bool) -> XdpConfig {
    let mut c = XdpConfig::new(3, 4, DispatchMode::Prefix(2), 2, 64);
    c.frags = frags;
    c
}

fn attach_and_see_traffic(mode: AttachMode) {
    in_pair(1500, 2, move |pair| {
        let mut xdp = NdxXdp::load(&config(false)).unwrap();
        assert!(!pair.xdp_attached());
        let link = xdp.attach("xa", mode).unwrap();
        assert!(pair.xdp_attached(), "{mode:?}: ip link shows the program");
        // Only one XDP program per interface.
        let mut other = NdxXdp::load(&config(false)).unwrap();
        assert!(other.attach("xa", mode).is_err(), "second attach must fail");

        let interest = InterestRepr::new(NameBuf::from_uri("/ndx/test").unwrap())
            .to_vec()
            .unwrap();
        pair.send(&interest, 5);
        let c = wait_for(&xdp, |c| c.interest >= 5);
        assert!(
            c.interest >= 5 && c.udp4 >= 5 && c.by_name >= 5,
            "{mode:?}:\n{c}"
        );
        assert_eq!(c.redirected, 0, "no socket in the map");
        assert!(c.redirect_failed >= 5, "{c}");
        assert!(c.passed_not_ndn >= 1, "ARP passed: {c}");

        xdp.detach(link);
        assert!(pair.xdp_detached(), "{mode:?}: detached");
        // Attach by index, detach by drop.
        let index = pair.a.ip(&["-o", "link", "show", "dev", "xa"]);
        let index: u32 = index.split(':').next().unwrap().trim().parse().unwrap();
        let link = xdp.attach(index, mode).unwrap();
        assert_eq!(link.ifindex(), index);
        assert!(pair.xdp_attached());
        drop(link);
        assert!(pair.xdp_detached(), "{mode:?}: dropped guard detaches");
    });
}

#[test]
fn attaches_in_skb_mode_sees_traffic_and_detaches() {
    if root_or_skip("attaches_in_skb_mode_sees_traffic_and_detaches") {
        attach_and_see_traffic(AttachMode::Skb);
    }
}

#[test]
fn attaches_in_driver_mode_sees_traffic_and_detaches() {
    if root_or_skip("attaches_in_driver_mode_sees_traffic_and_detaches") {
        attach_and_see_traffic(AttachMode::Driver);
    }
}

#[test]
fn frags_variant_attaches_at_mtu_9000_and_sees_jumbo_data() {
    if !root_or_skip("frags_variant_attaches_at_mtu_9000_and_sees_jumbo_data") {
        return;
    }
    in_pair(9000, 2, |pair| {
        let mut plain = NdxXdp::load(&config(false)).unwrap();
        let refused = plain.attach("xa", AttachMode::Driver);
        assert!(
            refused.is_err(),
            "a program without frags support is refused at MTU 9000"
        );
        drop(refused);
        let mut xdp = NdxXdp::load(&config(true)).unwrap();
        let _link = xdp.attach("xa", AttachMode::Driver).unwrap();
        assert!(pair.xdp_attached());
        let data = DataRepr::new(NameBuf::from_uri("/big/seg=1").unwrap(), vec![7; 8700])
            .to_vec()
            .unwrap();
        pair.send(&data, 3);
        let c = wait_for(&xdp, |c| c.data >= 3);
        assert!(c.data >= 3 && c.by_name >= 3 && c.malformed == 0, "{c}");
    });
}

/// The child half of the SIGKILL test: attaches, says so, and sleeps until killed.
#[test]
fn sigkill_child() {
    let Ok(iface) = std::env::var("NDX_XDP_SIGKILL_CHILD") else {
        return; // only runs when re-invoked by the parent test
    };
    let mut xdp = NdxXdp::load(&config(false)).unwrap();
    let _link = xdp.attach(iface.as_str(), AttachMode::Driver).unwrap();
    println!("ATTACHED");
    loop {
        std::thread::sleep(Duration::from_secs(60));
    }
}

#[test]
fn sigkill_leaves_nothing_attached() {
    if !root_or_skip("sigkill_leaves_nothing_attached") {
        return;
    }
    in_pair(1500, 2, |pair| {
        let exe = std::env::current_exe().unwrap();
        let mut child = Command::new("ip")
            .args(["netns", "exec", &pair.a.name])
            .arg(&exe)
            .args([
                "--exact",
                "sigkill_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("NDX_XDP_SIGKILL_CHILD", "xa")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let attached = lines.any(|l| l.map(|l| l.contains("ATTACHED")).unwrap_or(false));
        assert!(attached, "the child attached");
        assert!(pair.xdp_attached(), "attached while the child lives");
        let child_exe = std::fs::read_link(format!("/proc/{}/exe", child.id())).unwrap();
        assert_eq!(
            child_exe, exe,
            "`ip netns exec` exec'd the test binary: we kill the attacher itself"
        );
        // SIGKILL: no destructor runs; the kernel drops the bpf_link with the process.
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(pair.xdp_detached(), "the program is gone after SIGKILL");
    });
}
