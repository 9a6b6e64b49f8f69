//! The `anisotropy` kernel (`kernels/anisotropy.cuh`) compiled as C++ (`tests/emulation/
//! anisotropy.cpp`) and run on the CPU, against the CPU stage ([`crate::sims::pbf::anisotropy`])
//! on a moving state of the parity scene: the same centres and the same ellipsoids, compared as
//! Σₖ aₖ aₖᵀ (which does not depend on the axes' order, nor on their choice where two are equal).

use super::emulation::{compile, Rounding};
use super::params::GpuParams;
use super::parity;
use crate::sims::pbf::anisotropy::anisotropy_records;
use crate::sims::pbf::grid::{gather, UniformGrid};
use glam::{Mat3, Vec3, Vec3A};

/// Σₖ aₖ aₖᵀ and the centre of one particle's three records.
fn shape(records: &[[f32; 4]]) -> (Mat3, Vec3) {
    let mut m = Mat3::ZERO;
    for r in records {
        let a = Vec3::new(r[0], r[1], r[2]);
        m += Mat3::from_cols(a * a.x, a * a.y, a * a.z);
    }
    (m, Vec3::new(records[0][3], records[1][3], records[2][3]))
}

#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn the_anisotropy_kernel_run_on_the_cpu_matches_the_cpu_stage() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(
        "anisotropy.cpp",
        &dir.path().join("anisotropy"),
        Rounding::Separate,
    );
    let scene = parity::parity_scene();
    let state = parity::moving_state(&scene).expect("the CPU state");
    let (params, world) = (&scene.params, scene.world());
    let n = state.len();
    let mut grid = UniformGrid::new(&world.container, params.kernel_radius);
    grid.build(&state.positions);
    let mut sorted: Vec<Vec3A> = Vec::new();
    gather(&state.positions, grid.order(), &mut sorted);
    let constants = GpuParams::new(params, &world, n as u32, params.dt);
    let mut input = bytemuck::bytes_of(&constants).to_vec();
    input.extend_from_slice(bytemuck::bytes_of(&params.particle_radius()));
    let cells = (grid.cell_start().len() - 1) as u32;
    input.extend_from_slice(bytemuck::bytes_of(&cells));
    input.extend_from_slice(bytemuck::cast_slice(grid.cell_start()));
    for p in &sorted {
        input.extend_from_slice(bytemuck::cast_slice(&[p.x, p.y, p.z, 0.0f32]));
    }
    let bytes = crate::cuda::emulation::run(&program, &input, &[]);
    let kernel: &[[f32; 4]] = bytemuck::cast_slice(&bytes);
    assert_eq!(kernel.len(), 3 * n);
    let mut cpu = Vec::new();
    anisotropy_records(
        &sorted,
        params.kernel_radius,
        params.particle_radius(),
        &mut cpu,
    );
    let r = params.particle_radius();
    let (mut worst_shape, mut worst_centre, mut stretched) = (0.0f32, 0.0f32, 0);
    for i in 0..n {
        let (m_gpu, c_gpu) = shape(&kernel[3 * i..3 * i + 3]);
        let (m_cpu, c_cpu) = shape(&cpu[3 * i..3 * i + 3]);
        let difference = (m_gpu - m_cpu).to_cols_array();
        let largest = difference.iter().fold(0.0f32, |a, d| a.max(d.abs()));
        worst_shape = worst_shape.max(largest / (r * r));
        worst_centre = worst_centre.max((c_gpu - c_cpu).length() / r);
        let axes = cpu[3 * i..3 * i + 3]
            .iter()
            .map(|r| Vec3::new(r[0], r[1], r[2]).length());
        let (long, short) = axes.fold((0.0f32, f32::MAX), |(l, s), a| (l.max(a), s.min(a)));
        stretched += usize::from(long > 1.5 * short);
    }
    // The state has a surface, so some ellipsoids are stretched: the comparison sees them.
    assert!(stretched > n / 20, "only {stretched} of {n} stretched");
    assert!(worst_shape < 1e-3, "Σ a aᵀ differs by {worst_shape} r²");
    assert!(worst_centre < 1e-4, "centres differ by {worst_centre} r");
}
