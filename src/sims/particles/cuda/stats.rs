//! The statistics panel's figures of a body reduced on the GPU (`body_stats` in
//! `kernels/particles_stats.cuh`, finished by `reduce_finish`): the kinetic, potential and
//! elastic energy and the largest strain of [`BodyFigures`], from 4 doubles copied back instead
//! of every node (48 MB at 1024² nodes, twice a second on the viewer's thread). And their
//! check against the CPU's figures of the same state: the GPU's terms are the CPU's to the bit
//! (the kernel rounds each operation as the CPU does), so the maximum must be equal and each
//! sum may differ only by its order's rounding ([`sum_allowance`]).

use super::kernels::{blocks, BLOCK};
use super::parity::{body_cases, run_body_stages, BodyCase};
use super::{cuda, Buffers, CudaParticles};
use crate::cuda::launch::per_element;
use crate::cuda::CudaError;
use crate::sims::particles::body::Body;
use crate::sims::particles::BodyFigures;
use cudarc::driver::LaunchConfig;
use glam::Vec3;

/// The reduced quantities, in the kernel's order (`BODY_*` in particles_stats.cuh).
pub const BODY_FIGURES: [&str; 4] = ["kinetic", "potential", "elastic", "max_strain"];

/// `max_strain`'s slot: a maximum (`reduce_finish`'s mask); the others are sums.
const STRAIN: usize = 3;

/// The figures from the kernels' slots.
pub fn figures_from_slots(slots: &[f64; 4]) -> BodyFigures {
    BodyFigures {
        kinetic: slots[0],
        potential: slots[1],
        elastic: slots[2],
        // A maximum of f32 strains, widened exactly: narrowing gives it back.
        max_strain: slots[STRAIN] as f32,
    }
}

impl CudaParticles {
    /// The body's figures of [`BodyFigures`] (node mass `mass`, kg; `gravity`, m/s²) from its
    /// state on the GPU: two launches on the solver's stream, 32 bytes back, one
    /// synchronisation.
    pub fn body_figures(
        &mut self,
        mass: f32,
        gravity: Vec3,
        (side, modulus): (u32, f32),
    ) -> Result<BodyFigures, CudaError> {
        let Buffers::Body(b) = &mut self.buffers else {
            return Err(CudaError::Setting("not a body solver".into()));
        };
        self.context
            .bind_to_thread()
            .map_err(cuda("binding the CUDA context"))?;
        let (m, s) = (&self.module, &self.stream);
        let nodes = b.nodes as u32;
        let blocks32 = blocks(b.nodes) as u32;
        let args = (
            &nodes,
            &mass,
            &gravity.x,
            &gravity.y,
            &gravity.z,
            &b.position,
            &b.velocity,
            &b.node_start,
            &b.link_other,
            &b.link_rest,
            &b.link_stiffness,
            &side,
            &modulus,
            &b.cell_rest,
            &mut b.partials,
        );
        let mut config = per_element(b.nodes, BLOCK);
        config.grid_dim.0 = blocks32;
        // SAFETY: particles_stats.cuh's parameters; the node arrays hold `nodes` nodes, the
        // links their compressed rows, `partials` four per block.
        unsafe { Self::launch(m, s, "body_stats", config, args)? };
        let quantities = BODY_FIGURES.len() as u32;
        let args = (
            &b.partials,
            &blocks32,
            &quantities,
            &(1u32 << STRAIN),
            &mut b.figures,
            &0u32,
        );
        let finish = LaunchConfig {
            grid_dim: (quantities, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: one block per quantity (four); `figures` holds four.
        unsafe { Self::launch(m, s, "reduce_finish", finish, args)? };
        let mut slots = [0.0f64; 4];
        let copy = cuda("copying the body's figures from the GPU");
        crate::cuda::launch::read_back(s, &b.figures, &mut slots, copy)?;
        Ok(figures_from_slots(&slots))
    }
}

/// γₙ = n·u/(1 − n·u) (u = 2⁻⁵³): a sum of n + 1 doubles in any order is within γₙ·Σ|term| of
/// the exact sum (Higham, *Accuracy and Stability of Numerical Algorithms*, §4.2).
fn gamma(n: usize) -> f64 {
    let nu = n as f64 * f64::EPSILON / 2.0;
    nu / (1.0 - nu)
}

/// How far two sums of the same `terms` doubles (of Σ|term| `magnitude`) in different orders
/// may differ: each is within γ_{terms−1}·magnitude of the exact sum.
pub fn sum_allowance(terms: usize, magnitude: f64) -> f64 {
    2.0 * gamma(terms.saturating_sub(1)) * magnitude
}

/// How `gpu` (another backend's figures) compares with the CPU's figures of `body`: whether
/// the largest strain is the CPU's to the bit and each sum within its [`sum_allowance`], and
/// a line saying so (the worst sum's difference as a fraction of its allowance).
pub fn compare_figures(gpu: &BodyFigures, body: &Body, gravity: Vec3) -> (bool, String) {
    let cpu = BodyFigures::of(body, gravity);
    let m = f64::from(body.mass);
    // Σ|term|: the kinetic and elastic terms are ≥ 0, the potential's have either sign.
    let potential_magnitude: f64 = body
        .position
        .iter()
        .map(|p| (-m * f64::from(gravity.dot(*p))).abs())
        .sum();
    let sums = [
        ("kinetic", gpu.kinetic, cpu.kinetic, body.len(), cpu.kinetic),
        (
            "potential",
            gpu.potential,
            cpu.potential,
            body.len(),
            potential_magnitude,
        ),
        (
            "elastic",
            gpu.elastic,
            cpu.elastic,
            body.springs.len() + body.cells.len(),
            cpu.elastic,
        ),
    ];
    let mut worst = (0.0f64, "");
    let mut within = true;
    for (name, a, b, terms, magnitude) in sums {
        let allowed = sum_allowance(terms, magnitude);
        let difference = (a - b).abs();
        within &= difference <= allowed;
        let fraction = if difference == 0.0 {
            0.0
        } else {
            difference / allowed.max(f64::MIN_POSITIVE)
        };
        if fraction.is_nan() || fraction > worst.0 {
            worst = (fraction, name);
        }
    }
    let exact = gpu.max_strain.to_bits() == cpu.max_strain.to_bits();
    let passed = within && exact;
    let detail = format!(
        "{} (sums within {:.2} of their allowance{}, max strain {:.4e} {})",
        if passed { "ok" } else { "FAILS" },
        worst.0,
        if worst.1.is_empty() {
            String::new()
        } else {
            format!(" at most, in {}", worst.1)
        },
        gpu.max_strain,
        if exact {
            "equal".to_string()
        } else {
            format!("against the CPU's {:.4e}", cpu.max_strain)
        }
    );
    (passed, detail)
}

/// The cases of the checks: [`body_cases`] (12² cloths under each integrator, a 5³ jelly with its
/// volume term under Verlet and XPBD: one
/// block each) and a 48² cloth (2304 nodes: nine blocks, the last partly filled), 30 substeps
/// into their runs, with the gravity each falls in.
pub fn figure_cases() -> Vec<(String, BodyCase)> {
    let mut cases = body_cases(30);
    let (_, template) = cases[0].clone();
    let mut large = BodyCase {
        body: Body::cloth(
            48,
            1.0,
            Vec3::new(0.0, 0.8, 0.0),
            Vec3::Z,
            // Heavier than the small cloths' 0.5 kg, so that its 2304 nodes keep dt·ω ≈ 1.3
            // at their springs (stable; at 0.5 kg it blows up).
            20.0,
            [400.0, 200.0, 20.0],
        ),
        ..template
    };
    large.body.pinned[0] = true;
    large.body.pinned[47] = true;
    for _ in 0..30 {
        run_body_stages(&mut large);
    }
    cases.push((format!("cloth 48² ({})", large.integrator.name()), large));
    cases
}

/// Every case's figures on the GPU (device `device`), from the CPU's state uploaded, against
/// the CPU's figures of that state (`fluidlab doctor`'s "particles statistics" line).
pub fn gpu_check(device: usize) -> Result<(bool, String), String> {
    let text = |e: CudaError| e.to_string();
    let mut passed = true;
    let mut lines = Vec::new();
    for (name, case) in figure_cases() {
        let mut solver = CudaParticles::body(device, &case.body).map_err(text)?;
        let gravity = case.surroundings.air.gravity;
        let gpu = solver
            .body_figures(case.body.mass, gravity, cells(&case.body))
            .map_err(text)?;
        let (ok, detail) = compare_figures(&gpu, &case.body, gravity);
        passed &= ok;
        lines.push(format!("{name} body_stats: {detail}"));
    }
    Ok((passed, lines.join("; ")))
}

/// `body_stats`' volume term arguments: the lattice's side and the modulus (a cloth: none).
pub fn cells(body: &Body) -> (u32, f32) {
    (body.cells.side as u32, body.cells.modulus)
}
