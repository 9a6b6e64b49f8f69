//! The light pixels where the top meets the front glass, and a light line drawn in to show
//! that the rule counts one.

use super::Wall;

/// [`Wall::rim`]'s counts.
#[derive(Default)]
pub struct Rim {
    pub all: usize,
    pub all_light: usize,
    pub free: usize,
    pub free_light: usize,
    pub seams: usize,
    pub tilt: f32,
}

impl Wall {
    /// The pixels whose splatted surface lies within 4 particle radii of the front glass: all
    /// of them, those not behind glass (the free surface), and how many of each are light: more
    /// than 15 levels lighter than the median of their 5 × 5 window, and, where the window's
    /// fluid pixels shaded the other way (behind glass or not) fill most of it (13 or more of
    /// 25), also than the median of the window's fluid pixels shaded as the pixel is. That
    /// second median keeps a top pixel at a corner of the crease, where the face fills 13–14
    /// of its window (17 levels darker than the top), from counting as light against the face;
    /// asked everywhere it would miss a light line one or two pixels wide along the face (half
    /// or more of its own class's pixels in the window: [`Wall::with_light_line`]). Counted
    /// over all, a pixel the glass rule takes from the free surface still counts if it is
    /// light. The pixels marked 1 shaded behind glass (`normals`' seams of the face and those
    /// it found facing the glass). And the mean angle (°) between the normal and the glass's
    /// of the free surface 1.75–3 radii off it.
    pub fn rim(&self) -> Rim {
        let (w, h) = (self.width, self.height);
        let mark = |k: usize| self.depth[k].to_bits() & 3;
        let mut rim = Rim::default();
        let (mut tilt, mut tilted) = (0.0, 0);
        for y in 2..h - 2 {
            for x in 2..w - 2 {
                let k = y * w + x;
                let off = self.off_front[k];
                if !(0.0..4.0).contains(&off) {
                    continue;
                }
                let mut window = [0.0f32; 25];
                let mut alike = Vec::with_capacity(25);
                let mut other = 0;
                for (i, value) in window.iter_mut().enumerate() {
                    let j = (y + i / 5 - 2) * w + x + i % 5 - 2;
                    *value = self.luminance[j];
                    if self.depth[j] > 0.0 {
                        if self.behind_glass[j] == self.behind_glass[k] {
                            alike.push(self.luminance[j]);
                        } else {
                            other += 1;
                        }
                    }
                }
                window.sort_by(f32::total_cmp);
                alike.sort_by(f32::total_cmp);
                let light = self.luminance[k] > window[12] + 15.0
                    && (other <= 12 || self.luminance[k] > alike[alike.len() / 2] + 15.0);
                rim.all += 1;
                rim.all_light += usize::from(light);
                if self.behind_glass[k] && mark(k) == 1 {
                    rim.seams += 1;
                }
                if self.behind_glass[k] {
                    continue;
                }
                rim.free += 1;
                rim.free_light += usize::from(light);
                if (1.75..3.0).contains(&off) {
                    tilt += self.tilt[k];
                    tilted += 1;
                }
            }
        }
        rim.tilt = tilt / tilted.max(1) as f32;
        rim
    }

    /// The same frame with a light line drawn in, to show [`Wall::rim`] counts one: the free
    /// surface's first two rows above the fluid pixels shaded behind glass (the face's top
    /// edge) `levels` lighter; and how many of the line's pixels lie within 4 particle radii
    /// of the front glass.
    pub fn with_light_line(&self, levels: f32) -> (Wall, usize) {
        let w = self.width;
        let free = |k: usize| self.depth[k] > 0.0 && !self.behind_glass[k];
        let mut lit = self.clone();
        let mut line = Vec::new();
        for k in w..self.depth.len() - 2 * w {
            if free(k) && self.depth[k - w] > 0.0 && self.behind_glass[k - w] {
                line.push(k);
                if free(k + w) {
                    line.push(k + w);
                }
            }
        }
        for &k in &line {
            lit.luminance[k] += levels;
        }
        let near = line
            .iter()
            .filter(|&&k| (0.0..4.0).contains(&self.off_front[k]));
        (lit, near.count())
    }
}
