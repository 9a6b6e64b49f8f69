//! The bytes each stage of a frame moves through memory, counted from the kernels' reads and
//! writes in `kernels/ink.cu` (each array element read once and written once: the traffic a
//! perfect cache would leave), so `bench` can print an effective bandwidth per stage and the
//! H200 run gives its fraction of ~4 TB/s directly (docs/ink-cuda.md "Bandwidth").

use super::params::{Advection, InkParams, PressureSolver};
use super::InkStage;

/// Bytes per velocity cell and per ink cell one launch sequence moves (4-byte floats, 1-byte
/// masks; the face arrays counted as one element per cell).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Traffic {
    /// Per velocity cell.
    pub per_cell: f64,
    /// Per ink cell.
    pub per_ink_cell: f64,
}

impl Traffic {
    const fn new(per_cell: f64, per_ink_cell: f64) -> Traffic {
        Traffic {
            per_cell,
            per_ink_cell,
        }
    }
}

/// `advect_velocity`: u, v, u_open, v_open in, u, v out (4 + 4 + 1 + 1 + 4 + 4); `advect_ink`:
/// u, v in per velocity cell, three ink channels in and out per ink cell.
pub const ADVECT_SEMI_LAGRANGIAN: Traffic = Traffic::new(18.0 + 8.0, 24.0);
/// Both passes again plus the corrections: `advect_velocity_correct` reads u, v, û, v̂ and the
/// masks and writes u, v (26); `advect_ink_correct` reads u, v, and the ink and its forward
/// values and writes the ink (8 per cell, 36 per ink cell).
pub const ADVECT_MACCORMACK: Traffic = Traffic::new(18.0 + 8.0 + 26.0 + 8.0, 24.0 + 36.0);
/// `splat_buoyancy` (only with buoyancy): the ink in, v_open in, v in and out. The stamps
/// touch only the cells within three radii and are not counted.
pub const SPLAT_BUOYANCY: Traffic = Traffic::new(1.0 + 8.0, 12.0);
/// `curl`: u, v in, ω out.
pub const CURL: Traffic = Traffic::new(12.0, 0.0);
/// `close_walls` over every row (with obstacles, in `curl` and `subtract_gradient`): the masks
/// u_open, v_open and solid in; the closed faces' fixed values and neighbours and the solid
/// cells' pressure touch only the cells at the obstacles and are not counted.
pub const CLOSE_WALLS: Traffic = Traffic::new(3.0, 0.0);
/// `vorticity`: ω and the masks in, u, v in and out.
pub const VORTICITY: Traffic = Traffic::new(4.0 + 2.0 + 16.0, 0.0);
/// `divergence`: u, v and the solid mask in, the divergence out.
pub const DIVERGENCE: Traffic = Traffic::new(8.0 + 1.0 + 4.0, 0.0);
/// One `pressure` (Jacobi) sweep: the stencil byte, the divergence and p in, p out.
pub const JACOBI_SWEEP: Traffic = Traffic::new(1.0 + 4.0 + 4.0 + 4.0, 0.0);
/// `pressure_residual`, once a frame: the stencil, the divergence and p in.
pub const RESIDUAL: Traffic = Traffic::new(9.0, 0.0);
/// `subtract_gradient`: p and the masks in, u, v in and out.
pub const SUBTRACT_GRADIENT: Traffic = Traffic::new(4.0 + 2.0 + 16.0, 0.0);

/// Bytes each stage moves in one frame of `params` ([`InkStage::ALL`] order): `substeps`
/// times a step's launches, plus the once-a-frame reductions (the residual in `pressure`, the
/// divergence after the projection in `subtract_gradient`). `None` for a stage not modelled:
/// the multigrid's levels and the stamps. `obstacles`: whether any cell is solid (`curl` and
/// `subtract_gradient` then launch [`CLOSE_WALLS`] too).
pub fn stage_bytes(params: &InkParams, obstacles: bool) -> [Option<f64>; InkStage::ALL.len()] {
    let cells = (params.cells_x * params.cells_y) as f64;
    let ink_cells = cells * (params.ink_scale * params.ink_scale) as f64;
    let bytes = |t: Traffic| t.per_cell * cells + t.per_ink_cell * ink_cells;
    let substeps = f64::from(params.substeps);
    let per_frame = |t: Traffic| substeps * bytes(t);
    let confinement = params.vorticity > 0.0;
    let walls = if obstacles {
        CLOSE_WALLS
    } else {
        Traffic::new(0.0, 0.0)
    };
    InkStage::ALL.map(|stage| match stage {
        InkStage::Advect => Some(per_frame(match params.advection {
            Advection::SemiLagrangian => ADVECT_SEMI_LAGRANGIAN,
            Advection::Maccormack => ADVECT_MACCORMACK,
        })),
        InkStage::Splat => (params.buoyancy != 0.0).then(|| per_frame(SPLAT_BUOYANCY)),
        InkStage::Curl => confinement.then(|| per_frame(CURL) + per_frame(walls)),
        InkStage::Vorticity => confinement.then(|| per_frame(VORTICITY)),
        InkStage::Divergence => Some(per_frame(DIVERGENCE)),
        InkStage::Pressure => match params.pressure_solver {
            PressureSolver::Jacobi => Some(
                substeps * f64::from(params.iterations) * bytes(JACOBI_SWEEP) + bytes(RESIDUAL),
            ),
            PressureSolver::Multigrid => None,
        },
        InkStage::SubtractGradient => {
            Some(per_frame(SUBTRACT_GRADIENT) + per_frame(walls) + bytes(DIVERGENCE))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The original's frame, 2048² with 20 Jacobi sweeps, semi-Lagrangian, vorticity on, one
    /// step: by hand, per cell 26 + 24 (advect), 12, 22, 13, 20 × 13 + 9 (pressure), 22 + 13:
    /// 401 bytes a cell, 1.68 GB a frame — 0.42 ms at 4 TB/s against the 1 ms target.
    #[test]
    fn the_originals_frame_moves_401_bytes_a_cell() {
        let params = InkParams {
            cells_x: 2048,
            cells_y: 2048,
            vorticity: 6.0,
            advection: Advection::SemiLagrangian,
            ..InkParams::default()
        };
        let bytes = stage_bytes(&params, false);
        let n = 2048.0 * 2048.0;
        let expected = [
            Some(50.0 * n),
            None,
            Some(12.0 * n),
            Some(22.0 * n),
            Some(13.0 * n),
            Some(269.0 * n),
            Some(35.0 * n),
        ];
        assert_eq!(bytes, expected);
        let total: f64 = bytes.iter().flatten().sum();
        assert_eq!(total, 401.0 * n);
        assert!((total / 4e12 * 1e3 - 0.420).abs() < 0.001, "{total}");
    }

    /// Substeps multiply a step's launches, not the once-a-frame reductions; MacCormack's four
    /// passes over a finer ink grid, the buoyancy, no confinement, the multigrid and the
    /// obstacles' `close_walls` are counted as their kernels say.
    #[test]
    fn substeps_ink_scale_and_options_change_the_counts() {
        let params = InkParams {
            cells_x: 100,
            cells_y: 50,
            ink_scale: 2,
            substeps: 3,
            iterations: 4,
            buoyancy: 1.0,
            vorticity: 0.0,
            advection: Advection::Maccormack,
            pressure_solver: PressureSolver::Jacobi,
            ..InkParams::default()
        };
        let n = 5000.0;
        let bytes = stage_bytes(&params, false);
        assert_eq!(bytes[0], Some(3.0 * (60.0 * n + 60.0 * 4.0 * n)));
        assert_eq!(bytes[1], Some(3.0 * (9.0 * n + 12.0 * 4.0 * n)));
        assert_eq!((bytes[2], bytes[3]), (None, None));
        assert_eq!(bytes[5], Some(3.0 * 4.0 * 13.0 * n + 9.0 * n));
        assert_eq!(bytes[6], Some(3.0 * 22.0 * n + 13.0 * n));
        let multigrid = InkParams {
            pressure_solver: PressureSolver::Multigrid,
            ..params
        };
        assert_eq!(stage_bytes(&multigrid, false)[5], None);
        // Obstacles: `close_walls` over every row in `curl` and `subtract_gradient`.
        let confined = InkParams {
            vorticity: 1.0,
            ..params
        };
        let (open, walled) = (stage_bytes(&confined, false), stage_bytes(&confined, true));
        assert_eq!(walled[2], Some(3.0 * 12.0 * n + 3.0 * 3.0 * n));
        assert_eq!(walled[2].unwrap() - open[2].unwrap(), 3.0 * 3.0 * n);
        assert_eq!(walled[6].unwrap() - open[6].unwrap(), 3.0 * 3.0 * n);
        assert_eq!(walled[0], open[0]);
    }
}
