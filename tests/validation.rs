//! The solver against theory and experiment: the validation cases of `fluidlab validate`
//! (docs/validation.md), shortened where the full form is slow. Each fails on the solver as it
//! was before the fidelity work (the 30-layer pool erupted, the sloshing tank's deep form
//! blew up).

use fluidlab::sims::pbf::validation::{self, Check, Setup};
use fluidlab::sims::pbf::Backend;

fn setup() -> Setup {
    Setup {
        backend: Backend::Cpu,
        quick: true,
    }
}

fn assert_all(checks: &[Check]) {
    for check in checks {
        println!("{check}");
    }
    let failed: Vec<String> = checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| c.to_string())
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// 30 layers at 4 iterations × 2 substeps, dt 1/60 s: after a second the rms speed is under
/// 1 % of √(g·depth), the centre of mass never rises, no particle stands above the surface,
/// the surface sits at volume / floor area.
#[test]
fn a_thirty_layer_pool_at_the_defaults_settles() {
    let pool = validation::resting_pool(30, 2.0, setup()).expect("simulate");
    assert_all(&pool.checks);
    // Incompressible: the bottom layer within 1 % of ρ₀.
    let bottom = pool.density_profile.iter().map(|p| p[1]).next().unwrap();
    assert!(bottom.abs() < 0.01, "bottom layer ρ/ρ₀ − 1 = {bottom}");
}

#[test]
fn a_ten_layer_pool_settles() {
    let pool = validation::resting_pool(10, 2.0, setup()).expect("simulate");
    assert_all(&pool.checks);
}

/// The surge front of a collapsing column follows Martin & Moyce (1952) within 0.15 column
/// widths (rms), with the experiment's gate delay taken as a time shift of at most 0.3.
#[test]
fn the_dam_break_front_follows_martin_and_moyce() {
    let result = validation::dam_break(setup()).expect("simulate");
    println!(
        "rms {} with ΔT {} (free fit {})",
        result.rms, result.shift, result.free_shift
    );
    assert_all(&result.checks);
}

/// The first mode of a tank 0.4 m long and 0.1 m deep oscillates with linear theory's period
/// (0.884 s) within 5 %, and keeps a quarter of its amplitude after 4 s.
#[test]
fn the_first_sloshing_mode_has_linear_theorys_period() {
    let result = validation::sloshing(0.00625, 4.0, setup()).expect("simulate");
    println!(
        "period {} s (theory {} s), amplitude ratio {} after {} half periods",
        result.period, result.theory, result.amplitude_ratio, result.half_periods
    );
    assert!(
        result.half_periods >= 6,
        "{} half periods",
        result.half_periods
    );
    assert_all(&result.checks);
}
