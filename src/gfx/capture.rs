//! PNG capture: the colour of a framebuffer read back into an image, and the image written as a
//! PNG (screenshots, `fluidlab render`'s frames).

use anyhow::{Context, Result};
use glow::HasContext;
use std::path::Path;

/// An image read back from the GPU: RGBA8, rows top to bottom.
pub type Image = image::RgbaImage;

/// Reads the colour of `framebuffer` (`None`: the default one) into an image. The image's
/// memory (4 bytes a pixel, 1 GiB at 16384²) is asked for first: where it cannot be had the
/// error says so and names the size, instead of the allocator aborting the program.
pub fn read_image(
    gl: &glow::Context,
    framebuffer: Option<glow::Framebuffer>,
    width: u32,
    height: u32,
) -> Result<Image> {
    let bytes = width as usize * height as usize * 4;
    let mut pixels = Vec::new();
    pixels.try_reserve_exact(bytes).map_err(|_| {
        anyhow::anyhow!(
            "cannot read back a {width}×{height} picture: its {} of host memory could not be \
             allocated; try a smaller --size or window",
            crate::host::format_bytes(bytes as u64)
        )
    })?;
    pixels.resize(bytes, 0);
    // SAFETY: GL calls on the current context; the destination holds width × height ×
    // channels values, what the read-back writes with this pack alignment.
    unsafe {
        gl.bind_framebuffer(glow::READ_FRAMEBUFFER, framebuffer);
        gl.pixel_store_i32(glow::PACK_ALIGNMENT, 1);
        gl.read_pixels(
            0,
            0,
            width as i32,
            height as i32,
            glow::RGBA,
            glow::UNSIGNED_BYTE,
            glow::PixelPackData::Slice(&mut pixels),
        );
        gl.bind_framebuffer(glow::READ_FRAMEBUFFER, None);
    }
    // GL rows run bottom to top; images top to bottom: swapped in place (no second copy).
    let row = width as usize * 4;
    let rows = height as usize;
    for top in 0..rows / 2 {
        let (upper, lower) = pixels.split_at_mut((rows - 1 - top) * row);
        upper[top * row..(top + 1) * row].swap_with_slice(&mut lower[..row]);
    }
    for alpha in pixels.iter_mut().skip(3).step_by(4) {
        *alpha = 255;
    }
    Ok(Image::from_raw(width, height, pixels).unwrap_or_default())
}

/// Writes `image` as a PNG atomically (`.NAME.partial`, then renamed), creating the parent
/// directory.
pub fn save_png(image: &Image, path: &Path) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create the directory {}", parent.display()))?;
    }
    // Encoded straight into a temporary file, then renamed: an interrupted render leaves whole
    // PNGs only, and a large picture needs no second copy in memory.
    crate::output::write_atomically(path, |out| {
        use image::ImageEncoder;
        image::codecs::png::PngEncoder::new(out)
            .write_image(
                image.as_raw(),
                image.width(),
                image.height(),
                image::ExtendedColorType::Rgba8,
            )
            .map_err(std::io::Error::other)
    })
    .with_context(|| format!("cannot write the PNG {}", path.display()))
}
