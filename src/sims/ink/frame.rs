//! An ink state read back: the fields as a table (one row per velocity cell), statistics,
//! summary lines, `.npy` fields and pictures (`simulate`'s outputs).

use super::fields::{FlowCopy, Ink};
use super::picture::kinetic_energy_and_max_speed;
use super::scene::Background;
use super::SolveReport;
use crate::output::{Column, Grid, Table};
use crate::sims::{stats_row, Frame, Picture};
use serde_json::value::RawValue;

/// A copy of the solver's fields, and the background its pictures are drawn on. The flow is
/// its values and cells ([`FlowCopy`]): no masks, stencil or fixed velocities.
pub struct InkFrame {
    pub(super) flow: FlowCopy,
    pub(super) ink: Ink,
    pub(super) report: SolveReport,
    pub(super) background: Background,
    /// The solver's step, s: the frame's dt over its substeps (the CFL number's dt).
    pub(super) dt_substep: f32,
}

impl Frame for InkFrame {
    /// One row per velocity cell: `id,x,y,u,v,pressure,divergence,ink_r,ink_g,ink_b` (ink
    /// sampled at the cell centre when the ink grid is finer).
    fn table(&self) -> Table {
        let flow = self.flow.view();
        let cells = flow.nx * flow.ny;
        let mut columns: [Vec<f32>; 9] = Default::default();
        for j in 0..flow.ny {
            for i in 0..flow.nx {
                let (x, y) = flow.p.position(i, j);
                let (u, v) = flow.center_velocity(i, j);
                let ink = self.ink.channels.each_ref().map(|c| c.sample(x, y));
                let row = [
                    x,
                    y,
                    u,
                    v,
                    flow.p.get(i, j),
                    flow.divergence(i, j),
                    ink[0],
                    ink[1],
                    ink[2],
                ];
                for (column, value) in columns.iter_mut().zip(row) {
                    column.push(value);
                }
            }
        }
        let mut table = Table::default();
        table.push("id", Column::U32((0..cells as u32).collect()));
        let names = [
            "x",
            "y",
            "u",
            "v",
            "pressure",
            "divergence",
            "ink_r",
            "ink_g",
            "ink_b",
        ];
        for (name, column) in names.into_iter().zip(columns) {
            table.push(name, Column::F32(column));
        }
        table
    }

    fn stats(&self, step: u64, time: f64, step_ms: f64) -> Box<RawValue> {
        let (kinetic_energy, max_speed) = kinetic_energy_and_max_speed(self.flow.view());
        #[derive(serde::Serialize)]
        struct Row {
            step: u64,
            time: f64,
            cells: usize,
            divergence_before: f64,
            divergence_after: f64,
            residual: f64,
            iterations: u32,
            ink: f64,
            kinetic_energy: f64,
            max_speed: f64,
            cfl: f64,
            step_ms: f64,
        }
        stats_row(&Row {
            step,
            time,
            cells: self.flow.view().nx * self.flow.view().ny,
            divergence_before: self.report.divergence_before,
            divergence_after: self.report.divergence_after,
            residual: self.report.residual,
            iterations: self.report.iterations,
            ink: self.ink.total(),
            kinetic_energy,
            max_speed,
            cfl: cfl(max_speed, self.dt_substep, self.flow.view().dx),
            step_ms,
        })
    }

    fn summary(&self) -> Vec<String> {
        let flow = self.flow.view();
        let (energy, fastest) = kinetic_energy_and_max_speed(flow);
        let cfl = cfl(fastest, self.dt_substep, flow.dx);
        summary_lines(&self.report, self.ink.total(), energy, fastest, cfl)
    }

    /// `u`, `v`, `velocity`, `pressure`, `divergence`, `curl`, `ink`, `solid` (`export.rs`).
    fn fields(&self) -> Vec<Grid> {
        super::export::fields(self.flow.view(), &self.ink)
    }

    /// `ink` and `flow`, the viewer's views of those names (`export.rs`).
    fn pictures(&self) -> Vec<Picture> {
        super::export::pictures(self.flow.view(), &self.ink, self.background)
    }
}

/// The CFL number: how many velocity cells (`dx`, m) the fastest cell centre (`max_speed`,
/// m/s) crosses in one solver step (`dt_substep`, s: the frame's dt over its substeps). The
/// advection traces back that far; above about 1 a back-trace skips cells.
pub(super) fn cfl(max_speed: f64, dt_substep: f32, dx: f32) -> f64 {
    max_speed * f64::from(dt_substep) / f64::from(dx)
}

/// The summary's lines: the projection's report, then the amount of ink (m²), the kinetic
/// energy, the largest speed and the CFL number it gives ([`cfl`]).
pub(super) fn summary_lines(
    report: &SolveReport,
    ink: f64,
    energy: f64,
    fastest: f64,
    cfl: f64,
) -> Vec<String> {
    vec![
        format!(
            "divergence rms {:.3e} → {:.3e} 1/s after {} iterations (residual {:.3e})",
            report.divergence_before, report.divergence_after, report.iterations, report.residual
        ),
        format!(
            "ink {ink:.5} m², kinetic energy {energy:.4e} m⁴/s², fastest {fastest:.3} m/s, \
             CFL {cfl:.3} (per substep)"
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sims::ink::fields::Flow;
    use crate::sims::ink::Boundary;

    /// A frame owns the flow's values and solid cells ([`FlowCopy`]: no masks, stencil or fixed
    /// velocities, ≈ 50 MB at 2048² copied per exported frame before, 12–51 ms on CUDA), and
    /// reads the same values, cells and sides as the whole flow, so every output equals the
    /// one drawn from the whole flow: 32² with a disc moving through dye, read after 20 frames
    /// (disc moving) and 40 (stopped).
    #[test]
    fn a_frame_copies_the_values_and_cells_not_the_masks() {
        use crate::scene::Source;
        use crate::sims::{OpenOptions, Sim};
        let text = "kind = \"ink\"\ndescription = \"t\"\n[grid]\ncells = [32, 32]\n\
                    [[obstacle]]\ncenter = [0.25, 0.5]\nradius = 0.12\nvelocity = [0.9, 0.0]\n\
                    start = 0.1\nduration = 0.4\n\
                    [[stroke]]\nduration = 0.2\npath = [[0.6, 0.2], [0.6, 0.8]]\nradius = 0.05\n";
        let source = Source::parse(text, "test", "test.toml").unwrap();
        let mut sim = super::super::InkSim::open(&source, &OpenOptions::default()).unwrap();
        for frames in [20, 20] {
            for _ in 0..frames {
                sim.step().unwrap();
            }
            let (flow, ink) = sim.solver.state().unwrap();
            let frame = InkFrame {
                flow,
                ink,
                report: sim.solver.report(),
                background: Background::Paper,
                dt_substep: 0.01,
            };
            let whole = sim.solver.with_state(|whole, ink, _, _| {
                assert!(whole.solid_cells() > 20, "{}", whole.solid_cells());
                assert!(whole.u.data.iter().any(|&u| u != 0.0));
                assert_eq!(frame.flow.view(), whole.view());
                assert_eq!(&frame.ink, ink);
                let view = whole.view();
                let energy = kinetic_energy_and_max_speed(view);
                (
                    super::super::export::fields(view, ink),
                    super::super::export::pictures(view, ink, Background::Paper),
                    energy,
                )
            });
            let (fields, pictures, (energy, fastest)) = whole.unwrap();
            assert_eq!(frame.fields(), fields);
            assert_eq!(frame.pictures(), pictures);
            let stats: serde_json::Value =
                serde_json::from_str(frame.stats(1, 0.0, 0.0).get()).unwrap();
            // (Equal but for the last bit JSON's text may take off.)
            for (key, want) in [("kinetic_energy", energy), ("max_speed", fastest)] {
                let said = stats[key].as_f64().unwrap();
                assert!((said - want).abs() <= 1e-15 * want, "{key}: {said}, {want}");
            }
            assert!(energy > 0.0 && fastest > 0.0);
        }
    }

    /// A field whose fastest cell centre moves at 5 m/s (one cell's faces at 4 and 3 m/s, the
    /// rest at 1 m/s): the stats line's CFL number is 5 m/s × the substep / dx, and the
    /// summary says it.
    #[test]
    fn the_cfl_number_is_the_fastest_speed_times_the_substep_over_the_cell() {
        let dx = 0.05;
        let mut flow = Flow::new(16, 8, dx, Boundary::default());
        flow.u.data.fill(1.0);
        let (i, j) = (5, 3);
        let (left, right) = (flow.u.at(i, j), flow.u.at(i + 1, j));
        (flow.u.data[left], flow.u.data[right]) = (4.0, 4.0);
        let (bottom, top) = (flow.v.at(i, j), flow.v.at(i, j + 1));
        (flow.v.data[bottom], flow.v.data[top]) = (3.0, 3.0);
        let frame = InkFrame {
            flow: FlowCopy::of(&flow),
            ink: Ink::new(16, 8, dx),
            report: SolveReport::default(),
            background: Background::Paper,
            dt_substep: 0.01,
        };
        let stats: serde_json::Value =
            serde_json::from_str(frame.stats(1, 0.01, 0.0).get()).expect("a JSON line");
        let expected = 5.0 * 0.01 / 0.05;
        let said = stats["cfl"].as_f64().expect("a cfl field");
        assert!(
            (said - expected).abs() < 1e-5,
            "cfl {said}, {expected} expected"
        );
        assert!((stats["max_speed"].as_f64().unwrap() - 5.0).abs() < 1e-6);
        let summary = frame.summary().join("\n");
        assert!(summary.contains("CFL 1.000 (per substep)"), "{summary}");
    }
}
