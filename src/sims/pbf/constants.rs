//! The numbers one solver step uses, derived once from [`Params`]: the CPU solver reads them,
//! and the CUDA host copies them into the kernels' parameter block (`cuda::params::GpuParams`),
//! so both backends start every step from the same values and a new parameter is derived in
//! one place.

use super::boundary::BoundaryLattice;
use super::kernel::SphKernel;
use super::Params;

/// Derived constants of a solver step of length `dt`.
#[derive(Clone, Copy, Debug)]
pub struct StepConstants {
    /// The SPH kernels for h.
    pub kernel: SphKernel,
    /// Particle mass m, kg.
    pub mass: f32,
    /// Particle volume V = m / ρ₀, m³.
    pub volume: f32,
    /// 1 / ρ₀.
    pub inverse_rest_density: f32,
    /// A particle's own contribution to its density, m W(0).
    pub self_density: f32,
    /// ε in λ's denominator: `relaxation` times the rest stiffness Σ|∇C|²₀.
    pub relaxation: f32,
    /// s_corr's k divided by the rest stiffness.
    pub scorr_scale: f32,
    /// 1 / W(Δq).
    pub inverse_scorr_reference: f32,
    /// s_corr's exponent n.
    pub scorr_n: i32,
    /// How far particle centres stay from walls and obstacles: the particle radius.
    pub margin: f32,
    /// The lattice the walls' virtual particles continue.
    pub boundary: BoundaryLattice,
    /// Length of the solver step, s.
    pub dt: f32,
    /// ω, the factor every λ is scaled by (`Params::jacobi_relaxation`).
    pub jacobi_relaxation: f32,
    /// Vorticity confinement ε_vort · dt (a velocity per unit η̂ × ω).
    pub vorticity_scale: f32,
    /// XSPH's c · V.
    pub xsph_scale: f32,
}

impl StepConstants {
    /// The constants of `params` for a step of `dt`.
    pub fn new(params: &Params, dt: f32) -> Self {
        let kernel = params.kernel();
        let dq = params.scorr_dq * params.kernel_radius;
        let rest_stiffness = params.rest_stiffness();
        Self {
            kernel,
            mass: params.particle_mass,
            volume: params.particle_volume(),
            inverse_rest_density: 1.0 / params.rest_density,
            self_density: params.particle_mass * kernel.density(0.0),
            relaxation: params.relaxation * rest_stiffness,
            scorr_scale: params.scorr_k / rest_stiffness,
            inverse_scorr_reference: 1.0 / kernel.density(dq * dq),
            scorr_n: params.scorr_n,
            margin: params.particle_radius(),
            boundary: BoundaryLattice::new(params.spacing, kernel),
            dt,
            jacobi_relaxation: params.jacobi_relaxation(),
            vorticity_scale: params.vorticity * dt,
            xsph_scale: params.xsph_c * params.particle_volume(),
        }
    }
}
