//! The state's copies between the host and the GPU (part of `mod.rs`): a fountain's particles
//! and basin, a body's nodes, pins, springs' stiffnesses and rest lengths, the counts and
//! landings. A live edit sends only what it changed (`sims::particles::edit_reach`): the
//! springs' stiffnesses alone ([`CudaParticles::upload_stiffness`]), or the whole state; the
//! grabber the node it holds alone ([`CudaParticles::upload_node`]).

use super::buffers::{basin_fits, Buffers};
use super::{cuda, flat, CudaParticles};
use crate::cuda::launch::read_back;
use crate::cuda::CudaError;
use crate::sims::particles::body::Body;
use crate::sims::particles::fountain::Fountain;
use crate::sims::particles::grab::NodeEdit;
use crate::sims::pool::surface::Surface;
use glam::Vec3;

impl CudaParticles {
    /// Replaces the fountain's state on the GPU with `f`'s (particles and basin), first making
    /// the buffers again where `f` no longer fits them ([`Room::fitting`]).
    pub fn upload_fountain(&mut self, f: &Fountain) -> Result<(), CudaError> {
        let Buffers::Fountain(b) = &mut self.buffers else {
            return Err(CudaError::Setting("not a fountain solver".into()));
        };
        let s = &self.stream;
        // A live edit of the basin's nodes per side or of max particles (sim_edit.rs): the
        // buffers made again at the state's size before it is uploaded.
        let room = b.room().fitting(f);
        b.refit(s, room)?;
        let copy = cuda("copying the fountain to the GPU");
        let n = f.len();
        if n > 0 {
            s.memcpy_htod(flat(&f.position), &mut b.position.slice_mut(..3 * n))
                .map_err(&copy)?;
            s.memcpy_htod(flat(&f.velocity), &mut b.velocity.slice_mut(..3 * n))
                .map_err(&copy)?;
            s.memcpy_htod(&f.age, &mut b.age.slice_mut(..n))
                .map_err(&copy)?;
            s.memcpy_htod(&f.hits, &mut b.hits.slice_mut(..n))
                .map_err(&copy)?;
            // A particle without a tag (made by hand) draws as its index, as the CPU path.
            let tag: Vec<u32> = (0..n)
                .map(|k| f.tag.get(k).copied().unwrap_or(k as u32))
                .collect();
            s.memcpy_htod(&tag, &mut b.tag.slice_mut(..n))
                .map_err(&copy)?;
        }
        s.memcpy_htod(&f.surface.height, &mut b.height)
            .map_err(&copy)?;
        s.memcpy_htod(&f.surface.velocity, &mut b.basin_velocity)
            .map_err(&copy)?;
        s.memcpy_htod(&f.surface.flags, &mut b.basin_flags)
            .map_err(&copy)?;
        s.memcpy_htod(&[n as u32, 0], &mut b.tally).map_err(&copy)?;
        s.synchronize().map_err(&copy)?;
        self.totals.count = n;
        Ok(())
    }

    /// The fountain's particles, basin and drawing order from the GPU into `f` and `order`.
    pub fn download_fountain(
        &self,
        f: &mut Fountain,
        order: &mut Vec<u32>,
    ) -> Result<(), CudaError> {
        let Buffers::Fountain(b) = &self.buffers else {
            return Err(CudaError::Setting("not a fountain solver".into()));
        };
        basin_fits(b, &f.surface)?;
        let s = &self.stream;
        let copy = cuda("copying the fountain from the GPU");
        let n = self.totals.count;
        let mut flat_position = vec![0.0f32; 3 * n];
        let mut flat_velocity = vec![0.0f32; 3 * n];
        f.age.resize(n, 0.0);
        f.hits.resize(n, 0);
        f.tag.resize(n, 0);
        order.resize(n, 0);
        if n > 0 {
            s.memcpy_dtoh(&b.position.slice(..3 * n), &mut flat_position)
                .map_err(&copy)?;
            s.memcpy_dtoh(&b.velocity.slice(..3 * n), &mut flat_velocity)
                .map_err(&copy)?;
            s.memcpy_dtoh(&b.age.slice(..n), &mut f.age)
                .map_err(&copy)?;
            s.memcpy_dtoh(&b.hits.slice(..n), &mut f.hits)
                .map_err(&copy)?;
            s.memcpy_dtoh(&b.tag.slice(..n), &mut f.tag)
                .map_err(&copy)?;
            s.memcpy_dtoh(&b.order.slice(..n), order).map_err(&copy)?;
        }
        s.memcpy_dtoh(&b.height, &mut f.surface.height)
            .map_err(&copy)?;
        s.memcpy_dtoh(&b.basin_velocity, &mut f.surface.velocity)
            .map_err(&copy)?;
        s.synchronize().map_err(&copy)?;
        f.position = bytemuck::pod_collect_to_vec::<f32, Vec3>(&flat_position);
        f.velocity = bytemuck::pod_collect_to_vec::<f32, Vec3>(&flat_velocity);
        Ok(())
    }

    /// Reads the basin's heights back into `surface` (the renderer's water, when the
    /// particles go to GL through interop): n² floats, the particles stay on the GPU.
    pub fn download_basin(&self, surface: &mut Surface) -> Result<(), CudaError> {
        let Buffers::Fountain(b) = &self.buffers else {
            return Err(CudaError::Setting("not a fountain solver".into()));
        };
        basin_fits(b, surface)?;
        let copy = cuda("copying the basin from the GPU");
        read_back(&self.stream, &b.height, &mut surface.height, copy)
    }

    /// Replaces the body's state on the GPU with `b`'s (positions, previous, velocities,
    /// forces, pins, stiffness). Its shape (nodes, triangles, springs) must be the solver's.
    pub fn upload_body(&mut self, body: &Body) -> Result<(), CudaError> {
        let Buffers::Body(b) = &mut self.buffers else {
            return Err(CudaError::Setting("not a body solver".into()));
        };
        if body.len() != b.nodes
            || body.triangles.len() != b.triangles_count
            || body.springs.len() != b.spring_count
        {
            return Err(CudaError::Setting(
                "the body's shape is not the solver's".into(),
            ));
        }
        let s = &self.stream;
        let copy = cuda("copying the body to the GPU");
        s.memcpy_htod(flat(&body.position), &mut b.position)
            .map_err(&copy)?;
        s.memcpy_htod(flat(&body.previous), &mut b.previous)
            .map_err(&copy)?;
        s.memcpy_htod(flat(&body.velocity), &mut b.velocity)
            .map_err(&copy)?;
        s.memcpy_htod(flat(&body.force), &mut b.force)
            .map_err(&copy)?;
        let pinned: Vec<u8> = body.pinned.iter().map(|&p| u8::from(p)).collect();
        s.memcpy_htod(&pinned, &mut b.pinned).map_err(&copy)?;
        self.upload_stiffness(body)?;
        self.totals.count = body.len();
        self.contacts_stale();
        Ok(())
    }

    /// The links' and springs' stiffnesses on the GPU from `body`'s (a live edit of the
    /// stiffness that switches no spring kind on or off: nothing else is sent or read back).
    /// Waits for the copies.
    pub fn upload_stiffness(&mut self, body: &Body) -> Result<(), CudaError> {
        let Buffers::Body(b) = &mut self.buffers else {
            return Err(CudaError::Setting("not a body solver".into()));
        };
        if body.springs.len() != b.spring_count {
            return Err(CudaError::Setting(
                "the body's springs are not the solver's".into(),
            ));
        }
        let s = &self.stream;
        let copy = cuda("copying the springs' stiffnesses to the GPU");
        if !body.springs.is_empty() {
            let link: Vec<f32> = body.links.iter().map(|l| l.stiffness).collect();
            let spring: Vec<f32> = body.springs.iter().map(|s| s.stiffness).collect();
            s.memcpy_htod(&link, &mut b.link_stiffness).map_err(&copy)?;
            s.memcpy_htod(&spring, &mut b.spring_stiffness)
                .map_err(&copy)?;
        }
        s.synchronize().map_err(&copy)
    }

    /// The springs' rest lengths on the GPU from `body`'s (springs growing in, `growth.rs`).
    pub fn upload_rest(&mut self, body: &Body) -> Result<(), CudaError> {
        let Buffers::Body(b) = &mut self.buffers else {
            return Err(CudaError::Setting("not a body solver".into()));
        };
        if body.springs.len() != b.spring_count || body.springs.is_empty() {
            return Err(CudaError::Setting(
                "the body's springs are not the solver's".into(),
            ));
        }
        let link: Vec<f32> = body.links.iter().map(|l| l.rest).collect();
        let spring: Vec<f32> = body.springs.iter().map(|s| s.rest).collect();
        let s = &self.stream;
        let copy = cuda("copying the rest lengths to the GPU");
        s.memcpy_htod(&link, &mut b.link_rest).map_err(&copy)?;
        s.memcpy_htod(&spring, &mut b.spring_rest).map_err(&copy)?;
        s.synchronize().map_err(&copy)?;
        Ok(())
    }

    /// The links' and springs' rest lengths on the GPU (the check of [`Self::upload_rest`],
    /// `live_edit_check.rs`).
    pub fn download_rest(&self) -> Result<(Vec<f32>, Vec<f32>), CudaError> {
        let Buffers::Body(b) = &self.buffers else {
            return Err(CudaError::Setting("not a body solver".into()));
        };
        if b.spring_count == 0 {
            return Ok((Vec::new(), Vec::new()));
        }
        let s = &self.stream;
        let copy = cuda("copying the rest lengths from the GPU");
        let mut link = vec![0.0f32; 2 * b.spring_count];
        let mut spring = vec![0.0f32; b.spring_count];
        s.memcpy_dtoh(&b.link_rest, link.as_mut_slice())
            .map_err(&copy)?;
        s.memcpy_dtoh(&b.spring_rest, spring.as_mut_slice())
            .map_err(&copy)?;
        s.synchronize().map_err(&copy)?;
        Ok((link, spring))
    }

    /// The body's nodes' positions from the GPU (12 bytes a node; what the grabber's press
    /// picks from).
    pub fn download_positions(&self) -> Result<Vec<Vec3>, CudaError> {
        let Buffers::Body(b) = &self.buffers else {
            return Err(CudaError::Setting("not a body solver".into()));
        };
        let mut flat = vec![0.0f32; 3 * b.nodes];
        let copy = cuda("copying the body's positions from the GPU");
        read_back(&self.stream, &b.position, &mut flat, copy)?;
        Ok(bytemuck::pod_collect_to_vec(&flat))
    }

    /// The grabber's edit of the node it holds on the GPU (`grab.rs` [`NodeEdit`]): its place
    /// as position and previous position (24 bytes) and its pin (1 byte), whichever the edit
    /// sets; nothing else is sent or read back. The self-collision lists are kept: the drift
    /// check rebuilds them when the node moved far enough, as on the CPU. Waits for the copies.
    pub fn upload_node(&mut self, edit: &NodeEdit) -> Result<(), CudaError> {
        let Buffers::Body(b) = &mut self.buffers else {
            return Err(CudaError::Setting("not a body solver".into()));
        };
        let k = edit.node;
        if k >= b.nodes {
            return Err(CudaError::Setting(format!(
                "the grabber's node {k} is not one of the solver's {} nodes",
                b.nodes
            )));
        }
        let s = &self.stream;
        let copy = cuda("copying the held node to the GPU");
        if let Some(place) = edit.place {
            let place = place.to_array();
            s.memcpy_htod(&place, &mut b.position.slice_mut(3 * k..3 * k + 3))
                .map_err(&copy)?;
            s.memcpy_htod(&place, &mut b.previous.slice_mut(3 * k..3 * k + 3))
                .map_err(&copy)?;
        }
        if let Some(pin) = edit.pin {
            s.memcpy_htod(&[u8::from(pin)], &mut b.pinned.slice_mut(k..k + 1))
                .map_err(&copy)?;
        }
        s.synchronize().map_err(&copy)
    }

    /// The body's positions, previous positions, velocities and forces from the GPU into `body`.
    pub fn download_body(&self, body: &mut Body) -> Result<(), CudaError> {
        let Buffers::Body(b) = &self.buffers else {
            return Err(CudaError::Setting("not a body solver".into()));
        };
        let s = &self.stream;
        let copy = cuda("copying the body from the GPU");
        let n = 3 * b.nodes;
        let mut arrays = [
            vec![0.0f32; n],
            vec![0.0f32; n],
            vec![0.0f32; n],
            vec![0.0f32; n],
        ];
        for (from, to) in [&b.position, &b.previous, &b.velocity, &b.force]
            .into_iter()
            .zip(&mut arrays)
        {
            s.memcpy_dtoh(from, to.as_mut_slice()).map_err(&copy)?;
        }
        s.synchronize().map_err(&copy)?;
        let [p, q, v, f] = arrays;
        body.position = bytemuck::pod_collect_to_vec(&p);
        body.previous = bytemuck::pod_collect_to_vec(&q);
        body.velocity = bytemuck::pod_collect_to_vec(&v);
        body.force = bytemuck::pod_collect_to_vec(&f);
        Ok(())
    }

    /// The alive and landed counts from the GPU into [`CudaParticles::totals`] (waits).
    pub fn read_tally(&mut self) -> Result<(), CudaError> {
        let Buffers::Fountain(b) = &self.buffers else {
            return Ok(());
        };
        let mut tally = [0u32; 2];
        let copy = cuda("copying the particle counts from the GPU");
        read_back(&self.stream, &b.tally, &mut tally, copy)?;
        self.totals.count = tally[0] as usize;
        self.totals.landed = tally[1] as usize;
        Ok(())
    }

    /// Replaces the landings `basin` splashes (the parity checks' input).
    pub fn set_landings(&mut self, drops: &[[f32; 3]]) -> Result<(), CudaError> {
        let Buffers::Fountain(b) = &mut self.buffers else {
            return Err(CudaError::Setting("not a fountain solver".into()));
        };
        let copy = cuda("copying landings to the GPU");
        let flat = drops.as_flattened();
        if flat.len() > b.drops.len() {
            return Err(CudaError::Setting("more landings than particles".into()));
        }
        if !flat.is_empty() {
            self.stream
                .memcpy_htod(flat, &mut b.drops.slice_mut(..flat.len()))
                .map_err(&copy)?;
        }
        let tally = [self.totals.count as u32, drops.len() as u32];
        self.stream
            .memcpy_htod(&tally, &mut b.tally)
            .map_err(&copy)?;
        self.stream.synchronize().map_err(&copy)
    }

    /// The last `collide`'s landings (after [`CudaParticles::read_tally`]).
    pub fn landings(&self) -> Result<Vec<[f32; 3]>, CudaError> {
        let Buffers::Fountain(b) = &self.buffers else {
            return Ok(Vec::new());
        };
        let mut flat = vec![0.0f32; 3 * self.totals.landed];
        let copy = cuda("copying landings from the GPU");
        if !flat.is_empty() {
            self.stream
                .memcpy_dtoh(&b.drops.slice(..flat.len()), &mut flat)
                .map_err(&copy)?;
        }
        self.stream.synchronize().map_err(&copy)?;
        Ok(flat.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect())
    }
}
