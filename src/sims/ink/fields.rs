//! Ink's grids: a MAC (staggered) grid for the flow — horizontal velocity on the vertical cell
//! faces, vertical velocity on the horizontal faces, pressure at the centres — and the ink at
//! the centres of a grid that may be finer. The staggering makes divergence, pressure Laplacian
//! and gradient one consistent discretisation, so the projection can remove the divergence to
//! the solver's tolerance; on a collocated grid with central differences (the original's, and
//! GPU Gems ch. 38) the 5-point Laplacian does not match the wide divergence-of-gradient stencil
//! and the projection leaves most of the divergence in place (`specs/003-ink.md`: 1.41 → 1.00).

/// Values on a regular lattice of `nx × ny` points, point (i, j) at ((i + ox)·h, (j + oy)·h).
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// Points along x.
    pub nx: usize,
    /// Points along y.
    pub ny: usize,
    /// Offset of point (0, 0) from the origin, in spacings.
    pub offset: [f32; 2],
    /// Spacing, m.
    pub h: f32,
    /// Values, x fastest.
    pub data: Vec<f32>,
}

impl Field {
    /// A zero field.
    pub fn new(nx: usize, ny: usize, offset: [f32; 2], h: f32) -> Field {
        Field {
            nx,
            ny,
            offset,
            h,
            data: vec![0.0; nx * ny],
        }
    }

    /// Index of point (i, j).
    #[inline]
    pub fn at(&self, i: usize, j: usize) -> usize {
        j * self.nx + i
    }

    /// The value at (i, j).
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> f32 {
        self.data[j * self.nx + i]
    }

    /// Bilinear interpolation at (x, y) m, clamped to the lattice; also the smallest and
    /// largest of the four values interpolated (MacCormack's clamp).
    #[inline]
    pub fn sample_with_bounds(&self, x: f32, y: f32) -> (f32, f32, f32) {
        let fx = (x / self.h - self.offset[0]).clamp(0.0, (self.nx - 1) as f32);
        let fy = (y / self.h - self.offset[1]).clamp(0.0, (self.ny - 1) as f32);
        let i = (fx as usize).min(self.nx - 2);
        let j = (fy as usize).min(self.ny - 2);
        let (tx, ty) = (fx - i as f32, fy - j as f32);
        let a = self.get(i, j);
        let b = self.get(i + 1, j);
        let c = self.get(i, j + 1);
        let d = self.get(i + 1, j + 1);
        let value = (a * (1.0 - tx) + b * tx) * (1.0 - ty) + (c * (1.0 - tx) + d * tx) * ty;
        (value, a.min(b).min(c.min(d)), a.max(b).max(c.max(d)))
    }

    /// Bilinear interpolation at (x, y) m, clamped to the lattice.
    #[inline]
    pub fn sample(&self, x: f32, y: f32) -> f32 {
        let fx = (x / self.h - self.offset[0]).clamp(0.0, (self.nx - 1) as f32);
        let fy = (y / self.h - self.offset[1]).clamp(0.0, (self.ny - 1) as f32);
        let i = (fx as usize).min(self.nx - 2);
        let j = (fy as usize).min(self.ny - 2);
        let (tx, ty) = (fx - i as f32, fy - j as f32);
        let k = j * self.nx + i;
        let (a, b) = (self.data[k], self.data[k + 1]);
        let (c, d) = (self.data[k + self.nx], self.data[k + self.nx + 1]);
        (a + (b - a) * tx) * (1.0 - ty) + (c + (d - c) * tx) * ty
    }

    /// Position of point (i, j), m.
    #[inline]
    pub fn position(&self, i: usize, j: usize) -> (f32, f32) {
        (
            (i as f32 + self.offset[0]) * self.h,
            (j as f32 + self.offset[1]) * self.h,
        )
    }

    /// Σ values.
    pub fn sum(&self) -> f64 {
        self.data.iter().map(|&v| f64::from(v)).sum()
    }
}

/// The flow on its MAC grid, and which cells are solid.
#[derive(Clone, Debug, PartialEq)]
pub struct Flow {
    /// Cells along x.
    pub nx: usize,
    /// Cells along y.
    pub ny: usize,
    /// Cell size, m.
    pub dx: f32,
    /// Horizontal velocity on the vertical faces: (nx + 1) × ny, m/s.
    pub u: Field,
    /// Vertical velocity on the horizontal faces: nx × (ny + 1), m/s.
    pub v: Field,
    /// Pressure (times dt/ρ: what the gradient step subtracts), cell centres.
    pub p: Field,
    /// Solid cells (obstacles).
    pub solid: Vec<bool>,
}

impl Flow {
    /// A fluid at rest in an `nx × ny` box of cells of size `dx`.
    pub fn new(nx: usize, ny: usize, dx: f32) -> Flow {
        Flow {
            nx,
            ny,
            dx,
            u: Field::new(nx + 1, ny, [0.0, 0.5], dx),
            v: Field::new(nx, ny + 1, [0.5, 0.0], dx),
            p: Field::new(nx, ny, [0.5, 0.5], dx),
            solid: vec![false; nx * ny],
        }
    }

    /// Whether cell (i, j) is fluid; cells outside the box are walls.
    #[inline]
    pub fn fluid(&self, i: isize, j: isize) -> bool {
        i >= 0
            && j >= 0
            && (i as usize) < self.nx
            && (j as usize) < self.ny
            && !self.solid[j as usize * self.nx + i as usize]
    }

    /// Whether the vertical face left of cell (i, j) lets fluid through (fluid on both sides).
    #[inline]
    pub fn u_open(&self, i: usize, j: usize) -> bool {
        self.fluid(i as isize - 1, j as isize) && self.fluid(i as isize, j as isize)
    }

    /// Whether the horizontal face below cell (i, j) lets fluid through.
    #[inline]
    pub fn v_open(&self, i: usize, j: usize) -> bool {
        self.fluid(i as isize, j as isize - 1) && self.fluid(i as isize, j as isize)
    }

    /// The velocity at (x, y) m.
    #[inline]
    pub fn velocity(&self, x: f32, y: f32) -> (f32, f32) {
        (self.u.sample(x, y), self.v.sample(x, y))
    }

    /// The divergence of cell (i, j), 1/s (0 in solids).
    #[inline]
    pub fn divergence(&self, i: usize, j: usize) -> f32 {
        if !self.fluid(i as isize, j as isize) {
            return 0.0;
        }
        (self.u.get(i + 1, j) - self.u.get(i, j) + self.v.get(i, j + 1) - self.v.get(i, j))
            / self.dx
    }

    /// The velocity at the centre of cell (i, j), m/s.
    #[inline]
    pub fn center_velocity(&self, i: usize, j: usize) -> (f32, f32) {
        (
            0.5 * (self.u.get(i, j) + self.u.get(i + 1, j)),
            0.5 * (self.v.get(i, j) + self.v.get(i, j + 1)),
        )
    }

    /// Root mean square of the divergence over the fluid cells, 1/s.
    pub fn divergence_rms(&self) -> f64 {
        let mut sum = 0.0;
        let mut count = 0usize;
        for j in 0..self.ny {
            for i in 0..self.nx {
                if self.fluid(i as isize, j as isize) {
                    sum += f64::from(self.divergence(i, j)).powi(2);
                    count += 1;
                }
            }
        }
        (sum / count.max(1) as f64).sqrt()
    }

    /// Zeroes the velocity on every closed face (walls and solids).
    pub fn close_faces(&mut self) {
        for j in 0..self.ny {
            for i in 0..=self.nx {
                if !self.u_open(i, j) {
                    let k = self.u.at(i, j);
                    self.u.data[k] = 0.0;
                }
            }
        }
        for j in 0..=self.ny {
            for i in 0..self.nx {
                if !self.v_open(i, j) {
                    let k = self.v.at(i, j);
                    self.v.data[k] = 0.0;
                }
            }
        }
    }
}

/// The ink: red, green and blue amounts at the centres of the ink grid.
#[derive(Clone, Debug, PartialEq)]
pub struct Ink {
    /// One field per channel.
    pub channels: [Field; 3],
}

impl Ink {
    /// No ink on an `nx × ny` grid of cell size `h`.
    pub fn new(nx: usize, ny: usize, h: f32) -> Ink {
        let field = Field::new(nx, ny, [0.5, 0.5], h);
        Ink {
            channels: [field.clone(), field.clone(), field],
        }
    }

    /// Σ over cells of every channel times the cell area: the amount of ink, m².
    pub fn total(&self) -> f64 {
        let h = f64::from(self.channels[0].h);
        self.channels.iter().map(Field::sum).sum::<f64>() * h * h
    }
}
