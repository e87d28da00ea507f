//! The option structs flatten into a clap command line as the `ndx` binary will use them.

use clap::{CommandFactory, Parser, Subcommand};
use ndx_app::{GenOptions, GetOptions, LinkMtu, PutOptions, ServeOptions};

#[derive(Parser, Debug)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    Put(PutOptions),
    Get(GetOptions),
    Serve(ServeOptions),
    Gen(GenOptions),
}

fn parse(args: &[&str]) -> Cmd {
    Cli::try_parse_from(std::iter::once("ndx").chain(args.iter().copied()))
        .unwrap()
        .cmd
}

#[test]
fn command_definition_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn defaults_match_the_constructors() {
    let Cmd::Get(g) = parse(&["get", "/a/b"]) else {
        unreachable!()
    };
    let expect = GetOptions::new(
        "/a/b".parse().unwrap(),
        "127.0.0.1:6363".parse::<std::net::SocketAddr>().unwrap(),
    );
    assert_eq!(format!("{g:?}"), format!("{expect:?}"));
    let Cmd::Put(p) = parse(&["put", "/a"]) else {
        unreachable!()
    };
    let expect = PutOptions::new("/a".parse().unwrap(), "[::]:6363".parse().unwrap());
    assert_eq!(format!("{p:?}"), format!("{expect:?}"));
    let Cmd::Serve(s) = parse(&["serve", "/a"]) else {
        unreachable!()
    };
    let expect = ServeOptions::new("/a".parse().unwrap(), "[::]:6363".parse().unwrap());
    assert_eq!(format!("{s:?}"), format!("{expect:?}"));
    let Cmd::Gen(n) = parse(&["gen", "/a"]) else {
        unreachable!()
    };
    let expect = GenOptions::new(
        "/a".parse().unwrap(),
        "127.0.0.1:6363".parse::<std::net::SocketAddr>().unwrap(),
    );
    assert_eq!(format!("{n:?}"), format!("{expect:?}"));
}

#[test]
fn options_parse() {
    let Cmd::Get(g) = parse(&[
        "get",
        "/a/v=5",
        "-t",
        "udp://[::1]:7000",
        "-o",
        "out.bin",
        "--max-retries",
        "3",
        "--no-progress",
    ]) else {
        unreachable!()
    };
    assert_eq!(
        g.target,
        "[::1]:7000".parse::<std::net::SocketAddr>().unwrap().into()
    );
    assert_eq!(g.prefix.to_string(), "/a/v=5");
    assert_eq!((g.max_retries, g.no_progress), (3, true));
    assert_eq!(g.output.as_deref(), Some(std::path::Path::new("out.bin")));
    let Cmd::Put(p) = parse(&[
        "put", "/a", "-i", "f", "-b", "10.0.0.1", "-s", "1000", "--mtu", "9000",
    ]) else {
        unreachable!()
    };
    assert_eq!(p.bind, "10.0.0.1:6363".parse().unwrap());
    assert_eq!((p.segment_size, p.mtu), (1000, LinkMtu::Fixed(9000)));
    // The MTU defaults to each peer's path MTU, and a bad one is refused by name.
    let Cmd::Put(p) = parse(&["put", "/a", "-i", "f"]) else {
        unreachable!()
    };
    assert_eq!(p.mtu, LinkMtu::Auto);
    let err = Cli::try_parse_from(["t", "get", "/a", "--mtu", "jumbo"]).unwrap_err();
    assert!(
        err.to_string()
            .contains("expected `auto` or a number of bytes"),
        "{err}"
    );
    let Cmd::Gen(n) = parse(&["gen", "/a", "-w", "8", "--distinct", "10", "-c", "5"]) else {
        unreachable!()
    };
    assert_eq!((n.window, n.distinct, n.count), (8, Some(10), Some(5)));
    // A local forwarder's Unix socket.
    let Cmd::Put(p) = parse(&["put", "/a", "--forwarder", "unix:///tmp/fw.sock"]) else {
        unreachable!()
    };
    assert_eq!(
        p.forwarder.as_deref(),
        Some(std::path::Path::new("/tmp/fw.sock"))
    );
    let Cmd::Serve(s) = parse(&["serve", "/a", "--forwarder"]) else {
        unreachable!()
    };
    assert_eq!(
        s.forwarder.as_deref(),
        Some(std::path::Path::new(ndx_app::DEFAULT_FORWARDER_SOCKET))
    );
    let Cmd::Get(g) = parse(&["get", "/a", "-t", "unix:///run/nfd/nfd.sock"]) else {
        unreachable!()
    };
    assert_eq!(
        g.target,
        ndx_app::Endpoint::Unix("/run/nfd/nfd.sock".into())
    );
    let Cmd::Gen(n) = parse(&["gen", "/a", "-t", "unix://"]) else {
        unreachable!()
    };
    assert_eq!(
        n.target,
        ndx_app::Endpoint::Unix(ndx_app::DEFAULT_FORWARDER_SOCKET.into())
    );
    for bad in [
        &["ndx", "put", "/a", "--forwarder", "udp://127.0.0.1"][..],
        &[
            "ndx",
            "put",
            "/a",
            "--forwarder",
            "unix:///x",
            "-b",
            "127.0.0.1",
        ],
        &["ndx", "serve", "--forwarder", "/a"],
        &["ndx", "get", "/a", "-t", "unix:"],
    ] {
        assert!(Cli::try_parse_from(bad).is_err(), "{bad:?}");
    }
    assert!(Cli::try_parse_from(["ndx", "get", "no-slash"]).is_err());
    assert!(Cli::try_parse_from(["ndx", "get", "/a", "-t", "udp://"]).is_err());
}
