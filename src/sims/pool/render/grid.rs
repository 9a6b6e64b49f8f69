//! The surface mesh — the grid of nodes as triangle strips, vertex j·M + i being node
//! (i·s, j·s) for a stride s (1 for the caustics, more for drawing a large grid: at most
//! [`DISPLAY_MESH`] vertices per side), with no attributes: the vertex shaders fetch each node's
//! texel by `gl_VertexID` — and the passes that draw it: `surface` (the water), `land` (fixed
//! nodes as ground), `wireframe` and `nodes` (`height.frag`).

use super::shared::{pool_shader, FrameValues, Shared};
use crate::gfx::program::{Program, ShaderSource, Uniform};
use anyhow::{anyhow, Result};
use glow::HasContext;

/// The most vertices per side of the mesh the picture is drawn with (about 2 pixels a cell on
/// a 1080p pool); the caustics use every node.
pub const DISPLAY_MESH: usize = 513;

/// Nodes between the drawn mesh's vertices for a grid of `nodes` per side.
pub fn display_stride(nodes: usize) -> usize {
    (nodes - 1).div_ceil(DISPLAY_MESH - 1).max(1)
}

/// Vertices per side of the mesh of every `stride`-th node of a grid of `nodes` per side (and
/// the last).
fn mesh_nodes(nodes: usize, stride: usize) -> usize {
    (nodes - 1).div_ceil(stride) + 1
}

/// Vertices per side of the mesh a grid of `nodes` per side is drawn with ([`display_stride`]).
pub fn display_mesh_nodes(nodes: usize) -> usize {
    mesh_nodes(nodes, display_stride(nodes))
}

/// The strip's indices for `nodes` per side: row j's part runs (i, j), (i, j + 1) for each i,
/// so each cell splits as the original's two triangles (p_ij, p_i+1j, p_ij+1) and (p_ij+1,
/// p_i+1j, p_i+1j+1); the rows are joined by repeating their last and the next one's first
/// index (four triangles of no area, which draw nothing). Row j starts at j·(2N + 2).
pub fn strip_indices(nodes: usize) -> Vec<u32> {
    let n = nodes as u32;
    let mut indices = Vec::with_capacity((nodes - 1) * (2 * nodes + 2));
    for j in 0..n - 1 {
        if j > 0 {
            indices.push(j * n);
        }
        for i in 0..n {
            indices.push(j * n + i);
            indices.push((j + 1) * n + i);
        }
        if j + 2 < n {
            indices.push((j + 1) * n + n - 1);
        }
    }
    indices
}

/// How much of the mesh a pass draws: the whole of it, or only its first triangle — a warm-up
/// draw (`warm_up.rs`), which makes the driver compile the program for the frame's state (the
/// work llvmpipe does at a program's first draw) for a frame's clear to wipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reach {
    Whole,
    FirstTriangle,
}

/// The grid's vertex array and index buffer.
pub(super) struct Grid {
    vertex_array: glow::VertexArray,
    indices: glow::Buffer,
    count: i32,
    mesh: i32,
    stride: i32,
    /// Bytes of the index buffer, as allocated.
    bytes: u64,
}

impl Grid {
    /// The mesh of every `stride`-th node of a grid of `nodes` per side (and the last).
    pub(super) fn new(gl: &glow::Context, nodes: usize, stride: usize) -> Result<Grid> {
        let mesh = mesh_nodes(nodes, stride);
        let indices = strip_indices(mesh);
        // SAFETY: GL calls on the current context; the buffers are this grid's.
        unsafe {
            let vertex_array = gl
                .create_vertex_array()
                .map_err(|e| anyhow!("vertex array: {e}"))?;
            let buffer = gl.create_buffer().map_err(|e| anyhow!("buffer: {e}"))?;
            gl.bind_vertex_array(Some(vertex_array));
            gl.bind_buffer(glow::ELEMENT_ARRAY_BUFFER, Some(buffer));
            gl.buffer_data_u8_slice(
                glow::ELEMENT_ARRAY_BUFFER,
                bytemuck::cast_slice(&indices),
                glow::STATIC_DRAW,
            );
            gl.bind_vertex_array(None);
            Ok(Grid {
                vertex_array,
                indices: buffer,
                count: indices.len() as i32,
                mesh: mesh as i32,
                stride: stride as i32,
                bytes: std::mem::size_of_val(indices.as_slice()) as u64,
            })
        }
    }

    /// Bytes of the index buffer, as allocated.
    pub(super) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Bytes of the index buffer, as GL reports its size.
    pub(super) fn reported_bytes(&self, gl: &glow::Context) -> u64 {
        // SAFETY: GL calls on the current context; the vertex array and buffer are this grid's.
        unsafe {
            gl.bind_vertex_array(Some(self.vertex_array));
            let size = gl.get_buffer_parameter_i32(glow::ELEMENT_ARRAY_BUFFER, glow::BUFFER_SIZE);
            gl.bind_vertex_array(None);
            size as u64
        }
    }

    /// Vertices per side.
    pub(super) fn mesh(&self) -> i32 {
        self.mesh
    }

    /// Nodes between vertices.
    pub(super) fn stride(&self) -> i32 {
        self.stride
    }

    /// Draws the cells as triangles with the bound program.
    pub(super) fn draw_triangles(&self, gl: &glow::Context) {
        let _ = self.draw_strip(gl, Reach::Whole);
    }

    /// Draws the strip's triangles, all of them or the first (a warm-up, [`Reach`]). Returns
    /// the number of indices drawn.
    fn draw_strip(&self, gl: &glow::Context, reach: Reach) -> i32 {
        let count = match reach {
            Reach::Whole => self.count,
            Reach::FirstTriangle => 3,
        };
        // SAFETY: GL calls on the current context; the vertex array is this grid's and holds
        // at least 3 indices (a mesh has at least 2 vertices a side).
        unsafe {
            gl.bind_vertex_array(Some(self.vertex_array));
            gl.draw_elements(glow::TRIANGLE_STRIP, count, glow::UNSIGNED_INT, 0);
        }
        count
    }

    /// Draws the triangles' edges, a row at a time (leaving out the joins, which lines would
    /// show).
    fn draw_edges(&self, gl: &glow::Context) {
        let n = self.mesh;
        // SAFETY: GL calls on the current context; the vertex array is this grid's and every
        // row's indices lie in its buffer.
        unsafe {
            gl.polygon_mode(glow::FRONT_AND_BACK, glow::LINE);
            gl.bind_vertex_array(Some(self.vertex_array));
            for j in 0..n - 1 {
                let first = j * (2 * n + 2);
                gl.draw_elements(glow::TRIANGLE_STRIP, 2 * n, glow::UNSIGNED_INT, 4 * first);
            }
            gl.polygon_mode(glow::FRONT_AND_BACK, glow::FILL);
        }
    }

    /// Draws every node as a point.
    fn draw_points(&self, gl: &glow::Context) {
        // SAFETY: GL calls on the current context; the vertex array is this grid's.
        unsafe {
            gl.bind_vertex_array(Some(self.vertex_array));
            gl.draw_arrays(glow::POINTS, 0, self.mesh * self.mesh);
        }
    }

    pub(super) fn delete(&self, gl: &glow::Context) {
        // SAFETY: GL calls on the current context; the objects are this grid's.
        unsafe {
            gl.delete_vertex_array(self.vertex_array);
            gl.delete_buffer(self.indices);
        }
    }
}

/// Which build of `surface`'s program a frame draws with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SurfaceVariant {
    /// With the far taps (`FAR_TAPS`: a far pixel is the mean of taps over its footprint);
    /// without, one shading a pixel (what llvmpipe draws in half the time,
    /// docs/pool-filtering.md).
    pub far_taps: bool,
    /// With the land (`POOL_LAND`: rays under water walk the land tiles for the rock,
    /// `land_search.glsl` `land_along`); without, the walk is compiled out (llvmpipe ran its
    /// code for every fragment though no land was there, docs/pool-performance.md).
    pub land: bool,
}

/// `surface`: the water, a build a [`SurfaceVariant`]: those without land built at once, those
/// with land on the first frame with land, and every build kept (land painted and erased again
/// compiles nothing). [`SurfaceProgram::prepare`] picks one each frame.
pub(super) struct SurfaceProgram {
    /// The builds made, the one without land or far taps first.
    builds: Vec<SurfaceBuild>,
    /// The index in `builds` of the one drawn with.
    current: usize,
    /// Whose cells the far taps count.
    cells: TapCells,
}

/// One build of `surface`'s program and its uniforms.
struct SurfaceBuild {
    variant: SurfaceVariant,
    /// Whose cells its far taps count (`None`: built without far taps).
    taps: Option<TapCells>,
    program: Program,
    shared: Shared,
    view_projection: Uniform,
    /// Whether it was drawn (a frame's pass or a warm-up).
    drawn: bool,
}

impl SurfaceBuild {
    fn new(gl: &glow::Context, variant: SurfaceVariant, cells: TapCells) -> Result<SurfaceBuild> {
        let taps = variant.far_taps.then_some(cells);
        let program = Program::new(gl, &surface_source(taps, variant.land))?;
        Ok(SurfaceBuild {
            variant,
            taps,
            shared: Shared::locate(gl, &program)?,
            view_projection: program.uniform(gl, "view_projection")?,
            program,
            drawn: false,
        })
    }
}

/// `surface`'s shaders with `defines` (`pool_shader!`'s).
macro_rules! surface_shader {
    ($defines:expr) => {
        pool_shader!("surface", "surface.vert", "surface.frag", $defines)
    };
}

/// `surface`'s shaders with the far taps counted by `taps` (`None`: without far taps), with
/// `land` or without.
fn surface_source(taps: Option<TapCells>, land: bool) -> ShaderSource {
    match (taps, land) {
        (None, false) => surface_shader!(""),
        (None, true) => surface_shader!("#define POOL_LAND\n"),
        (Some(TapCells::Mesh), false) => surface_shader!("#define FAR_TAPS\n"),
        (Some(TapCells::Mesh), true) => surface_shader!("#define FAR_TAPS\n#define POOL_LAND\n"),
        (Some(TapCells::Grid), false) => {
            surface_shader!("#define FAR_TAPS\n#define FAR_TAPS_BY_GRID\n")
        }
        (Some(TapCells::Grid), true) => {
            surface_shader!("#define FAR_TAPS\n#define FAR_TAPS_BY_GRID\n#define POOL_LAND\n")
        }
    }
}

/// Whose cells `far_tap_count` (`shaders/pool/common.glsl`) counts along a pixel's footprint:
/// the drawn mesh's (what the renderer draws with), or the grid's, as it counted before on
/// grids over 513 nodes (s times more taps), kept only for docs/pool-filtering.md's measurement of
/// two counts' aliasing (`tests/pool_render_strided.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TapCells {
    /// The drawn mesh's cells (`mesh_stride` nodes each).
    Mesh,
    /// The grid's cells (`FAR_TAPS_BY_GRID`).
    Grid,
}

impl SurfaceProgram {
    /// The builds without land, drawing without far taps until [`Self::prepare`]d.
    pub(super) fn new(gl: &glow::Context) -> Result<SurfaceProgram> {
        let mut program = SurfaceProgram {
            builds: Vec::new(),
            current: 0,
            cells: TapCells::Mesh,
        };
        program.build_landless(gl)?;
        Ok(program)
    }

    /// Builds the variants without land (those of the far taps counting `self.cells`).
    fn build_landless(&mut self, gl: &glow::Context) -> Result<()> {
        for far_taps in [false, true] {
            self.prepare(
                gl,
                SurfaceVariant {
                    far_taps,
                    land: false,
                },
            )?;
        }
        self.current = 0;
        Ok(())
    }

    /// Draws with `variant` from now on, building it if it is not yet built.
    pub(super) fn prepare(&mut self, gl: &glow::Context, variant: SurfaceVariant) -> Result<()> {
        self.current = self.build(gl, variant)?;
        Ok(())
    }

    /// The index in `builds` of `variant`'s build, made now if it is not yet built (also
    /// ahead of its first frame, `warm_up.rs`; the one drawn with stays).
    pub(super) fn build(&mut self, gl: &glow::Context, variant: SurfaceVariant) -> Result<usize> {
        Ok(
            match self.builds.iter().position(|b| b.variant == variant) {
                Some(index) => index,
                None => {
                    self.builds
                        .push(SurfaceBuild::new(gl, variant, self.cells)?);
                    self.builds.len() - 1
                }
            },
        )
    }

    /// Where `variant`'s build stands: `None` if it is not built, else whether it was drawn
    /// (a frame's pass or [`Self::draw_ahead`]).
    pub(super) fn ahead(&self, variant: SurfaceVariant) -> Option<bool> {
        self.builds
            .iter()
            .find(|b| b.variant == variant)
            .map(|b| b.drawn)
    }

    /// Draws `variant`'s build, if built, once with `values` over the first triangle of `grid`
    /// ([`Reach::FirstTriangle`]): a warm-up.
    pub(super) fn draw_ahead(
        &mut self,
        gl: &glow::Context,
        variant: SurfaceVariant,
        values: &FrameValues,
        grid: &Grid,
    ) {
        if let Some(index) = self.builds.iter().position(|b| b.variant == variant) {
            self.draw_build(index, gl, values, grid, Reach::FirstTriangle);
        }
    }

    /// The variants drawn at least once (a frame's pass or [`Self::draw_ahead`]).
    pub(super) fn drawn(&self) -> Vec<SurfaceVariant> {
        self.builds
            .iter()
            .filter(|b| b.drawn)
            .map(|b| b.variant)
            .collect()
    }

    /// The variant drawn with.
    pub(super) fn variant(&self) -> SurfaceVariant {
        self.builds[self.current].variant
    }

    /// The variants built, in the order they were, each with whose cells its far taps count
    /// (`None`: built without far taps).
    pub(super) fn built(&self) -> Vec<(SurfaceVariant, Option<TapCells>)> {
        self.builds.iter().map(|b| (b.variant, b.taps)).collect()
    }

    /// The uniforms the program drawn with uses.
    pub(super) fn active_uniforms(&self, gl: &glow::Context) -> Vec<String> {
        self.builds[self.current].program.active_uniforms(gl)
    }

    /// Counts the far taps by `cells`: the builds with far taps are dropped and made again,
    /// those without land and the one drawn with at once, the others when next drawn.
    pub(super) fn count_taps_by(&mut self, gl: &glow::Context, cells: TapCells) -> Result<()> {
        let variant = self.variant();
        self.cells = cells;
        for build in self.builds.iter().filter(|b| b.variant.far_taps) {
            build.program.delete(gl);
        }
        self.builds.retain(|b| !b.variant.far_taps);
        // The first build (no land, no far taps) is kept: drawn with should this fail.
        self.current = 0;
        self.build_landless(gl)?;
        self.prepare(gl, variant)
    }

    pub(super) fn draw(&mut self, gl: &glow::Context, values: &FrameValues, grid: &Grid) {
        self.draw_build(self.current, gl, values, grid, Reach::Whole);
    }

    fn draw_build(
        &mut self,
        index: usize,
        gl: &glow::Context,
        values: &FrameValues,
        grid: &Grid,
        reach: Reach,
    ) {
        let build = &mut self.builds[index];
        build.program.bind(gl);
        build.shared.set(gl, values);
        build.view_projection.set(gl, values.view_projection);
        build.shared.set_grid(gl, grid);
        // Drawn only if the draw drew something (a warm-up that draws nothing compiles nothing).
        build.drawn |= grid.draw_strip(gl, reach) > 0;
    }

    pub(super) fn delete(&self, gl: &glow::Context) {
        for build in &self.builds {
            build.program.delete(gl);
        }
    }
}

/// `land`: shores and islands.
pub(super) struct LandProgram {
    program: Program,
    shared: Shared,
    view_projection: Uniform,
    /// Whether it was drawn (a frame's pass or a warm-up).
    drawn: bool,
}

impl LandProgram {
    pub(super) fn new(gl: &glow::Context) -> Result<LandProgram> {
        let program = Program::new(gl, &pool_shader!("land", "land.vert", "land.frag"))?;
        Ok(LandProgram {
            shared: Shared::locate(gl, &program)?,
            view_projection: program.uniform(gl, "view_projection")?,
            program,
            drawn: false,
        })
    }

    /// Draws `reach` of `grid` (the first triangle: a warm-up, [`Reach`]).
    pub(super) fn draw(
        &mut self,
        gl: &glow::Context,
        values: &FrameValues,
        grid: &Grid,
        reach: Reach,
    ) {
        self.program.bind(gl);
        self.shared.set(gl, values);
        self.view_projection.set(gl, values.view_projection);
        self.shared.set_grid(gl, grid);
        self.drawn |= grid.draw_strip(gl, reach) > 0;
    }

    /// Whether it was drawn (a frame's pass or a warm-up).
    pub(super) fn drawn(&self) -> bool {
        self.drawn
    }

    pub(super) fn delete(&self, gl: &glow::Context) {
        self.program.delete(gl);
    }
}

/// `wireframe` and `nodes`: the mesh coloured by height.
pub(super) struct HeightProgram {
    program: Program,
    shared: Shared,
    view_projection: Uniform,
    point_size: Uniform,
    height_scale: Uniform,
}

impl HeightProgram {
    pub(super) fn new(gl: &glow::Context) -> Result<HeightProgram> {
        let program = Program::new(gl, &pool_shader!("height", "surface.vert", "height.frag"))?;
        Ok(HeightProgram {
            shared: Shared::locate(gl, &program)?,
            view_projection: program.uniform(gl, "view_projection")?,
            point_size: program.uniform(gl, "point_size")?,
            height_scale: program.uniform(gl, "height_scale")?,
            program,
        })
    }

    fn bind(&self, gl: &glow::Context, values: &FrameValues, point_size: f32, grid: &Grid) {
        self.program.bind(gl);
        self.shared.set(gl, values);
        self.shared.set_grid(gl, grid);
        self.view_projection.set(gl, values.view_projection);
        self.point_size.set(gl, point_size);
        // A centimetre on a 2 m pool at full colour.
        self.height_scale.set(gl, 0.005 * values.size);
    }

    /// `wireframe`: the triangles' edges.
    pub(super) fn wireframe(&self, gl: &glow::Context, values: &FrameValues, grid: &Grid) {
        self.bind(gl, values, 1.0, grid);
        grid.draw_edges(gl);
    }

    /// `nodes`: points of `size` pixels.
    pub(super) fn nodes(&self, gl: &glow::Context, values: &FrameValues, size: f32, grid: &Grid) {
        self.bind(gl, values, size, grid);
        grid.draw_points(gl);
    }

    pub(super) fn delete(&self, gl: &glow::Context) {
        self.program.delete(gl);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_grids_are_drawn_with_at_most_the_display_mesh() {
        for (nodes, stride) in [(8, 1), (256, 1), (513, 1), (514, 2), (1024, 2), (4096, 8)] {
            assert_eq!(display_stride(nodes), stride, "{nodes}");
            let mesh = display_mesh_nodes(nodes);
            assert!(mesh <= DISPLAY_MESH);
            // The last vertex is the edge's node.
            assert!((mesh - 1) * stride >= nodes - 1 && (mesh - 2) * stride < nodes - 1);
        }
    }

    #[test]
    fn strips_cover_every_cell_with_the_originals_two_triangles() {
        let n = 4;
        let indices = strip_indices(n);
        assert_eq!(indices.len(), (n - 1) * (2 * n + 2) - 2);
        let mut triangles = Vec::new();
        for k in 2..indices.len() {
            let mut t = [indices[k - 2], indices[k - 1], indices[k]];
            t.sort_unstable();
            if t[0] != t[1] && t[1] != t[2] {
                triangles.push(t);
            }
        }
        assert_eq!(triangles.len(), 2 * (n - 1) * (n - 1));
        // Each row's own part starts at j·(2N + 2) with (0, j).
        for j in 0..n - 1 {
            assert_eq!(indices[j * (2 * n + 2)], (j * n) as u32);
            assert_eq!(
                indices[j * (2 * n + 2) + 2 * n - 1],
                ((j + 1) * n + n - 1) as u32
            );
        }
        let at = |i: usize, j: usize| (j * n + i) as u32;
        for j in 0..n - 1 {
            for i in 0..n - 1 {
                let mut first = [at(i, j), at(i + 1, j), at(i, j + 1)];
                let mut second = [at(i, j + 1), at(i + 1, j), at(i + 1, j + 1)];
                first.sort_unstable();
                second.sort_unstable();
                assert!(triangles.contains(&first) && triangles.contains(&second));
            }
        }
    }
}
