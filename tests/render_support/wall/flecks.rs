//! The light flecks on the fluid's face against the near-left glass.

use super::Wall;

impl Wall {
    /// The fluid pixels at the glass, and those of them more than 15 levels lighter than the
    /// median of their 3 × 3 window: light flecks.
    pub fn flecks(&self) -> (usize, usize) {
        let (w, h) = (self.width, self.height);
        let (mut at_glass, mut light) = (0, 0);
        for y in 1..h - 1 {
            for x in 1..w - 1 {
                let k = y * w + x;
                if !self.at_glass[k] {
                    continue;
                }
                at_glass += 1;
                let mut window = [0.0f32; 9];
                for (i, value) in window.iter_mut().enumerate() {
                    *value = self.luminance[(y + i / 3 - 1) * w + x + i % 3 - 1];
                }
                window.sort_by(f32::total_cmp);
                light += usize::from(self.luminance[k] > window[4] + 15.0);
            }
        }
        (at_glass, light)
    }
}
