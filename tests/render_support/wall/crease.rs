//! The smoothed depth where the top meets the fluid's face on the front glass (the crease,
//! the seams inside the face, the pinholes) and on the face itself.

use super::Wall;

/// [`Wall::crease_bias`]'s figures.
#[derive(Default)]
pub struct Crease {
    pub pixels: usize,
    pub bias: f64,
    pub least: f32,
    pub nearer: usize,
    pub seams: usize,
    pub seam_least: f32,
    pub seam_nearer: usize,
    pub seam_off_face: f32,
    pub seam_off_face_over_2mm: usize,
    /// Against the face's splatted depths above and below (a filter that pulls face and seams
    /// together passes `seam_off_face`, not this).
    pub seam_off_splatted_face: f32,
    pub pinholes: usize,
    pub pinhole_least: f32,
    pub pinhole_outside: f32,
}

impl Wall {
    /// The top's first row above the fluid's face on the front glass: the fluid pixels within
    /// 4 particle radii of it not marked on the glass whose pixel below is. Those whose pixel
    /// above is marked on the glass too are seams inside the face, shaded behind glass, whose
    /// filter has only the top's samples, several texels off, to fit a line through (13 mm
    /// towards the eye at the most in this frame): how many, the least of their smoothed
    /// depth less their splatted depth (m; negative: pulled towards the eye) and how many were
    /// pulled more than 5 mm towards the eye, and how far their smoothed depth lies outside
    /// the range of the smoothed depths of the pixels above and below them (the face's) at
    /// the most (m) and how many by more than 2 mm (docs/fluid-rendering.md, "The seams inside the
    /// face"). Of the rest, the pinholes: a splat deeper by over 1 cm than the pixels above and
    /// below it (a particle behind the front layer seen
    /// through a gap between its splats, which the filter fills in: it is pulled towards the
    /// eye by about that step): how many, the least of that difference, and how far the
    /// smoothed depth lies outside the splatted depths of the pixels above and below at the
    /// most (m). The rest: how many, the mean and the least of that difference, and how many
    /// were pulled more than 5 mm towards the eye. The line fit across the crease acts there.
    pub fn crease_bias(&self) -> Crease {
        let w = self.width;
        let mark = |k: usize| self.depth[k].to_bits() & 3;
        let mut crease = Crease {
            least: f32::INFINITY,
            seam_least: f32::INFINITY,
            pinhole_least: f32::INFINITY,
            ..Crease::default()
        };
        let mut sum = 0.0f64;
        for k in w..self.depth.len() - w {
            if self.depth[k] <= 0.0
                || mark(k) == 2
                || self.depth[k - w] <= 0.0
                || mark(k - w) != 2
                || !(0.0..4.0).contains(&self.off_front[k])
            {
                continue;
            }
            let bias = self.smoothed[k] - self.depth[k];
            if mark(k + w) == 2 {
                crease.seams += 1;
                crease.seam_least = crease.seam_least.min(bias);
                crease.seam_nearer += usize::from(bias < -0.005);
                let (above, below) = (self.smoothed[k + w], self.smoothed[k - w]);
                let off_face = (above.min(below) - self.smoothed[k])
                    .max(self.smoothed[k] - above.max(below))
                    .max(0.0);
                crease.seam_off_face = crease.seam_off_face.max(off_face);
                crease.seam_off_face_over_2mm += usize::from(off_face > 0.002);
                let (above, below) = (self.depth[k + w], self.depth[k - w]);
                let off_splatted = (above.min(below) - self.smoothed[k])
                    .max(self.smoothed[k] - above.max(below))
                    .max(0.0);
                crease.seam_off_splatted_face = crease.seam_off_splatted_face.max(off_splatted);
                continue;
            }
            let (above, below) = (self.depth[k + w], self.depth[k - w]);
            if above > 0.0 && self.depth[k] - above.max(below) > 0.01 {
                crease.pinholes += 1;
                crease.pinhole_least = crease.pinhole_least.min(bias);
                let outside = (above.min(below) - self.smoothed[k])
                    .max(self.smoothed[k] - above.max(below))
                    .max(0.0);
                crease.pinhole_outside = crease.pinhole_outside.max(outside);
                continue;
            }
            crease.pixels += 1;
            sum += f64::from(bias);
            crease.least = crease.least.min(bias);
            crease.nearer += usize::from(bias < -0.005);
        }
        crease.bias = sum / crease.pixels.max(1) as f64;
        crease
    }

    /// The fluid's face on the glass: the pixels `sphere_depth` marked on the glass (the
    /// depth's two lowest bits 2) whose eight neighbours are marked so too and lie within 2 cm
    /// of them (one layer), and the mean |second difference| of their smoothed depth along x
    /// plus that along y (m); and how many pixels with their eight neighbours marked on the
    /// glass the 2 cm rule left out (a filter that broke the face into steps would).
    pub fn face_roughness(&self) -> (usize, usize, f64) {
        let (w, h) = (self.width, self.height);
        let on_glass = |k: usize| self.depth[k] > 0.0 && self.depth[k].to_bits() & 3 == 2;
        let d = &self.smoothed;
        let (mut pixels, mut stepped, mut sum) = (0, 0, 0.0f64);
        for y in 1..h - 1 {
            for x in 1..w - 1 {
                let k = y * w + x;
                let around = [
                    k - 1,
                    k + 1,
                    k - w,
                    k + w,
                    k - w - 1,
                    k - w + 1,
                    k + w - 1,
                    k + w + 1,
                ];
                if !on_glass(k) || !around.iter().all(|&j| on_glass(j)) {
                    continue;
                }
                if !around.iter().all(|&j| (d[j] - d[k]).abs() < 0.02) {
                    stepped += 1;
                    continue;
                }
                pixels += 1;
                sum += f64::from((d[k - 1] + d[k + 1] - 2.0 * d[k]).abs())
                    + f64::from((d[k - w] + d[k + w] - 2.0 * d[k]).abs());
            }
        }
        (pixels, stepped, sum / pixels.max(1) as f64)
    }
}
