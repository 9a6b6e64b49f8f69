//! The particles' and nodes' arrays into the renderer's GL buffers through CUDA–GL interop
//! (`cuda::interop::GlInterop`, one registration per buffer): the fountain's by a
//! device-to-device copy into the mapped buffer, a body's skin and its nodes' and springs'
//! colours by the `surface` and `body_points` kernels writing the mapped buffers, so a drawn
//! frame copies nothing through the host. Where a buffer cannot be registered (GL not on this
//! GPU) the caller reads the state back and builds and uploads it itself.

use super::kernels::BLOCK;
use super::{
    cuda, BodyBuffers, Buffers, CudaParticles, FountainBuffers, GlBody, GlBuffers, GlWater,
    SkinBuffers,
};
use crate::cuda::launch::per_element;
use crate::cuda::{CudaError, Module};
use crate::sims::particles::render::Skin;
use cudarc::driver::{CudaStream, DevicePtr};
use std::sync::Arc;

impl CudaParticles {
    /// Copies the positions, velocities, ages, drawing order and tags into the renderer's GL
    /// `buffers` through CUDA–GL interop (no host copy), and builds the basin's water mesh
    /// there from its heights (the `water` kernel). `Ok(false)`: a buffer could not be
    /// shared with CUDA here (said once on stderr): read the state back
    /// ([`CudaParticles::download_fountain`], [`CudaParticles::download_body`]) and upload it.
    /// The GL context that owns the buffers must be current on this thread. Not yet run on a
    /// GPU.
    pub fn write_gl(&mut self, buffers: GlBuffers) -> Result<bool, CudaError> {
        self.context
            .bind_to_thread()
            .map_err(cuda("binding the CUDA context"))?;
        let n = self.totals.count;
        let stream = &self.stream;
        // Per buffer: the GL name asked for, and the device array (pointer, bytes) it gets.
        type Source = (Option<u32>, Option<(u64, usize)>);
        let sources: [Source; 5] = match &self.buffers {
            Buffers::Fountain(b) => [
                (
                    buffers.position,
                    Some((b.position.device_ptr(stream).0, 12 * n)),
                ),
                (
                    buffers.velocity,
                    Some((b.velocity.device_ptr(stream).0, 12 * n)),
                ),
                (buffers.age, Some((b.age.device_ptr(stream).0, 4 * n))),
                (buffers.order, Some((b.order.device_ptr(stream).0, 4 * n))),
                (buffers.tag, Some((b.tag.device_ptr(stream).0, 4 * n))),
            ],
            Buffers::Body(b) => [
                (
                    buffers.position,
                    Some((b.position.device_ptr(stream).0, 12 * n)),
                ),
                (
                    buffers.velocity,
                    Some((b.velocity.device_ptr(stream).0, 12 * n)),
                ),
                (None, None),
                (None, None),
                (None, None),
            ],
        };
        let mut shared = true;
        for (interop, (gl, source)) in self.interop.iter_mut().zip(sources) {
            let (Some(gl), Some((from, bytes))) = (gl, source) else {
                continue;
            };
            if bytes == 0 {
                continue;
            }
            let raw = stream.cu_stream();
            let write = |to: cudarc::driver::sys::CUdeviceptr| {
                // SAFETY: `to` is a mapped GL buffer of at least `bytes` (write_buffer checks),
                // `from` a live allocation of this context holding them.
                unsafe { cudarc::driver::result::memcpy_dtod_async(to, from, bytes, raw) }
                    .map_err(cuda("copying into a GL buffer"))
            };
            // SAFETY: the solver's stream, its context bound above; the caller has the GL
            // context current.
            shared &= unsafe { interop.write_buffer(raw, gl, bytes, write)? };
        }
        if let (Some(water), Buffers::Fountain(b)) = (buffers.water, &self.buffers) {
            let interop = &mut self.interop[5];
            shared &= write_water(&self.module, &self.stream, b, water, interop)?;
        }
        Ok(shared)
    }

    /// Builds a body's skin (positions, smooth normals, texture coordinates: the `surface`
    /// kernel) and its nodes' and springs' coloured points (`body_points`) straight into the
    /// renderer's GL buffers `gl` through interop, from the nodes on the GPU. The skin's layout
    /// is uploaded when it is new. `Ok(false)`: a buffer could not be shared with CUDA here
    /// (said once on stderr): read the body back and build them on the host. The GL context
    /// that owns the buffers must be current on this thread. Not yet run on a GPU.
    pub fn write_body_gl(&mut self, gl: GlBody) -> Result<bool, CudaError> {
        self.context
            .bind_to_thread()
            .map_err(cuda("binding the CUDA context"))?;
        let Buffers::Body(b) = &mut self.buffers else {
            return Err(CudaError::Setting("not a body solver".into()));
        };
        let (m, stream) = (&self.module, &self.stream);
        let raw = stream.cu_stream();
        let [skin_interop, points_interop, lines_interop, ..] = &mut self.interop;
        let mut shared = true;
        if let Some((buffer, layout)) = gl.skin {
            if b.skin.as_ref().is_none_or(|s| s.layout != *layout) {
                b.skin = Some(upload_skin(stream, layout)?);
            }
            let skin = b.skin.as_ref().expect("uploaded above");
            let vertices = layout.len();
            if vertices > 0 {
                let write = |out: cudarc::driver::sys::CUdeviceptr| {
                    let args = (
                        &(vertices as u32),
                        &b.position,
                        &skin.node,
                        &skin.uv,
                        &skin.indices,
                        &skin.vertex_start,
                        &skin.vertex_triangles,
                        &out,
                    );
                    // SAFETY: particles.cu's parameters; `out` is a mapped GL buffer of at
                    // least 32 bytes per vertex (write_buffer checks), the layout's arrays
                    // index nodes of this body.
                    unsafe { m.launch("surface", stream, per_element(vertices, BLOCK), args) }
                };
                // SAFETY: the solver's stream, its context bound above; the caller has the GL
                // context current.
                shared &= unsafe { skin_interop.write_buffer(raw, buffer, 32 * vertices, write)? };
            }
        }
        if let (Some(points), Some(lines)) = (gl.points, gl.lines) {
            shared &= write_points(
                m,
                stream,
                b,
                (points, lines),
                &gl,
                points_interop,
                lines_interop,
            )?;
        }
        Ok(shared)
    }

    /// Unregisters the GL buffers (while their context is current).
    pub fn release_gl(&mut self) {
        if self.interop.iter().any(|i| i.is_registered()) && self.context.bind_to_thread().is_ok() {
            let _ = self.stream.synchronize();
            for interop in &mut self.interop {
                interop.release();
            }
        }
    }
}

/// A skin's layout onto the GPU.
fn upload_skin(stream: &Arc<CudaStream>, layout: &Skin) -> Result<SkinBuffers, CudaError> {
    let alloc = cuda("copying the skin's layout to the GPU");
    let copy = |v: &[u32]| stream.clone_htod(if v.is_empty() { &[0u32][..] } else { v });
    let uv: Vec<f32> = bytemuck::cast_slice(&layout.uv).to_vec();
    Ok(SkinBuffers {
        layout: layout.clone(),
        node: copy(&layout.node).map_err(&alloc)?,
        uv: stream
            .clone_htod(if uv.is_empty() { &[0.0f32][..] } else { &uv })
            .map_err(&alloc)?,
        indices: copy(&layout.indices).map_err(&alloc)?,
        vertex_start: copy(&layout.vertex_start).map_err(&alloc)?,
        vertex_triangles: copy(&layout.vertex_triangles).map_err(&alloc)?,
    })
}

/// `body_points` into the mapped points and lines buffers (one launch, both mapped).
fn write_points(
    m: &Module,
    stream: &CudaStream,
    b: &BodyBuffers,
    (points, lines): (u32, u32),
    gl: &GlBody,
    points_interop: &mut crate::cuda::interop::GlInterop,
    lines_interop: &mut crate::cuda::interop::GlInterop,
) -> Result<bool, CudaError> {
    let (nodes, springs) = (b.nodes, b.spring_count);
    if nodes == 0 {
        return Ok(true);
    }
    let raw = stream.cu_stream();
    let mut launched = false;
    let write_points = |point_out: cudarc::driver::sys::CUdeviceptr| {
        let write_lines = |line_out: cudarc::driver::sys::CUdeviceptr| {
            let args = (
                &(nodes as u32),
                &(springs as u32),
                &gl.mass,
                &gl.red_energy,
                &gl.energy_decades,
                &b.position,
                &b.velocity,
                &b.spring_a,
                &b.spring_b,
                &b.spring_rest,
                &b.spring_stiffness,
                &point_out,
                &line_out,
            );
            // SAFETY: particles.cu's parameters; the mapped buffers hold 24 bytes per node and
            // 48 per spring (write_buffer checks), the springs' ends are nodes of this body.
            unsafe {
                m.launch(
                    "body_points",
                    stream,
                    per_element(nodes + springs, BLOCK),
                    args,
                )
            }
        };
        // SAFETY: as write_body_gl; the lines buffer is another GL buffer.
        let shared =
            unsafe { lines_interop.write_buffer(raw, lines, 48 * springs.max(1), write_lines)? };
        launched = shared;
        Ok::<(), CudaError>(())
    };
    // SAFETY: as write_body_gl.
    let shared = unsafe { points_interop.write_buffer(raw, points, 24 * nodes, write_points)? };
    Ok(shared && launched)
}

/// `water` into the mapped water mesh.
fn write_water(
    m: &Module,
    stream: &CudaStream,
    b: &FountainBuffers,
    water: GlWater,
    interop: &mut crate::cuda::interop::GlInterop,
) -> Result<bool, CudaError> {
    let nodes = b.height.len();
    let n = (nodes as f64).sqrt().round() as u32;
    let write = |out: cudarc::driver::sys::CUdeviceptr| {
        let args = (
            &n,
            &water.h,
            &water.basin,
            &water.level,
            &water.gain,
            &b.height,
            &out,
        );
        // SAFETY: particles.cu's parameters; the mapped buffer holds 24 bytes per node
        // (write_buffer checks), the heights n² nodes.
        unsafe { m.launch("water", stream, per_element(nodes, BLOCK), args) }
    };
    // SAFETY: the solver's stream, its context bound by the caller; the GL context current.
    unsafe { interop.write_buffer(stream.cu_stream(), water.buffer, 24 * nodes, write) }
}
