//! Scene files, kind-agnostic: a preset name or a path to TOML text, the simulation `kind` it
//! is for (`kind = "pbf"` by default), errors that name the file, line and key, and the shapes
//! every kind shares. Each kind parses the rest of the file itself (`crate::sims::<kind>`).

mod key_line;
mod presets;
mod shape;

pub use key_line::{key_at, line_of_key};
pub use presets::{default_of, preset, Preset, DEFAULT_SCENE, PRESETS};
pub use shape::{Aabb, Shape};

use glam::Vec3A;
use std::fmt;
use std::path::Path;

/// The kind a scene file without a `kind` key is for.
pub const DEFAULT_KIND: &str = "pbf";

/// A scene's text, where it came from, and the simulation kind it names.
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    /// Preset name or file stem.
    pub name: String,
    /// `preset NAME` or the file path, for error messages.
    pub origin: String,
    /// The TOML text.
    pub text: String,
    /// The `kind` key's value, [`DEFAULT_KIND`] when absent.
    pub kind: String,
    /// 1-based line of the `kind` key, when present.
    pub kind_line: Option<usize>,
    /// Whether it is a preset (embedded text: no file to point into).
    pub preset: bool,
}

/// The presets' names, comma-separated.
fn preset_names() -> String {
    PRESETS
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl Source {
    /// Loads a preset by name (`name` or `kind/name`, see [`PRESETS`]) or a TOML file by path,
    /// and reads its `kind`.
    pub fn load(name_or_path: &str) -> Result<Source, SceneError> {
        if name_or_path.trim().is_empty() {
            return Err(SceneError {
                origin: format!("scene {name_or_path:?}"),
                line: None,
                key: None,
                message: format!(
                    "the name is empty: give a preset's name ({}) or a scene file's path",
                    preset_names()
                ),
            });
        }
        if let Some(preset) = preset(name_or_path) {
            let source = Source::parse(
                preset.source,
                preset.name,
                &format!("preset {}", preset.name),
            )?;
            let source = Source {
                preset: true,
                ..source
            };
            if source.kind != preset.kind {
                return Err(source.error_at_kind(format!(
                    "the preset lives in scenes/{}/ but says kind = \"{}\"",
                    preset.kind, source.kind
                )));
            }
            return Ok(source);
        }
        let path = Path::new(name_or_path);
        let text = read_bounded(path).map_err(|error| SceneError {
            origin: name_or_path.to_string(),
            line: None,
            key: None,
            message: if error.kind() == std::io::ErrorKind::NotFound {
                format!(
                    "no such scene file, and no preset of that name (presets: {})",
                    preset_names()
                )
            } else if error.kind() == std::io::ErrorKind::FileTooLarge {
                format!(
                    "cannot read the scene file: it holds more than {} (a scene is a few \
                     kilobytes of TOML); is this the right file?",
                    crate::host::format_bytes(MAX_SCENE_BYTES)
                )
            } else {
                format!("cannot read the scene file: {error}")
            },
        })?;
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Source::parse(&text, &name, name_or_path)
    }

    /// Reads the `kind` of TOML `text`; `origin` names the source in error messages. A TOML
    /// syntax error is reported here, with its line.
    pub fn parse(text: &str, name: &str, origin: &str) -> Result<Source, SceneError> {
        #[derive(serde::Deserialize)]
        struct KindOnly {
            kind: Option<toml::Spanned<toml::Value>>,
        }
        let file: KindOnly =
            toml::from_str(text).map_err(|error| syntax_error(text, origin, &error))?;
        let (kind, kind_line) = match &file.kind {
            None => (DEFAULT_KIND.to_string(), None),
            Some(value) => {
                let line = Some(line_of(text, value.span().start));
                match value.get_ref().as_str() {
                    Some(kind) => (kind.to_string(), line),
                    None => {
                        return Err(SceneError {
                            origin: origin.to_string(),
                            line,
                            key: Some("kind".into()),
                            message: format!(
                                "must be a string such as \"pbf\", got {}",
                                value.get_ref()
                            ),
                        })
                    }
                }
            }
        };
        Ok(Source {
            name: name.to_string(),
            origin: origin.to_string(),
            text: text.to_string(),
            kind,
            kind_line,
            preset: false,
        })
    }

    /// `invalid` as an error at its key's line in this text ([`line_of_key`]).
    pub fn error_at(&self, invalid: Invalid) -> SceneError {
        SceneError {
            origin: self.origin.clone(),
            line: line_of_key(&self.text, &invalid.key),
            key: Some(invalid.key),
            message: invalid.message,
        }
    }

    /// An error found after parsing (a memory check) at `invalid.key`, the key that sets the
    /// scene's size: as [`Source::error_at`] for a scene file; a preset, which has no file to
    /// point into, is named `scene NAME`; when `bench --particles` set the size (`rescaled`),
    /// the error is the flag's.
    pub fn error_after_parse(&self, invalid: Invalid, rescaled: bool) -> SceneError {
        if self.preset || rescaled {
            SceneError {
                origin: format!("scene {}", self.name),
                line: None,
                key: Some(if rescaled {
                    "--particles".into()
                } else {
                    invalid.key
                }),
                message: invalid.message,
            }
        } else {
            self.error_at(invalid)
        }
    }

    /// An error at the `kind` key.
    pub fn error_at_kind(&self, message: String) -> SceneError {
        SceneError {
            origin: self.origin.clone(),
            line: self.kind_line,
            key: Some("kind".into()),
            message,
        }
    }
}

/// The most bytes a scene file may hold: far beyond any scene (the presets are 1–3 KiB), and
/// a bound on what a path to the wrong file (a frame, `/dev/zero`) makes the program read.
pub const MAX_SCENE_BYTES: u64 = 16 << 20;

/// The text of the file at `path`, refused with [`std::io::ErrorKind::FileTooLarge`] past
/// [`MAX_SCENE_BYTES`] (counted as read: a device or pipe has no size to ask for).
fn read_bounded(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_SCENE_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SCENE_BYTES {
        return Err(std::io::ErrorKind::FileTooLarge.into());
    }
    String::from_utf8(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// A TOML syntax or type error as a [`SceneError`] with its line and the offending source line.
pub fn syntax_error(text: &str, origin: &str, error: &toml::de::Error) -> SceneError {
    let line = error.span().map(|span| line_of(text, span.start));
    let source_line = line
        .and_then(|l| text.lines().nth(l - 1))
        .map(str::trim)
        .unwrap_or("");
    let mut message = error.message().trim().to_string();
    if message.is_empty() {
        // The TOML parser says nothing when the text ends right after `key =`.
        message = "a value is missing (the text ends early?)".into();
    }
    if !source_line.is_empty() {
        message.push_str(&format!(" (in `{source_line}`)"));
    }
    SceneError {
        origin: origin.to_string(),
        line,
        // A value of the wrong type: the key it is written at (`foam.seed`).
        key: error.span().and_then(|span| key_at(text, span.start)),
        message,
    }
}

/// 1-based line of byte `offset` in `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// What is wrong with a scene: where (file, line, key) and why.
#[derive(Clone, Debug, PartialEq)]
pub struct SceneError {
    /// File path or `preset NAME`.
    pub origin: String,
    /// 1-based line in the file, when known.
    pub line: Option<usize>,
    /// Key path such as `fluid[1].radius`, when the problem belongs to one key.
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SceneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.origin)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ": ")?;
        if let Some(key) = &self.key {
            write!(f, "{key}: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for SceneError {}

/// A problem found by [`Scene::validate`]: the key path it belongs to and the message.
#[derive(Clone, Debug, PartialEq)]
pub struct Invalid {
    /// Key path, e.g. `fluid[0].max` or `params.spacing`.
    pub key: String,
    /// What is wrong, naming the value.
    pub message: String,
}

impl Invalid {
    /// A problem with `key`.
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            message: message.into(),
        }
    }
}

/// `[x, y, z]` with up to 4 decimals.
pub fn fmt3(v: Vec3A) -> String {
    format!("[{}, {}, {}]", v.x, v.y, v.z)
}
