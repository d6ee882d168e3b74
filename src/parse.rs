//! The command line's value parsers and checks (`X,Z`, `A,B`, `X0,Z0,X1,Z1`, positive metres),
//! shared by `app` and the game subcommands: a leaf module, so none of them imports another
//! for a parser (`tests/crate_graph.rs` keeps the binary's modules free of cycles).

use anyhow::{bail, Result};

/// `value` of `flag` when it is a positive, finite number of metres.
pub fn positive_metres(flag: &str, value: f64) -> Result<f64> {
    if !(value.is_finite() && value > 0.0) {
        bail!("{flag} {value}: must be a positive number of metres");
    }
    Ok(value)
}

/// Parse `x,z` (surrounding spaces allowed).
pub fn parse_point(s: &str) -> Option<(f32, f32)> {
    let (x, z) = s.split_once(',')?;
    let x: f32 = x.trim().parse().ok()?;
    let z: f32 = z.trim().parse().ok()?;
    (x.is_finite() && z.is_finite()).then_some((x, z))
}

/// Parse `X0,Z0,X1,Z1`.
pub fn parse_region(s: &str) -> Result<[f64; 4]> {
    let v: Vec<f64> = s
        .split(',')
        .map(|p| p.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| anyhow::anyhow!("--region `{s}` is not four numbers X0,Z0,X1,Z1"))?;
    if v.len() != 4 || v.iter().any(|x| !x.is_finite()) {
        bail!("--region `{s}` is not four numbers X0,Z0,X1,Z1");
    }
    if v[2] < v[0] || v[3] < v[1] {
        bail!("--region `{s}`: X1 must be ≥ X0 and Z1 ≥ Z0");
    }
    Ok([v[0], v[1], v[2], v[3]])
}

/// Parse `A,B` (two finite numbers) for `--origin`/`--height-range`.
pub fn parse_pair(s: &str, what: &str) -> Result<(f64, f64)> {
    let v: Vec<f64> =
        s.split(',').map(|p| p.trim().parse::<f64>()).collect::<Result<_, _>>().map_err(|_| anyhow::anyhow!("{what} `{s}` is not two numbers A,B"))?;
    match v[..] {
        [a, b] if a.is_finite() && b.is_finite() => Ok((a, b)),
        _ => bail!("{what} `{s}` is not two numbers A,B"),
    }
}

/// Parse `n` comma-separated finite numbers (the SCS commands' `--region`, `--origin`, …).
pub fn parse_list(s: &str, n: usize, what: &str) -> Result<Vec<f64>> {
    let v: Vec<f64> = s
        .split(',')
        .map(|p| p.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| anyhow::anyhow!("{what} `{s}` is not {n} comma-separated numbers"))?;
    if v.len() != n || v.iter().any(|x| !x.is_finite()) {
        bail!("{what} `{s}` is not {n} comma-separated numbers");
    }
    Ok(v)
}
