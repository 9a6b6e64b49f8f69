//! The `advect` stage's points eight at a time (AVX2, found at run time): the trace, the
//! bilinear taps (gathers) and each scheme's arithmetic, with the same operations in the same
//! order as the scalar code in `mod.rs` and `fields.rs` (no fused multiply-adds), so the
//! results are bit for bit the scalar ones — which the CUDA kernels' parity relies on. The
//! points a row's lanes do not cover (the row's tail, u's first and last face) are left to the
//! scalar code.

use super::super::boundary::{BOTTOM, LEFT, RIGHT, TOP};
use super::super::fields::{Lattice, VelocitySampler};
use super::Points;
use std::arch::x86_64::*;
use std::ops::Range;

/// Points per vector.
const LANES: usize = 8;

/// The vector path, for one lattice and its flow: made only where the CPU has AVX2 and every
/// array has the size the unchecked loads and gathers rely on.
#[derive(Clone, Copy)]
pub struct Lanes<'a> {
    lattice: Lattice,
    points: Points<'a>,
    grid: Grid,
    flow: Flow8<'a>,
}

impl<'a> Lanes<'a> {
    /// The vector path for `points` of `lattice`, or none (no AVX2, or a lattice too large for
    /// 32-bit gather indices).
    pub fn new(lattice: &Lattice, points: Points<'a>) -> Option<Lanes<'a>> {
        if !std::is_x86_feature_detected!("avx2") {
            return None;
        }
        let s = points.sampler();
        let fits = |l: &Lattice| l.nx >= 2 && l.ny >= 2 && l.nx * l.ny < i32::MAX as usize / 2;
        let shaped = |f: &super::super::fields::Field, l: &Lattice| {
            f.data.len() == l.nx * l.ny && f.nx == l.nx && f.ny == l.ny
        };
        // The flow's own lattices: the point velocities are read at fixed offsets.
        let (cells_x, cells_y) = (s.v.nx, s.u.ny);
        let own = match points {
            Points::UFaces(_) => lattice.nx == cells_x + 1 && lattice.ny == cells_y,
            Points::VFaces(_) => lattice.nx == cells_x && lattice.ny == cells_y + 1,
            Points::Centres(_) => lattice.nx == cells_x && lattice.ny == cells_y,
            Points::Sampled(_) => true,
        };
        let flow_ok = s.u.nx == cells_x + 1
            && s.v.ny == cells_y + 1
            && shaped(s.u, &s.ul)
            && shaped(s.v, &s.vl);
        if !(own && flow_ok && fits(lattice) && fits(&s.ul) && fits(&s.vl)) {
            return None;
        }
        // SAFETY: AVX2 was detected above.
        unsafe {
            Some(Lanes {
                lattice: *lattice,
                points,
                grid: Grid::new(lattice),
                flow: Flow8::new(s),
            })
        }
    }

    /// The points of a row whose velocity the lanes read at fixed offsets (u's first and last
    /// face take the walls' rules: the scalar code's).
    fn regular(&self) -> Range<usize> {
        match self.points {
            Points::UFaces(_) => 1..self.lattice.nx - 1,
            _ => 0..self.lattice.nx,
        }
    }

    /// Checks row `j` is on the lattice and a row of output is a lattice row; the points the
    /// lanes may take.
    fn check_row(&self, j: usize, out: usize) -> Range<usize> {
        assert!(j < self.lattice.ny && out == self.lattice.nx);
        self.regular()
    }

    /// Semi-Lagrangian values of row `j`'s points, eight at a time, into `out` (the row of
    /// each field): `flush(φ(foot) · w · decay)`. Returns the points done; the caller does
    /// the rest.
    pub fn semi_lagrangian<const N: usize>(
        &self,
        j: usize,
        dt: f32,
        fields: [&[f32]; N],
        decay: [f32; N],
        out: &mut [&mut [f32]; N],
    ) -> Range<usize> {
        let range = self.check_row(j, out[0].len());
        for f in 0..N {
            assert!(fields[f].len() == self.lattice.nx * self.lattice.ny);
            assert!(out[f].len() == self.lattice.nx);
        }
        // SAFETY: `new` found AVX2 and checked the flow's sizes; the rows and fields were
        // checked above.
        let stop = unsafe { self.semi_lagrangian_avx2(j, dt, range.clone(), fields, decay, out) };
        range.start..stop
    }

    #[target_feature(enable = "avx2")]
    unsafe fn semi_lagrangian_avx2<const N: usize>(
        &self,
        j: usize,
        dt: f32,
        range: Range<usize>,
        fields: [&[f32]; N],
        decay: [f32; N],
        out: &mut [&mut [f32]; N],
    ) -> usize {
        let nx = self.lattice.nx;
        let mut i = range.start;
        while i + LANES <= range.end {
            let s = self.trace(i, j, dt);
            for f in 0..N {
                let value = weigh(taps(fields[f].as_ptr(), nx, s.k), &s);
                let value = flush(_mm256_mul_ps(
                    value,
                    _mm256_mul_ps(s.w, _mm256_set1_ps(decay[f])),
                ));
                _mm256_storeu_ps(out[f].as_mut_ptr().add(i), value);
            }
            i += LANES;
        }
        i
    }

    /// MacCormack's first pass over row `j`'s points (as [`Lanes::semi_lagrangian`]) for
    /// every field: φ̂ = φ(foot) · w into `rows[0][f]`, and the smallest and largest of the four
    /// values it weighed, × w, into `rows[1][f]` and `rows[2][f]`.
    pub fn first_pass<const N: usize>(
        &self,
        j: usize,
        dt: f32,
        fields: [&[f32]; N],
        rows: &mut [[&mut [f32]; N]; 3],
    ) -> Range<usize> {
        let range = self.check_row(j, rows[0][0].len());
        for f in 0..N {
            assert!(fields[f].len() == self.lattice.nx * self.lattice.ny);
            for row in rows.iter() {
                assert!(row[f].len() == self.lattice.nx);
            }
        }
        // SAFETY: as in `semi_lagrangian`.
        let stop = unsafe { self.first_pass_avx2(j, dt, range.clone(), fields, rows) };
        range.start..stop
    }

    #[target_feature(enable = "avx2")]
    unsafe fn first_pass_avx2<const N: usize>(
        &self,
        j: usize,
        dt: f32,
        range: Range<usize>,
        fields: [&[f32]; N],
        rows: &mut [[&mut [f32]; N]; 3],
    ) -> usize {
        let nx = self.lattice.nx;
        let mut i = range.start;
        while i + LANES <= range.end {
            let s = self.trace(i, j, dt);
            for f in 0..N {
                let q = taps(fields[f].as_ptr(), nx, s.k);
                let hat = _mm256_mul_ps(weigh(q, &s), s.w);
                let low = _mm256_min_ps(_mm256_min_ps(q[0], q[1]), _mm256_min_ps(q[2], q[3]));
                let high = _mm256_max_ps(_mm256_max_ps(q[0], q[1]), _mm256_max_ps(q[2], q[3]));
                _mm256_storeu_ps(rows[0][f].as_mut_ptr().add(i), hat);
                _mm256_storeu_ps(rows[1][f].as_mut_ptr().add(i), _mm256_mul_ps(low, s.w));
                _mm256_storeu_ps(rows[2][f].as_mut_ptr().add(i), _mm256_mul_ps(high, s.w));
            }
            i += LANES;
        }
        i
    }

    /// MacCormack's second pass over row `j`'s points: φ̂ traced forward, the corrected value
    /// `φ̂ + ½(φ − φ̂(ahead))` clamped to [low, high], × decay, flushed, into `out`. `fields`
    /// and `first` (φ̂, low, high): whole lattices. Returns the points done.
    pub fn second_pass<const N: usize>(
        &self,
        j: usize,
        dt: f32,
        fields: [&[f32]; N],
        first: [&[&[f32]; N]; 3],
        decay: [f32; N],
        out: &mut [&mut [f32]; N],
    ) -> Range<usize> {
        let range = self.check_row(j, out[0].len());
        let n = self.lattice.nx * self.lattice.ny;
        for f in 0..N {
            assert!(fields[f].len() == n && out[f].len() == self.lattice.nx);
            for buffer in first {
                assert!(buffer[f].len() == n);
            }
        }
        // SAFETY: as in `semi_lagrangian`.
        let stop =
            unsafe { self.second_pass_avx2(j, dt, range.clone(), fields, first, decay, out) };
        range.start..stop
    }

    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = "avx2")]
    unsafe fn second_pass_avx2<const N: usize>(
        &self,
        j: usize,
        dt: f32,
        range: Range<usize>,
        fields: [&[f32]; N],
        [hat, low, high]: [&[&[f32]; N]; 3],
        decay: [f32; N],
        out: &mut [&mut [f32]; N],
    ) -> usize {
        let nx = self.lattice.nx;
        let half = _mm256_set1_ps(0.5);
        let mut i = range.start;
        while i + LANES <= range.end {
            let s = self.trace(i, j, -dt);
            let k = j * nx + i;
            for f in 0..N {
                let round_trip = _mm256_mul_ps(weigh(taps(hat[f].as_ptr(), nx, s.k), &s), s.w);
                let first = _mm256_loadu_ps(hat[f].as_ptr().add(k));
                let start = _mm256_loadu_ps(fields[f].as_ptr().add(k));
                let corrected =
                    _mm256_add_ps(first, _mm256_mul_ps(half, _mm256_sub_ps(start, round_trip)));
                let bounded = clamp(
                    corrected,
                    _mm256_loadu_ps(low[f].as_ptr().add(k)),
                    _mm256_loadu_ps(high[f].as_ptr().add(k)),
                );
                let value = flush(_mm256_mul_ps(bounded, _mm256_set1_ps(decay[f])));
                _mm256_storeu_ps(out[f].as_mut_ptr().add(i), value);
            }
            i += LANES;
        }
        i
    }

    /// The stencils of points i..i + 8 of row j, `dt` back: `trace` in `mod.rs`.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn trace(&self, i: usize, j: usize, dt: f32) -> Stencil {
        let l = &self.lattice;
        let column = _mm256_add_epi32(
            _mm256_set1_epi32(i as i32),
            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
        );
        let h = _mm256_set1_ps(l.h);
        let x = _mm256_mul_ps(
            _mm256_add_ps(_mm256_cvtepi32_ps(column), _mm256_set1_ps(l.offset[0])),
            h,
        );
        let y = _mm256_set1_ps((j as f32 + l.offset[1]) * l.h);
        let (u, v) = self.point_velocity(i, j, x, y);
        let half = _mm256_set1_ps(0.5 * dt);
        let (u, v) = self.flow.velocity(
            _mm256_sub_ps(x, _mm256_mul_ps(half, u)),
            _mm256_sub_ps(y, _mm256_mul_ps(half, v)),
        );
        let dt = _mm256_set1_ps(dt);
        let (fx, fy) = (
            _mm256_sub_ps(x, _mm256_mul_ps(dt, u)),
            _mm256_sub_ps(y, _mm256_mul_ps(dt, v)),
        );
        let mut s = locate(&self.grid, fx, fy);
        let f = &self.flow;
        match self.points {
            Points::UFaces(_) if f.any_sticks => s.w = f.u_factor(fy),
            Points::VFaces(_) if f.any_sticks => s.w = f.v_factor(fx),
            _ => {}
        }
        s
    }

    /// The velocity at points i..i + 8 of row j (at (x, y)): `Points::velocity`, read at fixed
    /// offsets on the flow's own lattices (u's lanes start at face 1 and end before the last).
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn point_velocity(&self, i: usize, j: usize, x: __m256, y: __m256) -> (__m256, __m256) {
        let f = &self.flow;
        let (nx, w) = (f.v_nx, f.v_nx + 1);
        let (u, v) = (f.u.as_ptr(), f.v.as_ptr());
        let quarter = _mm256_set1_ps(0.25);
        let half = _mm256_set1_ps(0.5);
        match self.points {
            Points::UFaces(_) => {
                let (below, above) = (j * nx + i, (j + 1) * nx + i);
                let sum = _mm256_add_ps(
                    _mm256_add_ps(
                        _mm256_add_ps(load(v, below - 1), load(v, below)),
                        load(v, above - 1),
                    ),
                    load(v, above),
                );
                (load(u, j * w + i), _mm256_mul_ps(quarter, sum))
            }
            Points::VFaces(_) => {
                let ny = f.u_ny;
                let (jb, jt) = (j.saturating_sub(1), j.min(ny - 1));
                let (lo, hi) = (jb * w + i, jt * w + i);
                let sum = _mm256_add_ps(
                    _mm256_add_ps(_mm256_add_ps(load(u, lo), load(u, lo + 1)), load(u, hi)),
                    load(u, hi + 1),
                );
                let mut mean = _mm256_mul_ps(quarter, sum);
                if (j == 0 && f.sticks[BOTTOM]) || (j == ny && f.sticks[TOP]) {
                    mean = _mm256_setzero_ps();
                }
                (mean, load(v, j * nx + i))
            }
            Points::Centres(_) => {
                let k = j * w + i;
                (
                    _mm256_mul_ps(half, _mm256_add_ps(load(u, k), load(u, k + 1))),
                    _mm256_mul_ps(
                        half,
                        _mm256_add_ps(load(v, j * nx + i), load(v, (j + 1) * nx + i)),
                    ),
                )
            }
            Points::Sampled(_) => f.velocity(x, y),
        }
    }
}

/// A lattice's shape in lanes: [`Lattice::bilinear`]'s constants.
#[derive(Clone, Copy)]
struct Grid {
    nx: __m256i,
    inverse_h: __m256,
    ox: __m256,
    oy: __m256,
    last_x: __m256,
    last_y: __m256,
    max_i: __m256i,
    max_j: __m256i,
}

impl Grid {
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn new(l: &Lattice) -> Grid {
        Grid {
            nx: _mm256_set1_epi32(l.nx as i32),
            inverse_h: _mm256_set1_ps(l.inverse_h),
            ox: _mm256_set1_ps(l.offset[0]),
            oy: _mm256_set1_ps(l.offset[1]),
            last_x: _mm256_set1_ps((l.nx - 1) as f32),
            last_y: _mm256_set1_ps((l.ny - 1) as f32),
            max_i: _mm256_set1_epi32((l.nx - 2) as i32),
            max_j: _mm256_set1_epi32((l.ny - 2) as i32),
        }
    }
}

/// Eight [`super::super::fields::Bilinear`] stencils.
#[derive(Clone, Copy)]
struct Stencil {
    k: __m256i,
    tx: __m256,
    ty: __m256,
    w: __m256,
}

/// Eight values from `p + k` on.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn load(p: *const f32, k: usize) -> __m256 {
    _mm256_loadu_ps(p.add(k))
}

/// Rust's `f32::clamp` (NaN stays NaN) for lo ≤ hi.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn clamp(v: __m256, lo: __m256, hi: __m256) -> __m256 {
    // maxps/minps return their second operand when either is NaN.
    _mm256_min_ps(hi, _mm256_max_ps(lo, v))
}

/// `f as usize` for a clamped coordinate: truncated, NaN to 0 (as Rust's saturating cast).
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn truncate(f: __m256) -> __m256i {
    let ordered = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_ORD_Q>(f, f));
    _mm256_and_si256(_mm256_cvttps_epi32(f), ordered)
}

/// [`Lattice::bilinear`] of eight points.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn locate(g: &Grid, x: __m256, y: __m256) -> Stencil {
    let zero = _mm256_setzero_ps();
    let fx = clamp(
        _mm256_sub_ps(_mm256_mul_ps(x, g.inverse_h), g.ox),
        zero,
        g.last_x,
    );
    let fy = clamp(
        _mm256_sub_ps(_mm256_mul_ps(y, g.inverse_h), g.oy),
        zero,
        g.last_y,
    );
    let i = _mm256_min_epi32(truncate(fx), g.max_i);
    let j = _mm256_min_epi32(truncate(fy), g.max_j);
    Stencil {
        k: _mm256_add_epi32(_mm256_mullo_epi32(j, g.nx), i),
        tx: _mm256_sub_ps(fx, _mm256_cvtepi32_ps(i)),
        ty: _mm256_sub_ps(fy, _mm256_cvtepi32_ps(j)),
        w: _mm256_set1_ps(1.0),
    }
}

/// The four values each stencil weighs (lower left, lower right, upper left, upper right) of a
/// lattice `nx` points wide. The caller guarantees every k + nx + 1 is inside `values`.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn taps(values: *const f32, nx: usize, k: __m256i) -> [__m256; 4] {
    [
        _mm256_i32gather_ps::<4>(values, k),
        _mm256_i32gather_ps::<4>(values.add(1), k),
        _mm256_i32gather_ps::<4>(values.add(nx), k),
        _mm256_i32gather_ps::<4>(values.add(nx + 1), k),
    ]
}

/// `fields::bilinear`'s weighing of the four taps.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn weigh([a, b, c, d]: [__m256; 4], s: &Stencil) -> __m256 {
    let lower = _mm256_add_ps(a, _mm256_mul_ps(_mm256_sub_ps(b, a), s.tx));
    let upper = _mm256_add_ps(c, _mm256_mul_ps(_mm256_sub_ps(d, c), s.tx));
    _mm256_add_ps(
        _mm256_mul_ps(lower, _mm256_sub_ps(_mm256_set1_ps(1.0), s.ty)),
        _mm256_mul_ps(upper, s.ty),
    )
}

/// `advect::flush`: values within 1e-30 of zero become zero.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn flush(v: __m256) -> __m256 {
    let magnitude = _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(i32::MAX)));
    let tiny = _mm256_cmp_ps::<_CMP_LT_OQ>(magnitude, _mm256_set1_ps(super::FLUSH));
    _mm256_andnot_ps(tiny, v)
}

/// [`VelocitySampler`] in lanes.
#[derive(Clone, Copy)]
struct Flow8<'a> {
    u: &'a [f32],
    v: &'a [f32],
    /// Cells along x (v's points per row) and along y (u's rows).
    v_nx: usize,
    u_ny: usize,
    ul: Grid,
    vl: Grid,
    half_cell: f32,
    width: f32,
    height: f32,
    sticks: [bool; 4],
    any_sticks: bool,
}

impl<'a> Flow8<'a> {
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn new(s: &VelocitySampler<'a>) -> Flow8<'a> {
        Flow8 {
            u: &s.u.data,
            v: &s.v.data,
            v_nx: s.v.nx,
            u_ny: s.u.ny,
            ul: Grid::new(&s.ul),
            vl: Grid::new(&s.vl),
            half_cell: s.half_cell,
            width: s.width,
            height: s.height,
            sticks: s.sticks,
            any_sticks: s.any_sticks,
        }
    }

    /// [`VelocitySampler::velocity`] at eight points.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn velocity(&self, x: __m256, y: __m256) -> (__m256, __m256) {
        let u_nx = self.v_nx + 1;
        let su = locate(&self.ul, x, y);
        let u = weigh(taps(self.u.as_ptr(), u_nx, su.k), &su);
        let sv = locate(&self.vl, x, y);
        let v = weigh(taps(self.v.as_ptr(), self.v_nx, sv.k), &sv);
        if self.any_sticks {
            (
                _mm256_mul_ps(u, self.u_factor(y)),
                _mm256_mul_ps(v, self.v_factor(x)),
            )
        } else {
            (u, v)
        }
    }

    /// [`VelocitySampler::u_factor`].
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn u_factor(&self, y: __m256) -> __m256 {
        self.stick(y, self.height, self.sticks[BOTTOM], self.sticks[TOP])
    }

    /// [`VelocitySampler::v_factor`].
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn v_factor(&self, x: __m256) -> __m256 {
        self.stick(x, self.width, self.sticks[LEFT], self.sticks[RIGHT])
    }

    /// `VelocitySampler::stick`: the low wall's ramp, else the high wall's, else 1.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn stick(&self, s: __m256, extent: f32, low: bool, high: bool) -> __m256 {
        let h = _mm256_set1_ps(self.half_cell);
        let zero = _mm256_setzero_ps();
        let mut factor = _mm256_set1_ps(1.0);
        if high {
            let near = _mm256_cmp_ps::<_CMP_GT_OQ>(s, _mm256_set1_ps(extent - self.half_cell));
            let ramp = _mm256_div_ps(_mm256_sub_ps(_mm256_set1_ps(extent), s), h);
            factor = _mm256_blendv_ps(factor, _mm256_max_ps(ramp, zero), near);
        }
        if low {
            let near = _mm256_cmp_ps::<_CMP_LT_OQ>(s, h);
            let ramp = _mm256_max_ps(_mm256_div_ps(s, h), zero);
            factor = _mm256_blendv_ps(factor, ramp, near);
        }
        factor
    }
}
