//! Ink's CPU solver (rayon, row-parallel): one function per stage, named as the stages are
//! everywhere — `advect`, `splat`, `curl`, `vorticity`, `divergence`, `pressure`,
//! `subtract_gradient` (Stam 1999; Harris, GPU Gems ch. 38; on a MAC grid, see `fields.rs`;
//! the box's sides and the pressure stencil in `boundary.rs`). No stage allocates once the
//! first step has sized the buffers.

use super::advect::{self, Points, Scratch};
use super::boundary::MovingDisc;
use super::fields::{Field, Flow, Ink};
use super::multigrid::Multigrid;
use super::params::{InkParams, PressureSolver};
use super::stamp::{alpha, BrushStamp};
use super::{splat_box, InkStage, SolveReport, Stamp};
use rayon::prelude::*;
use std::time::Instant;

/// The CPU solver's state.
pub struct CpuInk {
    /// Parameters in force.
    pub params: InkParams,
    /// The flow.
    pub flow: Flow,
    /// The ink.
    pub ink: Ink,
    /// Curl at the cell centres, 1/s.
    pub curl: Field,
    /// Divergence before the last projection, 1/s.
    pub divergence: Field,
    /// The fields' previous buffers, written by the next advection: u, v, then the ink's.
    spare: [Vec<f32>; 5],
    /// Per cell: the vorticity force, or the pressure solve's h²·b, Jacobi's next values and
    /// the first sweep's rows of [`Poisson::jacobi_twice`](super::boundary::Poisson::jacobi_twice).
    work: [Vec<f32>; 3],
    scratch: Scratch,
    multigrid: Option<Multigrid>,
    /// The brush stamp's texture and which stamp it is (made when the parameters change it).
    stamp: (BrushStamp, Option<Vec<f32>>),
    /// What the last step's projection did.
    pub report: SolveReport,
    /// Seconds per stage since the last reset, in [`InkStage::ALL`] order.
    pub stage_seconds: [f64; InkStage::ALL.len()],
}

impl CpuInk {
    /// A fluid at rest with no ink; `solid(x, y)` says which cell centres are inside obstacles.
    pub fn new(params: InkParams, solid: impl Fn(f32, f32) -> bool) -> CpuInk {
        let (nx, ny, dx) = (params.cells_x, params.cells_y, params.dx());
        let mut flow = Flow::new(nx, ny, dx, params.boundary);
        let solid = (0..nx * ny)
            .map(|k| {
                let (x, y) = flow.p.position(k % nx, k / nx);
                solid(x, y)
            })
            .collect();
        flow.set_solid(solid);
        let s = params.ink_scale;
        let ink = Ink::new(nx * s, ny * s, dx / s as f32);
        CpuInk {
            curl: Field::new(nx, ny, [0.5, 0.5], dx),
            divergence: Field::new(nx, ny, [0.5, 0.5], dx),
            spare: Default::default(),
            work: Default::default(),
            scratch: Scratch::default(),
            multigrid: None,
            stamp: (BrushStamp::Round, None),
            report: SolveReport::default(),
            stage_seconds: [0.0; InkStage::ALL.len()],
            params,
            flow,
            ink,
        }
    }

    /// Makes the cells where `solid` solid (obstacles painted or moved): the faces beside them
    /// close, the pressure stencil and the multigrid hierarchy follow.
    pub fn set_solid(&mut self, solid: Vec<bool>) {
        if solid != self.flow.solid() {
            self.multigrid = None;
        }
        self.flow.set_solid(solid);
    }

    /// Makes the cells of the rows `rows` solid where `cells` (those rows' cells) and the discs
    /// `moving` move (their cells' closed faces carry their velocity) — every moving disc, and
    /// every disc that moved or stopped since the last call, within those rows. Only those rows
    /// are set again ([`Flow::set_solid_rows`]); when cells changed the multigrid hierarchy
    /// follows in those rows ([`Multigrid::update_rows`]), or is dropped while Jacobi runs.
    pub fn set_walls(
        &mut self,
        rows: std::ops::Range<usize>,
        cells: &[bool],
        moving: Vec<MovingDisc>,
    ) {
        self.set_walls_rows(&[(rows, cells)], moving);
    }

    /// [`CpuInk::set_walls`] for several runs of rows at once (`pieces`: each run's rows and
    /// their cells), the discs `moving` moving.
    pub fn set_walls_rows(
        &mut self,
        pieces: &[(std::ops::Range<usize>, &[bool])],
        moving: Vec<MovingDisc>,
    ) {
        self.flow.moving = moving;
        let changed: Vec<_> = (pieces.iter())
            .filter(|(rows, cells)| self.flow.set_solid_rows(rows.clone(), cells))
            .map(|(rows, _)| rows.clone())
            .collect();
        if changed.is_empty() {
            return;
        }
        match (&mut self.multigrid, self.params.pressure_solver) {
            // Every run's rows at once: each level coarsened once.
            (Some(multigrid), PressureSolver::Multigrid) => {
                multigrid.update_rows(self.flow.solid(), &self.flow.boundary, &changed)
            }
            // Jacobi runs: the next multigrid solve builds it anew (as on CUDA).
            _ => self.multigrid = None,
        }
    }

    /// Makes `boundary` the box's sides: the masks and the pressure stencil follow, and the
    /// multigrid hierarchy (its outflow sides and stencils) is built anew by the next solve.
    pub fn set_boundary(&mut self, boundary: super::Boundary) {
        self.params.boundary = boundary;
        self.flow.boundary = boundary;
        let mask = self.flow.solid().to_vec();
        self.flow.set_solid(mask);
        self.multigrid = None;
    }

    /// The multigrid hierarchy, once a multigrid solve has made it.
    #[cfg(test)]
    pub(super) fn multigrid(&self) -> Option<&Multigrid> {
        self.multigrid.as_ref()
    }

    fn timed(&mut self, stage: InkStage, run: impl FnOnce(&mut Self)) {
        let started = Instant::now();
        run(self);
        self.stage_seconds[stage as usize] += started.elapsed().as_secs_f64();
    }

    /// One solver step of `dt` with the brush `stamps` of this step.
    pub fn step(&mut self, dt: f32, stamps: &[Stamp]) {
        self.timed(InkStage::Advect, |s| s.advect(dt));
        self.timed(InkStage::Splat, |s| s.splat(dt, stamps));
        if self.params.vorticity > 0.0 {
            self.timed(InkStage::Curl, |s| s.compute_curl());
            self.timed(InkStage::Vorticity, |s| s.vorticity(dt));
        }
        self.timed(InkStage::Divergence, |s| s.compute_divergence());
        self.timed(InkStage::Pressure, |s| s.pressure());
        self.timed(InkStage::SubtractGradient, |s| s.subtract_gradient());
    }

    /// Carries velocity and ink along the velocity of the step's start, with the damping and
    /// fade rates applied.
    pub(super) fn advect(&mut self, dt: f32) {
        let scheme = self.params.advection;
        let damping = (-self.params.velocity_damping * dt).exp();
        let fade = (-self.params.ink_fade * dt).exp();
        let velocity = &self.flow.sampler();
        let [su, sv, s0, s1, s2] = &mut self.spare;
        let scratch = &mut self.scratch;
        let (u, v) = (&self.flow.u, &self.flow.v);
        advect::advect(
            [u],
            [su],
            Points::UFaces(velocity),
            dt,
            scheme,
            [damping],
            scratch,
        );
        advect::advect(
            [v],
            [sv],
            Points::VFaces(velocity),
            dt,
            scheme,
            [damping],
            scratch,
        );
        let [c0, c1, c2] = &self.ink.channels;
        let points = if self.params.ink_scale == 1 {
            Points::Centres(velocity)
        } else {
            Points::Sampled(velocity)
        };
        advect::advect(
            [c0, c1, c2],
            [s0, s1, s2],
            points,
            dt,
            scheme,
            [fade; 3],
            scratch,
        );
        let [su, sv, s0, s1, s2] = &mut self.spare;
        std::mem::swap(&mut self.flow.u.data, su);
        std::mem::swap(&mut self.flow.v.data, sv);
        for (channel, spare) in self.ink.channels.iter_mut().zip([s0, s1, s2]) {
            std::mem::swap(&mut channel.data, spare);
        }
        self.flow.keep_closed(su, sv);
    }

    /// Adds each stamp's Gaussian of velocity and ink — a brush's ink × the brush stamp's alpha
    /// turned to its direction (`stamp.rs`), its push the plain Gaussian — and the ink's
    /// buoyancy.
    pub(super) fn splat(&mut self, dt: f32, stamps: &[Stamp]) {
        if self.stamp.0 != self.params.brush_stamp {
            self.stamp = (self.params.brush_stamp, self.params.brush_stamp.texture());
        }
        for stamp in stamps {
            let weight = |x: f32, y: f32| {
                let (ex, ey) = (x - stamp.position[0], y - stamp.position[1]);
                (-(ex * ex + ey * ey) / (stamp.radius * stamp.radius)).exp()
            };
            let scale = if stamp.per_second { dt } else { 1.0 };
            let region = stamp.region();
            let flow = &mut self.flow;
            let (u, v) = ([stamp.velocity[0] * scale], [stamp.velocity[1] * scale]);
            add_gaussian([&mut flow.u], u, Some(&flow.u_open), region, &weight);
            add_gaussian([&mut flow.v], v, Some(&flow.v_open), region, &weight);
            let amounts = stamp.ink.map(|amount| amount * scale);
            let [c0, c1, c2] = &mut self.ink.channels;
            match (&self.stamp.1, stamp.direction) {
                (Some(texture), Some(direction)) => {
                    let masked = |x: f32, y: f32| {
                        let (ex, ey) = (x - stamp.position[0], y - stamp.position[1]);
                        weight(x, y) * alpha(texture, ex, ey, direction, stamp.radius)
                    };
                    add_gaussian([c0, c1, c2], amounts, None, region, &masked);
                }
                _ => add_gaussian([c0, c1, c2], amounts, None, region, &weight),
            }
        }
        if self.params.buoyancy != 0.0 {
            let lift = self.params.buoyancy * dt / 3.0;
            let ink = &self.ink.channels;
            let lattice = ink[0].lattice();
            let (v, open) = (&mut self.flow.v, &self.flow.v_open);
            let h = v.h;
            v.data
                .par_chunks_mut(v.nx)
                .zip(open.par_chunks(v.nx))
                .enumerate()
                .for_each(|(j, (row, open))| {
                    for (i, (value, _)) in row.iter_mut().zip(open).enumerate().filter(|f| *f.1 .1)
                    {
                        let at = lattice.bilinear((i as f32 + 0.5) * h, j as f32 * h);
                        let amount: f32 = ink.iter().map(|c| c.interpolate(at)).sum();
                        *value += lift * amount;
                    }
                });
        }
    }

    /// ω = ∂v/∂x − ∂u/∂y at the cell centres ([`Flow::curl`]).
    ///
    /// The obstacles' ghost faces are mirrored first (`Flow::mirror_rows`): the advection and
    /// the splat changed the fluid's faces since the projection mirrored them, and the curl
    /// beside an obstacle reads a ghost face through the solid cell's centre velocity (stale,
    /// a no-slip plate slipped at 10 % of the first row's speed there and the wall's curl was
    /// 19 % off: `ghost_faces_read_by_the_curl_are_the_mirror_of_the_splat`).
    pub(super) fn compute_curl(&mut self) {
        if self.flow.has_obstacles() {
            let ny = self.flow.ny;
            self.flow.mirror_rows(0..ny);
        }
        self.flow.curl(&mut self.curl);
    }

    /// Vorticity confinement (Fedkiw, Stam & Jensen 2001): F = ε·dx·(N × ω), N the unit
    /// gradient of |ω|, added to the open faces as the mean of the two cells beside each.
    pub(super) fn vorticity(&mut self, dt: f32) {
        let (nx, ny, dx) = (self.flow.nx, self.flow.ny, self.flow.dx);
        let epsilon = self.params.vorticity * dx;
        let curl = &self.curl;
        let [fx, fy, _] = &mut self.work;
        fx.resize(nx * ny, 0.0);
        fy.resize(nx * ny, 0.0);
        fx.par_chunks_mut(nx)
            .zip(fy.par_chunks_mut(nx))
            .enumerate()
            .with_min_len(8)
            .for_each(|(j, (row_x, row_y))| {
                // Neighbours clamped at the box's edges: the row's own value beyond them.
                let (jb, jt) = (j.saturating_sub(1), (j + 1).min(ny - 1));
                let (here, below, above) = (
                    &curl.data[j * nx..(j + 1) * nx],
                    &curl.data[jb * nx..(jb + 1) * nx],
                    &curl.data[jt * nx..(jt + 1) * nx],
                );
                // The force from the |ω| gradient; the row's first and last cells see their own
                // value beyond the edge, the others a plain loop over slices (vectorised).
                let force = |gx: f32, gy: f32, w: f32| {
                    let length = (gx * gx + gy * gy).sqrt() + 1e-20;
                    (epsilon * gy / length * w, -epsilon * gx / length * w)
                };
                for i in [0, nx - 1] {
                    let (il, ir) = (i.saturating_sub(1), (i + 1).min(nx - 1));
                    let gx = here[ir].abs() - here[il].abs();
                    let gy = above[i].abs() - below[i].abs();
                    (row_x[i], row_y[i]) = force(gx, gy, here[i]);
                }
                if nx >= 3 {
                    let inner = 1..nx - 1;
                    for ((((fx, fy), w), above), below) in row_x[inner.clone()]
                        .iter_mut()
                        .zip(&mut row_y[inner.clone()])
                        .zip(here.windows(3))
                        .zip(&above[inner.clone()])
                        .zip(&below[inner])
                    {
                        let gx = w[2].abs() - w[0].abs();
                        let gy = above.abs() - below.abs();
                        (*fx, *fy) = force(gx, gy, w[1]);
                    }
                }
            });
        let (fx, fy) = (&self.work[0], &self.work[1]);
        // Open faces only: closed ones keep their values (fixed, or a ghost's mirror image).
        let flow = &mut self.flow;
        flow.u
            .data
            .par_chunks_mut(nx + 1)
            .zip(flow.u_open.par_chunks(nx + 1))
            .enumerate()
            .for_each(|(j, (row, open))| {
                let force = &fx[j * nx..(j + 1) * nx];
                for ((u, f), &open) in row[1..nx].iter_mut().zip(force.windows(2)).zip(&open[1..]) {
                    let pushed = *u + dt * 0.5 * (f[0] + f[1]);
                    *u = if open { pushed } else { *u };
                }
            });
        flow.v
            .data
            .par_chunks_mut(nx)
            .zip(flow.v_open.par_chunks(nx))
            .enumerate()
            .skip(1)
            .take(ny.saturating_sub(1))
            .for_each(|(j, (row, open))| {
                let (below, above) = (&fy[(j - 1) * nx..j * nx], &fy[j * nx..(j + 1) * nx]);
                for (((v, below), above), &open) in row.iter_mut().zip(below).zip(above).zip(open) {
                    let pushed = *v + dt * 0.5 * (below + above);
                    *v = if open { pushed } else { *v };
                }
            });
    }

    /// ∇·u per cell.
    pub(super) fn compute_divergence(&mut self) {
        let flow = &self.flow;
        let nx = flow.nx;
        let (sum, count) = self
            .divergence
            .data
            .par_chunks_mut(nx)
            .enumerate()
            .with_min_len(8)
            .map(|(j, row)| flow.divergence_row(j, row))
            .reduce(|| (0.0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        self.report.divergence_before = (sum / count.max(1) as f64).sqrt();
    }

    /// Solves Σₙ (pₙ − p) = dx²·∇·u over the fluid cells (walls and solids: no flux; outflow
    /// sides: zero pressure outside), starting from the last pressure times the carry-over.
    pub(super) fn pressure(&mut self) {
        let carry = self.params.pressure_carry_over;
        self.flow.p.data.par_iter_mut().for_each(|p| *p *= carry);
        let iterations = self.params.iterations;
        match self.params.pressure_solver {
            PressureSolver::Jacobi => {
                let dx2 = self.flow.dx * self.flow.dx;
                let [h2b, next, first] = &mut self.work;
                h2b.clear();
                h2b.par_extend(self.divergence.data.par_iter().map(|d| dx2 * d));
                next.resize(h2b.len(), 0.0);
                // Sweeps two at a time (one pass over memory), the last alone when odd.
                let poisson = &self.flow.poisson;
                for _ in 0..iterations / 2 {
                    poisson.jacobi_twice(&self.flow.p.data, h2b, first, next);
                    std::mem::swap(&mut self.flow.p.data, next);
                }
                if iterations % 2 == 1 {
                    poisson.jacobi(&self.flow.p.data, h2b, next);
                    std::mem::swap(&mut self.flow.p.data, next);
                }
            }
            PressureSolver::Multigrid => {
                let flow = &self.flow;
                let multigrid = self.multigrid.get_or_insert_with(|| {
                    let fluid = flow.solid().iter().map(|s| !s).collect();
                    Multigrid::new(flow.nx, flow.ny, flow.dx, fluid, &flow.boundary)
                });
                multigrid.solve(&self.divergence.data, &mut self.flow.p.data, iterations);
            }
        }
        let flow = &self.flow;
        self.report.residual =
            flow.poisson
                .residual_rms(&flow.p.data, &self.divergence.data, flow.dx);
        self.report.iterations = iterations;
    }

    /// u −= ∇p (the standard sign: it removes the divergence the pressure was solved for; the
    /// original's `+` adds it, `specs/003-ink.md` ambiguity 1), on every open face; beyond an
    /// outflow side the pressure is zero.
    pub(super) fn subtract_gradient(&mut self) {
        self.flow.subtract_gradient();
        if self.flow.has_obstacles() {
            // The ghost faces mirror the projected velocity for the next step's readers (the
            // other closed faces kept their fixed velocities: the projection moves open ones).
            let ny = self.flow.ny;
            self.flow.mirror_rows(0..ny);
        }
        self.report.divergence_after = self.flow.divergence_rms();
    }
}

/// Adds `amounts[f] × weight(x, y)` to the points of `fields[f]` (fields of one lattice)
/// within `region` ([x0, y0, x1, y1], m): three Gaussian radii, beyond which the weight is
/// below e⁻⁹. The weight is computed once per point for all the fields; a field whose amount
/// is zero is left alone, and so are the points where `open` (per point) is false (closed
/// faces keep their values, as the kernel's).
fn add_gaussian<const N: usize>(
    fields: [&mut Field; N],
    amounts: [f32; N],
    open: Option<&[bool]>,
    region: [f32; 4],
    weight: &(dyn Fn(f32, f32) -> f32 + Sync),
) {
    if amounts.iter().all(|&amount| amount == 0.0) {
        return;
    }
    let (nx, ny, h, offset) = (fields[0].nx, fields[0].ny, fields[0].h, fields[0].offset);
    let (columns, rows) = splat_box(region, (nx, ny), offset, h);
    let j0 = rows.start;
    let mut chunks = fields.map(|field| {
        assert_eq!((field.nx, field.ny), (nx, ny), "fields of one lattice");
        field.data[rows.start * nx..rows.end * nx].chunks_mut(nx)
    });
    let bands: Vec<[&mut [f32]; N]> = rows
        .clone()
        .map(|_| {
            chunks
                .each_mut()
                .map(|c| c.next().expect("a row per field"))
        })
        .collect();
    bands.into_par_iter().enumerate().for_each(|(dj, mut row)| {
        let y = ((j0 + dj) as f32 + offset[1]) * h;
        for i in columns.clone() {
            if open.is_some_and(|open| !open[(j0 + dj) * nx + i]) {
                continue;
            }
            let x = (i as f32 + offset[0]) * h;
            let w = weight(x, y);
            for (row, &amount) in row.iter_mut().zip(&amounts) {
                if amount != 0.0 {
                    row[i] += amount * w;
                }
            }
        }
    });
}
