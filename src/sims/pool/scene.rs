//! Pool's scene section: the pool, the surface model and its edges, the springs, the drops
//! (defaults, rain, random drops at the start, scripted drops), islands and the light.

use super::drops::{Drop, Target};
use super::params::{Edges, Model, PoolParams, MAX_NODES, MAX_SUBSTEPS, MIN_NODES};
use crate::scene::{syntax_error, Invalid, SceneError, Source};
use serde::Deserialize;

/// Land: nodes inside never move. A disc (`center`, `radius`) or a polygon (`outline`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Island {
    /// Disc centre (x, z), m.
    pub center: Option<[f32; 2]>,
    /// Disc radius, m.
    pub radius: Option<f32>,
    /// Polygon corners (x, z), m, in order.
    pub outline: Option<Vec<[f32; 2]>>,
}

impl Island {
    /// Whether (x, z) is on this island.
    pub fn contains(&self, x: f32, z: f32) -> bool {
        if let (Some(c), Some(r)) = (self.center, self.radius) {
            return (x - c[0]).powi(2) + (z - c[1]).powi(2) <= r * r;
        }
        let Some(outline) = &self.outline else {
            return false;
        };
        // Even-odd rule.
        let mut inside = false;
        for k in 0..outline.len() {
            let (a, b) = (outline[k], outline[(k + 1) % outline.len()]);
            if (a[1] > z) != (b[1] > z) && x < a[0] + (z - a[1]) / (b[1] - a[1]) * (b[0] - a[0]) {
                inside = !inside;
            }
        }
        inside
    }
}

/// Drop settings: the defaults of scripted, pointer and rain drops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DropSettings {
    /// Gaussian radius, m.
    pub radius: f32,
    /// Amplitude: m (height) or m/s (velocity).
    pub amplitude: f32,
    /// What drops change.
    pub target: Target,
    /// Rain: random drops per second (alternating up and down, so the level stays put).
    pub rain: f32,
    /// Random drops at the start (evanw's 20).
    pub random: u32,
    /// Seed of the random drops.
    pub seed: u64,
}

impl Default for DropSettings {
    /// evanw/webgl-water's drop: radius 1.5 % of the pool, 1 cm.
    fn default() -> Self {
        DropSettings {
            radius: 0.03,
            amplitude: 0.01,
            target: Target::Height,
            rain: 0.0,
            random: 0,
            seed: 1,
        }
    }
}

/// A scripted drop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimedDrop {
    /// When, s.
    pub time: f32,
    /// The drop.
    pub drop: Drop,
}

/// How the pool is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Look {
    /// Towards the sun (normalised when drawn).
    pub light: [f32; 3],
    /// Fine-detail normal map on the surface (the original's bump mapping).
    pub detail: bool,
    /// Far pixels the mean of a few taps over their footprint on the water (far rows'
    /// aliasing 26.75 → 19.08; on llvmpipe the `surface` pass about twice as long). `None`
    /// (the scene does not say): chosen by the GL renderer when the pool is first drawn,
    /// [`far_taps_for`].
    pub far_taps: Option<bool>,
}

/// Whether the far taps are drawn, for a scene without `[light] far_taps`, on the GL renderer
/// named `renderer` (`GL_RENDERER`): off on software rasterisers, Mesa's (llvmpipe, softpipe,
/// and classic swrast, which names itself "Software Rasterizer": the taps' loop doubles their
/// `surface` pass, 181 against 93 ms at 960×540) and the others a GL context may land on
/// (SwiftShader, through ANGLE; Windows' "GDI Generic" and "Microsoft Basic Render Driver";
/// "Apple Software Renderer"), on elsewhere.
pub fn far_taps_for(renderer: &str) -> bool {
    let renderer = renderer.to_ascii_lowercase();
    [
        "llvmpipe",
        "softpipe",
        "software rasterizer",
        "swiftshader",
        "gdi generic",
        "microsoft basic render",
        "apple software renderer",
    ]
    .iter()
    .all(|software| !renderer.contains(software))
}

impl Default for Look {
    /// evanw's light (2, 2, −1), detail on, far taps by the renderer.
    fn default() -> Self {
        Look {
            light: [2.0, 2.0, -1.0],
            detail: true,
            far_taps: None,
        }
    }
}

/// The lowest sun: the sine of its elevation, 0.05 (2.9° above the horizon). A scene's light
/// below it is refused, the panel's elevation slider starts there, the L key does not go
/// lower, and the renderer never draws one lower.
pub const LOWEST_SUN: f32 = 0.05;

/// The highest sun the panel sets, degrees: short of overhead, where the azimuth is lost.
pub const HIGHEST_SUN: f32 = 89.9;

impl Look {
    /// The sun's elevation above the horizon and azimuth (from +x towards +z), degrees.
    pub fn sun_angles(&self) -> (f32, f32) {
        let l = glam::Vec3::from(self.light).normalize_or(glam::Vec3::Y);
        (
            l.y.clamp(-1.0, 1.0).asin().to_degrees(),
            l.z.atan2(l.x).to_degrees(),
        )
    }

    /// Puts the sun at `elevation` (degrees, kept from the lowest sun to [`HIGHEST_SUN`]) and
    /// `azimuth` (degrees from +x towards +z). Never quite overhead, so the light keeps the
    /// azimuth (at 90° cos is −4.4e-8 in f32 and the azimuth read back would turn by 180°);
    /// never below the lowest sun, whatever the libm's sine rounds to.
    pub fn set_sun(&mut self, elevation: f32, azimuth: f32) {
        let lowest = LOWEST_SUN.asin().to_degrees();
        let (e, a) = (
            elevation.clamp(lowest, HIGHEST_SUN).to_radians(),
            azimuth.to_radians(),
        );
        let y = e.sin().max(LOWEST_SUN);
        self.light = [e.cos() * a.cos(), y, e.cos() * a.sin()];
    }
}

/// A validated pool scene.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolScene {
    /// Preset name or file stem.
    pub name: String,
    /// One line saying what the scene shows.
    pub description: String,
    /// Parameters.
    pub params: PoolParams,
    /// Nodes per side on the CUDA backend, when it differs.
    pub cuda_nodes: Option<usize>,
    /// Drop defaults, rain and random start drops.
    pub drops: DropSettings,
    /// Scripted drops.
    pub scripted: Vec<TimedDrop>,
    /// Islands.
    pub islands: Vec<Island>,
    /// Drawing.
    pub look: Look,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PoolFile {
    #[allow(dead_code)]
    kind: String,
    description: Option<String>,
    pool: Option<GridFile>,
    surface: Option<SurfaceFile>,
    springs: Option<SpringsFile>,
    drops: Option<DropsFile>,
    #[serde(default)]
    drop: Vec<DropFile>,
    #[serde(default)]
    island: Vec<Island>,
    light: Option<LightFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GridFile {
    nodes: Option<usize>,
    cuda_nodes: Option<usize>,
    size: Option<f32>,
    depth: Option<f32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SurfaceFile {
    model: Option<Model>,
    edges: Option<Edges>,
    wave_speed: Option<f32>,
    damping: Option<f32>,
    dt: Option<f32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpringsFile {
    tension: Option<f32>,
    horizontal: Option<bool>,
    shear: Option<bool>,
    stiffness: Option<f32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DropsFile {
    radius: Option<f32>,
    amplitude: Option<f32>,
    target: Option<Target>,
    rain: Option<f32>,
    random: Option<u32>,
    seed: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DropFile {
    time: f32,
    position: [f32; 2],
    radius: Option<f32>,
    amplitude: Option<f32>,
    target: Option<Target>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LightFile {
    direction: Option<[f32; 3]>,
    detail: Option<bool>,
    far_taps: Option<bool>,
}

impl PoolScene {
    /// Parses and validates a pool scene source.
    pub fn from_source(source: &Source) -> Result<PoolScene, SceneError> {
        let file: PoolFile = toml::from_str(&source.text)
            .map_err(|error| syntax_error(&source.text, &source.origin, &error))?;
        let at = |invalid: Invalid| source.error_at(invalid);
        let mut params = PoolParams::default();
        let mut cuda_nodes = None;
        if let Some(g) = file.pool {
            params.nodes = g.nodes.unwrap_or(params.nodes);
            params.size = g.size.unwrap_or(params.size);
            params.depth = g.depth.unwrap_or(params.depth);
            cuda_nodes = g.cuda_nodes;
        }
        let written_speed = file.surface.as_ref().and_then(|s| s.wave_speed);
        if let Some(s) = file.surface {
            params.model = s.model.unwrap_or(params.model);
            params.edges = s.edges.unwrap_or(params.edges);
            params.wave_speed = s.wave_speed.unwrap_or(params.wave_speed);
            params.damping = s.damping.unwrap_or(params.damping);
            params.dt = s.dt.unwrap_or(params.dt);
        }
        let mut stiffness = None;
        if let Some(s) = file.springs {
            params.tension = s.tension.unwrap_or(params.tension);
            params.horizontal = s.horizontal.unwrap_or(params.horizontal);
            params.shear = s.shear.unwrap_or(params.shear);
            stiffness = s.stiffness;
        }
        // The wave speed derived from `springs.stiffness`, when it was: its checks then name
        // the key the user wrote.
        let mut derived = None;
        if let Some(k) = stiffness {
            if let Some(c) = written_speed {
                return Err(at(Invalid::new(
                    "springs.stiffness",
                    format!(
                        "sets the wave speed, and surface.wave_speed = {c} sets it too; give \
                         one of them, got {k}"
                    ),
                )));
            }
            if !(k.is_finite() && k > 0.0 && k <= 1e12) {
                return Err(at(Invalid::new(
                    "springs.stiffness",
                    format!("must be in (0, 1e12] 1/s² (per unit node mass), got {k}"),
                )));
            }
            if (MIN_NODES..=MAX_NODES).contains(&params.nodes) && params.tension > 1.0 {
                params.wave_speed = params.wave_speed_of(k);
                derived = Some(k);
            }
        }
        let mut drops = DropSettings::default();
        if let Some(d) = file.drops {
            drops.radius = d.radius.unwrap_or(drops.radius);
            drops.amplitude = d.amplitude.unwrap_or(drops.amplitude);
            drops.target = d.target.unwrap_or(drops.target);
            drops.rain = d.rain.unwrap_or(drops.rain);
            drops.random = d.random.unwrap_or(drops.random);
            drops.seed = d.seed.unwrap_or(drops.seed);
        }
        let scripted = file
            .drop
            .iter()
            .map(|d| TimedDrop {
                time: d.time,
                drop: Drop {
                    position: d.position,
                    radius: d.radius.unwrap_or(drops.radius),
                    amplitude: d.amplitude.unwrap_or(drops.amplitude),
                    target: d.target.unwrap_or(drops.target),
                },
            })
            .collect();
        let mut look = Look::default();
        if let Some(l) = file.light {
            look.light = l.direction.unwrap_or(look.light);
            look.detail = l.detail.unwrap_or(look.detail);
            look.far_taps = l.far_taps;
        }
        let scene = PoolScene {
            name: source.name.clone(),
            description: file.description.unwrap_or_default(),
            params,
            cuda_nodes,
            drops,
            scripted,
            islands: file.island,
            look,
        };
        scene
            .validate()
            .map_err(|invalid| match derived {
                Some(k) if invalid.key == "surface.wave_speed" => too_stiff(&scene.params, k),
                _ => invalid,
            })
            .map_err(at)?;
        Ok(scene)
    }

    /// Checks the parameters, drops, islands and light.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.params.validate()?;
        if let Some(n) = self.cuda_nodes {
            if !(MIN_NODES..=MAX_NODES).contains(&n) {
                return Err(Invalid::new(
                    "pool.cuda_nodes",
                    format!("must be {MIN_NODES} to {MAX_NODES} nodes per side, got {n}"),
                ));
            }
        }
        let size = self.params.size;
        let inside = |key: String, p: [f32; 2]| {
            if p.iter().all(|v| v.is_finite() && (0.0..=size).contains(v)) {
                Ok(())
            } else {
                Err(Invalid::new(
                    key,
                    format!(
                        "[{}, {}] lies outside the pool [0, {size}] × [0, {size}] m",
                        p[0], p[1]
                    ),
                ))
            }
        };
        let radius = |key: String, r: f32| {
            if r.is_finite() && r > 0.0 && r <= size {
                Ok(())
            } else {
                Err(Invalid::new(
                    key,
                    format!("must be in (0, {size}] m, got {r}"),
                ))
            }
        };
        let amplitude = |key: String, a: f32| {
            if a.is_finite() && a.abs() <= 100.0 {
                Ok(())
            } else {
                Err(Invalid::new(
                    key,
                    format!("must be finite and at most 100 in size, got {a}"),
                ))
            }
        };
        radius("drops.radius".into(), self.drops.radius)?;
        amplitude("drops.amplitude".into(), self.drops.amplitude)?;
        if !(self.drops.rain.is_finite() && (0.0..=1e6).contains(&self.drops.rain)) {
            return Err(Invalid::new(
                "drops.rain",
                format!(
                    "must be in [0, 1e6] drops per second, got {}",
                    self.drops.rain
                ),
            ));
        }
        if self.drops.random > 100_000 {
            return Err(Invalid::new(
                "drops.random",
                format!("must be at most 100000, got {}", self.drops.random),
            ));
        }
        for (k, t) in self.scripted.iter().enumerate() {
            if !(t.time.is_finite() && (0.0..=1e6).contains(&t.time)) {
                return Err(Invalid::new(
                    format!("drop[{k}].time"),
                    format!("must be in [0, 1e6] s, got {}", t.time),
                ));
            }
            inside(format!("drop[{k}].position"), t.drop.position)?;
            radius(format!("drop[{k}].radius"), t.drop.radius)?;
            amplitude(format!("drop[{k}].amplitude"), t.drop.amplitude)?;
        }
        for (k, island) in self.islands.iter().enumerate() {
            match (island.center, island.radius, &island.outline) {
                (Some(c), Some(r), None) => {
                    inside(format!("island[{k}].center"), c)?;
                    radius(format!("island[{k}].radius"), r)?;
                }
                (None, None, Some(outline)) => {
                    if outline.len() < 3 {
                        return Err(Invalid::new(
                            format!("island[{k}].outline"),
                            format!("needs at least 3 corners, got {}", outline.len()),
                        ));
                    }
                    for p in outline {
                        inside(format!("island[{k}].outline"), *p)?;
                    }
                    // Twice the signed area (shoelace), in f64: zero when the corners lie on
                    // one line, which holds no point.
                    let twice: f64 = outline
                        .iter()
                        .zip(outline.iter().cycle().skip(1))
                        .map(|(a, b)| a[0] as f64 * b[1] as f64 - b[0] as f64 * a[1] as f64)
                        .sum();
                    if twice.abs() * 0.5 < 1e-9 {
                        return Err(Invalid::new(
                            format!("island[{k}].outline"),
                            "encloses no area: its corners lie on one line",
                        ));
                    }
                }
                _ => {
                    return Err(Invalid::new(
                        format!("island[{k}]"),
                        "is a disc (center and radius) or a polygon (outline), not both or \
                         neither",
                    ))
                }
            }
        }
        if !self.islands.is_empty() {
            // Some node must stay water (on the CPU's grid; checked at most 257 nodes a side,
            // so a huge grid does not make reading the scene slow).
            let n = self.params.nodes.clamp(2, 257);
            let h = size / (n - 1) as f32;
            let wet = (0..n).any(|j| (0..n).any(|i| !self.land(i as f32 * h, j as f32 * h)));
            if !wet {
                return Err(Invalid::new(
                    format!("island[{}]", self.islands.len() - 1),
                    format!("the islands cover the whole {size} × {size} m pool: no water is left"),
                ));
            }
        }
        let l = self.look.light;
        let length = l.iter().map(|v| v * v).sum::<f32>().sqrt();
        if !(length.is_finite() && l[1] >= LOWEST_SUN * length && l[1] > 0.0) {
            return Err(Invalid::new(
                "light.direction",
                format!(
                    "must be finite and point at a sun at least {:.1}° above the horizon \
                     (towards the sun, y ≥ {LOWEST_SUN} of its length), got [{}, {}, {}]",
                    LOWEST_SUN.asin().to_degrees(),
                    l[0],
                    l[1],
                    l[2]
                ),
            ));
        }
        Ok(())
    }

    /// The scene rescaled to about `nodes` nodes (`bench --particles`: √nodes per side),
    /// validated. A count outside 8² to 8192² is refused naming `--particles`.
    pub fn rescale(&mut self, nodes: u64) -> Result<(), Invalid> {
        let (least, most) = (
            (MIN_NODES * MIN_NODES) as u64,
            (MAX_NODES * MAX_NODES) as u64,
        );
        if !(least..=most).contains(&nodes) {
            return Err(Invalid::new(
                "--particles",
                format!(
                    "must be {least} to {most} nodes ({MIN_NODES}² to {MAX_NODES}², a square \
                     grid), got {nodes}"
                ),
            ));
        }
        self.params.nodes = (nodes as f64).sqrt().round() as usize;
        self.validate().map_err(|invalid| Invalid {
            message: format!("with --particles {nodes}: {}", invalid.message),
            ..invalid
        })
    }

    /// Whether (x, z) is on an island.
    pub fn land(&self, x: f32, z: f32) -> bool {
        self.islands.iter().any(|island| island.contains(x, z))
    }
}

/// `springs.stiffness` `k` whose derived wave speed (`params.wave_speed`) fails its checks:
/// the largest stiffness this lattice takes, and why.
pub(super) fn too_stiff(params: &PoolParams, k: f32) -> Invalid {
    Invalid::new(
        "springs.stiffness",
        format!(
            "{k} 1/s² gives a wave speed √(k·h²·(1 − 1/τ)) of {} m/s on this lattice (spacing \
             h = {} m, tension τ = {}), which needs {} substeps per frame of {} s; at most \
             {:.4e} 1/s² keeps it within 1000 m/s and {MAX_SUBSTEPS} substeps",
            params.wave_speed,
            params.spacing(),
            params.tension,
            params.substeps(),
            params.dt,
            params.most_stiffness()
        ),
    )
}
