//! The kernel modules the binary carries: one per `kernels/<name>.cu`, found by `<name>`. Each
//! has its CUDA source (for NVRTC at run time) and, when `build.rs` found nvcc, PTX (for any
//! GPU, compiled by the driver at load) and a cubin (machine code for one architecture, sm_90
//! by default). `build.rs` writes the table, so a new kind's `kernels/<kind>.cu` is a module
//! with no code here.

/// One `kernels/<name>.cu` as the binary carries it.
#[derive(Debug)]
pub struct ModuleSource {
    /// The file's stem (`"pbf"` for `kernels/pbf.cu`): the name host code loads it by.
    pub name: &'static str,
    /// The CUDA source as written, its `#include`s not resolved ([`ModuleSource::nvrtc_source`]
    /// resolves them).
    pub source: &'static str,
    /// PTX compiled by nvcc at build time ([`PREBUILT_ORIGIN`]), if nvcc was found.
    pub ptx: Option<&'static str>,
    /// Machine code for [`CUBIN_ARCH`] compiled by nvcc at build time, if the build made one:
    /// loaded on GPUs it runs on ([`cubin_runs_on`]), with no JIT compilation.
    pub cubin: Option<&'static [u8]>,
}

/// Every module, sorted by name (`build.rs` writes the table).
pub const MODULES: &[ModuleSource] = include!(concat!(env!("OUT_DIR"), "/modules.rs"));

/// Every other file under `kernels/` (the headers), as (path below `kernels/`, text): nvcc is
/// given `-I kernels`, NVRTC gets them pasted in.
pub const HEADERS: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/headers.rs"));

/// The module of `kernels/<name>.cu`, or `None` when there is no such file.
pub fn module_source(name: &str) -> Option<&'static ModuleSource> {
    MODULES.iter().find(|module| module.name == name)
}

impl ModuleSource {
    /// The source with each `#include "header"` of a header under `kernels/` replaced by the
    /// header's text (itself resolved), the first time it is included only, as the headers'
    /// `#pragma once` asks: NVRTC is given no include paths, so the binary needs no files at run
    /// time. A quoted name is looked up beside the including file first, then in `kernels/`, as
    /// nvcc's `-I kernels` does; other includes (`<...>`, unknown names) are left to NVRTC.
    pub fn nvrtc_source(&self) -> String {
        let mut out = String::with_capacity(self.source.len());
        paste_headers(self.source, "", HEADERS, &mut Vec::new(), &mut out);
        out
    }
}

/// Appends `text` (from the folder `folder` below `kernels/`, "" for `kernels/` itself) to `out`
/// with its includes of `headers` resolved; `pasted` holds the headers already pasted.
fn paste_headers<'h>(
    text: &str,
    folder: &str,
    headers: &'h [(&'h str, &'h str)],
    pasted: &mut Vec<&'h str>,
    out: &mut String,
) {
    for line in text.split_inclusive('\n') {
        let find = |path: &str| headers.iter().find(|(name, _)| *name == path);
        let header = included_name(line).and_then(|name| {
            let beside = (!folder.is_empty()).then(|| format!("{folder}/{name}"));
            beside.and_then(|path| find(&path)).or_else(|| find(name))
        });
        match header {
            Some((path, _)) if pasted.contains(path) => {}
            Some((path, header_text)) => {
                pasted.push(path);
                let folder = path.rsplit_once('/').map_or("", |(folder, _)| folder);
                paste_headers(header_text, folder, headers, pasted, out);
                if line.ends_with('\n') && !out.ends_with('\n') {
                    out.push('\n');
                }
            }
            None => out.push_str(line),
        }
    }
}

/// The name in a line `#include "name"`, if the line is one.
fn included_name(line: &str) -> Option<&str> {
    let rest = line.trim().strip_prefix('#')?.trim_start();
    let quoted = rest.strip_prefix("include")?.trim();
    quoted.strip_prefix('"')?.strip_suffix('"')
}

/// How the prebuilt PTX was made ("nvcc 13.0, V13.0.88 at build time, -arch=compute_75"), or
/// `None` when the build found no nvcc.
pub const PREBUILT_ORIGIN: Option<&str> = option_env!("FLUIDLAB_PTX_ORIGIN");

/// The nvcc `build.rs` used (its `ptxas` lies beside it), or `None`.
pub const BUILD_NVCC: Option<&str> = option_env!("FLUIDLAB_NVCC");

/// The real architecture of the modules' cubins ("sm_90"), or `None`.
pub const CUBIN_ARCH: Option<&str> = option_env!("FLUIDLAB_CUBIN_ARCH");

/// How the cubins were made ("nvcc 13.0, V13.0.88 at build time, -arch=sm_90"), or `None`.
pub const CUBIN_ORIGIN: Option<&str> = option_env!("FLUIDLAB_CUBIN_ORIGIN");

/// The compute capability an `sm_XY` architecture names ("sm_90" → (9, 0), "sm_120" →
/// (12, 0)); `None` for anything else (a virtual `compute_XY`, an arch-specific `sm_90a`).
pub fn compute_capability_of(arch: &str) -> Option<(i32, i32)> {
    let digits = arch.strip_prefix("sm_")?;
    if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (major, minor) = digits.split_at(digits.len() - 1);
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// Whether machine code for `built` runs on a GPU of compute capability `device`: the same
/// major version and the same or a later minor one (CUDA's binary compatibility rule).
pub fn cubin_runs_on(built: (i32, i32), device: (i32, i32)) -> bool {
    built.0 == device.0 && built.1 <= device.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architectures_name_their_compute_capability() {
        assert_eq!(compute_capability_of("sm_90"), Some((9, 0)));
        assert_eq!(compute_capability_of("sm_86"), Some((8, 6)));
        assert_eq!(compute_capability_of("sm_120"), Some((12, 0)));
        assert_eq!(compute_capability_of("sm_90a"), None);
        assert_eq!(compute_capability_of("compute_90"), None);
        assert_eq!(compute_capability_of("sm_9"), None);
    }

    #[test]
    fn a_cubin_runs_on_its_major_version_from_its_minor_on() {
        assert!(cubin_runs_on((9, 0), (9, 0)));
        assert!(cubin_runs_on((8, 0), (8, 6)));
        assert!(!cubin_runs_on((8, 6), (8, 0)));
        assert!(!cubin_runs_on((9, 0), (10, 0)));
        assert!(!cubin_runs_on((9, 0), (8, 9)));
    }

    /// Every `kernels/*.cu` is a module of its stem, and every other file there a header.
    #[test]
    fn the_table_holds_every_kernel_file() {
        let kernels = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
        let mut files: Vec<String> = std::fs::read_dir(&kernels)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| !kernels.join(name).is_dir())
            .collect();
        files.sort();
        let mut listed: Vec<String> = MODULES.iter().map(|m| format!("{}.cu", m.name)).collect();
        listed.extend(HEADERS.iter().map(|(path, _)| path.to_string()));
        listed.retain(|name| !name.contains('/'));
        listed.sort();
        assert_eq!(listed, files);
        let pbf = module_source("pbf").expect("kernels/pbf.cu is a module");
        assert_eq!(
            pbf.source,
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/pbf.cu"))
        );
        assert!(module_source("no-such-kind").is_none());
    }

    /// Every module's NVRTC source has every header include resolved; pbf's is the source with
    /// its headers pasted where they are included (pbf_common.cuh with the shared vector math
    /// it includes, coarse.cuh, anisotropy.cuh, foam.cuh), as the NVRTC path always compiled it.
    #[test]
    fn nvrtc_sources_have_their_headers_pasted_in() {
        for module in MODULES {
            let source = module.nvrtc_source();
            assert!(
                !source.lines().any(|line| included_name(line).is_some()),
                "{}: a header is still included",
                module.name
            );
        }
        let header = |name| HEADERS.iter().find(|(path, _)| *path == name).unwrap().1;
        let pasted = module_source("pbf")
            .unwrap()
            .source
            .replace(
                "#include \"pbf_common.cuh\"\n",
                &header("pbf_common.cuh")
                    .replace("#include \"common/vec.cuh\"\n", header("common/vec.cuh")),
            )
            .replace("#include \"coarse.cuh\"\n", header("coarse.cuh"))
            .replace("#include \"anisotropy.cuh\"\n", header("anisotropy.cuh"))
            .replace(
                "#include \"pbf_stats.cuh\"\n",
                &header("pbf_stats.cuh").replace(
                    "#include \"common/reduce.cuh\"\n",
                    header("common/reduce.cuh"),
                ),
            )
            .replace("#include \"foam.cuh\"\n", header("foam.cuh"));
        assert_eq!(module_source("pbf").unwrap().nvrtc_source(), pasted);
    }

    /// A header is pasted once however often it is included, a quoted name is found beside the
    /// including header before `kernels/`, and other includes are left alone.
    #[test]
    fn headers_are_pasted_once_nearest_first() {
        let headers = [
            (
                "common/vec.cuh",
                "#pragma once\nvec\n#include \"scan.cuh\"\n",
            ),
            ("common/scan.cuh", "common scan\n"),
            ("scan.cuh", "top scan\n"),
            ("ink.cuh", "#include \"common/vec.cuh\"\nink\n"),
        ];
        let source = "#include <cmath>\n#include \"ink.cuh\"\n#include \"common/vec.cuh\"\n\
                      #include \"scan.cuh\"\n#include \"missing.cuh\"\nbody";
        let mut out = String::new();
        paste_headers(source, "", &headers, &mut Vec::new(), &mut out);
        assert_eq!(
            out,
            "#include <cmath>\n#pragma once\nvec\ncommon scan\nink\ntop scan\n\
             #include \"missing.cuh\"\nbody"
        );
    }

    #[test]
    fn include_lines_are_recognised() {
        assert_eq!(included_name("#include \"a.cuh\"\n"), Some("a.cuh"));
        assert_eq!(
            included_name("  #  include  \"common/v.cuh\" "),
            Some("common/v.cuh")
        );
        assert_eq!(included_name("#include <cmath>"), None);
        assert_eq!(included_name("// #include \"a.cuh\""), None);
        assert_eq!(included_name("int x;"), None);
    }
}
