//! A strict reader of the OpenMetrics text the endpoint writes (the subset it uses:
//! `# HELP`, `# TYPE`, `# UNIT`, samples with labels, `# EOF`), for tests and scripts.

/// A metric family's declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Family {
    /// Its name (`ndx_rx_frames`).
    pub name: String,
    /// `counter`, `gauge`, `histogram`, `info`, ...
    pub kind: String,
    /// Its help text.
    pub help: String,
}

/// One sample line.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The sample's name (`ndx_rx_frames_total`).
    pub name: String,
    /// Its labels, in order.
    pub labels: Vec<(String, String)>,
    /// Its value.
    pub value: f64,
}

/// A parsed exposition.
#[derive(Debug, Clone, Default)]
pub struct Exposition {
    /// The families, in order.
    pub families: Vec<Family>,
    /// The samples, in order.
    pub points: Vec<Point>,
}

impl Exposition {
    /// The value of the sample `name` whose labels include every `(key, value)` of `labels`
    /// (the first such sample).
    pub fn value(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        self.points
            .iter()
            .find(|p| {
                p.name == name
                    && labels
                        .iter()
                        .all(|(k, v)| p.labels.iter().any(|(pk, pv)| pk == k && pv == v))
            })
            .map(|p| p.value)
    }

    /// The sum of every sample called `name`.
    pub fn sum(&self, name: &str) -> f64 {
        self.points
            .iter()
            .filter(|p| p.name == name)
            .map(|p| p.value)
            .sum()
    }

    /// The family called `name`.
    pub fn family(&self, name: &str) -> Option<&Family> {
        self.families.iter().find(|f| f.name == name)
    }
}

/// Whether `s` is a valid metric or label name.
pub fn valid_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_' || f == ':')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_' || x == ':')
}

/// Parses `text`; an error names the line and what is wrong with it.
pub fn parse(text: &str) -> Result<Exposition, String> {
    let mut e = Exposition::default();
    let mut eof = false;
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        if eof {
            return Err(format!("line {n}: after # EOF"));
        }
        if line == "# EOF" {
            eof = true;
            continue;
        }
        if let Some(rest) = line.strip_prefix("# ") {
            let mut parts = rest.splitn(3, ' ');
            let (Some(what), Some(name)) = (parts.next(), parts.next()) else {
                return Err(format!("line {n}: {line:?}: a comment without a name"));
            };
            let arg = parts.next().unwrap_or("").to_string();
            if !valid_name(name) {
                return Err(format!("line {n}: {name:?}: not a metric name"));
            }
            match what {
                "HELP" => {
                    if e.family(name).is_some() {
                        return Err(format!("line {n}: {name} declared twice"));
                    }
                    e.families.push(Family {
                        name: name.into(),
                        kind: String::new(),
                        help: arg,
                    });
                }
                "TYPE" => match e.families.last_mut() {
                    Some(f) if f.name == name && f.kind.is_empty() => f.kind = arg,
                    _ => return Err(format!("line {n}: TYPE of {name} without its HELP")),
                },
                "UNIT" => {
                    if e.families.last().is_none_or(|f| f.name != name) {
                        return Err(format!("line {n}: UNIT of {name} out of place"));
                    }
                }
                _ => return Err(format!("line {n}: {line:?}: unknown comment")),
            }
            continue;
        }
        let point = parse_point(line).map_err(|why| format!("line {n}: {line:?}: {why}"))?;
        let family = e
            .families
            .last()
            .ok_or(format!("line {n}: a sample before any family"))?;
        let suffix = point.name.strip_prefix(family.name.as_str());
        let ok = match family.kind.as_str() {
            "counter" => suffix == Some("_total"),
            "gauge" => suffix == Some(""),
            "info" => suffix == Some("_info"),
            "histogram" => matches!(suffix, Some("_bucket" | "_sum" | "_count")),
            _ => false,
        };
        if !ok {
            return Err(format!(
                "line {n}: {} does not belong to the {} {}",
                point.name, family.kind, family.name
            ));
        }
        e.points.push(point);
    }
    if !eof {
        return Err("no # EOF at the end".into());
    }
    Ok(e)
}

fn parse_point(line: &str) -> Result<Point, String> {
    let name_end = line.find(['{', ' ']).ok_or("no value after the name")?;
    let name = &line[..name_end];
    if !valid_name(name) {
        return Err(format!("{name:?}: not a metric name"));
    }
    let mut rest = &line[name_end..];
    let mut labels = Vec::new();
    if let Some(r) = rest.strip_prefix('{') {
        rest = r;
        loop {
            if let Some(r) = rest.strip_prefix('}') {
                rest = r;
                break;
            }
            let eq = rest.find('=').ok_or("a label without '='")?;
            let key = &rest[..eq];
            if !valid_name(key) {
                return Err(format!("{key:?}: not a label name"));
            }
            let r = rest[eq + 1..]
                .strip_prefix('"')
                .ok_or("a label value without quotes")?;
            let mut value = String::new();
            let mut chars = r.char_indices();
            let end = loop {
                match chars.next() {
                    Some((i, '"')) => break i,
                    Some((_, '\\')) => match chars.next() {
                        Some((_, 'n')) => value.push('\n'),
                        Some((_, c @ ('\\' | '"'))) => value.push(c),
                        _ => return Err("a bad escape in a label value".into()),
                    },
                    Some((_, c)) => value.push(c),
                    None => return Err("an unterminated label value".into()),
                }
            };
            labels.push((key.to_string(), value));
            rest = &r[end + 1..];
            rest = rest.strip_prefix(',').unwrap_or(rest);
        }
    }
    let v = rest.strip_prefix(' ').ok_or("no space before the value")?;
    let value = match v {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        v => v.parse().map_err(|_| format!("{v:?}: not a number"))?,
    };
    Ok(Point {
        name: name.to_string(),
        labels,
        value,
    })
}
