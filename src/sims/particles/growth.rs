//! Springs switched on live grow in. A spring kind (shear, bending) switched on while the
//! cloth or jelly is deformed gets the rest lengths of the body's rest shape (what makes a
//! squashed jelly spring back, `specs/004-particles.md`: "rest lengths = initial distances"),
//! but each new spring starts at the length it finds and its rest length moves to the rest
//! shape's over the body section's `grow_seconds` (default 0.5 s), a frame at a time; 0
//! puts them at the rest shape's at once. Switched on at once, the springs of a
//! collapsed body held its whole strain energy in the first substep: a jelly of 8³ nodes
//! folded flat without them, its new springs 861 J of strain (40 times its drop from 1.5 m),
//! its fastest node at 25 m/s the frame after, and a cloth
//! whose cells had sheared flat without shear springs (springs of nearly zero length) blew
//! up under Verlet, from 174 J to 10⁵ J in two seconds (docs/particles/physics.md).

use super::body::{Body, Spring};
use std::collections::HashMap;

/// The springs growing in ([`Body::growth`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Growth {
    /// Each growing spring: its index in [`Body::springs`], the length it was switched on
    /// at and its rest length in the rest shape, m.
    pub springs: Vec<(u32, f32, f32)>,
    /// The fraction grown, 0 to 1: each frame adds `dt / grow_seconds`, so an edit of
    /// `grow_seconds` mid-growth changes the rate only (the rest lengths reached stay; what is
    /// left takes `(1 − grown)·grow_seconds`). f64: summed in f32, 60 000 frames of 1 ms over
    /// 60 s came to 1.0005, the end 31 frames early.
    pub grown: f64,
}

impl Body {
    /// Starts the springs of the kinds `grow` ([structural, shear, bending]) growing in from
    /// their current lengths: each spring's rest length becomes its length now, or, for a
    /// spring still growing in `was` (matched by its ends), the rest length it had grown to
    /// (another kind switched mid-growth moves no rest length back).
    /// Growing over `seconds` (0: at once).
    pub fn grow_in(&mut self, grow: [bool; 3], was: &Growth, was_springs: &[Spring], seconds: f32) {
        let grown: HashMap<(u32, u32), f32> = (was.springs.iter())
            .map(|&(k, _, _)| {
                let s = was_springs[k as usize];
                ((s.a, s.b), s.rest)
            })
            .collect();
        let springs: Vec<(u32, f32, f32)> = self
            .springs
            .iter()
            .zip(&self.kinds)
            .enumerate()
            .filter(|(_, (_, &kind))| grow[kind as usize])
            .map(|(k, (s, _))| {
                let found = grown.get(&(s.a, s.b)).copied().unwrap_or_else(|| {
                    self.position[s.a as usize].distance(self.position[s.b as usize])
                });
                (k as u32, found, s.rest)
            })
            .collect();
        self.growth = Growth {
            springs,
            grown: 0.0,
        };
        self.grow(0.0, seconds);
    }

    /// Spring `k`'s rest length in the rest shape (where it grows to, if growing in).
    pub fn shape_rest(&self, k: usize) -> f32 {
        let growing = self.growth.springs.iter().find(|g| g.0 as usize == k);
        growing.map_or(self.springs[k].rest, |g| g.2)
    }

    /// Whether any spring of kind `kind` is still growing in.
    pub fn growing(&self, kind: usize) -> bool {
        let kinds = &self.kinds;
        (self.growth.springs.iter()).any(|&(k, _, _)| kinds[k as usize] as usize == kind)
    }

    /// Grows the springs by `dt` seconds of `seconds` (`T`, the scene's `grow_seconds`, read
    /// each frame): the fraction grown `g` gains `dt/T`, the rest lengths are
    /// `found + (rest − found)·g`, the rest shape's once `g` is within half a frame of 1 (the
    /// growth then ends; at once for T = 0). An edit of `T` mid-growth changes the rate, not
    /// the rest lengths reached.
    /// Returns whether a rest length changed (the GPU's to upload).
    pub fn grow(&mut self, dt: f32, seconds: f32) -> bool {
        if self.growth.springs.is_empty() {
            return false;
        }
        let (dt, seconds) = (f64::from(dt), f64::from(seconds));
        let s = if seconds <= 0.0 {
            1.0
        } else {
            self.growth.grown += dt / seconds;
            // Done within half a frame of the end (n frames summed fall a rounding short of
            // n·dt or over it).
            if self.growth.grown >= 1.0 - 0.5 * dt / seconds {
                1.0
            } else {
                self.growth.grown
            }
        };
        let s32 = s as f32;
        for &(k, found, rest) in &self.growth.springs {
            self.springs[k as usize].rest = if s >= 1.0 {
                rest
            } else {
                found + (rest - found) * s32
            };
        }
        for link in &mut self.links {
            link.rest = self.springs[link.spring as usize].rest;
        }
        if s >= 1.0 {
            self.growth = Growth::default();
        }
        true
    }
}
