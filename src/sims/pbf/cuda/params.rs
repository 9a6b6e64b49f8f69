//! The parameter block the kernels take by value, mirrored field for field by `struct
//! PbfParams` in `kernels/pbf_common.cuh`, and the obstacle records (`struct PbfObstacle`).

use crate::sims::pbf::coarse::CoarseCorrection;
use crate::sims::pbf::constants::StepConstants;
use crate::sims::pbf::grid::UniformGrid;
use crate::sims::pbf::{Obstacle, Params, World};
use bytemuck::{Pod, Zeroable};
use cudarc::driver::DeviceRepr;
use glam::Vec3A;

/// One step's constants, derived from [`Params`] with the same operations as the CPU solver's
/// `StepConstants`, so both backends start every step from bit-identical numbers.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuParams {
    pub grid_origin: [f32; 3],
    pub inverse_cell_size: f32,
    pub grid_dims: [i32; 3],
    pub particle_count: u32,
    pub dt: f32,
    pub inverse_dt: f32,
    pub gravity: [f32; 3],
    pub kernel_radius: f32,
    pub kernel_radius_squared: f32,
    pub inverse_kernel_radius: f32,
    pub density_coefficient: f32,
    pub gradient_coefficient: f32,
    pub gradient_peak: f32,
    pub coincident_squared: f32,
    pub mass: f32,
    pub volume: f32,
    pub inverse_rest_density: f32,
    pub self_density: f32,
    pub relaxation: f32,
    pub jacobi_relaxation: f32,
    pub scorr_scale: f32,
    pub inverse_scorr_reference: f32,
    pub scorr_n: i32,
    pub margin: f32,
    pub container_lo: [f32; 3],
    pub container_hi: [f32; 3],
    pub obstacle_count: u32,
    pub vorticity_scale: f32,
    pub xsph_scale: f32,
    pub spacing: f32,
    pub boundary_steps: i32,
    pub wall_lo: [f32; 3],
    pub wall_hi: [f32; 3],
    pub coarse_cell: [f32; 3],
}

// SAFETY: plain old data of 4-byte fields, laid out as the C struct it mirrors.
unsafe impl DeviceRepr for GpuParams {}

impl GpuParams {
    /// The constants of one solver step of length `dt` (a frame's dt over its substep count)
    /// of `params` over `world` with `particle_count` particles.
    pub fn new(params: &Params, world: &World, particle_count: u32, dt: f32) -> Self {
        let c = StepConstants::new(params, dt);
        let kernel = c.kernel;
        let h = params.kernel_radius;
        let dims = UniformGrid::dims_for(&world.container, h).map(|n| n as i32);
        let lo = world.container.min + Vec3A::splat(c.margin);
        let hi = world.container.max - Vec3A::splat(c.margin);
        Self {
            grid_origin: world.container.min.to_array(),
            inverse_cell_size: 1.0 / h,
            grid_dims: dims,
            particle_count,
            dt,
            inverse_dt: 1.0 / dt,
            gravity: params.gravity,
            kernel_radius: h,
            kernel_radius_squared: kernel.radius_squared(),
            inverse_kernel_radius: kernel.inverse_radius(),
            density_coefficient: kernel.density_coefficient(),
            gradient_coefficient: kernel.gradient_coefficient(),
            gradient_peak: kernel.gradient_peak(),
            coincident_squared: kernel.coincident_squared(),
            mass: c.mass,
            volume: c.volume,
            inverse_rest_density: c.inverse_rest_density,
            self_density: c.self_density,
            relaxation: c.relaxation,
            jacobi_relaxation: c.jacobi_relaxation,
            scorr_scale: c.scorr_scale,
            inverse_scorr_reference: c.inverse_scorr_reference,
            scorr_n: c.scorr_n,
            margin: c.margin,
            container_lo: lo.to_array(),
            container_hi: hi.to_array(),
            obstacle_count: world.obstacles.len() as u32,
            vorticity_scale: c.vorticity_scale,
            xsph_scale: c.xsph_scale,
            spacing: params.spacing,
            boundary_steps: c.boundary.steps(),
            wall_lo: world.container.min.to_array(),
            wall_hi: world.container.max.to_array(),
            coarse_cell: CoarseCorrection::cell_size(world, dims.map(|d| d as usize)).to_array(),
        }
    }

    /// Grid cells (the product of the dimensions).
    pub fn cell_count(&self) -> usize {
        self.grid_dims.iter().map(|&n| n as usize).product()
    }
}

/// A sphere (kind 0: `a` = centre) or a box (kind 1: `a` = min, `b` = max).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuObstacle {
    pub a: [f32; 3],
    pub radius: f32,
    pub b: [f32; 3],
    pub kind: u32,
}

// SAFETY: plain old data, laid out as `struct PbfObstacle`.
unsafe impl DeviceRepr for GpuObstacle {}

impl From<&Obstacle> for GpuObstacle {
    fn from(obstacle: &Obstacle) -> Self {
        match *obstacle {
            Obstacle::Sphere { center, radius } => Self {
                a: center.to_array(),
                radius,
                b: [0.0; 3],
                kind: 0,
            },
            Obstacle::Box(aabb) => Self {
                a: aabb.min.to_array(),
                radius: 0.0,
                b: aabb.max.to_array(),
                kind: 1,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sims::pbf::Aabb;

    /// The header's fields, in order, as the Rust struct lays them out (arrays spelled _x/_y/_z).
    const HEADER_FIELDS: &str = "grid_origin_x grid_origin_y grid_origin_z inverse_cell_size \
        grid_dims_x grid_dims_y grid_dims_z particle_count dt inverse_dt gravity_x gravity_y \
        gravity_z kernel_radius kernel_radius_squared inverse_kernel_radius density_coefficient \
        gradient_coefficient gradient_peak coincident_squared mass volume inverse_rest_density self_density relaxation jacobi_relaxation scorr_scale \
        inverse_scorr_reference scorr_n margin container_lo_x container_lo_y container_lo_z \
        container_hi_x container_hi_y container_hi_z obstacle_count vorticity_scale xsph_scale \
        spacing boundary_steps wall_lo_x wall_lo_y wall_lo_z wall_hi_x wall_hi_y wall_hi_z \
        coarse_cell_x coarse_cell_y coarse_cell_z";

    /// The fields of `struct PbfParams` in kernels/pbf_common.cuh, in order.
    fn header_fields(name: &str) -> Vec<String> {
        let header = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/kernels/pbf_common.cuh"
        ));
        let block = header
            .split(&format!("struct {name} {{"))
            .nth(1)
            .and_then(|rest| rest.split("};").next())
            .expect("struct in the header");
        block
            .lines()
            .map(str::trim)
            .filter(|line| !line.starts_with("//") && line.ends_with(';'))
            .flat_map(|line| {
                let names = line.trim_end_matches(';');
                let names = names.trim_start_matches("unsigned ");
                let (_, names) = names.split_once(' ').expect("type and names");
                names
                    .split(',')
                    .map(|n| n.trim().to_string())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn the_parameter_block_matches_the_kernel_header() {
        let expected: Vec<&str> = HEADER_FIELDS.split_whitespace().collect();
        assert_eq!(header_fields("PbfParams"), expected);
        assert_eq!(std::mem::size_of::<GpuParams>(), expected.len() * 4);
        let obstacle = header_fields("PbfObstacle");
        assert_eq!(
            obstacle,
            ["a_x", "a_y", "a_z", "radius", "b_x", "b_y", "b_z", "kind"]
        );
        assert_eq!(std::mem::size_of::<GpuObstacle>(), obstacle.len() * 4);
    }

    /// In the PTX, every by-value structure a kernel takes is the parameter block (first) or, for
    /// the multigrid kernels, a level (`CoarseLevel`), of exactly the Rust mirror's size.
    #[test]
    #[cfg_attr(
        not(fluidlab_nvcc),
        ignore = "needs nvcc's PTX: the build found no nvcc (scripts/setup.sh installs it)"
    )]
    fn the_prebuilt_ptx_takes_parameter_blocks_of_these_sizes() {
        let ptx = crate::cuda::ptx::module_source(crate::sims::pbf::cuda::pbf::MODULE)
            .and_then(|m| m.ptx)
            .expect("the PTX build.rs made");
        let params = std::mem::size_of::<GpuParams>();
        let level = std::mem::size_of::<super::super::coarse::CoarseLevel>();
        let foam = std::mem::size_of::<super::super::foam::GpuFoamParams>();
        let mut kernel = "";
        let mut checked = 0;
        for line in ptx.lines() {
            if let Some(rest) = line.split(".entry ").nth(1) {
                kernel = rest.trim_end_matches('(').trim();
            }
            if !line.contains(".param .align") {
                continue;
            }
            let size: usize = line
                .rsplit('[')
                .next()
                .and_then(|s| s.split(']').next())
                .and_then(|s| s.parse().ok())
                .expect("a byte-array parameter");
            let takes_levels = kernel.starts_with("mg_") || kernel == "pcg_operator";
            let first = line.contains("_param_0[");
            if takes_levels {
                assert_eq!(size, level, "{kernel}: {line}");
            } else if kernel.starts_with("foam_") {
                // PbfParams first where it is taken, FoamParams after it or first.
                let without_pbf = ["foam_compact", "foam_finish", "foam_count"].contains(&kernel);
                let foam_at = if without_pbf {
                    first
                } else {
                    line.contains("_param_1[")
                };
                assert!(
                    (first && !without_pbf && size == params) || (foam_at && size == foam),
                    "{kernel}: {line}"
                );
            } else {
                assert!(line.contains("_param_0["), "{kernel}: {line}");
                assert_eq!(size, params, "{kernel}: {line}");
            }
            checked += 1;
        }
        assert!(checked >= 20, "{checked} structure parameters");
    }

    #[test]
    fn the_grid_and_walls_match_the_cpu_grid() {
        let params = Params::with_spacing(0.02);
        let world = World {
            container: Aabb::new([0.0, 0.0, 0.0], [1.0, 0.5, 0.3]),
            obstacles: vec![],
        };
        let gpu = GpuParams::new(&params, &world, 10, params.dt / params.substeps as f32);
        let grid = UniformGrid::new(&world.container, params.kernel_radius);
        assert_eq!(gpu.grid_dims, grid.dims());
        let margin = params.particle_radius();
        let far = |v: f32| world.project(Vec3A::splat(v), margin).to_array();
        assert_eq!(gpu.container_lo, far(-10.0));
        assert_eq!(gpu.container_hi, far(10.0));
        // The kernels evaluate W and ∇W from these coefficients with the CPU's operations, so
        // they must reproduce `SphKernel` bit for bit.
        let kernel = params.kernel();
        for r in [0.0f32, 0.003, 0.011, 0.027, 0.0399] {
            let r2 = r * r;
            let q = r2.sqrt() * gpu.inverse_kernel_radius;
            let a = 1.0 - q;
            assert_eq!(
                gpu.density_coefficient * (a * a) * (a * a) * (1.0 + 4.0 * q),
                kernel.density(r2)
            );
            let offset = Vec3A::new(r, 0.0, 0.0);
            assert_eq!(
                offset * (gpu.gradient_coefficient * a * a * a),
                kernel.gradient(offset, r2)
            );
        }
    }
}
