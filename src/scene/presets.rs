//! Scene presets shipped in `scenes/` and embedded in the binary.

/// `(name, TOML source)` of every preset, the default first.
pub const PRESETS: &[(&str, &str)] = &[
    ("dam-break", include_str!("../../scenes/dam-break.toml")),
    (
        "double-dam-break",
        include_str!("../../scenes/double-dam-break.toml"),
    ),
    ("drop", include_str!("../../scenes/drop.toml")),
    ("tall-tank", include_str!("../../scenes/tall-tank.toml")),
    ("obstacles", include_str!("../../scenes/obstacles.toml")),
];

/// The TOML source of the preset called `name`.
pub fn preset(name: &str) -> Option<&'static str> {
    PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, source)| *source)
}
