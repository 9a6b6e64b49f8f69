//! Land's programs made ahead of the first frame with land ([`PoolRenderer::expect_land`]).
//! Without land the `surface` pass draws its build without land and the `land` pass is left
//! out; the first frame with land then links `surface`'s build with land and llvmpipe compiles
//! both programs to machine code at their first draw, for the frame's state: a pause of up to a
//! second with a cold shader cache, most of it that first draw (docs/pool-performance.md). Told
//! that land may come (the viewer: the paint tool chosen), the renderer links the build with
//! land on one frame, then draws `land` on the next and the build on the one after (one
//! program a frame, so the longest frame is one compile) over the mesh's first triangle, in
//! the `surface` and `land` passes' state (the frame target, the depth test, the textures,
//! tiny scratch land textures of the land's formats), before the frame is cleared: the
//! clear wipes what they drew, so the frames' pictures are those of a renderer told nothing.
//! A frame with land still draws with land whatever was made ahead (a build not yet made is
//! made in that frame, as before).

use super::grid::{Reach, SurfaceVariant};
use super::land::LandTexture;
use super::land_tiles::land_tiles_side;
use super::shared::{FrameValues, TextureUnit};
use super::PoolRenderer;
use crate::gfx::check_gl;
use anyhow::Result;
use glow::HasContext;

impl PoolRenderer {
    /// Land may come soon, told for the next frame only (the viewer tells it every frame the
    /// paint tool is chosen): on frames without land so told, the programs that draw land are
    /// made ahead, one step a frame (the `surface` build with land for the frame's far taps
    /// linked, then a warm-up draw of `land`, then one of the build), so that the first frame
    /// with land compiles nothing. Pictures are unchanged.
    pub fn expect_land(&mut self) {
        self.land_expected = true;
    }

    /// The builds of the `surface` pass's program drawn at least once (a frame's pass or a
    /// warm-up), in the order they were built.
    pub fn surface_variants_drawn(&self) -> Vec<SurfaceVariant> {
        self.programs.surface.drawn()
    }

    /// Whether the `land` pass's program was drawn (a frame with land or a warm-up).
    pub fn land_program_drawn(&self) -> bool {
        self.programs.land.drawn()
    }

    /// One step of making land's programs ahead, on a frame without land whose frame target
    /// is bound and not yet cleared ([`Self::expect_land`] told for this frame). A build that
    /// fails to link is noted once and not tried again; the frame goes on.
    pub(super) fn make_land_ahead(&mut self, values: &FrameValues, far_taps: bool) -> Result<()> {
        if self.has_land || self.land_ahead_refused {
            return Ok(());
        }
        let variant = SurfaceVariant {
            far_taps,
            land: true,
        };
        let gl = std::rc::Rc::clone(&self.gl);
        match self.programs.surface.ahead(variant) {
            None => {
                // This frame links it; the next draws it.
                if let Err(error) = self.programs.surface.build(&gl, variant) {
                    eprintln!("note: the pool's land programs not made ahead: {error:#}");
                    self.land_ahead_refused = true;
                }
                return Ok(());
            }
            Some(true) if self.programs.land.drawn() => return Ok(()),
            Some(_) => {}
        }
        let grid = self.display.as_ref().unwrap_or(&self.grid);
        // Scratch textures of the land's formats, tiny: llvmpipe's compiled variant depends on
        // the formats, filters, wraps and whether the sizes are powers of two, not on the sizes
        // (docs/pool-performance.md: the first frame with land as fast as with full-size ones).
        let tiny = |side: usize| if side.is_power_of_two() { 2 } else { 3 };
        // SAFETY: GL calls on the current context; the scratch textures are made, bound to
        // the land's units (unbound before: no land) and deleted here.
        unsafe {
            // Made on the land's unit (making a texture binds it to the active unit, the
            // caustics' here), the active unit set back after.
            let active = gl.get_parameter_i32(glow::ACTIVE_TEXTURE) as u32;
            self.bind(TextureUnit::Land, glow::TEXTURE_2D, None);
            let made = LandTexture::allocate_sized(
                &gl,
                tiny(self.nodes),
                tiny(land_tiles_side(self.nodes)),
            );
            let (texture, tiles) = match made {
                Ok(made) => made,
                Err(error) => {
                    gl.active_texture(active);
                    return Err(error);
                }
            };
            self.bind(TextureUnit::Land, glow::TEXTURE_2D, Some(texture));
            self.bind(TextureUnit::LandTiles, glow::TEXTURE_2D, Some(tiles));
            gl.enable(glow::DEPTH_TEST);
            // One program a frame: the longest frame is the longer compile, not both.
            if !self.programs.land.drawn() {
                self.programs
                    .land
                    .draw(&gl, values, grid, Reach::FirstTriangle);
            } else {
                self.programs.surface.draw_ahead(&gl, variant, values, grid);
            }
            gl.disable(glow::DEPTH_TEST);
            self.bind(TextureUnit::Land, glow::TEXTURE_2D, None);
            self.bind(TextureUnit::LandTiles, glow::TEXTURE_2D, None);
            gl.delete_texture(texture);
            gl.delete_texture(tiles);
            gl.active_texture(active);
        }
        check_gl(&gl, "warm-up")
    }
}
