//! Ink's state beyond the table: its fields as named grids (`simulate --format npy`) and its
//! ink and flow-map pictures (`simulate --pictures`, drawn by the viewer's own CPU picture).
//!
//! Every grid has row 0 at the bottom (y = 0) and x fastest, so `array[j, i]` is cell (i, j)
//! of the solver. Cell (i, j) has its centre at ((i + ½)·dx, (j + ½)·dx); the ink grid's cells
//! are `ink_scale` times smaller.

use super::fields::{Field, FlowView, Ink};
use super::picture::picture;
use super::scene::Background;
use crate::output::Grid;
use crate::sims::Picture;

/// The fields, in file order: the raw MAC faces `u` (ny, nx + 1) and `v` (ny + 1, nx), the
/// `velocity` at the cell centres (ny, nx, 2), `pressure`, `divergence`, `curl` and `solid`
/// at the cell centres (ny, nx), and the `ink` (ny·s, nx·s, 3).
pub(super) fn fields(flow: FlowView, ink: &Ink) -> Vec<Grid> {
    let (nx, ny) = (flow.nx, flow.ny);
    let mut velocity = Vec::with_capacity(nx * ny * 2);
    for j in 0..ny {
        for i in 0..nx {
            let (u, v) = flow.center_velocity(i, j);
            velocity.extend([u, v]);
        }
    }
    let scalar = |name, field: Field| Grid::new(name, field.nx, field.ny, 1, field.data);
    let channels = &ink.channels;
    let (ink_nx, ink_ny) = (channels[0].nx, channels[0].ny);
    let ink = (0..ink_nx * ink_ny)
        .flat_map(|k| channels.each_ref().map(|c| c.data[k]))
        .collect();
    let solid = flow.solid.iter().map(|&s| f32::from(u8::from(s))).collect();
    vec![
        scalar("u", flow.u.clone()),
        scalar("v", flow.v.clone()),
        Grid::new("velocity", nx, ny, 2, velocity),
        scalar("pressure", flow.p.clone()),
        scalar("divergence", divergence(flow)),
        scalar("curl", curl(flow)),
        Grid::new("ink", ink_nx, ink_ny, 3, ink),
        Grid::new("solid", nx, ny, 1, solid),
    ]
}

/// ∇·u of `flow` at the cell centres, 1/s (0 in solids): what the projection leaves.
pub(super) fn divergence(flow: FlowView) -> Field {
    let mut field = centre_field(flow);
    for j in 0..flow.ny {
        for i in 0..flow.nx {
            field.data[j * flow.nx + i] = flow.divergence(i, j);
        }
    }
    field
}

/// ω = ∂v/∂x − ∂u/∂y of `flow` at the cell centres, 1/s ([`FlowView::curl`], the solver's `curl`
/// stage, applied to this state rather than to the step's unprojected velocity).
pub(super) fn curl(flow: FlowView) -> Field {
    let mut field = centre_field(flow);
    flow.curl(&mut field);
    field
}

fn centre_field(flow: FlowView) -> Field {
    Field::new(flow.nx, flow.ny, [0.5, 0.5], flow.dx)
}

/// The pictures: `ink` (one pixel per ink cell, on the scene's background) and `flow` (the flow
/// map, one pixel per cell), the viewer's `ink` and `flow` views.
pub(super) fn pictures(flow: FlowView, ink: &Ink, background: Background) -> Vec<Picture> {
    ["ink", "flow"]
        .into_iter()
        .map(|view| {
            let (width, height, pixels) = picture(flow, ink, view, background);
            // The picture's rows run from the bottom; an image's from the top.
            let rows: Vec<u8> = pixels.chunks(width * 4).rev().flatten().copied().collect();
            let image = crate::gfx::capture::Image::from_raw(width as u32, height as u32, rows)
                .expect("a picture holds width × height RGBA pixels");
            Picture { name: view, image }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sims::ink::fields::Flow;
    use crate::sims::ink::Boundary;

    /// A flow of cells (nx, ny) = (6, 4) of 0.5 m with u = −Ω(y − y₀) + a·x, v = Ω(x − x₀) −
    /// a·y on its faces: a rotation plus a divergence-free strain.
    fn rotating(omega: f32, strain: f32) -> Flow {
        let mut flow = Flow::new(6, 4, 0.5, Boundary::default());
        for field in [&mut flow.u, &mut flow.v] {
            let is_u = field.offset[0] == 0.0;
            for j in 0..field.ny {
                for i in 0..field.nx {
                    let (x, y) = field.position(i, j);
                    let k = field.at(i, j);
                    field.data[k] = if is_u {
                        -omega * (y - 1.0) + strain * x
                    } else {
                        omega * (x - 1.5) - strain * y
                    };
                }
            }
        }
        flow
    }

    /// A linear flow's curl is exact everywhere, walls included (one-sided differences of a
    /// linear field are exact): 2Ω; its divergence is 0.
    #[test]
    fn the_curl_of_a_solid_rotation_is_twice_its_rate_and_it_has_no_divergence() {
        let flow = rotating(1.5, 0.75);
        let curl = curl(flow.view());
        assert_eq!((curl.nx, curl.ny), (6, 4));
        for value in &curl.data {
            assert!((value - 3.0).abs() < 1e-5, "{value}");
        }
        for value in divergence(flow.view()).data {
            assert!(value.abs() < 1e-5, "{value}");
        }
    }

    /// Every grid has the shape its name promises, rows from the bottom, x fastest: u, v and
    /// pressure are the solver's arrays as they are, the centre velocity the mean of the faces,
    /// the ink interleaved per cell.
    #[test]
    fn the_fields_are_the_flows_arrays_rows_from_the_bottom() {
        let mut flow = rotating(1.0, 0.5);
        let k = flow.p.at(4, 1);
        let mut solid = flow.solid().to_vec();
        solid[k] = true;
        flow.set_solid(solid);
        for (k, p) in flow.p.data.iter_mut().enumerate() {
            *p = k as f32;
        }
        let mut ink = Ink::new(12, 8, 0.25);
        let k = ink.channels[1].at(3, 5);
        ink.channels[1].data[k] = 0.5;
        let grids = fields(flow.view(), &ink);
        let names: Vec<&str> = grids.iter().map(|g| g.name).collect();
        assert_eq!(
            names,
            [
                "u",
                "v",
                "velocity",
                "pressure",
                "divergence",
                "curl",
                "ink",
                "solid"
            ]
        );
        let shapes: Vec<Vec<usize>> = grids.iter().map(Grid::shape).collect();
        assert_eq!(
            shapes,
            [
                vec![4, 7],
                vec![5, 6],
                vec![4, 6, 2],
                vec![4, 6],
                vec![4, 6],
                vec![4, 6],
                vec![8, 12, 3],
                vec![4, 6]
            ]
        );
        assert_eq!(grids[0].data, flow.u.data);
        assert_eq!(grids[1].data, flow.v.data);
        assert_eq!(grids[3].data, flow.p.data);
        // Cell (i, j) = (2, 3): row 3 (the top row), column 2.
        let k = 3 * 6 + 2;
        let (u, v) = (&flow.u, &flow.v);
        assert_eq!(
            grids[2].data[2 * k],
            0.5 * (u.get(2, 3) + u.get(3, 3)),
            "u at the centre"
        );
        assert_eq!(grids[2].data[2 * k + 1], 0.5 * (v.get(2, 3) + v.get(2, 4)));
        assert_eq!(grids[7].data[6 + 4], 1.0);
        assert_eq!(grids[7].data.iter().sum::<f32>(), 1.0);
        assert_eq!(grids[4].data[6 + 4], 0.0, "no divergence in a solid");
        let ink_at = (5 * 12 + 3) * 3;
        assert_eq!(&grids[6].data[ink_at..ink_at + 3], [0.0, 0.5, 0.0]);
        assert_eq!(grids[6].data.iter().sum::<f32>(), 0.5);
    }

    /// The pictures are the viewer's ink and flow views turned upright: ink painted near the
    /// bottom shows in the bottom rows of the image.
    #[test]
    fn the_pictures_are_upright() {
        let flow = Flow::new(4, 4, 0.25, Boundary::default());
        let mut ink = Ink::new(8, 8, 0.125);
        for channel in &mut ink.channels {
            let k = channel.at(1, 0);
            channel.data[k] = 1.0;
        }
        let pictures = pictures(flow.view(), &ink, Background::Paper);
        assert_eq!(pictures[0].name, "ink");
        assert_eq!(pictures[0].image.dimensions(), (8, 8));
        assert_eq!(pictures[0].image.get_pixel(1, 7).0, [0, 0, 0, 255]);
        assert_eq!(pictures[0].image.get_pixel(1, 0).0, [255, 255, 255, 255]);
        assert_eq!(pictures[1].name, "flow");
        assert_eq!(pictures[1].image.dimensions(), (4, 4));
        // At rest: red and green at ½, blue full.
        assert_eq!(pictures[1].image.get_pixel(2, 2).0, [128, 128, 255, 255]);
    }
}
