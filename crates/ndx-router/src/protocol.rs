//! The control protocol's types, shared by the control socket's server (`control.rs`),
//! its client (the `ndx` CLI) and the in-process [`crate::Handle`].
//!
//! On the wire a request is one JSON object per line, its command in `cmd` and its fields
//! beside it (`{"cmd": "route-add", "prefix": "/a", "face": "up", "cost": 2}`); the answer is
//! one line, `{"ok": true, ...}` with the [`Response`]'s fields, or `{"ok": false, "error":
//! "..."}`. An unknown command, an unknown field, a missing field or a field of the wrong
//! type is refused with a message that names it ([`Request::from_json`]).

use std::collections::BTreeMap;

use ndx_core::StrategyKind;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// One control request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Request {
    /// Counters (totals and per shard), faces, routes, and the runtime's extras (XDP
    /// counters, host thread, interfaces). Answered by [`Response::Status`].
    Status,
    /// The face table. Answered by [`Response::Faces`].
    Faces,
    /// The FIB and the RIB. Answered by [`Response::Routes`].
    Routes,
    /// Adds a face. Answered by [`Response::FaceAdded`].
    FaceAdd {
        /// The name routes refer to it by.
        name: String,
        /// `udp://IP:PORT`, `ether://MAC` or `ether-multicast`.
        remote: String,
        /// The interface (Ethernet faces).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        interface: Option<String>,
    },
    /// Removes a face and every route through it.
    FaceRemove {
        /// Face id or name.
        face: String,
    },
    /// Adds a next hop to a prefix (or changes its cost).
    RouteAdd {
        /// Name prefix (`/a/b`).
        prefix: String,
        /// Face id or name.
        face: String,
        /// Routing cost, lower is preferred (0 when absent).
        #[serde(default)]
        cost: u32,
    },
    /// Removes a next hop, or every route of the prefix when no face is given.
    RouteRemove {
        /// Name prefix.
        prefix: String,
        /// Face id or name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        face: Option<String>,
    },
    /// Sets the forwarding strategy of a prefix and below.
    StrategySet {
        /// Name prefix.
        prefix: String,
        /// The strategy.
        strategy: Strategy,
    },
    /// Re-reads the configuration and applies what changed (`ndx reload`). Answered by
    /// [`Response::Reloaded`]; a refusal (a key that needs a restart, a bad file) changes
    /// nothing, and its answer lists the keys in `restart`.
    Reload {
        /// The file to read (absolute; default: the file the router was started with).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file: Option<String>,
    },
}

/// A forwarding strategy, as named on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// Lowest cost first, the next on a Nack or a retransmission.
    BestRoute,
    /// Every next hop.
    Multicast,
    /// Weighted by the Interests pending on each next hop.
    Adaptive,
}

impl From<Strategy> for StrategyKind {
    fn from(s: Strategy) -> Self {
        match s {
            Strategy::BestRoute => StrategyKind::BestRoute,
            Strategy::Multicast => StrategyKind::Multicast,
            Strategy::Adaptive => StrategyKind::Adaptive,
        }
    }
}

impl std::str::FromStr for Strategy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        serde_json::from_value(Value::String(s.to_string()))
            .map_err(|_| format!("unknown strategy {s:?} (best-route, multicast or adaptive)"))
    }
}

impl Request {
    /// Every command's wire name, in declaration order.
    pub const COMMANDS: &'static [&'static str] = &[
        "status",
        "faces",
        "routes",
        "face-add",
        "face-remove",
        "route-add",
        "route-remove",
        "strategy-set",
        "reload",
    ];

    /// This request's command name (its `cmd`).
    pub fn command(&self) -> &'static str {
        match self {
            Request::Status => "status",
            Request::Faces => "faces",
            Request::Routes => "routes",
            Request::FaceAdd { .. } => "face-add",
            Request::FaceRemove { .. } => "face-remove",
            Request::RouteAdd { .. } => "route-add",
            Request::RouteRemove { .. } => "route-remove",
            Request::StrategySet { .. } => "strategy-set",
            Request::Reload { .. } => "reload",
        }
    }

    /// Reads a request from its JSON form, with an error that names the problem: not an
    /// object, no `cmd`, an unknown command, or a bad, missing or unknown field.
    pub fn from_json(v: Value) -> Result<Request, String> {
        let cmd = match v.get("cmd") {
            Some(Value::String(s)) => s.clone(),
            Some(_) => return Err("field \"cmd\" must be a string".into()),
            None if v.is_object() => return Err("missing string field \"cmd\"".into()),
            None => return Err("a request is a JSON object".into()),
        };
        if !Self::COMMANDS.contains(&cmd.as_str()) {
            return Err(format!(
                "unknown command {cmd:?} (known: {})",
                Self::COMMANDS.join(", ")
            ));
        }
        // serde does not apply `deny_unknown_fields` to unit variants: refuse here.
        if let Some(extra) = v
            .as_object()
            .filter(|_| matches!(cmd.as_str(), "status" | "faces" | "routes"))
            .and_then(|m| m.keys().find(|k| *k != "cmd"))
        {
            return Err(format!(
                "{cmd}: unknown field `{extra}`, there are no fields"
            ));
        }
        serde_json::from_value(v).map_err(|e| format!("{cmd}: {e}"))
    }

    /// Reads a request from one line of the wire.
    pub fn from_line(line: &[u8]) -> Result<Request, String> {
        let v: Value = serde_json::from_slice(line).map_err(|e| format!("not JSON: {e}"))?;
        Self::from_json(v)
    }

    /// The request as one JSON object (its wire form, without the newline).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|_| unreachable!("requests serialise"))
    }
}

/// A successful answer, typed by the request it answers.
///
/// The JSON payloads of `status`, `faces` and `routes` are the runtime's documents (see the
/// crate README and `ndx status --json`); they stay [`Value`]s so a field added there needs
/// no change here.
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    /// `status`: the whole status object (`counters`, `shards`, `faces`, `routes`, `xdp`,
    /// `host`, `interfaces`, ...).
    Status(Value),
    /// `faces`: the face list.
    Faces(Value),
    /// `routes`: the FIB (each next hop with its origins) and the RIB.
    Routes {
        /// The FIB.
        routes: Value,
        /// Every route of the RIB.
        rib: Value,
    },
    /// `face-add`: the new face's id.
    FaceAdded {
        /// Face id.
        id: u32,
    },
    /// `reload`: what changed (`file`, `changes`, `faces`, `routes`, `strategies`,
    /// `settings`, `warnings`: [`crate::ReloadReport::to_json`]).
    Reloaded(Value),
    /// Requests that answer nothing but success.
    Done,
}

impl Response {
    /// The answer's wire form: `{"ok": true, ...}`.
    pub fn to_json(&self) -> Value {
        let mut v = match self {
            Response::Status(s) => match s {
                Value::Object(_) => s.clone(),
                _ => json!({}),
            },
            Response::Faces(f) => json!({ "faces": f }),
            Response::Routes { routes, rib } => json!({ "routes": routes, "rib": rib }),
            Response::FaceAdded { id } => json!({ "id": id }),
            Response::Reloaded(r) => match r {
                Value::Object(_) => r.clone(),
                _ => json!({}),
            },
            Response::Done => json!({}),
        };
        v["ok"] = Value::Bool(true);
        v
    }

    /// Reads the answer to `req` from its wire form (`Err` with the router's message when
    /// `ok` is not true, or with what is wrong with the answer).
    pub fn from_json(req: &Request, mut v: Value) -> Result<Response, AnswerError> {
        if v.get("ok") != Some(&Value::Bool(true)) {
            return Err(AnswerError::Refused(
                v.get("error")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown error")
                    .to_string(),
            ));
        }
        if let Value::Object(m) = &mut v {
            m.remove("ok");
        }
        let take = |v: &mut Value, k: &str| {
            v.get_mut(k)
                .map(Value::take)
                .ok_or_else(|| AnswerError::Bad(format!("no {k:?} in the answer")))
        };
        Ok(match req {
            Request::Status => Response::Status(v),
            Request::Reload { .. } => Response::Reloaded(v),
            Request::Faces => Response::Faces(take(&mut v, "faces")?),
            Request::Routes => Response::Routes {
                routes: take(&mut v, "routes")?,
                rib: v.get_mut("rib").map(Value::take).unwrap_or(Value::Null),
            },
            Request::FaceAdd { .. } => {
                let id = take(&mut v, "id")?;
                Response::FaceAdded {
                    id: id
                        .as_u64()
                        .and_then(|i| u32::try_from(i).ok())
                        .ok_or_else(|| AnswerError::Bad(format!("bad face id {id}")))?,
                }
            }
            _ => Response::Done,
        })
    }

    /// The summed counters of a [`Response::Status`] (`counters`), by name.
    pub fn counters(&self) -> BTreeMap<String, u64> {
        match self {
            Response::Status(v) => v["counters"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, n)| Some((k.clone(), n.as_u64()?)))
                        .collect()
                })
                .unwrap_or_default(),
            _ => BTreeMap::new(),
        }
    }
}

/// Why an answer is not a success.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// The router refused the request; its message.
    #[error("{0}")]
    Refused(String),
    /// The answer is not what the request calls for.
    #[error("bad answer: {0}")]
    Bad(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<Request> {
        vec![
            Request::Status,
            Request::Faces,
            Request::Routes,
            Request::FaceAdd {
                name: "up".into(),
                remote: "udp://10.0.0.1:6363".into(),
                interface: None,
            },
            Request::FaceAdd {
                name: "eth".into(),
                remote: "ether://02:00:00:00:00:01".into(),
                interface: Some("eth0".into()),
            },
            Request::FaceRemove { face: "3".into() },
            Request::RouteAdd {
                prefix: "/a".into(),
                face: "up".into(),
                cost: 7,
            },
            Request::RouteRemove {
                prefix: "/a".into(),
                face: None,
            },
            Request::RouteRemove {
                prefix: "/a".into(),
                face: Some("up".into()),
            },
            Request::StrategySet {
                prefix: "/a".into(),
                strategy: Strategy::Multicast,
            },
            Request::Reload { file: None },
            Request::Reload {
                file: Some("/etc/ndx/ndx.toml".into()),
            },
        ]
    }

    #[test]
    fn every_request_round_trips_through_its_wire_line() {
        for r in all() {
            let line = r.to_json().to_string();
            assert_eq!(Request::from_line(line.as_bytes()), Ok(r.clone()), "{line}");
            assert_eq!(r.to_json()["cmd"], r.command());
        }
        // Every command is listed, once.
        let mut names: Vec<&str> = all().iter().map(Request::command).collect();
        names.dedup();
        assert_eq!(names, Request::COMMANDS);
    }

    #[test]
    fn the_wire_keeps_todays_field_names() {
        let r = Request::from_json(json!({"cmd": "route-add", "prefix": "/p", "face": "f"}));
        assert_eq!(
            r,
            Ok(Request::RouteAdd {
                prefix: "/p".into(),
                face: "f".into(),
                cost: 0
            }),
            "cost defaults to 0"
        );
        let r = Request::from_json(
            json!({"cmd": "strategy-set", "prefix": "/p", "strategy": "best-route"}),
        );
        assert!(matches!(
            r,
            Ok(Request::StrategySet {
                strategy: Strategy::BestRoute,
                ..
            })
        ));
        let line = Request::FaceAdd {
            name: "n".into(),
            remote: "udp://10.0.0.1:6363".into(),
            interface: None,
        }
        .to_json()
        .to_string();
        assert_eq!(
            line,
            r#"{"cmd":"face-add","name":"n","remote":"udp://10.0.0.1:6363"}"#
        );
    }

    #[test]
    fn unknown_commands_and_bad_fields_are_refused_by_name() {
        let e = Request::from_json(json!({"cmd": "fly"})).unwrap_err();
        assert!(e.contains("unknown command \"fly\""), "{e}");
        assert!(e.contains("route-add"), "lists the known ones: {e}");
        let e = Request::from_json(json!({"prefix": "/a"})).unwrap_err();
        assert!(e.contains("missing string field \"cmd\""), "{e}");
        let e = Request::from_json(json!({"cmd": 3})).unwrap_err();
        assert!(e.contains("must be a string"), "{e}");
        let e = Request::from_json(json!([1])).unwrap_err();
        assert!(e.contains("JSON object"), "{e}");
        let e = Request::from_line(b"{nope").unwrap_err();
        assert!(e.starts_with("not JSON"), "{e}");
        let e = Request::from_json(json!({"cmd": "route-add", "prefix": "/a"})).unwrap_err();
        assert!(
            e.contains("route-add") && e.contains("missing field `face`"),
            "{e}"
        );
        let e =
            Request::from_json(json!({"cmd": "route-add", "prefix": "/a", "face": "f", "cots": 1}))
                .unwrap_err();
        assert!(e.contains("unknown field `cots`"), "{e}");
        let e = Request::from_json(json!({"cmd": "status", "verbose": true})).unwrap_err();
        assert!(e.contains("unknown field `verbose`"), "{e}");
        let e = Request::from_json(
            json!({"cmd": "route-add", "prefix": "/a", "face": "f", "cost": 1u64 << 40}),
        )
        .unwrap_err();
        assert!(e.contains("u32"), "{e}");
        let e = Request::from_json(json!({"cmd": "face-remove", "face": 3})).unwrap_err();
        assert!(e.contains("invalid type"), "{e}");
        let e = Request::from_json(
            json!({"cmd": "strategy-set", "prefix": "/a", "strategy": "random"}),
        )
        .unwrap_err();
        assert!(e.contains("unknown variant `random`"), "{e}");
        assert!("random".parse::<Strategy>().is_err());
        assert_eq!("adaptive".parse::<Strategy>(), Ok(Strategy::Adaptive));
    }

    #[test]
    fn responses_round_trip_and_refusals_carry_the_message() {
        let cases = [
            (
                Request::FaceAdd {
                    name: "a".into(),
                    remote: "udp://10.0.0.1:6363".into(),
                    interface: None,
                },
                Response::FaceAdded { id: 4 },
            ),
            (Request::Faces, Response::Faces(json!([{"id": 1}]))),
            (
                Request::Routes,
                Response::Routes {
                    routes: json!([]),
                    rib: json!([{"prefix": "/a"}]),
                },
            ),
            (
                Request::Status,
                Response::Status(json!({"counters": {"rx_frames": 3}})),
            ),
            (Request::FaceRemove { face: "a".into() }, Response::Done),
            (
                Request::Reload { file: None },
                Response::Reloaded(json!({"changes": 2, "faces": {"added": ["up"]}})),
            ),
        ];
        for (req, resp) in cases {
            let wire = resp.to_json();
            assert_eq!(wire["ok"], true);
            assert_eq!(Response::from_json(&req, wire), Ok(resp));
        }
        let s = Response::Status(json!({"counters": {"rx_frames": 3, "tx_frames": 1}}));
        assert_eq!(s.counters()["rx_frames"], 3);
        let e = Response::from_json(&Request::Status, json!({"ok": false, "error": "no"}));
        assert_eq!(e, Err(AnswerError::Refused("no".into())));
        let e = Response::from_json(&Request::Faces, json!({"ok": true}));
        assert!(matches!(e, Err(AnswerError::Bad(_))));
    }
}
