//! The top's last rows brightening towards the front glass, with and without shadow and
//! caustics, and a ramp drawn into both pictures as its positive control.

use super::Wall;

/// [`Wall::top_rise`]'s figures.
#[derive(Default)]
pub struct TopRise {
    pub columns: usize,
    pub mean: f32,
    pub unlit_mean: f32,
    pub rising: usize,
    pub rising_mean: f32,
    pub rising_unlit_median: f32,
    pub rising_unlit_over_10: usize,
    /// Of the `rising_unlit_over_10` columns, those whose refraction lookup lies on a light
    /// cell of the floor's checker from the first row and on a dark one from the fifth.
    pub unlit_rising_onto_light_cell: usize,
    /// The columns that brighten by 10 levels or more with shadow and caustics only, and how
    /// many of them have their lookup so.
    pub lit_only: usize,
    pub lit_only_onto_light_cell: usize,
}

impl Wall {
    /// The top's last rows towards the front glass: the columns whose fluid pixel lies within
    /// 4 particle radii of it, not shaded behind glass, above one that is (the face's top
    /// edge), with the next 4 pixels up free surface too. How many, and how much lighter
    /// (levels) the first of those 5 rows is than the fifth, on average over them all and
    /// over those lighter by 10 levels or more (how many); the same columns' mean with shadow
    /// and caustics off (`unlit`), and of those lighter columns, the median of that figure
    /// without them and how many are lighter by 10 levels without them too (a container edge
    /// drawn across their rows darkens both pictures alike). The composite's inputs read back there
    /// (docs/fluid-rendering.md, "The top's last rows at the front glass"): the refraction's lookup
    /// (about 11 px down the screen) reaches, from the first rows, the lit strip of floor behind
    /// the front glass, past the fluid's shadow. Of the columns lighter by 10 levels
    /// without shadow and caustics too, how many have the lookup on a light cell of the
    /// floor's checker from the first row and on a dark one from the fifth (the cells'
    /// boundary crossed: the unlit scene's lighter band); of those lighter with them only, how
    /// many, and how many of them so.
    pub fn top_rise(&self) -> TopRise {
        let w = self.width;
        let free = |k: usize| self.depth[k] > 0.0 && !self.behind_glass[k];
        let mut rise = TopRise::default();
        let mut unlit_rises = Vec::new();
        let unlit = self
            .unlit
            .as_ref()
            .expect("the frame drawn without shadow and caustics");
        for k in w..self.depth.len() - 5 * w {
            if !(free(k)
                && self.depth[k - w] > 0.0
                && self.behind_glass[k - w]
                && (0.0..4.0).contains(&self.off_front[k])
                && (1..5).all(|j| free(k + j * w)))
            {
                continue;
            }
            let lit = self.luminance[k] - self.luminance[k + 4 * w];
            let dark = unlit[k] - unlit[k + 4 * w];
            rise.columns += 1;
            rise.mean += lit;
            rise.unlit_mean += dark;
            let onto_light_cell = self.lookup_on_light_cell[k] == Some(true)
                && self.lookup_on_light_cell[k + 4 * w] == Some(false);
            if lit >= 10.0 {
                rise.rising_mean += lit;
                unlit_rises.push(dark);
                if dark >= 10.0 {
                    rise.unlit_rising_onto_light_cell += usize::from(onto_light_cell);
                } else {
                    rise.lit_only += 1;
                    rise.lit_only_onto_light_cell += usize::from(onto_light_cell);
                }
            }
        }
        unlit_rises.sort_by(f32::total_cmp);
        rise.rising = unlit_rises.len();
        rise.rising_unlit_median = unlit_rises.get(rise.rising / 2).copied().unwrap_or(0.0);
        rise.rising_unlit_over_10 = unlit_rises.iter().filter(|&&r| r >= 10.0).count();
        rise.mean /= rise.columns.max(1) as f32;
        rise.unlit_mean /= rise.columns.max(1) as f32;
        rise.rising_mean /= rise.rising.max(1) as f32;
        rise
    }

    /// The same frame with a gentle shading artefact drawn into both pictures (with and
    /// without shadow and caustics): the top's last rows above the face's top edge (the columns
    /// of [`Wall::top_rise`], the first of its rows `4 × per_row` levels lighter, the second
    /// `3 × per_row`, down to the fifth unchanged), a brightening towards the glass that does
    /// not depend on the light.
    pub fn with_ramp(&self, per_row: f32) -> Wall {
        let w = self.width;
        let free = |k: usize| self.depth[k] > 0.0 && !self.behind_glass[k];
        let mut ramped = self.clone();
        let unlit = ramped.unlit.as_mut().expect("the unlit picture");
        for k in w..self.depth.len() - 5 * w {
            if free(k) && self.depth[k - w] > 0.0 && self.behind_glass[k - w] {
                for j in 0..4 {
                    let levels = per_row * (4 - j) as f32;
                    ramped.luminance[k + j * w] += levels;
                    unlit[k + j * w] += levels;
                }
            }
        }
        ramped
    }
}
