//! How far a live edit (`sim_edit.rs`) reaches on the GPU. Most edits (the wind steered by
//! its arrow every frame, gravity, damping, the emission rate, ...) change only constants the
//! host turns into each frame's records (`cuda::kernels`: `FountainStep`, `BasinStep`,
//! `EmitStep`, `BodyStep`, `SelfStep`; `crate::cuda::Records` sends a record only when its
//! bits change) or reads itself (the emission's count, the renderer's scales): such an edit
//! reads nothing back and sends no state. A spring stiffness sends the springs' stiffnesses
//! alone. The rest (pins, the basin's grid, max particles raised, a spring kind switched on or
//! off, a new shape) reads the state back, edits it and sends it whole before the next step. A
//! fountain holds no body and a body no basin: the other scene's fields reach nothing.
//!
//! Every field of the scene is named once in [`state_fields`]: a field added to the scene
//! fails to compile there until it is classed, and one classed as state costs a round trip,
//! never a wrong result.

use super::fountain::FountainParams;
use super::scene::{BodyParams, Orientation, ParticlesScene, Pins, Which, World};

/// What a live edit sends to the GPU (ordered: each reaches further than the one before).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum EditReach {
    /// Only constants the frames' records carry or the host reads: nothing is read back or
    /// sent beyond the records whose bits changed.
    Records,
    /// The springs' stiffnesses (no kind switched on or off): those arrays sent, nothing read
    /// back.
    Stiffness,
    /// The state: read back, edited on the host, sent whole before the next step (or the
    /// solver made again).
    State,
}

impl EditReach {
    /// How far the edit from `old` to `new` reaches on the GPU.
    pub fn of(new: &ParticlesScene, old: &ParticlesScene) -> EditReach {
        // A fountain holds no body, a body no basin: the other's fields reach nothing.
        let mut new = new.clone();
        if new.which == old.which {
            match new.which {
                Which::Fountain => new.body = old.body,
                _ => new.fountain = old.fountain,
            }
        }
        // Max particles raised: the buffers may have to grow (`Room::fitting`), the state
        // sent again. Lowered: only the host's emission count sees it (`Fountain::emission`:
        // no live particle is dropped, the emission waits until fewer live), on either side.
        let raised = new.fountain.max_particles > old.fountain.max_particles;
        let (new, old) = (state_fields(&new), state_fields(old));
        if new.state != old.state || raised {
            EditReach::State
        } else if new.stiffnesses != old.stiffnesses {
            // A kind switched on or off (a stiffness from or to 0) makes the springs again.
            let on = |k: [f32; 3]| k.map(|k| k > 0.0);
            if on(new.stiffnesses) != on(old.stiffnesses) {
                EditReach::State
            } else {
                EditReach::Stiffness
            }
        } else {
            EditReach::Records
        }
    }
}

/// What of a scene the GPU's state holds (beyond the records).
struct StateFields {
    /// Fields whose edit changes the state.
    state: State,
    /// [structural, shear, bending] springs' stiffnesses, N/m (the springs' arrays).
    stiffnesses: [f32; 3],
}

/// The scene's fields whose edit changes the GPU's state (`ParticlesScene`'s, of the same
/// names).
#[derive(PartialEq)]
struct State {
    /// The scene.
    which: Which,
    /// A body's shape and pins.
    n: usize,
    size: f32,
    start: [f32; 3],
    orientation: Orientation,
    pins: Pins,
    /// The basin's half width and grid.
    basin: f32,
    surface_nodes: usize,
}

/// Every field of `scene`, each either kept (its edit changes the GPU's state) or dropped
/// with the record or host code that reads it each frame.
fn state_fields(scene: &ParticlesScene) -> StateFields {
    let ParticlesScene {
        // Host only: the panel's and files' text.
        name: _,
        description: _,
        which,
        // FountainStep, BasinStep (dt); a body's substep (BodyStep).
        dt: _,
        fountain,
        body,
        world,
    } = scene;
    let BodyParams {
        n,
        size,
        // BodyStep's inverse_mass and weight (the host's node mass).
        mass: _,
        stiffness: _,
        shear: _,
        bend: _,
        // BodyStep's decay and carry.
        damping: _,
        // Host: the springs' growth, whose rest lengths are sent as they grow (`growth.rs`).
        grow_seconds: _,
        // BodyStep's volume_modulus (the host's `cells.modulus`).
        volume_stiffness: _,
        // The frame's self_collide launches and SelfStep (a thickness the lists were not
        // built for rebuilds them, `cuda/self_collide.rs`).
        self_collision: _,
        thickness: _,
        // BodyStep's euler and with_springs; the frame's launches.
        integrator: _,
        iterations: _,
        // Host: the substeps' records (BodyStep's dt, carry, reach).
        substeps: _,
        pins,
        orientation,
        start,
        // Host: the renderer's energy scale.
        red_speed: _,
        energy_decades: _,
    } = body;
    let FountainParams {
        // Host: the emission's count (EmitStep).
        rate: _,
        // FountainStep's lifetime.
        lifetime: _,
        // Host: the renderer's fade.
        fade: _,
        // Host: the emission's count (EmitStep); raised, the state (`EditReach::of`).
        max_particles: _,
        // FountainStep's emission (Emission::new: nozzle, up, side, other, spread, speed,
        // horizontal, key).
        spread: _,
        emitter_depth: _,
        speed: _,
        horizontal: _,
        direction: _,
        seed: _,
        // FountainStep's drag, half and top, cut, boost, sheet, bounce, level, push,
        // kill_height.
        drag: _,
        cube: _,
        cut: _,
        boost: _,
        sheet: _,
        bounce: _,
        level: _,
        push: _,
        kill_height: _,
        // A new half width starts a calm basin (sim_edit.rs), as does a new grid.
        basin,
        // BasinStep's radius and the splash stencils (sent when their weights change).
        splash_radius: _,
        surface_nodes,
        // BasinStep's wave_k and decay.
        surface_speed: _,
        surface_damping: _,
    } = fountain;
    // FountainStep's gravity and wind; BodyStep's weight, wind, drag, relative, ground, sphere
    // and friction; SelfStep's friction.
    let World {
        gravity: _,
        wind: _,
        wind_drag: _,
        wind_relative: _,
        ground: _,
        sphere_center: _,
        sphere_radius: _,
        friction: _,
    } = world;
    StateFields {
        state: State {
            which: *which,
            n: *n,
            size: *size,
            start: *start,
            orientation: *orientation,
            pins: *pins,
            basin: *basin,
            surface_nodes: *surface_nodes,
        },
        stiffnesses: body.stiffnesses(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::Source;
    use crate::sims::particles::dynamics::Integrator;

    fn preset(which: Which) -> ParticlesScene {
        ParticlesScene::from_source(&Source::load(which.name()).unwrap()).unwrap()
    }

    /// Each edit class as `sync` sees it, from the cloth's and the fountain's presets.
    #[test]
    fn edits_are_classed_by_what_the_gpu_holds() {
        let cloth = preset(Which::Cloth);
        let fountain = preset(Which::Fountain);
        let reach = |base: &ParticlesScene, edit: fn(&mut ParticlesScene)| {
            let mut new = base.clone();
            edit(&mut new);
            EditReach::of(&new, base)
        };
        use EditReach::*;
        let records: [fn(&mut ParticlesScene); 9] = [
            |s| s.world.wind = [2.0, 0.0, 1.0],
            |s| s.world.gravity = [0.0, -5.0, 0.0],
            |s| s.body.damping = 0.6,
            |s| s.body.mass *= 2.0,
            |s| s.body.thickness *= 1.1,
            |s| s.body.volume_stiffness = 50.0,
            |s| s.body.integrator = Integrator::Xpbd,
            |s| s.fountain.rate *= 2.0,
            |s| s.fountain.splash_radius *= 1.5,
        ];
        for edit in records {
            assert_eq!(reach(&cloth, edit), Records);
            assert_eq!(reach(&fountain, edit), Records);
        }
        assert_eq!(reach(&cloth, |s| s.body.stiffness *= 0.5), Stiffness);
        assert_eq!(reach(&cloth, |s| s.body.shear = 0.0), State, "a kind off");
        let mut unbent = cloth.clone();
        unbent.body.bend = 0.0;
        assert_eq!(reach(&unbent, |s| s.body.bend = 0.1), State, "a kind on");
        assert_eq!(reach(&unbent, |s| s.body.shear = 0.25), Stiffness);
        let body: [fn(&mut ParticlesScene); 3] = [
            |s| s.body.pins = Pins::None,
            |s| s.body.n += 1,
            |s| s.body.shear = 0.0,
        ];
        let basin: [fn(&mut ParticlesScene); 3] = [
            |s| s.fountain.basin *= 1.5,
            |s| s.fountain.surface_nodes += 8,
            |s| s.fountain.max_particles += 100,
        ];
        // Lowered, max particles only stops the emission (the host's count).
        assert_eq!(reach(&fountain, |s| s.fountain.max_particles /= 2), Records);
        // Each scene's own state; the other scene's fields reach nothing (review item L7).
        for edit in body {
            assert_eq!(reach(&cloth, edit), State);
            assert_eq!(reach(&fountain, edit), Records);
        }
        for edit in basin {
            assert_eq!(reach(&cloth, edit), Records);
            assert_eq!(reach(&fountain, edit), State);
        }
        assert_eq!(reach(&fountain, |s| s.body.stiffness *= 0.5), Records);
        assert_eq!(reach(&cloth, |s| s.which = Which::Jelly), State);
        assert_eq!(reach(&fountain, |s| s.which = Which::Cloth), State);
    }
}
