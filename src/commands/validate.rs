//! `fluidlab validate`: the validation cases (`crate::sims::pbf::validation`), each writing its curves as
//! CSV and PNG into a folder and printing PASS/FAIL per check. docs/validation.md shows them.

use crate::output::plot::{self, Chart, Corner, Series};
use crate::output::write_atomically;
use crate::sims::pbf::validation::{self, Check, Setup, CASES};
use crate::sims::Backend;
use anyhow::{bail, Context as _, Result};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Which cases to run and where to write.
#[derive(Clone, Debug, clap::Args)]
pub struct ValidateOptions {
    /// Cases to run (rest, dam-break, sloshing); all when none is given.
    #[arg(value_name = "CASE")]
    pub cases: Vec<String>,
    /// Folder for the CSV and PNG files (created).
    #[arg(long, default_value = "validation")]
    pub out: PathBuf,
    /// Solver backend.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    pub backend: Backend,
    /// The shortened form (two pools, shorter runs): what the test suite runs.
    #[arg(long)]
    pub quick: bool,
}

/// `fluidlab validate`: runs the cases, prints a summary, fails when a check failed.
pub fn main(options: &ValidateOptions) -> Result<()> {
    let checks = run(options)?;
    let failed = checks.iter().filter(|c| !c.passed).count();
    println!(
        "validate: {} check(s), {failed} failed; curves in {}",
        checks.len(),
        options.out.display()
    );
    if failed > 0 {
        bail!("validate: {failed} check(s) failed");
    }
    Ok(())
}

/// The cases named, each once, in the order first named (all when none is named); an unknown
/// name is refused with the list.
fn selected(named: &[String]) -> Result<Vec<&'static str>> {
    if named.is_empty() {
        return Ok(CASES.to_vec());
    }
    let mut cases = Vec::new();
    for case in named {
        let Some(&known) = CASES.iter().find(|&&c| c == case) else {
            bail!(
                "no validation case `{case}`; the cases are {}",
                CASES.join(", ")
            );
        };
        if !cases.contains(&known) {
            cases.push(known);
        }
    }
    Ok(cases)
}

/// Runs the cases; returns every check (the caller fails when one failed).
pub fn run(options: &ValidateOptions) -> Result<Vec<Check>> {
    let cases = selected(&options.cases)?;
    if options.out.exists() && !options.out.is_dir() {
        bail!("--out {}: not a directory", options.out.display());
    }
    std::fs::create_dir_all(&options.out).with_context(|| {
        format!(
            "--out {}: cannot create the output directory",
            options.out.display()
        )
    })?;
    let setup = Setup {
        backend: options.backend,
        quick: options.quick,
    };
    let mut checks = Vec::new();
    for case in cases {
        let found = match case {
            "rest" => rest(&options.out, setup)?,
            "dam-break" => dam_break(&options.out, setup)?,
            _ => sloshing(&options.out, setup)?,
        };
        for check in &found {
            println!("{check}");
        }
        checks.extend(found);
    }
    Ok(checks)
}

fn write_csv(path: &Path, header: &str, rows: impl Iterator<Item = String>) -> Result<()> {
    let mut text = format!("{header}\n");
    for row in rows {
        text.push_str(&row);
        text.push('\n');
    }
    write_atomically(path, |out| out.write_all(text.as_bytes()))?;
    Ok(())
}

fn rest(out: &Path, setup: Setup) -> Result<Vec<Check>> {
    let (depths, seconds): (&[u32], f64) = if setup.quick {
        (&[10, 30], 2.0)
    } else {
        (&[10, 30, 60, 100], 3.0)
    };
    let mut pools = Vec::new();
    for &layers in depths {
        pools.push(validation::resting_pool(layers, seconds, setup)?);
    }
    let mut rows = Vec::new();
    for pool in &pools {
        for [t, ke, speed, com] in &pool.series {
            rows.push(format!(
                "{},{t:.4},{ke:.6e},{speed:.6e},{com:.6}",
                pool.layers
            ));
        }
    }
    write_csv(
        &out.join("rest.csv"),
        "layers,time_s,kinetic_energy_J,rms_speed_m_s,center_of_mass_y_m",
        rows.into_iter(),
    )?;
    let speed = Chart {
        title: "Pools at rest: rms speed / √(g·depth)".into(),
        x_label: "time (s)".into(),
        y_label: "rms speed / √(g·depth)".into(),
        log_y: true,
        series: pools
            .iter()
            .map(|p| {
                let scale = (9.81 * p.depth).sqrt();
                Series::line(
                    format!("{} layers", p.layers),
                    p.series.iter().map(|s| [s[0], s[2] / scale]).collect(),
                )
            })
            .chain(std::iter::once(Series::line(
                "criterion after 1 s: 1 %",
                vec![[1.0, 0.01], [seconds, 0.01]],
            )))
            .collect(),
        legend: Corner::LowerLeft,
    };
    plot::draw(&speed, &out.join("rest-speed.png"), 800, 480)?;
    write_csv(
        &out.join("rest-density.csv"),
        "layers,depth_fraction,density_deviation",
        pools.iter().flat_map(|p| {
            p.density_profile
                .iter()
                .map(|[depth, value]| format!("{},{depth:.4},{value:.6e}", p.layers))
        }),
    )?;
    let profile = Chart {
        title: format!("Pools at rest: density against depth (bulk, after {seconds} s)"),
        x_label: "depth below the surface / pool depth".into(),
        y_label: "ρ/ρ₀ − 1 (%)".into(),
        log_y: false,
        series: pools
            .iter()
            .map(|p| {
                Series::line(
                    format!("{} layers", p.layers),
                    p.density_profile
                        .iter()
                        .map(|[depth, value]| [*depth, 100.0 * value])
                        .collect(),
                )
            })
            .collect(),
        legend: Corner::LowerLeft,
    };
    plot::draw(&profile, &out.join("rest-density.png"), 800, 480)?;
    Ok(pools.into_iter().flat_map(|p| p.checks).collect())
}

fn dam_break(out: &Path, setup: Setup) -> Result<Vec<Check>> {
    let result = validation::dam_break(setup)?;
    write_csv(
        &out.join("dam-break.csv"),
        "T,Z",
        result.front.iter().map(|[t, z]| format!("{t:.4},{z:.4}")),
    )?;
    let chart = Chart {
        title: format!(
            "Dam break (n² = 2): surge front, rms {:.3} with ΔT = {:+.2} (free fit {:+.2})",
            result.rms, result.shift, result.free_shift
        ),
        x_label: "T = t √(2g/a)".into(),
        y_label: "Z = x / a".into(),
        log_y: false,
        series: vec![
            Series::line("fluidlab", result.front.clone()),
            Series::line(
                format!("fluidlab, T shifted by {:+.2}", result.shift),
                result
                    .front
                    .iter()
                    .map(|[t, z]| [t + result.shift, *z])
                    .collect(),
            ),
            Series::points("Martin & Moyce (1952)", validation::MARTIN_MOYCE.to_vec()),
        ],
        legend: Corner::UpperLeft,
    };
    plot::draw(&chart, &out.join("dam-break.png"), 800, 480)?;
    Ok(result.checks)
}

fn sloshing(out: &Path, setup: Setup) -> Result<Vec<Check>> {
    // Quick: a coarser tank (3 000 particles) whose period is still within 3 % of theory.
    let spacing = if setup.quick { 0.00625 } else { 0.005 };
    let seconds = 4.0;
    let result = validation::sloshing(spacing, seconds, setup)?;
    write_csv(
        &out.join("sloshing.csv"),
        "time_s,elevation_m",
        result
            .elevation
            .iter()
            .map(|[t, e]| format!("{t:.4},{e:.6}")),
    )?;
    let amplitude = result.elevation.first().map_or(0.0, |p| p[1]);
    let omega = 2.0 * std::f64::consts::PI / result.theory;
    let chart = Chart {
        title: format!(
            "Sloshing, first mode: period {:.3} s (linear theory {:.3} s)",
            result.period, result.theory
        ),
        x_label: "time (s)".into(),
        y_label: "η at the left wall (m), from the centre of mass".into(),
        log_y: false,
        series: vec![
            Series::line("fluidlab", result.elevation.clone()),
            Series::line(
                "linear theory, undamped",
                result
                    .elevation
                    .iter()
                    .map(|[t, _]| [*t, amplitude * (omega * t).cos()])
                    .collect(),
            ),
        ],
        legend: Corner::LowerRight,
    };
    plot::draw(&chart, &out.join("sloshing.png"), 800, 480)?;
    Ok(result.checks)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A case named twice runs once (the old code ran `validate rest rest` twice: 16 checks
    /// reported, 8 distinct), in the order first named; none named: all; unknown: refused.
    #[test]
    fn each_named_case_runs_once() {
        let named = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        let cases = selected(&named(&["rest", "sloshing", "rest", "sloshing"])).unwrap();
        assert_eq!(cases, ["rest", "sloshing"]);
        assert_eq!(selected(&[]).unwrap(), CASES);
        let error = selected(&named(&["rest", "nope"])).unwrap_err().to_string();
        assert!(error.starts_with("no validation case `nope`"), "{error}");
    }
}
