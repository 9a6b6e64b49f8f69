//! The grid's per-side settings read by the kernels (`InkGrid::sticks`, `outflow`, `fixed`:
//! bit or entry `side` for left, right, bottom, top; bit 4 of `sticks` the obstacles' no-slip)
//! checked without a GPU on boxes whose opposite sides differ: a no-slip wall opposite an inflow
//! or an outflow, an inflow opposite an outflow. The comparison scene of `emulation.rs` (an
//! inflow on the left, an outflow on the right, no-slip walls below and above) has the same
//! walls below and above and no outflow below or above, so a kernel (or host) that read a side's
//! bit as its opposite's passed it. Needs a C++20 compiler, as `emulation.rs`.

use super::emulation::{compile, emulate, stage_comparisons, Command_};
use super::kernels::InkGrid;
use super::parity::{self, EMULATION_TOLERANCE, STATISTICS_TOLERANCE};
use crate::sims::ink::boundary::SideKind::{self, Inflow, Outflow, Wall};
use crate::sims::ink::boundary::SIDES;
use crate::sims::ink::cpu::CpuInk;
use crate::sims::ink::params::{Advection, InkParams};
use std::path::Path;

/// The boxes (left, right, bottom, top), no-slip walls and obstacles: between them every side
/// is once a sticking wall, once an outflow and once an inflow where its opposite side is not
/// (`the_boxes_set_every_side_apart_from_its_opposite`).
const BOXES: [[SideKind; 4]; 3] = [
    [Outflow, Wall, Wall, Inflow],
    [Wall, Inflow, Outflow, Wall],
    [Inflow, Outflow, Inflow, Outflow],
];

/// `emulation.rs`'s comparison scene (MacCormack, ink twice as fine, its moving disc, brush
/// and stirring) in a box with `sides`.
fn params_with(sides: [SideKind; 4]) -> InkParams {
    let mut params = parity::params(Advection::Maccormack, 2);
    params.boundary.sides = sides;
    params
}

/// Each of the grid's per-side settings is, in some box, set on a side and not on its opposite
/// (the bits `kernels::side_bits` builds, the obstacles' bit, the fixed velocities); a mutant
/// that swapped opposite sides or dropped a bit then changes what the kernels see.
#[test]
fn the_boxes_set_every_side_apart_from_its_opposite() {
    let grids: Vec<InkGrid> = BOXES.map(|sides| InkGrid::new(&params_with(sides))).into();
    for (side, name) in SIDES.into_iter().enumerate() {
        let opposite = side ^ 1;
        let apart = |bits: fn(&InkGrid) -> u32| {
            grids
                .iter()
                .any(|g| bits(g) >> side & 1 == 1 && bits(g) >> opposite & 1 == 0)
        };
        assert!(apart(|g| g.sticks), "sticks: {name}");
        assert!(apart(|g| g.outflow), "outflow: {name}");
        assert!(
            grids
                .iter()
                .any(|g| g.fixed[side] != 0.0 && g.fixed[opposite] == 0.0),
            "fixed velocity: {name}"
        );
    }
    assert!(grids.iter().all(|g| g.sticks & 16 != 0), "obstacles stick");
}

/// `wall_rows` derives a box's open masks, stencil and closed faces' fixed velocities from its
/// solid cells alone (its outflow bits and fixed velocities: the disc standing) as the CPU's
/// `Flow` holds them, byte for byte and bit for bit. Returns the differing entries (name, count).
fn walls_differences(program: &Path, params: &InkParams) -> Vec<(&'static str, usize)> {
    let cpu = CpuInk::new(params.clone(), parity::solid);
    let fields = parity::fields_of(&cpu);
    let flow = &fields.flow;
    let (_, _, walls) = emulate(program, params, &fields, Command_::Walls, params.dt, &[]);
    let g = InkGrid::new(params);
    let (nx, nu, nv, nc) = (g.nx as usize, g.u_faces(), g.v_faces(), g.cells());
    assert_eq!(
        walls.len(),
        nu + nv + nc + 4 * (nu + nv),
        "the walls' output"
    );
    let (u_open, rest) = walls.split_at(nu);
    let (v_open, rest) = rest.split_at(nv);
    let (stencil, rest) = rest.split_at(nc);
    let (u_fixed, v_fixed) = rest.split_at(4 * nu);
    let u_fixed: Vec<f32> = bytemuck::pod_collect_to_vec(u_fixed);
    let v_fixed: Vec<f32> = bytemuck::pod_collect_to_vec(v_fixed);
    let (cpu_u_fixed, cpu_v_fixed) = flow.fixed();
    let differing = |a: &[u8], b: &mut dyn Iterator<Item = u8>| {
        a.iter().zip(b).filter(|(a, b)| **a != *b).count()
    };
    let bits = |a: &[f32], b: &[f32]| {
        a.iter()
            .zip(b)
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count()
    };
    vec![
        (
            "u_open",
            differing(
                u_open,
                &mut (0..nu).map(|k| u8::from(flow.u_open(k % (nx + 1), k / (nx + 1)))),
            ),
        ),
        (
            "v_open",
            differing(
                v_open,
                &mut (0..nv).map(|k| u8::from(flow.v_open(k % nx, k / nx))),
            ),
        ),
        (
            "stencil",
            differing(stencil, &mut flow.poisson.cells.iter().copied()),
        ),
        ("u_fixed", bits(&u_fixed, cpu_u_fixed)),
        ("v_fixed", bits(&v_fixed, cpu_v_fixed)),
    ]
}

/// In every box of [`BOXES`], the kernels run on the CPU read each side's settings as the CPU
/// solver does: every stage from the stirred scene's state within [`EMULATION_TOLERANCE`]
/// (statistics within [`STATISTICS_TOLERANCE`]) — the no-slip sides and obstacles in the
/// sampler, the advected velocity and the obstacles' ghost faces, the fixed velocities in the
/// sampler's ghost values — and `wall_rows`' masks, stencil and fixed velocities (the outflow
/// bits) equal to the CPU's.
///
/// Fails with the sides swapped in `kernels::side_bits` (`<< (side ^ 1)`; the comparison scene
/// of `emulation.rs` passes it): `wall_rows` gives 80 u_open and stencil bytes wrong in box 0,
/// 96 v_open and stencil bytes in box 1, 80, 96 and 170 in box 2; advect differs by 0.32 and
/// 0.31 of u's and v's largest values in boxes 0 and 1, curl by 0.61 and 0.69. Fails with the
/// obstacles' bit 4 dropped from `sticks`: curl and subtract_gradient differ by 0.59–1.7 in
/// every box. Fails with the fixed velocities' sides swapped (`fixed` built from right, left,
/// top, bottom): 96, 80 and 176 fixed faces wrong, advect 0.24–0.33.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn every_side_of_an_uneven_box_is_read_by_the_kernels_as_the_cpu_reads_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("ink"), false);
    let mut failures = Vec::new();
    for (index, sides) in BOXES.into_iter().enumerate() {
        let params = params_with(sides);
        let what = format!("box {index} {:?}", sides.map(SideKind::name));
        let walls = walls_differences(&program, &params);
        println!("{what}: walls {walls:?}");
        if walls.iter().any(|&(_, n)| n > 0) {
            failures.push(format!("{what}: walls differ {walls:?}"));
        }
        let comparisons = stage_comparisons(&program, &params);
        for c in &comparisons {
            println!("{what} {:<18} worst {:.2e}", c.stage.name(), c.worst());
        }
        failures.extend(comparisons.iter().filter_map(|c| {
            let checked = c.check(EMULATION_TOLERANCE, STATISTICS_TOLERANCE);
            checked.err().map(|e| format!("{what}: {e}"))
        }));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
