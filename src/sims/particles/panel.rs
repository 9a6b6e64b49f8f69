//! The particles panel and keys: every constant of the running scene, edited live (a change
//! of the body's shape or the basin's grid starts that part again), the world's gravity,
//! wind, ground and sphere.

use super::dynamics::Integrator;
use super::scene::{
    fastest_wind, Orientation, Pins, Which, MAX_BODY_SUBSTEPS, MAX_CLOTH_N, MAX_DT,
    MAX_FOUNTAIN_PARTICLES, MAX_GRAVITY, MAX_GROW_SECONDS, MAX_ITERATIONS, MAX_JELLY_N, MAX_RATE,
    MAX_STIFFNESS, MAX_VOLUME_STIFFNESS, MAX_WIND, THICKNESS_SPACINGS,
};
use super::sim::{ParticlesSim, State};
use crate::sims::choose;
use imgui::SliderFlags;
use winit::keyboard::KeyCode;

/// Characters of the help overlay's key column (`crate::viewer::panel`'s `help` pads each key
/// to 22 and a space).
const HELP_KEY_COLUMN: usize = 22;

/// The kind's keys, as the help overlay lists them: each key's label fits the overlay's key
/// column (22 characters, checked below), or it runs into the description.
pub const KEYS: &[(&str, &str)] = &[
    ("F1 F2 F3", "fountain, cloth, jelly"),
    ("Left drag on a node", "grab and drag it (cloth, jelly)"),
    (
        "Left drag, wind arrow",
        "set the wind (its head; no wind: its ball)",
    ),
    ("Arrows", "steer the wind (x, z) by 0.5 m/s"),
    ("O", "fountain on / off"),
    ("P", "nodes and springs coloured by energy (cloth, jelly)"),
    ("T", "the textured surface (cloth, jelly)"),
];

// Every key label fits the help overlay's key column, checked when compiling (the wind
// arrow's, 27 characters, ran into its description).
const _: () = {
    let mut k = 0;
    while k < KEYS.len() {
        assert!(KEYS[k].0.len() <= HELP_KEY_COLUMN);
        k += 1;
    }
};

/// Wind change per arrow key press, m/s.
const WIND_STEP: f32 = 0.5;

/// The kind's keys other than F1–F3; returns whether `key` is one.
pub fn key(sim: &mut ParticlesSim, key: KeyCode) -> bool {
    let wind = &mut sim.scene.world.wind;
    let mut steer = |axis: usize, step: f32| {
        wind[axis] += step;
        *wind = fastest_wind(*wind);
    };
    match key {
        KeyCode::ArrowLeft => steer(0, -WIND_STEP),
        KeyCode::ArrowRight => steer(0, WIND_STEP),
        KeyCode::ArrowUp => steer(2, -WIND_STEP),
        KeyCode::ArrowDown => steer(2, WIND_STEP),
        KeyCode::KeyO => match &mut sim.state {
            State::Fountain(f) => f.on = !f.on,
            State::Body(_) => return false,
        },
        _ => return false,
    }
    true
}

/// Draws the panel; returns whether the user asked for a restart.
pub fn panel_ui(sim: &mut ParticlesSim, ui: &imgui::Ui) -> bool {
    use imgui::TreeNodeFlags;
    let mut restart = false;
    let which = sim.scene.which;
    for (k, scene) in [Which::Fountain, Which::Cloth, Which::Jelly]
        .into_iter()
        .enumerate()
    {
        if k > 0 {
            ui.same_line();
        }
        if ui.radio_button_bool(format!("{} (F{})", scene.name(), k + 1), which == scene)
            && which != scene
        {
            if let Err(error) = sim.switch(scene) {
                sim.note = Some(format!("{error:#}"));
            }
            return false;
        }
    }
    // The sliders span the ranges the scene file accepts (`scene::validate`'s constants),
    // logarithmic where they span decades.
    ui.slider_config("frame time (s)", 0.001, MAX_DT)
        .flags(SliderFlags::LOGARITHMIC)
        .build(&mut sim.scene.dt);
    if which == Which::Fountain {
        fountain(sim, ui);
    } else if ui.collapsing_header(which.name(), TreeNodeFlags::DEFAULT_OPEN) {
        body(sim, ui);
    }
    if ui.collapsing_header("World", TreeNodeFlags::DEFAULT_OPEN) {
        let w = &mut sim.scene.world;
        // Drags over the whole range the scene file accepts (a ±100 slider would move 0.25
        // m/s a pixel; a drag moves 0.05, Ctrl+click types a value), kept to its speed as
        // the file is, so a loaded value is shown and edited as it is.
        if imgui::Drag::new("wind (m/s)")
            .range(-MAX_WIND, MAX_WIND)
            .speed(0.05)
            .flags(SliderFlags::ALWAYS_CLAMP)
            .build_array(ui, &mut w.wind)
        {
            w.wind = fastest_wind(w.wind);
        }
        imgui::Drag::new("gravity (m/s²)")
            .range(-MAX_GRAVITY, MAX_GRAVITY)
            .speed(0.05)
            .flags(SliderFlags::ALWAYS_CLAMP)
            .build_array(ui, &mut w.gravity);
        if which != Which::Fountain {
            ui.slider("wind drag (N·s/m³)", 0.0, 5.0, &mut w.wind_drag);
            ui.checkbox("wind relative to the moving surface", &mut w.wind_relative);
            ui.slider("ground (m)", -5.0, 5.0, &mut w.ground);
            ui.slider_config("sphere centre (m)", -5.0, 5.0)
                .build_array(&mut w.sphere_center);
            ui.slider("sphere radius (m, 0: none)", 0.0, 3.0, &mut w.sphere_radius);
            ui.slider("friction μ (Coulomb)", 0.0, 1.0, &mut w.friction);
            if ui.is_item_hovered() {
                ui.tooltip_text(
                    "Coulomb friction coefficient of the ground, the sphere and self-collision: \
                     a sliding node loses at most μ times the speed the contact stops; \
                     it slides v0²/(2μg) before it stops",
                );
            }
        }
    }
    if let Some(note) = sim.note() {
        ui.text_disabled(note);
    }
    restart |= ui.button("restart");
    restart
}

fn fountain(sim: &mut ParticlesSim, ui: &imgui::Ui) {
    use imgui::TreeNodeFlags;
    let alive = sim.alive();
    if let State::Fountain(state) = &mut sim.state {
        ui.checkbox("on (O)", &mut state.on);
    }
    let f = &mut sim.scene.fountain;
    if ui.collapsing_header("Emitter", TreeNodeFlags::DEFAULT_OPEN) {
        ui.text(format!("{alive} particles alive"));
        ui.slider_config("rate (particles/s)", 0.0, MAX_RATE)
            .flags(SliderFlags::LOGARITHMIC)
            .build(&mut f.rate);
        ui.slider("lifetime (s)", 0.1, 20.0, &mut f.lifetime);
        ui.slider("fade (s)", 0.0, f.lifetime, &mut f.fade);
        ui.slider_config("max particles", 1, MAX_FOUNTAIN_PARTICLES)
            .flags(SliderFlags::LOGARITHMIC)
            .build(&mut f.max_particles);
        ui.input_scalar("seed", &mut f.seed).build();
        ui.slider("nozzle radius (m)", 0.0, 0.5 * f.cube, &mut f.spread);
        ui.slider("nozzle depth (m)", 0.0, f.cube, &mut f.emitter_depth);
        ui.slider("speed min (m/s)", 0.0, 15.0, &mut f.speed[0]);
        ui.slider("speed max (m/s)", f.speed[0], 15.0, &mut f.speed[1]);
        ui.slider("sideways speed (m/s)", 0.0, 3.0, &mut f.horizontal);
        ui.slider_config("jet direction", -1.0, 1.0)
            .build_array(&mut f.direction);
        ui.slider("air drag (1/s)", 0.0, 5.0, &mut f.drag);
        ui.slider("dies below (m)", -1.0, 1.0, &mut f.kill_height);
    }
    if ui.collapsing_header("Cube", TreeNodeFlags::DEFAULT_OPEN) {
        ui.slider("side (m)", 0.1, 3.0, &mut f.cube);
        ui.slider("first hit: vertical kept", 0.0, 1.0, &mut f.cut);
        ui.slider("first hit: horizontal ×", 0.0, 5.0, &mut f.boost);
        ui.slider("first hit: sheet ×", 0.0, 1.0, &mut f.sheet);
        ui.slider("later bounces", 0.0, 1.0, &mut f.bounce);
    }
    if ui.collapsing_header("Basin", TreeNodeFlags::DEFAULT_OPEN) {
        ui.slider("half-width (m)", 0.5 * f.cube + 0.1, 10.0, &mut f.basin);
        ui.slider("water level (m)", 0.0, f.cube, &mut f.level);
        ui.slider("landing push ((m/s)/(m/s))", -0.3, 0.0, &mut f.push);
        ui.slider("splash radius (m)", 0.01, 0.5, &mut f.splash_radius);
        ui.slider("nodes per side", 8, 512, &mut f.surface_nodes);
        ui.slider("wave speed (m/s)", 0.05, 3.0, &mut f.surface_speed);
        ui.slider("wave damping (1/s)", 0.0, 5.0, &mut f.surface_damping);
    }
}

fn body(sim: &mut ParticlesSim, ui: &imgui::Ui) {
    let which = sim.scene.which;
    let stable = sim.scene.stable_substeps();
    let growing = match &sim.state {
        State::Body(body) if !body.growth.springs.is_empty() => {
            Some((1.0 - body.growth.grown) as f32 * sim.scene.body.grow_seconds)
        }
        _ => None,
    };
    let b = &mut sim.scene.body;
    if let Some(i) = choose(ui, "integrator", &Integrator::ALL, b.integrator, |i| {
        i.name()
    }) {
        b.integrator = i;
    }
    ui.slider_config("substeps", 1, MAX_BODY_SUBSTEPS)
        .flags(SliderFlags::LOGARITHMIC)
        .build(&mut b.substeps);
    if b.integrator.explicit() {
        ui.text_disabled(format!("stable from {stable} substeps"));
    } else {
        ui.slider_config("XPBD iterations", 1, MAX_ITERATIONS)
            .flags(SliderFlags::LOGARITHMIC)
            .build(&mut b.iterations);
    }
    ui.slider("damping (1/s)", 0.0, 5.0, &mut b.damping);
    ui.slider_config("stiffness (N/m)", 1.0, MAX_STIFFNESS)
        .flags(SliderFlags::LOGARITHMIC)
        .build(&mut b.stiffness);
    ui.slider("shear (of the stiffness)", 0.0, 2.0, &mut b.shear);
    let bend = if which == Which::Jelly {
        "genbo (of the stiffness)"
    } else {
        "bending (of the stiffness)"
    };
    ui.slider(bend, 0.0, 2.0, &mut b.bend);
    if which == Which::Jelly {
        // The `volume` term's bulk modulus (0: off).
        ui.slider_config("volume stiffness (Pa)", 0.0, MAX_VOLUME_STIFFNESS)
            .flags(SliderFlags::LOGARITHMIC)
            .build(&mut b.volume_stiffness);
    }
    ui.slider_config("springs grow in (s)", 0.0, MAX_GROW_SECONDS)
        .flags(SliderFlags::LOGARITHMIC)
        .build(&mut b.grow_seconds);
    if let Some(left) = growing {
        ui.text_disabled(format!("springs growing in: {left:.1} s left"));
    }
    ui.slider("mass (kg)", 0.01, 20.0, &mut b.mass);
    // `self_collide`: the thickness over the range a scene file accepts with it on.
    ui.checkbox("self-collision", &mut b.self_collision);
    let [thin, thick] = THICKNESS_SPACINGS.map(|f| f * b.spacing());
    ui.slider("thickness (m)", thin, thick, &mut b.thickness);
    ui.separator();
    ui.text_disabled("these start the body again:");
    let most = if which == Which::Jelly {
        MAX_JELLY_N
    } else {
        MAX_CLOTH_N
    };
    ui.slider_config("n (nodes per side)", 2, most)
        .flags(SliderFlags::LOGARITHMIC)
        .build(&mut b.n);
    ui.slider("size (m)", 0.1, 5.0, &mut b.size);
    ui.slider_config("start (m)", -5.0, 5.0)
        .build_array(&mut b.start);
    if which == Which::Cloth {
        if let Some(p) = choose(ui, "pins", &Pins::ALL, b.pins, |p| p.name()) {
            b.pins = p;
        }
        if let Some(o) = choose(ui, "start", &Orientation::ALL, b.orientation, |o| o.name()) {
            b.orientation = o;
        }
    }
}
