//! PNG capture: the colour of a framebuffer read back into an image, and the image written as a
//! PNG (screenshots, `fluidlab render`'s frames).

use anyhow::{Context, Result};
use glow::HasContext;
use std::path::Path;

/// An image read back from the GPU: RGBA8, rows top to bottom.
pub type Image = image::RgbaImage;

/// Reads the colour of `framebuffer` (`None`: the default one) into an image.
pub fn read_image(
    gl: &glow::Context,
    framebuffer: Option<glow::Framebuffer>,
    width: u32,
    height: u32,
) -> Image {
    let mut pixels = vec![0u8; width as usize * height as usize * 4];
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
    // GL rows run bottom to top; images top to bottom.
    let row = width as usize * 4;
    let flipped: Vec<u8> = pixels.chunks(row).rev().flatten().copied().collect();
    let mut image = Image::from_raw(width, height, flipped).unwrap_or_default();
    for pixel in image.pixels_mut() {
        pixel[3] = 255;
    }
    image
}

/// Writes `image` as a PNG atomically (`.NAME.partial`, then renamed), creating the parent
/// directory.
pub fn save_png(image: &Image, path: &Path) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create the directory {}", parent.display()))?;
    }
    // Encoded in memory, then written through a temporary file and renamed: an interrupted
    // render leaves whole PNGs only.
    let mut png = std::io::Cursor::new(Vec::new());
    image
        .write_to(&mut png, image::ImageFormat::Png)
        .with_context(|| format!("cannot encode the PNG {}", path.display()))?;
    crate::output::write_atomically(path, |out| {
        use std::io::Write;
        out.write_all(png.get_ref())
    })
    .with_context(|| format!("cannot write the PNG {}", path.display()))
}
