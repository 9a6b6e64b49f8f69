//! The TOML form of a scene. Every value keeps its source span so that validation errors can
//! name the line they come from; `deny_unknown_fields` turns typos into errors.

use super::foam::FoamSettings;
use super::scene::{FluidBody, Scene};
use super::{Aabb, Params};
use crate::scene::{line_of, syntax_error, Invalid, SceneError, Shape};
use glam::Vec3A;
use serde::Deserialize;
use std::collections::HashMap;
use toml::Spanned;

/// A point or vector as written: any length, so that `[0, -9.81, 0, 7]` is an error naming its
/// key rather than an `[f32; 3]` that silently drops the fourth number.
type Vector = Spanned<Vec<f32>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SceneFile {
    /// Read by `crate::scene::Source`; "pbf" here.
    #[allow(dead_code)]
    kind: Option<String>,
    description: Option<String>,
    container: Spanned<ContainerFile>,
    #[serde(default)]
    fluid: Vec<Spanned<ShapeFile>>,
    #[serde(default)]
    obstacle: Vec<Spanned<ShapeFile>>,
    params: Option<Spanned<ParamsFile>>,
    foam: Option<Spanned<FoamFile>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FoamFile {
    enabled: Option<Spanned<bool>>,
    trapped_air_rate: Option<Spanned<f32>>,
    wave_crest_rate: Option<Spanned<f32>>,
    lifetime: Option<Spanned<f32>>,
    max_count: Option<Spanned<u32>>,
    seed: Option<Spanned<u64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ContainerFile {
    min: Vector,
    max: Vector,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ShapeFile {
    shape: Spanned<String>,
    min: Option<Vector>,
    max: Option<Vector>,
    center: Option<Vector>,
    radius: Option<Spanned<f32>>,
    height: Option<Spanned<f32>>,
    velocity: Option<Vector>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ParamsFile {
    spacing: Option<Spanned<f32>>,
    kernel_radius: Option<Spanned<f32>>,
    rest_density: Option<Spanned<f32>>,
    iterations: Option<Spanned<u32>>,
    max_density_error: Option<Spanned<f32>>,
    min_iterations: Option<Spanned<u32>>,
    max_iterations: Option<Spanned<u32>>,
    coarse_correction: Option<Spanned<bool>>,
    substeps: Option<Spanned<u32>>,
    cfl: Option<Spanned<f32>>,
    dt: Option<Spanned<f32>>,
    gravity: Option<Vector>,
    relaxation: Option<Spanned<f32>>,
    scorr_k: Option<Spanned<f32>>,
    scorr_n: Option<Spanned<i32>>,
    scorr_dq: Option<Spanned<f32>>,
    xsph_c: Option<Spanned<f32>>,
    vorticity: Option<Spanned<f32>>,
}

/// Where each key path's value starts in the text.
struct Lines<'a> {
    text: &'a str,
    by_key: HashMap<String, usize>,
}

impl<'a> Lines<'a> {
    fn line_of(&self, offset: usize) -> usize {
        line_of(self.text, offset)
    }

    fn record<T>(&mut self, key: &str, value: &Spanned<T>) {
        let line = self.line_of(value.span().start);
        self.by_key.insert(key.to_string(), line);
    }

    /// Records and unwraps an optional value.
    fn take<T: Clone>(&mut self, key: &str, value: &Option<Spanned<T>>) -> Option<T> {
        let value = value.as_ref()?;
        self.record(key, value);
        Some(value.get_ref().clone())
    }

    /// Records and converts a vector, which must hold exactly 3 numbers.
    fn vector(&mut self, key: &str, value: &Vector) -> Result<Vec3A, Invalid> {
        self.record(key, value);
        let numbers = value.get_ref();
        <[f32; 3]>::try_from(numbers.as_slice())
            .map(Vec3A::from)
            .map_err(|_| {
                Invalid::new(
                    key,
                    format!(
                        "expected 3 numbers [x, y, z], got {}: {numbers:?}",
                        numbers.len()
                    ),
                )
            })
    }

    /// [`Lines::vector`] of an optional value.
    fn optional_vector(
        &mut self,
        key: &str,
        value: &Option<Vector>,
    ) -> Result<Option<Vec3A>, Invalid> {
        value.as_ref().map(|v| self.vector(key, v)).transpose()
    }

    /// The line of `key`, or of the nearest enclosing key that has one.
    fn find(&self, key: &str) -> Option<usize> {
        let mut key = key;
        loop {
            if let Some(line) = self.by_key.get(key) {
                return Some(*line);
            }
            key = &key[..key.rfind(['.', '['])?];
        }
    }
}

pub(super) fn parse(text: &str, name: &str, origin: &str) -> Result<Scene, SceneError> {
    let mut lines = Lines {
        text,
        by_key: HashMap::new(),
    };
    let file: SceneFile =
        toml::from_str(text).map_err(|error| syntax_error(text, origin, &error))?;
    let scene = convert(&file, name, &mut lines);
    let located = |invalid: Invalid| SceneError {
        origin: origin.to_string(),
        line: lines.find(&invalid.key),
        key: Some(invalid.key),
        message: invalid.message,
    };
    let scene = scene.map_err(located)?;
    scene.validate().map_err(located)?;
    Ok(scene)
}

fn convert(file: &SceneFile, name: &str, lines: &mut Lines) -> Result<Scene, Invalid> {
    lines.record("container", &file.container);
    let container = file.container.get_ref();
    let container = Aabb::new(
        lines.vector("container.min", &container.min)?,
        lines.vector("container.max", &container.max)?,
    );

    let params = convert_params(file.params.as_ref(), lines)?;
    let mut fluids = Vec::new();
    for (k, body) in file.fluid.iter().enumerate() {
        let key = format!("fluid[{k}]");
        lines.record(&key, body);
        let body = body.get_ref();
        let velocity = lines
            .optional_vector(&format!("{key}.velocity"), &body.velocity)?
            .unwrap_or(Vec3A::ZERO);
        fluids.push(FluidBody {
            shape: convert_shape(body, &key, lines)?,
            velocity,
        });
    }
    let mut obstacles = Vec::new();
    for (k, body) in file.obstacle.iter().enumerate() {
        let key = format!("obstacle[{k}]");
        lines.record(&key, body);
        let body = body.get_ref();
        if body.velocity.is_some() {
            return Err(Invalid::new(
                format!("{key}.velocity"),
                "obstacles are static and take no velocity",
            ));
        }
        obstacles.push(convert_shape(body, &key, lines)?);
    }
    Ok(Scene {
        name: name.to_string(),
        description: file.description.clone().unwrap_or_default(),
        container,
        fluids,
        obstacles,
        params,
        foam: convert_foam(file.foam.as_ref(), lines),
    })
}

fn convert_foam(file: Option<&Spanned<FoamFile>>, lines: &mut Lines) -> FoamSettings {
    let mut foam = FoamSettings::default();
    let Some(file) = file else {
        return foam;
    };
    lines.record("foam", file);
    let file = file.get_ref();
    macro_rules! set {
        ($($field:ident),*) => {$(
            if let Some(value) = lines.take(concat!("foam.", stringify!($field)), &file.$field) {
                foam.$field = value;
            }
        )*};
    }
    set!(
        enabled,
        trapped_air_rate,
        wave_crest_rate,
        lifetime,
        max_count,
        seed
    );
    foam
}

fn convert_shape(body: &ShapeFile, key: &str, lines: &mut Lines) -> Result<Shape, Invalid> {
    lines.record(&format!("{key}.shape"), &body.shape);
    let kind = body.shape.get_ref().as_str();
    let (needed, allowed): (&[&str], &[&str]) = match kind {
        "box" => (&["min", "max"], &["min", "max"]),
        "sphere" => (&["center", "radius"], &["center", "radius"]),
        "cylinder" => (
            &["center", "radius", "height"],
            &["center", "radius", "height"],
        ),
        other => {
            return Err(Invalid::new(
                format!("{key}.shape"),
                format!("unknown shape \"{other}\"; expected \"box\", \"sphere\" or \"cylinder\""),
            ))
        }
    };
    let present = [
        ("min", body.min.is_some()),
        ("max", body.max.is_some()),
        ("center", body.center.is_some()),
        ("radius", body.radius.is_some()),
        ("height", body.height.is_some()),
    ];
    for (field, is_present) in present {
        if is_present && !allowed.contains(&field) {
            return Err(Invalid::new(
                format!("{key}.{field}"),
                format!("a {kind} takes {}, not `{field}`", allowed.join(", ")),
            ));
        }
        if !is_present && needed.contains(&field) {
            return Err(Invalid::new(key, format!("a {kind} needs `{field}`")));
        }
    }
    let vector = |lines: &mut Lines, field: &str, value: &Option<Vector>| {
        lines
            .optional_vector(&format!("{key}.{field}"), value)
            .map(Option::unwrap_or_default)
    };
    let scalar = |lines: &mut Lines, field: &str, value: &Option<Spanned<f32>>| {
        lines
            .take(&format!("{key}.{field}"), value)
            .unwrap_or_default()
    };
    Ok(match kind {
        "box" => Shape::Box(Aabb {
            min: vector(lines, "min", &body.min)?,
            max: vector(lines, "max", &body.max)?,
        }),
        "sphere" => Shape::Sphere {
            center: vector(lines, "center", &body.center)?,
            radius: scalar(lines, "radius", &body.radius),
        },
        _ => Shape::Cylinder {
            center: vector(lines, "center", &body.center)?,
            radius: scalar(lines, "radius", &body.radius),
            height: scalar(lines, "height", &body.height),
        },
    })
}

fn convert_params(
    file: Option<&Spanned<ParamsFile>>,
    lines: &mut Lines,
) -> Result<Params, Invalid> {
    let Some(file) = file else {
        return Ok(Params::with_spacing(Params::DEFAULT_SPACING));
    };
    lines.record("params", file);
    let file = file.get_ref();
    let spacing = lines
        .take("params.spacing", &file.spacing)
        .unwrap_or(Params::DEFAULT_SPACING);
    let mut p = Params::with_spacing(spacing);
    if let Some(h) = lines.take("params.kernel_radius", &file.kernel_radius) {
        p.kernel_radius = h;
    }
    macro_rules! set {
        ($($field:ident),*) => {$(
            if let Some(value) = lines.take(concat!("params.", stringify!($field)), &file.$field) {
                p.$field = value;
            }
        )*};
    }
    set!(
        rest_density,
        iterations,
        max_density_error,
        min_iterations,
        max_iterations,
        coarse_correction,
        substeps,
        cfl,
        dt,
        relaxation,
        scorr_k,
        scorr_n,
        scorr_dq,
        xsph_c,
        vorticity
    );
    if let Some(gravity) = lines.optional_vector("params.gravity", &file.gravity)? {
        p.gravity = gravity.to_array();
    }
    // The mass follows spacing, kernel radius and rest density; with any of them out of range
    // it is NaN and validation names the input instead.
    p.calibrate_mass();
    Ok(p)
}
