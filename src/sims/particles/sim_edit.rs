//! Live edits of a running particles scene (part of `sim.rs`): the scene's changes applied to
//! the state before the next step (the panel, keys, tests), a restart, and the F1–F3 presets.

use super::body::Body;
use super::edit_reach::EditReach;
use super::render;
use super::scene::{ParticlesScene, Which};
use super::setup::{bounds_of, build, pin};
use super::sim::{ParticlesSim, State};
use super::{BODY_STAGES, FOUNTAIN_STAGES};
use crate::gfx::camera::Camera;
use crate::scene::Source;
use anyhow::{bail, Context, Result};

impl ParticlesSim {
    /// Applies edits of `scene` (panel, keys, tests) to the state before the next step: an
    /// explicit integrator's substeps are raised to what the springs need to stay stable; an
    /// invalid edit is undone and returned as an error. A changed shape (scene, n, size, start,
    /// orientation) or basin grid starts that part again (the thickness keeps its fraction of the
    /// spacing); a spring kind's stiffness from or to
    /// 0 adds or leaves out those springs with the nodes' motion, pins and grab kept
    /// ([`respring`]); stiffness, masses, pins and every other constant apply to the running
    /// state. On CUDA an edit sends what it reaches ([`EditReach`]): constants the frames'
    /// records carry (wind, gravity, damping, rate, ...) nothing beyond those records; a
    /// stiffness the springs' stiffnesses; the rest reads the state back, and the edited state
    /// is uploaded before the next step, into buffers made again where it outgrew them
    /// (`cuda::Room`: the basin's nodes, max particles raised); a body's new shape or springs
    /// get a new solver, made from the host's state.
    pub fn sync(&mut self) -> Result<()> {
        if self.scene == self.applied {
            return Ok(());
        }
        let (nb, ob) = (self.scene.body, self.applied.body);
        if (nb.n, nb.size) != (ob.n, ob.size) && nb.thickness == ob.thickness {
            // The thickness keeps its fraction of the spacing.
            self.scene.body.thickness = ob.thickness / ob.spacing() * nb.spacing();
        }
        let body = self.scene.body;
        if self.scene.which != Which::Fountain && body.integrator.explicit() && body.n >= 2 {
            let needed = self.scene.stable_substeps();
            if needed > body.substeps && needed <= 4096 {
                self.note = Some(format!("substeps raised to {needed} to stay stable"));
                self.scene.body.substeps = needed;
            }
        }
        if let Err(invalid) = self.scene.validate() {
            self.scene = self.applied.clone();
            bail!("{}: {}", invalid.key, invalid.message);
        }
        let (new, old) = (&self.scene, &self.applied);
        let (nb, ob) = (new.body, old.body);
        let shape = new.which != old.which
            || nb.n != ob.n
            || nb.size != ob.size
            || nb.start != ob.start
            || nb.orientation != ob.orientation;
        // A fountain has no springs: its body's kinds change nothing (no new solver).
        let kinds = new.which != Which::Fountain
            && nb.stiffnesses().map(|k| k > 0.0) != ob.stiffnesses().map(|k| k > 0.0);
        let (nf, of) = (new.fountain, old.fountain);
        let basin = nf.basin != of.basin || nf.surface_nodes != of.surface_nodes;
        if shape {
            self.rebuild();
            return Ok(());
        }
        let reach = EditReach::of(new, old);
        if reach == EditReach::State {
            self.edited()?;
        }
        let node_mass = self.scene.node_mass();
        match &mut self.state {
            State::Fountain(f) => {
                f.params = nf;
                if basin {
                    f.surface = nf.calm_basin();
                }
            }
            State::Body(body) => {
                if kinds {
                    respring(body, &self.scene);
                }
                body.mass = node_mass;
                body.set_stiffness(nb.stiffnesses());
                if let (EditReach::Stiffness, Some(device)) = (reach, &mut self.cuda) {
                    device.solver.upload_stiffness(body)?;
                }
                body.cells.modulus = nb.volume_stiffness;
                if nb.pins != ob.pins {
                    pin(body, &self.scene);
                    if let Some(held) = &mut self.grabber.held {
                        held.was_pinned = body.pinned[held.node];
                        body.pinned[held.node] = true;
                    }
                }
            }
        }
        self.applied = self.scene.clone();
        if kinds {
            self.restart_device_or_cpu();
        }
        Ok(())
    }

    /// Grows the springs switched on live by a frame (`growth.rs`), their rest lengths on the
    /// GPU too.
    pub(super) fn grow_springs(&mut self) -> Result<()> {
        let State::Body(body) = &mut self.state else {
            return Ok(());
        };
        if body.grow(self.scene.dt, self.scene.body.grow_seconds) {
            if let Some(device) = &mut self.cuda {
                device.solver.upload_rest(body)?;
            }
        }
        Ok(())
    }

    /// Starts the running scene again from its beginning.
    pub(super) fn rebuild(&mut self) {
        self.grabber.forget();
        self.state = build(&self.scene);
        self.order.clear();
        self.time = 0.0;
        self.steps = 0;
        self.dt_before = self.scene.dt / self.scene.body.substeps as f32;
        let stages = match self.scene.which {
            Which::Fountain => FOUNTAIN_STAGES.len(),
            _ => BODY_STAGES.len(),
        };
        self.watch.seconds = vec![0.0; stages];
        self.applied = self.scene.clone();
        self.restart_device_or_cpu();
    }

    /// A new CUDA solver for the state (its shape or springs changed), or the CPU with a note
    /// when it cannot start.
    fn restart_device_or_cpu(&mut self) {
        if let Err(error) = self.restart_device() {
            self.note = Some(format!("{error:#}; running on the CPU"));
            self.backend_note = "cpu (the CUDA solver could not restart)".into();
        }
    }

    /// Switches to the preset of scene `which` (F1–F3), with its **P** scale.
    pub fn switch(&mut self, which: Which) -> Result<()> {
        let source = Source::load(which.name())?;
        self.scene = ParticlesScene::from_source(&source)
            .with_context(|| format!("the {} preset", which.name()))?;
        if render::views(which) != render::views(self.applied.which) {
            self.render.view = 0;
        }
        let b = &self.scene.body;
        (self.render.speed_scale, self.render.energy_decades) = (b.red_speed, b.energy_decades);
        self.rebuild();
        self.camera = Camera::oriented_framing(&bounds_of(&self.scene), render::orientation(which));
        Ok(())
    }
}

/// `body` with the springs `scene` asks for (a spring kind switched on or off live): the body
/// built again, its nodes' positions, previous positions, velocities, forces and pins (the
/// grabber's included) carried over, so that the motion goes on and only the springs change.
/// The kinds switched on grow in from the lengths they find, those still growing in on from
/// the rest lengths they had grown to (`growth.rs`).
fn respring(body: &mut Body, scene: &ParticlesScene) {
    let State::Body(mut fresh) = build(scene) else {
        unreachable!("a cloth or jelly scene builds a body")
    };
    debug_assert_eq!(fresh.len(), body.len(), "the same nodes");
    fresh.position = std::mem::take(&mut body.position);
    fresh.previous = std::mem::take(&mut body.previous);
    fresh.velocity = std::mem::take(&mut body.velocity);
    fresh.force = std::mem::take(&mut body.force);
    fresh.pinned = std::mem::take(&mut body.pinned);
    let grow = [0, 1, 2].map(|kind| {
        let had = body.kinds.iter().any(|&k| k as usize == kind);
        !had || body.growing(kind)
    });
    fresh.grow_in(grow, &body.growth, &body.springs, scene.body.grow_seconds);
    *body = fresh;
}
