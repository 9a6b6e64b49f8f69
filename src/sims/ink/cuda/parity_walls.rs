//! The CUDA solver's obstacles against the CPU's, field by field (`parity.rs`'s comparison
//! scene and tolerances): cells painted and erased (`CudaInk::set_solid`), and a disc moved
//! (`CudaInk::set_walls`: `close_walls` closing the rows and mirroring their ghost faces, the
//! multigrid's masks following by rows); after each, the masks, stencil and fixed velocities
//! `wall_rows` derived on the GPU from the solid rows equal the CPU's (`Flow::wall_rows`).

use super::hierarchy::Hierarchy;
use super::parity::{
    differences, fields_of, multigrid_params, solid, stamps, stirred, EMULATION_TOLERANCE,
    GPU_TOLERANCE, MOVING,
};
use super::walls::WallMasks;
use super::CudaInk;
use crate::sims::ink::boundary::{MovingDisc, SideKind, Walls, BOTTOM};
use crate::sims::ink::cpu::CpuInk;
use crate::sims::ink::fields::Flow;

/// Painting obstacles on CUDA device `device` (only the rows that change go through the host,
/// `CudaInk::set_solid`) against the CPU's `set_solid`, from the stirred comparison scene with
/// multigrid pressure: a disc painted in and then half of it erased; every field after, and
/// after a step, equal within [`GPU_TOLERANCE`], and the walls' masks, stencil and fixed
/// velocities (`wall_rows`) equal to the CPU's after each.
pub fn gpu_set_solid_check(device: usize) -> Result<(bool, String), String> {
    let params = multigrid_params(false);
    let mut cpu = stirred(&params, 12);
    let mut cuda = CudaInk::new_on(device, params.clone(), &solid).map_err(|e| e.to_string())?;
    let mut masks = Vec::new();
    let mut run = |cuda: &mut CudaInk, cpu: &mut CpuInk| -> Result<f32, crate::cuda::CudaError> {
        let fields = fields_of(cpu);
        cuda.upload_fields(&fields)?;
        let (nx, ny) = (cpu.flow.nx, cpu.flow.ny);
        let mut worst = 0.0f32;
        for erase in [false, true] {
            let mut mask = cpu.flow.solid().to_vec();
            for (k, cell) in mask.iter_mut().enumerate() {
                let (i, j) = (
                    (k % nx) as f32 - 0.7 * nx as f32,
                    (k / nx) as f32 - 0.3 * ny as f32,
                );
                if i * i + j * j < 16.0 && (!erase || i < 0.0) {
                    *cell = !erase;
                }
            }
            cpu.set_solid(mask.clone());
            cuda.set_solid(mask)?;
            for name in cuda.wall_masks()?.differing(&WallMasks::of(&cpu.flow)) {
                masks.push(format!(
                    "{}: {name}",
                    if erase { "erased" } else { "painted" }
                ));
            }
            for d in differences(&fields_of(cpu), &cuda.read_back()?) {
                worst = worst.max(d.relative);
            }
        }
        cpu.step(params.dt, &stamps(12));
        cuda.step(params.dt, &stamps(12), true)?;
        cuda.end_frame()?;
        for d in differences(&fields_of(cpu), &cuda.read_back()?) {
            worst = worst.max(d.relative);
        }
        Ok(worst)
    };
    let worst = run(&mut cuda, &mut cpu).map_err(|e| e.to_string())?;
    let walls = if masks.is_empty() {
        "the walls' masks and fixed velocities as the CPU's".to_owned()
    } else {
        format!(
            "the walls' arrays differ from the CPU's ({})",
            masks.join(", ")
        )
    };
    Ok((
        worst <= GPU_TOLERANCE && masks.is_empty(),
        format!(
            "a disc painted and half erased, then a step: worst field difference {worst:.2e} \
             (allowed {GPU_TOLERANCE:.1e}); {walls}"
        ),
    ))
}

/// Moves of the disc in [`gpu_moving_walls_check`]: each shifts it by this much (m; 1.4 and
/// 0.9 cells of 2.5 cm), so every move changes cells in every row it covers.
pub const DISC_MOVE: [f32; 2] = [0.035, -0.022];

/// The last move of the discs in [`gpu_wall_edges_check`] (m): a jump of more than twice
/// either's diameter, so that rows between their old and new places are not sent
/// (`plan_walls`: two runs).
pub const DISC_JUMP: [f32; 2] = [0.0, 0.5];

/// The rows of cells a disc of `radius` at `center` may cover on `flow`'s grid.
fn disc_rows(flow: &Flow, center: [f32; 2], radius: f32) -> std::ops::Range<usize> {
    crate::sims::ink::boundary::disc_rows(center[1], radius, flow.dx, flow.ny)
}

/// The cells of the rows `rows` of `flow`'s grid, solid where a disc of `radius` at `center`
/// covers their centres (the comparison scene's only obstacle).
fn disc_cells(
    flow: &Flow,
    center: [f32; 2],
    radius: f32,
    rows: &std::ops::Range<usize>,
) -> Vec<bool> {
    (rows.start * flow.nx..rows.end * flow.nx)
        .map(|k| {
            let (x, y) = flow.p.position(k % flow.nx, k / flow.nx);
            (x - center[0]).powi(2) + (y - center[1]).powi(2) <= radius * radius
        })
        .collect()
}

/// A disc moved through the stirred comparison scene with multigrid pressure — no-slip
/// obstacles in the channel, free-slip ones in the closed box — on CUDA device `device`
/// (`CudaInk::set_walls_rows`: the rows sent, `close_walls` closing them and mirroring their
/// ghost faces, the multigrid's masks set again by cells, each level copied in joined blocks of
/// rows) against the CPU's `set_walls_rows` (`Flow::close_rows`, `Flow::mirror_rows`,
/// `Multigrid::update_rows`), field by field: after each of four moves of [`DISC_MOVE`] (the
/// disc's old and new rows handed over, as `InkSim::move_discs` does, with a second piece far
/// above them: a painted square stepping right, so that each level changes in two places) u, v
/// and p within [`EMULATION_TOLERANCE`] — `close_walls` copies
/// fixed velocities and takes a mean of at most two faces and twice the wall's velocity minus
/// it, which a GPU rounds as the CPU does — and the multigrid's masks on the GPU (levels,
/// stencil and solid bytes) equal to the hierarchy built anew from the CPU's cells, and the
/// flow's open masks, solid bytes, stencil and fixed velocities (`wall_rows` on the GPU from
/// the solid rows) equal to the CPU's (`Flow::wall_rows`); after the
/// step that follows each move (the projection's mirror) every field within
/// [`GPU_TOLERANCE`].
pub fn gpu_moving_walls_check(device: usize) -> Result<(bool, String), String> {
    let (mut moved, mut stepped, mut failures) = (0.0f32, 0.0f32, Vec::new());
    for (walls, closed) in [(Walls::NoSlip, false), (Walls::FreeSlip, true)] {
        let mut params = multigrid_params(closed);
        params.boundary.walls = walls;
        let mut cpu = stirred(&params, 12);
        let mut cuda =
            CudaInk::new_on(device, params.clone(), &solid).map_err(|e| e.to_string())?;
        let fields = fields_of(&cpu);
        let mut run = |cuda: &mut CudaInk| -> Result<(), crate::cuda::CudaError> {
            cuda.upload_fields(&fields)?;
            let mut center = MOVING.center;
            for step in 0..4 {
                let from = disc_rows(&cpu.flow, center, MOVING.radius);
                center = [center[0] + DISC_MOVE[0], center[1] + DISC_MOVE[1]];
                let to = disc_rows(&cpu.flow, center, MOVING.radius);
                let rows = from.start.min(to.start)..from.end.max(to.end);
                let cells = disc_cells(&cpu.flow, center, MOVING.radius, &rows);
                let disc = MovingDisc { center, ..MOVING };
                // A second piece far above the disc's rows, handed over with them: a painted
                // 3 × 3 square that steps 3 columns right each move.
                let (nx, ny) = (cpu.flow.nx, cpu.flow.ny);
                let top = ny - 6..ny - 1;
                assert!(
                    rows.end + 2 < top.start,
                    "the pieces {rows:?}, {top:?} are apart"
                );
                let square: Vec<bool> = (top.start * nx..top.end * nx)
                    .map(|k| {
                        let (i, j) = (k % nx, k / nx);
                        (ny - 4..ny - 1).contains(&j)
                            && (4 + 3 * step as usize..7 + 3 * step as usize).contains(&i)
                    })
                    .collect();
                let pieces = [(rows.clone(), &cells[..]), (top, &square[..])];
                cpu.set_walls_rows(&pieces, vec![disc]);
                cuda.set_walls_rows(&pieces, vec![disc])?;
                let what = format!("{}, move {step}", walls.name());
                // Moves 0 and 1 from equal states: the closing alone, to the rounding of an
                // f32; moves 2 and 3 after a step each, which leaves the GPU's rounding.
                let (allowed, worst) = if step < 2 {
                    (EMULATION_TOLERANCE, &mut moved)
                } else {
                    (GPU_TOLERANCE, &mut stepped)
                };
                for d in differences(&fields_of(&cpu), &cuda.read_back()?)
                    .iter()
                    .take(3)
                {
                    *worst = worst.max(d.relative);
                    if d.relative.is_nan() || d.relative > allowed {
                        failures.push(format!("{what}: {d:?}"));
                    }
                }
                for name in cuda.wall_masks()?.differing(&WallMasks::of(&cpu.flow)) {
                    failures.push(format!("{what}: the walls' {name} differ from the CPU's"));
                }
                let (levels, stencil, solid) = cuda.multigrid_masks()?;
                let mut fresh = Hierarchy::new(&cpu.flow);
                for (name, equal) in [
                    ("levels", levels == fresh.levels),
                    ("stencil", stencil == fresh.stencil(&cpu.flow)),
                    ("solid", solid == fresh.solid),
                ] {
                    if !equal {
                        failures.push(format!("{what}: the multigrid's {name} differ"));
                    }
                }
                if step >= 1 {
                    cpu.step(params.dt, &stamps(12 + step));
                    cuda.step(params.dt, &stamps(12 + step), true)?;
                    cuda.end_frame()?;
                    for d in differences(&fields_of(&cpu), &cuda.read_back()?) {
                        stepped = stepped.max(d.relative);
                        if d.relative.is_nan() || d.relative > GPU_TOLERANCE {
                            failures.push(format!("{what}, then a step: {d:?}"));
                        }
                    }
                }
            }
            Ok(())
        };
        run(&mut cuda).map_err(|e| e.to_string())?;
    }
    let detail = format!(
        "a disc moved 4 times with a square far above it, no-slip in a channel and free-slip \
         in a closed box: worst \
         difference after a move from equal states {moved:.2e} (allowed \
         {EMULATION_TOLERANCE:.1e}), after steps {stepped:.2e} (allowed {GPU_TOLERANCE:.1e}); \
         walls' masks and fixed velocities as the CPU's, multigrid masks as built anew"
    );
    Ok(crate::sims::doctor::verdict(detail, failures))
}

/// The discs of [`gpu_wall_edges_check`]: one crossing row 0, partly below the box, and one
/// overlapping it (the cells both cover take the first's velocity), each moving its own way.
pub const EDGE_DISCS: [MovingDisc; 2] = [
    MovingDisc {
        center: [0.3, 0.04],
        radius: 0.12,
        velocity: [0.3, 0.2],
    },
    MovingDisc {
        center: [0.42, 0.1],
        radius: 0.1,
        velocity: [-0.5, 0.15],
    },
];

/// The edges of `wall_rows` on CUDA device `device`, against the CPU's `Flow::wall_rows`: in the
/// comparison scene with an outflow side below (the bottom's v faces open beside fluid, the
/// stencil counting the outflow), the two overlapping [`EDGE_DISCS`] — the first crossing row 0
/// and partly outside the grid — over a painted block of resting cells that reaches under the
/// second, and a painted strip along the top row (the v faces at j = ny); set over every row,
/// then moved twice by [`DISC_MOVE`] and once by [`DISC_JUMP`] (their old and new rows, and
/// those between, handed over as `InkSim::move_discs` does). After each the
/// walls' open masks, solid bytes, stencil and fixed velocities equal the CPU's, and u, v and p
/// within [`EMULATION_TOLERANCE`] (`close_walls` from equal states).
pub fn gpu_wall_edges_check(device: usize) -> Result<(bool, String), String> {
    let mut params = multigrid_params(false);
    params.boundary.sides[BOTTOM] = SideKind::Outflow;
    let mut cpu = stirred(&params, 4);
    let mut cuda = CudaInk::new_on(device, params.clone(), &solid).map_err(|e| e.to_string())?;
    let (nx, ny) = (cpu.flow.nx, cpu.flow.ny);
    // Resting cells: a block under the second disc and beyond it, a strip along the top row.
    let painted =
        |i: usize, j: usize| (16..26).contains(&i) && j < 6 || (30..40).contains(&i) && j == ny - 1;
    let (mut worst, mut failures) = (0.0f32, Vec::new());
    let mut run = |cuda: &mut CudaInk| -> Result<(), crate::cuda::CudaError> {
        cuda.upload_fields(&fields_of(&cpu))?;
        let mut discs = EDGE_DISCS;
        let mut rows = 0..ny;
        for step in 0..4 {
            if step > 0 {
                // The rows both discs cover before and after the move.
                let covered = |discs: &[MovingDisc]| {
                    discs
                        .iter()
                        .map(|d| disc_rows(&cpu.flow, d.center, d.radius))
                        .fold(ny..0, |a, r| a.start.min(r.start)..a.end.max(r.end))
                };
                let before = covered(&discs);
                let shift = if step == 3 { DISC_JUMP } else { DISC_MOVE };
                for d in &mut discs {
                    d.center = [d.center[0] + shift[0], d.center[1] + shift[1]];
                }
                let after = covered(&discs);
                rows = before.start.min(after.start)..before.end.max(after.end);
            }
            let cells: Vec<bool> = (rows.start * nx..rows.end * nx)
                .map(|k| {
                    let (i, j) = (k % nx, k / nx);
                    let (x, y) = cpu.flow.p.position(i, j);
                    painted(i, j)
                        || discs.iter().any(|d| {
                            (x - d.center[0]).powi(2) + (y - d.center[1]).powi(2)
                                <= d.radius * d.radius
                        })
                })
                .collect();
            cpu.set_walls(rows.clone(), &cells, discs.to_vec());
            cuda.set_walls(rows.clone(), &cells, discs.to_vec())?;
            for name in cuda.wall_masks()?.differing(&WallMasks::of(&cpu.flow)) {
                failures.push(format!(
                    "move {step}: the walls' {name} differ from the CPU's"
                ));
            }
            for d in differences(&fields_of(&cpu), &cuda.read_back()?)
                .iter()
                .take(3)
            {
                worst = worst.max(d.relative);
                if d.relative.is_nan() || d.relative > EMULATION_TOLERANCE {
                    failures.push(format!("move {step}: {d:?}"));
                }
            }
        }
        Ok(())
    };
    run(&mut cuda).map_err(|e| e.to_string())?;
    let detail = format!(
        "two overlapping moving discs across row 0 and out of the grid, over painted cells, an \
         outflow side below, set, moved twice and jumped {} m up: worst field difference \
         {worst:.2e} (allowed {EMULATION_TOLERANCE:.1e})",
        DISC_JUMP[1]
    );
    let detail = if failures.is_empty() {
        format!("{detail}; walls' masks and fixed velocities as the CPU's")
    } else {
        detail
    };
    Ok(crate::sims::doctor::verdict(detail, failures))
}
