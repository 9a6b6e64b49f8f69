//! Scene presets shipped in `scenes/<kind>/` and embedded in the binary (`build.rs` lists the
//! folders, so a new preset or a new kind's presets need no code).

/// One embedded preset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preset {
    /// The simulation kind: the name of its folder under `scenes/`.
    pub kind: &'static str,
    /// The file stem, unique across kinds.
    pub name: &'static str,
    /// The TOML text.
    pub source: &'static str,
}

/// Every preset, sorted by kind and name.
pub const PRESETS: &[Preset] = include!(concat!(env!("OUT_DIR"), "/presets.rs"));

/// The preset called `name` (or `kind/name`).
pub fn preset(name: &str) -> Option<&'static Preset> {
    let (kind, name) = match name.split_once('/') {
        Some((kind, name)) => (Some(kind), name),
        None => (None, name),
    };
    PRESETS
        .iter()
        .find(|p| p.name == name && kind.is_none_or(|k| k == p.kind))
}

/// The scene `fluidlab` runs with no arguments, and the default of `view`, `simulate` and
/// `bench`: the PBF dam break (not `PRESETS[0]`, which is the first kind's first preset by name).
pub const DEFAULT_SCENE: &str = "dam-break";

/// The default scene of `kind`: [`DEFAULT_SCENE`] for pbf, else the kind's first preset.
pub fn default_of(kind: &str) -> Option<&'static Preset> {
    PRESETS
        .iter()
        .find(|p| p.kind == kind && p.name == DEFAULT_SCENE)
        .or_else(|| PRESETS.iter().find(|p| p.kind == kind))
}
