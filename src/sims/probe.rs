//! A test-only kind that proves the seams: heat diffusing along a rod (1D explicit finite
//! differences, insulated ends), in one file. It has its own scene section (`kind = "probe"`),
//! solver, frame and statistics, and goes through every command's door ([`Sim`]) like a
//! shipped kind; it is compiled only for the library's tests and never shipped.

use crate::gfx::camera::Camera;
use crate::gfx::timing::PassClock;
use crate::gfx::Output;
use crate::output::{Column, Table};
use crate::scene::{syntax_error, Aabb, SceneError, Source};
use crate::sims::{stats_row, Backend, Frame, Kind, OpenOptions, Sim, SolveSummary};
use anyhow::{bail, Result};
use glow::HasContext;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::any::Any;
use std::rc::Rc;
use winit::keyboard::KeyCode;

/// The kind's name in scene files.
pub const KIND: &str = "probe";

const STAGES: &[&str] = &["diffuse"];

/// Most cells a rod may have: a scene file or `--particles` is untrusted input, and the rod
/// holds two f64 arrays of this length (256 MiB), more than any test needs.
const MAX_CELLS: usize = 1 << 24;

/// The probe's scene section.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rod {
    /// Always "probe" here.
    #[allow(dead_code)]
    kind: String,
    /// One line saying what the scene shows.
    pub description: String,
    /// Cells along the rod.
    pub cells: usize,
    /// Diffusion number D·dt/dx² per step (stable below 0.5).
    pub diffusion: f64,
}

impl Rod {
    /// Parses a `kind = "probe"` scene, checking the diffusion number's stability bound.
    pub fn from_source(source: &Source) -> Result<Rod, SceneError> {
        let rod: Rod = toml::from_str(&source.text)
            .map_err(|error| syntax_error(&source.text, &source.origin, &error))?;
        let stable = rod.diffusion > 0.0 && rod.diffusion < 0.5;
        if !(stable && (2..=MAX_CELLS).contains(&rod.cells)) {
            return Err(SceneError {
                origin: source.origin.clone(),
                line: None,
                key: Some("diffusion".into()),
                message: format!(
                    "must lie in (0, 0.5) with 2 to {MAX_CELLS} cells, got {} with {}",
                    rod.diffusion, rod.cells
                ),
            });
        }
        Ok(rod)
    }
}

/// The rod running on the CPU: a hot left half, a cold right half.
pub struct ProbeSim {
    name: String,
    rod: Rod,
    temperature: Vec<f64>,
    next: Vec<f64>,
    steps: u64,
    seconds: f64,
    gl: Option<Rc<glow::Context>>,
}

impl ProbeSim {
    /// Opens the rod; it has only a CPU path.
    pub fn open(source: &Source, options: &OpenOptions) -> Result<ProbeSim> {
        let mut rod = Rod::from_source(source)?;
        if options.backend == Backend::Cuda {
            bail!("the probe kind has no CUDA path; use --backend cpu or auto");
        }
        if let Some(cells) = options.elements {
            rod.cells = usize::try_from(cells)
                .ok()
                .filter(|cells| (2..=MAX_CELLS).contains(cells))
                .ok_or_else(|| {
                    anyhow::anyhow!("--particles: a rod has 2 to {MAX_CELLS} cells, got {cells}")
                })?;
        }
        let temperature = (0..rod.cells)
            .map(|i| if 2 * i < rod.cells { 1.0 } else { 0.0 })
            .collect();
        Ok(ProbeSim {
            name: source.name.clone(),
            next: vec![0.0; rod.cells],
            rod,
            temperature,
            steps: 0,
            seconds: 0.0,
            gl: None,
        })
    }
}

impl Sim for ProbeSim {
    fn kind(&self) -> Kind {
        Kind::Probe
    }

    fn scene_name(&self) -> &str {
        &self.name
    }

    fn backend(&self) -> &str {
        "cpu"
    }

    fn dt(&self) -> f64 {
        1.0
    }

    fn elements(&self) -> u64 {
        self.rod.cells as u64
    }

    fn element_unit(&self) -> &'static str {
        "cells"
    }

    fn scheme(&self) -> String {
        "1 explicit diffusion step".into()
    }

    fn step(&mut self) -> Result<()> {
        let started = std::time::Instant::now();
        let (t, r, n) = (&self.temperature, self.rod.diffusion, self.rod.cells);
        for i in 0..n {
            let left = t[i.saturating_sub(1)];
            let right = t[(i + 1).min(n - 1)];
            self.next[i] = t[i] + r * (left - 2.0 * t[i] + right);
        }
        std::mem::swap(&mut self.temperature, &mut self.next);
        self.steps += 1;
        self.seconds += started.elapsed().as_secs_f64();
        Ok(())
    }

    fn steps_taken(&self) -> u64 {
        self.steps
    }

    fn stages(&self) -> &'static [&'static str] {
        STAGES
    }

    fn stage_seconds(&self) -> Vec<f64> {
        vec![self.seconds]
    }

    fn reset_stage_times(&mut self) {
        self.seconds = 0.0;
    }

    fn set_stage_timing(&mut self, _enabled: bool) {}

    fn frame(&self) -> Result<Box<dyn Frame>> {
        Ok(Box::new(RodFrame(self.temperature.clone())))
    }

    fn solve_summary(&self) -> SolveSummary {
        SolveSummary {
            rule: "no iterations".into(),
            ..SolveSummary::default()
        }
    }

    fn bounds(&self) -> Aabb {
        Aabb::new([0.0; 3], [1.0, 0.05, 0.05])
    }

    fn restart(&mut self) -> Result<()> {
        let n = self.rod.cells;
        for (i, t) in self.temperature.iter_mut().enumerate() {
            *t = if 2 * i < n { 1.0 } else { 0.0 };
        }
        self.steps = 0;
        Ok(())
    }

    fn use_cuda_device(&mut self, _device: usize) -> Result<()> {
        Ok(())
    }

    fn panel(&mut self, ui: &imgui::Ui) -> Result<bool> {
        ui.text(format!("diffusion number {}", self.rod.diffusion));
        Ok(false)
    }

    fn key(&mut self, _key: KeyCode) -> bool {
        false
    }

    fn key_help(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    fn views(&self) -> &'static [&'static str] {
        &["temperature"]
    }

    fn view(&self) -> usize {
        0
    }

    fn set_view(&mut self, _view: usize) {}

    fn attach_gl(&mut self, gl: Rc<glow::Context>, _clock: PassClock) -> Result<()> {
        self.gl = Some(gl);
        Ok(())
    }

    /// Clears the target to the rod's mean temperature as a red level.
    fn draw(&mut self, _camera: &Camera, output: Output) -> Result<()> {
        let gl = self
            .gl
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("draw before attach_gl"))?;
        let mean = self.temperature.iter().sum::<f64>() / self.rod.cells as f64;
        // SAFETY: GL calls on the current context the front end attached; the framebuffer is
        // the front end's and alive.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, output.framebuffer);
            gl.clear_color(mean as f32, 0.0, 0.0, 1.0);
            gl.clear(glow::COLOR_BUFFER_BIT);
        }
        Ok(())
    }

    fn pass_times(&self) -> Vec<(&'static str, Option<f64>)> {
        Vec::new()
    }

    fn release_gl(&mut self) {
        self.gl = None;
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

struct RodFrame(Vec<f64>);

impl Frame for RodFrame {
    fn table(&self) -> Table {
        let mut table = Table::default();
        table
            .push("id", Column::U32((0..self.0.len() as u32).collect()))
            .push(
                "temperature",
                Column::F32(self.0.iter().map(|&t| t as f32).collect()),
            );
        table
    }

    fn stats(&self, step: u64, time: f64, step_ms: f64) -> Box<RawValue> {
        let heat: f64 = self.0.iter().sum();
        let hottest = self.0.iter().copied().fold(f64::MIN, f64::max);
        stats_row(&serde_json::json!({
            "step": step, "time": time, "cells": self.0.len(),
            "heat": heat, "hottest": hottest, "step_ms": step_ms,
        }))
    }

    fn summary(&self) -> Vec<String> {
        vec![format!("heat {:.6}", self.0.iter().sum::<f64>())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::bench::{self, BenchOptions};
    use crate::commands::simulate::{self, SimulateOptions};
    use crate::output::FrameFormat;

    const ROD: &str = "kind = \"probe\"\ndescription = \"a rod\"\ncells = 40\ndiffusion = 0.25\n";

    fn rod_file(directory: &std::path::Path) -> String {
        let path = directory.join("rod.toml");
        std::fs::write(&path, ROD).unwrap();
        path.display().to_string()
    }

    /// The seams carry a second kind: `simulate` opens it by its `kind` key, steps it, exports
    /// its table and writes its statistics, with no code outside its room but the enum line.
    #[test]
    fn a_second_kind_runs_through_simulate_with_export_and_stats() {
        let directory = tempfile::tempdir().unwrap();
        let options = SimulateOptions {
            scene: rod_file(directory.path()),
            steps: Some(200),
            seconds: None,
            backend: Backend::Auto,
            export: Some(directory.path().join("frames")),
            every: 100,
            format: FrameFormat::Csv,
            pictures: false,
            stats: Some(directory.path().join("stats.jsonl")),
            overwrite: false,
            quiet: true,
        };
        let summary = simulate::run(&options).unwrap();
        assert_eq!(summary.frames_written, 3);
        // Insulated ends: the heat (20 hot cells) is conserved.
        let heat = summary.last["heat"].as_f64().unwrap();
        assert!((heat - 20.0).abs() < 1e-9, "{heat}");
        // The scheme's exact solution: cosine modes cos(πk(i+½)/N), each multiplied per step
        // by 1 − 4r·sin²(πk/2N); the hottest cell is the end of the hot half.
        let (n, r) = (40.0f64, 0.25);
        let mode = |k: f64, i: f64| (std::f64::consts::PI * k * (i + 0.5) / n).cos();
        let hottest: f64 = 0.5
            + (1..40)
                .map(|k| {
                    let k = f64::from(k);
                    let amplitude = 2.0 / n * (0..20).map(|i| mode(k, f64::from(i))).sum::<f64>();
                    let decay =
                        1.0 - 4.0 * r * (std::f64::consts::PI * k / (2.0 * n)).sin().powi(2);
                    amplitude * decay.powi(200) * mode(k, 0.0)
                })
                .sum::<f64>();
        let measured = summary.last["hottest"].as_f64().unwrap();
        assert!((measured - hottest).abs() < 1e-9, "{measured} vs {hottest}");
        assert!(hottest < 0.99);
        let csv = std::fs::read_to_string(directory.path().join("frames/frame_00200.csv")).unwrap();
        assert!(csv.starts_with("id,temperature\n0,"), "{csv}");
        assert_eq!(csv.lines().count(), 41);
        let stats = std::fs::read_to_string(directory.path().join("stats.jsonl")).unwrap();
        assert_eq!(stats.lines().count(), 3);
    }

    #[test]
    fn a_second_kind_runs_through_bench_and_refuses_a_backend_it_lacks() {
        let directory = tempfile::tempdir().unwrap();
        let options = BenchOptions {
            scene: rod_file(directory.path()),
            particles: Some(1000),
            steps: 10,
            warmup: 2,
            backend: Backend::Cpu,
            stage_timing: true,
        };
        let report = bench::run(&options, false).unwrap();
        assert_eq!(
            (report.kind, report.elements, report.unit),
            ("probe", 1000, "cells")
        );
        assert_eq!(report.substeps, 1.0);
        assert_eq!(report.json()["cells"], 1000);
        assert!(report.json()["cell_steps_per_second"].as_f64().unwrap() > 0.0);
        assert_eq!(report.stages[0].stage, "diffuse");
        let cuda = BenchOptions {
            backend: Backend::Cuda,
            ..options
        };
        let error = bench::run(&cuda, false).err().unwrap().to_string();
        assert!(error.contains("no CUDA path"), "{error}");
    }

    /// The viewer's state machine is kind-agnostic: it steps, restarts and replaces a probe
    /// with a pbf preset (another kind) through the same door, and a load that fails keeps
    /// the probe running.
    #[test]
    fn the_viewer_state_drives_a_second_kind_and_switches_kinds_on_load() {
        use crate::viewer::state::{AppState, Edit};
        let directory = tempfile::tempdir().unwrap();
        let path = rod_file(directory.path());
        let mut state = AppState::open(&path, Backend::Cpu).unwrap();
        assert_eq!(state.sim.kind(), Kind::Probe);
        let rod_camera = state.camera;
        for _ in 0..5 {
            assert!(state.advance().unwrap());
        }
        assert_eq!(state.sim.steps_taken(), 5);
        state.apply(Edit::Restart).unwrap();
        assert_eq!(state.sim.steps_taken(), 0);
        state.apply_or_report(Edit::LoadScene("pbf/no-such-preset".into()));
        assert_eq!(state.sim.kind(), Kind::Probe);
        assert!(state
            .message
            .as_deref()
            .unwrap_or("")
            .contains("no such scene"));
        state.apply(Edit::LoadScene("pbf/drop".into())).unwrap();
        assert_eq!(
            (state.sim.kind(), state.sim.scene_name()),
            (Kind::Pbf, "drop")
        );
        assert!(state.sim_replaced && state.message.is_none());
        let framing = crate::viewer::state::framing(state.sim.as_ref());
        assert!(state.camera == framing && framing != rod_camera);
    }

    /// `fluidlab render` draws a second kind through the same door: the probe clears its
    /// target to its mean temperature, which diffusion conserves (0.5 → red 128 of 255). An
    /// unknown view names the kind's views.
    #[test]
    fn a_second_kind_renders_through_the_render_command() {
        use crate::commands::render::{self, RenderOptions};
        let directory = tempfile::tempdir().unwrap();
        let mut options = RenderOptions {
            scene: rod_file(directory.path()),
            frames: 2,
            size: (8, 4),
            out: directory.path().join("frames"),
            overwrite: false,
            view: Some("temperature".into()),
            backend: Backend::Cpu,
            steps_per_frame: 10,
            camera: None,
            spheres: false,
            foam: false,
            timings: false,
            quiet: true,
        };
        let report = render::run(&options)
            .expect("headless OpenGL (EGL); run scripts/setup.sh to install Mesa's EGL packages");
        assert_eq!((report.elements, report.unit), (40, "cells"));
        let image = image::open(&report.files[1]).unwrap().to_rgba8();
        assert_eq!(image.dimensions(), (8, 4));
        assert!(
            image.pixels().all(|p| p.0 == [128, 0, 0, 255]),
            "{:?}",
            image.get_pixel(0, 0)
        );
        options.view = Some("fluid".into());
        options.out = directory.path().join("frames-fluid");
        let error = format!("{:#}", render::run(&options).unwrap_err());
        assert!(error.contains("a probe scene shows temperature"), "{error}");
    }

    #[test]
    fn an_unknown_kind_is_an_error_at_its_line() {
        let source = Source::parse("# a\nkind = \"smoke\"\n", "x", "x.toml").unwrap();
        let error = crate::sims::open(&source, &OpenOptions::default())
            .err()
            .unwrap()
            .to_string();
        assert_eq!(
            error,
            "x.toml:2: kind: unknown simulation kind \"smoke\" (kinds: pbf, ink, pool, particles, probe)"
        );
    }

    /// A second kind keeps the hardening's promise too: a huge size from the file or the
    /// command line is refused, not allocated.
    #[test]
    fn a_rod_too_long_is_refused_not_allocated() {
        let huge = ROD.replace("cells = 40", "cells = 9223372036854775807");
        let source = Source::parse(&huge, "rod", "rod.toml").unwrap();
        let error = crate::sims::open(&source, &OpenOptions::default())
            .err()
            .unwrap();
        assert!(error.to_string().contains("2 to 16777216 cells"), "{error}");
        let source = Source::parse(ROD, "rod", "rod.toml").unwrap();
        let options = OpenOptions {
            elements: Some(u64::MAX),
            ..OpenOptions::default()
        };
        let error = crate::sims::open(&source, &options).err().unwrap();
        assert!(
            error
                .to_string()
                .starts_with("--particles: a rod has 2 to 16777216 cells"),
            "{error}"
        );
    }
}
