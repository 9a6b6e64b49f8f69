//! Host side of `kernels/particles.cu`: the parameter records its kernels take (the
//! fountain's by value, a body's through a pointer to its substep's; mirrored field for field, built from the CPU's constants with the CPU's operations, so both
//! start from the same numbers), the names the host looks up, and the launch shapes.

use crate::sims::particles::body::Body;
use crate::sims::particles::dynamics::{Air, Integrator, Surroundings};
use crate::sims::particles::fountain::{Emission, FountainParams};
use crate::sims::pool::cpu::StepConstants;
use crate::sims::pool::drops::Stencils;
use bytemuck::{Pod, Zeroable};
use cudarc::driver::DeviceRepr;
use glam::Vec3;

/// The module's name: `kernels/particles.cu`.
pub const MODULE: &str = "particles";

/// Threads per block (`PARTICLES_BLOCK`; the block reductions and the sort assume it).
pub const BLOCK: u32 = 256;
/// Threads of the one-block scans (`SCAN_THREADS`).
pub const SCAN_THREADS: u32 = 1024;
/// Keys per tile of the radix sort (`SORT_TILE`).
pub const SORT_TILE: u32 = BLOCK * 8;
/// Digits of a radix-sort pass (`RADIX`).
pub const RADIX: u32 = 256;
/// `reduce_nodes`' quantities per block (particles_stats.cuh `NODES_QUANTITIES`): the
/// non-finite nodes, then the box's −x, −y, −z, x, y, z (all maxima: `NODES_MAX_MASK`). These
/// and the constants above are the kernels' `#define`s (`tests/particles_cuda.rs`
/// `the_hosts_constants_are_the_kernels_defines` reads them from the source).
pub const NODES_QUANTITIES: u32 = 7;
/// Which of them are maxima.
pub const NODES_MAX_MASK: u32 = 0x7e;

/// The box around a body's finite nodes from `reduce_nodes`' six maxima (−lowest corner,
/// highest corner); `None` where no node was finite (each left at the kernels' `NO_LARGEST`).
pub fn nodes_box(maxima: &[f64]) -> Option<[glam::Vec3; 2]> {
    let corner = |m: &[f64]| glam::DVec3::new(m[0], m[1], m[2]).as_vec3();
    let (lo, hi) = (-corner(&maxima[0..3]), corner(&maxima[3..6]));
    (lo.x <= hi.x).then_some([lo, hi])
}

/// The kernels the host launches (each an `.entry` of the PTX), which `Module::load` looks up
/// (`tests/particles_cuda.rs` checks every launched or defined kernel is here).
pub const NAMES: &[&str] = &[
    "emit",
    "advance",
    "collide",
    "collide_scan",
    "collide_compact",
    "basin_splash",
    "basin_forces",
    "basin_integrate",
    "sort_keys",
    "sort_histogram",
    "sort_scan",
    "sort_scatter",
    "springs",
    "volume",
    "volume_gather",
    "wind",
    "wind_gather",
    "integrate",
    "xpbd_predict",
    "xpbd_solve",
    "xpbd_volume",
    "xpbd_velocity",
    "collide_nodes",
    "self_collide_drift",
    "self_collide_widest",
    "self_collide_decide",
    "self_collide_clear",
    "self_collide_cells",
    "self_collide_chunk_sums",
    "self_collide_scan",
    "self_collide_chunk_scan",
    "self_collide_scatter",
    "self_collide_order",
    "self_collide_count",
    "self_collide_lists",
    "self_collide_touching",
    "self_collide_gather",
    "self_collide_apply",
    "reduce_nodes",
    "reduce_fountain",
    "reduce_finish",
    "body_stats",
    "surface",
    "body_points",
    "water",
];

/// Blocks of `BLOCK` threads over `count` elements (at least one).
pub fn blocks(count: usize) -> usize {
    count.div_ceil(BLOCK as usize).max(1)
}

/// The threads of the frame's `reduce_fountain` (`end_frame`; the emulation is given the
/// same): one per basin node and per particle slot before `collide` (`particles`: an upper
/// bound of those alive, which the kernel reads from the tally), whichever are more. Over the
/// nodes alone the particles past them would go uncounted.
pub fn reduce_fountain_threads(nodes: usize, particles: usize) -> usize {
    nodes.max(particles)
}

/// Tiles of the radix sort over `count` keys (at least one).
pub fn tiles(count: usize) -> usize {
    count.div_ceil(SORT_TILE as usize).max(1)
}

/// A fountain step's constants, as `struct FountainStep` in particles.cu.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct FountainStep {
    /// The frame, s.
    pub dt: f32,
    /// Gravity, m/s².
    pub gravity: [f32; 3],
    /// The wind, m/s.
    pub wind: [f32; 3],
    /// Air drag, 1/s.
    pub drag: f32,
    /// The cube's half side, m.
    pub half: f32,
    /// The cube's top, m.
    pub top: f32,
    /// Vertical speed kept at the first hit.
    pub cut: f32,
    /// Horizontal factor at the first hit.
    pub boost: f32,
    /// Horizontal speed the first hit adds along the horizontal velocity, per m/s of the fall.
    pub sheet: f32,
    /// Restitution of later bounces.
    pub bounce: f32,
    /// The basin's half width, m.
    pub basin: f32,
    /// Its water level, m.
    pub level: f32,
    /// The landing push, (m/s)/(m/s).
    pub push: f32,
    /// A particle's lifetime, s.
    pub lifetime: f32,
    /// Particles die below this height, m.
    pub kill_height: f32,
    /// The jet's unit direction.
    pub up: [f32; 3],
    /// A unit vector across the jet.
    pub side: [f32; 3],
    /// up × side.
    pub other: [f32; 3],
    /// The nozzle's centre, m.
    pub nozzle: [f32; 3],
    /// The nozzle's radius, m.
    pub spread: f32,
    /// Launch speed range, m/s.
    pub speed: [f32; 2],
    /// Sideways launch speed, m/s.
    pub horizontal: f32,
    /// The draws' key (`random::key(seed)`).
    pub key: u32,
    /// The sort's eye, m.
    pub eye: [f32; 3],
    /// The sort's view direction (unit).
    pub forward: [f32; 3],
}

// SAFETY: plain old data of 4-byte fields, laid out as the C struct it mirrors.
unsafe impl DeviceRepr for FountainStep {}

impl FountainStep {
    /// A step of `dt` of `params` in `air`, sorted as seen from `eye` along `forward`.
    pub fn new(params: &FountainParams, air: &Air, dt: f32, eye: Vec3, forward: Vec3) -> Self {
        let e = Emission::new(params);
        FountainStep {
            dt,
            gravity: air.gravity.into(),
            wind: air.wind.into(),
            drag: params.drag,
            half: 0.5 * params.cube,
            top: params.cube,
            cut: params.cut,
            boost: params.boost,
            sheet: params.sheet,
            bounce: params.bounce,
            basin: params.basin,
            level: params.level,
            push: params.push,
            lifetime: params.lifetime,
            kill_height: params.kill_height,
            up: e.up.into(),
            side: e.side.into(),
            other: e.other.into(),
            nozzle: e.nozzle.into(),
            spread: params.spread,
            speed: params.speed,
            horizontal: params.horizontal,
            key: e.key,
            eye: eye.into(),
            forward: forward.into(),
        }
    }
}

/// The basin's substep and splashes, as `struct BasinStep` in particles.cu.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct BasinStep {
    /// Nodes per side.
    pub n: i32,
    /// Spacing, m.
    pub h: f32,
    /// Substep, s.
    pub dt: f32,
    /// c²/h², 1/s².
    pub wave_k: f32,
    /// e^(−damping·dt).
    pub decay: f32,
    /// The landing's stencil half-width, nodes.
    pub inner_reach: i32,
    /// The ring's.
    pub outer_reach: i32,
    /// Σ of the landing's stencil weights.
    pub inner_sum: f32,
    /// Σ of the ring's.
    pub outer_sum: f32,
    /// The landing's radius, m.
    pub radius: f32,
}

// SAFETY: plain old data of 4-byte fields, laid out as the C struct it mirrors.
unsafe impl DeviceRepr for BasinStep {}

/// The basin's step for a frame of `dt`: the record, the substeps, and the two stencils'
/// weights (the landing's and the ring's), as fountain.rs `basin` takes them from the pool's
/// `Stencils`.
pub fn basin_step(
    params: &FountainParams,
    h: f32,
    dt: f32,
    stencils: &mut Stencils,
) -> (BasinStep, u32, Vec<f32>, Vec<f32>) {
    let pool = params.basin_params(dt);
    let k = StepConstants::new(&pool);
    let inner = stencils.get(params.splash_radius / h).clone();
    let outer = stencils.get(2.0 * params.splash_radius / h).clone();
    let step = BasinStep {
        n: k.n as i32,
        h: k.h,
        dt: k.dt,
        wave_k: k.wave_k,
        decay: k.decay,
        inner_reach: inner.reach as i32,
        outer_reach: outer.reach as i32,
        inner_sum: inner.weights.iter().sum(),
        outer_sum: outer.weights.iter().sum(),
        radius: params.splash_radius,
    };
    (step, pool.substeps(), inner.weights, outer.weights)
}

/// A body's substep, as `struct BodyStep` in particles.cu (the kernels read it from the GPU's
/// memory, each substep its own: `crate::cuda::Records`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct BodyStep {
    /// Nodes.
    pub nodes: u32,
    /// Triangles the wind pushes on.
    pub triangles: u32,
    /// 1: symplectic Euler; 0: time-corrected Verlet.
    pub euler: u32,
    /// 0 under XPBD (the springs are constraints).
    pub with_springs: u32,
    /// The wind relative to the triangles' velocity.
    pub relative: u32,
    /// There is a sphere.
    pub has_sphere: u32,
    /// Substep, s.
    pub dt: f32,
    /// 1/m, 1/kg.
    pub inverse_mass: f32,
    /// m·g, N.
    pub weight: [f32; 3],
    /// The wind, m/s.
    pub wind: [f32; 3],
    /// Wind drag, N·s/m³.
    pub drag: f32,
    /// e^(−damping·dt).
    pub decay: f32,
    /// dt/dt₋·decay (Verlet).
    pub carry: f32,
    /// dt·(dt + dt₋)/2 (Verlet).
    pub reach: f32,
    /// The ground's height, m.
    pub ground: f32,
    /// The sphere's centre, m.
    pub centre: [f32; 3],
    /// The sphere's radius, m.
    pub radius: f32,
    /// Coulomb's μ (`coulomb`, dynamics.rs).
    pub friction: f32,
    /// The jelly's lattice: nodes per side (0: no cells, a cloth).
    pub side: u32,
    /// Its cells, (side − 1)³.
    pub cells: u32,
    /// The volume term's bulk modulus K, Pa (0: off).
    pub volume_modulus: f32,
}

impl BodyStep {
    /// A substep of `dt` (the one before `dt_before`) of `body` under `integrator`, with the
    /// constants dynamics.rs computes from the same values.
    pub fn new(
        body: &Body,
        s: &Surroundings,
        integrator: Integrator,
        (dt, dt_before): (f32, f32),
        damping: f32,
    ) -> Self {
        let decay = (-damping * dt).exp();
        let (centre, radius) = s.sphere.unwrap_or((Vec3::ZERO, 0.0));
        BodyStep {
            nodes: body.len() as u32,
            triangles: body.triangles.len() as u32,
            euler: u32::from(integrator == Integrator::Euler),
            with_springs: u32::from(integrator.explicit()),
            relative: u32::from(s.wind_relative),
            has_sphere: u32::from(s.sphere.is_some()),
            dt,
            inverse_mass: 1.0 / body.mass,
            weight: (s.air.gravity * body.mass).into(),
            wind: s.air.wind.into(),
            drag: s.wind_drag,
            decay,
            carry: dt / dt_before * decay,
            reach: dt * (dt + dt_before) * 0.5,
            ground: s.ground,
            centre: centre.into(),
            radius,
            friction: s.friction,
            side: body.cells.side as u32,
            cells: body.cells.len() as u32,
            volume_modulus: body.cells.modulus,
        }
    }

    /// The volume term runs (a lattice of cells, K > 0): the launch code and the graphs' key
    /// (`frame_graph.rs`) both ask this.
    pub fn volume_on(&self) -> bool {
        self.cells > 0 && self.volume_modulus > 0.0
    }

    /// The wind stage runs (a drag other than 0): the launch code and the graphs' key both
    /// ask this.
    pub fn wind_on(&self) -> bool {
        self.drag != 0.0
    }
}

/// Slots of `self_collide`'s state array (particles_self_collide.cuh `SC_*`): this substep
/// rebuilds, builds so far, the last build's candidates, the need of lists that overflowed (0:
/// none), the largest such need since the frame's end last read it.
pub const SC_STATE: usize = 5;
/// Builds so far.
pub const SC_BUILDS: usize = 1;
/// Candidates the last build found.
pub const SC_NEEDED: usize = 2;
/// Nonzero: the last build's lists did not fit; then how many candidates they needed.
pub const SC_OVERFLOW: usize = 3;
/// The largest need of a build whose lists did not fit since the frame's end last read (and
/// zeroed) it: an overflow that cleared within the frame (a later build fitting) is still
/// reported; 0: none.
pub const SC_LARGEST: usize = 4;

/// A `self_collide` substep, as `struct SelfStep` in particles_self_collide.cuh (read from the
/// GPU's memory, as [`BodyStep`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct SelfStep {
    /// Nodes.
    pub nodes: u32,
    /// Buckets of the hashed cells (`self_collide::buckets`).
    pub buckets: u32,
    /// Room for candidates.
    pub capacity: u32,
    /// 1: rebuild the lists whatever the drift.
    pub force: u32,
    /// The thickness h, m.
    pub h: f32,
    /// The lists' radius h + s, m (computed as `self_collide` does).
    pub radius: f32,
    /// The drift that rebuilds, s/2, m.
    pub limit: f32,
    /// The friction of the sliding velocity.
    pub friction: f32,
    /// The substep, s.
    pub dt: f32,
}

impl SelfStep {
    /// A substep of `dt` of a body of `nodes` at thickness `h` with `friction`, room for
    /// `capacity` candidates (`force`: rebuild the lists).
    pub fn new(
        nodes: usize,
        (h, friction, dt): (f32, f32, f32),
        capacity: usize,
        force: bool,
    ) -> Self {
        use crate::sims::particles::self_collide::{buckets, SKIN};
        SelfStep {
            nodes: nodes as u32,
            buckets: buckets(nodes),
            capacity: capacity.min(u32::MAX as usize) as u32,
            force: u32::from(force),
            h,
            radius: h * (1.0 + SKIN),
            limit: 0.5 * SKIN * h,
            friction,
            dt,
        }
    }
}

/// A body's topology as the kernels read it (compressed rows, structure of arrays).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Topology {
    /// Node k's links are node_start[k]..node_start[k + 1].
    pub node_start: Vec<u32>,
    /// Each link's other end.
    pub link_other: Vec<u32>,
    /// Each link's rest length, m.
    pub link_rest: Vec<f32>,
    /// Each link's stiffness, N/m.
    pub link_stiffness: Vec<f32>,
    /// Triangles, three node indices each.
    pub triangles: Vec<u32>,
    /// Node k's triangles are node_triangles[node_triangle_start[k]..[k + 1]].
    pub node_triangle_start: Vec<u32>,
    /// Triangle indices by node.
    pub node_triangles: Vec<u32>,
    /// Springs by colour.
    pub coloured: Vec<u32>,
    /// Where each colour starts.
    pub colour_start: Vec<u32>,
    /// Each spring's ends, rest length and stiffness.
    pub spring_a: Vec<u32>,
    /// The other end.
    pub spring_b: Vec<u32>,
    /// Rest lengths, m.
    pub spring_rest: Vec<f32>,
    /// Stiffnesses, N/m.
    pub spring_stiffness: Vec<f32>,
    /// Each cell's rest volume, m³ (a jelly's; none for a cloth).
    pub cell_rest: Vec<f32>,
}

impl Topology {
    /// `body`'s.
    pub fn of(body: &Body) -> Topology {
        Topology {
            node_start: body.node_start.clone(),
            link_other: body.links.iter().map(|l| l.other).collect(),
            link_rest: body.links.iter().map(|l| l.rest).collect(),
            link_stiffness: body.links.iter().map(|l| l.stiffness).collect(),
            triangles: body.triangles.iter().flatten().copied().collect(),
            node_triangle_start: body.node_triangle_start.clone(),
            node_triangles: body.node_triangles.clone(),
            coloured: body.coloured.clone(),
            colour_start: body.colour_start.clone(),
            spring_a: body.springs.iter().map(|s| s.a).collect(),
            spring_b: body.springs.iter().map(|s| s.b).collect(),
            spring_rest: body.springs.iter().map(|s| s.rest).collect(),
            spring_stiffness: body.springs.iter().map(|s| s.stiffness).collect(),
            cell_rest: body.cells.rest.clone(),
        }
    }
}
