//! Ink's picture on the CPU: a field turned into RGBA8 — the ink on paper or dark, the flow map,
//! signed scalar fields (pressure, divergence, curl), the side-by-side layout — with obstacles
//! grey. The viewer's fallback when no CUDA–GL interop draws it, and `simulate --pictures`'.
//! The CUDA `picture` kernel (`kernels/ink.cu`) draws the same bytes.

use super::fields::{Field, FlowView, Ink};
use super::scene::Background;

/// ½ Σ |u|² × cell area at the fluid cells' centres, and the largest speed there.
pub(super) fn kinetic_energy_and_max_speed(flow: FlowView) -> (f64, f64) {
    let mut energy = 0.0;
    let mut fastest = 0.0f64;
    for j in 0..flow.ny {
        for i in 0..flow.nx {
            // The fluid's: a solid cell's centre sits between ghost faces (mirror images).
            if flow.solid[j * flow.nx + i] {
                continue;
            }
            let (u, v) = flow.center_velocity(i, j);
            let speed2 = f64::from(u * u + v * v);
            energy += 0.5 * speed2;
            fastest = fastest.max(speed2.sqrt());
        }
    }
    let area = f64::from(flow.dx * flow.dx);
    (energy * area, fastest)
}

/// The picture of `view` on `background`: (width, height, RGBA8 rows from the bottom). It
/// reads the solver's fields in place: the viewer draws every frame.
pub(super) fn picture(
    flow: FlowView,
    ink: &Ink,
    view: &str,
    background: Background,
) -> (usize, usize, Vec<u8>) {
    if view == "side-by-side" {
        let (fw, fh, flow_map) = picture(flow, ink, "flow", background);
        let (iw, ih, painting) = picture(flow, ink, "ink", background);
        // The flow map at the ink's resolution (nearest), left; the ink right.
        let mut pixels = vec![0u8; 2 * iw * ih * 4];
        for y in 0..ih {
            for x in 0..iw {
                let (sx, sy) = (x * fw / iw, y * fh / ih);
                let from = (sy * fw + sx) * 4;
                let to = (y * 2 * iw + x) * 4;
                pixels[to..to + 4].copy_from_slice(&flow_map[from..from + 4]);
                let from = (y * iw + x) * 4;
                let to = (y * 2 * iw + iw + x) * 4;
                pixels[to..to + 4].copy_from_slice(&painting[from..from + 4]);
            }
        }
        return (2 * iw, ih, pixels);
    }
    let to_byte = |v: f32| (v.clamp(0.0, 1.0) * 255.0 + 0.5) as u8;
    if view == "ink" {
        let c = &ink.channels;
        let (w, h) = (c[0].nx, c[0].ny);
        let mut pixels = Vec::with_capacity(w * h * 4);
        for k in 0..w * h {
            let rgb = [c[0].data[k], c[1].data[k], c[2].data[k]];
            let colour = match background {
                Background::Paper => rgb.map(|v| 1.0 - v.clamp(0.0, 1.0)),
                Background::Dark => rgb,
            };
            pixels.extend(colour.map(to_byte));
            pixels.push(255);
        }
        shade_solids(flow, w, h, &mut pixels);
        return (w, h, pixels);
    }
    let (w, h) = (flow.nx, flow.ny);
    let (_, fastest) = kinetic_energy_and_max_speed(flow);
    // Divergence and curl of the state shown (after the projection).
    let derived;
    let scalar: Option<&Field> = match view {
        "pressure" => Some(flow.p),
        "divergence" | "curl" => {
            derived = if view == "curl" {
                super::export::curl(flow)
            } else {
                super::export::divergence(flow)
            };
            Some(&derived)
        }
        _ => None,
    };
    let mut pixels = Vec::with_capacity(w * h * 4);
    match scalar {
        // Signed fields: blue below zero, red above, white at zero, scaled to the largest
        // magnitude.
        Some(field) => {
            let largest = field.data.iter().fold(1e-20f32, |m, v| m.max(v.abs()));
            for &value in &field.data {
                let s = value / largest;
                let rgb = if s >= 0.0 {
                    [1.0, 1.0 - s, 1.0 - s]
                } else {
                    [1.0 + s, 1.0 + s, 1.0]
                };
                pixels.extend(rgb.map(to_byte));
                pixels.push(255);
            }
        }
        // The flow map: velocity in red/green around ½, speed darkening blue (the
        // original's encoding, scaled to the fastest cell instead of a fixed 100).
        None => {
            let scale = 0.5 / (fastest as f32).max(1e-6);
            for j in 0..h {
                for i in 0..w {
                    let (u, v) = flow.center_velocity(i, j);
                    let speed = (u * u + v * v).sqrt();
                    let rgb = [0.5 + u * scale, 0.5 + v * scale, 1.0 - 2.0 * speed * scale];
                    pixels.extend(rgb.map(to_byte));
                    pixels.push(255);
                }
            }
        }
    }
    shade_solids(flow, w, h, &mut pixels);
    (w, h, pixels)
}

/// Paints the pixels of a `w × h` picture of the domain that fall in solid cells grey (none
/// without obstacles: the flow's count of solid cells, not a scan of its mask).
fn shade_solids(flow: FlowView, w: usize, h: usize, pixels: &mut [u8]) {
    if !flow.has_obstacles() {
        return;
    }
    let solid = flow.solid;
    for y in 0..h {
        let j = y * flow.ny / h;
        for x in 0..w {
            if solid[j * flow.nx + x * flow.nx / w] {
                pixels[(y * w + x) * 4..][..3].copy_from_slice(&[115; 3]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sims::ink::boundary::Boundary;
    use crate::sims::ink::fields::Flow;

    /// The grey pixels of `flow`'s ink picture (2 ink cells a flow cell).
    fn grey(flow: &Flow) -> usize {
        let ink = Ink::new(2 * flow.nx, 2 * flow.ny, flow.dx / 2.0);
        let (_, _, pixels) = picture(flow.view(), &ink, "ink", Background::Dark);
        pixels
            .chunks_exact(4)
            .filter(|p| p[..3] == [115; 3])
            .count()
    }

    /// Cells painted solid are drawn grey, 4 pixels each; erased again, none are (the count
    /// the picture asks follows the rows set again: `Flow::set_solid_rows`).
    #[test]
    fn solid_cells_are_grey_until_erased() {
        let (nx, ny) = (24, 16);
        let mut flow = Flow::new(nx, ny, 0.1, Boundary::default());
        assert_eq!(grey(&flow), 0);
        let block = |k: usize| (5..9).contains(&(k % nx)) && (3..6).contains(&(k / nx));
        flow.set_solid((0..nx * ny).map(block).collect());
        assert_eq!(flow.solid_cells(), 12);
        assert_eq!(grey(&flow), 4 * 12);
        flow.set_solid_rows(3..6, &vec![false; 3 * nx]);
        assert!(!flow.has_obstacles());
        assert_eq!(grey(&flow), 0);
    }
}
