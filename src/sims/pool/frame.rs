//! A pool state read back: its table (one row per node), statistics (energy, volume, highest
//! point, the last drop's wave front), fields for `--format npy` and a top-down picture.

use super::cpu::energy;
use super::params::PoolParams;
use super::surface::{Surface, FIXED};
use crate::gfx::capture::Image;
use crate::output::{Column, Grid, Table};
use crate::sims::{stats_row, Frame, Picture};
use serde_json::value::RawValue;

/// A frame's statistics (`--stats`): reduced on the GPU on CUDA, from the surface on the CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PoolStats {
    /// ½Σv² per unit node mass, m²/s².
    pub kinetic: f64,
    /// The pairs' or springs' energy per unit node mass, m²/s² ([`energy`]).
    pub potential: f64,
    /// h²·Σu, m³.
    pub volume: f64,
    /// The largest |height|, m.
    pub max_height: f64,
    /// The wave front's radius around the latest drop, m ([`front_radius`]).
    pub front_radius: f64,
}

impl PoolStats {
    /// The summary's lines (`simulate`'s closing lines, the viewer's statistics panel).
    pub fn lines(&self) -> Vec<String> {
        let s = self;
        vec![
            format!(
                "energy {:.4e} m²/s² per node mass (kinetic {:.3e}, potential {:.3e})",
                s.kinetic + s.potential,
                s.kinetic,
                s.potential
            ),
            format!(
                "volume {:+.4e} m³, highest |height| {:.4e} m, front radius {:.3} m",
                s.volume, s.max_height, s.front_radius
            ),
        ]
    }

    /// The statistics of `surface` run with `params`, `last_drop` where the latest drop fell.
    pub fn of(surface: &Surface, params: &PoolParams, last_drop: Option<[f32; 2]>) -> PoolStats {
        let (kinetic, potential) = energy(surface, params);
        PoolStats {
            kinetic,
            potential,
            volume: surface.volume(),
            max_height: f64::from(surface.max_height()),
            front_radius: front_radius(surface, last_drop),
        }
    }
}

/// The wave front's radius around `last_drop`, m: the farthest node from it whose |height| is
/// at least a tenth of the largest (0 before any drop, or on a flat surface).
pub fn front_radius(s: &Surface, last_drop: Option<[f32; 2]>) -> f64 {
    let Some([x, z]) = last_drop else {
        return 0.0;
    };
    let threshold = 0.1 * s.max_height();
    if threshold == 0.0 {
        return 0.0;
    }
    let mut radius = 0.0f32;
    for j in 0..s.n {
        for i in 0..s.n {
            if s.height[j * s.n + i].abs() >= threshold {
                let (dx, dz) = (i as f32 * s.h - x, j as f32 * s.h - z);
                radius = radius.max((dx * dx + dz * dz).sqrt());
            }
        }
    }
    f64::from(radius)
}

/// A copy of the surface, the parameters it ran with and its statistics.
pub struct PoolFrame {
    surface: Surface,
    params: PoolParams,
    stats: PoolStats,
}

impl PoolFrame {
    /// A frame of `surface` with its `stats`.
    pub fn new(surface: Surface, params: &PoolParams, stats: PoolStats) -> PoolFrame {
        PoolFrame {
            surface,
            params: *params,
            stats,
        }
    }
}

impl Frame for PoolFrame {
    /// One row per node: `id,x,y,z,velocity_y,fixed` (positions, m; row j has z = j·h).
    fn table(&self) -> Table {
        let s = &self.surface;
        let count = s.n * s.n;
        let mut columns: [Vec<f32>; 4] = Default::default();
        for j in 0..s.n {
            for i in 0..s.n {
                let p = s.position(i, j);
                for (column, value) in columns.iter_mut().zip([p[0], p[1], p[2]]) {
                    column.push(value);
                }
                columns[3].push(s.velocity[j * s.n + i]);
            }
        }
        let mut table = Table::default();
        table.push("id", Column::U32((0..count as u32).collect()));
        for (name, column) in ["x", "y", "z", "velocity_y"].into_iter().zip(columns) {
            table.push(name, Column::F32(column));
        }
        table.push(
            "fixed",
            Column::U32(s.flags.iter().map(|f| u32::from(f & FIXED != 0)).collect()),
        );
        table
    }

    fn stats(&self, step: u64, time: f64, step_ms: f64) -> Box<RawValue> {
        let s = &self.stats;
        #[derive(serde::Serialize)]
        struct Row {
            step: u64,
            time: f64,
            nodes: usize,
            energy: f64,
            kinetic: f64,
            potential: f64,
            volume: f64,
            max_height: f64,
            front_radius: f64,
            step_ms: f64,
        }
        stats_row(&Row {
            step,
            time,
            nodes: self.surface.n * self.surface.n,
            energy: s.kinetic + s.potential,
            kinetic: s.kinetic,
            potential: s.potential,
            volume: s.volume,
            max_height: s.max_height,
            front_radius: s.front_radius,
            step_ms,
        })
    }

    fn summary(&self) -> Vec<String> {
        self.stats.lines()
    }

    /// `height`, `velocity` (vertical), `offset` (x, z; springs) and `fixed`, each (N, N).
    fn fields(&self) -> Vec<Grid> {
        let s = &self.surface;
        let n = s.n;
        let offset = s.offset.iter().flat_map(|o| *o).collect();
        let fixed = s
            .flags
            .iter()
            .map(|f| f32::from(u8::from(f & FIXED != 0)))
            .collect();
        vec![
            Grid::new("height", n, n, 1, s.height.clone()),
            Grid::new("velocity", n, n, 1, s.velocity.clone()),
            Grid::new("offset", n, n, 2, offset),
            Grid::new("fixed", n, n, 1, fixed),
        ]
    }

    /// `height`: the surface seen from above, one pixel per node, shaded by its slope under
    /// the default light, land in sand.
    fn pictures(&self) -> Vec<Picture> {
        vec![Picture {
            name: "height",
            image: height_picture(&self.surface, self.params.size),
        }]
    }
}

/// The surface from above (rows top to bottom = z from high to low): deep blue to light blue
/// by height (±2 % of the pool's side saturates), lit by a light from (2, 2, −1).
pub fn height_picture(s: &Surface, size: f32) -> Image {
    let n = s.n;
    let scale = 0.02 * size;
    let light = glam::Vec3::new(2.0, 2.0, -1.0).normalize();
    let mut pixels = Vec::with_capacity(n * n * 4);
    for row in (0..n).rev() {
        for i in 0..n {
            let k = row * n + i;
            if s.flags[k] & FIXED != 0 {
                pixels.extend([194, 178, 128, 255]);
                continue;
            }
            let at = |a: usize, b: usize| s.height[b * n + a];
            let dx = at((i + 1).min(n - 1), row) - at(i.saturating_sub(1), row);
            let dz = at(i, (row + 1).min(n - 1)) - at(i, row.saturating_sub(1));
            let normal = glam::Vec3::new(-dx, 2.0 * s.h, -dz).normalize();
            let lit = 0.55 + 0.45 * normal.dot(light).max(0.0) / light.y;
            let t = (0.5 + 0.5 * s.height[k] / scale).clamp(0.0, 1.0);
            let colour = [0.05 + 0.35 * t, 0.25 + 0.5 * t, 0.45 + 0.5 * t];
            for c in colour {
                pixels.push((255.0 * (c * lit).clamp(0.0, 1.0)) as u8);
            }
            pixels.push(255);
        }
    }
    Image::from_raw(n as u32, n as u32, pixels).expect("N² RGBA pixels")
}
